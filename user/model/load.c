// SPDX-License-Identifier: MIT
/*
 * load.c — pass 1 over a capture: processes (one naming rule: EXEC > ATTACH
 * > FORK), threads, devices, paths, block requests, io_uring calls; the same
 * record handlers serve the live stream (exp_model__note).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "model/calls.h"
#include "model/model.h"
#include "lib/log.h"
#include "model/model_priv.h"
#include "model/proc_names.h"

/* ---- pass 1 ---- */

int note_thread(struct exp_model *x, uint32_t pid, uint32_t tid, struct thread_ent **out)
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

static struct proc_ent *proc_get(struct exp_model *x, uint32_t pid)
{
	uint64_t *v = kmap__get(&x->proc_map, pid, 0);

	return v ? &x->procs[*v] : NULL;
}

static struct dev_ent *dev_get(struct exp_model *x, uint32_t dev)
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

int exp_model__said(const struct exp_model *x, int err)
{
	if (err == -EBADMSG)
		pr_err("%s: %s (the capture changed while it was being read?)", x->path,
		       exp_model__error(x));
	return err;
}

int exp_paths__add(struct kmap *map, struct path_ent **paths, size_t *n, size_t *cap,
		   const struct gpuio_path_event *p)
{
	struct path_ent *pe;
	size_t out_len;
	uint64_t *v;
	char *s;
	int rc;

	s = gpuio_path__string(p, &out_len);
	if (!s)
		return -ENOMEM;
	rc = kmap__upsert(map, p->dev, p->ino, &v);
	if (rc < 0 || (rc && array_grow((void **)paths, cap, *n + 1, sizeof(**paths)))) {
		free(s);
		return -ENOMEM;
	}
	if (rc)
		*v = (*n)++;
	else
		free((*paths)[*v].s);   /* later records win */
	pe = &(*paths)[*v];
	pe->s = s;
	pe->len = (uint32_t)out_len;
	return 0;
}

/* PATH record -> the absolute path it names. */
static int on_path(struct exp_model *x, const struct gpuio_path_event *p)
{
	return exp_paths__add(&x->path_map, &x->paths, &x->npaths, &x->cpaths, p);
}

static int on_proc(struct exp_model *x, const struct gpuio_proc_event *p)
{
	struct thread_ent *t;
	struct proc_ent *pe;
	int err;

	err = note_thread(x, p->hdr.pid, p->hdr.tid, &t);
	if (err)
		return err;
	pe = proc_get(x, p->hdr.pid);
	if (p->kind == GPUIO_PROC_CGROUP) {      /* its job: kept as the path, parsed when shown */
		char *cg = strndup(p->args, p->args_len);

		if (!cg)
			return -ENOMEM;
		free(pe->cgroup);
		pe->cgroup = cg;
		return 0;
	}
	if (proc_names__names_process(&pe->rank, p)) {
		char *args = NULL;
		uint32_t n = p->args_len;

		/* the reader clamps args_len to the record; drop trailing NULs */
		while (n && p->args[n - 1] == 0)
			n--;
		if (n) {
			args = malloc(n);
			if (!args)
				return -ENOMEM;
			memcpy(args, p->args, n);
		}
		free(pe->args);
		pe->args = args;
		pe->args_len = n;
		memcpy(pe->comm, p->comm, sizeof(pe->comm));
	}
	if (proc_names__names_thread(t->has_comm, p)) {
		memcpy(t->comm, p->comm, sizeof(t->comm));
		t->has_comm = true;
	}
	return 0;
}

void exp_blk_from_record(struct blk_ent *e, const struct gpuio_block_event *b)
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

static int on_block(struct exp_model *x, const struct gpuio_block_event *b)
{
	struct dev_ent *d = dev_get(x, b->dev);
	struct blk_ent *e;
	uint64_t *v;

	if (!d || array_grow((void **)&x->blks, &x->cblks, x->nblks + 1, sizeof(*x->blks)))
		return -ENOMEM;
	d->nreq++;
	e = &x->blks[x->nblks++];
	exp_blk_from_record(e, b);
	e->dev_idx = (uint32_t)(d - x->devs);
	if (b->vfs_seq) {
		if (kmap__upsert(&x->flow_map, b->hdr.tid, b->vfs_seq, &v) < 0)
			return -ENOMEM;
		*v |= FLOW_REFERENCED;
		if (FLOW_COUNT(*v) < 0x3fffffffu)
			*v += FLOW_COUNT_ONE;
	}
	return 0;
}

static int on_vfs_meta(struct exp_model *x, const struct gpuio_vfs_event *e)
{
	/* a thread seen lately needs no map lookup: calls come in runs of few threads */
	uint64_t key = (uint64_t)e->hdr.pid << 32 | e->hdr.tid, *seen;
	int err;

	seen = &x->seen_threads[hash_mix64(key) & (sizeof(x->seen_threads) / 8 - 1)];
	if (*seen != key + 1) {
		err = note_thread(x, e->hdr.pid, e->hdr.tid, NULL);
		if (err)
			return err;
		*seen = key + 1;
	}
	if (gpuio_call__is_async(e->call)) {
		struct async_ent *a;

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
	return 0;
}

/* A switch or wake-up: kept for the thread states; its traced threads are tracks. */
static int on_sched(struct exp_model *x, const struct gpuio_sched_event *e)
{
	int err = sched_tab__add(&x->sched, e);
	struct thread_ent *t;

	if (!err && (e->kind != GPUIO_SCHED_SWITCH || (e->flags & GPUIO_SF_PREV_TRACED)) &&
	    !(err = note_thread(x, e->hdr.pid, e->hdr.tid, &t)))
		t->has_sched = true;
	if (!err && e->kind == GPUIO_SCHED_SWITCH && (e->flags & GPUIO_SF_NEXT_TRACED) &&
	    !(err = note_thread(x, e->other_pid, e->other_tid, &t)))
		t->has_sched = true;
	return err;
}

/* One record of pass 1: everything but the VFS events themselves. */
static int meta_record(struct exp_model *x, const struct gpuio_hdr *h)
{
	int err = 0;

	x->records++;
	x->counts[h->type <= GPUIO_REC_SCHED ? h->type : 0]++;
	if (h->ts > x->tend)
		x->tend = h->ts;
	switch (h->type) {
	case GPUIO_REC_GPU_INFO ... GPUIO_REC_GPU_SYM:
		err = gpu_record(x, h);
		break;
	case GPUIO_REC_VFS:
		if (h->ts < x->tmin)
			x->tmin = h->ts;
		err = on_vfs_meta(x, (const void *)h);
		x->vfs_ordinal++;
		break;
	case GPUIO_REC_BLOCK:
		if (h->ts < x->tmin)
			x->tmin = h->ts;
		err = on_block(x, (const void *)h);
		break;
	case GPUIO_REC_PATH:
		err = on_path(x, (const void *)h);
		break;
	case GPUIO_REC_PROC:
		err = on_proc(x, (const void *)h);
		break;
	case GPUIO_REC_STATS:
		gpuio_stats__from_record(h, &x->stats);
		x->have_stats = true;
		break;
	case GPUIO_REC_SCHED:
		if (h->ts < x->tmin)
			x->tmin = h->ts;
		err = on_sched(x, (const void *)h);
		break;
	case GPUIO_REC_DEVNAME: {
		const struct gpuio_devname_event *d = (const void *)h;
		struct dev_ent *de = dev_get(x, d->dev);

		if (!de) {
			err = -ENOMEM;
			break;
		}
		de->named = true;
		memset(de->name, 0, sizeof(de->name));
		memcpy(de->name, d->name, strnlen(d->name, sizeof(d->name)));
		break;
	}
	default:
		break;      /* newer record types: skipped by size */
	}
	return err;
}



/* Pass 1 through the capture reader: its checks, its messages, its cut. */
int pass_meta(struct exp_model *x)
{
	const struct gpuio_hdr *h;
	int rc, err = 0;

	while (!err && (rc = gpuio_cap_reader__next(x->r, &h)) > 0) {
		x->rec_off = gpuio_cap_reader__offset(x->r) - h->size;
		err = meta_record(x, h);
	}
	if (err)
		return err;
	if (rc < 0)
		return -EBADMSG;
	x->truncated = gpuio_cap_reader__truncated(x->r);
	x->trunc_offset = gpuio_cap_reader__offset(x->r);
	return 0;
}

/* ---- online ---- */

void exp_model__init_online(struct exp_model *x, const struct gpuio_cap_header *hdr)
{
	memset(x, 0, sizeof(*x));
	x->p2_fd = -1;
	x->online = true;
	x->hdr = hdr;
	x->map.prefix = "";
	x->map.ts_base = hdr->monotonic_ns;
	x->cache_known = hdr->pagecache_mode[0] && strcmp(hdr->pagecache_mode, "off") &&
			 strcmp(hdr->pagecache_mode, "none");
}

/* Online: GPU records are counted, collector status kept (no layout). */
static int gpu_note(struct exp_model *x, const struct gpuio_hdr *h)
{
	struct exp_gpu *g = &x->gpu;

	g->any = true;
	switch (h->type) {
	case GPUIO_REC_GPU_INFO:
		return on_gpu_info(x, (const void *)h);
	case GPUIO_REC_GPU_KERNEL:
		g->kernels++;
		break;
	case GPUIO_REC_GPU_MEMCPY:
		g->memcpys++;
		break;
	case GPUIO_REC_GPU_MEMSET:
		g->memsets++;
		break;
	case GPUIO_REC_CUDA_API:
		g->api++;
		break;
	case GPUIO_REC_GPU_SYNC:
		g->syncs++;
		break;
	case GPUIO_REC_NVTX:
		g->nvtx++;
		break;
	case GPUIO_REC_GPU_OVERHEAD:
		g->overheads++;
		break;
	}
	return 0;
}

int exp_model__note(struct exp_model *x, const struct gpuio_hdr *h)
{
	x->records++;
	x->counts[h->type <= GPUIO_REC_SCHED ? h->type : 0]++;
	if (h->ts > x->tend)
		x->tend = h->ts;
	switch (h->type) {
	case GPUIO_REC_GPU_INFO ... GPUIO_REC_GPU_SYM:
		return gpu_note(x, h);
	case GPUIO_REC_VFS:
		return note_thread(x, h->pid, h->tid, NULL);
	case GPUIO_REC_BLOCK:
		return dev_get(x, ((const struct gpuio_block_event *)h)->dev) ? 0 : -ENOMEM;
	case GPUIO_REC_PATH:
		return on_path(x, (const void *)h);
	case GPUIO_REC_PROC:
		return on_proc(x, (const void *)h);
	case GPUIO_REC_STATS:
		gpuio_stats__from_record(h, &x->stats);
		x->have_stats = true;
		return 0;
	case GPUIO_REC_DEVNAME: {
		const struct gpuio_devname_event *d = (const void *)h;
		struct dev_ent *de = dev_get(x, d->dev);

		if (!de)
			return -ENOMEM;
		de->named = true;
		memset(de->name, 0, sizeof(de->name));
		memcpy(de->name, d->name, strnlen(d->name, sizeof(d->name)));
		return 0;
	}
	default:
		return 0;
	}
}

struct dev_ent *exp_model__dev(struct exp_model *x, uint32_t dev)
{
	return dev_get(x, dev);
}

struct proc_ent *exp_model__proc(struct exp_model *x, uint32_t pid)
{
	return proc_get(x, pid);
}

struct thread_ent *exp_model__thread(struct exp_model *x, uint32_t pid, uint32_t tid)
{
	struct thread_ent *t;

	return note_thread(x, pid, tid, &t) ? NULL : t;
}

/*
 * Pass 1 in place, without the reader's copy of every record: for a whole,
 * clean capture only. Anything the reader would report (a corrupt record, a
 * cut at the end, an odd header size) returns -EAGAIN, and pass 1 is done
 * again by the reader, which owns those checks and their messages.
 */
int pass_meta_fast(struct exp_model *x)
{
	union { struct gpuio_hdr h; unsigned char b[GPUIO_REC_SIZE_MAX]; } copy;
	const struct gpuio_hdr *h;
	int rc, err;

	if (!model_in_place(x))
		return -EAGAIN;
	err = exp_model__rewind(x);
	if (err)
		return err == -ENOMEM ? err : -EAGAIN;
	for (;;) {
		size_t min;

		rc = p2_fill(x, sizeof(*h));
		if (rc == 0)
			break;
		if (rc < 0)
			return -EAGAIN;
		h = (const void *)(x->p2_buf + x->p2_pos);
		min = gpuio_rec_min_size(h->type);
		if (h->type == 0 || h->size < sizeof(*h) || h->size > GPUIO_REC_SIZE_MAX ||
		    (min && h->size < min) || (h->size & 7))
			return -EAGAIN;
		if (p2_fill(x, h->size) <= 0)
			return -EAGAIN;
		h = (const void *)(x->p2_buf + x->p2_pos);
		x->rec_off = x->p2_off - (x->p2_len - x->p2_pos);
		if (h->type == GPUIO_REC_PATH || h->type == GPUIO_REC_PROC ||
		    h->type == GPUIO_REC_STATS) {
			/* what the reader does to every record, on a copy */
			memcpy(copy.b, h, h->size);
			if (gpuio_rec__sanitize(copy.b) < 0)
				return -EAGAIN;
			h = &copy.h;
		}
		err = meta_record(x, h);
		if (err)
			return err;
		x->p2_pos += ((const struct gpuio_hdr *)(x->p2_buf + x->p2_pos))->size;
	}
	/* bytes of a partial record left: the reader reports the cut */
	if (x->p2_len != x->p2_pos)
		return -EAGAIN;
	x->truncated = 0;
	x->trunc_offset = x->p2_off;
	return 0;
}
