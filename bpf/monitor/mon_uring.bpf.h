/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * mon_uring.bpf.h — io_uring's file reads and writes in the monitor: they
 * pass no read/write syscall. A read or write request is kept at its
 * submission (the submitter's cgroup and process), and counted at its
 * completion on its file's device (the file is attached after submission)
 * with its latency. Loaded only where the kernel has the tracepoints
 * (user/monitor/monitor_bpf.c picks the variant by the kernel's BTF). Part
 * of mon_vfs.bpf.h, included once from it.
 */
#ifndef GPUIO_MON_URING_BPF_H
#define GPUIO_MON_URING_BPF_H

/* UAPI opcodes (stable) */
#define MON_URING_READV 1
#define MON_URING_WRITEV 2
#define MON_URING_READ_FIXED 4
#define MON_URING_WRITE_FIXED 5
#define MON_URING_READ 22
#define MON_URING_WRITE 23

struct mon_uring_req { __u64 ts, cgid, start_ns; __u32 tgid, dir; };

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);             /* struct io_kiocb * */
	__type(value, struct mon_uring_req);
} mon_uring_reqs SEC(".maps");

static __always_inline int mon_uring_submit(struct io_kiocb *req)
{
	__u64 key = (__u64)req;
	struct mon_uring_req r = {};
	__u8 op = BPF_CORE_READ(req, opcode);

	switch (op) {
	case MON_URING_READ: case MON_URING_READV: case MON_URING_READ_FIXED:
		r.dir = MON_READ;
		break;
	case MON_URING_WRITE: case MON_URING_WRITEV: case MON_URING_WRITE_FIXED:
		r.dir = MON_WRITE;
		break;
	default:
		return 0;
	}
	r.ts = lat_on ? bpf_ktime_get_ns() : 0;
	r.cgid = mon_cgroup_id();
	r.tgid = bpf_get_current_pid_tgid() >> 32;
	r.start_ns = BPF_CORE_READ(bpf_get_current_task_btf(), group_leader, start_time);
	bpf_map_update_elem(&mon_uring_reqs, &key, &r, BPF_ANY);
	return 0;
}

static __always_inline int mon_uring_complete(void *req, long res)
{
	__u64 key = (__u64)req;
	struct mon_uring_req *r = bpf_map_lookup_elem(&mon_uring_reqs, &key);
	struct file *f;
	struct inode *inode;
	umode_t mode;

	if (!r)
		return 0;
	f = BPF_CORE_READ((struct io_kiocb *)req, file);
	inode = f ? BPF_CORE_READ(f, f_inode) : NULL;
	mode = inode ? BPF_CORE_READ(inode, i_mode) & S_IFMT_ : 0;
	/* failed requests move nothing: not counted, as failed calls */
	if (res >= 0 && (mode == S_IFREG_ || mode == S_IFBLK_))
		count_straight_for(r->tgid, r->cgid, BPF_CORE_READ(inode, i_sb, s_dev), r->dir,
				   r->start_ns, (__u64)res, lat_on ? bpf_ktime_get_ns() - r->ts : 0);
	bpf_map_delete_elem(&mon_uring_reqs, &key);
	return 0;
}

SEC("?tp_btf/io_uring_submit_req")
int BPF_PROG(mon_uring_submit_btf, struct io_kiocb *req)
{ return mon_uring_submit(req); }
SEC("?tp_btf/io_uring_submit_sqe")
int BPF_PROG(mon_uring_submit_sqe_btf, struct io_kiocb *req)
{ return mon_uring_submit(req); }
/* 6.3+: (ctx, req, cqe) */
SEC("?tp_btf/io_uring_complete")
int BPF_PROG(mon_uring_complete_cqe_btf, void *ring, void *req, struct io_uring_cqe *cqe)
{ return mon_uring_complete(req, BPF_CORE_READ(cqe, res)); }
/* before: (ctx, req, user_data, res, cflags, extra1, extra2) */
SEC("?tp_btf/io_uring_complete")
int BPF_PROG(mon_uring_complete_args_btf, void *ring, void *req, __u64 user_data, int res)
{ return mon_uring_complete(req, res); }

SEC("?raw_tp/io_uring_submit_req")
int BPF_PROG(mon_uring_submit_raw, struct io_kiocb *req)
{ return mon_uring_submit(req); }
SEC("?raw_tp/io_uring_submit_sqe")
int BPF_PROG(mon_uring_submit_sqe_raw, struct io_kiocb *req)
{ return mon_uring_submit(req); }
SEC("?raw_tp/io_uring_complete")
int BPF_PROG(mon_uring_complete_cqe_raw, void *ring, void *req, struct io_uring_cqe *cqe)
{ return mon_uring_complete(req, BPF_CORE_READ(cqe, res)); }
SEC("?raw_tp/io_uring_complete")
int BPF_PROG(mon_uring_complete_args_raw, void *ring, void *req, __u64 user_data, int res)
{ return mon_uring_complete(req, res); }

#endif
