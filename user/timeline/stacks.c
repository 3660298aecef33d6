// SPDX-License-Identifier: MIT
/*
 * stacks.c — Python stacks in the timeline (model/stacks.h): what a call's,
 * a fault's or a sleep's slice says of where the program was (the args
 * `site` and `stack`), and the on-CPU samples a format can draw.
 *
 * A stack is shown the same way wherever it is used, so each one is turned
 * into text once (its frames innermost first, "file:line function" joined
 * by "\n"; its site the innermost frame of the program's own code,
 * model_frame__library) and kept: memory grows with the distinct stacks,
 * never with the events. A call's STACK_AT record comes before the call's
 * VFS record (the tracer batches a thread's calls), so pass 2 keeps each
 * thread's last CALL_RING (seq, stack) pairs until the call shows; the
 * stacks of switch-outs (sleeps, preemptions) are kept from pass 1, sorted,
 * like the thread states they begin (which the session holds whole).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model/stacks.h"
#include "timeline/timeline_priv.h"

#define CALL_RING 32            /* a thread's calls whose records are still to come */
#define NO_STACK UINT64_MAX     /* text_map: the reference shows nothing */

struct ring {
	uint32_t seq[CALL_RING], ref[CALL_RING];
	unsigned head;
};

struct sw {                     /* the stack of a thread's switch-out */
	uint64_t ts;
	uint32_t tid, ref;
};

struct tl_stacks {
	struct kmap text_map;   /* (ref, 0) -> stacks[] + 1, or NO_STACK */
	struct tl_stack *stacks;
	size_t nstacks, cstacks;
	struct kmap ring_map;   /* (tid, 0) -> rings[] + 1 */
	struct ring *rings;
	size_t nrings, crings;
	struct sw *sw;          /* pass 1; by (tid, ts) after it */
	size_t nsw, csw;
	uint64_t calls, samples;/* shown (pass 2) */
};

static struct tl_stacks *stacks_of(struct tl_model *x)
{
	if (!x->stacks)
		x->stacks = calloc(1, sizeof(*x->stacks));
	return x->stacks;
}

/* ---- text ---- */

/* "file:line function" of one frame at buf + at, cut at len; the new end */
static size_t frame_text(char *buf, size_t at, size_t len, const struct tl_frame *f)
{
	const char *file = f->file[0] ? f->file : "?";
	int n;

	if (at >= len)
		return at;
	if (f->native)
		n = snprintf(buf + at, len - at, "%s %s", f->func, file);
	else if (f->line >= 0)
		n = snprintf(buf + at, len - at, "%s:%d %s", file, f->line, f->func);
	else
		n = snprintf(buf + at, len - at, "%s:? %s", file, f->func);
	return n < 0 ? at : at + (size_t)n < len ? at + (size_t)n : len - 1;
}

/* Room for frame_text() of f */
static size_t frame_room(const struct tl_frame *f)
{
	return strlen(f->file) + strlen(f->func) + 16;  /* "?:", the line, " ", NUL */
}

static int stack_make(struct tl_model *x, const struct model_stack *k, struct tl_stack *o)
{
	size_t cap = 1, at = 0;
	int site = -1;          /* the program's own innermost frame */

	memset(o, 0, sizeof(*o));
	o->frames = calloc(k->nframes, sizeof(*o->frames));
	if (!o->frames)
		return -ENOMEM;
	o->nframes = k->nframes;
	for (unsigned i = 0; i < k->nframes; i++) {
		struct model_frame f;

		model_session__frame(x->s, k, i, &f);
		o->frames[i] = (struct tl_frame){ .file = f.file, .func = f.func, .line = f.line,
						  .native = f.native };
		if (site < 0 && !model_frame__library(&f))
			site = (int)i;
		cap += frame_room(&o->frames[i]);
	}
	o->text = malloc(cap);
	if (!o->text)
		return -ENOMEM;
	for (unsigned i = 0; i < k->nframes; i++) {
		const struct tl_frame *f = &o->frames[i];

		if (i)
			o->text[at++] = '\n';
		at = frame_text(o->text, at, cap, f);
		if ((int)i == site) {
			o->site = malloc(frame_room(f));
			if (!o->site)
				return -ENOMEM;
			o->site_len = frame_text(o->site, 0, frame_room(f), f);
		}
	}
	o->len = at;
	return 0;
}

const struct tl_stack *tl_stacks__get(struct tl_model *x, uint32_t ref)
{
	struct tl_stacks *S = x->stacks;
	const struct model_stack *k;
	uint64_t *v;

	if (!S || !ref || kmap__upsert(&S->text_map, ref, 0, &v) < 0)
		return NULL;
	if (*v)
		return *v == NO_STACK ? NULL : &S->stacks[*v - 1];
	*v = NO_STACK;
	k = model_session__stack(x->s, ref);    /* NULL: its interpreter never passed its check */
	if (!k || !k->nframes ||
	    array_grow((void **)&S->stacks, &S->cstacks, S->nstacks + 1, sizeof(*S->stacks)))
		return NULL;
	if (stack_make(x, k, &S->stacks[S->nstacks])) {
		free(S->stacks[S->nstacks].text);
		free(S->stacks[S->nstacks].site);
		free(S->stacks[S->nstacks].frames);
		return NULL;    /* shown without it rather than not at all */
	}
	v = kmap__get(&S->text_map, ref, 0);
	*v = ++S->nstacks;
	return &S->stacks[S->nstacks - 1];
}

/* The args `site` (when a frame is the program's own) and `stack` */
static void stack_args(struct tl_args *a, const struct tl_stack *k)
{
	/* the texts stay put and unchanged until the model is freed */
	if (k->site) {
		tl_arg_str(a, "site", k->site, k->site_len, true);
		a->a[a->n - 1].stable = true;
	}
	tl_arg_str(a, "stack", k->text, k->len, true);
	a->a[a->n - 1].stable = true;
}

/* ---- calls (pass 2) ---- */

static int call_at(struct tl_stacks *S, const struct model_stack_at *a)
{
	struct ring *r;
	uint64_t *v;

	if (kmap__upsert(&S->ring_map, a->h->tid, 0, &v) < 0)
		return -ENOMEM;
	if (!*v) {
		if (array_grow((void **)&S->rings, &S->crings, S->nrings + 1, sizeof(*S->rings)))
			return -ENOMEM;
		memset(&S->rings[S->nrings], 0, sizeof(S->rings[0]));
		*v = ++S->nrings;
	}
	r = &S->rings[*v - 1];
	r->seq[r->head % CALL_RING] = a->seq;
	r->ref[r->head % CALL_RING] = a->stack;
	r->head++;
	return 0;
}

void tl_stacks__call_args(struct tl_model *x, const struct gpuio_vfs_event *e, struct tl_args *a)
{
	struct tl_stacks *S = x->stacks;
	const struct tl_stack *k;
	uint64_t *v;
	struct ring *r;

	if (!S || !e->seq || !(v = kmap__get(&S->ring_map, e->hdr.tid, 0)))
		return;
	r = &S->rings[*v - 1];
	for (unsigned i = 0; i < CALL_RING; i++) {
		if (!r->ref[i] || r->seq[i] != e->seq)
			continue;
		k = tl_stacks__get(x, r->ref[i]);
		r->ref[i] = 0;          /* once: a thread's seq numbers may come round again */
		if (k) {
			stack_args(a, k);
			S->calls++;
		}
		return;
	}
}

int tl_stacks__pass2(struct tl_model *x, const struct model_stack_at *a, struct tl_sample *o)
{
	struct tl_stacks *S = x->stacks;
	const struct tl_stack *k;

	if (!S)
		return 0;
	if (a->what == GPUIO_SA_CALL)
		return a->stack ? call_at(S, a) : 0;
	if (a->what != GPUIO_SA_SAMPLE || !(k = tl_stacks__get(x, a->stack)))
		return 0;
	S->samples++;
	*o = (struct tl_sample){ .ts = a->h->ts, .pid = tl_pid(x, a->h->pid),
				 .tid = tl_pid(x, a->h->tid), .key = a->stack, .frames = k->frames,
				 .nframes = k->nframes };
	return 1;
}

void tl_stacks__rewind(struct tl_model *x)
{
	struct tl_stacks *S = x->stacks;

	if (!S)
		return;
	if (S->nrings)
		memset(S->rings, 0, S->nrings * sizeof(*S->rings));
	S->calls = S->samples = 0;
}

/* ---- switch-outs (pass 1) ---- */

int tl_stacks__pass1(struct tl_model *x, const struct model_stack_at *a)
{
	struct tl_stacks *S = stacks_of(x);

	if (!S)
		return -ENOMEM;
	if ((a->what != GPUIO_SA_SLEEP && a->what != GPUIO_SA_PREEMPT) || !a->stack)
		return 0;
	if (array_grow((void **)&S->sw, &S->csw, S->nsw + 1, sizeof(*S->sw)))
		return -ENOMEM;
	S->sw[S->nsw++] = (struct sw){ .ts = a->h->ts, .tid = a->h->tid, .ref = a->stack };
	return 0;
}

static int by_tid_ts(const void *pa, const void *pb)
{
	const struct sw *a = pa, *b = pb;

	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return (a->ts > b->ts) - (a->ts < b->ts);
}

void tl_stacks__finish(struct tl_model *x)
{
	if (x->stacks && x->stacks->nsw > 1)
		qsort(x->stacks->sw, x->stacks->nsw, sizeof(*x->stacks->sw), by_tid_ts);
}

void tl_stacks__state_args(struct tl_model *x, const struct tstate_iv *iv, struct tl_args *a)
{
	struct tl_stacks *S = x->stacks;
	const struct tl_stack *k;
	size_t lo = 0, hi;

	/* the states a switch-out begins */
	if (!S || !S->nsw ||
	    (iv->state != TS_SLEEPING && iv->state != TS_BLOCKED && iv->state != TS_PREEMPTED))
		return;
	hi = S->nsw;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct sw *w = &S->sw[mid];

		if (w->tid < iv->tid || (w->tid == iv->tid && w->ts < iv->ts))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < S->nsw && S->sw[lo].tid == iv->tid && S->sw[lo].ts == iv->ts &&
	    (k = tl_stacks__get(x, S->sw[lo].ref)))
		stack_args(a, k);
}

/* ---- the trace info ---- */

void tl_stacks__info(struct tl_model *x, struct tl_args *a)
{
	const struct model_stacks *st = model_session__stacks(x->s);
	struct model_stacks_counts c = { 0 };
	struct tl_arg *d;

	if (!x->stacks)
		return;         /* captures without stacks: as they were */
	if (st)
		model_stacks__counts(st, &c);
	d = tl_arg_add(a, "python_stacks", TLA_DICT);
	d->len = 3;
	tl_arg_u64(a, "stacks", c.stacks);
	tl_arg_u64(a, "calls", x->stacks->calls);
	tl_arg_u64(a, "samples", x->stacks->samples);
}

void tl_stacks__free(struct tl_model *x)
{
	struct tl_stacks *S = x->stacks;

	if (!S)
		return;
	for (size_t i = 0; i < S->nstacks; i++) {
		free(S->stacks[i].text);
		free(S->stacks[i].site);
		free(S->stacks[i].frames);
	}
	free(S->stacks);
	kmap__free(&S->text_map);
	kmap__free(&S->ring_map);
	free(S->rings);
	free(S->sw);
	free(S);
	x->stacks = NULL;
}
