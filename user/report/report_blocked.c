// SPDX-License-Identifier: MIT
/*
 * report_blocked.c — what each sleep of a traced thread was in: the WAIT
 * records (model/waits.h), kept in pass 1 by thread then time, and found
 * again for a sleep from its start. A WAIT record follows its switch by a
 * few hundred ns (its own clock read), so the one that belongs to a sleep
 * is the thread's first at or after the sleep's start and before its end.
 * Memory: 16 bytes per sleep of a traced thread.
 */
#include <errno.h>
#include <stdlib.h>
#include "model/waits.h"
#include "report/report_priv.h"

int rpt_waits_add(struct rpt_model *m, const struct gpuio_wait_event *e)
{
	struct rpt_waitrec *r;

	if (array_grow((void **)&m->waits, &m->cwaits, m->nwaits + 1, sizeof(*m->waits)))
		return -ENOMEM;
	r = &m->waits[m->nwaits++];
	r->ts = e->hdr.ts;
	r->tid = e->hdr.tid;
	r->nr = (int16_t)(e->nr < INT16_MIN ? INT16_MIN : e->nr > INT16_MAX ? INT16_MAX : e->nr);
	r->kind = (uint8_t)model_wait__kind(e);
	r->ftype = e->ftype;
	return 0;
}

static int by_tid_ts(const void *a, const void *b)
{
	const struct rpt_waitrec *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

void rpt_waits_sort(struct rpt_model *m)
{
	if (m->nwaits > 1)
		qsort(m->waits, m->nwaits, sizeof(*m->waits), by_tid_ts);
}

const struct rpt_waitrec *rpt_wait_in(const struct rpt_model *m, uint32_t tid, uint64_t s,
				      uint64_t e)
{
	size_t lo = 0, hi = m->nwaits;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct rpt_waitrec *r = &m->waits[mid];

		if (r->tid < tid || (r->tid == tid && r->ts < s))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < m->nwaits && m->waits[lo].tid == tid && m->waits[lo].ts < e)
		return &m->waits[lo];
	return NULL;
}

/* The loop-time kind (enum rpt_tw) of a sleep its WAIT record explains. */
int rpt_tw_of_wait(const struct rpt_waitrec *r)
{
	if (!r)
		return RPT_TW_SLEEP;
	switch (r->kind) {
	case MODEL_WAIT_FILE:   return RPT_TW_FILE_IO;
	case MODEL_WAIT_FAULT:  return RPT_TW_FAULT;
	case MODEL_WAIT_SOCKET: return RPT_TW_SOCKET;
	case MODEL_WAIT_PIPE:   return RPT_TW_PIPE;
	case MODEL_WAIT_FUTEX:  return RPT_TW_FUTEX;
	case MODEL_WAIT_POLL:   return RPT_TW_POLL;
	case MODEL_WAIT_CHILD:  return RPT_TW_CHILD;
	case MODEL_WAIT_TIMER:  return RPT_TW_TIMER;
	default:                return RPT_TW_SLEEP;
	}
}

/* Count ns of a sleep explained only by its WAIT record in the loop's list. */
void rpt_blocked_add(struct rpt_wait *w, const struct rpt_waitrec *r, uint64_t ns)
{
	uint8_t kind = r ? r->kind : MODEL_WAIT_OTHER, ftype = r ? r->ftype : 0;
	int16_t nr = r ? r->nr : GPUIO_WAIT_NR_UNKNOWN;
	size_t i;

	for (i = 0; i < w->nblocked; i++)
		if (w->blocked[i].kind == kind && w->blocked[i].nr == nr && w->blocked[i].ftype == ftype)
			break;
	if (i == w->nblocked) {
		if (i == RPT_BLOCKED_MAX) {     /* full: the smallest entry gives way */
			size_t k = 0;

			for (size_t j = 1; j < i; j++)
				if (w->blocked[j].ns < w->blocked[k].ns)
					k = j;
			if (w->blocked[k].ns >= ns)
				return;
			i = k;
		} else {
			w->nblocked++;
		}
		w->blocked[i] = (struct rpt_blocked){ .kind = kind, .ftype = ftype, .nr = nr };
	}
	w->blocked[i].ns += ns;
	w->blocked[i].n++;
}

static int by_ns(const void *a, const void *b)
{
	const struct rpt_blocked *x = a, *y = b;

	return x->ns > y->ns ? -1 : x->ns < y->ns;
}

void rpt_blocked_sort(struct rpt_wait *w)
{
	if (w->nblocked > 1)
		qsort(w->blocked, w->nblocked, sizeof(*w->blocked), by_ns);
}
