// SPDX-License-Identifier: MIT
/*
 * model.c — capture -> the event model both exporters render (model.h):
 * the driver. tl_model__load() opens the capture's session and runs pass 1
 * with the model's handlers (load.c, gpu_load.c), lays out lanes (lanes.c)
 * and the GPU side (tl_gpu_layout.c), sorts processes and threads; pass 2 has
 * the session replay the VFS records (tl_model__each_vfs) for events.c to
 * describe.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/sort.h"
#include "timeline/timeline.h"
#include "lib/log.h"
#include "timeline/timeline_priv.h"

static int cmp_proc(const void *pa, const void *pb)
{
	const struct tl_proc *a = pa, *b = pb;

	return a->pid < b->pid ? -1 : a->pid > b->pid;
}

static int cmp_thread(const void *pa, const void *pb)
{
	const struct tl_thread *a = pa, *b = pb;
	bool am = a->tid == a->pid, bm = b->tid == b->pid;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (am != bm)
		return am ? -1 : 1;
	return a->tid < b->tid ? -1 : a->tid > b->tid;
}

static int by_flow_key(const void *a, const void *b, void *ctx)
{
	const struct tl_flow *x = a, *y = b;

	(void)ctx;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * The calls block requests name, one entry a key: pass 1 appended an entry
 * per run of requests naming the same call (v: how many); sorted, the
 * entries of a key are summed into its first (FLOW_COUNT, at most
 * 0x3fffffff as ever) and the rest dropped. The table is probed for every
 * call, in each thread's call order: a cursor per thread (tl_flow_cur).
 */
static int build_flow_filter(struct tl_model *x)
{
	size_t n = 0;
	int err = sort_stable(x->flows, x->nflows, sizeof(*x->flows), by_flow_key, NULL);

	if (err)
		return err;
	for (size_t i = 0; i < x->nflows; i++) {
		uint64_t k = x->flows[i].v;

		if (n && x->flows[n - 1].tid == x->flows[i].tid &&
		    x->flows[n - 1].seq == x->flows[i].seq) {
			x->flows[n - 1].v += k;
			continue;
		}
		x->flows[n++] = x->flows[i];
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t k = x->flows[i].v < 0x3fffffffu ? x->flows[i].v : 0x3fffffffu;

		x->flows[i].v = FLOW_REFERENCED | k * FLOW_COUNT_ONE;
	}
	x->nflows = n;
	if (n && n < x->cflows) {
		struct tl_flow *f = realloc(x->flows, n * sizeof(*f));

		if (f) {
			x->flows = f;
			x->cflows = n;
		}
	}
	x->flow_cur = calloc(TL_FLOW_CURS, sizeof(*x->flow_cur));
	return x->flow_cur ? 0 : -ENOMEM;
}

static bool flow_below(const struct tl_flow *f, uint32_t tid, uint32_t seq)
{
	return f->tid < tid || (f->tid == tid && f->seq < seq);
}

/* The first entry of flows[lo, hi) not below (tid, seq). */
static size_t flow_lower(const struct tl_model *x, size_t lo, size_t hi, uint32_t tid, uint32_t seq)
{
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (flow_below(&x->flows[mid], tid, seq))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

uint64_t *tl_flow_get(const struct tl_model *x, uint32_t tid, uint32_t seq)
{
	struct tl_flow_cur *c;
	size_t i;

	if (!x->nflows || !x->flow_cur)
		return NULL;
	c = &x->flow_cur[tid & (TL_FLOW_CURS - 1)];
	if (c->used && c->tid == tid && seq >= c->seq) {
		/* forward from the last lookup: a few steps, else a search of the rest */
		i = c->pos;
		for (int k = 0; i < x->nflows && flow_below(&x->flows[i], tid, seq); i++)
			if (++k == 8) {
				i = flow_lower(x, i, x->nflows, tid, seq);
				break;
			}
	} else if (c->used && c->tid == tid) {
		i = flow_lower(x, 0, c->pos, tid, seq);
	} else {
		i = flow_lower(x, 0, x->nflows, tid, seq);
	}
	c->used = true;
	c->tid = tid;
	c->seq = seq;
	c->pos = i;
	return i < x->nflows && x->flows[i].tid == tid && x->flows[i].seq == seq ? &x->flows[i].v : NULL;
}

static int sort_tasks(struct tl_model *x)
{
	int err = 0;

	if (!x->nprocs)
		return 0;
	qsort(x->procs, x->nprocs, sizeof(*x->procs), cmp_proc);
	qsort(x->threads, x->nthreads, sizeof(*x->threads), cmp_thread);
	/* the maps index the arrays: rebuild them after sorting */
	for (size_t i = 0; i < x->nprocs && !err; i++) {
		uint64_t *v;

		err = kmap__upsert(&x->proc_map, x->procs[i].pid, 0, &v) < 0 ? -ENOMEM : 0;
		if (!err)
			*v = i;
	}
	for (size_t i = 0; i < x->nthreads && !err; i++) {
		uint64_t *v;

		err = kmap__upsert(&x->thread_map, x->threads[i].pid, x->threads[i].tid, &v) < 0 ?
		      -ENOMEM : 0;
		if (!err)
			*v = i;
	}
	return err;
}

static int load(struct tl_model *x, const char *capture_path, const struct tl_remap *map)
{
	char errbuf[320];
	int err;

	x->path = capture_path;
	if (map)
		x->map = *map;
	if (!x->map.prefix)
		x->map.prefix = "";
	err = model_session__open(capture_path, &x->s, errbuf, sizeof(errbuf));
	if (err) {
		pr_err("%s%s", errbuf, gpuio_cap__open_hint(err));
		return err;
	}
	x->f = model_session__facts(x->s);
	x->hdr = x->f->hdr;
	x->tmin = UINT64_MAX;
	x->cache_known = x->hdr->pagecache_mode[0] && strcmp(x->hdr->pagecache_mode, "off") &&
			 strcmp(x->hdr->pagecache_mode, "none");

	err = tl_pass1(x);
	if (err == -EBADMSG) {
		pr_err("%s: %s; the capture is damaged from there on: record it again "
		       "(`gpuio info` shows what precedes the damage)", capture_path,
		       model_session__error(x->s));
		return err;
	} else if (err) {
		pr_err("cannot read %s: %s", capture_path, strerror(-err));
		return err;
	}
	if (x->f->truncated)
		pr_warn("%s: capture cut short at offset %llu: %llu bytes of a partial record "
			"ignored (exporting the %llu whole records before it)", capture_path,
			(unsigned long long)x->f->trunc_offset, (unsigned long long)x->f->truncated,
			(unsigned long long)x->f->records);
	tl_stacks__finish(x);
	err = tl_layout_block(x);
	if (!err)
		err = tl_layout_async(x);
	if (!err)
		err = tl_gpu_layout(x);
	if (!err)
		err = sort_tasks(x);
	if (!err)
		err = build_flow_filter(x);
	if (err == -EBADMSG) {
		pr_err("%s: %s (the capture changed while it was being read?)", capture_path,
		       tl_model__error(x));
		return err;
	} else if (err) {
		pr_err("cannot export %s: %s", capture_path, strerror(-err));
		return err;
	}
	if (!x->map.ts_base)
		x->map.ts_base = tl_model__origin(x);
	x->st.records = x->f->records;
	x->st.truncated_bytes = x->f->truncated;
	x->st.processes = x->nprocs;
	x->st.disks = x->ndisks;
	for (size_t i = 0; i < x->nthreads; i++)
		x->st.threads++;
	for (size_t d = 0; d < x->ndisks; d++)
		x->st.lanes += x->devs[x->disk_order[d]].nlanes;
	return 0;
}

uint64_t tl_model__origin(const struct tl_model *x)
{
	uint64_t t = x->hdr->monotonic_ns;

	if (x->tmin < t)
		t = x->tmin;
	for (size_t i = 0; i < x->gpu.nacts; i++)
		if (x->gpu.acts[i].ts < t)
			t = x->gpu.acts[i].ts;
	for (size_t i = 0; i < x->gpu.nhosts; i++)
		if (x->gpu.hosts[i].ts < t)
			t = x->gpu.hosts[i].ts;
	return tl_ts(x, t);
}

int tl_model__load(const char *capture_path, const struct tl_remap *map, struct tl_model **out)
{
	struct tl_model *x = calloc(1, sizeof(*x));
	int err;

	*out = NULL;
	if (!x) {
		pr_err("out of memory");
		return -ENOMEM;
	}
	err = load(x, capture_path, map);
	if (err) {
		tl_model__free(x);
		return err;
	}
	*out = x;
	return 0;
}

const char *tl_model__capture_path(const struct tl_model *x)
{
	return x->path;
}

const struct gpuio_cap_header *tl_model__header(const struct tl_model *x)
{
	return x->hdr;
}

const struct tl_stats *tl_model__stats(const struct tl_model *x)
{
	return &x->st;
}

struct tl_remap *tl_model__remap(struct tl_model *x)
{
	return &x->map;
}

void tl_model__extent(const struct tl_model *x, struct tl_extent *e)
{
	e->disks = (uint32_t)x->ndisks;
	e->uring_lanes = (uint32_t)x->nulanes;
	e->gpus = (uint32_t)x->gpu.ndevs;
	e->gpu_lane_tids = x->gpu.nlane_tids;
	e->ghost_lanes = (uint32_t)x->gpu.nglanes;
}

uint32_t tl_pid(const struct tl_model *x, uint32_t pid)
{
	return tl_pid_(x, pid);
}

uint64_t tl_ts(const struct tl_model *x, uint64_t t)
{
	return tl_ts_(x, t);
}

int64_t tl_ts_rel(const struct tl_model *x, uint64_t t)
{
	/* unsigned difference then signed: events before the anchor are negative */
	return (int64_t)(tl_ts_(x, t) - x->map.ts_base);
}

uint64_t tl_model__anchor(const struct tl_model *x)
{
	return x->map.ts_shift + x->hdr->monotonic_ns;
}

void tl_model__free(struct tl_model *x)
{
	if (!x)
		return;
	if (!x->online)
		model_session__free(x->s);
	x->s = NULL;
	free(x->procs);
	free(x->threads);
	for (size_t i = 0; i < x->ndevs; i++)
		free(x->devs[i].bucket_bytes);
	free(x->devs);
	free(x->disk_order);
	free(x->blks);
	free(x->asyncs);
	free(x->ulanes);
	free(x->faults);
	kmap__free(&x->fault_map);
	kmap__free(&x->proc_map);
	kmap__free(&x->thread_map);
	kmap__free(&x->dev_map);
	free(x->flows);
	x->flows = NULL;
	x->nflows = x->cflows = 0;
	free(x->flow_cur);
	x->flow_cur = NULL;
	tl_gpu_free(&x->gpu);
	tl_stacks__free(x);
	free(x);
}

/* ---- pass 2 ---- */

struct vfs_pass {
	struct tl_model *x;
	tl_vfs_fn fn;
	tl_sample_fn sfn;
	void *ctx;
};

static int pass_vfs(void *ctx, const struct gpuio_vfs_event *e)
{
	struct vfs_pass *p = ctx;

	return p->fn(p->ctx, e);
}

/* A call's stack waits for the call; a sample goes out */
static int pass_stack(void *ctx, const struct model_stack_at *a)
{
	struct vfs_pass *p = ctx;
	struct tl_sample o;
	int rc = tl_stacks__pass2(p->x, a, &o);

	return rc > 0 && p->sfn ? p->sfn(p->ctx, &o) : rc < 0 ? rc : 0;
}

int tl_model__each_vfs(struct tl_model *x, tl_vfs_fn fn, tl_sample_fn sfn, void *ctx)
{
	struct vfs_pass p = { .x = x, .fn = fn, .sfn = sfn, .ctx = ctx };
	const struct model_tool t = { .ctx = &p, .vfs = pass_vfs, .stack_at = pass_stack };
	uint64_t mask = 1ull << GPUIO_REC_VFS;

	x->vfs_ordinal = 0;
	x->async_next = 0;
	x->err[0] = 0;
	if (x->stacks) {        /* the stacks of calls, and the samples */
		tl_stacks__rewind(x);
		mask |= 1ull << GPUIO_REC_STACK_AT;
	}
	return model_session__replay(x->s, &t, mask);
}

const char *tl_model__error(const struct tl_model *x)
{
	return x->err[0] ? x->err : model_session__error(x->s);
}

/* ---- ids ---- */

uint32_t tl_disk_pid(const struct tl_model *m, size_t disk)
{
	return TL_DISK_PID_BASE + m->map.disk_base + (uint32_t)disk;
}

uint32_t tl_lane_tid(const struct tl_model *m, size_t disk, uint32_t lane)
{
	return TL_LANE_TID(m->map.disk_base + disk, lane);
}

uint32_t tl_info_pid(const struct tl_model *m)
{
	return TL_INFO_PID - m->map.host;
}

uint64_t tl_flow_id(const struct tl_model *m, uint32_t tid, uint32_t seq, uint32_t k)
{
	/* the host: merged machines keep their own pids (pid_offset 0) */
	uint64_t id = hash_mix64((((uint64_t)(tid + m->map.pid_offset) << 32) | seq) ^
				((uint64_t)k * 0x9e3779b97f4a7c15ull) ^
				((uint64_t)m->map.host * 0xc2b2ae3d27d4eb4full));

	return id ? id : 1;
}
