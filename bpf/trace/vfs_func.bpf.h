/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * vfs_func.bpf.h — VFS tracing at the function layer, for stock kernels:
 * fentry/fexit (a few ns per call) or kprobe/kretprobe on vfs_read,
 * vfs_write, vfs_readv, vfs_writev, vfs_iter_read/write, vfs_fsync_range,
 * do_sys_openat2 and filp_close. These see file I/O that no read/write
 * syscall carries (kernel readers, splice internals). Both families share
 * the decoders below; only the hook macros differ. The file is known here,
 * the fd is not (events carry fd -1, except opens, whose result is the fd).
 */
#ifndef GPUIO_VFS_FUNC_BPF_H
#define GPUIO_VFS_FUNC_BPF_H
#include "trace/vfs.bpf.h"

enum {
	HOOK_READ = 1, HOOK_WRITE, HOOK_READV, HOOK_WRITEV, HOOK_ITER_READ,
	HOOK_ITER_WRITE, HOOK_FSYNC, HOOK_OPEN, HOOK_CLOSE,
};

static __always_inline __s64 kpos(loff_t *pos)
{
	loff_t p = -1;

	if (pos)
		bpf_probe_read_kernel(&p, sizeof(p), pos);
	return p;
}

static __always_inline int fn_begin(__u8 hook, __u16 call, struct file *file,
				    __u64 requested, __s64 offset, __u32 flags, const int acc)
{
	struct vfs_args v = {
		.call = call, .hook = hook, .file = file, .fd = -1, .fd2 = -1,
		.offset = offset, .offset2 = -1, .requested = requested, .flags = flags,
	};
	struct call_state *cs = current_traced();

	if (cs)
		vfs_begin(cs, &v, acc);
	return 0;
}

static __always_inline int fn_open_begin(struct open_how *how)
{
	struct vfs_args v = {
		.call = GPUIO_CALL_OPENAT, .hook = HOOK_OPEN, .fd = -1, .fd2 = -1,
		.offset = -1, .offset2 = -1,
		.flags = (__u32)BPF_CORE_READ(how, flags),
	};
	struct call_state *cs = current_traced();

	if (cs)
		vfs_begin(cs, &v, ACC_PROBE);
	return 0;
}

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

#endif
