// SPDX-License-Identifier: MIT
/*
 * report_next.c — the wait the program sees: a loop's time inside its data
 * iterator's next(), from its Python stacks (--stacks), split into asleep
 * for data, asleep otherwise, waiting for a CPU and on a CPU — what a
 * program timing next(it) measures, where the thread states alone see only
 * the sleeps a producer ended.
 *
 * Where next() is: in the stacks the loop had when it went to sleep for
 * data, the frame that calls the iterator (B: its code and line, the `for`
 * line) and the iterator's frame just inside it (E): the outermost
 * __next__ frame and its caller (a DataLoader's iterator), else the
 * innermost frame of the program's own code and the library frame it
 * called (a queue's get). Of the pairs the waits' stacks show, a __next__
 * one wins, then the one with the most time: the loop's. A stack is inside
 * next() when it holds B with E just inside.
 *
 * When: the loop's thread states give exact edges. Off a CPU the thread
 * stays where it stopped: a sleep or preemption is inside next() as its
 * switch-out stack is, and so is the wait for a CPU after it. On a CPU,
 * the stacks seen inside the run (samples, traced calls: a call's whole
 * length) place its changes: between two that disagree, as the samples
 * share out the loop's CPU time (change_at).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "lib/kmap.h"
#include "model/sched_tab.h"
#include "model/stacks.h"
#include "report/report_model.h"
#include "report/report_priv.h"
#include "report/report_sites.h"

/* The pair of frames that marks next(): B calls E */
struct boundary {
	uint64_t b_code, e_code;
	int b_line;
	uint32_t ref;                   /* a stack that has it */
	unsigned b_frame;               /* B's frame in that stack */
	bool dunder;                    /* E is a __next__ */
};

static bool dunder_next(const char *func)
{
	size_t n = strlen(func);

	return n >= 8 && !strcmp(func + n - 8, "__next__");
}

/* The boundary a stack shows, false when none */
static bool boundary_of(const struct rpt_model *m, const struct model_stack *k, struct boundary *out)
{
	struct model_frame f, g;

	/* its Python frames: a native one is no iterator's */
	for (int j = (int)k->nframes - 2; j >= (int)k->nnative; j--) {  /* outermost __next__ */
		model_session__frame(m->s, k, (unsigned)j, &f);
		if (dunder_next(f.func)) {
			model_session__frame(m->s, k, (unsigned)j + 1, &g);
			*out = (struct boundary){ .b_code = g.code, .b_line = g.line, .e_code = f.code,
						  .b_frame = (unsigned)j + 1, .dunder = true };
			return true;
		}
	}
	/* the innermost of the program's own frames, when it called library
	 * code (a queue's get): its own code waiting itself (a lock, the GIL
	 * after a sleep) is no iterator's */
	for (unsigned j = k->nnative + 1; j < k->nframes; j++) {
		model_session__frame(m->s, k, j, &g);
		if (model_frame__library(&g))
			continue;
		model_session__frame(m->s, k, j - 1, &f);
		if (!model_frame__library(&f))
			return false;
		*out = (struct boundary){ .b_code = g.code, .b_line = g.line, .e_code = f.code,
					  .b_frame = j, .dunder = false };
		return true;
	}
	return false;
}

static bool inside(const struct rpt_model *m, uint32_t ref, const struct boundary *b)
{
	const struct model_stack *k = ref ? model_session__stack(m->s, ref) : NULL;
	struct model_frame f, g;

	for (unsigned j = k ? k->nnative : 0; k && j + 1 < k->nframes; j++) {
		model_session__frame(m->s, k, j, &f);
		if (f.code != b->e_code)
			continue;
		model_session__frame(m->s, k, j + 1, &g);
		if (g.code == b->b_code && g.line == b->b_line)
			return true;
	}
	return false;
}

bool rpt_next_inside(const struct rpt_model *m, const struct rpt_next *nx, uint32_t ref)
{
	struct boundary b = { .b_code = nx->b_code, .b_line = nx->b_line, .e_code = nx->e_code };

	return nx->known && inside(m, ref, &b);
}

struct cand {
	struct boundary b;
	uint64_t ns;
};

/* The boundary the loop's data waits agree on most, by their time. false: none. */
static bool find_boundary(const struct rpt_model *m, const struct tstate_iv *iv, size_t n,
			  const struct rpt_spans *waits, const struct rpt_stack_ev *ev, size_t nev,
			  struct boundary *out)
{
	struct cand c[16];
	size_t nc = 0, e = 0, best = 0;

	for (size_t i = 0; i < n; i++) {
		const struct model_stack *k;
		struct boundary b;
		size_t j;

		if (!rpt_iv_sleep(iv[i].state) || !rpt_spans_overlap(waits, iv[i].ts, iv[i].end))
			continue;
		while (e < nev && ev[e].ts < iv[i].ts)
			e++;
		if (e == nev || ev[e].ts != iv[i].ts || ev[e].what != GPUIO_SA_SLEEP)
			continue;       /* its switch-out had no stack */
		k = model_session__stack(m->s, ev[e].ref);
		if (!k || !boundary_of(m, k, &b))
			continue;
		b.ref = ev[e].ref;
		for (j = 0; j < nc; j++)
			if (c[j].b.b_code == b.b_code && c[j].b.b_line == b.b_line &&
			    c[j].b.e_code == b.e_code)
				break;
		if (j == nc) {
			if (nc == sizeof(c) / sizeof(c[0]))
				continue;
			c[nc++] = (struct cand){ .b = b };
		}
		c[j].ns += iv[i].end - iv[i].ts;
	}
	/* an iterator's __next__ over any other; then the most time */
	for (size_t j = 1; j < nc; j++)
		if (c[j].b.dunder > c[best].b.dunder ||
		    (c[j].b.dunder == c[best].b.dunder && c[j].ns > c[best].ns))
			best = j;
	if (!nc)
		return false;
	*out = c[best].b;
	return true;
}

/* The loop's time inside next(), by state; its spans into out. */
struct sweep {
	const struct rpt_model *m;
	const struct boundary *b;
	const struct rpt_stack_ev *ev;
	size_t nev, e;
	bool label;                     /* inside next() as last seen */
	bool seen;                      /* a stack has been seen */
	unsigned in_pct;                /* of the run's on-CPU samples, % inside next() */
	struct rpt_next *nx;
	struct rpt_spans *out;
};

static int add_in(struct sweep *s, uint64_t a, uint64_t b, uint64_t *acc)
{
	if (b <= a)
		return 0;
	*acc += b - a;
	s->nx->ns += b - a;
	return rpt_spans_add(s->out, a, b);
}

/* Move the last seen label to the observations up to t (inclusive). */
static void seen_to(struct sweep *s, uint64_t t)
{
	while (s->e < s->nev && s->ev[s->e].ts <= t) {
		bool l = inside(s->m, s->ev[s->e].ref, s->b);

		if (l && !s->label)
			s->nx->calls++;
		s->label = l;
		s->seen = true;
		s->e++;
	}
}

/*
 * Where between two stacks that disagree (t, u) the loop went in or out
 * of next(): by the share of its on-CPU samples inside — a DataLoader loop
 * unpickles briefly and computes long, a loop fetching itself decodes
 * long and steps briefly, and a midpoint would halve the long part.
 */
static uint64_t change_at(const struct sweep *s, bool was_in, uint64_t t, uint64_t u)
{
	unsigned pct = was_in ? s->in_pct : 100 - s->in_pct;

	return t + (u - t) / 100 * pct + (u - t) % 100 * pct / 100;
}

/* The share of the thread's samples inside next() (50 with too few to say) */
#define SAMPLES_TO_SAY 8
static unsigned in_pct(const struct rpt_model *m, const struct rpt_stack_ev *ev, size_t nev,
		       const struct boundary *b)
{
	size_t all = 0, in = 0;

	for (size_t i = 0; i < nev; i++)
		if (ev[i].what == GPUIO_SA_SAMPLE && ev[i].ref) {
			all++;
			in += inside(m, ev[i].ref, b);
		}
	return all < SAMPLES_TO_SAY ? 50 : (unsigned)(100 * in / all);
}

/* On a CPU over [a, b): the label changes between disagreeing stacks (change_at). */
static int on_cpu(struct sweep *s, uint64_t a, uint64_t b)
{
	uint64_t t = a;
	bool l = s->label;
	int rc;

	while (s->e < s->nev && s->ev[s->e].ts < b) {
		uint64_t u = s->ev[s->e].ts > t ? s->ev[s->e].ts : t;
		bool nl = inside(s->m, s->ev[s->e].ref, s->b);

		if (nl == l) {
			if (l && (rc = add_in(s, t, u, &s->nx->cpu_ns)))
				return rc;
		} else {
			uint64_t mid = change_at(s, l, t, u);

			if ((rc = add_in(s, l ? t : mid, l ? mid : u, &s->nx->cpu_ns)))
				return rc;
			if (nl)
				s->nx->calls++;
		}
		t = u;
		l = nl;
		s->seen = true;
		s->e++;
	}
	/* the switch-out at b says where it stopped: the run's last piece */
	if (s->e < s->nev && s->ev[s->e].ts == b) {
		bool nl = inside(s->m, s->ev[s->e].ref, s->b);

		if (nl != l) {
			uint64_t mid = change_at(s, l, t, b);

			if ((rc = add_in(s, l ? t : mid, l ? mid : b, &s->nx->cpu_ns)))
				return rc;
			if (nl)
				s->nx->calls++;
			s->label = nl;
			s->seen = true;
			s->e++;
			return 0;
		}
	}
	s->label = l;
	return l ? add_in(s, t, b, &s->nx->cpu_ns) : 0;
}

/*
 * Where one next() span holds two calls the stacks could not tell apart (no
 * sample in the step between): a wait for data inside it, after a CPU run
 * since the last one long enough to be a step's work, starts a call.
 */
#define STEP_CPU_NS 1000000ull
static int cut_steps(const struct tstate_iv *iv, size_t n, const struct rpt_spans *waits,
		     const struct rpt_spans *in, struct rpt_spans *cuts)
{
	uint64_t cpu = 0;               /* on a CPU inside span cur since its start or a wait */
	size_t k = 0, cur = SIZE_MAX;
	int rc = 0;

	for (size_t i = 0; i < n && !rc; i++) {
		uint64_t a, b;

		while (k < in->n && in->a[k].e <= iv[i].ts)
			k++;
		if (k == in->n || in->a[k].s >= iv[i].end)
			continue;               /* outside next() */
		if (cur != k)
			cur = k, cpu = 0;
		if (iv[i].state == TS_RUNNING) {
			a = iv[i].ts > in->a[k].s ? iv[i].ts : in->a[k].s;
			b = iv[i].end < in->a[k].e ? iv[i].end : in->a[k].e;
			cpu += b - a;
			continue;
		}
		if (!rpt_iv_sleep(iv[i].state) || !rpt_spans_overlap(waits, iv[i].ts, iv[i].end))
			continue;
		if (cpu >= STEP_CPU_NS && in->a[k].s < iv[i].ts)
			rc = rpt_spans_add(cuts, iv[i].ts, iv[i].ts + 1);
		cpu = 0;
	}
	return rc;
}

int rpt_next_build(struct rpt_model *m, struct rpt_wait *w, const struct tstate_iv *iv, size_t n,
		   const struct rpt_spans *waits, struct rpt_spans *out, struct rpt_spans *cuts)
{
	struct boundary b;
	size_t nev;
	const struct rpt_stack_ev *ev = rpt_sites__thread(m, w->tid, &nev);
	struct sweep s = { .m = m, .b = &b, .ev = ev, .nev = nev, .nx = &w->next, .out = out };
	int rc = 0;

	memset(&w->next, 0, sizeof(w->next));
	w->next.site = -1;
	if (!nev || !find_boundary(m, iv, n, waits, ev, nev, &b))
		return 0;
	w->next.known = true;
	w->next.ref = b.ref;
	w->next.b_code = b.b_code, w->next.e_code = b.e_code, w->next.b_line = b.b_line;
	w->next.site = rpt_sites__frame(m, b.ref, b.b_frame);     /* the line calling next() */
	s.in_pct = in_pct(m, ev, nev, &b);
	for (size_t i = 0; i < n && !rc; i++) {
		uint64_t *acc;

		if (iv[i].state == TS_RUNNING) {
			seen_to(&s, iv[i].ts);
			rc = on_cpu(&s, iv[i].ts, iv[i].end);
			continue;
		}
		seen_to(&s, iv[i].ts);  /* its switch-out, at its start */
		if (!s.label)
			continue;
		acc = !rpt_iv_sleep(iv[i].state) ? &w->next.runnable_ns :
		      rpt_spans_overlap(waits, iv[i].ts, iv[i].end) ? &w->next.asleep_data_ns :
		      &w->next.asleep_other_ns;
		rc = add_in(&s, iv[i].ts, iv[i].end, acc);
	}
	if (!rc)
		rpt_spans_norm(out);
	return rc ? rc : cut_steps(iv, n, waits, out, cuts);
}
