// SPDX-License-Identifier: MIT
/*
 * events.c — what the writers show for processes, threads, VFS calls, block
 * requests and disk counters: names, slices and their args.
 */
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "model/calls.h"
#include "timeline/timeline.h"
#include "lib/job_identity.h"
#include "lib/json_writer.h"
#include "timeline/timeline_priv.h"
#include "model/proc_names.h"
#include "lib/units.h"


/* What calls.c says about each call, looked up once per export. */
enum { CF_OPEN = 1, CF_ASYNC = 2, CF_MOVES = 4, CF_TWO = 8, CF_READ = 16 };

/* ---- names ---- */

/* The session's name of a thread the timeline shows (NULL: none). */
static const struct model_thread *named_thread(const struct tl_model *x, uint32_t pid,
					       uint32_t tid)
{
	const struct model_thread *t = model_session__thread(x->s, pid, tid);

	return t && t->has_comm ? t : NULL;
}

/* comm of a process: its best PROC record, else its main thread, else any thread. */
static const char *proc_comm(struct tl_model *x, const struct tl_proc *p, char *buf,
			     size_t len)
{
	const struct model_proc *sp = model_session__proc(x->s, p->pid);
	const struct model_thread *t;

	if (sp && proc_names__has_comm(sp->comm)) {
		snprintf(buf, len, "%.16s", sp->comm);
		return buf;
	}
	if (kmap__get(&x->thread_map, p->pid, p->pid) && (t = named_thread(x, p->pid, p->pid))) {
		snprintf(buf, len, "%.16s", t->comm);
		return buf;
	}
	for (size_t i = 0; i < x->nthreads; i++) {
		if (x->threads[i].pid == p->pid &&
		    (t = named_thread(x, p->pid, x->threads[i].tid)) != NULL) {
			snprintf(buf, len, "%.16s", t->comm);
			return buf;
		}
	}
	snprintf(buf, len, "pid %u", p->pid);
	return buf;
}

const char *tl_model__proc_labels(const struct tl_model *m, const struct tl_proc *p, char *buf,
				   size_t len)
{
	const struct model_proc *sp = model_session__proc(m->s, p->pid);
	struct job_identity job;
	size_t n;

	if (!sp || !sp->cgroup || len < 2)
		return NULL;
	n = (size_t)snprintf(buf, len, "cgroup=%s", sp->cgroup);
	job_identity__parse(sp->cgroup, &job);
	for (int i = 0; i < JOB_IDENTITY_NFIELDS && n < len; i++) {
		const char *v = job_identity__field(&job, i);

		if (v[0])
			n += (size_t)snprintf(buf + n, len - n, ", %s=%s", job_identity_keys[i], v);
	}
	return buf;
}

size_t tl_model__proc_name(struct tl_model *x, const struct tl_proc *p, char *name,
			    size_t len)
{
	const struct model_proc *sp = model_session__proc(x->s, p->pid);
	char comm[32];
	size_t n, plen = strlen(x->map.prefix);

	proc_comm(x, p, comm, sizeof(comm));
	n = (size_t)snprintf(name, len, "%s%s", x->map.prefix, comm);
	if (n >= len)
		n = len - 1;
	if (sp && sp->args_len && n + 2 < len) {
		n += (size_t)snprintf(name + n, len - n, ": ");
		for (uint32_t k = 0; k < sp->args_len && n < len - 1; k++)
			name[n++] = sp->args[k] ? sp->args[k] : ' ';
		name[n] = 0;
	}
	return json_utf8_cut(name, n, TL_PROC_NAME_MAX + plen);
}

const char *tl_model__thread_name(struct tl_model *x, const struct tl_proc *p,
				   const struct tl_thread *t, char buf[32], size_t *len)
{
	const struct model_thread *st = named_thread(x, t->pid, t->tid);

	if (st) {
		*len = strnlen(st->comm, 16);
		return st->comm;
	}
	proc_comm(x, p, buf, 32);
	*len = strnlen(buf, 16);
	return buf;
}

void tl_model__disk_name(const struct tl_model *m, const struct tl_disk *d, char *buf,
			  size_t len)
{
	const char *name = model_session__devname(m->s, d->dev);

	if (name && name[0])
		snprintf(buf, len, "%.32s", name);
	else
		snprintf(buf, len, "%u:%u", d->dev >> 20, d->dev & 0xfffff);
}

/* ---- events ---- */

/*
 * The path of (dev, ino); names non-files; counts what it cannot name in
 * *unresolved (VFS calls and block requests apart: requests also carry
 * file-system metadata and mmap'ed files that no call named).
 */
static void path_arg(struct tl_model *x, struct tl_args *a, const char *key, uint32_t dev,
		     uint64_t ino, unsigned ftype, __u64 *unresolved)
{
	uint32_t plen;
	const char *path = model_session__path(x->s, dev, ino, &plen);
	const char *kind = NULL;
	char buf[96];

	if (path) {
		/* pass 1 is over: the path table does not change while writing */
		tl_arg_str(a, key, path, plen, true);
		a->a[a->n - 1].stable = !x->online;
		return;
	}
	if (ftype == GPUIO_FT_FIFO)
		kind = "pipe";
	else if (ftype == GPUIO_FT_SOCK)
		kind = "socket";
	else if (ftype == 0)
		kind = "anon";
	if (kind) {
		snprintf(buf, sizeof(buf), "%s:[%llu]", kind, (unsigned long long)ino);
	} else {
		snprintf(buf, sizeof(buf), "?dev=%u:%u,ino=%llu", dev >> 20, dev & 0xfffff,
			 (unsigned long long)ino);
		(*unresolved)++;
	}
	tl_arg_copy(a, key, buf, true);
}

static void ftype_arg(struct tl_args *a, const char *k, unsigned ftype)
{
	const char *name;
	char buf[16];

	if (ftype == GPUIO_FT_REG)
		return;
	name = gpuio_ftype__name(ftype);
	if (!name) {
		snprintf(buf, sizeof(buf), "type%u", ftype);
		tl_arg_copy(a, k, buf, true);
		return;
	}
	tl_arg_str(a, k, name, strlen(name), true);
	a->a[a->n - 1].stable = true;
}

static uint8_t call_flags(unsigned call)
{
	static uint8_t table[GPUIO_CALL_MAX];
	static bool done;

	if (call >= GPUIO_CALL_MAX)
		return (gpuio_call__is_open(call) ? CF_OPEN : 0) |
		       (gpuio_call__is_async(call) ? CF_ASYNC : 0) |
		       (gpuio_call__moves_bytes(call) ? CF_MOVES : 0) |
		       (gpuio_call__two_files(call) ? CF_TWO : 0) |
		       (gpuio_call__is_read(call) ? CF_READ : 0);
	if (!done) {
		for (unsigned c = 0; c < GPUIO_CALL_MAX; c++)
			table[c] = (gpuio_call__is_open(c) ? CF_OPEN : 0) |
				   (gpuio_call__is_async(c) ? CF_ASYNC : 0) |
				   (gpuio_call__moves_bytes(c) ? CF_MOVES : 0) |
				   (gpuio_call__two_files(c) ? CF_TWO : 0) |
				   (gpuio_call__is_read(c) ? CF_READ : 0);
		done = true;
	}
	return table[call];
}

/*
 * A socket call's own args: its peer (when a SOCK_PEER record named the
 * socket: older captures have none, and their slices stay as they were),
 * the transport, the latency, and what the socket calls add.
 */
static void sock_args(struct tl_model *x, const struct gpuio_vfs_event *e, struct tl_args *a)
{
	const struct model_peer *p = model_session__peer(x->s, e->dev, e->ino);
	char buf[160];

	if (!p && !gpuio_call__is_sock(e->call))
		return;
	if (p) {
		/* the session's table is final once pass 1 is over */
		tl_arg_str(a, "peer", p->name, strlen(p->name), true);
		a->a[a->n - 1].stable = !x->online;
		tl_arg_str(a, "proto", p->proto, strlen(p->proto), true);
		a->a[a->n - 1].stable = true;
	}
	if (gpuio_call__sock_dir(e->call, e->ftype) != GPUIO_SOCK_NONE)
		tl_arg_us(a, "latency_us", e->dur_ns > INT64_MAX ? INT64_MAX : (int64_t)e->dur_ns);
	if ((e->call == GPUIO_CALL_RECVMMSG || e->call == GPUIO_CALL_SENDMMSG) && e->offset2 >= 0)
		tl_arg_s64(a, "messages", e->offset2);
	if (gpuio_call__is_sock(e->call) && e->flags)
		tl_arg_copy(a, "msg_flags", gpuio_msg_flags__str(e->flags, buf, sizeof(buf)), true);
}

/* A call's slice: its lane (an io_uring lane for async calls), name, time, arrows. */
static void vfs_slice(struct tl_model *x, const struct gpuio_vfs_event *e, bool async,
		      struct tl_vfs *o)
{
	const char *name = gpuio_call__name(e->call);
	uint32_t tid = e->hdr.tid;
	uint64_t *fv = NULL;

	/* io_uring lanes were laid out in pass 1, in VFS record order */
	if (async && !x->online) {
		while (x->async_next < x->nasyncs &&
		       x->asyncs[x->async_next].ordinal < x->vfs_ordinal)
			x->async_next++;
		if (x->async_next < x->nasyncs &&
		    x->asyncs[x->async_next].ordinal == x->vfs_ordinal)
			tid = x->asyncs[x->async_next].lane_tid;
	}
	o->nflows = 0;
	o->ftid = e->hdr.tid;
	o->fseq = e->seq;
	if (e->seq && !x->online) {
		fv = tl_flow_get(x, e->hdr.tid, e->seq);
		/* one source per bind_id: a repeated (tid, seq) gets no second arrow */
		if (fv && !(*fv & FLOW_VFS_SEEN)) {
			*fv |= FLOW_VFS_SEEN;
			o->nflows = FLOW_COUNT(*fv);
		}
	}
	if (name) {
		o->name = name;
	} else {
		snprintf(o->namebuf, sizeof(o->namebuf), "call_%u", (unsigned)e->call);
		o->name = o->namebuf;
	}
	o->ts = e->hdr.ts;
	o->dur = e->dur_ns > INT64_MAX ? INT64_MAX : e->dur_ns;
	o->pid = tl_pid(x, e->hdr.pid);
	/* lane tids are already unique trace-wide (uring_base) */
	o->tid = tid == e->hdr.tid ? tl_pid(x, tid) : tid;
	o->async = async;
}

/* The flags a call was made with, named as its kind reads them. */
static void flags_arg(const struct gpuio_vfs_event *e, bool is_open, struct tl_args *a)
{
	unsigned call = e->call;
	char buf[160];

	if (is_open)
		tl_arg_copy(a, "flags", gpuio_open_flags__str(e->flags, buf, sizeof(buf)), true);
	else if (call == GPUIO_CALL_SYNC_FILE_RANGE)
		tl_arg_copy(a, "flags", gpuio_sfr_flags__str(e->flags, buf, sizeof(buf)), true);
	else if (call == GPUIO_CALL_FALLOCATE && e->flags)
		tl_arg_copy(a, "mode", gpuio_fallocate_mode__str(e->flags, buf, sizeof(buf)), true);
	else if (call == GPUIO_CALL_SPLICE && e->flags)
		tl_arg_copy(a, "flags", gpuio_splice_flags__str(e->flags, buf, sizeof(buf)), true);
	else if (call == GPUIO_CALL_FADVISE || call == GPUIO_CALL_MADVISE)
		tl_arg_copy(a, "advice", gpuio_advice__str(call, e->flags, buf, sizeof(buf)), true);
}

/* io_submit: the iocbs given and taken, the bytes the traced ones ask; io_getevents: events. */
static void aio_syscall_args(const struct gpuio_vfs_event *e, struct tl_args *a)
{
	if (e->call == GPUIO_CALL_IO_SUBMIT) {
		tl_arg_u64(a, "iocbs", e->flags);
		if (e->ret >= 0)
			tl_arg_s64(a, "submitted", e->ret);
		tl_arg_u64(a, "requested", e->requested);
	} else if (e->ret >= 0) {
		tl_arg_s64(a, "events", e->ret);
	}
}

/* A call's args after its path: fd, bytes, offset, error, flags, the second file. */
static void call_args(struct tl_model *x, const struct gpuio_vfs_event *e, uint8_t cf,
		      struct tl_args *a)
{
	unsigned call = e->call;
	bool is_open = cf & CF_OPEN, failed = e->ret < 0, async = cf & CF_ASYNC;
	char buf[160];

	if (is_open) {
		if (!failed)
			tl_arg_s64(a, "fd", e->ret);
	} else if (e->fd >= 0) {
		tl_arg_s64(a, "fd", e->fd);
	}
	if (cf & CF_MOVES) {
		if (!failed)
			tl_arg_s64(a, "bytes", e->ret);
		tl_arg_u64(a, "requested", e->requested);
	}
	if (call == GPUIO_CALL_FTRUNCATE || call == GPUIO_CALL_FALLOCATE ||
	    call == GPUIO_CALL_SYNC_FILE_RANGE || gpuio_call__is_hint(call))
		tl_arg_u64(a, "length", e->requested);
	if (e->offset >= 0)
		tl_arg_s64(a, "offset", e->offset);
	if (failed) {
		uint64_t en = 0 - (uint64_t)e->ret;

		tl_arg_u64(a, "errno", en);
		tl_arg_copy(a, "error", en <= 4095 ? gpuio_errno__name((int)en, buf, sizeof(buf)) : "E?",
			 true);
	}
	if ((cf & CF_READ) && !async && x->cache_known)
		tl_arg_u64(a, "cache_miss_pages", e->cache_miss_pages);
	flags_arg(e, is_open, a);
	if (gpuio_call__is_aio_syscall(call))
		aio_syscall_args(e, a);
	if (!(((is_open && failed) || gpuio_call__is_aio_syscall(call)) && !e->ino && !e->dev))
		ftype_arg(a, "ftype", e->ftype);
	if (e->ftype == GPUIO_FT_SOCK)
		sock_args(x, e, a);
	if (cf & CF_TWO) {
		path_arg(x, a, "path2", e->dev2, e->ino2, e->ftype2, &x->st.unresolved_paths);
		if (e->fd2 >= 0)
			tl_arg_s64(a, "fd2", e->fd2);
		if (e->offset2 >= 0)
			tl_arg_s64(a, "offset2", e->offset2);
		ftype_arg(a, "ftype2", e->ftype2);
	}
	if (async)
		tl_arg_u64(a, "tid", tl_pid(x, e->hdr.tid));
}

void tl_model__vfs(struct tl_model *x, const struct gpuio_vfs_event *e, struct tl_vfs *o,
		    struct tl_args *a)
{
	uint8_t cf = call_flags(e->call);
	bool is_open = cf & CF_OPEN, failed = e->ret < 0;

	tl_args_reset(a);
	vfs_slice(x, e, cf & CF_ASYNC, o);
	/* a failed open has no file, io_getevents none of its own: nothing to name */
	if (!((is_open && failed) || gpuio_call__is_aio_syscall(e->call)) || e->ino || e->dev)
		path_arg(x, a, "path", e->dev, e->ino, e->ftype, &x->st.unresolved_paths);
	if (e->call == GPUIO_CALL_PAGE_FAULT) {    /* not a call: args of its own */
		tl_model__fault_args(e, a);
		ftype_arg(a, "ftype", e->ftype);
	} else {
		call_args(x, e, cf, a);
	}
	tl_stacks__call_args(x, e, a);  /* where in the program (--stacks) */
	x->st.vfs++;
	x->vfs_ordinal++;
}

void tl_model__block(struct tl_model *x, const struct tl_blk *b, size_t disk,
		      const char *dname, struct tl_block *o, struct tl_args *a)
{
	uint64_t *fv = b->seq && !x->online ? tl_flow_get(x, b->tid, b->seq) : NULL;
	char buf[96];

	tl_args_reset(a);
	o->name = gpuio_blk_op__name(b->op);
	o->ts = b->ts;
	o->end = tl_blk_end(b);
	o->pid = tl_disk_pid(x, disk);
	o->tid = tl_lane_tid(x, disk, b->lane);
	o->flow_k = 0;
	o->ftid = b->tid;
	o->fseq = b->seq;
	if (fv && (*fv & FLOW_VFS_SEEN)) {
		*fv += FLOW_BOUND_ONE;
		o->flow_k = (uint32_t)(*fv >> 32);
		x->st.flows++;
	} else if (b->seq && !x->online) {
		x->st.dangling_flows++;
	}
	tl_arg_copy(a, "dev", dname, true);
	tl_arg_str(a, "op", o->name, strlen(o->name), true);
	a->a[a->n - 1].stable = true;
	tl_arg_copy(a, "flags", gpuio_rq_flags__str(b->flags, buf, sizeof(buf)), true);
	tl_arg_u64(a, "sector", b->sector);
	tl_arg_u64(a, "bytes", b->bytes);
	tl_arg_us(a, "queue_us", (int64_t)(b->issue - b->ts));
	tl_arg_us(a, "service_us", (int64_t)(b->complete - b->issue));
	if (b->pid)
		tl_arg_u64(a, "pid", tl_pid(x, b->pid));
	if (b->tid)
		tl_arg_u64(a, "tid", tl_pid(x, b->tid));
	if (b->ino)
		path_arg(x, a, "path", b->file_dev, b->ino, GPUIO_FT_REG,
			 &x->st.unresolved_block_paths);
	tl_arg_bool(a, "writeback", b->attr & GPUIO_BA_WRITEBACK);
	/* the device's own pages: filesystem metadata, journal, raw I/O */
	if (b->attr & GPUIO_BA_BDEV_PAGE)
		tl_arg_bool(a, "metadata", true);
	if (b->error)
		tl_arg_s64(a, "error", b->error);
	x->st.block++;
}

bool tl_model__next_counter(struct tl_model *x, const struct tl_disk *dev,
			     struct tl_counter_it *it, uint64_t *t, double *rd, double *wr)
{
	double scale = NS_PER_SEC_F / (double)x->bucket_ns / 1048576.0;

	if (it->done)
		return false;
	while (it->k < x->nbuckets) {
		size_t k = it->k++;
		double r = dev->bucket_bytes[k * 2] * scale, w = dev->bucket_bytes[k * 2 + 1] * scale;
		char rs[48], ws[48];

		/* compare what would be printed: no change, no event */
		snprintf(rs, sizeof(rs), "%.3f", r);
		snprintf(ws, sizeof(ws), "%.3f", w);
		r = strtod(rs, NULL);
		w = strtod(ws, NULL);
		if (k && r == it->last_r && w == it->last_w)
			continue;
		it->last_r = r;
		it->last_w = w;
		*t = x->t0 + k * x->bucket_ns;
		*rd = r;
		*wr = w;
		return true;
	}
	it->done = true;
	*t = x->t0 + x->nbuckets * x->bucket_ns;
	*rd = *wr = 0;
	return true;
}

/* ---- scheduler events ---- */

/* A traced thread's name as its track shows it; else the comm the record carries. */
static const char *sched_comm(struct tl_model *m, uint32_t pid, uint32_t tid, const char *comm,
			      bool traced, char buf[32])
{
	uint64_t *v, *pv;
	const char *n;
	size_t len;

	if (!tid)
		return "swapper";
	if (traced && (v = kmap__get(&m->thread_map, pid, tid)) &&
	    (pv = kmap__get(&m->proc_map, pid, 0))) {
		n = tl_model__thread_name(m, &m->procs[*pv], &m->threads[*v], buf, &len);
		if (len > 31)
			len = 31;
		if (n != buf)
			memcpy(buf, n, len);
		buf[len] = 0;
		return buf;
	}
	return comm;
}

void tl_model__sched(struct tl_model *m, const struct sched_tab *t, const struct sched_ent *e,
		     const struct sched_gap *g, const char *comm, struct tl_sched *o)
{
	bool sw = e->kind == GPUIO_SCHED_SWITCH;
	uint32_t pid = sched_pid(t, e), tid = sched_tid(t, e);
	uint32_t opid = sched_opid(t, e), otid = sched_otid(t, e);

	memset(o, 0, offsetof(struct tl_sched, buf));
	o->ts = tl_ts(m, e->ts);
	o->cpu = e->cpu;
	o->kind = e->kind;
	o->tid = tid ? tl_pid(m, tid) : 0;
	o->otid = otid ? tl_pid(m, otid) : 0;
	o->prio = e->prio;
	o->target_cpu = e->target_cpu;
	o->prev_state = sw ? sched_ftrace_prev_state(e) : 0;
	o->prev_traced = sw && (e->flags & GPUIO_SF_PREV_TRACED);
	o->next_traced = sw && (e->flags & GPUIO_SF_NEXT_TRACED);
	o->comm = sched_comm(m, pid, tid, comm, !sw || o->prev_traced, o->buf[0]);
	o->ocomm = sched_comm(m, opid, otid, comm,
			      sw ? o->next_traced : (e->flags & GPUIO_SF_WAKER_TRACED), o->buf[1]);
	if (g && g->bridge_at) {
		o->bridge_at = tl_ts(m, g->bridge_at);
		o->bridge_from = g->bridge_from ? tl_pid(m, g->bridge_from) : 0;
		o->bridge_comm = sched_comm(m, g->bridge_from_pid, g->bridge_from, "", true, o->buf[2]);
	}
	if (g && g->left_at) {
		o->left_at = tl_ts(m, g->left_at);
		o->left_cpu = g->left_cpu;
	}
}
