/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * vma.bpf.h — the file behind an address of the current task's memory
 * (bpf_find_vma): a page fault's mapping (fault.bpf.h), a madvise hint's
 * (hints.bpf.h).
 */
#ifndef GPUIO_VMA_BPF_H
#define GPUIO_VMA_BPF_H
#include "trace/vfs.bpf.h"

#define VMA_PAGE_SHIFT 12       /* x86_64, like the syscall table */

/* kept small: the fault programs hold it on a stack that 6.1 bounds (512
 * bytes across their calls) */

struct file_vma {
	__u64 addr;
	__u64 file;          /* struct file * of the mapping, 0: anonymous */
	__u64 ino;
	__s64 off;           /* the file offset of addr's page */
	__u32 dev;
	__u8 ftype;
};

static long file_vma_cb(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	struct file_vma *v = data;
	struct file *file = vma->vm_file;
	struct inode *inode;

	if (!file)
		return 0;
	inode = file->f_inode;
	if (!inode)
		return 0;
	v->file = (__u64)file;
	v->ino = inode->i_ino;
	v->dev = inode->i_sb->s_dev;
	v->ftype = (inode->i_mode & S_IFMT_) >> 12;
	v->off = (__s64)((v->addr & ~((1ull << VMA_PAGE_SHIFT) - 1)) - vma->vm_start) +
		 ((__s64)vma->vm_pgoff << VMA_PAGE_SHIFT);
	return 0;
}

#endif
