// SPDX-License-Identifier: MIT
/*
 * walk.c — the one walk over a loaded model that every output format
 * shares (sink.h): what is shown, in which order, with which names and sort
 * indexes. The sinks decide only how it is written.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "timeline/sink.h"
#include "timeline/timeline_priv.h"

/* A process's lanes sort as: its threads (by index), then io_uring lanes,
 * then CUDA/NVTX overflow lanes, then thread-state lanes. */
enum walk_lane_order {
	ORDER_URING_LANE = 100000,
	ORDER_GHOST_LANE = 200000,
	ORDER_STATE_LANE = 300000,
};

static void walk_processes(struct tl_sink *s, struct tl_model *m)
{
	char name[TL_PROC_NAME_BUF], comm[32], labels[512];
	size_t t = 0;

	/* threads are sorted by pid: walk both lists together */
	for (size_t i = 0; i < m->nprocs; i++) {
		struct tl_proc *p = &m->procs[i];
		uint32_t pid = tl_pid(m, p->pid);
		size_t n, idx = 0, t0 = t;

		n = tl_model__proc_name(m, p, name, sizeof(name));
		p->sort = (uint32_t)i + 1;
		s->ops->process(s, pid, name, n, p->sort, tl_model__proc_labels(m, p, labels, sizeof(labels)));
		for (; t < m->nthreads && m->threads[t].pid == p->pid; t++) {
			const struct tl_thread *th = &m->threads[t];
			size_t tl;
			const char *tn = tl_model__thread_name(m, p, th, comm, &tl);

			s->ops->thread(s, pid, tl_pid(m, th->tid), tn, tl, idx++);
		}
		/* thread states: after the threads, in their order */
		for (size_t k = t0; k < t && s->ops->state_lane; k++) {
			const struct tl_thread *th = &m->threads[k];
			size_t tl;
			const char *tn;

			if (!th->has_sched)
				continue;
			tn = tl_model__thread_name(m, p, th, comm, &tl);
			n = (size_t)snprintf(name, sizeof(name), "%.*s %u · state", (int)tl, tn, th->tid);
			s->ops->state_lane(s, pid, TL_STATE_TID_BASE + tl_pid(m, th->tid), name, n,
					   ORDER_STATE_LANE + k - t0);
		}
		for (size_t l = 0; l < m->nulanes; l++) {
			const struct tl_ulane *le = &m->ulanes[l];

			if (le->pid != p->pid)
				continue;
			n = (size_t)snprintf(name, sizeof(name), "async I/O lane %u", le->n);
			s->ops->proc_lane(s, pid, le->tid, name, n, ORDER_URING_LANE + le->n);
		}
		/* a thread's CUDA/NVTX slices that do not nest: io_uring-like lanes */
		for (size_t l = 0; l < m->gpu.nglanes; l++) {
			const struct tl_glane *gl = &m->gpu.glanes[l];

			if (gl->pid != p->pid)
				continue;
			n = tl_model__ghost_lane_name(gl, name, sizeof(name));
			s->ops->proc_lane(s, pid, gl->out_tid, name, n, ORDER_GHOST_LANE + l);
		}
	}
}

/* Pass 2: the VFS calls, streamed in capture order. */
static int walk_one_vfs(void *ctx, const struct gpuio_vfs_event *e)
{
	struct tl_sink *s = ctx;
	struct tl_vfs v;

	tl_model__vfs(s->m, e, &v, &s->args);
	s->ops->vfs(s, &v);
	return s->ops->error(s);
}

/* Pass 2 too: an on-CPU sample with its Python stack, where the format draws them. */
static int walk_one_sample(void *ctx, const struct tl_sample *o)
{
	struct tl_sink *s = ctx;

	if (!s->ops->sample)
		return 0;
	s->ops->sample(s, o);
	return s->ops->error(s);
}

struct tstate_walk {
	struct tl_sink *s;
	struct tl_model *m;
};

static int on_tstate(void *ctx, const struct tstate_iv *iv)
{
	struct tstate_walk *w = ctx;
	struct tl_sink *s = w->s;
	struct tl_model *m = w->m;
	struct tl_tstate o = {
		.ts = tl_ts(m, iv->ts), .end = tl_ts(m, iv->end), .pid = tl_pid(m, iv->pid),
		.lane_tid = TL_STATE_TID_BASE + tl_pid(m, iv->tid), .name = tstate_names[iv->state],
	};

	tl_model__tstate_args(m, iv, &s->args);
	s->ops->tstate(s, &o);
	return s->ops->error(s);
}

/* Switches and wake-ups in time order; the states they make. */
static int walk_sched(struct tl_sink *s, struct tl_model *m)
{
	const struct sched_tab *st = model_session__sched(m->s);

	if (s->ops->sched) {
		size_t gi = 0;

		for (size_t i = 0; i < st->n; i++) {
			const struct sched_ent *e = &st->ev[i];
			const struct sched_gap *g = NULL;
			struct tl_sched o;

			if (gi < st->ngap && st->gap[gi].i == i)
				g = &st->gap[gi++].g;
			tl_model__sched(m, st, e, g, sched_tab__comm(st, e->comm), &o);
			s->ops->sched(s, &o);
			if (s->ops->error(s))
				return s->ops->error(s);
		}
	}
	if (s->ops->tstate) {
		struct tstate_walk w = { .s = s, .m = m };

		return sched_tab__states(st, m->f->last_ts, on_tstate, &w);
	}
	return 0;
}

static void walk_disks(struct tl_sink *s, struct tl_model *m)
{
	size_t i = 0;

	for (size_t d = 0; d < m->ndisks; d++) {
		struct tl_disk *dev = &m->devs[m->disk_order[d]];
		uint32_t pid = tl_disk_pid(m, d);
		struct tl_counter_it it = { 0 };
		char dname[48], name[160];
		struct tl_block o;
		double r, w;
		uint64_t t;
		int n;

		tl_model__disk_name(m, dev, dname, sizeof(dname));
		n = snprintf(name, sizeof(name), "%sdisk %s", m->map.prefix, dname);
		s->ops->disk(s, pid, name, (size_t)n, dname, m->nprocs + 1 + d);
		for (uint32_t l = 1; l <= dev->nlanes; l++)
			s->ops->disk_lane(s, pid, tl_lane_tid(m, d, l), l);
		/* blks[] is sorted by disk, and disks are numbered in that order */
		for (; i < m->nblks && m->blks[i].disk == d; i++) {
			tl_model__block(m, &m->blks[i], d, dname, &o, &s->args);
			s->ops->block(s, &o);
		}
		while (tl_model__next_counter(m, dev, &it, &t, &r, &w))
			s->ops->disk_counter(s, pid, dname, t, r, w);
	}
}

/* GPUs: a pseudo-process each, a lane per stream lane, the slices, busy counters. */
static int walk_gpus(struct tl_sink *s, struct tl_model *m)
{
	struct tl_gslice *o;
	char name[160], gname[16];
	int rc;

	for (size_t k = 0; k < m->gpu.ndevs; k++) {
		const struct tl_gdev *d = &m->gpu.devs[m->gpu.dev_order[k]];
		int n;

		tl_model__gpu_name(d, gname, sizeof(gname));
		n = snprintf(name, sizeof(name), "%s%s", m->map.prefix, gname);
		s->ops->gpu(s, tl_gpu_pid(m, k), name, (size_t)n, gname,
			    m->nprocs + m->ndisks + 1 + k);
	}
	for (size_t i = 0; i < m->gpu.ntracks; i++) {
		const struct tl_gtrack *t = &m->gpu.tracks[i];
		uint32_t pid = tl_gpu_pid(m, m->gpu.devs[t->dev_idx].index);

		for (uint32_t l = 1; l <= t->nlanes; l++) {
			size_t n = tl_model__gpu_lane_name(m, t, l, name, sizeof(name));

			s->ops->gpu_lane(s, pid, t->tid0 + l - 1, name, n, t->rank + l);
		}
	}
	o = malloc(sizeof(*o));
	if (!o)
		return -ENOMEM;
	tl_model__gpu_rewind(m);
	while ((rc = tl_model__next_gpu(m, o, &s->args)) > 0) {
		s->ops->gslice(s, o);
		if (s->ops->error(s)) {
			rc = s->ops->error(s);
			break;
		}
	}
	free(o);
	if (rc < 0)
		return rc;
	for (size_t k = 0; k < m->gpu.ndevs; k++) {
		const struct tl_gdev *d = &m->gpu.devs[m->gpu.dev_order[k]];
		struct tl_counter_it it = { 0 };
		uint64_t t;
		double v;

		tl_model__gpu_name(d, gname, sizeof(gname));
		while (tl_model__next_gpu_counter(m, d, &it, &t, &v))
			s->ops->gpu_counter(s, tl_gpu_pid(m, k), gname, t, v);
	}
	return 0;
}

static void walk_info(struct tl_sink *s, struct tl_model *m)
{
	char name[96];
	int n;

	tl_model__info(m, &s->args);
	n = snprintf(name, sizeof(name), "%sgpuio", m->map.prefix);
	s->ops->info(s, tl_info_pid(m), name, (size_t)n,
		     m->nprocs + m->ndisks + m->gpu.ndevs + 1);
}

int tl_model__walk(struct tl_sink *s, struct tl_model *m)
{
	uint64_t start = s->ops->events(s);
	int err;

	s->m = m;
	walk_processes(s, m);
	err = tl_model__each_vfs(m, walk_one_vfs, walk_one_sample, s);
	if (err)
		return tl_model__said(m, err);
	err = walk_sched(s, m);
	if (err)
		return err;
	walk_disks(s, m);
	err = walk_gpus(s, m);
	if (err)
		return tl_model__said(m, err);
	err = tl_walk_findings(s, m);
	if (err)
		return err;
	walk_info(s, m);
	m->st.events = s->ops->events(s) - start;
	return s->ops->error(s);
}
