/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * mon_aio.bpf.h — Linux native AIO in the monitor: io_submit's read and
 * write iocbs kept (keyed by the iocb's address, which io_getevents hands
 * back), each counted when io_getevents reaps it: its result's bytes on its
 * file's device, for the submitter's cgroup and process, its latency from
 * the io_submit. Part of mon_vfs.bpf.h, included once from it.
 */
#ifndef GPUIO_MON_AIO_BPF_H
#define GPUIO_MON_AIO_BPF_H

#define MON_IOCB_PREAD   0
#define MON_IOCB_PWRITE  1
#define MON_IOCB_PREADV  7
#define MON_IOCB_PWRITEV 8
#define MON_AIO_MAX 1024        /* iocbs or events followed per call */

struct mon_aio_key { __u64 obj; __u32 tgid; __u32 pad; };
struct mon_aio_req { __u64 ts, cgid, start_ns; __u32 dev; __u32 dir; };

/* LRU: iocbs a program never reaps (io_destroy) must not fill it for good */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct mon_aio_key);
	__type(value, struct mon_aio_req);
} mon_aio_reqs SEC(".maps");

/* the user's struct iocb (x86_64), the fields read here */
struct mon_uiocb {
	__u64 data;
	__u32 key, rw_flags;
	__u16 opcode;
	__s16 reqprio;
	__u32 fildes;
};

struct mon_uevent { __u64 data, obj; __s64 res, res2; };

struct mon_aio_walk { __u64 uptr, ts, cgid, start_ns; __u32 tgid, n; };

/* An AIO syscall begins: kind 1 io_submit (uptr its iocb pointers), 2 a reap (its events). */
static __always_inline void mon_aio_begin(int kind, __u64 uptr, const bool fast)
{
	struct mon_task *t = task_state(true, fast);

	if (!t)
		return;
	if (!t->init) {
		t->start_ns = BPF_CORE_READ(bpf_get_current_task_btf(), group_leader, start_time);
		t->init = 1;
	}
	t->aio = (__u8)kind;
	t->ino = uptr;
	t->two = 0;
	t->pending = 1;
	t->ts = lat_on ? bpf_ktime_get_ns() : 0;
}

static long mon_aio_submit_step(__u32 i, void *arg)
{
	struct mon_aio_walk *w = arg;
	struct mon_aio_key k = { .tgid = w->tgid };
	struct mon_aio_req r = { .ts = w->ts, .cgid = w->cgid, .start_ns = w->start_ns };
	struct mon_uiocb cb;
	struct mon_fid id;

	if (i >= w->n)
		return 1;
	if (bpf_probe_read_user(&k.obj, sizeof(k.obj), (void *)(w->uptr + (__u64)i * 8)) || !k.obj ||
	    bpf_probe_read_user(&cb, sizeof(cb), (void *)k.obj))
		return 0;
	if (cb.opcode == MON_IOCB_PREAD || cb.opcode == MON_IOCB_PREADV)
		r.dir = MON_READ;
	else if (cb.opcode == MON_IOCB_PWRITE || cb.opcode == MON_IOCB_PWRITEV)
		r.dir = MON_WRITE;
	else
		return 0;
	fd_ident((int)cb.fildes, &id, false);
	if (!id.ok)
		return 0;
	r.dev = id.dev;
	bpf_map_update_elem(&mon_aio_reqs, &k, &r, BPF_ANY);
	return 0;
}

static long mon_aio_reap_step(__u32 i, void *arg)
{
	struct mon_aio_walk *w = arg;
	struct mon_aio_key k = { .tgid = w->tgid };
	struct mon_uevent ev;
	struct mon_aio_req *r;

	if (i >= w->n)
		return 1;
	if (bpf_probe_read_user(&ev, sizeof(ev), (void *)(w->uptr + (__u64)i * sizeof(ev))))
		return 0;
	k.obj = ev.obj;
	r = bpf_map_lookup_elem(&mon_aio_reqs, &k);
	if (!r)
		return 0;
	/* failed requests move nothing: not counted, as failed calls */
	if (ev.res >= 0)
		count_straight(r->cgid, r->dev, r->dir, r->start_ns, (__u64)ev.res, w->ts - r->ts);
	bpf_map_delete_elem(&mon_aio_reqs, &k);
	return 0;
}

/*
 * The end of an AIO syscall that returned n (iocbs taken, events reaped).
 * Global: checked once, not inside the syscall exit of every process.
 */
__noinline int mon_aio_end(__u32 kind, __u64 uptr, __s64 n, __u64 start_ns, __u64 ts)
{
	struct mon_aio_walk w = {
		.uptr = uptr, .start_ns = start_ns, .tgid = bpf_get_current_pid_tgid() >> 32,
	};

	if (n <= 0)
		return 0;
	w.n = n > MON_AIO_MAX ? MON_AIO_MAX : (__u32)n;
	if (kind == 1) {
		w.ts = ts;
		w.cgid = mon_cgroup_id();
		bpf_loop(MON_AIO_MAX, mon_aio_submit_step, &w, 0);
	} else {
		w.ts = lat_on ? bpf_ktime_get_ns() : 0;
		bpf_loop(MON_AIO_MAX, mon_aio_reap_step, &w, 0);
	}
	return 0;
}

#endif
