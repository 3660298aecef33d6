// SPDX-License-Identifier: MIT
/*
 * tl_gpu_layout.c — after pass 1, the GPU side laid out: correlations
 * collapsed, syncs placed, uprobe records CUPTI also saw merged, host slices
 * nested (overlap lanes), stream lanes sorted, busy fractions bucketed.
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

/* ---- GPU: layout ---- */

static int cmp_corr(const void *pa, const void *pb)
{
	const struct tl_gcorr *a = pa, *b = pb;

	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return a->bound < b->bound ? -1 : a->bound > b->bound;
}

const struct tl_gcorr *tl_gcorr_find(const struct tl_gpu *g, uint32_t pid, uint32_t corr)
{
	uint64_t key = (uint64_t)pid << 32 | corr;
	size_t lo = 0, hi = g->ncorr;

	if (!corr)
		return NULL;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (g->corr[mid].key < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < g->ncorr && g->corr[lo].key == key ? &g->corr[lo] : NULL;
}

/*
 * One entry per (pid, correlation): how many activities name it, its first
 * kernel's name, and the API call that draws the arrows — the runtime call
 * when CUPTI saw both a runtime and a driver call with that id.
 */
static void gpu_collapse_corr(struct tl_gpu *g)
{
	size_t n = 0;

	if (g->ncorr > 1)
		qsort(g->corr, g->ncorr, sizeof(*g->corr), cmp_corr);
	for (size_t i = 0; i < g->ncorr; i++) {
		const struct tl_gcorr cv = g->corr[i], *c = &cv;   /* o may be g->corr[i] */
		struct tl_gcorr *o;

		if (!n || g->corr[n - 1].key != c->key) {
			o = &g->corr[n++];
			*o = (struct tl_gcorr){ .key = c->key };
		} else {
			o = &g->corr[n - 1];
		}
		o->nact += c->nact;
		if (!o->name && c->name)
			o->name = c->name;
		if (c->src && (!o->src || (g->hosts[o->src - 1].source != GPUIO_API_RUNTIME &&
					   g->hosts[c->src - 1].source == GPUIO_API_RUNTIME)))
			o->src = c->src;
	}
	g->ncorr = n;
	/* an id is usually named twice (call + activity): give half back */
	if (n && n < g->ccorr / 2) {
		struct tl_gcorr *c = realloc(g->corr, n * sizeof(*c));

		if (c) {
			g->corr = c;
			g->ccorr = n;
		}
	}
}

/* A sync record read back: what placing it needs. */
static int sync_read(void *ctx, const struct gpuio_gpu_sync *s)
{
	*(struct gpuio_gpu_sync *)ctx = *s;
	return 0;
}

/* Syncs CUPTI gave no thread: the thread of their API call, else their GPU. */
static int gpu_place_syncs(struct tl_model *x)
{
	struct tl_gpu *g = &x->gpu;
	struct gpuio_gpu_sync s;
	const struct model_tool read = { .ctx = &s, .gpu_sync = sync_read };

	for (size_t i = 0; i < g->nhosts; i++) {
		struct tl_ghost *e = &g->hosts[i];
		const struct tl_gcorr *c;
		uint64_t *dv;
		int err;

		if (e->type != GPUIO_REC_GPU_SYNC || e->tid)
			continue;
		err = model_session__read_at(x->s, e->off, GPUIO_REC_GPU_SYNC, &read);
		if (err)
			return err;
		c = tl_gcorr_find(g, e->pid, s.correlation);
		if (c && c->src) {
			e->tid = g->hosts[c->src - 1].tid;
			continue;
		}
		dv = kmap__get(&g->ctx_map, e->pid, s.context);
		e->flags |= GH_DEVICE;
		err = tl_gact_add(x, e->off, e->ts, e->end, dv ? (uint32_t)*dv : UINT32_MAX, e->pid,
			       s.stream, GT_SYNC);
		if (err)
			return err;
	}
	return 0;
}

static const struct tl_ghost *cmp_hosts;

/* by thread, then start, longest first, then nesting rank, then capture order */
static unsigned host_rank(const struct tl_ghost *e)
{
	switch (e->type) {
	case GPUIO_REC_NVTX:
		return 0;
	case GPUIO_REC_CUDA_API:
		return e->source == GPUIO_API_RUNTIME || e->source == GPUIO_API_UPROBE_RT ? 1 : 2;
	case GPUIO_REC_GPU_SYNC:
		return 3;
	default:
		return 4;
	}
}

static int cmp_host_time(const void *pa, const void *pb)
{
	const struct tl_ghost *a = &cmp_hosts[*(const uint32_t *)pa];
	const struct tl_ghost *b = &cmp_hosts[*(const uint32_t *)pb];
	unsigned ra, rb;

	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	if (a->end != b->end)
		return a->end > b->end ? -1 : 1;
	ra = host_rank(a), rb = host_rank(b);
	if (ra != rb)
		return ra < rb ? -1 : 1;
	return a->off < b->off ? -1 : a->off > b->off;
}

static int cmp_host_thread(const void *pa, const void *pb)
{
	const struct tl_ghost *a = &cmp_hosts[*(const uint32_t *)pa];
	const struct tl_ghost *b = &cmp_hosts[*(const uint32_t *)pb];

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return cmp_host_time(pa, pb);
}

static uint64_t gpu_slack(const struct tl_model *x, uint32_t pid)
{
	const struct model_collector *c = model_session__collector_of(x->s, pid);
	uint64_t u = c ? c->info.uncertainty_ns : 0;

	/* the uprobe brackets CUPTI's interval; clocks may differ by the alignment */
	return 2000 + (u < 1000000 ? u : 1000000);
}

static bool api_same_call(const struct tl_gpu *g, const struct tl_ghost *u,
			  const struct tl_ghost *c)
{
	if ((u->source == GPUIO_API_UPROBE_RT) != (c->source == GPUIO_API_RUNTIME))
		return false;
	if (g->strs[u->name].norm == g->strs[c->name].norm)
		return true;
	return u->kind == c->kind && u->kind != GPUIO_API_OTHER;
}

/*
 * A call both CUPTI and a uprobe saw appears once: the CUPTI record (it has
 * the correlation id), with what the uprobe read from the arguments. The
 * uprobe's [entry, exit] brackets CUPTI's interval of the same call on the
 * same thread (within the slack).
 */
static void gpu_dedup(struct tl_model *x, const uint32_t *idx, size_t n)
{
	struct tl_gpu *g = &x->gpu;

	for (size_t i = 0; i < n; i++) {
		struct tl_ghost *u = &g->hosts[idx[i]];
		struct tl_ghost *best = NULL;
		uint64_t slack, lo, bestd = UINT64_MAX;
		size_t j;

		if (u->type != GPUIO_REC_CUDA_API || !tl_is_uprobe(u->source))
			continue;
		slack = gpu_slack(x, u->pid);
		lo = u->ts > slack ? u->ts - slack : 0;
		/* entries of one thread are contiguous and sorted by start */
		for (j = i; j > 0; j--) {
			const struct tl_ghost *p = &g->hosts[idx[j - 1]];

			if (p->pid != u->pid || p->tid != u->tid || p->ts < lo)
				break;
		}
		for (; j < n; j++) {
			struct tl_ghost *c = &g->hosts[idx[j]];
			uint64_t d;

			if (c->pid != u->pid || c->tid != u->tid || c->ts > u->end + slack)
				break;
			if (c == u || c->type != GPUIO_REC_CUDA_API || tl_is_uprobe(c->source) ||
			    (c->flags & GH_MERGED) || c->ts + slack < u->ts ||
			    c->end > u->end + slack || !api_same_call(g, u, c))
				continue;
			d = (c->ts > u->ts ? c->ts - u->ts : u->ts - c->ts) +
			    (c->end > u->end ? c->end - u->end : u->end - c->end);
			if (d < bestd) {
				bestd = d;
				best = c;
			}
		}
		if (best) {
			u->flags |= GH_DROPPED;
			best->flags |= GH_MERGED;
			best->aux = u->aux;
			g->merged++;
		}
	}
}

struct nest_lane {
	uint64_t *end;
	size_t n, cap;
	uint32_t out_tid;
};

/*
 * Host slices of one thread must nest: each goes on the thread if it nests
 * with what is open there, else on the first overlap lane where it does
 * (a new one when none).
 */
static int gpu_nest(struct tl_model *x, const uint32_t *idx, size_t n)
{
	struct tl_gpu *g = &x->gpu;
	struct nest_lane *lanes = NULL;
	size_t nl = 0, cl = 0, ninit = 0;
	int err = 0;

	for (size_t i = 0; i < n && !err; i++) {
		struct tl_ghost *e = &g->hosts[idx[i]];
		size_t l;

		if (i == 0 || e->pid != g->hosts[idx[i - 1]].pid ||
		    e->tid != g->hosts[idx[i - 1]].tid) {
			for (size_t k = 0; k < nl; k++)
				lanes[k].n = 0;
			nl = 0;
		}
		for (l = 0; l < nl; l++) {
			struct nest_lane *ln = &lanes[l];

			while (ln->n && ln->end[ln->n - 1] <= e->ts)
				ln->n--;
			if (!ln->n || e->end <= ln->end[ln->n - 1])
				break;
		}
		if (l == nl) {
			if (nl == ninit) {
				if (array_grow((void **)&lanes, &cl, nl + 1, sizeof(*lanes))) {
					err = -ENOMEM;
					break;
				}
				memset(&lanes[nl], 0, sizeof(lanes[0]));
				ninit++;
			}
			lanes[l].n = 0;
			nl++;
			lanes[l].out_tid = 0;
			if (l > 0) {
				struct tl_glane *gl;

				if (array_grow((void **)&g->glanes, &g->cglanes, g->nglanes + 1,
					     sizeof(*g->glanes))) {
					err = -ENOMEM;
					break;
				}
				gl = &g->glanes[g->nglanes];
				gl->pid = e->pid;
				gl->tid = e->tid;
				gl->n = (uint32_t)l;
				gl->out_tid = TL_GHOST_TID_BASE + x->map.ghost_base + (uint32_t)g->nglanes;
				lanes[l].out_tid = gl->out_tid;
				g->nglanes++;
			}
		}
		if (array_grow((void **)&lanes[l].end, &lanes[l].cap, lanes[l].n + 1, sizeof(uint64_t))) {
			err = -ENOMEM;
			break;
		}
		lanes[l].end[lanes[l].n++] = e->end;
		e->lane_tid = lanes[l].out_tid;
		if (l > 0)
			g->overlap_slices++;
	}
	for (size_t k = 0; k < ninit; k++)
		free(lanes[k].end);
	free(lanes);
	return err;
}

static const struct tl_gact *cmp_acts;
static const struct tl_gtrack *cmp_tracks;

static int cmp_track(const void *pa, const void *pb)
{
	const struct tl_gtrack *a = &cmp_tracks[*(const uint32_t *)pa];
	const struct tl_gtrack *b = &cmp_tracks[*(const uint32_t *)pb];

	if (a->device != b->device)
		return a->device < b->device ? -1 : 1;
	if (a->what != b->what)
		return a->what < b->what ? -1 : 1;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return a->stream < b->stream ? -1 : a->stream > b->stream;
}

static int cmp_act_time(const void *pa, const void *pb)
{
	const struct tl_gact *a = &cmp_acts[*(const uint32_t *)pa];
	const struct tl_gact *b = &cmp_acts[*(const uint32_t *)pb];

	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	if (a->end != b->end)
		return a->end < b->end ? -1 : 1;
	return a->off < b->off ? -1 : a->off > b->off;
}

static int cmp_act_track(const void *pa, const void *pb)
{
	const struct tl_gact *a = &cmp_acts[*(const uint32_t *)pa];
	const struct tl_gact *b = &cmp_acts[*(const uint32_t *)pb];

	if (a->track != b->track)
		return a->track < b->track ? -1 : 1;
	return cmp_act_time(pa, pb);
}

static int cmp_act_dev(const void *pa, const void *pb)
{
	const struct tl_gact *a = &cmp_acts[*(const uint32_t *)pa];
	const struct tl_gact *b = &cmp_acts[*(const uint32_t *)pb];
	uint32_t da = cmp_tracks[a->track].dev_idx, db = cmp_tracks[b->track].dev_idx;

	if (da != db)
		return da < db ? -1 : 1;
	return cmp_act_time(pa, pb);
}

static uint32_t *iota(size_t n)
{
	uint32_t *idx = malloc((n ? n : 1) * sizeof(*idx));

	for (size_t i = 0; idx && i < n; i++)
		idx[i] = (uint32_t)i;
	return idx;
}

/* Tracks in (device, kind, pid, stream) order; GPUs numbered by device id. */
static int gpu_sort_tracks(struct tl_gpu *g, const struct tl_remap *map)
{
	uint32_t *idx = iota(g->ntracks), *pos = malloc((g->ntracks ? g->ntracks : 1) * sizeof(*pos));
	struct tl_gtrack *sorted = malloc((g->ntracks ? g->ntracks : 1) * sizeof(*sorted));
	int err = 0;

	g->dev_order = iota(g->ndevs);
	if (!idx || !pos || !sorted || !g->dev_order) {
		err = -ENOMEM;
		goto out;
	}
	cmp_tracks = g->tracks;
	qsort(idx, g->ntracks, sizeof(*idx), cmp_track);
	for (size_t i = 0; i < g->ntracks; i++) {
		sorted[i] = g->tracks[idx[i]];
		pos[idx[i]] = (uint32_t)i;
	}
	if (g->ntracks)
		memcpy(g->tracks, sorted, g->ntracks * sizeof(*sorted));
	for (size_t i = 0; i < g->nacts; i++)
		g->acts[i].track = pos[g->acts[i].track];
	kmap__free(&g->track_map);      /* its values index the old order */
	/* GPUs by device id (UINT32_MAX, unknown, last); processes per GPU */
	for (size_t i = 0; i < g->ntracks; i++) {
		struct tl_gdev *d = &g->devs[g->tracks[i].dev_idx];

		if (!d->npids || d->last_pid != g->tracks[i].pid) {
			bool seen = false;

			for (size_t k = 0; k < i && !seen; k++)
				seen = g->tracks[k].dev_idx == g->tracks[i].dev_idx &&
				       g->tracks[k].pid == g->tracks[i].pid;
			if (!seen)
				d->npids++;
			d->last_pid = g->tracks[i].pid;
		}
	}
	{
		uint32_t k = 0;

		/* tracks are sorted by device: their devices come in device order */
		for (size_t i = 0; i < g->ntracks; i++) {
			struct tl_gdev *d = &g->devs[g->tracks[i].dev_idx];

			if (i == 0 || g->tracks[i - 1].dev_idx != g->tracks[i].dev_idx) {
				d->index = k;
				g->dev_order[k++] = g->tracks[i].dev_idx;
			}
		}
		g->ndevs = k;   /* every device has a track */
	}
	(void)map;
out:
	free(idx);
	free(pos);
	free(sorted);
	return err;
}

static void busy_add(struct tl_gpu *g, uint32_t dev, uint64_t s, uint64_t e)
{
	double *busy = g->devs[dev].busy;
	size_t k0 = (size_t)((s - g->t0) / g->bucket_ns), k1 = (size_t)((e - g->t0) / g->bucket_ns);

	for (size_t q = k0; q <= k1 && q < g->nbuckets; q++) {
		uint64_t bs = g->t0 + q * g->bucket_ns, be = bs + g->bucket_ns;
		uint64_t os = s > bs ? s : bs, oe = e < be ? e : be;

		if (oe > os)
			busy[q] += (double)(oe - os);
	}
}

/* Busy time per GPU: the union of its activities' intervals, per bucket. */
static int gpu_busy(struct tl_gpu *g, const uint32_t *idx, size_t n)
{
	uint64_t tmin = UINT64_MAX, tmax = 0, span;
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		const struct tl_gact *a = &g->acts[idx[i]];

		if (g->tracks[a->track].what != GT_STREAM)
			continue;
		if (a->ts < tmin)
			tmin = a->ts;
		if (a->end > tmax)
			tmax = a->end;
	}
	if (tmin > tmax)
		return 0;
	span = tmax - tmin;
	g->t0 = tmin;
	g->bucket_ns = span / MAX_BUCKETS + (span % MAX_BUCKETS != 0);
	if (g->bucket_ns < MIN_BUCKET_NS)
		g->bucket_ns = MIN_BUCKET_NS;
	g->nbuckets = (size_t)(span / g->bucket_ns) + 1;
	for (size_t i = 0; i < g->ndevs; i++) {
		g->devs[i].busy = calloc(g->nbuckets, sizeof(double));
		if (!g->devs[i].busy)
			return -ENOMEM;
	}
	while (k < n) {
		uint32_t dev = g->tracks[g->acts[idx[k]].track].dev_idx;
		uint64_t s = 0, e = 0;
		bool open = false;

		/* idx is sorted by (GPU, start): merge overlapping intervals */
		for (; k < n && g->tracks[g->acts[idx[k]].track].dev_idx == dev; k++) {
			const struct tl_gact *a = &g->acts[idx[k]];

			if (g->tracks[a->track].what != GT_STREAM)
				continue;
			if (open && a->ts <= e) {
				if (a->end > e)
					e = a->end;
				continue;
			}
			if (open)
				busy_add(g, dev, s, e);
			s = a->ts;
			e = a->end;
			open = true;
		}
		if (open)
			busy_add(g, dev, s, e);
	}
	return 0;
}

int tl_gpu_layout(struct tl_model *x)
{
	struct tl_gpu *g = &x->gpu;
	struct tl_lanes lanes = { 0 };
	uint32_t *idx = NULL, next_tid = 0;
	size_t n = 0;
	int err;

	if (!tl_model__gpu_any(x))
		return 0;
	gpu_collapse_corr(g);
	err = gpu_place_syncs(x);
	if (err)
		return err;

	/* host side: merge uprobe duplicates, then nest per thread */
	idx = malloc((g->nhosts ? g->nhosts : 1) * sizeof(*idx));
	if (!idx)
		return -ENOMEM;
	for (size_t i = 0; i < g->nhosts; i++)
		if (!(g->hosts[i].flags & GH_DEVICE))
			idx[n++] = (uint32_t)i;
	cmp_hosts = g->hosts;
	qsort(idx, n, sizeof(*idx), cmp_host_thread);
	gpu_dedup(x, idx, n);
	{
		size_t k = 0;

		for (size_t i = 0; i < n; i++)
			if (!(g->hosts[idx[i]].flags & GH_DROPPED))
				idx[k++] = idx[i];
		n = k;
	}
	err = gpu_nest(x, idx, n);
	if (err)
		goto out;
	qsort(idx, n, sizeof(*idx), cmp_host_time);
	g->horder = idx;
	g->nhorder = n;
	idx = NULL;

	/* device side: lanes per stream, busy time per GPU */
	err = gpu_sort_tracks(g, &x->map);
	if (err)
		goto out;
	idx = iota(g->nacts);
	if (!idx) {
		err = -ENOMEM;
		goto out;
	}
	cmp_acts = g->acts;
	cmp_tracks = g->tracks;
	qsort(idx, g->nacts, sizeof(*idx), cmp_act_track);
	for (size_t i = 0; i < g->nacts; i++) {
		struct tl_gact *a = &g->acts[idx[i]];
		struct tl_gtrack *t = &g->tracks[a->track];

		if (i == 0 || a->track != g->acts[idx[i - 1]].track)
			tl_lanes__reset(&lanes);
		err = tl_lanes__assign(&lanes, a->ts, a->end, &a->lane);
		if (err)
			goto out;
		if (a->lane > t->nlanes)
			t->nlanes = a->lane;
	}
	for (size_t i = 0; i < g->ntracks; i++) {
		struct tl_gtrack *t = &g->tracks[i];

		t->tid0 = TL_GPU_TID_BASE + x->map.gtid_base + next_tid;
		t->rank = next_tid;
		next_tid += t->nlanes;
	}
	g->nlane_tids = next_tid;
	qsort(idx, g->nacts, sizeof(*idx), cmp_act_dev);
	err = gpu_busy(g, idx, g->nacts);
	if (err)
		goto out;
	qsort(idx, g->nacts, sizeof(*idx), cmp_act_time);
	g->aorder = idx;
	idx = NULL;
out:
	tl_lanes__free(&lanes);
	free(idx);
	return err;
}
