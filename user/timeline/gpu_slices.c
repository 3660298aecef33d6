// SPDX-License-Identifier: MIT
/*
 * gpu_slices.c — what the writers show for the GPU side: GPU and lane names,
 * kernel/copy/memset/CUDA call/sync/NVTX slices with their args and flows,
 * busy counters.
 *
 * The records are read back by the session (model_session__read_at) to
 * the render handlers here: one per kind, for a GPU lane (device side) or a
 * host thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "timeline/timeline.h"
#include "timeline/timeline_priv.h"
#include "lib/units.h"

/* ---- GPU: output ---- */

uint32_t tl_gpu_pid(const struct tl_model *m, size_t gpu)
{
	return TL_GPU_PID_BASE + m->map.gpu_base + (uint32_t)gpu;
}

uint64_t tl_gpu_flow_id(uint64_t fkey, uint32_t k)
{
	uint64_t id = hash_mix64(tl_gpu_bind(fkey) ^ ((uint64_t)k * 0xc2b2ae3d27d4eb4full));

	return id ? id : 1;
}

void tl_model__gpu_name(const struct tl_gdev *d, char *buf, size_t len)
{
	if (d->device == UINT32_MAX)
		snprintf(buf, len, "GPU ?");
	else
		snprintf(buf, len, "GPU %u", d->device);
}

size_t tl_model__gpu_lane_name(const struct tl_model *m, const struct tl_gtrack *t,
				uint32_t lane, char *buf, size_t len)
{
	const struct tl_gdev *d = &m->gpu.devs[t->dev_idx];
	char gname[16];
	int n;

	tl_model__gpu_name(d, gname, sizeof(gname));
	if (t->what == GT_SYNC)
		n = snprintf(buf, len, "%s \xc2\xb7 sync", gname);
	else if (t->what == GT_OVERHEAD)
		n = snprintf(buf, len, "%s \xc2\xb7 CUPTI overhead", gname);
	else
		n = snprintf(buf, len, "%s \xc2\xb7 stream %llu", gname, (unsigned long long)t->stream);
	/* stream ids are per process: say whose when several share the GPU */
	if (d->npids > 1 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, " \xc2\xb7 pid %u", tl_pid(m, t->pid));
	if (lane > 1 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, " \xc2\xb7 lane %u", lane);
	return (size_t)n < len ? (size_t)n : len - 1;
}

size_t tl_model__ghost_lane_name(const struct tl_glane *l, char *buf, size_t len)
{
	int n = snprintf(buf, len, "tid %u \xc2\xb7 CUDA overlap %u", l->tid, l->n);

	return (size_t)n < len ? (size_t)n : len - 1;
}

int tl_model__gpu_rewind(struct tl_model *x)
{
	x->gpu.next = 0;
	for (size_t i = 0; i < x->gpu.ncorr; i++)
		x->gpu.corr[i].bound = 0;
	x->gpu.flows = x->gpu.dangling_corr = 0;
	return 0;
}

static const char *cuda_error_name(bool driver, int64_t r)
{
	static const struct { int code; const char *rt, *drv; } tab[] = {
		{ 1, "cudaErrorInvalidValue", "CUDA_ERROR_INVALID_VALUE" },
		{ 2, "cudaErrorMemoryAllocation", "CUDA_ERROR_OUT_OF_MEMORY" },
		{ 3, "cudaErrorInitializationError", "CUDA_ERROR_NOT_INITIALIZED" },
		{ 4, "cudaErrorCudartUnloading", "CUDA_ERROR_DEINITIALIZED" },
		{ 35, "cudaErrorInsufficientDriver", NULL },
		{ 100, "cudaErrorNoDevice", "CUDA_ERROR_NO_DEVICE" },
		{ 101, "cudaErrorInvalidDevice", "CUDA_ERROR_INVALID_DEVICE" },
		{ 201, "cudaErrorDeviceUninitialized", "CUDA_ERROR_INVALID_CONTEXT" },
		{ 209, "cudaErrorNoKernelImageForDevice", "CUDA_ERROR_NO_BINARY_FOR_GPU" },
		{ 400, "cudaErrorInvalidResourceHandle", "CUDA_ERROR_INVALID_HANDLE" },
		{ 500, "cudaErrorNotFound", "CUDA_ERROR_NOT_FOUND" },
		{ 600, "cudaErrorNotReady", "CUDA_ERROR_NOT_READY" },
		{ 700, "cudaErrorIllegalAddress", "CUDA_ERROR_ILLEGAL_ADDRESS" },
		{ 701, "cudaErrorLaunchOutOfResources", "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES" },
		{ 702, "cudaErrorLaunchTimeout", "CUDA_ERROR_LAUNCH_TIMEOUT" },
		{ 719, "cudaErrorLaunchFailure", "CUDA_ERROR_LAUNCH_FAILED" },
		{ 999, "cudaErrorUnknown", "CUDA_ERROR_UNKNOWN" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(tab); i++)
		if (tab[i].code == r)
			return driver ? tab[i].drv : tab[i].rt;
	return NULL;
}

static void gname_copy(struct tl_gslice *o, const char *s, size_t n, const char *dflt)
{
	n = strnlen(s, n);
	if (n >= sizeof(o->namebuf))
		n = sizeof(o->namebuf) - 1;
	if (!n) {
		o->name = dflt;
		o->name_static = true;
		return;
	}
	memcpy(o->namebuf, s, n);
	o->namebuf[n] = 0;
	o->name = o->namebuf;
	o->name_static = false;
}

static void gslice_times(struct tl_gslice *o, uint64_t ts, uint64_t end)
{
	o->ts = ts;
	o->dur = end > ts ? end - ts : 0;
	if (o->dur > INT64_MAX)
		o->dur = INT64_MAX;
}

/* The arrow into an activity, when its API call is in the capture. */
static void gact_flow(struct tl_model *x, struct tl_gslice *o, uint32_t pid, uint32_t corr)
{
	struct tl_gcorr *c = (struct tl_gcorr *)tl_gcorr_find(&x->gpu, pid, corr);

	o->fkey = tl_gpu_fkey(x, pid, corr);
	if (c && c->src) {
		o->flow_k = ++c->bound;
		x->gpu.flows++;
	} else if (corr) {
		x->gpu.dangling_corr++;
	}
}

static const char *overhead_name(uint32_t kind)
{
	switch (kind) {
	case 1: return "CUPTI overhead: driver compiler";
	case 1u << 16: return "CUPTI overhead: buffer flush";
	case 2u << 16: return "CUPTI overhead: instrumentation";
	case 3u << 16: return "CUPTI overhead: resource";
	case 4u << 16: return "CUPTI overhead: module loading";
	case 5u << 16: return "CUPTI overhead: lazy function loading";
	case 6u << 16: return "CUPTI overhead: command buffer full";
	default: return "CUPTI overhead";
	}
}

static void gpu_overhead_args(struct tl_gslice *o, const struct gpuio_gpu_overhead *v,
			      struct tl_args *a)
{
	o->name = overhead_name(v->kind);
	o->name_static = true;
	tl_arg_u64(a, "kind", v->kind);
	TL_ARG_NAME(a, "object_kind", tl_object_kind_names, v->object_kind);
	tl_arg_u64(a, "object_id", v->object_id);
}

/* What the render handlers fill: the slice at hand. */
struct render {
	struct tl_model *x;
	struct tl_gslice *o;
	struct tl_args *a;
	uint32_t hidx;          /* host slices: gpu.hosts[] */
	const struct tl_ghost *host;
	bool done;              /* a handler took the record */
};

static int act_kernel(struct render *r, const struct model_gpu_act *g)
{
	const struct gpuio_gpu_kernel *k = (const void *)g->h;
	struct tl_gslice *o = r->o;
	struct tl_args *a = r->a;
	struct tl_model *x = r->x;
	char buf[64];

	o->cat = "gpu";
	gname_copy(o, k->name, g->name_len, "kernel");
	gact_flow(x, o, k->hdr.pid, k->correlation);
	tl_arg_u64(a, "device", k->device);
	tl_arg_u64(a, "stream", k->stream);
	tl_arg_u64(a, "context", k->context);
	tl_arg_u64(a, "correlation", k->correlation);
	tl_arg_u64(a, "pid", tl_pid(x, k->hdr.pid));
	snprintf(buf, sizeof(buf), "%ux%ux%u", k->grid[0], k->grid[1], k->grid[2]);
	tl_arg_copy(a, "grid", buf, true);
	snprintf(buf, sizeof(buf), "%ux%ux%u", k->block[0], k->block[1], k->block[2]);
	tl_arg_copy(a, "block", buf, true);
	tl_arg_u64(a, "static_smem_bytes", k->static_smem);
	tl_arg_u64(a, "dynamic_smem_bytes", k->dynamic_smem);
	tl_arg_u64(a, "registers_per_thread", k->registers);
	if (k->flags & GPUIO_GK_NAME_TRUNCATED)
		tl_arg_bool(a, "name_truncated", true);
	return 0;
}

static int act_memcpy(struct render *r, const struct gpuio_gpu_memcpy *c)
{
	struct tl_gslice *o = r->o;
	struct tl_args *a = r->a;
	struct tl_model *x = r->x;
	const char *n = TL_NAME_OF(tl_memcpy_slice_names, c->kind);

	o->cat = "gpu";
	o->name = n ? n : "memcpy";
	o->name_static = true;
	gact_flow(x, o, c->hdr.pid, c->correlation);
	tl_arg_u64(a, "bytes", c->bytes);
	TL_ARG_NAME(a, "kind", tl_memcpy_kind_names, c->kind);
	TL_ARG_NAME(a, "src_kind", tl_mem_kind_names, c->src_kind);
	TL_ARG_NAME(a, "dst_kind", tl_mem_kind_names, c->dst_kind);
	if (o->dur)
		tl_arg_f3(a, "throughput_GBps", (double)c->bytes / (double)o->dur);
	tl_arg_bool(a, "async", c->flags & GPUIO_GM_ASYNC);
	tl_arg_u64(a, "device", c->device);
	if ((c->flags & GPUIO_GM_PEER) || c->dst_device != c->device) {
		tl_arg_u64(a, "src_device", c->device);
		tl_arg_u64(a, "dst_device", c->dst_device);
	}
	tl_arg_u64(a, "stream", c->stream);
	tl_arg_u64(a, "context", c->context);
	tl_arg_u64(a, "correlation", c->correlation);
	tl_arg_u64(a, "pid", tl_pid(x, c->hdr.pid));
	return 0;
}

static int act_memset(struct render *r, const struct gpuio_gpu_memset *m)
{
	struct tl_gslice *o = r->o;
	struct tl_args *a = r->a;
	struct tl_model *x = r->x;

	o->cat = "gpu";
	o->name = "memset";
	o->name_static = true;
	gact_flow(x, o, m->hdr.pid, m->correlation);
	tl_arg_u64(a, "bytes", m->bytes);
	tl_arg_u64(a, "value", m->value);
	TL_ARG_NAME(a, "mem_kind", tl_mem_kind_names, m->mem_kind);
	tl_arg_bool(a, "async", m->flags & GPUIO_GM_ASYNC);
	tl_arg_u64(a, "device", m->device);
	tl_arg_u64(a, "stream", m->stream);
	tl_arg_u64(a, "context", m->context);
	tl_arg_u64(a, "correlation", m->correlation);
	tl_arg_u64(a, "pid", tl_pid(x, m->hdr.pid));
	return 0;
}

/* A kernel, copy or memset on its GPU lane. */
static int render_act(void *ctx, const struct model_gpu_act *g)
{
	struct render *r = ctx;

	r->done = true;
	if (g->kind == MODEL_GPU_KERNEL)
		return act_kernel(r, g);
	if (g->kind == MODEL_GPU_MEMCPY)
		return act_memcpy(r, (const void *)g->h);
	return act_memset(r, (const void *)g->h);
}

static void sync_args(struct tl_gslice *o, const struct gpuio_gpu_sync *s, struct tl_args *a)
{
	const char *n = TL_NAME_OF(tl_sync_names, s->type);

	o->cat = "cuda_sync";
	o->name = n ? n : "synchronize";
	o->name_static = true;
	TL_ARG_NAME(a, "type", tl_sync_names, s->type);
	tl_arg_u64(a, "stream", s->stream);
	tl_arg_u64(a, "context", s->context);
	tl_arg_u64(a, "correlation", s->correlation);
}

/* A sync with no thread, on its GPU's sync lane. */
static int render_act_sync(void *ctx, const struct gpuio_gpu_sync *s)
{
	struct render *r = ctx;

	r->done = true;
	sync_args(r->o, s, r->a);
	tl_arg_u64(r->a, "pid", tl_pid(r->x, s->hdr.pid));
	return 0;
}

/* CUPTI's overhead on a device, on its GPU's overhead lane. */
static int render_act_overhead(void *ctx, const struct gpuio_gpu_overhead *v)
{
	struct render *r = ctx;

	r->done = true;
	r->o->cat = "cupti_overhead";
	gpu_overhead_args(r->o, v, r->a);
	tl_arg_u64(r->a, "pid", tl_pid(r->x, v->hdr.pid));
	return 0;
}

static void gpu_api_args(struct tl_model *x, const struct tl_ghost *e, uint32_t hidx,
			 const struct gpuio_cuda_api *c, struct tl_gslice *o, struct tl_args *a)
{
	struct tl_gpu *g = &x->gpu;
	const struct tl_gup *u = e->aux ? &g->ups[e->aux - 1] : NULL;
	const struct tl_gcorr *ce = tl_gcorr_find(g, c->hdr.pid, c->correlation);
	bool driver = c->source == GPUIO_API_DRIVER || c->source == GPUIO_API_UPROBE_DRV;
	uint64_t bytes = c->bytes, stream = c->stream, func = c->func;
	unsigned mk = c->memcpy_kind;
	const char *err;
	uint64_t *sv;

	o->cat = "cuda_api";
	gname_copy(o, c->name, sizeof(c->name), "cuda_call");
	/* a uprobe's view of the call fills what CUPTI does not carry */
	if (u && (e->flags & GH_MERGED)) {
		if (!bytes)
			bytes = u->bytes;
		if (!stream)
			stream = u->stream;
		if (!func)
			func = u->func;
		if (!mk)
			mk = u->memcpy_kind;
	}
	if (ce && ce->src == hidx + 1 && ce->nact) {
		o->nflows = ce->nact;
		o->fkey = tl_gpu_fkey(x, c->hdr.pid, c->correlation);
	}
	tl_arg_s64(a, "ret", c->ret);
	if (c->ret && (err = cuda_error_name(driver, c->ret)) != NULL)
		tl_arg_cstr(a, "error", err);
	TL_ARG_NAME(a, "source", tl_api_source_names, c->source);
	TL_ARG_NAME(a, "kind", tl_api_kind_names, c->kind);
	if (c->correlation)
		tl_arg_u64(a, "correlation", c->correlation);
	if (c->cbid)
		tl_arg_u64(a, "cbid", c->cbid);
	if (bytes)
		tl_arg_u64(a, "bytes", bytes);
	if (stream)
		tl_arg_u64(a, "stream", stream);
	if (mk)
		TL_ARG_NAME(a, "memcpy_kind", tl_memcpy_kind_names, mk);
	if (c->kind == GPUIO_API_LAUNCH) {
		const struct tl_gstr *k = NULL;

		if (ce && ce->name)
			k = &g->strs[ce->name - 1];
		else if (func && (sv = kmap__get(&g->sym_map, c->hdr.pid, func)) != NULL)
			k = &g->strs[*sv];
		if (k) {
			tl_arg_str(a, "kernel", k->s, k->len, true);
			a->a[a->n - 1].stable = true;
		}
		if (func)
			tl_arg_hex(a, "func", func);
	}
	if (e->flags & GH_MERGED)
		tl_arg_bool(a, "uprobe", true);
}

static int render_api(void *ctx, const struct gpuio_cuda_api *c)
{
	struct render *r = ctx;

	r->done = true;
	gpu_api_args(r->x, r->host, r->hidx, c, r->o, r->a);
	return 0;
}

static int render_nvtx(void *ctx, const struct gpuio_nvtx_range *v)
{
	struct render *r = ctx;

	r->done = true;
	r->o->cat = "nvtx";
	gname_copy(r->o, v->name, tl_rec_name_len(&v->hdr, offsetof(struct gpuio_nvtx_range, name),
						v->name, v->name_len, sizeof(v->name)), "nvtx range");
	tl_arg_u64(r->a, "depth", v->depth);
	return 0;
}

static int render_host_sync(void *ctx, const struct gpuio_gpu_sync *s)
{
	struct render *r = ctx;

	r->done = true;
	sync_args(r->o, s, r->a);
	return 0;
}

static int render_host_overhead(void *ctx, const struct gpuio_gpu_overhead *v)
{
	struct render *r = ctx;

	r->done = true;
	r->o->cat = "cupti_overhead";
	gpu_overhead_args(r->o, v, r->a);
	return 0;
}

/* The slice of an activity (its GPU lane) or of a host record (its thread or overlap lane). */
static int gpu_act_slice(struct tl_model *x, const struct tl_gact *e, struct tl_gslice *o,
			 struct tl_args *a)
{
	const struct tl_gtrack *t = &x->gpu.tracks[e->track];
	struct render r = { .x = x, .o = o, .a = a };
	const struct model_tool tool = {
		.ctx = &r, .gpu_act = t->what == GT_STREAM ? render_act : NULL,
		.gpu_sync = t->what == GT_SYNC ? render_act_sync : NULL,
		.gpu_overhead = t->what == GT_OVERHEAD ? render_act_overhead : NULL,
	};
	int err;

	o->track = TL_GS_GPULANE;
	o->pid = tl_gpu_pid(x, x->gpu.devs[t->dev_idx].index);
	o->tid = t->tid0 + e->lane - 1;
	gslice_times(o, e->ts, e->end);
	err = model_session__read_at(x->s, e->off, t->what == GT_SYNC ? GPUIO_REC_GPU_SYNC :
				     t->what == GT_OVERHEAD ? GPUIO_REC_GPU_OVERHEAD : 0, &tool);
	if (!err && !r.done) {
		snprintf(x->err, sizeof(x->err), "the GPU record at offset %llu is no longer what it "
			 "was", (unsigned long long)e->off);
		err = -EBADMSG;
	}
	return err;
}

static int gpu_host_slice(struct tl_model *x, uint32_t hidx, struct tl_gslice *o,
			  struct tl_args *a)
{
	const struct tl_ghost *e = &x->gpu.hosts[hidx];
	struct render r = { .x = x, .o = o, .a = a, .hidx = hidx, .host = e };
	const struct model_tool tool = {
		.ctx = &r, .cuda_api = render_api, .nvtx = render_nvtx, .gpu_sync = render_host_sync,
		.gpu_overhead = render_host_overhead,
	};
	int err;

	o->pid = tl_pid(x, e->pid);
	if (e->lane_tid) {
		o->track = TL_GS_HOSTLANE;
		o->tid = e->lane_tid;
	} else {
		o->track = TL_GS_THREAD;
		o->tid = tl_pid(x, e->tid);
	}
	gslice_times(o, e->ts, e->end);
	err = model_session__read_at(x->s, e->off, e->type, &tool);
	if (!err && !r.done) {
		snprintf(x->err, sizeof(x->err), "the GPU record at offset %llu is no longer what it "
			 "was", (unsigned long long)e->off);
		err = -EBADMSG;
	}
	return err;
}

int tl_model__next_gpu(struct tl_model *x, struct tl_gslice *o, struct tl_args *a)
{
	struct tl_gpu *g = &x->gpu;
	size_t i;
	int err;

	if (g->next >= g->nacts + g->nhorder)
		return 0;
	i = g->next++;
	tl_args_reset(a);
	o->nflows = o->flow_k = 0;
	o->fkey = 0;
	o->name_static = false;
	if (i < g->nacts)
		err = gpu_act_slice(x, &g->acts[g->aorder[i]], o, a);
	else
		err = gpu_host_slice(x, g->horder[i - g->nacts], o, a);
	return err ? err : 1;
}

bool tl_model__next_gpu_counter(struct tl_model *x, const struct tl_gdev *d,
				 struct tl_counter_it *it, uint64_t *t, double *v)
{
	const struct tl_gpu *g = &x->gpu;

	if (it->done || !g->nbuckets)
		return false;
	while (it->k < g->nbuckets) {
		size_t k = it->k++;
		char s[48];
		double f;

		snprintf(s, sizeof(s), "%.3f", d->busy[k] / (double)g->bucket_ns);
		f = strtod(s, NULL);
		if (k && f == it->last_r)
			continue;
		it->last_r = f;
		*t = g->t0 + k * g->bucket_ns;
		*v = f;
		return true;
	}
	it->done = true;
	*t = g->t0 + g->nbuckets * g->bucket_ns;
	*v = 0;
	return true;
}
