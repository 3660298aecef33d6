/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * pagecache.bpf.h — page-cache misses per call, and who dirtied a file.
 *
 * mm_filemap_add_to_page_cache fires in the reader's context (sync and async
 * readahead both run there), so the pages it adds are charged to the thread's
 * in-flight call, or to its page fault on a file mapping (fault.bpf.h).
 * writeback_dirty_folio fires in the dirtier's context: the flusher's later
 * block requests are attributed to that process.
 */
#ifndef GPUIO_PAGECACHE_BPF_H
#define GPUIO_PAGECACHE_BPF_H
#include "trace/vfs.bpf.h"
#include "trace/fault.bpf.h"
#include "lib/core_fixes.bpf.h"

struct owner { __u32 pid, tid; };

/* inode (kernel pointer) -> the traced task that last dirtied it */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64);
	__type(value, struct owner);
} dirtiers SEC(".maps");

static __always_inline int on_page_cache_add(struct folio *folio)
{
	struct call_state *cs;

	/* task storage first: cheaper than the TGID hash for untraced tasks */
	cs = call_state_get(false);
	if (!cs)
		return 0;
	if (cs->call == GPUIO_CALL_NONE) {
		/* no call: maybe a page fault on a file mapping is reading it */
		if (cs->fault.ts)
			fault_page_added(cs, folio);
		return 0;
	}
	/* only the call's own file: not directory or metadata pages it pulled in */
	if (BPF_CORE_READ(folio, mapping, host, i_ino) != cs->ino)
		return 0;
	cs->misses += folio_pages(folio);
	return 0;
}

static __always_inline int on_dirty(struct address_space *mapping)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct owner o = { .pid = id >> 32, .tid = (__u32)id };
	__u64 inode;

	if (!mapping || !tgid_traced(o.pid))
		return 0;
	inode = (__u64)BPF_CORE_READ(mapping, host);
	if (inode)
		bpf_map_update_elem(&dirtiers, &inode, &o, BPF_ANY);
	return 0;
}

SEC("?tp_btf/mm_filemap_add_to_page_cache")
int BPF_PROG(pc_add_btf, struct folio *folio)
{ return on_page_cache_add(folio); }
SEC("?tp_btf/writeback_dirty_folio")
int BPF_PROG(pc_dirty_btf, struct folio *folio, struct address_space *mapping)
{ return on_dirty(mapping); }

SEC("?raw_tp/mm_filemap_add_to_page_cache")
int BPF_PROG(pc_add_raw, struct folio *folio)
{ return on_page_cache_add(folio); }
SEC("?raw_tp/writeback_dirty_folio")
int BPF_PROG(pc_dirty_raw, struct folio *folio, struct address_space *mapping)
{ return on_dirty(mapping); }

#endif
