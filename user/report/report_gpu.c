// SPDX-License-Identifier: MIT
/*
 * report_gpu.c — the GPU side of the report: busy intervals per GPU from the
 * GPU records, the idle gaps between them, and what the host did during each
 * gap (reads, writes and fsyncs, CUDA syncs, other).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include "model/calls.h"
#include "report/report_model.h"
#include "report/report_net.h"
#include "report/report_priv.h"
#include "report/report_sites.h"

static int gpu_get(struct rpt_model *m, uint32_t pid, uint32_t dev, struct rpt_gpu **out)
{
	struct rpt_gpu *g;
	uint64_t *v;
	int rc = kmap__upsert(&m->gpu_map, pid, dev, &v);

	if (rc < 0)
		return rc;
	if (rc) {
		if (array_grow((void **)&m->gpus, &m->cgpus, m->ngpus + 1, sizeof(*m->gpus)))
			return -ENOMEM;
		g = &m->gpus[m->ngpus];
		memset(g, 0, sizeof(*g));
		g->pid = pid;
		g->device = dev;
		if (rpt_series_new(m, &g->busy))
			return -ENOMEM;
		for (int c = 0; c < RPT_CAUSE_N; c++)
			if (rpt_series_new(m, &g->cause[c]))
				return -ENOMEM;
		for (int c = 0; c < RPT_LG_N; c++)
			if (rpt_series_new(m, &g->launcher[c]))
				return -ENOMEM;
		*v = m->ngpus++;
	}
	*out = &m->gpus[*v];
	return 0;
}

static int cmp_iv(const void *pa, const void *pb)
{
	const struct rpt_gpu_iv *a = pa, *b = pb;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	if (a->s != b->s)
		return a->s < b->s ? -1 : 1;
	return 0;
}

/* Sort the device intervals and merge those of one (pid, device) that overlap
 * or touch: what is left is busy periods, separated by the idle gaps. */
static void iv_compact(struct rpt_model *m)
{
	size_t o = 0;

	if (m->ngpu_ivs)
		qsort(m->gpu_ivs, m->ngpu_ivs, sizeof(*m->gpu_ivs), cmp_iv);
	for (size_t i = 0; i < m->ngpu_ivs; i++) {
		const struct rpt_gpu_iv *v = &m->gpu_ivs[i];
		struct rpt_gpu_iv *c = o ? &m->gpu_ivs[o - 1] : NULL;

		if (c && c->pid == v->pid && c->dev == v->dev && v->s <= c->e) {
			if (v->e > c->e)
				c->e = v->e;
		} else {
			m->gpu_ivs[o++] = *v;
		}
	}
	m->ngpu_ivs = o;
}

static int gpu_iv_add(struct rpt_model *m, struct rpt_gpu_iv **arr, size_t *n, size_t *cap,
		      uint64_t s, uint64_t e, uint32_t pid, uint32_t dev, uint8_t kind)
{
	struct rpt_gpu_iv *v;

	rpt_note_time(m, s, e);
	rpt_tl_fit(m, e);
	if (array_grow((void **)arr, cap, *n + 1, sizeof(**arr)))
		return -ENOMEM;
	v = &(*arr)[(*n)++];
	v->s = s;
	v->e = e;
	v->pid = pid;
	v->dev = dev;
	v->kind = kind;
	return 0;
}

/* A CUDA call: who launches (its state explains the GPU's gaps), and the syncs. */
static int on_cuda_api(void *ctx, const struct gpuio_cuda_api *a)
{
	struct rpt_model *m = ctx;
	const struct gpuio_hdr *h = &a->hdr;
	struct rpt_thread *t;
	int rc;

	if ((a->kind == GPUIO_API_LAUNCH || a->kind == GPUIO_API_GRAPH_LAUNCH) && h->tid) {
		rc = rpt_thread_get(m, h->pid, h->tid, h->ts, a->end_ns > h->ts ? a->end_ns : h->ts, &t);
		if (rc)
			return rc;
		t->launches++;
		/* kept to name, per idle gap, the thread whose launch ended it */
		if (array_grow((void **)&m->launches, &m->claunches, m->nlaunches + 1,
			       sizeof(*m->launches)))
			return -ENOMEM;
		m->launches[m->nlaunches++] = (struct rpt_gpu_iv){ .s = h->ts, .e = h->ts,
								   .pid = h->pid, .dev = h->tid };
		return 0;
	}
	if (a->kind != GPUIO_API_SYNC || a->end_ns < h->ts || !h->tid)
		return 0;
	rc = rpt_thread_get(m, h->pid, h->tid, h->ts, a->end_ns, &t);
	if (rc)
		return rc;
	t->cuda_sync_ns += a->end_ns - h->ts;
	return gpu_iv_add(m, &m->syncs, &m->nsyncs, &m->csyncs, h->ts, a->end_ns, h->pid, h->tid, 0);
}

static int on_gpu_sync(void *ctx, const struct gpuio_gpu_sync *s)
{
	struct rpt_model *m = ctx;
	const struct gpuio_hdr *h = &s->hdr;

	if (s->end_ns < h->ts || !h->tid)
		return 0;
	return gpu_iv_add(m, &m->syncs, &m->nsyncs, &m->csyncs, h->ts, s->end_ns, h->pid, h->tid, 0);
}

static int on_nvtx(void *ctx, const struct gpuio_nvtx_range *r)
{
	return rpt_nvtx_add(ctx, r);
}

bool rpt_kernel_is_collective(const char *name, size_t len)
{
	/* NCCL's kernels: ncclDevKernel_AllReduce_Sum_f32_RING_LL (2.19+),
	 * ncclKernel_AllReduce_RING_LL_Sum_float (older) */
	return (len >= 14 && !strncmp(name, "ncclDevKernel_", 14)) ||
	       (len >= 11 && !strncmp(name, "ncclKernel_", 11));
}

/* A kernel, copy or memset: busy time of its (process, GPU). */
static int on_gpu_act(void *ctx, const struct model_gpu_act *a)
{
	struct rpt_model *m = ctx;
	const struct gpuio_hdr *h = a->h;
	struct rpt_gpu *g;
	struct rpt_proc *p;
	int rc;

	if (a->end < h->ts)
		return 0;       /* nonsense interval: not activity */
	rc = rpt_proc_get(m, h->pid, &p);
	if (rc)
		return rc;
	p->gpu = true;
	rc = gpu_get(m, h->pid, a->device, &g);
	if (rc)
		return rc;
	if (!g->first || h->ts < g->first)
		g->first = h->ts;
	if (a->end > g->last)
		g->last = a->end;
	if (a->kind == MODEL_GPU_KERNEL) {
		g->kernels++;
		g->kernel_ns += a->end - h->ts;
		/* a sync of the process while one runs waits for the other ranks */
		if (rpt_kernel_is_collective(a->name, a->name_len) &&
		    (rc = gpu_iv_add(m, &m->colls, &m->ncolls, &m->ccolls, h->ts, a->end, h->pid,
				     a->device, a->kind)))
			return rc;
	} else if (a->kind == MODEL_GPU_MEMCPY) {
		g->copies++;
		g->copy_ns += a->end - h->ts;
		g->copy_bytes += a->bytes;
	} else {
		g->memsets++;
	}
	rc = gpu_iv_add(m, &m->gpu_ivs, &m->ngpu_ivs, &m->cgpu_ivs, h->ts, a->end, h->pid,
			a->device, a->kind);
	if (rc)
		return rc;
	if (m->ngpu_ivs >= m->gpu_compact_at) {
		/* back-to-back activity is one busy interval: memory follows the
		 * idle gaps, not the number of kernels */
		iv_compact(m);
		m->gpu_compact_at = m->ngpu_ivs * 2 > (1u << 16) ? m->ngpu_ivs * 2 : (1u << 16);
	}
	return 0;
}

/* The GPU handlers of pass 1 (the collectors' status is the session's). */
void rpt_gpu_handlers(struct model_tool *t)
{
	t->gpu_act = on_gpu_act;
	t->cuda_api = on_cuda_api;
	t->gpu_sync = on_gpu_sync;
	t->nvtx = on_nvtx;
}

/* ---- GPU busy time and idle gaps ---- */

static int by_pid_ts(const void *a, const void *b)
{
	const struct rpt_gpu_iv *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->s < y->s ? -1 : x->s > y->s;
}

/*
 * Each gap's launcher: the thread of g's process whose launch came last
 * before the gap ended (the GPU had nothing queued, so that launch fed the
 * work that ended it: in PyTorch, the main thread's forward pass after a
 * batch, not the autograd thread that launches the most); else the
 * process's most launching thread.
 */
static void gap_launchers(struct rpt_model *m, struct rpt_gpu *g)
{
	for (size_t k = g->gap0; k < g->gap0 + g->ngap; k++) {
		struct rpt_gap *gp = &m->gaps[k];
		size_t lo = 0, hi = m->nlaunches;

		/* the first launch after (pid, gp->e - 1) */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			const struct rpt_gpu_iv *v = &m->launches[mid];

			if (v->pid < g->pid || (v->pid == g->pid && v->s < gp->e))
				lo = mid + 1;
			else
				hi = mid;
		}
		gp->launcher_tid = lo && m->launches[lo - 1].pid == g->pid ?
				   m->launches[lo - 1].dev : g->launcher_tid;
	}
}

int rpt_gpu_build(struct rpt_model *m)
{
	size_t i = 0;

	iv_compact(m);
	if (m->nlaunches)
		qsort(m->launches, m->nlaunches, sizeof(*m->launches), by_pid_ts);
	while (i < m->ngpu_ivs) {
		struct rpt_gpu *g = &m->gpus[*kmap__get(&m->gpu_map, m->gpu_ivs[i].pid,
							 m->gpu_ivs[i].dev)];
		size_t j = i;

		/* compacted: one interval per busy period, gaps in between */
		g->gap0 = m->ngaps;
		for (; j < m->ngpu_ivs && m->gpu_ivs[j].pid == g->pid &&
		       m->gpu_ivs[j].dev == g->device; j++) {
			const struct rpt_gpu_iv *v = &m->gpu_ivs[j];

			g->busy_ns += v->e - v->s;
			rpt_tl_span(m, g->busy, v->s, v->e, 1.0);
			if (j > i) {
				struct rpt_gap *gp;

				if (array_grow((void **)&m->gaps, &m->cgaps, m->ngaps + 1,
					     sizeof(*m->gaps)))
					return -ENOMEM;
				gp = &m->gaps[m->ngaps++];
				memset(gp, 0, sizeof(*gp));
				gp->s = m->gpu_ivs[j - 1].e;
				gp->e = v->s;
				gp->gpu = (uint32_t)(g - m->gpus);
				gp->top = -1;
				gp->launcher_site = -1;
				g->idle_ns += gp->e - gp->s;
				g->ngaps++;
			}
		}
		g->ngap = m->ngaps - g->gap0;
		rpt_gpu_launcher(m, g);
		gap_launchers(m, g);
		m->gpu_idle_ns += g->idle_ns;
		m->gpu_busy_ns += g->busy_ns;
		m->gpu_span_ns += g->last - g->first;
		i = j;
	}
	/* the intervals are not needed any more */
	free(m->gpu_ivs);
	m->gpu_ivs = NULL;
	m->ngpu_ivs = m->cgpu_ivs = 0;
	/* the largest gaps, for the report's list (and their per-file detail) */
	for (size_t k = 0; k < m->ngaps; k++) {
		uint64_t len = m->gaps[k].e - m->gaps[k].s;
		size_t pos = m->ntop_gaps;

		while (pos > 0 && len > m->gaps[m->top_gaps[pos - 1]].e -
					m->gaps[m->top_gaps[pos - 1]].s)
			pos--;
		if (pos >= RPT_TOP_GAPS)
			continue;
		if (m->ntop_gaps < RPT_TOP_GAPS)
			m->ntop_gaps++;
		memmove(&m->top_gaps[pos + 1], &m->top_gaps[pos],
			(m->ntop_gaps - 1 - pos) * sizeof(m->top_gaps[0]));
		m->top_gaps[pos] = k;
	}
	for (size_t k = 0; k < m->ntop_gaps; k++)
		m->gaps[m->top_gaps[k]].top = (int)k;
	return 0;
}

/* First gap of gpu g whose end is after t (gaps of one GPU are disjoint). */
static size_t gap_first(const struct rpt_model *m, const struct rpt_gpu *g, uint64_t t)
{
	size_t lo = g->gap0, hi = g->gap0 + g->ngap;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->gaps[mid].e <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int cmp_seg_key(const void *pa, const void *pb)
{
	const struct rpt_seg *a = pa, *b = pb;

	if (a->cause != b->cause)
		return a->cause < b->cause ? -1 : 1;
	if (a->file != b->file)
		return a->file < b->file ? -1 : 1;
	return a->s < b->s ? -1 : a->s > b->s;
}

/* Too many host segments in one gap: merge those of one (cause, file) that
 * touch, then those closer than a growing tolerance, then forget files. */
static void gap_compact(struct rpt_model *m, struct rpt_gap *gp)
{
	uint64_t tol = 0;
	bool by_file = true;

	for (;;) {
		size_t o = 0;

		if (gp->nsegs)
			qsort(gp->segs, gp->nsegs, sizeof(*gp->segs), cmp_seg_key);
		for (size_t i = 0; i < gp->nsegs; i++) {
			struct rpt_seg *c = &gp->segs[i];

			if (o && gp->segs[o - 1].cause == c->cause &&
			    gp->segs[o - 1].file == c->file && c->s <= gp->segs[o - 1].e + tol) {
				if (c->e > gp->segs[o - 1].e)
					gp->segs[o - 1].e = c->e;
			} else {
				gp->segs[o++] = *c;
			}
		}
		gp->nsegs = (uint32_t)o;
		if (gp->nsegs <= RPT_GAP_SEGS_MAX / 2)
			break;
		gp->approx = true;
		m->gaps_approx = true;
		if (tol > gp->e - gp->s && by_file) {
			for (size_t i = 0; i < gp->nsegs; i++)
				gp->segs[i].file = 0;
			by_file = false;
			tol = 0;
			continue;
		}
		tol = tol ? tol * 2 : 1000;
	}
}

static int gap_add(struct rpt_model *m, struct rpt_gap *gp, uint64_t s, uint64_t e,
		   uint8_t cause, uint32_t file)
{
	struct rpt_seg *sg;

	if (gp->nsegs >= RPT_GAP_SEGS_MAX)
		gap_compact(m, gp);
	if (gp->nsegs >= gp->csegs) {
		uint32_t nc = gp->csegs ? gp->csegs * 2 : 8;
		void *p = realloc(gp->segs, nc * sizeof(*gp->segs));

		if (!p)
			return -ENOMEM;
		gp->segs = p;
		gp->csegs = nc;
	}
	sg = &gp->segs[gp->nsegs++];
	sg->s = s;
	sg->e = e;
	sg->cause = cause;
	sg->file = file;
	return 0;
}

/* Clip host interval [s, e) of pid to the idle gaps of pid's GPUs. Returns
 * the total overlap (ns), or -ENOMEM as a negative value. */
static int64_t host_clip(struct rpt_model *m, uint32_t pid, uint64_t s, uint64_t e,
			 uint8_t cause, uint32_t file)
{
	int64_t total = 0;

	if (e <= s)
		return 0;
	for (size_t gi = 0; gi < m->ngpus; gi++) {
		const struct rpt_gpu *g = &m->gpus[gi];

		if (g->pid != pid || e <= g->first || s >= g->last)
			continue;
		for (size_t k = gap_first(m, g, s); k < g->gap0 + g->ngap && m->gaps[k].s < e; k++) {
			struct rpt_gap *gp = &m->gaps[k];
			uint64_t a = s > gp->s ? s : gp->s, b = e < gp->e ? e : gp->e;

			if (b <= a)
				continue;
			if (gap_add(m, gp, a, b, cause, file))
				return -ENOMEM;
			total += (int64_t)(b - a);
		}
	}
	return total;
}

/* Pass 2, one call: a blocking file call of a GPU process, clipped to its GPU's gaps. */
static int pass2_vfs(void *ctx, const struct gpuio_vfs_event *e)
{
	struct rpt_model *m = ctx;
	const struct gpuio_hdr *h = &e->hdr;
	uint64_t *pv, *fv;
	uint32_t file = 0;
	enum rpt_cause c;
	int64_t ov;

	/* socket calls are the network's, not file I/O (report_net.h) */
	if (gpuio_call__is_async(e->call) || rpt_net__owns(m, e))
		return 0;
	pv = kmap__get(&m->proc_map, h->pid, 0);
	if (!pv || !m->procs[*pv].gpu)
		return 0;
	c = rpt_call_cause(e->call);
	fv = (e->ino || e->dev) ? kmap__get(&m->file_map, e->dev, e->ino) : NULL;
	if (fv)
		file = (uint32_t)*fv + 1;
	ov = host_clip(m, h->pid, h->ts, rpt_end_of(h->ts, e->dur_ns), c,
		       c == RPT_CAUSE_READ ? file : 0);
	if (ov < 0)
		return (int)ov;
	if (ov > 0 && c == RPT_CAUSE_READ) {
		m->gap_reads_ns += (uint64_t)ov;
		if (fv) {
			m->files[*fv].gpu_idle_read_ns += (uint64_t)ov;
			m->files[*fv].gpu_idle_miss_pages += e->cache_miss_pages;
		}
	}
	return 0;
}

int rpt_pass2(struct rpt_model *m)
{
	const struct model_tool t = { .ctx = m, .vfs = pass2_vfs };
	int rc = model_session__replay(m->s, &t, 1ull << GPUIO_REC_VFS);

	if (rc == -EBADMSG) {
		snprintf(m->err, sizeof(m->err), "%s: %s (the capture changed while reading it)",
			 m->path, model_session__error(m->s));
		return rc;
	}
	if (rc)
		return rc;
	for (size_t i = 0; i < m->nsyncs; i++) {
		const struct rpt_gpu_iv *v = &m->syncs[i];

		if (host_clip(m, v->pid, v->s, v->e, RPT_CAUSE_CUDA_SYNC, 0) < 0)
			return -ENOMEM;
	}
	return 0;
}

struct edge {
	uint64_t t;
	int8_t d;
	uint8_t cause;
};

static int cmp_edge(const void *pa, const void *pb)
{
	const struct edge *a = pa, *b = pb;

	return a->t < b->t ? -1 : a->t > b->t;
}

static int cmp_gap_file(const void *pa, const void *pb)
{
	const struct rpt_gap_file *a = pa, *b = pb;

	if (a->file != b->file)
		return a->file < b->file ? -1 : 1;
	return 0;
}

/* Split each gap into causes: at each instant the highest-priority cause
 * among the host segments covering it, else "other". */
int rpt_gaps_resolve(struct rpt_model *m)
{
	struct edge *ed = NULL;
	size_t ced = 0;
	int rc = 0;

	for (size_t k = 0; k < m->ngaps; k++) {
		struct rpt_gap *gp = &m->gaps[k];
		struct rpt_gpu *g = &m->gpus[gp->gpu];
		uint32_t cnt[RPT_CAUSE_N] = { 0 };
		uint64_t prev = gp->s;
		size_t n = 0;

		if (array_grow((void **)&ed, &ced, 2 * (size_t)gp->nsegs + 1, sizeof(*ed))) {
			rc = -ENOMEM;
			break;
		}
		for (uint32_t i = 0; i < gp->nsegs; i++) {
			ed[n++] = (struct edge){ gp->segs[i].s, 1, gp->segs[i].cause };
			ed[n++] = (struct edge){ gp->segs[i].e, -1, gp->segs[i].cause };
		}
		ed[n++] = (struct edge){ gp->e, 0, RPT_CAUSE_NONE };
		if (n)
			qsort(ed, n, sizeof(*ed), cmp_edge);
		for (size_t i = 0; i < n; i++) {
			if (ed[i].t > prev) {
				int c = 0;
				uint64_t end = ed[i].t < gp->e ? ed[i].t : gp->e;

				while (c < RPT_CAUSE_NONE && !cnt[c])
					c++;
				if (end > prev) {
					gp->cause_ns[c] += end - prev;
					rpt_tl_span(m, g->cause[c], prev, end, 1.0);
				}
				prev = ed[i].t;
			}
			if (ed[i].d > 0)
				cnt[ed[i].cause]++;
			else if (ed[i].d < 0 && cnt[ed[i].cause])
				cnt[ed[i].cause]--;
		}
		for (int c = 0; c < RPT_CAUSE_N; c++) {
			g->cause_ns[c] += gp->cause_ns[c];
			m->cause_ns[c] += gp->cause_ns[c];
		}
		if (gp->top >= 0 && gp->nsegs) {
			/* per-file read time in this gap: the few largest */
			struct rpt_gap_file *tmp = calloc(gp->nsegs, sizeof(*tmp));
			size_t nt = 0, o = 0;

			if (!tmp) {
				rc = -ENOMEM;
				break;
			}
			for (uint32_t i = 0; i < gp->nsegs; i++)
				if (gp->segs[i].cause == RPT_CAUSE_READ && gp->segs[i].file)
					tmp[nt++] = (struct rpt_gap_file){ gp->segs[i].file,
						gp->segs[i].e - gp->segs[i].s };
			if (nt)
				qsort(tmp, nt, sizeof(*tmp), cmp_gap_file);
			for (size_t i = 0; i < nt; i++) {
				if (o && tmp[o - 1].file == tmp[i].file)
					tmp[o - 1].ns += tmp[i].ns;
				else
					tmp[o++] = tmp[i];
			}
			for (size_t i = 0; i < o; i++) {
				struct rpt_gap_file *top = m->top_gap_files[gp->top];

				for (int j = 0; j < RPT_GAP_FILES; j++) {
					if (tmp[i].ns > top[j].ns) {
						memmove(&top[j + 1], &top[j],
							(RPT_GAP_FILES - 1 - j) * sizeof(*top));
						top[j] = tmp[i];
						break;
					}
				}
			}
			free(tmp);
		}
		free(gp->segs);
		gp->segs = NULL;
		gp->nsegs = gp->csegs = 0;
	}
	free(ed);
	return rc;
}

/* GPU idle time of pid's devices inside [s, e). */
uint64_t rpt_gpu_idle_in(const struct rpt_model *m, uint32_t pid, uint64_t s, uint64_t e)
{
	uint64_t total = 0;

	for (size_t gi = 0; gi < m->ngpus; gi++) {
		const struct rpt_gpu *g = &m->gpus[gi];

		if (g->pid != pid)
			continue;
		for (size_t k = gap_first(m, g, s); k < g->gap0 + g->ngap && m->gaps[k].s < e; k++) {
			uint64_t a = s > m->gaps[k].s ? s : m->gaps[k].s;
			uint64_t b = e < m->gaps[k].e ? e : m->gaps[k].e;

			if (b > a)
				total += b - a;
		}
	}
	return total;
}

/* The thread of g's process that made the most launches (0: none seen). */
uint32_t rpt_gpu_launcher(struct rpt_model *m, struct rpt_gpu *g)
{
	uint64_t best = 0;

	g->launcher_tid = 0;
	for (size_t i = 0; i < m->nthreads; i++) {
		const struct rpt_thread *t = &m->threads[i];

		if (t->pid == g->pid && t->launches > best) {
			best = t->launches;
			g->launcher_tid = t->tid;
		}
	}
	g->launcher_launches = best;
	return g->launcher_tid;
}

/*
 * The idle gaps that pid/tid launched the end of, split by its state then
 * (tw: its time by enum rpt_tw, normalised, disjoint); what no state covers
 * (before the thread's first one) is RPT_TW_NOSTATE.
 */
const char *const rpt_lg_names[RPT_LG_N] = {
	[RPT_LG_DATA] = "waiting_for_data", [RPT_LG_CPU] = "on_cpu", [RPT_LG_RUNNABLE] = "runnable",
	[RPT_LG_SYNC] = "gpu_sync", [RPT_LG_OTHER] = "other",
};

int rpt_lg_of(int tw)
{
	switch (tw) {
	case RPT_TW_DATA: return RPT_LG_DATA;
	case RPT_TW_CPU: return RPT_LG_CPU;
	case RPT_TW_RUNNABLE: return RPT_LG_RUNNABLE;
	case RPT_TW_GPU: return RPT_LG_SYNC;
	case RPT_TW_RANKS: return RPT_LG_SYNC;
	default: return RPT_LG_OTHER;
	}
}

/* The launcher's spans of one state inside a gap, onto its GPU's timeline */
static void launcher_series(struct rpt_model *m, struct rpt_gpu *g, const struct rpt_spans *v,
			    uint64_t s, uint64_t e, struct rpt_series *out)
{
	size_t lo = 0, hi = v->n;

	while (lo < hi) {               /* the first span ending after s */
		size_t mid = (lo + hi) / 2;

		if (v->a[mid].e <= s)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < v->n && v->a[i].s < e; i++)
		rpt_tl_span(m, out, v->a[i].s > s ? v->a[i].s : s, v->a[i].e < e ? v->a[i].e : e, 1.0);
	(void)g;
}

void rpt_gaps_by_launcher(struct rpt_model *m, uint32_t pid, uint32_t tid, const struct rpt_spans *tw)
{
	for (size_t k = 0; k < m->ngaps; k++) {
		struct rpt_gap *gp = &m->gaps[k];
		struct rpt_gpu *g = &m->gpus[gp->gpu];
		uint64_t len = gp->e - gp->s, in = 0;

		if (gp->launcher_tid != tid || g->pid != pid)
			continue;
		for (int c = 0; c < RPT_TW_N; c++) {
			gp->launch_ns[c] = rpt_spans_overlap(&tw[c], gp->s, gp->e);
			in += gp->launch_ns[c];
			if (gp->launch_ns[c])
				launcher_series(m, g, &tw[c], gp->s, gp->e, g->launcher[rpt_lg_of(c)]);
		}
		gp->launch_ns[RPT_TW_NOSTATE] = len > in ? len - in : 0;
	}
	/* thread states, and a GPU whose launches name its launchers */
	for (size_t g = 0; g < m->ngpus; g++)
		if (m->gpus[g].launcher_tid)
			m->launch_states = true;
}

/* Per GPU and in all, the launchers' states; a gap whose launcher was not
 * timed has none. */
void rpt_gaps_launch_totals(struct rpt_model *m)
{
	if (!m->launch_states)
		return;
	for (size_t k = 0; k < m->ngaps; k++) {
		struct rpt_gap *gp = &m->gaps[k];
		struct rpt_gpu *g = &m->gpus[gp->gpu];
		uint64_t in = 0;

		for (int c = 0; c < RPT_LS_N; c++)
			in += gp->launch_ns[c];
		if (gp->launcher_tid)
			gp->launcher_site = rpt_sites__held(m, gp->launcher_tid, gp->s, gp->e);
		if (!in)
			gp->launch_ns[RPT_TW_NOSTATE] = gp->e - gp->s;
		for (int c = 0; c < RPT_LS_N; c++) {
			g->launch_ns[c] += gp->launch_ns[c];
			m->launch_ns[c] += gp->launch_ns[c];
		}
	}
}
