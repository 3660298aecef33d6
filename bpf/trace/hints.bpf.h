/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * hints.bpf.h — prefetch hints: posix_fadvise (every advice), readahead, and
 * madvise(MADV_WILLNEED) on a file mapping. They are calls of their thread
 * on their file, with the range they name (offset, requested = its length,
 * flags = the advice), so a loader that asks the kernel to prefetch shows,
 * and the block requests a WILLNEED starts flow from it. The report holds
 * the reads that followed against the ranges hinted.
 */
#ifndef GPUIO_HINTS_BPF_H
#define GPUIO_HINTS_BPF_H
#include "trace/vma.bpf.h"

#define MADV_WILLNEED_ 3

/*
 * madvise(addr, len, MADV_WILLNEED): the mapping's file and the offset of
 * addr in it (a hint on anonymous memory is not file I/O: no call): the
 * range as asked (the kernel refuses one past the mapping's end: ENOMEM,
 * in the record's ret). Global: the VMA walk is checked once,
 * not inside each syscall entry's decoder.
 */
__noinline int madvise_begin(struct call_state *cs, __u64 addr, __u64 len, __u32 hook)
{
	struct file_vma v = { .addr = addr };
	struct vfs_args a = {
		.call = GPUIO_CALL_MADVISE, .hook = (__u8)hook, .fd = -1, .fd2 = -1,
		.offset2 = -1, .flags = MADV_WILLNEED_,
	};

	if (!cs)
		return 0;
	if (bpf_find_vma(bpf_get_current_task_btf(), addr, file_vma_cb, &v, 0) || !v.file)
		return 0;
	a.file = (struct file *)v.file;
	a.offset = v.off;
	a.requested = len;
	vfs_begin(cs, &a, ACC_PROBE);
	return 0;
}

#endif
