/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * mon_cache.bpf.h — page-cache misses of reads in flight and pages dirtied, per cgroup.
 * Part of monitor.bpf.c (one BPF object), included once from it.
 */
#ifndef GPUIO_MON_CACHE_BPF_H
#define GPUIO_MON_CACHE_BPF_H

#include "monitor/mon_state.bpf.h"

/* ------------------------------------------------------------- page cache */

/* A page added while a buffered read is in flight is a miss of that read
 * (readahead included); only the read's own file counts, not metadata. */
static __always_inline int on_cache_add(struct folio *folio, const bool fast)
{
	struct mon_task *t = task_state(false, fast);

	if (!t || !t->pending || t->dir != MON_READ)
		return 0;
	if (BPF_CORE_READ(folio, mapping, host, i_ino) != t->ino)
		return 0;
	t->misses += folio_pages(folio);
	return 0;
}

static __always_inline int on_dirty(struct folio *folio, struct address_space *mapping)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct mon_cg_val *cg;

	if (!mapping || (BPF_CORE_READ(task, flags) & PF_KTHREAD_))
		return 0;
	cg = cg_get(mon_cgroup_id(), BPF_CORE_READ(mapping, host, i_sb, s_dev));
	if (cg)
		cg->dirtied_pages += folio_pages(folio);
	return 0;
}

SEC("?tp_btf/mm_filemap_add_to_page_cache")
int BPF_PROG(mon_cache_add_btf, struct folio *folio)
{ return on_cache_add(folio, true); }
SEC("?tp_btf/writeback_dirty_folio")
int BPF_PROG(mon_dirty_btf, struct folio *folio, struct address_space *mapping)
{ return on_dirty(folio, mapping); }
SEC("?raw_tp/mm_filemap_add_to_page_cache")
int BPF_PROG(mon_cache_add_raw, struct folio *folio)
{ return on_cache_add(folio, false); }
SEC("?raw_tp/writeback_dirty_folio")
int BPF_PROG(mon_dirty_raw, struct folio *folio, struct address_space *mapping)
{ return on_dirty(folio, mapping); }

#endif /* GPUIO_MON_CACHE_BPF_H */
