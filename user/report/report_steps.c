// SPDX-License-Identifier: MIT
/*
 * report_steps.c — the training loop's steps from NVTX ranges: the ranges
 * the CUPTI collector recorded, and the one range name that marks the loop
 * thread's steps (the most frequent name among its outermost ranges that
 * recur). Each such range is a step, with the time since the previous
 * one ended: a loop fetches the next batch between its step ranges, so a
 * step's wait for data is the loop's waiting-for-data time (report_wait.c,
 * or its time inside next(): report_next.c) from the previous range's end
 * to its own, the rest is the step's.
 * Without them, steps from the loop's waits for data; each step's time by
 * kind.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "report/report_priv.h"

#define NVTX_NAMES_MAX 4096      /* distinct names kept; later ones share the last */
#define STEP_MERGE_NS  2000000ull /* waits closer than this are one wait */

static uint32_t name_of(struct rpt_model *m, const char *name, size_t len)
{
	if (len > sizeof(m->nvtx_names[0]) - 1)
		len = sizeof(m->nvtx_names[0]) - 1;
	for (size_t i = 0; i < m->nnvtx_names; i++)
		if (!strncmp(m->nvtx_names[i], name, len) && !m->nvtx_names[i][len])
			return (uint32_t)i;
	if (m->nnvtx_names >= NVTX_NAMES_MAX)
		return UINT32_MAX;
	if (array_grow((void **)&m->nvtx_names, &m->cnvtx_names, m->nnvtx_names + 1,
		       sizeof(*m->nvtx_names)))
		return UINT32_MAX - 1;
	memcpy(m->nvtx_names[m->nnvtx_names], name, len);
	m->nvtx_names[m->nnvtx_names][len] = 0;
	return (uint32_t)m->nnvtx_names++;
}

int rpt_nvtx_add(struct rpt_model *m, const struct gpuio_nvtx_range *r)
{
	size_t len = r->name_len;
	struct rpt_nvtx *n;
	uint32_t name;

	if (!r->hdr.tid || r->end_ns <= r->hdr.ts)
		return 0;               /* an open or empty range: no step */
	if (len > r->hdr.size - offsetof(struct gpuio_nvtx_range, name))
		len = r->hdr.size - offsetof(struct gpuio_nvtx_range, name);
	name = name_of(m, r->name, len);
	if (name == UINT32_MAX - 1)
		return -ENOMEM;
	if (name == UINT32_MAX)
		return 0;               /* past the name cap: not a step candidate */
	if (array_grow((void **)&m->nvtx, &m->cnvtx, m->nnvtx + 1, sizeof(*m->nvtx)))
		return -ENOMEM;
	n = &m->nvtx[m->nnvtx++];
	n->s = r->hdr.ts;
	n->e = r->end_ns;
	n->pid = r->hdr.pid;
	n->tid = r->hdr.tid;
	n->name = name;
	n->depth = r->depth;
	return 0;
}

static int by_start(const void *a, const void *b)
{
	const struct rpt_nvtx *x = a, *y = b;

	return x->s < y->s ? -1 : x->s > y->s;
}

/*
 * The loop thread's step range: among its ranges at the outermost depth
 * that has a name recurring at least twice, the most frequent name (ties:
 * the longer in total). UINT32_MAX: none.
 */
static uint32_t step_name(const struct rpt_model *m, uint32_t tid)
{
	uint32_t best = UINT32_MAX, depth = UINT32_MAX;
	uint64_t *cnt, *tot, bc = 0, bt = 0;

	cnt = calloc(m->nnvtx_names ? m->nnvtx_names : 1, sizeof(*cnt));
	tot = calloc(m->nnvtx_names ? m->nnvtx_names : 1, sizeof(*tot));
	if (!cnt || !tot)
		goto out;
	for (size_t i = 0; i < m->nnvtx; i++) {
		const struct rpt_nvtx *n = &m->nvtx[i];

		if (n->tid != tid)
			continue;
		cnt[n->name]++;
		if (cnt[n->name] >= 2 && n->depth < depth)
			depth = n->depth;
	}
	memset(cnt, 0, (m->nnvtx_names ? m->nnvtx_names : 1) * sizeof(*cnt));
	for (size_t i = 0; i < m->nnvtx; i++) {
		const struct rpt_nvtx *n = &m->nvtx[i];

		if (n->tid != tid || n->depth != depth)
			continue;
		cnt[n->name]++;
		tot[n->name] += n->e - n->s;
	}
	for (size_t k = 0; k < m->nnvtx_names; k++)
		if (cnt[k] >= 2 && (cnt[k] > bc || (cnt[k] == bc && tot[k] > bt))) {
			best = (uint32_t)k;
			bc = cnt[k];
			bt = tot[k];
		}
out:
	free(cnt);
	free(tot);
	return best;
}

/*
 * Steps from the loop's NVTX step ranges, data: its waiting-for-data time
 * (normalised spans). 1: built, 0: no step range (steps come from the
 * waits), -ENOMEM.
 */
int rpt_nvtx_steps(struct rpt_model *m, struct rpt_wait *w, const struct rpt_spans *data)
{
	uint32_t name;

	if (!m->nnvtx || (name = step_name(m, w->tid)) == UINT32_MAX)
		return 0;
	qsort(m->nvtx, m->nnvtx, sizeof(*m->nvtx), by_start);
	for (size_t i = 0, prev_end = 0; i < m->nnvtx; i++) {
		const struct rpt_nvtx *n = &m->nvtx[i];
		struct rpt_step *st;
		uint64_t wait, from;

		if (n->tid != w->tid || n->name != name)
			continue;
		if (array_grow((void **)&w->steps, &w->csteps, w->nsteps + 1, sizeof(*w->steps)))
			return -ENOMEM;
		from = prev_end && prev_end < n->s ? prev_end : n->s;
		wait = rpt_spans_overlap(data, from, n->e);
		st = &w->steps[w->nsteps++];
		st->s = from;
		st->wait_ns = wait;
		st->compute_ns = n->e - from - wait;
		prev_end = n->e;
	}
	w->step_range = m->nvtx_names[name];
	return 1;
}

void rpt_nvtx_free(struct rpt_model *m)
{
	free(m->nvtx);
	free(m->nvtx_names);
	m->nvtx = NULL;
	m->nvtx_names = NULL;
	m->nnvtx = m->cnvtx = m->nnvtx_names = m->cnvtx_names = 0;
}

/* Steps from the loop's waits for data or its time in next() (no NVTX
 * step range): waits closer than STEP_MERGE_NS merged (one fetch of a
 * batch), each cut where cuts says (one starts there: a wait's start
 * inside two next() calls the stacks could not tell apart), a step from
 * one wait's start to the next's. */
int rpt_wait_steps(struct rpt_wait *w, const struct rpt_spans *win, const struct rpt_spans *cuts)
{
	struct rpt_spans ep = { 0 };
	size_t k = 0;
	int rc = 0;

	for (size_t i = 0; i < win->n && !rc; i++) {
		if (ep.n && win->a[i].s - ep.a[ep.n - 1].e < STEP_MERGE_NS)
			ep.a[ep.n - 1].e = win->a[i].e;
		else
			rc = rpt_spans_add(&ep, win->a[i].s, win->a[i].e);
		for (; cuts && k < cuts->n && cuts->a[k].s < win->a[i].e && !rc; k++) {
			uint64_t c = cuts->a[k].s;

			if (c <= ep.a[ep.n - 1].s)
				continue;
			ep.a[ep.n - 1].e = c;
			rc = rpt_spans_add(&ep, c, win->a[i].e);
		}
	}
	for (size_t i = 0; i < ep.n && !rc; i++) {
		struct rpt_step *s;
		uint64_t end = i + 1 < ep.n ? ep.a[i + 1].s : w->span_e;

		if (array_grow((void **)&w->steps, &w->csteps, w->nsteps + 1, sizeof(*w->steps))) {
			rc = -ENOMEM;
			break;
		}
		s = &w->steps[w->nsteps++];
		s->s = ep.a[i].s;
		s->wait_ns = ep.a[i].e - ep.a[i].s;
		s->compute_ns = end > ep.a[i].e ? end - ep.a[i].e : 0;
	}
	free(ep.a);
	return rc;
}


/* Each step's time by kind, as the loop's totals are counted (tw: its spans). */
void rpt_steps_time(struct rpt_wait *w, const struct rpt_spans tw[RPT_TW_N])
{
	for (size_t i = 0; i < w->nsteps; i++) {
		struct rpt_step *st = &w->steps[i];
		uint64_t e = st->s + st->wait_ns + st->compute_ns;

		for (int k = 0; k < RPT_TW_N; k++)
			st->ns[k] = rpt_spans_overlap(&tw[k], st->s, e);
	}
}
