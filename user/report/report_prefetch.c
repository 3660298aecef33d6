// SPDX-License-Identifier: MIT
/*
 * report_prefetch.c — prefetch hints against the reads that followed them.
 * A WILLNEED (fadvise, madvise) or readahead names a range of a file; a
 * later read that starts inside a range kept is counted for the hint, and
 * missed when it still added pages to the page cache: the hint came too
 * late, or its pages were dropped before the read.
 */
#include "model/calls.h"
#include "report/report_model.h"
#include "report/report_priv.h"

static void keep_range(struct rpt_prefetch *p, uint64_t lo, uint64_t len)
{
	/* fadvise's length 0: to the end of the file */
	uint64_t hi = len ? lo + len : UINT64_MAX;

	p->lo[p->nranges % RPT_PF_RANGES] = lo;
	p->hi[p->nranges % RPT_PF_RANGES] = hi < lo ? UINT64_MAX : hi;
	p->nranges++;
}

void rpt_prefetch__note(struct rpt_model *m, struct rpt_file *f, const struct gpuio_vfs_event *e,
			bool rd, uint64_t bytes)
{
	struct rpt_prefetch *p = &f->pf, *all = &m->pf;

	if (gpuio_call__is_hint(e->call)) {
		p->hints++, all->hints++;
		if (!gpuio_call__hint_prefetches(e->call, e->flags) || e->ret < 0 || e->offset < 0)
			return;
		p->prefetch_hints++, all->prefetch_hints++;
		p->hinted_bytes += e->requested, all->hinted_bytes += e->requested;
		keep_range(p, (uint64_t)e->offset, e->requested);
		return;
	}
	if (!rd || !bytes || e->offset < 0)
		return;
	for (uint32_t i = 0; i < p->nranges && i < RPT_PF_RANGES; i++) {
		if ((uint64_t)e->offset < p->lo[i] || (uint64_t)e->offset >= p->hi[i])
			continue;
		p->reads++, all->reads++;
		p->read_bytes += bytes, all->read_bytes += bytes;
		if (e->cache_miss_pages) {
			p->reads_missed++, all->reads_missed++;
			p->miss_pages += e->cache_miss_pages, all->miss_pages += e->cache_miss_pages;
		}
		return;
	}
}
