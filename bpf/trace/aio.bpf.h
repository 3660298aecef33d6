/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * aio.bpf.h — Linux native AIO (io_submit / io_getevents). Like io_uring's,
 * its reads and writes pass no read/write syscall nor vfs_read (aio_read
 * calls ->read_iter itself), so every VFS mode decodes the AIO syscalls
 * themselves: the syscall modes in their sys_enter/sys_exit, fentry and
 * kprobe on the syscalls' own functions (vfs_func.bpf.h).
 *
 * io_submit is a call of its thread (the block requests it issued, O_DIRECT,
 * flow from it); at its return each iocb it accepted is read from the
 * program's memory and kept, keyed by the iocb's address, which the kernel
 * hands back in io_event.obj. io_getevents' events end them: a request's
 * record (on the process's async lanes) runs from its io_submit to the
 * io_getevents that reaped it, with the event's result. The kernel's
 * completion itself has no tracepoint; a program that reaps late shows
 * requests longer than the disk took (docs/limitations.md).
 */
#ifndef GPUIO_AIO_BPF_H
#define GPUIO_AIO_BPF_H
#include "trace/vfs.bpf.h"

/* UAPI linux/aio_abi.h (stable) */
#define IOCB_CMD_PREAD_   0
#define IOCB_CMD_PWRITE_  1
#define IOCB_CMD_FSYNC_   2
#define IOCB_CMD_FDSYNC_  3
#define IOCB_CMD_POLL_    5
#define IOCB_CMD_PREADV_  7
#define IOCB_CMD_PWRITEV_ 8

/* the user's struct iocb and struct io_event, as x86_64 lays them out */
struct aio_uiocb {
	__u64 data;
	__u32 key;
	__s32 rw_flags;
	__u16 opcode;
	__s16 reqprio;
	__u32 fildes;
	__u64 buf;
	__u64 nbytes;
	__s64 offset;
	__u64 reserved2;
	__u32 flags;
	__u32 resfd;
};

struct aio_uevent {
	__u64 data;
	__u64 obj;
	__s64 res;
	__s64 res2;
};

/* iocbs followed per io_submit, events per io_getevents; the rest counted */
#define AIO_MAX_BATCH 1024

struct aio_key {
	__u64 obj;          /* the iocb's address in the program */
	__u32 tgid;
	__u32 pad;
};

struct aio_req {
	__u64 ts;           /* its io_submit's entry */
	__u64 requested;
	__s64 offset;
	__u64 ino;
	__u32 dev;
	__u32 tid;          /* the submitter */
	__s32 fd;
	__u32 flags;        /* the iocb's RWF_* flags */
	__u16 call;
	__u8 ftype;
};

/* LRU: iocbs a program never reaps (io_destroy) must not fill it for good */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct aio_key);
	__type(value, struct aio_req);
} aio_reqs SEC(".maps");

static __always_inline __u16 aio_call_of(__u16 opcode)
{
	switch (opcode) {
	case IOCB_CMD_PREAD_: case IOCB_CMD_PREADV_:   return GPUIO_CALL_AIO_READ;
	case IOCB_CMD_PWRITE_: case IOCB_CMD_PWRITEV_: return GPUIO_CALL_AIO_WRITE;
	case IOCB_CMD_FSYNC_:  return GPUIO_CALL_AIO_FSYNC;
	case IOCB_CMD_FDSYNC_: return GPUIO_CALL_AIO_FDSYNC;
	case IOCB_CMD_POLL_:   return GPUIO_CALL_AIO_POLL;
	}
	return GPUIO_CALL_NONE;
}

/* The iocb at iocbpp[i], read from the program's memory; false: unreadable. */
static __always_inline bool aio_read_iocb(__u64 iocbpp, __u32 i, __u64 *uptr,
					  struct aio_uiocb *cb)
{
	if (bpf_probe_read_user(uptr, sizeof(*uptr), (void *)(iocbpp + (__u64)i * 8)) || !*uptr)
		return false;
	return !bpf_probe_read_user(cb, sizeof(*cb), (void *)*uptr);
}

/* The file behind an iocb when gpuio traces its kind (into *f, *id). */
static __always_inline bool aio_iocb_file(const struct aio_uiocb *cb, struct file **f,
					  struct file_id *id)
{
	*f = fd_to_file((int)cb->fildes);
	return file_ident(*f, id) && ftype_wanted(id->ftype);
}

/* An AIO syscall's begin: a call of its thread on file f (NULL: none). */
static __always_inline void aio_begin(struct call_state *cs, __u16 call, __u64 uptr, __u8 hook,
				      struct file *f, const struct file_id *id, int fd, __u32 flags)
{
	cs->hook = hook;
	cs->ts = bpf_ktime_get_ns();
	cs->seq++;
	cs->call = call;
	cs->fd = fd;
	cs->fd2 = -1;
	cs->requested = 0;
	cs->flags = flags;
	cs->mmsg = uptr;                /* the iocb pointers, or the events */
	cs->misses = 0;
	cs->file = (__u64)f;
	cs->file2 = 0;
	cs->ino = id->ino;
	cs->dev = id->dev;
	cs->ftype = id->ftype;
	cs->ino2 = 0;
	cs->dev2 = 0;
	cs->ftype2 = 0;
	cs->implicit_pos = 0;
	cs->implicit_pos2 = 0;
	cs->offset = -1;
	cs->offset2 = -1;
}

/*
 * io_submit(ctx, nr, iocbpp) begins: a call of the thread whose file (for
 * the block requests it issues) is its first iocb's. What it submitted is
 * read at its return, when the kernel says how many it took. Global:
 * checked once, not inside each syscall entry's decoder.
 */
__noinline int aio_submit_begin(struct call_state *cs, __u64 nr, __u64 iocbpp, __u32 hook)
{
	struct file_id id = {};
	struct aio_uiocb cb = {};
	struct file *f = NULL;
	__u64 uptr;

	if (!cs || (hook && cs->call != GPUIO_CALL_NONE))
		return 0;
	if (!nr || !aio_read_iocb(iocbpp, 0, &uptr, &cb) || !aio_iocb_file(&cb, &f, &id)) {
		f = NULL;
		id.ino = 0;
		id.dev = 0;
		id.ftype = 0;
	}
	/* the iocbs asked: the record's flags */
	aio_begin(cs, GPUIO_CALL_IO_SUBMIT, iocbpp, hook, f, &id, f ? (int)cb.fildes : -1, (__u32)nr);
	return 0;
}

/* io_getevents(ctx, min_nr, nr, events, timeout) and io_pgetevents begin. */
static __always_inline void aio_getevents_begin(struct call_state *cs, __u64 events, __u8 hook)
{
	struct file_id id = {};

	if (hook && cs->call != GPUIO_CALL_NONE)
		return;
	aio_begin(cs, GPUIO_CALL_IO_GETEVENTS, events, hook, NULL, &id, -1, 0);
}

struct aio_walk {
	__u64 uptr;         /* iocbpp or the events array */
	__u64 ts;
	__u64 bytes;        /* asked by the iocbs kept */
	__u32 tgid, tid;
	__u32 n;
	__u32 kept;
};

/* How many of a call's n iocbs or events are followed; the rest counted. */
static __always_inline __u32 aio_batch(__s64 n)
{
	if (n <= 0)
		return 0;
	if (n > AIO_MAX_BATCH) {
		stat_add(GPUIO_STAT_AIO_UNTRACKED, n - AIO_MAX_BATCH);
		n = AIO_MAX_BATCH;
	}
	return (__u32)n;
}

static long aio_submit_step(__u32 i, void *arg)
{
	struct aio_walk *w = arg;
	struct aio_req r = {};
	struct aio_key k = {};
	struct file_id id = {};
	struct aio_uiocb cb;
	struct file *f;

	if (i >= w->n)
		return 1;
	if (!aio_read_iocb(w->uptr, i, &k.obj, &cb))
		return 0;
	r.call = aio_call_of(cb.opcode);
	if (r.call == GPUIO_CALL_NONE || !aio_iocb_file(&cb, &f, &id))
		return 0;
	k.tgid = w->tgid;
	r.ts = w->ts;
	r.tid = w->tid;
	r.fd = (int)cb.fildes;
	r.flags = (__u32)cb.rw_flags;
	r.ino = id.ino;
	r.dev = id.dev;
	r.ftype = id.ftype;
	r.offset = -1;
	if (r.call == GPUIO_CALL_AIO_READ || r.call == GPUIO_CALL_AIO_WRITE) {
		r.offset = cb.offset;
		r.requested = cb.opcode == IOCB_CMD_PREADV_ || cb.opcode == IOCB_CMD_PWRITEV_ ?
			      iov_total(cb.buf, cb.nbytes) : cb.nbytes;
	}
	bpf_map_update_elem(&aio_reqs, &k, &r, BPF_ANY);
	w->bytes += r.requested;
	w->kept++;
	return 0;
}

/*
 * The n iocbs io_submit took (the first n of iocbpp), kept until reaped.
 * Returns the bytes they ask for << 16 | how many were kept. Global: checked
 * once, not inside every syscall exit that calls it.
 */
__noinline __u64 aio_submit_track(__u64 iocbpp, __s64 n, __u64 ts)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct aio_walk w = {
		.uptr = iocbpp, .ts = ts, .tgid = id >> 32, .tid = (__u32)id,
	};

	w.n = aio_batch(n);
	bpf_loop(AIO_MAX_BATCH, aio_submit_step, &w, 0);
	return w.bytes << 16 | w.kept;
}

static long aio_reap_step(__u32 i, void *arg)
{
	struct aio_walk *w = arg;
	struct gpuio_vfs_event *e;
	struct aio_key k = {};
	struct aio_uevent ev;
	struct aio_req *r;

	if (i >= w->n)
		return 1;
	if (bpf_probe_read_user(&ev, sizeof(ev), (void *)(w->uptr + (__u64)i * sizeof(ev))))
		return 0;
	k.obj = ev.obj;
	k.tgid = w->tgid;
	r = bpf_map_lookup_elem(&aio_reqs, &k);
	if (!r)
		return 0;                       /* submitted before the trace, or not a file's */
	w->kept++;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		stat_inc(GPUIO_STAT_RB_DROP_VFS);
		goto out;
	}
	fill_hdr(&e->hdr, GPUIO_REC_VFS, sizeof(*e), w->tgid, r->tid, r->ts);
	e->dur_ns = w->ts - r->ts;
	e->ret = ev.res;
	e->requested = r->requested;
	e->offset = r->offset;
	e->offset2 = -1;
	e->ino = r->ino;
	e->ino2 = 0;
	e->dev = r->dev;
	e->dev2 = 0;
	e->fd = r->fd;
	e->fd2 = -1;
	e->seq = 0;
	e->cache_miss_pages = 0;
	e->flags = r->flags;
	e->call = r->call;
	e->ftype = r->ftype;
	e->ftype2 = 0;
	bpf_ringbuf_submit(e, rb_wakeup_flag());
out:
	bpf_map_delete_elem(&aio_reqs, &k);
	return 0;
}

/* The n events io_getevents returned, each ending its request. Returns how many were ours. */
__noinline __u32 aio_reap(__u64 events, __s64 n, __u64 now)
{
	struct aio_walk w = { .uptr = events, .ts = now, .tgid = bpf_get_current_pid_tgid() >> 32 };

	w.n = aio_batch(n);
	bpf_loop(AIO_MAX_BATCH, aio_reap_step, &w, 0);
	return w.kept;
}

/*
 * vfs_end of io_submit / io_getevents: their requests kept or ended, and
 * the call's own record (straight to the ring: the thread's batch path
 * would double what the verifier checks in every syscall exit). Global:
 * checked once, beside vfs_end, not inside it. 1 when the call was
 * recorded: the caller takes its stack (--stacks), which kept here was a
 * fourth frame in a chain whose 512 bytes of stack 6.1 counts in 32s.
 */
__noinline int aio_call_end(struct call_state *cs, __u32 call, long ret, __u64 now)
{
	__u64 id_tgid = bpf_get_current_pid_tgid(), t;
	struct file_id id = {};

	if (!cs)
		return 0;
	if (call == GPUIO_CALL_IO_GETEVENTS) {
		if (!aio_reap(cs->mmsg, ret, now))
			return 0;
	} else {
		t = aio_submit_track(cs->mmsg, ret, cs->ts);
		cs->requested = t >> 16;
		/* a failed io_submit shows when its first iocb was a traced file's */
		if (!(t & 0xffff) && !(ret < 0 && cs->file))
			return 0;
	}
	vfs_end_name(cs, &id, id_tgid, now);
	vfs_emit_direct(cs, (__u16)call, ret, id_tgid, now);
	return 1;
}

#endif
