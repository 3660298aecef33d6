// SPDX-License-Identifier: MIT
/*
 * loader_layers.c — each layer's attach modes, best first, with the BPF
 * programs of each (loader.c tries them in this order and keeps the first
 * the kernel accepts). Adding a mode is adding a row here.
 */
#include <stddef.h>
#include "capture/cap_layers.h"
#include "trace/loader_priv.h"

#define FN_PROGS(e, x) \
	"vfs_read_" e, "vfs_read_" x, "vfs_write_" e, "vfs_write_" x, \
	"?vfs_readv:vfs_readv_" e, "?vfs_readv:vfs_readv_" x, \
	"?vfs_writev:vfs_writev_" e, "?vfs_writev:vfs_writev_" x, \
	"?vfs_iter_read:vfs_iter_read_" e, "?vfs_iter_read:vfs_iter_read_" x, \
	"?vfs_iter_write:vfs_iter_write_" e, "?vfs_iter_write:vfs_iter_write_" x, \
	"vfs_fsync_" e, "vfs_fsync_" x, "vfs_open_" e, "vfs_open_" x, \
	"?filp_close:vfs_close_" e, "?filp_close:vfs_close_" x, \
	"?__sys_recvfrom:vfs_sock_recvfrom_" e, "?__sys_recvfrom:vfs_sock_recvfrom_" x, \
	"?__sys_sendto:vfs_sock_sendto_" e, "?__sys_sendto:vfs_sock_sendto_" x, \
	"?__sys_recvmsg:vfs_sock_recvmsg_" e, "?__sys_recvmsg:vfs_sock_recvmsg_" x, \
	"?__sys_sendmsg:vfs_sock_sendmsg_" e, "?__sys_sendmsg:vfs_sock_sendmsg_" x, \
	"?__sys_recvmmsg:vfs_sock_recvmmsg_" e, "?__sys_recvmmsg:vfs_sock_recvmmsg_" x, \
	"?__sys_sendmmsg:vfs_sock_sendmmsg_" e, "?__sys_sendmmsg:vfs_sock_sendmmsg_" x, \
	"?__sys_connect:vfs_sock_connect_" e, "?__sys_connect:vfs_sock_connect_" x, \
	"?__sys_accept4:vfs_sock_accept_" e, "?__sys_accept4:vfs_sock_accept_" x, \
	"?__x64_sys_io_submit:vfs_aio_submit_" e, "?__x64_sys_io_submit:vfs_aio_submit_" x, \
	"?__x64_sys_io_getevents:vfs_aio_getevents_" e, \
	"?__x64_sys_io_getevents:vfs_aio_getevents_" x, \
	"?__x64_sys_io_pgetevents:vfs_aio_pgetevents_" e, \
	"?__x64_sys_io_pgetevents:vfs_aio_pgetevents_" x, \
	SYSW_PROGS(e, x, "sendfile64"), SYSW_PROGS(e, x, "copy_file_range"), \
	SYSW_PROGS(e, x, "splice"), SYSW_PROGS(e, x, "sync_file_range"), \
	SYSW_PROGS(e, x, "fallocate"), SYSW_PROGS(e, x, "ftruncate"), \
	SYSW_PROGS(e, x, "fsync"), SYSW_PROGS(e, x, "fdatasync"), \
	SYSW_PROGS(e, x, "fadvise64"), SYSW_PROGS(e, x, "readahead"), SYSW_PROGS(e, x, "madvise")

/* a call with no VFS function of its own, at its syscall wrapper (vfs_func.bpf.h) */
#define SYSW_PROGS(e, x, name) \
	"?__x64_sys_" name ":vfs_sysw_" name "_" e, "?__x64_sys_" name ":vfs_sysw_" name "_" x

/* the syscalls sys_enter_decode knows (bpf/trace/vfs_syscall.bpf.h), each
 * with its own tracepoints: other syscalls run nothing */
#define SYSC(e, x, name) "@sys_enter_" name ":" e, "@sys_exit_" name ":" x
#define SYSC_PROGS(e, x) \
	SYSC(e, x, "read"), SYSC(e, x, "write"), SYSC(e, x, "open"), SYSC(e, x, "close"), \
	SYSC(e, x, "pread64"), SYSC(e, x, "pwrite64"), SYSC(e, x, "readv"), SYSC(e, x, "writev"), \
	SYSC(e, x, "sendfile64"), SYSC(e, x, "fsync"), SYSC(e, x, "fdatasync"), \
	SYSC(e, x, "ftruncate"), SYSC(e, x, "creat"), SYSC(e, x, "openat"), SYSC(e, x, "splice"), \
	SYSC(e, x, "sync_file_range"), SYSC(e, x, "fallocate"), SYSC(e, x, "preadv"), \
	SYSC(e, x, "pwritev"), SYSC(e, x, "copy_file_range"), SYSC(e, x, "preadv2"), \
	SYSC(e, x, "pwritev2"), SYSC(e, x, "openat2"), \
	SYSC(e, x, "fadvise64"), SYSC(e, x, "readahead"), SYSC(e, x, "madvise"), \
	SYSC(e, x, "sendto"), SYSC(e, x, "recvfrom"), SYSC(e, x, "sendmsg"), SYSC(e, x, "recvmsg"), \
	SYSC(e, x, "recvmmsg"), SYSC(e, x, "sendmmsg"), \
	SYSC(e, x, "connect"), SYSC(e, x, "accept"), SYSC(e, x, "accept4"), \
	SYSC(e, x, "io_submit"), SYSC(e, x, "io_getevents"), SYSC(e, x, "io_pgetevents")

const struct layer layers[L_COUNT] = {
	[L_PROC] = { "proc", GPUIO_LAYER_PROC, false, {
		{ "tp_btf", NULL, false, { "proc_fork_btf", "proc_exec_btf", "proc_exit_btf", "proc_free_btf", "proc_rename_btf" } },
		{ "raw_tp", NULL, false, { "proc_fork_raw", "proc_exec_raw", "proc_exit_raw", "proc_free_raw", "proc_rename_raw" } },
	} },
	[L_VFS] = { "vfs", GPUIO_LAYER_VFS, false, {
		{ "fentry", "fentry", false, { FN_PROGS("fentry", "fexit") } },
		{ "kprobe", "kprobe", false, { FN_PROGS("kp", "krp") } },
		/* without function hooks: the decoded calls' own tracepoints, so
		 * that other processes' syscalls run nothing; their 76 links'
		 * slow detach is a child's (link_reaper.c) */
		{ "sys:each", "per_syscall", true, { SYSC_PROGS("vfs_sysc_enter", "vfs_sysc_exit") } },
		{ "sys:each:probe", "per_syscall", true,
		  { SYSC_PROGS("vfs_sysc_enter_probe", "vfs_sysc_exit_probe") } },
		/* one program pair on every syscall of the node */
		{ "sys:tp_btf", "syscall", false, { "vfs_sys_enter_btf", "vfs_sys_exit_btf" } },
		{ "sys:raw_tp", "syscall", false, { "vfs_sys_enter_raw", "vfs_sys_exit_raw" } },
		{ "sys:tracepoint", "syscall", true, { "vfs_sys_enter_tp", "vfs_sys_exit_tp" } },
	} },
	[L_BLOCK] = { "block", GPUIO_LAYER_BLOCK, true, {
		{ "tp_btf", NULL, false, { "blk_bio_queue_btf", "blk_split_btf", "blk_rq_insert_btf", "blk_rq_issue_btf", "blk_rq_complete_btf" } },
		{ "raw_tp", NULL, false, { "blk_bio_queue_raw", "blk_split_raw", "blk_rq_insert_raw", "blk_rq_issue_raw", "blk_rq_complete_raw" } },
	} },
	[L_PAGECACHE] = { "pagecache", GPUIO_LAYER_PAGECACHE, true, {
		{ "tp_btf", NULL, false, { "pc_add_btf", "pc_dirty_btf" } },
		{ "raw_tp", NULL, false, { "pc_add_raw", "pc_dirty_raw" } },
	} },
	[L_IOURING] = { "io_uring", GPUIO_LAYER_IOURING, true, {
		{ "tp_btf", NULL, false, { "uring_submit_btf", "uring_complete_cqe_btf" } },
		{ "tp_btf:v1", NULL, false, { "uring_submit_btf", "uring_complete_args_btf" } },
		{ "tp_btf:v0", NULL, false, { "uring_submit_sqe_btf", "uring_complete_args_btf" } },
	} },
	/* thread states and wake-ups of traced threads (--no-sched: off); its
	 * switch-out sends a thread's batched VFS records, vfs_batch_flush is the
	 * iterator that sends those still waiting at the end */
	[L_SCHED] = { "sched", GPUIO_LAYER_SCHED, true, {
		{ "tp_btf", NULL, false, { "sched_switch_btf", "sched_waking_btf", "sched_wakeup_new_btf",
					   "vfs_batch_flush" } },
		{ "raw_tp", NULL, false, { "sched_switch_raw", "sched_waking_raw", "sched_wakeup_new_raw",
					   "vfs_batch_flush" } },
	} },
	/* page faults on file mappings (--no-faults: off): the filemap events
	 * (6.11+) name a fault's file, else a lookup at its entry (":vma", costly
	 * per fault); fault_flush is the iterator that settles the faults still
	 * open at the end */
	[L_FAULT] = { "fault", GPUIO_LAYER_FAULT, true, {
		{ "tp_btf", NULL, false, { "fault_user_btf", "fault_fmap_btf", "fault_fpages_btf",
					   "fault_exit_btf", "fault_flush" } },
		{ "tp_btf:vma", NULL, false, { "fault_user_vma_btf", "fault_exit_btf", "fault_flush" } },
		{ "raw_tp", NULL, false, { "fault_user_raw", "fault_fmap_raw", "fault_fpages_raw",
					   "fault_exit_raw", "fault_flush" } },
		{ "raw_tp:vma", NULL, false, { "fault_user_vma_raw", "fault_exit_raw", "fault_flush" } },
	} },
	/* attached per library file by user/trace/cuda_probes.c (--no-cuda-uprobes: off) */
	[L_CUDA] = { "cuda", -1, true, {
		/* BPF_TRACE_UPROBE_MULTI (48; libbpf 1.1's headers predate it) */
		{ "uprobe.multi", NULL, false, { "cuda_multi_entry", "cuda_multi_return" },
		  .expected_attach = 48 },
		{ "uprobe", NULL, false, { "cuda_api_entry", "cuda_api_return" } },
	}, .manual = true },
	/* on-CPU samples of traced Python threads (--sample-hz): a CPU-clock
	 * perf event per CPU, opened and attached by user/trace/sampler.c */
	[L_SAMPLE] = { "samples", GPUIO_LAYER_SAMPLE, true, {
		{ "perf_event", NULL, false, { "py_sample" } },
	}, .manual = true },
};

