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
#define IORING_OP_SENDMSG_ 9
#define IORING_OP_RECVMSG_ 10
#define IORING_OP_ACCEPT_ 13
#define IORING_OP_CONNECT_ 16
#define IORING_OP_SEND_ 26
#define IORING_OP_RECV_ 27

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

/* A socket request: its call, and the bytes its buffer or msghdr holds. */
static __always_inline void uring_sock_submit(struct io_kiocb *req, __u8 op, struct uring_req *r)
{
	struct io_sr_msg *sr = (struct io_sr_msg *)req;   /* the command overlays the request */

	switch (op) {
	case IORING_OP_RECV_:    r->call = GPUIO_CALL_URING_RECV; break;
	case IORING_OP_SEND_:    r->call = GPUIO_CALL_URING_SEND; break;
	case IORING_OP_RECVMSG_: r->call = GPUIO_CALL_URING_RECVMSG; break;
	case IORING_OP_SENDMSG_: r->call = GPUIO_CALL_URING_SENDMSG; break;
	case IORING_OP_ACCEPT_:  r->call = GPUIO_CALL_URING_ACCEPT; return;
	default:                 r->call = GPUIO_CALL_URING_CONNECT; return;
	}
	r->offset = -1;
	if (!bpf_core_type_exists(struct io_sr_msg))
		return;
	if (op == IORING_OP_RECVMSG_ || op == IORING_OP_SENDMSG_)
		r->requested = msghdr_total((__u64)BPF_CORE_READ(sr, umsg));
	else
		r->requested = (__u32)BPF_CORE_READ(sr, len);
}

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
	case IORING_OP_RECV_: case IORING_OP_SEND_: case IORING_OP_RECVMSG_:
	case IORING_OP_SENDMSG_: case IORING_OP_ACCEPT_: case IORING_OP_CONNECT_:
		if (!sock_calls_traced())
			return 0;
		uring_sock_submit(req, op, &r);
		goto keep;
	default:
		return 0;
	}
	/* the read/write command overlays the request's first bytes */
	rw = (struct io_rw *)req;
	r.offset = BPF_CORE_READ(rw, kiocb.ki_pos);
	r.requested = BPF_CORE_READ(rw, len);
	if (op == IORING_OP_READV_ || op == IORING_OP_WRITEV_)
		r.requested = iov_total(BPF_CORE_READ(rw, addr), r.requested);
keep:
	/* the sqe's fd is kept in the request until the file is looked up */
	r.fd = bpf_core_field_exists(req->cqe.fd) ? BPF_CORE_READ(req, cqe.fd) : -1;
	r.ts = bpf_ktime_get_ns();
	r.pid = id >> 32;
	r.tid = (__u32)id;
	bpf_map_update_elem(&uring_reqs, &key, &r, BPF_ANY);
	return 0;
}

/*
 * A socket request's socket (an accept's: the one it returned, when the
 * completing task shares the submitter's files), if an IP or unix one, named
 * with its peer as the socket calls' are.
 */
static __always_inline bool uring_sock_file(struct uring_req *r, long res, struct file **f,
					    struct file_id *fid, __u64 now)
{
	struct file *nf;
	__u16 fam;

	if (r->call == GPUIO_CALL_URING_ACCEPT && res >= 0 && (nf = fd_to_file((int)res)) != NULL) {
		*f = nf;
		r->fd = (int)res;
	}
	if (!file_ident(*f, fid) || fid->ftype != GPUIO_FT_SOCK)
		return all_fds && fid->ino;
	fam = sock_family(*f, ACC_PROBE);
	if (!all_fds && fam != AF_INET_ && fam != AF_INET6_ && fam != AF_UNIX_)
		return false;
	emit_sock_peer(*f, fid->ino, fid->dev, (__u64)r->pid << 32 | r->tid, now);
	return true;
}

static __always_inline int on_uring_complete(void *req, long res)
{
	__u64 key = (__u64)req, now = bpf_ktime_get_ns();
	struct gpuio_vfs_event *e;
	struct file_id fid = {};
	struct uring_req *r;
	struct file *f;

	r = bpf_map_lookup_elem(&uring_reqs, &key);
	if (!r)
		return 0;
	/* the file is attached at issue time, after submit_req fired */
	f = BPF_CORE_READ((struct io_kiocb *)req, file);
	if (r->call >= GPUIO_CALL_URING_RECV && r->call <= GPUIO_CALL_URING_CONNECT) {
		if (!uring_sock_file(r, res, &f, &fid, now))
			goto out;
	} else if (!file_ident(f, &fid) || !ftype_wanted(fid.ftype)) {
		goto out;
	}
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
