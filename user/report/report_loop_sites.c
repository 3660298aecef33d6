// SPDX-License-Identifier: MIT
/*
 * report_loop_sites.c — which lines fetched a loop's data and where its
 * producers spent their CPU (--stacks, --sample-hz): the reads, page
 * faults and receives of every thread that feeds it (its wakers: a
 * worker process's threads, or a reader thread) folded by call site
 * (report_sites.h) with the loop's own inside its next(), and their
 * on-CPU samples folded by the function they were in — decoding, augmenting, tokenising: the most common reason
 * workers are slow is not I/O.
 */
#include <stdlib.h>
#include "report/report_model.h"
#include "report/report_priv.h"
#include "report/report_sites.h"

/* Is (pid, tid) one of the loop's producers? */
static bool producer(const struct rpt_wait *w, uint32_t pid, uint32_t tid)
{
	for (size_t i = 0; i < w->nwakers; i++) {
		const struct rpt_waker *k = &w->wakers[i];

		if (k->thread ? k->tid == tid : k->pid == pid)
			return true;
	}
	return false;
}

static int loop_sites(struct rpt_model *m, struct rpt_wait *w)
{
	size_t n;
	const struct rpt_thread_stack *ts = rpt_sites__thread_stacks(m, &n);

	for (size_t i = 0; i < n; i++) {
		const struct rpt_thread_stack *t = &ts[i];
		int site;

		/* and the loop itself inside next(): a loop with no workers fetches there */
		if (!producer(w, t->pid, t->tid) &&
		    !(t->tid == w->tid && rpt_next_inside(m, &w->next, t->ref)))
			continue;
		if (t->fetches && (site = rpt_sites__of(m, t->ref)) >= 0) {
			if (rpt_sites__add(&w->fetch_sites, &w->nfetch_sites, &w->nfetch_cap, site, t->ref,
					   t->fetches, t->bytes, t->ns))
				return -1;
			w->fetch_bytes += t->bytes;
			w->fetch_ns += t->ns;
		}
		if (t->samples && (site = rpt_sites__func_of(m, t->ref)) >= 0) {
			if (rpt_sites__add(&w->cpu_funcs, &w->ncpu_funcs, &w->ncpu_cap, site, t->ref,
					   t->samples, 0, 0))
				return -1;
			w->samples += t->samples;
		}
	}
	for (size_t i = 0; i < m->nthreads; i++)
		if (producer(w, m->threads[i].pid, m->threads[i].tid))
			w->fetch_all_bytes += m->threads[i].data_bytes;
	rpt_sites__sort(w->fetch_sites, w->nfetch_sites);
	/* samples: by count (their ns are filled from the rate) */
	for (size_t i = 0; i < w->ncpu_funcs; i++) {
		unsigned hz = rpt_sites__sample_hz(m);

		w->cpu_funcs[i].ns = hz ? w->cpu_funcs[i].n * 1000000000ull / hz : 0;
	}
	rpt_sites__sort(w->cpu_funcs, w->ncpu_funcs);
	return 0;
}

int rpt_loop_sites(struct rpt_model *m)
{
	if (!m->sites)
		return 0;               /* no stacks in the capture */
	for (size_t i = 0; i < m->nloops; i++)
		if (loop_sites(m, m->loops[i]))
			return -1;
	return 0;
}

void rpt_loop_sites_free(struct rpt_wait *w)
{
	free(w->fetch_sites);
	free(w->cpu_funcs);
}
