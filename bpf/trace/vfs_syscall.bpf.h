/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * vfs_syscall.bpf.h — VFS tracing at the syscall layer: sys_enter/sys_exit
 * through tp_btf (best here: no tracefs, typed args), raw_tp, or the classic
 * raw_syscalls tracepoints (needs tracefs). Only decoding lives here; the
 * logic is vfs.bpf.h's.
 */
#ifndef GPUIO_VFS_SYSCALL_BPF_H
#define GPUIO_VFS_SYSCALL_BPF_H
#include "trace/vfs.bpf.h"

#if defined(__TARGET_ARCH_x86)
enum {
	NR_read = 0, NR_write = 1, NR_open = 2, NR_close = 3, NR_pread64 = 17,
	NR_pwrite64 = 18, NR_readv = 19, NR_writev = 20, NR_sendfile = 40,
	NR_fsync = 74, NR_fdatasync = 75, NR_ftruncate = 77, NR_creat = 85,
	NR_openat = 257, NR_splice = 275, NR_sync_file_range = 277,
	NR_fallocate = 285, NR_preadv = 295, NR_pwritev = 296,
	NR_copy_file_range = 326, NR_preadv2 = 327, NR_pwritev2 = 328,
	NR_openat2 = 437,
	NR_sendto = 44, NR_recvfrom = 45, NR_sendmsg = 46, NR_recvmsg = 47,
	NR_recvmmsg = 299, NR_sendmmsg = 307,
	NR_io_getevents = 208, NR_io_submit = 209, NR_io_pgetevents = 333,
	NR_connect = 42, NR_accept = 43, NR_accept4 = 288,
	NR_fadvise64 = 221, NR_readahead = 187, NR_madvise = 28,
};
#else
#error "gpuio's syscall table is x86_64 only for now"
#endif

#define O_WRONLY_ 01
#define O_CREAT_  0100
#define O_TRUNC_  01000

/* Cheap first cut: is this syscall one we trace at all? */
static __always_inline bool nr_traced(long nr)
{
	switch (nr) {
	case NR_read: case NR_write: case NR_open: case NR_close:
	case NR_pread64: case NR_pwrite64: case NR_readv: case NR_writev:
	case NR_sendfile: case NR_fsync: case NR_fdatasync: case NR_ftruncate:
	case NR_creat: case NR_openat: case NR_splice: case NR_sync_file_range:
	case NR_fallocate: case NR_preadv: case NR_pwritev:
	case NR_copy_file_range: case NR_preadv2: case NR_pwritev2:
	case NR_openat2:
	case NR_io_getevents: case NR_io_submit: case NR_io_pgetevents:
	case NR_fadvise64: case NR_readahead: case NR_madvise:
		return true;
	/* rodata: with --no-sockets (and no --all-fds) these cost nothing */
	case NR_sendto: case NR_recvfrom: case NR_sendmsg: case NR_recvmsg:
	case NR_recvmmsg: case NR_sendmmsg:
	case NR_connect: case NR_accept: case NR_accept4:
		return sock_calls_traced();
	}
	return false;
}

/* The gpuio call of a socket syscall, NONE for the others. */
static __always_inline __u16 nr_sock_call(long nr)
{
	switch (nr) {
	case NR_recvfrom: return GPUIO_CALL_RECVFROM;
	case NR_sendto:   return GPUIO_CALL_SENDTO;
	case NR_recvmsg:  return GPUIO_CALL_RECVMSG;
	case NR_sendmsg:  return GPUIO_CALL_SENDMSG;
	case NR_recvmmsg: return GPUIO_CALL_RECVMMSG;
	case NR_sendmmsg: return GPUIO_CALL_SENDMMSG;
	case NR_connect:  return GPUIO_CALL_CONNECT;
	case NR_accept: case NR_accept4: return GPUIO_CALL_ACCEPT;
	}
	return GPUIO_CALL_NONE;
}

static __always_inline __s64 user_loff(__u64 uptr)
{
	__s64 v = -1;

	if (!uptr || bpf_probe_read_user(&v, sizeof(v), (void *)uptr))
		return -1;
	return v;
}

/* The calls whose begin is their own (aio.bpf.h, hints.bpf.h): true when nr is one. */
static __always_inline bool sys_enter_own_begin(struct call_state *cs, long nr, const __u64 *a,
						__u8 hook)
{
	switch (nr) {
	case NR_madvise:        /* (addr, len, advice): WILLNEED on a file mapping */
		if (a[2] == MADV_WILLNEED_)
			madvise_begin(cs, a[0], a[1], hook);
		return true;
	case NR_io_submit:      /* (ctx, nr, iocbpp) */
		aio_submit_begin(cs, a[1], a[2], hook);
		return true;
	case NR_io_getevents:   /* (ctx, min_nr, nr, events, timeout[, sig]) */
	case NR_io_pgetevents:
		aio_getevents_begin(cs, a[3], hook);
		return true;
	}
	return false;
}

/*
 * A syscall's arguments into a call's begin. hook: 0 at sys_enter; the
 * function-hook modes decode the calls they hook at their syscall wrappers
 * (vfs_func.bpf.h) with their own hook number.
 */
static __always_inline void sys_enter_decode_hook(struct call_state *cs, long nr, const __u64 *a,
						  const int acc, __u8 hook)
{
	struct vfs_args v = { .fd = (int)a[0], .fd2 = -1, .offset = -1, .offset2 = -1, .hook = hook };

	switch (nr) {
	case NR_read:  v.call = GPUIO_CALL_READ;  goto implicit_count;
	case NR_write: v.call = GPUIO_CALL_WRITE; goto implicit_count;
	implicit_count:
		v.requested = a[2];
		v.implicit = true;
		break;
	case NR_pread64:  v.call = GPUIO_CALL_PREAD64;  goto explicit_count;
	case NR_pwrite64: v.call = GPUIO_CALL_PWRITE64; goto explicit_count;
	explicit_count:
		v.requested = a[2];
		v.offset = a[3];
		break;
	case NR_readv:  v.call = GPUIO_CALL_READV;  goto implicit_iov;
	case NR_writev: v.call = GPUIO_CALL_WRITEV; goto implicit_iov;
	implicit_iov:
		v.requested = iov_total(a[1], a[2]);
		v.implicit = true;
		break;
	case NR_preadv:   v.call = GPUIO_CALL_PREADV;   goto explicit_iov;
	case NR_pwritev:  v.call = GPUIO_CALL_PWRITEV;  goto explicit_iov;
	case NR_preadv2:  v.call = GPUIO_CALL_PREADV2;  goto explicit_iov;
	case NR_pwritev2: v.call = GPUIO_CALL_PWRITEV2; goto explicit_iov;
	explicit_iov:
		v.requested = iov_total(a[1], a[2]);
		v.offset = a[3];       /* x86_64: pos_l carries all 64 bits */
		if (v.offset == -1 && (nr == NR_preadv2 || nr == NR_pwritev2))
			v.implicit = true;
		break;
	case NR_open:   v.call = GPUIO_CALL_OPEN;   v.fd = -1; v.flags = a[1]; goto open;
	case NR_creat:  v.call = GPUIO_CALL_CREAT;  v.fd = -1;
		v.flags = O_CREAT_ | O_WRONLY_ | O_TRUNC_; goto open;
	case NR_openat: v.call = GPUIO_CALL_OPENAT; v.fd = -1; v.flags = a[2]; goto open;
	case NR_openat2: {
		__u64 fl = 0;
		bpf_probe_read_user(&fl, sizeof(fl), (void *)a[2]);   /* how->flags */
		v.call = GPUIO_CALL_OPENAT2; v.fd = -1; v.flags = fl;
		goto open;
	}
	open:
		v.is_open = true;
		break;
	case NR_close:     v.call = GPUIO_CALL_CLOSE;     break;
	case NR_fsync:     v.call = GPUIO_CALL_FSYNC;     break;
	case NR_fdatasync: v.call = GPUIO_CALL_FDATASYNC; break;
	case NR_sync_file_range:
		v.call = GPUIO_CALL_SYNC_FILE_RANGE;
		v.offset = a[1]; v.requested = a[2]; v.flags = a[3];
		break;
	case NR_fallocate:
		v.call = GPUIO_CALL_FALLOCATE;
		v.flags = a[1]; v.offset = a[2]; v.requested = a[3];
		break;
	case NR_ftruncate:
		v.call = GPUIO_CALL_FTRUNCATE;
		v.requested = a[1];
		break;
	case NR_sendfile:   /* sendfile(out_fd, in_fd, *offset, count) */
		v.call = GPUIO_CALL_SENDFILE;
		v.fd = (int)a[1]; v.fd2 = (int)a[0];
		v.offset = user_loff(a[2]);
		v.implicit = !a[2];
		v.implicit2 = true;
		v.requested = a[3];
		break;
	case NR_copy_file_range: v.call = GPUIO_CALL_COPY_FILE_RANGE; goto two_files;
	case NR_splice:          v.call = GPUIO_CALL_SPLICE;          goto two_files;
	two_files:  /* (fd_in, *off_in, fd_out, *off_out, len, flags) */
		v.fd2 = (int)a[2];
		v.offset = user_loff(a[1]);
		v.offset2 = user_loff(a[3]);
		v.implicit = !a[1];
		v.implicit2 = !a[3];
		v.requested = a[4];
		v.flags = a[5];
		break;
	case NR_fadvise64:      /* (fd, offset, len, advice) */
		v.call = GPUIO_CALL_FADVISE;
		v.offset = a[1]; v.requested = a[2]; v.flags = a[3];
		break;
	case NR_readahead:      /* (fd, offset, count) */
		v.call = GPUIO_CALL_READAHEAD;
		v.offset = a[1]; v.requested = a[2];
		break;
	default:
		if (sys_enter_own_begin(cs, nr, a, hook) || !sock_decode(nr_sock_call(nr), a, &v))
			return;
		v.offset = -1;
		break;
	}
	vfs_begin(cs, &v, acc);
}

static __always_inline void sys_enter_decode(struct call_state *cs, long nr, const __u64 *a,
					     const int acc)
{
	sys_enter_decode_hook(cs, nr, a, acc, 0);
}

SEC("?tp_btf/sys_enter")
int BPF_PROG(vfs_sys_enter_btf, struct pt_regs *regs, long id)
{
	struct call_state *cs;
	__u64 a[6];

	if (!nr_traced(id) || !(cs = current_traced()))
		return 0;
	/* typed pointer: plain loads, no probe_read helpers */
	a[0] = regs->di; a[1] = regs->si; a[2] = regs->dx;
	a[3] = regs->r10; a[4] = regs->r8; a[5] = regs->r9;
	sys_enter_decode(cs, id, a, ACC_CAST);
	return 0;
}

SEC("?tp_btf/sys_exit")
int BPF_PROG(vfs_sys_exit_btf, struct pt_regs *regs, long ret)
{
	/* every syscall of the node exits here: the number (a plain load)
	 * turns away the futex/poll/… majority before any map lookup */
	if (!nr_traced(regs->orig_ax))
		return 0;
	vfs_end(ret, 0, ACC_CAST);
	return 0;
}

SEC("?raw_tp/sys_enter")
int BPF_PROG(vfs_sys_enter_raw, struct pt_regs *regs, long id)
{
	struct call_state *cs;
	struct pt_regs r;
	__u64 a[6];

	if (!nr_traced(id) || !(cs = current_traced()))
		return 0;
	/* one copy of the registers instead of one helper call per argument */
	if (bpf_probe_read_kernel(&r, sizeof(r), regs))
		return 0;
	a[0] = r.di; a[1] = r.si; a[2] = r.dx;
	a[3] = r.r10; a[4] = r.r8; a[5] = r.r9;
	sys_enter_decode(cs, id, a, ACC_PROBE);
	return 0;
}

SEC("?raw_tp/sys_exit")
int BPF_PROG(vfs_sys_exit_raw, struct pt_regs *regs, long ret)
{
	vfs_end(ret, 0, ACC_PROBE);
	return 0;
}

SEC("?tracepoint/raw_syscalls/sys_enter")
int vfs_sys_enter_tp(struct trace_event_raw_sys_enter *ctx)
{
	struct call_state *cs;
	__u64 a[6];
	long id = ctx->id;

	if (!nr_traced(id) || !(cs = current_traced()))
		return 0;
	a[0] = ctx->args[0]; a[1] = ctx->args[1]; a[2] = ctx->args[2];
	a[3] = ctx->args[3]; a[4] = ctx->args[4]; a[5] = ctx->args[5];
	sys_enter_decode(cs, id, a, ACC_PROBE);
	return 0;
}

SEC("?tracepoint/raw_syscalls/sys_exit")
int vfs_sys_exit_tp(struct trace_event_raw_sys_exit *ctx)
{
	if (!nr_traced(ctx->id))
		return 0;
	vfs_end(ctx->ret, 0, ACC_PROBE);
	return 0;
}

/*
 * Per-syscall tracepoints (syscalls:sys_enter_read, ...): attached only to
 * the calls gpuio decodes (user/trace/loader.c), so a process's other
 * syscalls run no program at all: a bystander pays the kernel's syscall
 * tracing path and its per-syscall bitmap test, not a BPF program. The
 * record is the syscall's number, then only its own arguments: one read of
 * six (the decoder uses the ones its call has), not ctx loads past the end
 * of a short record, which the attach would refuse.
 */
struct sysc_enter_rec {
	__u64 ent;
	int nr;
	__u64 args[6];
};

struct sysc_exit_rec {
	__u64 ent;
	int nr;
	long ret;
};

static __always_inline int sysc_enter(struct sysc_enter_rec *ctx, const int acc)
{
	struct call_state *cs;
	__u64 a[6];

	if (!(cs = current_traced()))
		return 0;
	if (bpf_probe_read_kernel(a, sizeof(a), (void *)ctx + offsetof(struct sysc_enter_rec, args)))
		return 0;
	sys_enter_decode(cs, ctx->nr, a, acc);
	return 0;
}

SEC("?tracepoint/syscalls/sys_enter_read")
int vfs_sysc_enter(struct sysc_enter_rec *ctx)
{
	return sysc_enter(ctx, ACC_CAST);
}

SEC("?tracepoint/syscalls/sys_exit_read")
int vfs_sysc_exit(struct sysc_exit_rec *ctx)
{
	vfs_end(ctx->ret, 0, ACC_CAST);
	return 0;
}

/* the same before bpf_rdonly_cast (6.2) */
SEC("?tracepoint/syscalls/sys_enter_read")
int vfs_sysc_enter_probe(struct sysc_enter_rec *ctx)
{
	return sysc_enter(ctx, ACC_PROBE);
}

SEC("?tracepoint/syscalls/sys_exit_read")
int vfs_sysc_exit_probe(struct sysc_exit_rec *ctx)
{
	vfs_end(ctx->ret, 0, ACC_PROBE);
	return 0;
}

#endif
