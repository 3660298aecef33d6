// SPDX-License-Identifier: MIT
/*
 * kineto_align.c — a PyTorch profiler trace's clock on a capture's
 * MONOTONIC clock (kin_align, kineto.h).
 *
 * Absolute traces (PyTorch 2.x: baseTimeNanoseconds + ts is REALTIME):
 * mono = realtime - (the header's REALTIME - MONOTONIC, read together).
 *
 * Relative traces (torch 1.13: µs since the profile began, tids that are
 * the profiler's own numbers) are aligned through what gpuio saw of the
 * thread. The profiler writes an op's start and end from the thread
 * itself, running in user space: no such time can fall where gpuio saw the
 * thread off its CPU (a switch out to the switch back in) or inside one of
 * its system calls or page faults ("busy" intervals, shrunk by the trace's
 * rounding). Each busy interval of a candidate thread, for an offset D,
 *   - fits: it lies inside the profile and between two consecutive op
 *     times: evidence for D, weighted by the share of that gap it fills (a
 *     2 ms sleep in a 2.05 ms gap says much, a 10 µs call in a 30 ms gap
 *     next to nothing),
 *   - is outside the profile (0), or
 *   - is cut by an op time (-2: D contradicted).
 * The score is piecewise constant in D; a sweep over its breakpoints (the
 * long busy intervals first, under a budget) finds the best offsets, for
 * every thread of the capture; the best thread and the middle of its best
 * run win. The error bound is half the run's width plus the slack the
 * intervals were shrunk by and the trace's rounding. It refuses when fewer than KIN_MIN_FITS intervals fit, or when
 * another offset scores as well.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "export/kineto.h"
#include "model/sched_tab.h"
#include "model/session.h"
#include "lib/kmap.h"
#include "lib/log.h"
#include "lib/units.h"

#define KIN_MIN_FITS    3
/* weights: an interval cut by an op time; one that fills its gap between op times */
#define KIN_W_CUT       2000
#define KIN_W_FIT       1000
#define KIN_AMBIG_NS    1000000         /* best offsets further apart: ambiguous */
#define KIN_BUDGET_SCAN (1u << 18)      /* breakpoints per thread, to choose the thread */
#define KIN_BUDGET_FINE (1u << 23)      /* for the chosen one */

struct busy {
	uint64_t key;           /* pid << 32 | tid */
	uint64_t s, e;
};

struct cap_data {
	const struct gpuio_cap_header *h;
	struct busy *b;
	size_t n, cap;
	uint64_t first, last;
	struct kin_threads th;
	size_t cth;
	int err;
};

static int add_busy(struct cap_data *c, uint32_t pid, uint32_t tid, uint64_t s, uint64_t e)
{
	if (e <= s)
		return 0;
	if (array_grow((void **)&c->b, &c->cap, c->n + 1, sizeof(*c->b)))
		return -ENOMEM;
	c->b[c->n++] = (struct busy){ .key = (uint64_t)pid << 32 | tid, .s = s, .e = e };
	return 0;
}

static int add_thread(struct cap_data *c, uint32_t pid, uint32_t tid)
{
	uint64_t k = (uint64_t)pid << 32 | tid;

	if (!pid || !tid)
		return 0;
	if (c->th.n && c->th.ids[c->th.n - 1] == k)
		return 0;
	if (array_grow((void **)&c->th.ids, &c->cth, c->th.n + 1, sizeof(uint64_t)))
		return -ENOMEM;
	c->th.ids[c->th.n++] = k;
	return 0;
}

static int on_vfs(void *ctx, const struct gpuio_vfs_event *e)
{
	struct cap_data *c = ctx;

	if (add_thread(c, e->hdr.pid, e->hdr.tid))
		return -ENOMEM;
	if (e->call == GPUIO_CALL_URING_READ || e->call == GPUIO_CALL_URING_WRITE)
		return 0;       /* asynchronous: the thread goes on meanwhile */
	return add_busy(c, e->hdr.pid, e->hdr.tid, e->hdr.ts, e->hdr.ts + e->dur_ns);
}

static int on_proc(void *ctx, const struct gpuio_proc_event *e)
{
	return add_thread(ctx, e->hdr.pid, e->hdr.tid);
}

static int on_state(void *ctx, const struct tstate_iv *iv)
{
	struct cap_data *c = ctx;

	if (add_thread(c, iv->pid, iv->tid))
		return -ENOMEM;
	if (iv->state == TS_RUNNING)
		return 0;
	return add_busy(c, iv->pid, iv->tid, iv->ts, iv->end);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int cmp_busy(const void *pa, const void *pb)
{
	const struct busy *a = pa, *b = pb;

	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return a->s < b->s ? -1 : a->s > b->s;
}

/* Busy intervals per thread, sorted and merged where they overlap. */
static void merge_busy(struct cap_data *c)
{
	size_t n = 0;

	if (c->n > 1)
		qsort(c->b, c->n, sizeof(*c->b), cmp_busy);
	for (size_t i = 0; i < c->n; i++) {
		if (n && c->b[n - 1].key == c->b[i].key && c->b[i].s <= c->b[n - 1].e) {
			if (c->b[i].e > c->b[n - 1].e)
				c->b[n - 1].e = c->b[i].e;
			continue;
		}
		c->b[n++] = c->b[i];
	}
	c->n = n;
	if (c->th.n > 1)
		qsort(c->th.ids, c->th.n, sizeof(uint64_t), cmp_u64);
	n = 0;
	for (size_t i = 0; i < c->th.n; i++)
		if (!n || c->th.ids[n - 1] != c->th.ids[i])
			c->th.ids[n++] = c->th.ids[i];
	c->th.n = n;
}

static int read_capture(const char *path, struct cap_data *c, struct model_session **sp)
{
	struct model_tool tool = { .ctx = c, .vfs = on_vfs, .proc = on_proc };
	const struct model_tool *tools[] = { &tool };
	const struct model_facts *f;
	struct model_session *s;
	char err[320];
	int rc = model_session__open(path, &s, err, sizeof(err));

	if (rc) {
		pr_err("%s", err);
		return rc;
	}
	rc = model_session__run(s, tools, 1);
	if (rc == -EBADMSG) {
		pr_err("%s: %s", path, model_session__error(s));
	} else if (!rc) {
		f = model_session__facts(s);
		c->h = f->hdr;
		c->first = f->first_ts;
		c->last = f->last_ts;
		if (c->h->monotonic_ns && c->h->monotonic_ns < c->first)
			c->first = c->h->monotonic_ns;
		rc = sched_tab__states(model_session__sched(s), f->last_ts, on_state, c);
	}
	if (rc) {
		if (rc == -ENOMEM)
			pr_err("%s: out of memory", path);
		model_session__free(s);
		return rc;
	}
	merge_busy(c);
	*sp = s;
	return 0;
}

bool kin_threads__has(const struct kin_threads *th, uint32_t pid, uint32_t tid)
{
	uint64_t k = (uint64_t)pid << 32 | tid;

	return th->n && bsearch(&k, th->ids, th->n, sizeof(uint64_t), cmp_u64);
}

bool kin_threads__has_pid(const struct kin_threads *th, uint32_t pid)
{
	for (size_t i = 0; i < th->n; i++)
		if (th->ids[i] >> 32 == pid)
			return true;
	return false;
}

/* ---- the op times of one trace thread ---- */

struct optimes {
	int64_t *b;             /* sorted, unique */
	size_t n;
	uint32_t *gap_order;    /* gaps (b[k], b[k+1]) by length, longest first */
	size_t ngaps;
};

static const int64_t *cmp_gap_b;

static int cmp_gap(const void *pa, const void *pb)
{
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	int64_t la = cmp_gap_b[a + 1] - cmp_gap_b[a], lb = cmp_gap_b[b + 1] - cmp_gap_b[b];

	return la > lb ? -1 : la < lb;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static int optimes_of(const struct kin_trace *t, int64_t tid, const char *tid_str,
		      struct optimes *o)
{
	size_t n = 0;

	memset(o, 0, sizeof(*o));
	o->b = malloc(2 * t->n * sizeof(*o->b) + 1);
	if (!o->b)
		return -ENOMEM;
	for (size_t i = 0; i < t->n; i++) {
		const struct kin_event *e = &t->ev[i];

		if (e->kind != KIN_CPU || e->tid != tid || !e->tid_str != !tid_str ||
		    (tid_str && strcmp(tid_str, e->tid_str)))
			continue;
		o->b[n++] = e->ts;
		if (e->dur)
			o->b[n++] = e->ts + (int64_t)e->dur;
	}
	if (n > 1)
		qsort(o->b, n, sizeof(*o->b), cmp_i64);
	o->n = 0;
	for (size_t i = 0; i < n; i++)
		if (!o->n || o->b[o->n - 1] != o->b[i])
			o->b[o->n++] = o->b[i];
	o->ngaps = o->n > 1 ? o->n - 1 : 0;
	o->gap_order = malloc((o->ngaps + 1) * sizeof(uint32_t));
	if (!o->gap_order)
		return -ENOMEM;
	for (size_t k = 0; k < o->ngaps; k++)
		o->gap_order[k] = (uint32_t)k;
	cmp_gap_b = o->b;
	if (o->ngaps > 1)
		qsort(o->gap_order, o->ngaps, sizeof(uint32_t), cmp_gap);
	return 0;
}

static void optimes_free(struct optimes *o)
{
	free(o->b);
	free(o->gap_order);
}

/* ---- the sweep ---- */

static int cmp_len(const void *pa, const void *pb)
{
	const struct busy *a = *(const struct busy *const *)pa, *b = *(const struct busy *const *)pb;
	uint64_t la = a->e - a->s, lb = b->e - b->s;

	return la > lb ? -1 : la < lb;
}

struct bp {
	int64_t d;
	int32_t delta;
};

static int cmp_bp(const void *pa, const void *pb)
{
	const struct bp *a = pa, *b = pb;

	return a->d < b->d ? -1 : a->d > b->d;
}

struct fit {
	int64_t lo, hi;         /* the best run of offsets [lo, hi] */
	long score, runner;     /* its score; the best elsewhere (LONG_MIN: none) */
	int64_t runner_d;
	uint64_t fits, misfit;  /* at the middle of the run */
	uint64_t key;           /* the capture thread */
};

/* Intervals [lo, hi] of D (clipped to [wlo, whi]) add delta. */
static int push(struct bp **v, size_t *n, size_t *cap, int64_t lo, int64_t hi, int32_t delta,
		int64_t wlo, int64_t whi)
{
	if (lo < wlo)
		lo = wlo;
	if (hi > whi)
		hi = whi;
	if (lo > hi)
		return 0;
	if (array_grow((void **)v, cap, *n + 2, sizeof(**v)))
		return -ENOMEM;
	(*v)[(*n)++] = (struct bp){ lo, delta };
	(*v)[(*n)++] = (struct bp){ hi + 1, -delta };
	return 0;
}

/* At offset d: busy intervals of [b0, b1) inside the profile that fit, and that an op time cuts. */
static void count_at(const struct optimes *o, const struct busy *b0, const struct busy *b1,
		     int64_t d, int64_t slack, uint64_t *fits, uint64_t *misfit)
{
	*fits = *misfit = 0;
	for (const struct busy *b = b0; b < b1; b++) {
		int64_t s = (int64_t)b->s + slack - d, e = (int64_t)b->e - slack - d;
		size_t lo = 0, hi = o->n;

		if (e <= s || e <= o->b[0] || s >= o->b[o->n - 1])
			continue;
		/* the first op time > s */
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;

			if (o->b[mid] <= s)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < o->n && o->b[lo] < e)
			(*misfit)++;
		else if (lo > 0)
			(*fits)++;
	}
}

/*
 * The best offsets D for one capture thread's busy intervals [b0, b1) and
 * one trace thread's op times, D in [wlo, whi]. 0, -ENOMEM, or 1: no evidence.
 */
static int sweep(const struct optimes *o, const struct busy *b0, const struct busy *b1,
		 int64_t slack, int64_t wlo, int64_t whi, size_t budget, struct fit *f)
{
	const struct busy **order;
	struct bp *v = NULL;
	size_t n = 0, cap = 0, nb = (size_t)(b1 - b0);
	int64_t first = o->b[0], last = o->b[o->n - 1];
	long cur = 0;
	int rc = 0;

	memset(f, 0, sizeof(*f));
	f->score = LONG_MIN;
	f->runner = LONG_MIN;
	if (!nb || o->n < 2)
		return 1;
	order = malloc(nb * sizeof(*order));
	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < nb; i++)
		order[i] = b0 + i;
	/* the longest first: they say the most and match the fewest gaps */
	qsort(order, nb, sizeof(*order), cmp_len);
	for (size_t i = 0; i < nb && !rc && n < budget; i++) {
		int64_t s = (int64_t)order[i]->s + slack, e = (int64_t)order[i]->e - slack;

		if (e <= s)
			continue;
		/* outside the profile: 0 instead of -KIN_W_CUT */
		rc = push(&v, &n, &cap, INT64_MIN / 4, s - last, KIN_W_CUT, wlo, whi);
		if (!rc)
			rc = push(&v, &n, &cap, e - first, INT64_MAX / 4, KIN_W_CUT, wlo, whi);
		/* between two op times: how much of the gap it fills, instead of -KIN_W_CUT */
		for (size_t g = 0; g < o->ngaps && !rc; g++) {
			uint32_t k = o->gap_order[g];
			int64_t gap = o->b[k + 1] - o->b[k];

			if (gap < e - s)
				break;
			rc = push(&v, &n, &cap, e - o->b[k + 1], s - o->b[k],
				  KIN_W_CUT + (int32_t)(KIN_W_FIT * (e - s) / gap), wlo, whi);
		}
	}
	free(order);
	if (rc) {
		free(v);
		return rc;
	}
	if (!n) {
		free(v);
		return 1;
	}
	qsort(v, n, sizeof(*v), cmp_bp);
	/* the best score; every offset that has it (one run, or runs close together:
	 * their hull, KIN_AMBIG_NS at most, else ambiguous); the best score away from them */
	for (size_t i = 0; i < n;) {
		int64_t d = v[i].d;

		while (i < n && v[i].d == d)
			cur += v[i++].delta;
		if (i < n && cur > f->score)
			f->score = cur;
	}
	cur = 0;
	f->lo = INT64_MAX;
	f->hi = INT64_MIN;
	for (size_t i = 0; i < n;) {
		int64_t d = v[i].d;

		while (i < n && v[i].d == d)
			cur += v[i++].delta;
		if (i < n && cur == f->score) {
			if (d < f->lo)
				f->lo = d;
			f->hi = v[i].d - 1;
		}
	}
	cur = 0;
	for (size_t i = 0; i < n;) {
		int64_t d = v[i].d;

		while (i < n && v[i].d == d)
			cur += v[i++].delta;
		if (i >= n)
			break;
		if ((v[i].d - 1 < f->lo - KIN_AMBIG_NS || d > f->hi + KIN_AMBIG_NS) &&
		    cur > f->runner) {
			f->runner = cur;
			f->runner_d = d;
		}
	}
	free(v);
	count_at(o, b0, b1, f->lo + (f->hi - f->lo) / 2, slack, &f->fits, &f->misfit);
	return 0;
}

/* The trace thread with the most CPU events (the one that ran the loop). */
static void main_trace_thread(const struct kin_trace *t, int64_t *tid, const char **tid_str)
{
	size_t best = 0;

	*tid = 0;
	*tid_str = NULL;
	for (size_t i = 0; i < t->n; i++) {
		const struct kin_event *e = &t->ev[i];
		size_t c = 0;

		if (e->kind != KIN_CPU)
			continue;
		if (i > 0 && best && e->tid == *tid && !e->tid_str == !*tid_str)
			continue;
		for (size_t j = 0; j < t->n; j++)
			if (t->ev[j].kind == KIN_CPU && t->ev[j].tid == e->tid &&
			    !t->ev[j].tid_str == !e->tid_str &&
			    (!e->tid_str || !strcmp(e->tid_str, t->ev[j].tid_str)))
				c++;
		if (c > best) {
			best = c;
			*tid = e->tid;
			*tid_str = e->tid_str;
		}
		if (best > t->n / 2)
			break;
	}
}

static int align_events(const struct kin_trace *t, const struct cap_data *c, struct kin_align *a)
{
	struct optimes o;
	struct fit best = { .score = LONG_MIN }, f;
	int64_t tid, slack = 2 * t->quantum_ns, wlo, whi;
	const char *tid_str;
	size_t i = 0;
	int rc;

	main_trace_thread(t, &tid, &tid_str);
	rc = optimes_of(t, tid, tid_str, &o);
	if (rc || o.n < 2) {
		optimes_free(&o);
		if (!rc)
			pr_err("--pytorch %s: too few CPU events to align", t->path);
		return rc ? rc : -EINVAL;
	}
	/* the whole profile inside the capture */
	wlo = (int64_t)c->first - o.b[0];
	whi = (int64_t)c->last - o.b[o.n - 1];
	if (wlo > whi) {
		pr_err("--pytorch %s: the profile (%.3f s) is longer than the capture (%.3f s): "
		       "not of this run?", t->path, (double)(o.b[o.n - 1] - o.b[0]) / 1e9,
		       (double)(c->last - c->first) / 1e9);
		optimes_free(&o);
		return -EINVAL;
	}
	while (i < c->n) {
		size_t j = i;

		while (j < c->n && c->b[j].key == c->b[i].key)
			j++;
		rc = sweep(&o, &c->b[i], &c->b[j], slack, wlo, whi, KIN_BUDGET_SCAN, &f);
		if (rc < 0)
			break;
		rc = 0;
		f.key = c->b[i].key;
		if (f.score > best.score || (f.score == best.score && f.fits > best.fits))
			best = f;
		i = j;
	}
	if (!rc && best.score > LONG_MIN) {
		/* the chosen thread again, with the whole budget */
		for (i = 0; i < c->n && c->b[i].key != best.key; i++)
			;
		for (size_t j = i; j <= c->n; j++) {
			if (j == c->n || c->b[j].key != best.key) {
				rc = sweep(&o, &c->b[i], &c->b[j], slack, wlo, whi, KIN_BUDGET_FINE, &f);
				if (!rc) {
					f.key = best.key;
					best = f;
				}
				break;
			}
		}
	}
	optimes_free(&o);
	if (rc < 0) {
		pr_err("--pytorch %s: out of memory", t->path);
		return rc;
	}
	if (best.score == LONG_MIN || best.fits < KIN_MIN_FITS ||
	    best.score < KIN_MIN_FITS * KIN_W_FIT / 2) {
		pr_err("--pytorch %s: cannot align: its times are relative to the profile's start "
		       "and no thread of the capture has enough off-CPU intervals or system calls "
		       "inside it to match (best: %" PRIu64 " of at least %d) — was the capture "
		       "taken with the scheduler layer (no --no-sched) over the profiled run?",
		       t->path, best.score == LONG_MIN ? 0 : best.fits, KIN_MIN_FITS);
		return -EINVAL;
	}
	if (best.runner >= best.score || best.hi - best.lo > KIN_AMBIG_NS) {
		pr_err("--pytorch %s: cannot align: offsets %+.6f s and %+.6f s fit equally well "
		       "(%ld) — too few distinct waits in the profile", t->path,
		       (double)best.lo / 1e9,
		       (double)(best.runner >= best.score ? best.runner_d : best.hi) / 1e9,
		       best.score);
		return -EINVAL;
	}
	a->offset = best.lo + (best.hi - best.lo) / 2;
	/* half the best run, plus the slack the intervals were shrunk by and the
	 * trace's rounding: the best run can be narrower than every offset that
	 * nothing contradicts */
	a->err_ns = (best.hi - best.lo + 1) / 2 + slack + t->quantum_ns;
	a->how = "events";
	a->pid = (uint32_t)(best.key >> 32);
	a->tid = (uint32_t)best.key;
	a->trace_tid = tid;
	a->used = best.fits + best.misfit;
	a->misfit = best.misfit;
	if (best.misfit)
		pr_warn("--pytorch %s: %" PRIu64 " of gpuio's intervals contradict the best offset "
			"(an op time where tid %u was off its CPU): the alignment is less sure",
			t->path, best.misfit, a->tid);
	if (best.runner > LONG_MIN && best.runner >= best.score - KIN_W_FIT)
		pr_warn("--pytorch %s: another offset (%+.6f s) fits almost as well (%ld vs %ld)",
			t->path, (double)best.runner_d / 1e9, best.runner, best.score);
	return 0;
}

/* Absolute traces: the offset through the anchor, checked against the named thread. */
static int align_absolute(const struct kin_trace *t, const struct cap_data *c,
			  struct kin_align *a)
{
	int64_t boot = (int64_t)(c->h->realtime_ns - c->h->monotonic_ns);
	int64_t tid = 0, pid = 0;
	const char *tid_str;
	struct optimes o;

	a->offset = t->base_ns - boot;
	a->err_ns = t->quantum_ns;
	a->how = "absolute";
	if (t->t_max + a->offset < (int64_t)c->first || t->t_min + a->offset > (int64_t)c->last) {
		pr_err("--pytorch %s: no overlap with the capture: the profile ran %+.3f s from "
		       "the trace's start (by the two clocks) — not of this run, or a clock stepped?",
		       t->path, (double)(t->t_min + a->offset - (int64_t)c->first) / 1e9);
		return -EINVAL;
	}
	main_trace_thread(t, &tid, &tid_str);
	for (size_t i = 0; i < t->n; i++)
		if (t->ev[i].kind == KIN_CPU && t->ev[i].tid == tid && !t->ev[i].pid_str) {
			pid = t->ev[i].pid;
			break;
		}
	if (tid_str || !kin_threads__has(&c->th, (uint32_t)pid, (uint32_t)tid))
		return 0;
	a->pid = (uint32_t)pid;
	a->tid = (uint32_t)tid;
	a->trace_tid = tid;
	if (!optimes_of(t, tid, NULL, &o) && o.n >= 2) {
		size_t i = 0, j;
		uint64_t key = (uint64_t)pid << 32 | (uint64_t)tid;

		while (i < c->n && c->b[i].key != key)
			i++;
		for (j = i; j < c->n && c->b[j].key == key; j++)
			;
		count_at(&o, &c->b[i], &c->b[j], a->offset, 2 * t->quantum_ns + 1000, &a->used,
			 &a->misfit);
		a->used += a->misfit;
	}
	optimes_free(&o);
	return 0;
}

int kin_align(const struct kin_trace *t, const char *capture_path, struct kin_align *a,
	      struct kin_threads *th)
{
	struct cap_data c = { 0 };
	struct model_session *s = NULL;
	int rc;

	memset(a, 0, sizeof(*a));
	rc = read_capture(capture_path, &c, &s);
	if (!rc)
		rc = t->absolute ? align_absolute(t, &c, a) : align_events(t, &c, a);
	if (!rc) {
		if (!strcmp(a->how, "absolute"))
			pr_info("--pytorch %s: clock from its base time through the capture's "
				"REALTIME/MONOTONIC anchor: offset %+.6f s, error ±%.3f µs%s",
				t->path, (double)a->offset / 1e9, (double)a->err_ns / 1e3, "");
		else
			pr_info("--pytorch %s: aligned through %" PRIu64 " off-CPU intervals and "
				"system calls of tid %u (pid %u) that fall between its thread %" PRId64
				"'s op times: offset %+.6f s, error ±%.3f µs", t->path, a->used,
				a->tid, a->pid, a->trace_tid, (double)a->offset / 1e9,
				(double)a->err_ns / 1e3);
		if (!strcmp(a->how, "absolute") && a->used)
			pr_info("--pytorch %s: checked against %" PRIu64 " off-CPU intervals and "
				"system calls of tid %u inside the profile: %" PRIu64 " contradict it",
				t->path, a->used, a->tid, a->misfit);
		*th = c.th;
		c.th.ids = NULL;
	}
	free(c.b);
	free(c.th.ids);
	model_session__free(s);
	return rc;
}
