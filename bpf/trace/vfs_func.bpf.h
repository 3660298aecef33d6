/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * vfs_func.bpf.h — VFS tracing at the function layer, for stock kernels:
 * fentry/fexit (a few ns per call) or kprobe/kretprobe on vfs_read,
 * vfs_write, vfs_readv, vfs_writev, vfs_iter_read/write, vfs_fsync_range,
 * do_sys_openat2 and filp_close. These see file I/O that no read/write
 * syscall carries (kernel readers, splice internals). Both families share
 * the decoders below; only the hook macros differ. The file is known here,
 * the fd is not (events carry fd -1, except opens, whose result is the fd).
 *
 * Sockets: read/write/readv/writev on a socket pass vfs_read and the rest
 * like files. The socket calls are hooked at __sys_recvfrom, __sys_sendto,
 * __sys_recvmsg, __sys_sendmsg, __sys_recvmmsg and __sys_sendmmsg, whose
 * arguments are the syscall's (fd and user pointers): the same decoding as
 * the syscall mode, the same records. (sock_recvmsg/sock_sendmsg would see
 * one call per message of recvmmsg, and newer kernels' sendto does not
 * pass sock_sendmsg.) Loaded only where the kernel has them (the loader).
 */
#ifndef GPUIO_VFS_FUNC_BPF_H
#define GPUIO_VFS_FUNC_BPF_H
#include "trace/vfs.bpf.h"

enum {
	HOOK_READ = 1, HOOK_WRITE, HOOK_READV, HOOK_WRITEV, HOOK_ITER_READ,
	HOOK_ITER_WRITE, HOOK_FSYNC, HOOK_OPEN, HOOK_CLOSE,
	HOOK_RECVFROM, HOOK_SENDTO, HOOK_RECVMSG, HOOK_SENDMSG, HOOK_RECVMMSG, HOOK_SENDMMSG,
	HOOK_AIO_SUBMIT, HOOK_AIO_GETEVENTS, HOOK_CONNECT, HOOK_ACCEPT, HOOK_SYSCALL,
};

static __always_inline __s64 kpos(loff_t *pos)
{
	loff_t p = -1;

	if (pos)
		bpf_probe_read_kernel(&p, sizeof(p), pos);
	return p;
}

static __always_inline void fn_begin_cs(struct call_state *cs, __u8 hook, __u16 call,
					struct file *file, __u64 requested, __s64 offset,
					__u32 flags, const int acc)
{
	struct vfs_args v = {
		.call = call, .hook = hook, .file = file, .fd = -1, .fd2 = -1,
		.offset = offset, .offset2 = -1, .requested = requested, .flags = flags,
	};

	vfs_begin(cs, &v, acc);
}

/*
 * A macro, not a function: the arguments that read the kernel (the
 * position behind pos, an iovec's total) are evaluated only once the
 * caller is known to be traced. As a function's arguments they were read
 * first, for every read and write on the node (a probe read each).
 */
#define fn_begin(hook, call, file, requested, offset, flags, acc) ({                  \
	struct call_state *cs__ = current_traced();                                    \
	if (cs__)                                                                      \
		fn_begin_cs(cs__, hook, call, file, requested, offset, flags, acc);    \
	0; })

static __always_inline int fn_open_begin(struct open_how *how)
{
	struct vfs_args v = {
		.call = GPUIO_CALL_OPENAT, .hook = HOOK_OPEN, .fd = -1, .fd2 = -1, .is_open = true,
		.offset = -1, .offset2 = -1,
		.flags = (__u32)BPF_CORE_READ(how, flags),
	};
	struct call_state *cs = current_traced();

	if (cs)
		vfs_begin(cs, &v, ACC_PROBE);
	return 0;
}

/* A socket call at __sys_*: its first four arguments are the syscall's. */
static __always_inline int fn_sock_begin(__u8 hook, __u16 call, __u64 a0, __u64 a1, __u64 a2,
					 __u64 a3)
{
	struct vfs_args v = { .hook = hook, .fd2 = -1, .offset = -1, .offset2 = -1 };
	__u64 a[6] = { a0, a1, a2, a3 };
	struct call_state *cs;

	if (!sock_calls_traced() || !(cs = current_traced()))
		return 0;
	if (sock_decode(call, a, &v))
		vfs_begin(cs, &v, ACC_PROBE);
	return 0;
}

/*
 * The AIO syscalls at their x86-64 wrappers (__x64_sys_io_submit, ...): the
 * program's registers are their argument. aio_read/aio_write call
 * ->read_iter directly, past every vfs_* hook above (aio.bpf.h).
 */
static __always_inline int fn_aio_submit(__u64 nr, __u64 iocbpp)
{
	struct call_state *cs = current_traced();

	if (cs)
		aio_submit_begin(cs, nr, iocbpp, HOOK_AIO_SUBMIT);
	return 0;
}

static __always_inline int fn_aio_getevents(__u64 events)
{
	struct call_state *cs = current_traced();

	if (cs)
		aio_getevents_begin(cs, events, HOOK_AIO_GETEVENTS);
	return 0;
}

/*
 * Calls with no VFS function of their own (sendfile, copy_file_range,
 * splice, sync_file_range, fallocate, ftruncate: splice's and sendfile's
 * data never pass vfs_read/vfs_write), and fsync/fdatasync, are hooked at their x86-64 syscall
 * wrappers and decoded from the program's registers as the syscall modes
 * decode them: the same records, fd included. A vfs_* hook they pass inside
 * belongs to them (vfs_begin).
 */
static __always_inline int fn_sys_begin(long nr, const struct pt_regs *regs)
{
	struct call_state *cs = current_traced();
	struct pt_regs r;
	__u64 a[6];

	if (!cs || bpf_probe_read_kernel(&r, sizeof(r), regs))
		return 0;
	a[0] = r.di; a[1] = r.si; a[2] = r.dx;
	a[3] = r.r10; a[4] = r.r8; a[5] = r.r9;
	sys_enter_decode_hook(cs, nr, a, ACC_PROBE, HOOK_SYSCALL);
	return 0;
}

#define SYSW(name, nr) \
	SEC("?fentry/__x64_sys_" #name) \
	int BPF_PROG(vfs_sysw_##name##_fentry, struct pt_regs *regs) \
	{ return fn_sys_begin(nr, regs); } \
	SEC("?fexit/__x64_sys_" #name) \
	int BPF_PROG(vfs_sysw_##name##_fexit, struct pt_regs *regs, long ret) \
	{ vfs_end(ret, HOOK_SYSCALL, ACC_PROBE); return 0; } \
	SEC("?kprobe/__x64_sys_" #name) \
	int BPF_KPROBE(vfs_sysw_##name##_kp, struct pt_regs *regs) \
	{ return fn_sys_begin(nr, regs); } \
	SEC("?kretprobe/__x64_sys_" #name) \
	int BPF_KRETPROBE(vfs_sysw_##name##_krp, long ret) \
	{ vfs_end(ret, HOOK_SYSCALL, ACC_PROBE); return 0; }

SYSW(sendfile64, NR_sendfile)
SYSW(copy_file_range, NR_copy_file_range)
SYSW(splice, NR_splice)
SYSW(sync_file_range, NR_sync_file_range)
SYSW(fallocate, NR_fallocate)
SYSW(ftruncate, NR_ftruncate)
/* vfs_fsync_range is hooked too, but 6.1's compiler inlines it into
 * fdatasync's path (datasync constant): fdatasync showed nothing there */
SYSW(fsync, NR_fsync)
SYSW(fdatasync, NR_fdatasync)
SYSW(fadvise64, NR_fadvise64)
SYSW(readahead, NR_readahead)
SYSW(madvise, NR_madvise)

/* function hooks never take the position from the file (implicit is unset) */
#define FN_END(hook, ret) ({ vfs_end((long)(ret), hook, ACC_PROBE); 0; })

/* ---- fentry / fexit ---- */
SEC("?fentry/vfs_read")
int BPF_PROG(vfs_read_fentry, struct file *file, char *buf, size_t count, loff_t *pos)
{ return fn_begin(HOOK_READ, GPUIO_CALL_READ, file, count, kpos(pos), 0, ACC_BTF); }
SEC("?fexit/vfs_read")
int BPF_PROG(vfs_read_fexit, struct file *file, char *buf, size_t count, loff_t *pos, ssize_t ret)
{
#ifdef GPUIO_BREAK_FENTRY
	/* test knob: a deliberately wrong byte count that the VM suite must catch */
	ret += 1;
#endif
	return FN_END(HOOK_READ, ret);
}

SEC("?fentry/vfs_write")
int BPF_PROG(vfs_write_fentry, struct file *file, const char *buf, size_t count, loff_t *pos)
{ return fn_begin(HOOK_WRITE, GPUIO_CALL_WRITE, file, count, kpos(pos), 0, ACC_BTF); }
SEC("?fexit/vfs_write")
int BPF_PROG(vfs_write_fexit, struct file *file, const char *buf, size_t count, loff_t *pos, ssize_t ret)
{ return FN_END(HOOK_WRITE, ret); }

SEC("?fentry/vfs_readv")
int BPF_PROG(vfs_readv_fentry, struct file *file, const struct iovec *vec, unsigned long vlen, loff_t *pos)
{ return fn_begin(HOOK_READV, GPUIO_CALL_READV, file, iov_total((__u64)vec, vlen), kpos(pos), 0, ACC_BTF); }
SEC("?fexit/vfs_readv")
int BPF_PROG(vfs_readv_fexit, struct file *file, const struct iovec *vec, unsigned long vlen, loff_t *pos, rwf_t flags, ssize_t ret)
{ return FN_END(HOOK_READV, ret); }

SEC("?fentry/vfs_writev")
int BPF_PROG(vfs_writev_fentry, struct file *file, const struct iovec *vec, unsigned long vlen, loff_t *pos)
{ return fn_begin(HOOK_WRITEV, GPUIO_CALL_WRITEV, file, iov_total((__u64)vec, vlen), kpos(pos), 0, ACC_BTF); }
SEC("?fexit/vfs_writev")
int BPF_PROG(vfs_writev_fexit, struct file *file, const struct iovec *vec, unsigned long vlen, loff_t *pos, rwf_t flags, ssize_t ret)
{ return FN_END(HOOK_WRITEV, ret); }

SEC("?fentry/vfs_iter_read")
int BPF_PROG(vfs_iter_read_fentry, struct file *file, struct iov_iter *iter, loff_t *ppos)
{ return fn_begin(HOOK_ITER_READ, GPUIO_CALL_READ, file, BPF_CORE_READ(iter, count), kpos(ppos), 0, ACC_BTF); }
SEC("?fexit/vfs_iter_read")
int BPF_PROG(vfs_iter_read_fexit, struct file *file, struct iov_iter *iter, loff_t *ppos, rwf_t flags, ssize_t ret)
{ return FN_END(HOOK_ITER_READ, ret); }

SEC("?fentry/vfs_iter_write")
int BPF_PROG(vfs_iter_write_fentry, struct file *file, struct iov_iter *iter, loff_t *ppos)
{ return fn_begin(HOOK_ITER_WRITE, GPUIO_CALL_WRITE, file, BPF_CORE_READ(iter, count), kpos(ppos), 0, ACC_BTF); }
SEC("?fexit/vfs_iter_write")
int BPF_PROG(vfs_iter_write_fexit, struct file *file, struct iov_iter *iter, loff_t *ppos, rwf_t flags, ssize_t ret)
{ return FN_END(HOOK_ITER_WRITE, ret); }

SEC("?fentry/vfs_fsync_range")
int BPF_PROG(vfs_fsync_fentry, struct file *file, loff_t start, loff_t end, int datasync)
{ return fn_begin(HOOK_FSYNC, datasync ? GPUIO_CALL_FDATASYNC : GPUIO_CALL_FSYNC, file, 0, -1, 0, ACC_BTF); }
SEC("?fexit/vfs_fsync_range")
int BPF_PROG(vfs_fsync_fexit, struct file *file, loff_t start, loff_t end, int datasync, int ret)
{ return FN_END(HOOK_FSYNC, ret); }

SEC("?fentry/do_sys_openat2")
int BPF_PROG(vfs_open_fentry, int dfd, const char *filename, struct open_how *how)
{ return fn_open_begin(how); }
SEC("?fexit/do_sys_openat2")
int BPF_PROG(vfs_open_fexit, int dfd, const char *filename, struct open_how *how, long ret)
{ return FN_END(HOOK_OPEN, ret); }

SEC("?fentry/filp_close")
int BPF_PROG(vfs_close_fentry, struct file *file, void *id)
{ return fn_begin(HOOK_CLOSE, GPUIO_CALL_CLOSE, file, 0, -1, 0, ACC_BTF); }
SEC("?fexit/filp_close")
int BPF_PROG(vfs_close_fexit, struct file *file, void *id, int ret)
{ return FN_END(HOOK_CLOSE, ret); }

SEC("?fentry/__x64_sys_io_submit")
int BPF_PROG(vfs_aio_submit_fentry, struct pt_regs *regs)
{ return fn_aio_submit(regs->si, regs->dx); }
SEC("?fexit/__x64_sys_io_submit")
int BPF_PROG(vfs_aio_submit_fexit, struct pt_regs *regs, long ret)
{ return FN_END(HOOK_AIO_SUBMIT, ret); }

SEC("?fentry/__x64_sys_io_getevents")
int BPF_PROG(vfs_aio_getevents_fentry, struct pt_regs *regs)
{ return fn_aio_getevents(regs->r10); }
SEC("?fexit/__x64_sys_io_getevents")
int BPF_PROG(vfs_aio_getevents_fexit, struct pt_regs *regs, long ret)
{ return FN_END(HOOK_AIO_GETEVENTS, ret); }

SEC("?fentry/__x64_sys_io_pgetevents")
int BPF_PROG(vfs_aio_pgetevents_fentry, struct pt_regs *regs)
{ return fn_aio_getevents(regs->r10); }
SEC("?fexit/__x64_sys_io_pgetevents")
int BPF_PROG(vfs_aio_pgetevents_fexit, struct pt_regs *regs, long ret)
{ return FN_END(HOOK_AIO_GETEVENTS, ret); }

SEC("?fentry/__sys_connect")
int BPF_PROG(vfs_sock_connect_fentry, int fd, void *addr, int addrlen)
{ return fn_sock_begin(HOOK_CONNECT, GPUIO_CALL_CONNECT, fd, (__u64)addr, addrlen, 0); }
SEC("?fexit/__sys_connect")
int BPF_PROG(vfs_sock_connect_fexit, int fd, void *addr, int addrlen, int ret)
{ return FN_END(HOOK_CONNECT, ret); }

SEC("?fentry/__sys_accept4")
int BPF_PROG(vfs_sock_accept_fentry, int fd, void *addr, int *addrlen, int flags)
{ return fn_sock_begin(HOOK_ACCEPT, GPUIO_CALL_ACCEPT, fd, (__u64)addr, (__u64)addrlen, flags); }
SEC("?fexit/__sys_accept4")
int BPF_PROG(vfs_sock_accept_fexit, int fd, void *addr, int *addrlen, int flags, int ret)
{ return FN_END(HOOK_ACCEPT, ret); }

SEC("?fentry/__sys_recvfrom")
int BPF_PROG(vfs_sock_recvfrom_fentry, int fd, void *buf, size_t len, unsigned int flags)
{ return fn_sock_begin(HOOK_RECVFROM, GPUIO_CALL_RECVFROM, fd, (__u64)buf, len, flags); }
SEC("?fexit/__sys_recvfrom")
int BPF_PROG(vfs_sock_recvfrom_fexit, int fd, void *buf, size_t len, unsigned int flags, void *addr,
	     int *addrlen, int ret)
{ return FN_END(HOOK_RECVFROM, ret); }

SEC("?fentry/__sys_sendto")
int BPF_PROG(vfs_sock_sendto_fentry, int fd, void *buf, size_t len, unsigned int flags)
{ return fn_sock_begin(HOOK_SENDTO, GPUIO_CALL_SENDTO, fd, (__u64)buf, len, flags); }
SEC("?fexit/__sys_sendto")
int BPF_PROG(vfs_sock_sendto_fexit, int fd, void *buf, size_t len, unsigned int flags, void *addr,
	     int addrlen, int ret)
{ return FN_END(HOOK_SENDTO, ret); }

SEC("?fentry/__sys_recvmsg")
int BPF_PROG(vfs_sock_recvmsg_fentry, int fd, void *msg, unsigned int flags)
{ return fn_sock_begin(HOOK_RECVMSG, GPUIO_CALL_RECVMSG, fd, (__u64)msg, flags, 0); }
SEC("?fexit/__sys_recvmsg")
int BPF_PROG(vfs_sock_recvmsg_fexit, int fd, void *msg, unsigned int flags, bool forbid, long ret)
{ return FN_END(HOOK_RECVMSG, ret); }

SEC("?fentry/__sys_sendmsg")
int BPF_PROG(vfs_sock_sendmsg_fentry, int fd, void *msg, unsigned int flags)
{ return fn_sock_begin(HOOK_SENDMSG, GPUIO_CALL_SENDMSG, fd, (__u64)msg, flags, 0); }
SEC("?fexit/__sys_sendmsg")
int BPF_PROG(vfs_sock_sendmsg_fexit, int fd, void *msg, unsigned int flags, bool forbid, long ret)
{ return FN_END(HOOK_SENDMSG, ret); }

SEC("?fentry/__sys_recvmmsg")
int BPF_PROG(vfs_sock_recvmmsg_fentry, int fd, void *mmsg, unsigned int vlen, unsigned int flags)
{ return fn_sock_begin(HOOK_RECVMMSG, GPUIO_CALL_RECVMMSG, fd, (__u64)mmsg, vlen, flags); }
SEC("?fexit/__sys_recvmmsg")
int BPF_PROG(vfs_sock_recvmmsg_fexit, int fd, void *mmsg, unsigned int vlen, unsigned int flags,
	     void *timeout, void *timeout32, int ret)
{ return FN_END(HOOK_RECVMMSG, ret); }

SEC("?fentry/__sys_sendmmsg")
int BPF_PROG(vfs_sock_sendmmsg_fentry, int fd, void *mmsg, unsigned int vlen, unsigned int flags)
{ return fn_sock_begin(HOOK_SENDMMSG, GPUIO_CALL_SENDMMSG, fd, (__u64)mmsg, vlen, flags); }
SEC("?fexit/__sys_sendmmsg")
int BPF_PROG(vfs_sock_sendmmsg_fexit, int fd, void *mmsg, unsigned int vlen, unsigned int flags,
	     bool forbid, int ret)
{ return FN_END(HOOK_SENDMMSG, ret); }

/* ---- kprobe / kretprobe: same decoders ---- */
SEC("?kprobe/vfs_read")
int BPF_KPROBE(vfs_read_kp, struct file *file, char *buf, size_t count, loff_t *pos)
{ return fn_begin(HOOK_READ, GPUIO_CALL_READ, file, count, kpos(pos), 0, ACC_PROBE); }
SEC("?kretprobe/vfs_read")
int BPF_KRETPROBE(vfs_read_krp, ssize_t ret)
{ return FN_END(HOOK_READ, ret); }

SEC("?kprobe/vfs_write")
int BPF_KPROBE(vfs_write_kp, struct file *file, const char *buf, size_t count, loff_t *pos)
{ return fn_begin(HOOK_WRITE, GPUIO_CALL_WRITE, file, count, kpos(pos), 0, ACC_PROBE); }
SEC("?kretprobe/vfs_write")
int BPF_KRETPROBE(vfs_write_krp, ssize_t ret)
{ return FN_END(HOOK_WRITE, ret); }

SEC("?kprobe/vfs_readv")
int BPF_KPROBE(vfs_readv_kp, struct file *file, const struct iovec *vec, unsigned long vlen, loff_t *pos)
{ return fn_begin(HOOK_READV, GPUIO_CALL_READV, file, iov_total((__u64)vec, vlen), kpos(pos), 0, ACC_PROBE); }
SEC("?kretprobe/vfs_readv")
int BPF_KRETPROBE(vfs_readv_krp, ssize_t ret)
{ return FN_END(HOOK_READV, ret); }

SEC("?kprobe/vfs_writev")
int BPF_KPROBE(vfs_writev_kp, struct file *file, const struct iovec *vec, unsigned long vlen, loff_t *pos)
{ return fn_begin(HOOK_WRITEV, GPUIO_CALL_WRITEV, file, iov_total((__u64)vec, vlen), kpos(pos), 0, ACC_PROBE); }
SEC("?kretprobe/vfs_writev")
int BPF_KRETPROBE(vfs_writev_krp, ssize_t ret)
{ return FN_END(HOOK_WRITEV, ret); }

SEC("?kprobe/vfs_iter_read")
int BPF_KPROBE(vfs_iter_read_kp, struct file *file, struct iov_iter *iter, loff_t *ppos)
{ return fn_begin(HOOK_ITER_READ, GPUIO_CALL_READ, file, BPF_CORE_READ(iter, count), kpos(ppos), 0, ACC_PROBE); }
SEC("?kretprobe/vfs_iter_read")
int BPF_KRETPROBE(vfs_iter_read_krp, ssize_t ret)
{ return FN_END(HOOK_ITER_READ, ret); }

SEC("?kprobe/vfs_iter_write")
int BPF_KPROBE(vfs_iter_write_kp, struct file *file, struct iov_iter *iter, loff_t *ppos)
{ return fn_begin(HOOK_ITER_WRITE, GPUIO_CALL_WRITE, file, BPF_CORE_READ(iter, count), kpos(ppos), 0, ACC_PROBE); }
SEC("?kretprobe/vfs_iter_write")
int BPF_KRETPROBE(vfs_iter_write_krp, ssize_t ret)
{ return FN_END(HOOK_ITER_WRITE, ret); }

SEC("?kprobe/vfs_fsync_range")
int BPF_KPROBE(vfs_fsync_kp, struct file *file, loff_t start, loff_t end, int datasync)
{ return fn_begin(HOOK_FSYNC, datasync ? GPUIO_CALL_FDATASYNC : GPUIO_CALL_FSYNC, file, 0, -1, 0, ACC_PROBE); }
SEC("?kretprobe/vfs_fsync_range")
int BPF_KRETPROBE(vfs_fsync_krp, int ret)
{ return FN_END(HOOK_FSYNC, ret); }

SEC("?kprobe/do_sys_openat2")
int BPF_KPROBE(vfs_open_kp, int dfd, const char *filename, struct open_how *how)
{ return fn_open_begin(how); }
SEC("?kretprobe/do_sys_openat2")
int BPF_KRETPROBE(vfs_open_krp, long ret)
{ return FN_END(HOOK_OPEN, ret); }

SEC("?kprobe/filp_close")
int BPF_KPROBE(vfs_close_kp, struct file *file, void *id)
{ return fn_begin(HOOK_CLOSE, GPUIO_CALL_CLOSE, file, 0, -1, 0, ACC_PROBE); }
SEC("?kretprobe/filp_close")
int BPF_KRETPROBE(vfs_close_krp, int ret)
{ return FN_END(HOOK_CLOSE, ret); }

SEC("?kprobe/__x64_sys_io_submit")
int BPF_KPROBE(vfs_aio_submit_kp, struct pt_regs *regs)
{ return fn_aio_submit(BPF_CORE_READ(regs, si), BPF_CORE_READ(regs, dx)); }
SEC("?kretprobe/__x64_sys_io_submit")
int BPF_KRETPROBE(vfs_aio_submit_krp, long ret)
{ return FN_END(HOOK_AIO_SUBMIT, ret); }

SEC("?kprobe/__x64_sys_io_getevents")
int BPF_KPROBE(vfs_aio_getevents_kp, struct pt_regs *regs)
{ return fn_aio_getevents(BPF_CORE_READ(regs, r10)); }
SEC("?kretprobe/__x64_sys_io_getevents")
int BPF_KRETPROBE(vfs_aio_getevents_krp, long ret)
{ return FN_END(HOOK_AIO_GETEVENTS, ret); }

SEC("?kprobe/__x64_sys_io_pgetevents")
int BPF_KPROBE(vfs_aio_pgetevents_kp, struct pt_regs *regs)
{ return fn_aio_getevents(BPF_CORE_READ(regs, r10)); }
SEC("?kretprobe/__x64_sys_io_pgetevents")
int BPF_KRETPROBE(vfs_aio_pgetevents_krp, long ret)
{ return FN_END(HOOK_AIO_GETEVENTS, ret); }

SEC("?kprobe/__sys_connect")
int BPF_KPROBE(vfs_sock_connect_kp, int fd, void *addr, int addrlen)
{ return fn_sock_begin(HOOK_CONNECT, GPUIO_CALL_CONNECT, fd, (__u64)addr, addrlen, 0); }
SEC("?kretprobe/__sys_connect")
int BPF_KRETPROBE(vfs_sock_connect_krp, int ret)
{ return FN_END(HOOK_CONNECT, ret); }

SEC("?kprobe/__sys_accept4")
int BPF_KPROBE(vfs_sock_accept_kp, int fd, void *addr, int *addrlen, int flags)
{ return fn_sock_begin(HOOK_ACCEPT, GPUIO_CALL_ACCEPT, fd, (__u64)addr, (__u64)addrlen, flags); }
SEC("?kretprobe/__sys_accept4")
int BPF_KRETPROBE(vfs_sock_accept_krp, int ret)
{ return FN_END(HOOK_ACCEPT, ret); }

SEC("?kprobe/__sys_recvfrom")
int BPF_KPROBE(vfs_sock_recvfrom_kp, int fd, void *buf, size_t len, unsigned int flags)
{ return fn_sock_begin(HOOK_RECVFROM, GPUIO_CALL_RECVFROM, fd, (__u64)buf, len, flags); }
SEC("?kretprobe/__sys_recvfrom")
int BPF_KRETPROBE(vfs_sock_recvfrom_krp, int ret)
{ return FN_END(HOOK_RECVFROM, ret); }

SEC("?kprobe/__sys_sendto")
int BPF_KPROBE(vfs_sock_sendto_kp, int fd, void *buf, size_t len, unsigned int flags)
{ return fn_sock_begin(HOOK_SENDTO, GPUIO_CALL_SENDTO, fd, (__u64)buf, len, flags); }
SEC("?kretprobe/__sys_sendto")
int BPF_KRETPROBE(vfs_sock_sendto_krp, int ret)
{ return FN_END(HOOK_SENDTO, ret); }

SEC("?kprobe/__sys_recvmsg")
int BPF_KPROBE(vfs_sock_recvmsg_kp, int fd, void *msg, unsigned int flags)
{ return fn_sock_begin(HOOK_RECVMSG, GPUIO_CALL_RECVMSG, fd, (__u64)msg, flags, 0); }
SEC("?kretprobe/__sys_recvmsg")
int BPF_KRETPROBE(vfs_sock_recvmsg_krp, long ret)
{ return FN_END(HOOK_RECVMSG, ret); }

SEC("?kprobe/__sys_sendmsg")
int BPF_KPROBE(vfs_sock_sendmsg_kp, int fd, void *msg, unsigned int flags)
{ return fn_sock_begin(HOOK_SENDMSG, GPUIO_CALL_SENDMSG, fd, (__u64)msg, flags, 0); }
SEC("?kretprobe/__sys_sendmsg")
int BPF_KRETPROBE(vfs_sock_sendmsg_krp, long ret)
{ return FN_END(HOOK_SENDMSG, ret); }

SEC("?kprobe/__sys_recvmmsg")
int BPF_KPROBE(vfs_sock_recvmmsg_kp, int fd, void *mmsg, unsigned int vlen, unsigned int flags)
{ return fn_sock_begin(HOOK_RECVMMSG, GPUIO_CALL_RECVMMSG, fd, (__u64)mmsg, vlen, flags); }
SEC("?kretprobe/__sys_recvmmsg")
int BPF_KRETPROBE(vfs_sock_recvmmsg_krp, int ret)
{ return FN_END(HOOK_RECVMMSG, ret); }

SEC("?kprobe/__sys_sendmmsg")
int BPF_KPROBE(vfs_sock_sendmmsg_kp, int fd, void *mmsg, unsigned int vlen, unsigned int flags)
{ return fn_sock_begin(HOOK_SENDMMSG, GPUIO_CALL_SENDMMSG, fd, (__u64)mmsg, vlen, flags); }
SEC("?kretprobe/__sys_sendmmsg")
int BPF_KRETPROBE(vfs_sock_sendmmsg_krp, int ret)
{ return FN_END(HOOK_SENDMMSG, ret); }

#endif
