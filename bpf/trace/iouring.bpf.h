/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * iouring.bpf.h — file reads and writes submitted through io_uring. They
 * never pass through read/write syscalls nor vfs_read/vfs_write (io_uring
 * calls ->read_iter itself), so they are taken from io_uring's own
 * tracepoints in every VFS mode: the request is decoded at submission (in
 * the submitter's context), its file named and the record emitted at
 * completion.
 */
#ifndef GPUIO_IOURING_BPF_H
#define GPUIO_IOURING_BPF_H
#include "trace/vfs.bpf.h"

/* UAPI opcodes (stable) */
#define IORING_OP_READV_ 1
#define IORING_OP_WRITEV_ 2
#define IORING_OP_READ_FIXED_ 4
#define IORING_OP_WRITE_FIXED_ 5
#define IORING_OP_READ_ 22
#define IORING_OP_WRITE_ 23

struct uring_req {
	__u64 ts;
	__u64 requested;
	__s64 offset;
	__u32 pid, tid;
	__s32 fd;
	__u16 call;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);          /* struct io_kiocb * */
	__type(value, struct uring_req);
} uring_reqs SEC(".maps");

static __always_inline int on_uring_submit(struct io_kiocb *req)
{
	__u64 id = bpf_get_current_pid_tgid(), key = (__u64)req;
	struct uring_req r = {};
	struct io_rw *rw;
	__u8 op;

	if (!tgid_traced(id >> 32))
		return 0;
	op = BPF_CORE_READ(req, opcode);
	switch (op) {
	case IORING_OP_READ_: case IORING_OP_READV_: case IORING_OP_READ_FIXED_:
		r.call = GPUIO_CALL_URING_READ; break;
	case IORING_OP_WRITE_: case IORING_OP_WRITEV_: case IORING_OP_WRITE_FIXED_:
		r.call = GPUIO_CALL_URING_WRITE; break;
	default:
		return 0;
	}
	/* the read/write command overlays the request's first bytes */
	rw = (struct io_rw *)req;
	r.offset = BPF_CORE_READ(rw, kiocb.ki_pos);
	r.requested = BPF_CORE_READ(rw, len);
	if (op == IORING_OP_READV_ || op == IORING_OP_WRITEV_)
		r.requested = iov_total(BPF_CORE_READ(rw, addr), r.requested);
	/* the sqe's fd is kept in the request until the file is looked up */
	r.fd = bpf_core_field_exists(req->cqe.fd) ? BPF_CORE_READ(req, cqe.fd) : -1;
	r.ts = bpf_ktime_get_ns();
	r.pid = id >> 32;
	r.tid = (__u32)id;
	bpf_map_update_elem(&uring_reqs, &key, &r, BPF_ANY);
	return 0;
}

static __always_inline int on_uring_complete(void *req, long res)
{
	__u64 key = (__u64)req, now = bpf_ktime_get_ns();
	struct gpuio_vfs_event *e;
	struct file_id fid = {};
	struct uring_req *r;

	r = bpf_map_lookup_elem(&uring_reqs, &key);
	if (!r)
		return 0;
	/* the file is attached at issue time, after submit_req fired */
	if (!file_ident(BPF_CORE_READ((struct io_kiocb *)req, file), &fid) ||
	    !ftype_wanted(fid.ftype))
		goto out;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		stat_inc(GPUIO_STAT_RB_DROP_VFS);
		goto out;
	}
	fill_hdr(&e->hdr, GPUIO_REC_VFS, sizeof(*e), r->pid, r->tid, r->ts);
	e->dur_ns = now - r->ts;
	e->ret = res;
	e->requested = r->requested;
	e->offset = r->offset;
	e->offset2 = -1;
	e->ino = fid.ino;
	e->ino2 = 0;
	e->dev = fid.dev;
	e->dev2 = 0;
	e->fd = r->fd;
	e->fd2 = -1;
	e->seq = 0;
	e->cache_miss_pages = 0;
	e->flags = 0;
	e->call = r->call;
	e->ftype = fid.ftype;
	e->ftype2 = 0;
	bpf_ringbuf_submit(e, rb_wakeup_flag());
out:
	bpf_map_delete_elem(&uring_reqs, &key);
	return 0;
}

SEC("?tp_btf/io_uring_submit_req")
int BPF_PROG(uring_submit_btf, struct io_kiocb *req)
{ return on_uring_submit(req); }

/* before 6.3 the same tracepoint was io_uring_submit_sqe(req, force_nonblock) */
SEC("?tp_btf/io_uring_submit_sqe")
int BPF_PROG(uring_submit_sqe_btf, struct io_kiocb *req)
{ return on_uring_submit(req); }

/* 6.3+: (ctx, req, cqe) */
SEC("?tp_btf/io_uring_complete")
int BPF_PROG(uring_complete_cqe_btf, void *ring, void *req, struct io_uring_cqe *cqe)
{ return on_uring_complete(req, BPF_CORE_READ(cqe, res)); }

/* 5.19 – 6.2: (ctx, req, user_data, res, cflags, extra1, extra2) */
SEC("?tp_btf/io_uring_complete")
int BPF_PROG(uring_complete_args_btf, void *ring, void *req, __u64 user_data, int res)
{ return on_uring_complete(req, res); }

#endif
