// SPDX-License-Identifier: MIT
/*
 * gpu_load.c — pass 1 of the GPU records: one compact entry per kernel,
 * copy, memset, CUDA call, sync, NVTX range; names interned, tracks and
 * correlations indexed.
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

/* ---- GPU: pass 1 ---- */

const char *const tl_memcpy_kind_names[11] = {
	"unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD", "DtoA", "DtoD", "HtoH", "PtoP",
};
const char *const tl_memcpy_slice_names[11] = {
	"memcpy", "memcpy HtoD", "memcpy DtoH", "memcpy HtoA", "memcpy AtoH", "memcpy AtoA",
	"memcpy AtoD", "memcpy DtoA", "memcpy DtoD", "memcpy HtoH", "memcpy PtoP",
};
const char *const tl_mem_kind_names[8] = {
	"unknown", "pageable", "pinned", "device", "array", "managed", "device_static",
	"managed_static",
};
const char *const tl_api_source_names[5] = {
	"unknown", "runtime", "driver", "uprobe_runtime", "uprobe_driver",
};
const char *const tl_api_kind_names[8] = {
	"other", "launch", "memcpy", "memset", "sync", "graph_launch", "malloc", "free",
};
const char *const tl_sync_names[5] = {
	"synchronize", "event synchronize", "stream wait event", "stream synchronize",
	"context synchronize",
};
const char *const tl_object_kind_names[6] = {
	"unknown", "process", "thread", "device", "context", "stream",
};

bool tl_is_uprobe(unsigned source)
{
	return source == GPUIO_API_UPROBE_RT || source == GPUIO_API_UPROBE_DRV;
}

/* "cudaLaunchKernel_v7000", "__cudaLaunchKernel", "cuMemcpy_ptds" -> the bare name */
static size_t api_norm(const char *s, size_t n, char *out)
{
	bool cut = true;

	while (n && *s == '_')
		s++, n--;
	memcpy(out, s, n);
	while (cut) {
		size_t k = n;

		cut = false;
		if (n > 5 && (!memcmp(out + n - 5, "_ptsz", 5) || !memcmp(out + n - 5, "_ptds", 5))) {
			n -= 5;
			cut = true;
			continue;
		}
		while (k && out[k - 1] >= '0' && out[k - 1] <= '9')
			k--;
		if (k < n && k >= 2 && out[k - 1] == 'v' && out[k - 2] == '_') {
			n = k - 2;
			cut = true;
		}
	}
	out[n] = 0;
	return n;
}

/* The index of string s in gpu.strs (added when new); api: also its bare name. */
static int gstr_intern(struct tl_gpu *g, const char *s, size_t n, bool api, uint32_t *out)
{
	uint64_t h = 0xcbf29ce484222325ull, *v;
	uint32_t idx;
	char *c;
	int rc;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
	rc = kmap__upsert(&g->str_map, h, n, &v);
	if (rc < 0)
		return -ENOMEM;
	if (!rc) {
		*out = (uint32_t)*v;
		return 0;
	}
	if (array_grow((void **)&g->strs, &g->cstrs, g->nstrs + 1, sizeof(*g->strs)))
		return -ENOMEM;
	c = malloc(n + 1);
	if (!c)
		return -ENOMEM;
	memcpy(c, s, n);
	c[n] = 0;
	idx = (uint32_t)g->nstrs++;
	*v = idx;
	g->strs[idx] = (struct tl_gstr){ .s = c, .len = (uint32_t)n, .norm = idx };
	if (api) {
		char norm[64];
		size_t k = api_norm(s, n < sizeof(norm) - 1 ? n : sizeof(norm) - 1, norm);
		uint32_t ni;

		if (k != n || memcmp(norm, s, n)) {
			if (gstr_intern(g, norm, k, false, &ni))
				return -ENOMEM;
			g->strs[idx].norm = g->strs[ni].norm;
		}
	}
	*out = idx;
	return 0;
}

static struct tl_gdev *gdev_get(struct tl_gpu *g, uint32_t device, uint32_t *idx)
{
	uint64_t *v;
	int rc = kmap__upsert(&g->dev_map, device, 0, &v);

	if (rc < 0)
		return NULL;
	if (rc) {
		if (array_grow((void **)&g->devs, &g->cdevs, g->ndevs + 1, sizeof(*g->devs)))
			return NULL;
		memset(&g->devs[g->ndevs], 0, sizeof(g->devs[0]));
		g->devs[g->ndevs].device = device;
		*v = g->ndevs++;
	}
	*idx = (uint32_t)*v;
	return &g->devs[*v];
}

static int gtrack_get(struct tl_gpu *g, uint32_t device, uint32_t pid, uint64_t stream,
		      uint8_t what, uint32_t *out)
{
	uint64_t *v;
	uint32_t di;
	int rc;

	rc = kmap__upsert(&g->track_map, (uint64_t)device << 32 | pid,
			  stream ^ ((uint64_t)what << 62), &v);
	if (rc < 0)
		return -ENOMEM;
	if (rc) {
		struct tl_gtrack *t;

		if (!gdev_get(g, device, &di) ||
		    array_grow((void **)&g->tracks, &g->ctracks, g->ntracks + 1, sizeof(*g->tracks)))
			return -ENOMEM;
		t = &g->tracks[g->ntracks];
		memset(t, 0, sizeof(*t));
		t->device = device;
		t->pid = pid;
		t->stream = stream;
		t->what = what;
		t->dev_idx = di;
		*v = g->ntracks++;
	}
	*out = (uint32_t)*v;
	return 0;
}

int tl_gact_add(struct tl_model *x, uint64_t off, uint64_t ts, uint64_t end, uint32_t device,
	     uint32_t pid, uint64_t stream, uint8_t what)
{
	struct tl_gpu *g = &x->gpu;
	struct tl_gact *a;
	uint32_t track;
	int err;

	err = gtrack_get(g, device, pid, stream, what, &track);
	if (err)
		return err;
	if (array_grow((void **)&g->acts, &g->cacts, g->nacts + 1, sizeof(*g->acts)))
		return -ENOMEM;
	a = &g->acts[g->nacts++];
	a->off = off;
	a->ts = ts;
	a->end = end > ts ? end : ts;
	a->track = track;
	a->lane = 0;
	g->devs[g->tracks[track].dev_idx].nact++;
	return 0;
}

/* A correlation id seen: by an activity (name: its kernel + 1) or an API call (src). */
static int gcorr_add(struct tl_gpu *g, uint32_t pid, uint32_t corr, bool act, uint32_t name,
		     uint32_t src)
{
	struct tl_gcorr *c;

	if (!corr)
		return 0;
	if (array_grow((void **)&g->corr, &g->ccorr, g->ncorr + 1, sizeof(*g->corr)))
		return -ENOMEM;
	c = &g->corr[g->ncorr];
	c->key = (uint64_t)pid << 32 | corr;
	c->nact = act;
	c->bound = (uint32_t)g->ncorr;     /* capture order, until collapsed */
	c->src = src;
	c->name = name;
	g->ncorr++;
	return 0;
}

/* Bytes of a variable-size name that the record really holds, cut at a NUL. */
size_t tl_rec_name_len(const struct gpuio_hdr *h, size_t name_off, const char *name,
			   size_t len, size_t max)
{
	size_t room = h->size > name_off ? h->size - name_off : 0;

	if (len > room)
		len = room;
	if (len > max)
		len = max;
	return strnlen(name, len);
}

static int on_gpu_act(void *ctx, const struct model_gpu_act *a)
{
	struct tl_model *x = ctx;
	struct tl_gpu *g = &x->gpu;
	uint32_t name = 0, pid = a->h->pid;
	uint64_t *v;
	int err;

	if (a->name_len) {
		err = gstr_intern(g, a->name, a->name_len, false, &name);
		if (err)
			return err;
		name++;
	}
	err = tl_gact_add(x, model_session__offset(x->s), a->ts, a->end, a->device, pid, a->stream,
		       GT_STREAM);
	if (!err)
		err = gcorr_add(g, pid, a->correlation, true, name, 0);
	/* which GPU a context is on: for syncs that name only their context */
	if (!err && kmap__upsert(&g->ctx_map, pid, a->context, &v) < 0)
		err = -ENOMEM;
	else if (!err)
		*v = a->device;
	return err;
}

static int ghost_add(struct tl_model *x, const struct gpuio_hdr *h, uint64_t end, uint32_t tid,
		     struct tl_ghost **out)
{
	struct tl_gpu *g = &x->gpu;
	struct tl_ghost *e;
	int err;

	if (tid) {
		err = tl_note_thread(x, h->pid, tid, NULL);
		if (err)
			return err;
	}
	if (array_grow((void **)&g->hosts, &g->chosts, g->nhosts + 1, sizeof(*g->hosts)))
		return -ENOMEM;
	e = &g->hosts[g->nhosts++];
	memset(e, 0, sizeof(*e));
	e->off = model_session__offset(x->s);
	e->ts = h->ts;
	e->end = end > h->ts ? end : h->ts;
	e->pid = h->pid;
	e->tid = tid;
	e->type = (uint8_t)h->type;
	*out = e;
	return 0;
}

static int on_cuda_api(void *ctx, const struct gpuio_cuda_api *c)
{
	struct tl_model *x = ctx;
	struct tl_gpu *g = &x->gpu;
	struct tl_ghost *e;
	uint32_t name;
	int err;

	err = gstr_intern(g, c->name, strnlen(c->name, sizeof(c->name)), true, &name);
	if (!err)
		err = ghost_add(x, &c->hdr, c->end_ns, c->hdr.tid ? c->hdr.tid : c->hdr.pid, &e);
	if (err)
		return err;
	e->name = name;
	e->source = c->source;
	e->kind = c->kind;
	if (tl_is_uprobe(c->source)) {
		if (array_grow((void **)&g->ups, &g->cups, g->nups + 1, sizeof(*g->ups)))
			return -ENOMEM;
		g->ups[g->nups] = (struct tl_gup){ .bytes = c->bytes, .stream = c->stream,
						    .func = c->func, .memcpy_kind = c->memcpy_kind };
		e->aux = (uint32_t)++g->nups;
		return 0;
	}
	return gcorr_add(g, c->hdr.pid, c->correlation, false, 0, (uint32_t)g->nhosts);
}

static int on_nvtx(void *ctx, const struct gpuio_nvtx_range *r)
{
	struct tl_ghost *e;

	return ghost_add(ctx, &r->hdr, r->end_ns, r->hdr.tid ? r->hdr.tid : r->hdr.pid, &e);
}

/* A sync with no thread: the layout looks for its API call, else its GPU. */
static int on_gpu_sync(void *ctx, const struct gpuio_gpu_sync *s)
{
	struct tl_ghost *e;

	return ghost_add(ctx, &s->hdr, s->end_ns, s->hdr.tid, &e);
}

static int on_gpu_overhead(void *ctx, const struct gpuio_gpu_overhead *o)
{
	struct tl_model *x = ctx;
	const struct gpuio_hdr *h = &o->hdr;
	struct tl_ghost *e;

	if (!h->tid && o->object_kind == 3 /* CUPTI_ACTIVITY_OBJECT_DEVICE */)
		return tl_gact_add(x, model_session__offset(x->s), h->ts, o->end_ns,
				(uint32_t)o->object_id, h->pid, 0, GT_OVERHEAD);
	return ghost_add(x, h, o->end_ns, h->tid ? h->tid : h->pid, &e);
}

static int on_gpu_sym(void *ctx, const struct gpuio_gpu_sym *y)
{
	struct tl_model *x = ctx;
	size_t n = tl_rec_name_len(&y->hdr, offsetof(struct gpuio_gpu_sym, name), y->name, y->name_len,
				GPUIO_GPU_NAME_MAX);
	uint64_t *v;
	uint32_t name;
	int err;

	if (!n)
		return 0;
	err = gstr_intern(&x->gpu, y->name, n, false, &name);
	if (err)
		return err;
	if (kmap__upsert(&x->gpu.sym_map, y->hdr.pid, y->addr, &v) < 0)
		return -ENOMEM;
	*v = name;
	return 0;
}

/* The GPU handlers of pass 1 (the collectors' status is the session's). */
void tl_gpu_handlers(struct model_tool *t)
{
	t->gpu_act = on_gpu_act;
	t->cuda_api = on_cuda_api;
	t->gpu_sync = on_gpu_sync;
	t->nvtx = on_nvtx;
	t->gpu_overhead = on_gpu_overhead;
	t->gpu_sym = on_gpu_sym;
}

void tl_gpu_free(struct tl_gpu *g)
{
	for (size_t i = 0; i < g->nstrs; i++)
		free(g->strs[i].s);
	for (size_t i = 0; i < g->ndevs; i++)
		free(g->devs[i].busy);
	free(g->strs);
	free(g->devs);
	free(g->acts);
	free(g->hosts);
	free(g->ups);
	free(g->corr);
	free(g->tracks);
	free(g->coll_keys);
	free(g->glanes);
	free(g->dev_order);
	free(g->aorder);
	free(g->horder);
	kmap__free(&g->track_map);
	kmap__free(&g->dev_map);
	kmap__free(&g->str_map);
	kmap__free(&g->sym_map);
	kmap__free(&g->ctx_map);
	memset(g, 0, sizeof(*g));
}
