// SPDX-License-Identifier: MIT
/*
 * load.c — the timeline model as a tool of the session (session.h): what
 * pass 1 keeps of each record for the exporters — the processes and threads
 * that get tracks, block requests and the calls they name (flows), io_uring
 * intervals, the earliest timestamp. Names, paths and counts are the
 * session's. The same handlers serve the live stream (online: no block or
 * io_uring layout, that is the stream's).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "lib/log.h"
#include "model/calls.h"
#include "timeline/timeline.h"
#include "timeline/timeline_priv.h"

int tl_note_thread(struct tl_model *x, uint32_t pid, uint32_t tid, struct tl_thread **out)
{
	uint64_t *v;
	int rc;

	rc = kmap__upsert(&x->proc_map, pid, 0, &v);
	if (rc < 0)
		return rc;
	if (rc) {
		if (array_grow((void **)&x->procs, &x->cprocs, x->nprocs + 1, sizeof(*x->procs)))
			return -ENOMEM;
		memset(&x->procs[x->nprocs], 0, sizeof(x->procs[0]));
		x->procs[x->nprocs].pid = pid;
		*v = x->nprocs++;
	}
	rc = kmap__upsert(&x->thread_map, pid, tid, &v);
	if (rc < 0)
		return rc;
	if (rc) {
		if (array_grow((void **)&x->threads, &x->cthreads, x->nthreads + 1,
			     sizeof(*x->threads)))
			return -ENOMEM;
		memset(&x->threads[x->nthreads], 0, sizeof(x->threads[0]));
		x->threads[x->nthreads].pid = pid;
		x->threads[x->nthreads].tid = tid;
		*v = x->nthreads++;
	}
	if (out)
		*out = &x->threads[*v];
	return 0;
}

static struct tl_proc *proc_get(struct tl_model *x, uint32_t pid)
{
	uint64_t *v = kmap__get(&x->proc_map, pid, 0);

	return v ? &x->procs[*v] : NULL;
}

static struct tl_disk *dev_get(struct tl_model *x, uint32_t dev)
{
	uint64_t *v;
	int rc;

	rc = kmap__upsert(&x->dev_map, dev, 0, &v);
	if (rc < 0)
		return NULL;
	if (rc) {
		if (array_grow((void **)&x->devs, &x->cdevs, x->ndevs + 1, sizeof(*x->devs)))
			return NULL;
		memset(&x->devs[x->ndevs], 0, sizeof(x->devs[0]));
		x->devs[x->ndevs].dev = dev;
		*v = x->ndevs++;
	}
	return &x->devs[*v];
}

int tl_model__said(const struct tl_model *x, int err)
{
	if (err == -EBADMSG)
		pr_err("%s: %s (the capture changed while it was being read?)", x->path,
		       tl_model__error(x));
	return err;
}

/* ---- the handlers ---- */

static int on_proc(void *ctx, const struct gpuio_proc_event *p)
{
	return tl_note_thread(ctx, p->hdr.pid, p->hdr.tid, NULL);
}

void tl_blk_from_record(struct tl_blk *e, const struct gpuio_block_event *b)
{
	memset(e, 0, sizeof(*e));
	e->ts = b->hdr.ts;
	e->issue = b->issue_ns;
	e->complete = b->complete_ns;
	e->sector = b->sector;
	e->ino = b->ino;
	e->bytes = b->bytes;
	e->file_dev = b->file_dev;
	e->pid = b->hdr.pid;
	e->tid = b->hdr.tid;
	e->seq = b->vfs_seq;
	e->error = b->error;
	e->op = b->op;
	e->flags = b->rq_flags;
	e->attr = b->attr;
}

static int on_block(void *ctx, const struct gpuio_block_event *b)
{
	struct tl_model *x = ctx;
	struct tl_disk *d = dev_get(x, b->dev);
	struct tl_blk *e;

	if (!d)
		return -ENOMEM;
	if (x->online)          /* the stream lays out its own requests */
		return 0;
	if (b->hdr.ts < x->tmin)
		x->tmin = b->hdr.ts;
	if (array_grow((void **)&x->blks, &x->cblks, x->nblks + 1, sizeof(*x->blks)))
		return -ENOMEM;
	d->nreq++;
	e = &x->blks[x->nblks++];
	tl_blk_from_record(e, b);
	e->dev_idx = (uint32_t)(d - x->devs);
	if (b->vfs_seq) {
		/* the requests naming a key, counted in v here while they come one
		 * after another (a call's requests mostly do), summed over its
		 * entries once pass 1 is over (build_flow_filter) */
		struct tl_flow *f = x->nflows ? &x->flows[x->nflows - 1] : NULL;

		if (f && f->tid == b->hdr.tid && f->seq == b->vfs_seq && f->v < 0x3fffffffu) {
			f->v++;
			return 0;
		}
		if (array_grow((void **)&x->flows, &x->cflows, x->nflows + 1, sizeof(*x->flows)))
			return -ENOMEM;
		f = &x->flows[x->nflows++];
		f->tid = b->hdr.tid;
		f->seq = b->vfs_seq;
		f->v = 1;
	}
	return 0;
}

static int on_vfs(void *ctx, const struct gpuio_vfs_event *e)
{
	struct tl_model *x = ctx;
	/* a thread seen lately needs no map lookup: calls come in runs of few threads */
	uint64_t key = (uint64_t)e->hdr.pid << 32 | e->hdr.tid, *seen;
	int err;

	seen = &x->seen_threads[hash_mix64(key) & (sizeof(x->seen_threads) / 8 - 1)];
	if (*seen != key + 1) {
		err = tl_note_thread(x, e->hdr.pid, e->hdr.tid, NULL);
		if (err)
			return err;
		*seen = key + 1;
	}
	if (x->online)
		return 0;
	if (e->hdr.ts < x->tmin)
		x->tmin = e->hdr.ts;
	if (gpuio_call__is_async(e->call)) {
		struct tl_async *a;

		if (array_grow((void **)&x->asyncs, &x->casyncs, x->nasyncs + 1, sizeof(*x->asyncs)))
			return -ENOMEM;
		a = &x->asyncs[x->nasyncs++];
		a->ordinal = x->vfs_ordinal;
		a->start = e->hdr.ts;
		a->end = e->hdr.ts + e->dur_ns;
		if (a->end < a->start)
			a->end = a->start;
		a->pid = e->hdr.pid;
		a->lane_tid = 0;
	}
	x->vfs_ordinal++;
	return 0;
}

/* A switch or wake-up: its traced threads are tracks with states. */
static int on_sched(void *ctx, const struct gpuio_sched_event *e)
{
	struct tl_model *x = ctx;
	struct tl_thread *t;
	int err = 0;

	if (x->online)
		return 0;
	if (e->hdr.ts < x->tmin)
		x->tmin = e->hdr.ts;
	if ((e->kind != GPUIO_SCHED_SWITCH || (e->flags & GPUIO_SF_PREV_TRACED)) &&
	    !(err = tl_note_thread(x, e->hdr.pid, e->hdr.tid, &t)))
		t->has_sched = true;
	if (!err && e->kind == GPUIO_SCHED_SWITCH && (e->flags & GPUIO_SF_NEXT_TRACED) &&
	    !(err = tl_note_thread(x, e->other_pid, e->other_tid, &t)))
		t->has_sched = true;
	return err;
}

static int on_fault_count(void *ctx, const struct gpuio_fault_count *e)
{
	return tl_fault_count(ctx, e);
}

/* A Python stack's use: the switch-outs' stacks are kept (the states they begin) */
static int on_stack_at(void *ctx, const struct model_stack_at *a)
{
	struct tl_model *x = ctx;

	return x->online ? 0 : tl_stacks__pass1(x, a);
}

/* The handlers of pass 1 (gpu_load.c has the GPU ones). */
static void set_tool(struct tl_model *x)
{
	x->tool = (struct model_tool){
		.ctx = x, .vfs = on_vfs, .block = on_block, .proc = on_proc, .sched = on_sched,
		.fault_count = on_fault_count, .stack_at = on_stack_at,
	};
	if (!x->online)
		tl_gpu_handlers(&x->tool);
}

/* Pass 1: the session reads every record once; the model keeps its part. */
int tl_pass1(struct tl_model *x)
{
	const struct model_tool *tools[] = { &x->tool };

	set_tool(x);
	return model_session__run(x->s, tools, 1);
}

/* ---- online ---- */

int tl_model__new_online(struct model_session *s, struct tl_model **out)
{
	struct tl_model *x = calloc(1, sizeof(*x));

	*out = NULL;
	if (!x)
		return -ENOMEM;
	x->online = true;
	x->s = s;
	x->f = model_session__facts(s);
	x->hdr = x->f->hdr;
	x->map.prefix = "";
	x->map.ts_base = x->hdr->monotonic_ns;
	x->cache_known = x->hdr->pagecache_mode[0] && strcmp(x->hdr->pagecache_mode, "off") &&
			 strcmp(x->hdr->pagecache_mode, "none");
	set_tool(x);
	*out = x;
	return 0;
}

const struct model_tool *tl_model__tool(struct tl_model *x)
{
	return &x->tool;
}

struct tl_disk *tl_model__dev(struct tl_model *x, uint32_t dev)
{
	return dev_get(x, dev);
}

struct tl_proc *tl_model__proc(struct tl_model *x, uint32_t pid)
{
	return proc_get(x, pid);
}

struct tl_thread *tl_model__thread(struct tl_model *x, uint32_t pid, uint32_t tid)
{
	struct tl_thread *t;

	return tl_note_thread(x, pid, tid, &t) ? NULL : t;
}

size_t tl_model__proc_name_of(struct tl_model *x, uint32_t pid, char *buf, size_t len)
{
	struct tl_proc *p = proc_get(x, pid);

	return p ? tl_model__proc_name(x, p, buf, len) : 0;
}

const char *tl_model__thread_name_of(struct tl_model *x, uint32_t pid, uint32_t tid,
				     char buf[32], size_t *len)
{
	struct tl_thread *t;
	struct tl_proc *p;

	if (tl_note_thread(x, pid, tid, &t) || !(p = proc_get(x, pid)))
		return NULL;
	return tl_model__thread_name(x, p, t, buf, len);
}

void tl_model__disk_name_of(struct tl_model *x, uint32_t dev, char *buf, size_t len)
{
	struct tl_disk d = { .dev = dev };

	tl_model__disk_name(x, &d, buf, len);
}

void tl_model__block_record(struct tl_model *x, const struct gpuio_block_event *b, uint32_t lane,
			    size_t disk, const char *dname, struct tl_block *o, struct tl_args *a)
{
	struct tl_blk e;

	tl_blk_from_record(&e, b);
	e.lane = lane;
	tl_model__block(x, &e, disk, dname, o, a);
}

void tl_model__set_totals(struct tl_model *x, uint64_t vfs, uint64_t block, uint64_t flows,
			  uint64_t bucket_ns)
{
	x->st.vfs = vfs;
	x->st.block = block;
	x->st.flows = flows;
	x->bucket_ns = bucket_ns;
}
