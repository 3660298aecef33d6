// SPDX-License-Identifier: MIT
/*
 * export_model.c — capture -> the event model both exporters render.
 * See export_model.h; the JSON schema is described in export_json.c.
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
#include "lib/json_writer.h"
#include "lib/log.h"

#define MAX_BUCKETS     2000
#define MIN_BUCKET_NS   1000000ull

/* ---- (u64, u64) -> u64 open-addressing map ---- */

uint64_t exp_mix64(uint64_t x)
{
	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 29;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 32;
	return x;
}

static uint64_t kmix(uint64_t a, uint64_t b)
{
	/* full avalanche: keys are dense runs ((tid, seq), (dev, ino)) that a
	 * weaker mix turns into long linear-probing clusters */
	return exp_mix64(exp_mix64(a + 0x9e3779b97f4a7c15ull) ^ b);
}

static struct kslot *kmap__slot(const struct kmap *m, uint64_t a, uint64_t b)
{
	size_t i = kmix(a, b) & (m->cap - 1);

	while (m->slots[i].used && (m->slots[i].a != a || m->slots[i].b != b))
		i = (i + 1) & (m->cap - 1);
	return &m->slots[i];
}

uint64_t *kmap__get(const struct kmap *m, uint64_t a, uint64_t b)
{
	struct kslot *s;

	if (!m->cap)
		return NULL;
	s = kmap__slot(m, a, b);
	return s->used ? &s->val : NULL;
}

int kmap__upsert(struct kmap *m, uint64_t a, uint64_t b, uint64_t **val)
{
	struct kslot *s;

	if ((m->n + 1) * 2 > m->cap) {
		struct kmap bigger = { .cap = m->cap ? m->cap * 2 : 64 };

		bigger.slots = calloc(bigger.cap, sizeof(*bigger.slots));
		if (!bigger.slots)
			return -ENOMEM;
		for (size_t i = 0; i < m->cap; i++)
			if (m->slots[i].used)
				*kmap__slot(&bigger, m->slots[i].a, m->slots[i].b) = m->slots[i];
		bigger.n = m->n;
		free(m->slots);
		*m = bigger;
	}
	s = kmap__slot(m, a, b);
	*val = &s->val;
	if (s->used)
		return 0;
	s->used = 1;
	s->a = a;
	s->b = b;
	s->val = 0;
	m->n++;
	return 1;
}

void kmap__free(struct kmap *m)
{
	free(m->slots);
	m->slots = NULL;
	m->cap = m->n = 0;
}

int exp_grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t ncap = *cap ? *cap : 64;
	void *p;

	if (need <= *cap)
		return 0;
	while (ncap < need)
		ncap *= 2;
	p = realloc(*arr, ncap * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = ncap;
	return 0;
}

/* ---- args ---- */

static struct exp_arg *arg_add(struct exp_args *a, const char *key, uint8_t type)
{
	struct exp_arg *g;

	/* the lists are fixed by the code below: never more than EXP_ARGS_MAX */
	if (a->n >= EXP_ARGS_MAX)
		a->n = EXP_ARGS_MAX - 1;
	g = &a->a[a->n++];
	g->key = key;
	g->type = type;
	g->intern = false;
	g->stable = false;
	g->len = 0;
	return g;
}

static void arg_u64(struct exp_args *a, const char *k, uint64_t v) { arg_add(a, k, EA_U64)->v.u = v; }
static void arg_s64(struct exp_args *a, const char *k, int64_t v) { arg_add(a, k, EA_S64)->v.s = v; }
static void arg_bool(struct exp_args *a, const char *k, bool v) { arg_add(a, k, EA_BOOL)->v.b = v; }
static void arg_us(struct exp_args *a, const char *k, int64_t ns) { arg_add(a, k, EA_US)->v.s = ns; }
static void arg_null(struct exp_args *a, const char *k) { arg_add(a, k, EA_NULL); }

static void arg_str(struct exp_args *a, const char *k, const char *s, size_t len, bool intern)
{
	struct exp_arg *g = arg_add(a, k, EA_STR);

	g->v.str = s;
	g->len = (uint32_t)len;
	g->intern = intern;
}

/* A string that lives in the args' scratch space (formatted names). */
static void arg_copy(struct exp_args *a, const char *k, const char *s, bool intern)
{
	size_t n = strlen(s);
	char *d;

	if (a->used + n + 1 > sizeof(a->scratch))
		n = a->used + 1 < sizeof(a->scratch) ? sizeof(a->scratch) - a->used - 1 : 0;
	d = a->scratch + a->used;
	memcpy(d, s, n);
	d[n] = 0;
	a->used += n + 1;
	arg_str(a, k, d, n, intern);
}

static void args_reset(struct exp_args *a)
{
	a->n = 0;
	a->used = 0;
}

/* ---- pass 1 ---- */

static int note_thread(struct exp_model *x, uint32_t pid, uint32_t tid, struct thread_ent **out)
{
	uint64_t *v;
	int rc;

	rc = kmap__upsert(&x->proc_map, pid, 0, &v);
	if (rc < 0)
		return rc;
	if (rc) {
		if (exp_grow((void **)&x->procs, &x->cprocs, x->nprocs + 1, sizeof(*x->procs)))
			return -ENOMEM;
		memset(&x->procs[x->nprocs], 0, sizeof(x->procs[0]));
		x->procs[x->nprocs].pid = pid;
		*v = x->nprocs++;
	}
	rc = kmap__upsert(&x->thread_map, pid, tid, &v);
	if (rc < 0)
		return rc;
	if (rc) {
		if (exp_grow((void **)&x->threads, &x->cthreads, x->nthreads + 1,
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
		if (exp_grow((void **)&x->devs, &x->cdevs, x->ndevs + 1, sizeof(*x->devs)))
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
	if (rc < 0 || (rc && exp_grow((void **)paths, cap, *n + 1, sizeof(**paths)))) {
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

static bool comm_set(const char comm[16])
{
	return comm[0] != 0;
}

static int on_proc(struct exp_model *x, const struct gpuio_proc_event *p)
{
	struct thread_ent *t;
	struct proc_ent *pe;
	uint8_t rank = RANK_NONE;
	int err;

	err = note_thread(x, p->hdr.pid, p->hdr.tid, &t);
	if (err)
		return err;
	pe = proc_get(x, p->hdr.pid);
	if (p->kind == GPUIO_PROC_EXEC)
		rank = RANK_EXEC;
	else if (p->kind == GPUIO_PROC_ATTACH)
		rank = RANK_ATTACH;
	else if (p->kind == GPUIO_PROC_FORK)
		rank = RANK_FORK;
	if (rank && rank >= pe->rank && comm_set(p->comm)) {
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
		pe->rank = rank;
		memcpy(pe->comm, p->comm, sizeof(pe->comm));
	}
	if (comm_set(p->comm) && (p->kind != GPUIO_PROC_EXIT || !t->has_comm)) {
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

	if (!d || exp_grow((void **)&x->blks, &x->cblks, x->nblks + 1, sizeof(*x->blks)))
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

	seen = &x->seen_threads[exp_mix64(key) & (sizeof(x->seen_threads) / 8 - 1)];
	if (*seen != key + 1) {
		err = note_thread(x, e->hdr.pid, e->hdr.tid, NULL);
		if (err)
			return err;
		*seen = key + 1;
	}
	if (gpuio_call__is_async(e->call)) {
		struct async_ent *a;

		if (exp_grow((void **)&x->asyncs, &x->casyncs, x->nasyncs + 1, sizeof(*x->asyncs)))
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

struct gcache;
static void gcache__free(struct gcache *c);

/* ---- GPU: pass 1 ---- */

static const char *const memcpy_kind_names[] = {
	"unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD", "DtoA", "DtoD", "HtoH", "PtoP",
};
static const char *const memcpy_slice_names[] = {
	"memcpy", "memcpy HtoD", "memcpy DtoH", "memcpy HtoA", "memcpy AtoH", "memcpy AtoA",
	"memcpy AtoD", "memcpy DtoA", "memcpy DtoD", "memcpy HtoH", "memcpy PtoP",
};
static const char *const mem_kind_names[] = {
	"unknown", "pageable", "pinned", "device", "array", "managed", "device_static",
	"managed_static",
};
static const char *const api_source_names[] = {
	"unknown", "runtime", "driver", "uprobe_runtime", "uprobe_driver",
};
static const char *const api_kind_names[] = {
	"other", "launch", "memcpy", "memset", "sync", "graph_launch", "malloc", "free",
};
static const char *const sync_names[] = {
	"synchronize", "event synchronize", "stream wait event", "stream synchronize",
	"context synchronize",
};
static const char *const object_kind_names[] = {
	"unknown", "process", "thread", "device", "context", "stream",
};

#define NAME_OF(tab, i) ((size_t)(i) < sizeof(tab) / sizeof(tab[0]) ? tab[i] : NULL)

static bool is_uprobe(unsigned source)
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
static int gstr_intern(struct exp_gpu *g, const char *s, size_t n, bool api, uint32_t *out)
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
	if (exp_grow((void **)&g->strs, &g->cstrs, g->nstrs + 1, sizeof(*g->strs)))
		return -ENOMEM;
	c = malloc(n + 1);
	if (!c)
		return -ENOMEM;
	memcpy(c, s, n);
	c[n] = 0;
	idx = (uint32_t)g->nstrs++;
	*v = idx;
	g->strs[idx] = (struct gstr){ .s = c, .len = (uint32_t)n, .norm = idx };
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

static struct gpu_dev *gdev_get(struct exp_gpu *g, uint32_t device, uint32_t *idx)
{
	uint64_t *v;
	int rc = kmap__upsert(&g->dev_map, device, 0, &v);

	if (rc < 0)
		return NULL;
	if (rc) {
		if (exp_grow((void **)&g->devs, &g->cdevs, g->ndevs + 1, sizeof(*g->devs)))
			return NULL;
		memset(&g->devs[g->ndevs], 0, sizeof(g->devs[0]));
		g->devs[g->ndevs].device = device;
		*v = g->ndevs++;
	}
	*idx = (uint32_t)*v;
	return &g->devs[*v];
}

static int gtrack_get(struct exp_gpu *g, uint32_t device, uint32_t pid, uint64_t stream,
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
		struct gpu_track *t;

		if (!gdev_get(g, device, &di) ||
		    exp_grow((void **)&g->tracks, &g->ctracks, g->ntracks + 1, sizeof(*g->tracks)))
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

static int gact_add(struct exp_model *x, uint64_t ts, uint64_t end, uint32_t device, uint32_t pid,
		    uint64_t stream, uint8_t what)
{
	struct exp_gpu *g = &x->gpu;
	struct gact_ent *a;
	uint32_t track;
	int err;

	err = gtrack_get(g, device, pid, stream, what, &track);
	if (err)
		return err;
	if (exp_grow((void **)&g->acts, &g->cacts, g->nacts + 1, sizeof(*g->acts)))
		return -ENOMEM;
	a = &g->acts[g->nacts++];
	a->off = x->rec_off;
	a->ts = ts;
	a->end = end > ts ? end : ts;
	a->track = track;
	a->lane = 0;
	g->devs[g->tracks[track].dev_idx].nact++;
	return 0;
}

/* A correlation id seen: by an activity (name: its kernel + 1) or an API call (src). */
static int gcorr_add(struct exp_gpu *g, uint32_t pid, uint32_t corr, bool act, uint32_t name,
		     uint32_t src)
{
	struct gcorr_ent *c;

	if (!corr)
		return 0;
	if (exp_grow((void **)&g->corr, &g->ccorr, g->ncorr + 1, sizeof(*g->corr)))
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
static size_t rec_name_len(const struct gpuio_hdr *h, size_t name_off, const char *name,
			   size_t len, size_t max)
{
	size_t room = h->size > name_off ? h->size - name_off : 0;

	if (len > room)
		len = room;
	if (len > max)
		len = max;
	return strnlen(name, len);
}

static int on_gpu_act(struct exp_model *x, const struct gpuio_hdr *h)
{
	struct exp_gpu *g = &x->gpu;
	uint64_t end, stream, ctx, *v;
	uint32_t device, corr, name = 0;
	int err;

	if (h->type == GPUIO_REC_GPU_KERNEL) {
		const struct gpuio_gpu_kernel *k = (const void *)h;
		size_t n = rec_name_len(h, offsetof(struct gpuio_gpu_kernel, name), k->name,
					k->name_len, GPUIO_GPU_NAME_MAX);

		end = k->end_ns, stream = k->stream, ctx = k->context;
		corr = k->correlation, device = k->device;
		if (n) {
			err = gstr_intern(g, k->name, n, false, &name);
			if (err)
				return err;
			name++;
		}
		g->kernels++;
	} else if (h->type == GPUIO_REC_GPU_MEMCPY) {
		const struct gpuio_gpu_memcpy *c = (const void *)h;

		end = c->end_ns, stream = c->stream, ctx = c->context;
		corr = c->correlation, device = c->device;
		g->memcpys++;
	} else {
		const struct gpuio_gpu_memset *s = (const void *)h;

		end = s->end_ns, stream = s->stream, ctx = s->context;
		corr = s->correlation, device = s->device;
		g->memsets++;
	}
	err = gact_add(x, h->ts, end, device, h->pid, stream, GT_STREAM);
	if (!err)
		err = gcorr_add(g, h->pid, corr, true, name, 0);
	/* which GPU a context is on: for syncs that name only their context */
	if (!err && kmap__upsert(&g->ctx_map, h->pid, ctx, &v) < 0)
		err = -ENOMEM;
	else if (!err)
		*v = device;
	return err;
}

static int ghost_add(struct exp_model *x, const struct gpuio_hdr *h, uint64_t end, uint32_t tid,
		     struct ghost_ent **out)
{
	struct exp_gpu *g = &x->gpu;
	struct ghost_ent *e;
	int err;

	if (tid) {
		err = note_thread(x, h->pid, tid, NULL);
		if (err)
			return err;
	}
	if (exp_grow((void **)&g->hosts, &g->chosts, g->nhosts + 1, sizeof(*g->hosts)))
		return -ENOMEM;
	e = &g->hosts[g->nhosts++];
	memset(e, 0, sizeof(*e));
	e->off = x->rec_off;
	e->ts = h->ts;
	e->end = end > h->ts ? end : h->ts;
	e->pid = h->pid;
	e->tid = tid;
	e->type = (uint8_t)h->type;
	*out = e;
	return 0;
}

static int on_cuda_api(struct exp_model *x, const struct gpuio_cuda_api *c)
{
	struct exp_gpu *g = &x->gpu;
	struct ghost_ent *e;
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
	g->api++;
	if (is_uprobe(c->source)) {
		if (exp_grow((void **)&g->ups, &g->cups, g->nups + 1, sizeof(*g->ups)))
			return -ENOMEM;
		g->ups[g->nups] = (struct gup_ent){ .bytes = c->bytes, .stream = c->stream,
						    .func = c->func, .memcpy_kind = c->memcpy_kind };
		e->aux = (uint32_t)++g->nups;
		return 0;
	}
	return gcorr_add(g, c->hdr.pid, c->correlation, false, 0, (uint32_t)g->nhosts);
}

static int on_gpu_host(struct exp_model *x, const struct gpuio_hdr *h)
{
	struct exp_gpu *g = &x->gpu;
	struct ghost_ent *e;

	if (h->type == GPUIO_REC_NVTX) {
		g->nvtx++;
		return ghost_add(x, h, ((const struct gpuio_nvtx_range *)h)->end_ns,
				 h->tid ? h->tid : h->pid, &e);
	}
	if (h->type == GPUIO_REC_GPU_SYNC) {
		/* no thread: the layout looks for its API call, else its GPU */
		g->syncs++;
		return ghost_add(x, h, ((const struct gpuio_gpu_sync *)h)->end_ns, h->tid, &e);
	}
	{
		const struct gpuio_gpu_overhead *o = (const void *)h;

		g->overheads++;
		if (!h->tid && o->object_kind == 3 /* CUPTI_ACTIVITY_OBJECT_DEVICE */)
			return gact_add(x, h->ts, o->end_ns, (uint32_t)o->object_id, h->pid, 0,
					GT_OVERHEAD);
		return ghost_add(x, h, o->end_ns, h->tid ? h->tid : h->pid, &e);
	}
}

static int on_gpu_sym(struct exp_model *x, const struct gpuio_gpu_sym *y)
{
	size_t n = rec_name_len(&y->hdr, offsetof(struct gpuio_gpu_sym, name), y->name, y->name_len,
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

/* The latest status of each collector (counters in it are cumulative). */
static int on_gpu_info(struct exp_model *x, const struct gpuio_gpu_info *i)
{
	struct exp_gpu *g = &x->gpu;
	struct gcoll *c;
	uint64_t *v;
	int rc = kmap__upsert(&g->coll_map, i->hdr.pid, 0, &v);

	if (rc < 0)
		return -ENOMEM;
	if (rc) {
		if (exp_grow((void **)&g->colls, &g->ccolls, g->ncolls + 1, sizeof(*g->colls)))
			return -ENOMEM;
		memset(&g->colls[g->ncolls], 0, sizeof(g->colls[0]));
		snprintf(g->colls[g->ncolls].key, sizeof(g->colls[0].key), "%u", i->hdr.pid);
		*v = g->ncolls++;
	}
	c = &g->colls[*v];
	c->info = *i;
	c->nrec++;
	/* the reason an UNAVAILABLE record gave stays when a FINAL one follows */
	if (i->reason[0]) {
		memcpy(c->reason, i->reason, sizeof(i->reason));
		c->reason[sizeof(i->reason)] = 0;
	}
	return 0;
}

/* One GPU record of pass 1. */
static int gpu_record(struct exp_model *x, const struct gpuio_hdr *h)
{
	x->gpu.any = true;
	switch (h->type) {
	case GPUIO_REC_GPU_INFO:
		return on_gpu_info(x, (const void *)h);
	case GPUIO_REC_GPU_KERNEL:
	case GPUIO_REC_GPU_MEMCPY:
	case GPUIO_REC_GPU_MEMSET:
		return on_gpu_act(x, h);
	case GPUIO_REC_CUDA_API:
		return on_cuda_api(x, (const void *)h);
	case GPUIO_REC_GPU_SYNC:
	case GPUIO_REC_NVTX:
	case GPUIO_REC_GPU_OVERHEAD:
		return on_gpu_host(x, h);
	case GPUIO_REC_GPU_SYM:
		return on_gpu_sym(x, (const void *)h);
	default:
		return 0;
	}
}

static void gpu_free(struct exp_gpu *g)
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
	free(g->colls);
	free(g->glanes);
	free(g->dev_order);
	free(g->aorder);
	free(g->horder);
	kmap__free(&g->track_map);
	kmap__free(&g->dev_map);
	kmap__free(&g->str_map);
	kmap__free(&g->sym_map);
	kmap__free(&g->ctx_map);
	kmap__free(&g->coll_map);
	gcache__free(g->cache);
	memset(g, 0, sizeof(*g));
}

/* One record of pass 1: everything but the VFS events themselves. */
static int meta_record(struct exp_model *x, const struct gpuio_hdr *h)
{
	int err = 0;

	x->records++;
	x->counts[h->type <= GPUIO_REC_GPU_SYM ? h->type : 0]++;
	switch (h->type) {
	case GPUIO_REC_GPU_INFO ... GPUIO_REC_GPU_SYM:
		err = gpu_record(x, h);
		break;
	case GPUIO_REC_VFS:
		err = on_vfs_meta(x, (const void *)h);
		x->vfs_ordinal++;
		break;
	case GPUIO_REC_BLOCK:
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

static int pass_meta_fast(struct exp_model *x);
static void model_reset_tables(struct exp_model *x);

/* Pass 1 through the capture reader: its checks, its messages, its cut. */
static int pass_meta(struct exp_model *x)
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
	x->counts[h->type <= GPUIO_REC_GPU_SYM ? h->type : 0]++;
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

/* ---- layout: lanes, buckets, sort order ---- */

static int cmp_blk(const void *pa, const void *pb)
{
	const struct blk_ent *a = pa, *b = pb;

	if (a->disk != b->disk)
		return a->disk < b->disk ? -1 : 1;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	if (a->complete != b->complete)
		return a->complete < b->complete ? -1 : 1;
	return a->sector < b->sector ? -1 : a->sector > b->sector;
}

static uint64_t blk_end(const struct blk_ent *b)
{
	return b->complete > b->ts ? b->complete : b->ts;
}

/*
 * Greedy lanes: a slice takes the lowest-numbered lane whose last slice ended
 * by its start, else a new lane. Busy lanes sit in a min-heap by end time,
 * free ones in a min-heap by number, so deep queues cost O(log lanes).
 */
struct lane_busy {
	uint64_t end;
	uint32_t lane;
};

struct lanes {
	struct lane_busy *busy;
	uint32_t *free;
	size_t nbusy, cbusy, nfree, cfree;
	uint32_t nlanes;
};

static void lanes__reset(struct lanes *l)
{
	l->nbusy = l->nfree = 0;
	l->nlanes = 0;
}

static void lanes__free(struct lanes *l)
{
	free(l->busy);
	free(l->free);
}

static void busy_down(struct lane_busy *h, size_t n, size_t i)
{
	for (;;) {
		size_t c = 2 * i + 1;
		struct lane_busy t;

		if (c >= n)
			return;
		if (c + 1 < n && h[c + 1].end < h[c].end)
			c++;
		if (h[i].end <= h[c].end)
			return;
		t = h[i], h[i] = h[c], h[c] = t;
		i = c;
	}
}

static void free_down(uint32_t *h, size_t n, size_t i)
{
	for (;;) {
		size_t c = 2 * i + 1;
		uint32_t t;

		if (c >= n)
			return;
		if (c + 1 < n && h[c + 1] < h[c])
			c++;
		if (h[i] <= h[c])
			return;
		t = h[i], h[i] = h[c], h[c] = t;
		i = c;
	}
}

static int lanes__assign(struct lanes *l, uint64_t start, uint64_t end, uint32_t *lane)
{
	size_t i;

	/* lanes that finished by start become free */
	while (l->nbusy && l->busy[0].end <= start) {
		if (exp_grow((void **)&l->free, &l->cfree, l->nfree + 1, sizeof(*l->free)))
			return -ENOMEM;
		i = l->nfree++;
		l->free[i] = l->busy[0].lane;
		for (; i && l->free[(i - 1) / 2] > l->free[i]; i = (i - 1) / 2) {
			uint32_t t = l->free[i];

			l->free[i] = l->free[(i - 1) / 2];
			l->free[(i - 1) / 2] = t;
		}
		l->busy[0] = l->busy[--l->nbusy];
		busy_down(l->busy, l->nbusy, 0);
	}
	if (exp_grow((void **)&l->busy, &l->cbusy, l->nbusy + 1, sizeof(*l->busy)))
		return -ENOMEM;
	if (l->nfree) {
		*lane = l->free[0];
		l->free[0] = l->free[--l->nfree];
		free_down(l->free, l->nfree, 0);
	} else {
		*lane = ++l->nlanes;
	}
	i = l->nbusy++;
	l->busy[i] = (struct lane_busy){ .end = end, .lane = *lane };
	for (; i && l->busy[(i - 1) / 2].end > l->busy[i].end; i = (i - 1) / 2) {
		struct lane_busy t = l->busy[i];

		l->busy[i] = l->busy[(i - 1) / 2];
		l->busy[(i - 1) / 2] = t;
	}
	return 0;
}

static int cmp_dev_idx(const void *pa, const void *pb, void *arg)
{
	const struct dev_ent *devs = arg;
	uint32_t a = devs[*(const uint32_t *)pa].dev, b = devs[*(const uint32_t *)pb].dev;

	return a < b ? -1 : a > b;
}

static int layout_block(struct exp_model *x)
{
	uint64_t tmin = UINT64_MAX, tmax = 0, span;
	struct lanes lanes = { 0 };
	int err = 0;

	/* disks with requests, numbered in dev_t order */
	x->disk_order = calloc(x->ndevs ? x->ndevs : 1, sizeof(*x->disk_order));
	if (!x->disk_order)
		return -ENOMEM;
	for (size_t i = 0; i < x->ndevs; i++)
		if (x->devs[i].nreq)
			x->disk_order[x->ndisks++] = (uint32_t)i;
	if (x->ndisks > 1)
		qsort_r(x->disk_order, x->ndisks, sizeof(*x->disk_order), cmp_dev_idx, x->devs);
	for (size_t i = 0; i < x->ndisks; i++)
		x->devs[x->disk_order[i]].index = (uint32_t)i;

	for (size_t i = 0; i < x->nblks; i++)
		x->blks[i].disk = x->devs[x->blks[i].dev_idx].index;
	if (x->nblks > 1)
		qsort(x->blks, x->nblks, sizeof(*x->blks), cmp_blk);
	for (size_t i = 0; i < x->nblks; i++) {
		struct blk_ent *b = &x->blks[i];

		if (i == 0 || b->disk != x->blks[i - 1].disk)
			lanes__reset(&lanes);
		err = lanes__assign(&lanes, b->ts, blk_end(b), &b->lane);
		if (err)
			goto out;
		if (b->lane > x->devs[b->dev_idx].nlanes)
			x->devs[b->dev_idx].nlanes = b->lane;
		if (b->ts < tmin)
			tmin = b->ts;
		if (blk_end(b) > tmax)
			tmax = blk_end(b);
	}
	if (!x->nblks)
		goto out;

	/* throughput buckets: <= MAX_BUCKETS of >= 1 ms over all requests */
	span = tmax - tmin;
	x->t0 = tmin;
	x->bucket_ns = span / MAX_BUCKETS + (span % MAX_BUCKETS != 0);
	if (x->bucket_ns < MIN_BUCKET_NS)
		x->bucket_ns = MIN_BUCKET_NS;
	x->nbuckets = (size_t)(span / x->bucket_ns) + 1;
	if (x->nbuckets > MAX_BUCKETS)
		x->nbuckets = MAX_BUCKETS;
	for (size_t i = 0; i < x->ndisks; i++) {
		struct dev_ent *d = &x->devs[x->disk_order[i]];

		d->bucket_bytes = calloc(x->nbuckets * 2, sizeof(double));
		if (!d->bucket_bytes) {
			err = -ENOMEM;
			goto out;
		}
	}
	for (size_t i = 0; i < x->nblks; i++) {
		const struct blk_ent *b = &x->blks[i];
		double *bb = x->devs[b->dev_idx].bucket_bytes;
		uint64_t s = b->issue >= b->ts && b->issue <= blk_end(b) ? b->issue : b->ts;
		uint64_t e = blk_end(b);
		size_t k0, k1;
		int col;

		if (b->op == GPUIO_BLK_READ)
			col = 0;
		else if (b->op == GPUIO_BLK_WRITE)
			col = 1;
		else
			continue;
		k0 = (size_t)((s - x->t0) / x->bucket_ns);
		k1 = (size_t)((e - x->t0) / x->bucket_ns);
		if (k1 >= x->nbuckets)
			k1 = x->nbuckets - 1;
		if (k0 > k1)
			k0 = k1;
		if (k0 == k1 || e == s) {
			bb[k1 * 2 + col] += b->bytes;
			continue;
		}
		/* spread over the service time, in proportion to the overlap */
		for (size_t k = k0; k <= k1; k++) {
			uint64_t bs = x->t0 + k * x->bucket_ns, be = bs + x->bucket_ns;
			uint64_t os = s > bs ? s : bs, oe = e < be ? e : be;

			if (k == k1)
				oe = e;
			if (oe > os)
				bb[k * 2 + col] += (double)b->bytes * (double)(oe - os) / (double)(e - s);
		}
	}
out:
	lanes__free(&lanes);
	return err;
}

static int cmp_async(const void *pa, const void *pb, void *arg)
{
	const struct async_ent *as = arg;
	const struct async_ent *a = &as[*(const uint32_t *)pa], *b = &as[*(const uint32_t *)pb];

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->end < b->end ? -1 : a->end > b->end;
}

/* io_uring requests overlap on their thread: give them lanes per process. */
static int layout_async(struct exp_model *x)
{
	struct lanes lanes = { 0 };
	uint32_t *idx;
	int err = 0;

	if (!x->nasyncs)
		return 0;
	idx = malloc(x->nasyncs * sizeof(*idx));
	if (!idx)
		return -ENOMEM;
	for (size_t i = 0; i < x->nasyncs; i++)
		idx[i] = (uint32_t)i;
	qsort_r(idx, x->nasyncs, sizeof(*idx), cmp_async, x->asyncs);
	for (size_t i = 0; i < x->nasyncs; i++) {
		struct async_ent *a = &x->asyncs[idx[i]];
		uint32_t before, lane;

		if (i == 0 || a->pid != x->asyncs[idx[i - 1]].pid)
			lanes__reset(&lanes);
		before = lanes.nlanes;
		err = lanes__assign(&lanes, a->start, a->end, &lane);
		if (err)
			break;
		if (lanes.nlanes > before) {
			struct lane_ent *l;

			if (exp_grow((void **)&x->ulanes, &x->culanes, x->nulanes + 1,
				     sizeof(*x->ulanes))) {
				err = -ENOMEM;
				break;
			}
			l = &x->ulanes[x->nulanes];
			l->pid = a->pid;
			l->n = lane;
			l->tid = EXP_URING_TID_BASE + x->map.uring_base + (uint32_t)x->nulanes;
			x->nulanes++;
		}
		/* lanes of one process are contiguous in ulanes[], numbered from 1 */
		a->lane_tid = x->ulanes[x->nulanes - lanes.nlanes + lane - 1].tid;
	}
	free(idx);
	lanes__free(&lanes);
	return err;
}

/* ---- GPU: reading records back ---- */

#define GC_SLOTS 16
#define GC_BLOCK (256u << 10)

/*
 * GPU records are written in time order, not capture order: a few windows
 * of the file, least recently used replaced, follow the few places (CUPTI
 * buffers) that time order jumps between.
 */
struct gcache {
	int fd;
	uint64_t tick;
	struct {
		unsigned char *buf;
		uint64_t base, used;
		size_t len;
	} s[GC_SLOTS];
	union {
		struct gpuio_hdr h;
		unsigned char b[GPUIO_REC_SIZE_MAX + 16];
	} rec;
};

static void gcache__free(struct gcache *c)
{
	if (!c)
		return;
	for (int i = 0; i < GC_SLOTS; i++)
		free(c->s[i].buf);
	if (c->fd >= 0)
		close(c->fd);
	free(c);
}

static ssize_t pread_full(int fd, void *buf, size_t n, uint64_t off)
{
	size_t got = 0;

	while (got < n) {
		ssize_t k = pread(fd, (char *)buf + got, n - got, (off_t)(off + got));

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		if (k == 0)
			break;
		got += (size_t)k;
	}
	return (ssize_t)got;
}

/* The record at off, checked against what pass 1 saw (type; 0: any GPU record). */
static int gread(struct exp_model *x, uint64_t off, unsigned type, const struct gpuio_hdr **out)
{
	struct gcache *c = x->gpu.cache;
	struct gpuio_hdr h;
	int slot = -1;
	size_t size;

	if (!c) {
		c = calloc(1, sizeof(*c));
		if (!c)
			return -ENOMEM;
		c->fd = open(x->path, O_RDONLY | O_CLOEXEC);
		if (c->fd < 0) {
			snprintf(x->p2_err, sizeof(x->p2_err), "cannot open it again: %s",
				 strerror(errno));
			free(c);
			return -EBADMSG;
		}
		x->gpu.cache = c;
	}
	for (int i = 0; i < GC_SLOTS; i++) {
		if (c->s[i].buf && off >= c->s[i].base &&
		    off + sizeof(h) <= c->s[i].base + c->s[i].len) {
			slot = i;
			break;
		}
	}
	if (slot < 0) {
		ssize_t k;

		slot = 0;
		for (int i = 1; i < GC_SLOTS; i++)
			if (c->s[i].used < c->s[slot].used)
				slot = i;
		if (!c->s[slot].buf) {
			c->s[slot].buf = malloc(GC_BLOCK);
			if (!c->s[slot].buf)
				return -ENOMEM;
		}
		c->s[slot].base = off & ~4095ull;
		k = pread_full(c->fd, c->s[slot].buf, GC_BLOCK, c->s[slot].base);
		c->s[slot].len = k > 0 ? (size_t)k : 0;
		if (k < 0 || off + sizeof(h) > c->s[slot].base + c->s[slot].len)
			goto changed;
	}
	c->s[slot].used = ++c->tick;
	memcpy(&h, c->s[slot].buf + (off - c->s[slot].base), sizeof(h));
	size = h.size;
	if ((type ? h.type != type : h.type < GPUIO_REC_GPU_INFO || h.type > GPUIO_REC_GPU_SYM) ||
	    size < sizeof(h) || size > GPUIO_REC_SIZE_MAX ||
	    size < gpuio_rec_min_size(h.type))
		goto changed;
	if (off + size <= c->s[slot].base + c->s[slot].len)
		memcpy(c->rec.b, c->s[slot].buf + (off - c->s[slot].base), size);
	else if (pread_full(c->fd, c->rec.b, size, off) != (ssize_t)size)
		goto changed;
	memset(c->rec.b + size, 0, 16);
	*out = &c->rec.h;
	return 0;
changed:
	snprintf(x->p2_err, sizeof(x->p2_err), "the GPU record at offset %llu is no longer what "
		 "it was", (unsigned long long)off);
	return -EBADMSG;
}

/* ---- GPU: layout ---- */

static int cmp_corr(const void *pa, const void *pb)
{
	const struct gcorr_ent *a = pa, *b = pb;

	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return a->bound < b->bound ? -1 : a->bound > b->bound;
}

static const struct gcorr_ent *gcorr_find(const struct exp_gpu *g, uint32_t pid, uint32_t corr)
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
static void gpu_collapse_corr(struct exp_gpu *g)
{
	size_t n = 0;

	if (g->ncorr > 1)
		qsort(g->corr, g->ncorr, sizeof(*g->corr), cmp_corr);
	for (size_t i = 0; i < g->ncorr; i++) {
		const struct gcorr_ent cv = g->corr[i], *c = &cv;   /* o may be g->corr[i] */
		struct gcorr_ent *o;

		if (!n || g->corr[n - 1].key != c->key) {
			o = &g->corr[n++];
			*o = (struct gcorr_ent){ .key = c->key };
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
		struct gcorr_ent *c = realloc(g->corr, n * sizeof(*c));

		if (c) {
			g->corr = c;
			g->ccorr = n;
		}
	}
}

/* Syncs CUPTI gave no thread: the thread of their API call, else their GPU. */
static int gpu_place_syncs(struct exp_model *x)
{
	struct exp_gpu *g = &x->gpu;

	for (size_t i = 0; i < g->nhosts; i++) {
		struct ghost_ent *e = &g->hosts[i];
		const struct gpuio_gpu_sync *s;
		const struct gcorr_ent *c;
		const struct gpuio_hdr *h;
		uint64_t *dv, rec_off;
		int err;

		if (e->type != GPUIO_REC_GPU_SYNC || e->tid)
			continue;
		err = gread(x, e->off, GPUIO_REC_GPU_SYNC, &h);
		if (err)
			return err;
		s = (const void *)h;
		c = gcorr_find(g, e->pid, s->correlation);
		if (c && c->src) {
			e->tid = g->hosts[c->src - 1].tid;
			continue;
		}
		dv = kmap__get(&g->ctx_map, e->pid, s->context);
		e->flags |= GH_DEVICE;
		rec_off = x->rec_off;
		x->rec_off = e->off;
		err = gact_add(x, e->ts, e->end, dv ? (uint32_t)*dv : UINT32_MAX, e->pid, s->stream,
			       GT_SYNC);
		x->rec_off = rec_off;
		if (err)
			return err;
	}
	return 0;
}

static const struct ghost_ent *cmp_hosts;

/* by thread, then start, longest first, then nesting rank, then capture order */
static unsigned host_rank(const struct ghost_ent *e)
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
	const struct ghost_ent *a = &cmp_hosts[*(const uint32_t *)pa];
	const struct ghost_ent *b = &cmp_hosts[*(const uint32_t *)pb];
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
	const struct ghost_ent *a = &cmp_hosts[*(const uint32_t *)pa];
	const struct ghost_ent *b = &cmp_hosts[*(const uint32_t *)pb];

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return cmp_host_time(pa, pb);
}

static uint64_t gpu_slack(const struct exp_gpu *g, uint32_t pid)
{
	const uint64_t *v = kmap__get(&g->coll_map, pid, 0);
	uint64_t u = v ? g->colls[*v].info.uncertainty_ns : 0;

	/* the uprobe brackets CUPTI's interval; clocks may differ by the alignment */
	return 2000 + (u < 1000000 ? u : 1000000);
}

static bool api_same_call(const struct exp_gpu *g, const struct ghost_ent *u,
			  const struct ghost_ent *c)
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
static void gpu_dedup(struct exp_gpu *g, const uint32_t *idx, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct ghost_ent *u = &g->hosts[idx[i]];
		struct ghost_ent *best = NULL;
		uint64_t slack, lo, bestd = UINT64_MAX;
		size_t j;

		if (u->type != GPUIO_REC_CUDA_API || !is_uprobe(u->source))
			continue;
		slack = gpu_slack(g, u->pid);
		lo = u->ts > slack ? u->ts - slack : 0;
		/* entries of one thread are contiguous and sorted by start */
		for (j = i; j > 0; j--) {
			const struct ghost_ent *p = &g->hosts[idx[j - 1]];

			if (p->pid != u->pid || p->tid != u->tid || p->ts < lo)
				break;
		}
		for (; j < n; j++) {
			struct ghost_ent *c = &g->hosts[idx[j]];
			uint64_t d;

			if (c->pid != u->pid || c->tid != u->tid || c->ts > u->end + slack)
				break;
			if (c == u || c->type != GPUIO_REC_CUDA_API || is_uprobe(c->source) ||
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
static int gpu_nest(struct exp_model *x, const uint32_t *idx, size_t n)
{
	struct exp_gpu *g = &x->gpu;
	struct nest_lane *lanes = NULL;
	size_t nl = 0, cl = 0, ninit = 0;
	int err = 0;

	for (size_t i = 0; i < n && !err; i++) {
		struct ghost_ent *e = &g->hosts[idx[i]];
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
				if (exp_grow((void **)&lanes, &cl, nl + 1, sizeof(*lanes))) {
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
				struct ghost_lane *gl;

				if (exp_grow((void **)&g->glanes, &g->cglanes, g->nglanes + 1,
					     sizeof(*g->glanes))) {
					err = -ENOMEM;
					break;
				}
				gl = &g->glanes[g->nglanes];
				gl->pid = e->pid;
				gl->tid = e->tid;
				gl->n = (uint32_t)l;
				gl->out_tid = EXP_GHOST_TID_BASE + x->map.ghost_base + (uint32_t)g->nglanes;
				lanes[l].out_tid = gl->out_tid;
				g->nglanes++;
			}
		}
		if (exp_grow((void **)&lanes[l].end, &lanes[l].cap, lanes[l].n + 1, sizeof(uint64_t))) {
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

static const struct gact_ent *cmp_acts;
static const struct gpu_track *cmp_tracks;

static int cmp_track(const void *pa, const void *pb)
{
	const struct gpu_track *a = &cmp_tracks[*(const uint32_t *)pa];
	const struct gpu_track *b = &cmp_tracks[*(const uint32_t *)pb];

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
	const struct gact_ent *a = &cmp_acts[*(const uint32_t *)pa];
	const struct gact_ent *b = &cmp_acts[*(const uint32_t *)pb];

	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	if (a->end != b->end)
		return a->end < b->end ? -1 : 1;
	return a->off < b->off ? -1 : a->off > b->off;
}

static int cmp_act_track(const void *pa, const void *pb)
{
	const struct gact_ent *a = &cmp_acts[*(const uint32_t *)pa];
	const struct gact_ent *b = &cmp_acts[*(const uint32_t *)pb];

	if (a->track != b->track)
		return a->track < b->track ? -1 : 1;
	return cmp_act_time(pa, pb);
}

static int cmp_act_dev(const void *pa, const void *pb)
{
	const struct gact_ent *a = &cmp_acts[*(const uint32_t *)pa];
	const struct gact_ent *b = &cmp_acts[*(const uint32_t *)pb];
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
static int gpu_sort_tracks(struct exp_gpu *g, const struct exp_remap *map)
{
	uint32_t *idx = iota(g->ntracks), *pos = malloc((g->ntracks ? g->ntracks : 1) * sizeof(*pos));
	struct gpu_track *sorted = malloc((g->ntracks ? g->ntracks : 1) * sizeof(*sorted));
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
		struct gpu_dev *d = &g->devs[g->tracks[i].dev_idx];

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
			struct gpu_dev *d = &g->devs[g->tracks[i].dev_idx];

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

static void busy_add(struct exp_gpu *g, uint32_t dev, uint64_t s, uint64_t e)
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
static int gpu_busy(struct exp_gpu *g, const uint32_t *idx, size_t n)
{
	uint64_t tmin = UINT64_MAX, tmax = 0, span;
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		const struct gact_ent *a = &g->acts[idx[i]];

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
			const struct gact_ent *a = &g->acts[idx[k]];

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

static int gpu_layout(struct exp_model *x)
{
	struct exp_gpu *g = &x->gpu;
	struct lanes lanes = { 0 };
	uint32_t *idx = NULL, next_tid = 0;
	size_t n = 0;
	int err;

	if (!g->any)
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
	gpu_dedup(g, idx, n);
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
		struct gact_ent *a = &g->acts[idx[i]];
		struct gpu_track *t = &g->tracks[a->track];

		if (i == 0 || a->track != g->acts[idx[i - 1]].track)
			lanes__reset(&lanes);
		err = lanes__assign(&lanes, a->ts, a->end, &a->lane);
		if (err)
			goto out;
		if (a->lane > t->nlanes)
			t->nlanes = a->lane;
	}
	for (size_t i = 0; i < g->ntracks; i++) {
		struct gpu_track *t = &g->tracks[i];

		t->tid0 = EXP_GPU_TID_BASE + x->map.gtid_base + next_tid;
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
	lanes__free(&lanes);
	free(idx);
	return err;
}

static int cmp_proc(const void *pa, const void *pb)
{
	const struct proc_ent *a = pa, *b = pb;

	return a->pid < b->pid ? -1 : a->pid > b->pid;
}

static int cmp_thread(const void *pa, const void *pb)
{
	const struct thread_ent *a = pa, *b = pb;
	bool am = a->tid == a->pid, bm = b->tid == b->pid;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (am != bm)
		return am ? -1 : 1;
	return a->tid < b->tid ? -1 : a->tid > b->tid;
}

/*
 * flow_map is large (a key per request) and probed for every call: a call no
 * request names is answered from a bitmap of 16 bits per key that stays in
 * cache instead of a cache miss in the map.
 */
static int build_flow_filter(struct exp_model *x)
{
	size_t bits = 64;

	while (bits < x->flow_map.n * 16)
		bits *= 2;
	x->flow_bits = calloc(bits / 64, sizeof(uint64_t));
	if (!x->flow_bits)
		return -ENOMEM;
	x->flow_mask = bits - 1;
	for (size_t i = 0; i < x->flow_map.cap; i++) {
		const struct kslot *s = &x->flow_map.slots[i];

		if (s->used) {
			uint64_t h = kmix(s->a, s->b) >> 20 & x->flow_mask;

			x->flow_bits[h / 64] |= 1ull << (h % 64);
		}
	}
	return 0;
}

static uint64_t *flow_get(const struct exp_model *x, uint32_t tid, uint32_t seq)
{
	uint64_t h = kmix(tid, seq) >> 20 & x->flow_mask;

	if (!(x->flow_bits[h / 64] & (1ull << (h % 64))))
		return NULL;
	return kmap__get(&x->flow_map, tid, seq);
}

static int sort_tasks(struct exp_model *x)
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

const char *exp_open_hint(int err)
{
	switch (err) {
	case -ENOENT:
		return " (check the path: captures are the .gpuio files `gpuio trace` writes)";
	case -EACCES:
	case -EPERM:
		return " (no permission: run as the capture's owner, or with sudo)";
	case -EBADMSG:
		return " (give the .gpuio capture, not an exported .json)";
	case -EPROTO:
		return " (convert it with the gpuio version that recorded it)";
	default:
		return "";
	}
}

const char *exp_write_hint(int err)
{
	switch (err) {
	case -ENOSPC:
	case -EDQUOT:
		return " (disk full: free space or choose another -o)";
	case -EACCES:
	case -EPERM:
	case -EROFS:
		return " (choose a writable directory with -o)";
	case -ENOENT:
	case -ENOTDIR:
		return " (the output directory does not exist: create it or choose another -o)";
	default:
		return "";
	}
}

int exp_model__load(struct exp_model *x, const char *capture_path, const struct exp_remap *map)
{
	char errbuf[320];
	int err;

	memset(x, 0, sizeof(*x));
	x->p2_fd = -1;
	x->path = capture_path;
	if (map)
		x->map = *map;
	if (!x->map.prefix)
		x->map.prefix = "";
	err = gpuio_cap_reader__open(capture_path, &x->r, errbuf, sizeof(errbuf));
	if (err) {
		pr_err("%s%s", errbuf, exp_open_hint(err));
		return err;
	}
	x->hdr = gpuio_cap_reader__header(x->r);
	if (!x->map.ts_base)
		x->map.ts_base = exp_ts(x, x->hdr->monotonic_ns);
	x->cache_known = x->hdr->pagecache_mode[0] && strcmp(x->hdr->pagecache_mode, "off") &&
			 strcmp(x->hdr->pagecache_mode, "none");

	err = pass_meta_fast(x);
	if (err == -EAGAIN) {
		model_reset_tables(x);
		err = pass_meta(x);
	}
	if (err == -EBADMSG) {
		pr_err("%s: %s; the capture is damaged from there on: record it again "
		       "(`gpuio info` shows what precedes the damage)", capture_path,
		       gpuio_cap_reader__error(x->r));
		return err;
	} else if (err) {
		pr_err("cannot read %s: %s", capture_path, strerror(-err));
		return err;
	}
	if (x->truncated)
		pr_warn("%s: capture cut short at offset %llu: %llu bytes of a partial record "
			"ignored (exporting the %llu whole records before it)", capture_path,
			(unsigned long long)x->trunc_offset, (unsigned long long)x->truncated,
			(unsigned long long)x->records);
	err = layout_block(x);
	if (!err)
		err = layout_async(x);
	if (!err)
		err = gpu_layout(x);
	if (!err)
		err = sort_tasks(x);
	if (!err)
		err = build_flow_filter(x);
	if (err == -EBADMSG) {
		pr_err("%s: %s (the capture changed while it was being read?)", capture_path,
		       x->p2_err);
		return err;
	} else if (err) {
		pr_err("cannot export %s: %s", capture_path, strerror(-err));
		return err;
	}
	x->st.records = x->records;
	x->st.truncated_bytes = x->truncated;
	x->st.processes = x->nprocs;
	x->st.disks = x->ndisks;
	for (size_t i = 0; i < x->nthreads; i++)
		x->st.threads++;
	for (size_t d = 0; d < x->ndisks; d++)
		x->st.lanes += x->devs[x->disk_order[d]].nlanes;
	return 0;
}

void exp_model__free(struct exp_model *x)
{
	gpuio_cap_reader__close(x->r);
	x->r = NULL;
	if (x->p2_fd >= 0)
		close(x->p2_fd);
	x->p2_fd = -1;
	free(x->p2_buf);
	x->p2_buf = NULL;
	for (size_t i = 0; i < x->npaths; i++)
		free(x->paths[i].s);
	free(x->paths);
	for (size_t i = 0; i < x->nprocs; i++)
		free(x->procs[i].args);
	free(x->procs);
	free(x->threads);
	for (size_t i = 0; i < x->ndevs; i++)
		free(x->devs[i].bucket_bytes);
	free(x->devs);
	free(x->disk_order);
	free(x->blks);
	free(x->asyncs);
	free(x->ulanes);
	kmap__free(&x->path_map);
	kmap__free(&x->proc_map);
	kmap__free(&x->thread_map);
	kmap__free(&x->dev_map);
	kmap__free(&x->flow_map);
	free(x->flow_bits);
	x->flow_bits = NULL;
	gpu_free(&x->gpu);
	x->paths = NULL;
	x->procs = NULL;
	x->threads = NULL;
	x->devs = NULL;
	x->disk_order = NULL;
	x->blks = NULL;
	x->asyncs = NULL;
	x->ulanes = NULL;
	x->npaths = x->nprocs = x->nthreads = x->ndevs = x->nblks = x->nasyncs = x->nulanes = 0;
}

/* ---- pass 2 ---- */

#define P2_BUF_SIZE (1u << 20)

int exp_model__rewind(struct exp_model *x)
{
	x->vfs_ordinal = 0;
	x->async_next = 0;
	x->pass2_records = 0;
	x->p2_err[0] = 0;
	if (x->p2_fd < 0) {
		x->p2_fd = open(x->path, O_RDONLY | O_CLOEXEC);
		if (x->p2_fd < 0) {
			snprintf(x->p2_err, sizeof(x->p2_err), "cannot open it again: %s",
				 strerror(errno));
			return -EBADMSG;
		}
	}
	if (!x->p2_buf) {
		x->p2_buf = malloc(P2_BUF_SIZE);
		if (!x->p2_buf)
			return -ENOMEM;
	}
	x->p2_pos = x->p2_len = 0;
	x->p2_off = x->hdr->header_size;
	return 0;
}

const char *exp_model__error(const struct exp_model *x)
{
	return x->p2_err;
}

/* At least want bytes at p2_buf[p2_pos]: 1, 0 at the end of the file, -errno. */
static int p2_fill(struct exp_model *x, size_t want)
{
	ssize_t n;

	if (x->p2_len - x->p2_pos >= want)
		return 1;
	/* keep the 8-byte alignment of records: they start at multiples of 8 */
	memmove(x->p2_buf, x->p2_buf + x->p2_pos, x->p2_len - x->p2_pos);
	x->p2_len -= x->p2_pos;
	x->p2_pos = 0;
	while (x->p2_len < want) {
		n = pread(x->p2_fd, x->p2_buf + x->p2_len, P2_BUF_SIZE - x->p2_len,
			  (off_t)x->p2_off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return 0;
		x->p2_len += (size_t)n;
		x->p2_off += (uint64_t)n;
	}
	return 1;
}

int exp_model__next_vfs(struct exp_model *x, const struct gpuio_vfs_event **e)
{
	const struct gpuio_hdr *h;
	int rc;

	/*
	 * Pass 1 validated these records with the capture reader; a record that
	 * now looks different means the file changed under us. Records are
	 * 8-byte multiples after an 8-byte multiple header, so they are aligned
	 * in the buffer; an odd header size takes the copying reader instead.
	 */
	if (x->hdr->header_size % 8) {
		while (x->pass2_records < x->records) {
			rc = gpuio_cap_reader__next(x->r, &h);
			if (rc <= 0)
				break;
			x->pass2_records++;
			if (h->type == GPUIO_REC_VFS) {
				*e = (const void *)h;
				return 1;
			}
		}
		if (x->pass2_records < x->records) {
			snprintf(x->p2_err, sizeof(x->p2_err), "%s", gpuio_cap_reader__error(x->r));
			return -EBADMSG;
		}
		return 0;
	}
	while (x->pass2_records < x->records) {
		rc = p2_fill(x, sizeof(*h));
		if (rc > 0) {
			h = (const void *)(x->p2_buf + x->p2_pos);
			if (h->size < sizeof(*h) || h->size > GPUIO_REC_SIZE_MAX || h->size % 8)
				rc = -EBADMSG;
			else
				rc = p2_fill(x, h->size);
		}
		if (rc <= 0) {
			snprintf(x->p2_err, sizeof(x->p2_err), "record %llu is no longer what it was "
				 "(%s)", (unsigned long long)x->pass2_records,
				 rc == 0 ? "the file is shorter" : rc == -EBADMSG ? "bad size" :
				 strerror(-rc));
			return -EBADMSG;
		}
		h = (const void *)(x->p2_buf + x->p2_pos);
		x->p2_pos += h->size;
		x->pass2_records++;
		if (h->type == GPUIO_REC_VFS && h->size >= sizeof(**e)) {
			*e = (const void *)h;
			return 1;
		}
	}
	return 0;
}

/*
 * Pass 1 in place, without the reader's copy of every record: for a whole,
 * clean capture only. Anything the reader would report (a corrupt record, a
 * cut at the end, an odd header size) returns -EAGAIN, and pass 1 is done
 * again by the reader, which owns those checks and their messages.
 */
static int pass_meta_fast(struct exp_model *x)
{
	union { struct gpuio_hdr h; unsigned char b[GPUIO_REC_SIZE_MAX]; } copy;
	const struct gpuio_hdr *h;
	int rc, err;

	if (x->hdr->header_size % 8)
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

/* Forget what a pass 1 gathered (before doing it again with the reader). */
static void model_reset_tables(struct exp_model *x)
{
	for (size_t i = 0; i < x->npaths; i++)
		free(x->paths[i].s);
	for (size_t i = 0; i < x->nprocs; i++)
		free(x->procs[i].args);
	kmap__free(&x->path_map);
	kmap__free(&x->proc_map);
	kmap__free(&x->thread_map);
	kmap__free(&x->dev_map);
	kmap__free(&x->flow_map);
	gpu_free(&x->gpu);
	x->npaths = x->nprocs = x->nthreads = x->ndevs = x->nblks = x->nasyncs = 0;
	x->records = x->vfs_ordinal = 0;
	memset(x->counts, 0, sizeof(x->counts));
	memset(x->seen_threads, 0, sizeof(x->seen_threads));
	memset(&x->stats, 0, sizeof(x->stats));
	x->have_stats = false;
}

/* ---- ids ---- */

uint32_t exp_disk_pid(const struct exp_model *m, size_t disk)
{
	return EXP_DISK_PID_BASE + m->map.disk_base + (uint32_t)disk;
}

uint32_t exp_lane_tid(const struct exp_model *m, size_t disk, uint32_t lane)
{
	return EXP_LANE_TID(m->map.disk_base + disk, lane);
}

uint32_t exp_info_pid(const struct exp_model *m)
{
	return EXP_INFO_PID - m->map.host;
}

uint64_t exp_flow_id(const struct exp_model *m, uint32_t tid, uint32_t seq, uint32_t k)
{
	uint64_t id = exp_mix64((((uint64_t)(tid + m->map.pid_offset) << 32) | seq) ^
				((uint64_t)k * 0x9e3779b97f4a7c15ull));

	return id ? id : 1;
}

/* ---- names ---- */

/* comm of a process: its best PROC record, else its main thread, else any thread. */
static const char *proc_comm(struct exp_model *x, const struct proc_ent *p, char *buf,
			     size_t len)
{
	uint64_t *v;

	if (comm_set(p->comm)) {
		snprintf(buf, len, "%.16s", p->comm);
		return buf;
	}
	v = kmap__get(&x->thread_map, p->pid, p->pid);
	if (v && x->threads[*v].has_comm) {
		snprintf(buf, len, "%.16s", x->threads[*v].comm);
		return buf;
	}
	for (size_t i = 0; i < x->nthreads; i++) {
		if (x->threads[i].pid == p->pid && x->threads[i].has_comm) {
			snprintf(buf, len, "%.16s", x->threads[i].comm);
			return buf;
		}
	}
	snprintf(buf, len, "pid %u", p->pid);
	return buf;
}

size_t exp_model__proc_name(struct exp_model *x, const struct proc_ent *p, char *name,
			    size_t len)
{
	char comm[32];
	size_t n, plen = strlen(x->map.prefix);

	proc_comm(x, p, comm, sizeof(comm));
	n = (size_t)snprintf(name, len, "%s%s", x->map.prefix, comm);
	if (n >= len)
		n = len - 1;
	if (p->args_len && n + 2 < len) {
		n += (size_t)snprintf(name + n, len - n, ": ");
		for (uint32_t k = 0; k < p->args_len && n < len - 1; k++)
			name[n++] = p->args[k] ? p->args[k] : ' ';
		name[n] = 0;
	}
	return json_utf8_cut(name, n, EXP_PROC_NAME_MAX + plen);
}

const char *exp_model__thread_name(struct exp_model *x, const struct proc_ent *p,
				   const struct thread_ent *t, char buf[32], size_t *len)
{
	if (t->has_comm) {
		*len = strnlen(t->comm, 16);
		return t->comm;
	}
	proc_comm(x, p, buf, 32);
	*len = strnlen(buf, 16);
	return buf;
}

void exp_model__disk_name(const struct dev_ent *d, char *buf, size_t len)
{
	if (d->named && d->name[0])
		snprintf(buf, len, "%.32s", d->name);
	else
		snprintf(buf, len, "%u:%u", d->dev >> 20, d->dev & 0xfffff);
}

/* ---- events ---- */

/*
 * The path of (dev, ino); names non-files; counts what it cannot name in
 * *unresolved (VFS calls and block requests apart: requests also carry
 * file-system metadata and mmap'ed files that no call named).
 */
static void path_arg(struct exp_model *x, struct exp_args *a, const char *key, uint32_t dev,
		     uint64_t ino, unsigned ftype, __u64 *unresolved)
{
	uint64_t *v = kmap__get(&x->path_map, dev, ino);
	const char *kind = NULL;
	char buf[96];

	if (v) {
		/* pass 1 is over: the path table does not change while writing */
		arg_str(a, key, x->paths[*v].s, x->paths[*v].len, true);
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
	arg_copy(a, key, buf, true);
}

static void ftype_arg(struct exp_args *a, const char *k, unsigned ftype)
{
	const char *name;
	char buf[16];

	if (ftype == GPUIO_FT_REG)
		return;
	name = gpuio_ftype__name(ftype);
	if (!name) {
		snprintf(buf, sizeof(buf), "type%u", ftype);
		arg_copy(a, k, buf, true);
		return;
	}
	arg_str(a, k, name, strlen(name), true);
	a->a[a->n - 1].stable = true;
}

/* What calls.c says about each call, looked up once per export. */
enum { CF_OPEN = 1, CF_ASYNC = 2, CF_MOVES = 4, CF_TWO = 8, CF_READ = 16 };

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

void exp_model__vfs(struct exp_model *x, const struct gpuio_vfs_event *e, struct exp_vfs *o,
		    struct exp_args *a)
{
	unsigned call = e->call;
	const char *name = gpuio_call__name(call);
	uint8_t cf = call_flags(call);
	bool is_open = cf & CF_OPEN, failed = e->ret < 0;
	bool async = cf & CF_ASYNC;
	uint32_t tid = e->hdr.tid;
	uint64_t *fv = NULL;
	char buf[160];

	args_reset(a);
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
		fv = flow_get(x, e->hdr.tid, e->seq);
		/* one source per bind_id: a repeated (tid, seq) gets no second arrow */
		if (fv && !(*fv & FLOW_VFS_SEEN)) {
			*fv |= FLOW_VFS_SEEN;
			o->nflows = FLOW_COUNT(*fv);
		}
	}
	if (name) {
		o->name = name;
	} else {
		snprintf(o->namebuf, sizeof(o->namebuf), "call_%u", call);
		o->name = o->namebuf;
	}
	o->ts = e->hdr.ts;
	o->dur = e->dur_ns > INT64_MAX ? INT64_MAX : e->dur_ns;
	o->pid = exp_pid(x, e->hdr.pid);
	/* lane tids are already unique trace-wide (uring_base) */
	o->tid = tid == e->hdr.tid ? exp_pid(x, tid) : tid;
	o->async = async;

	/* a failed open has no file: nothing to name */
	if (!(is_open && failed && !e->ino && !e->dev))
		path_arg(x, a, "path", e->dev, e->ino, e->ftype, &x->st.unresolved_paths);
	if (is_open) {
		if (!failed)
			arg_s64(a, "fd", e->ret);
	} else if (e->fd >= 0) {
		arg_s64(a, "fd", e->fd);
	}
	if (cf & CF_MOVES) {
		if (!failed)
			arg_s64(a, "bytes", e->ret);
		arg_u64(a, "requested", e->requested);
	}
	if (call == GPUIO_CALL_FTRUNCATE || call == GPUIO_CALL_FALLOCATE ||
	    call == GPUIO_CALL_SYNC_FILE_RANGE)
		arg_u64(a, "length", e->requested);
	if (e->offset >= 0)
		arg_s64(a, "offset", e->offset);
	if (failed) {
		uint64_t en = 0 - (uint64_t)e->ret;

		arg_u64(a, "errno", en);
		arg_copy(a, "error", en <= 4095 ? gpuio_errno__name((int)en, buf, sizeof(buf)) : "E?",
			 true);
	}
	if ((cf & CF_READ) && !async && x->cache_known)
		arg_u64(a, "cache_miss_pages", e->cache_miss_pages);
	if (is_open)
		arg_copy(a, "flags", gpuio_open_flags__str(e->flags, buf, sizeof(buf)), true);
	else if (call == GPUIO_CALL_SYNC_FILE_RANGE)
		arg_copy(a, "flags", gpuio_sfr_flags__str(e->flags, buf, sizeof(buf)), true);
	else if (call == GPUIO_CALL_FALLOCATE && e->flags)
		arg_copy(a, "mode", gpuio_fallocate_mode__str(e->flags, buf, sizeof(buf)), true);
	else if (call == GPUIO_CALL_SPLICE && e->flags)
		arg_copy(a, "flags", gpuio_splice_flags__str(e->flags, buf, sizeof(buf)), true);
	if (!(is_open && failed && !e->ino && !e->dev))
		ftype_arg(a, "ftype", e->ftype);
	if (cf & CF_TWO) {
		path_arg(x, a, "path2", e->dev2, e->ino2, e->ftype2, &x->st.unresolved_paths);
		if (e->fd2 >= 0)
			arg_s64(a, "fd2", e->fd2);
		if (e->offset2 >= 0)
			arg_s64(a, "offset2", e->offset2);
		ftype_arg(a, "ftype2", e->ftype2);
	}
	if (async)
		arg_u64(a, "tid", exp_pid(x, e->hdr.tid));
	x->st.vfs++;
	x->vfs_ordinal++;
}

void exp_model__block(struct exp_model *x, const struct blk_ent *b, size_t disk,
		      const char *dname, struct exp_block *o, struct exp_args *a)
{
	uint64_t *fv = b->seq && !x->online ? kmap__get(&x->flow_map, b->tid, b->seq) : NULL;
	char buf[96];

	args_reset(a);
	o->name = gpuio_blk_op__name(b->op);
	o->ts = b->ts;
	o->end = blk_end(b);
	o->pid = exp_disk_pid(x, disk);
	o->tid = exp_lane_tid(x, disk, b->lane);
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
	arg_copy(a, "dev", dname, true);
	arg_str(a, "op", o->name, strlen(o->name), true);
	a->a[a->n - 1].stable = true;
	arg_copy(a, "flags", gpuio_rq_flags__str(b->flags, buf, sizeof(buf)), true);
	arg_u64(a, "sector", b->sector);
	arg_u64(a, "bytes", b->bytes);
	arg_us(a, "queue_us", (int64_t)(b->issue - b->ts));
	arg_us(a, "service_us", (int64_t)(b->complete - b->issue));
	if (b->pid)
		arg_u64(a, "pid", exp_pid(x, b->pid));
	if (b->tid)
		arg_u64(a, "tid", exp_pid(x, b->tid));
	if (b->ino)
		path_arg(x, a, "path", b->file_dev, b->ino, GPUIO_FT_REG,
			 &x->st.unresolved_block_paths);
	arg_bool(a, "writeback", b->attr & GPUIO_BA_WRITEBACK);
	/* the device's own pages: filesystem metadata, journal, raw I/O */
	if (b->attr & GPUIO_BA_BDEV_PAGE)
		arg_bool(a, "metadata", true);
	if (b->error)
		arg_s64(a, "error", b->error);
	x->st.block++;
}

bool exp_model__next_counter(struct exp_model *x, const struct dev_ent *dev,
			     struct exp_counter_it *it, uint64_t *t, double *rd, double *wr)
{
	double scale = 1e9 / (double)x->bucket_ns / 1048576.0;

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

/* ---- GPU: output ---- */

uint32_t exp_gpu_pid(const struct exp_model *m, size_t gpu)
{
	return EXP_GPU_PID_BASE + m->map.gpu_base + (uint32_t)gpu;
}

uint64_t exp_gpu_flow_id(uint64_t fkey, uint32_t k)
{
	uint64_t id = exp_mix64(exp_gpu_bind(fkey) ^ ((uint64_t)k * 0xc2b2ae3d27d4eb4full));

	return id ? id : 1;
}

void exp_model__gpu_name(const struct gpu_dev *d, char *buf, size_t len)
{
	if (d->device == UINT32_MAX)
		snprintf(buf, len, "GPU ?");
	else
		snprintf(buf, len, "GPU %u", d->device);
}

size_t exp_model__gpu_lane_name(const struct exp_model *m, const struct gpu_track *t,
				uint32_t lane, char *buf, size_t len)
{
	const struct gpu_dev *d = &m->gpu.devs[t->dev_idx];
	char gname[16];
	int n;

	exp_model__gpu_name(d, gname, sizeof(gname));
	if (t->what == GT_SYNC)
		n = snprintf(buf, len, "%s \xc2\xb7 sync", gname);
	else if (t->what == GT_OVERHEAD)
		n = snprintf(buf, len, "%s \xc2\xb7 CUPTI overhead", gname);
	else
		n = snprintf(buf, len, "%s \xc2\xb7 stream %llu", gname, (unsigned long long)t->stream);
	/* stream ids are per process: say whose when several share the GPU */
	if (d->npids > 1 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, " \xc2\xb7 pid %u", exp_pid(m, t->pid));
	if (lane > 1 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, " \xc2\xb7 lane %u", lane);
	return (size_t)n < len ? (size_t)n : len - 1;
}

size_t exp_model__ghost_lane_name(const struct ghost_lane *l, char *buf, size_t len)
{
	int n = snprintf(buf, len, "tid %u \xc2\xb7 CUDA overlap %u", l->tid, l->n);

	return (size_t)n < len ? (size_t)n : len - 1;
}

int exp_model__gpu_rewind(struct exp_model *x)
{
	x->gpu.next = 0;
	for (size_t i = 0; i < x->gpu.ncorr; i++)
		x->gpu.corr[i].bound = 0;
	x->gpu.flows = x->gpu.dangling_corr = 0;
	return 0;
}

static void arg_cstr(struct exp_args *a, const char *k, const char *s)
{
	arg_str(a, k, s, strlen(s), true);
	a->a[a->n - 1].stable = true;
}

static void arg_f3(struct exp_args *a, const char *k, double v)
{
	char buf[64];

	/* what JSON prints is what protobuf carries */
	snprintf(buf, sizeof(buf), "%.3f", v);
	arg_add(a, k, EA_F3)->v.d = strtod(buf, NULL);
}

static void arg_name(struct exp_args *a, const char *k, const char *const *tab, size_t ntab,
		     unsigned v)
{
	char buf[24];

	if (v < ntab && tab[v]) {
		arg_cstr(a, k, tab[v]);
		return;
	}
	snprintf(buf, sizeof(buf), "%u", v);
	arg_copy(a, k, buf, true);
}
#define ARG_NAME(a, k, tab, v) arg_name(a, k, tab, sizeof(tab) / sizeof(tab[0]), v)

static void arg_hex(struct exp_args *a, const char *k, uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)v);
	arg_copy(a, k, buf, false);
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

	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
		if (tab[i].code == r)
			return driver ? tab[i].drv : tab[i].rt;
	return NULL;
}

static void gname_copy(struct exp_gslice *o, const char *s, size_t n, const char *dflt)
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

static void gslice_times(struct exp_gslice *o, uint64_t ts, uint64_t end)
{
	o->ts = ts;
	o->dur = end > ts ? end - ts : 0;
	if (o->dur > INT64_MAX)
		o->dur = INT64_MAX;
}

/* The arrow into an activity, when its API call is in the capture. */
static void gact_flow(struct exp_model *x, struct exp_gslice *o, uint32_t pid, uint32_t corr)
{
	struct gcorr_ent *c = (struct gcorr_ent *)gcorr_find(&x->gpu, pid, corr);

	o->fkey = (uint64_t)exp_pid(x, pid) << 32 | corr;
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

static void gpu_overhead_args(struct exp_gslice *o, const struct gpuio_gpu_overhead *v,
			      struct exp_args *a)
{
	o->name = overhead_name(v->kind);
	o->name_static = true;
	arg_u64(a, "kind", v->kind);
	ARG_NAME(a, "object_kind", object_kind_names, v->object_kind);
	arg_u64(a, "object_id", v->object_id);
}

static void gpu_act_slice(struct exp_model *x, const struct gact_ent *e, const struct gpuio_hdr *h,
			  struct exp_gslice *o, struct exp_args *a)
{
	const struct gpu_track *t = &x->gpu.tracks[e->track];
	char buf[64];

	o->track = EXP_GS_GPULANE;
	o->pid = exp_gpu_pid(x, x->gpu.devs[t->dev_idx].index);
	o->tid = t->tid0 + e->lane - 1;
	gslice_times(o, e->ts, e->end);
	switch (h->type) {
	case GPUIO_REC_GPU_KERNEL: {
		const struct gpuio_gpu_kernel *k = (const void *)h;

		o->cat = "gpu";
		gname_copy(o, k->name, rec_name_len(h, offsetof(struct gpuio_gpu_kernel, name), k->name,
						    k->name_len, GPUIO_GPU_NAME_MAX), "kernel");
		gact_flow(x, o, h->pid, k->correlation);
		arg_u64(a, "device", k->device);
		arg_u64(a, "stream", k->stream);
		arg_u64(a, "context", k->context);
		arg_u64(a, "correlation", k->correlation);
		arg_u64(a, "pid", exp_pid(x, h->pid));
		snprintf(buf, sizeof(buf), "%ux%ux%u", k->grid[0], k->grid[1], k->grid[2]);
		arg_copy(a, "grid", buf, true);
		snprintf(buf, sizeof(buf), "%ux%ux%u", k->block[0], k->block[1], k->block[2]);
		arg_copy(a, "block", buf, true);
		arg_u64(a, "static_smem_bytes", k->static_smem);
		arg_u64(a, "dynamic_smem_bytes", k->dynamic_smem);
		arg_u64(a, "registers_per_thread", k->registers);
		if (k->flags & GPUIO_GK_NAME_TRUNCATED)
			arg_bool(a, "name_truncated", true);
		break;
	}
	case GPUIO_REC_GPU_MEMCPY: {
		const struct gpuio_gpu_memcpy *c = (const void *)h;
		const char *n = NAME_OF(memcpy_slice_names, c->kind);

		o->cat = "gpu";
		o->name = n ? n : "memcpy";
		o->name_static = true;
		gact_flow(x, o, h->pid, c->correlation);
		arg_u64(a, "bytes", c->bytes);
		ARG_NAME(a, "kind", memcpy_kind_names, c->kind);
		ARG_NAME(a, "src_kind", mem_kind_names, c->src_kind);
		ARG_NAME(a, "dst_kind", mem_kind_names, c->dst_kind);
		if (o->dur)
			arg_f3(a, "throughput_GBps", (double)c->bytes / (double)o->dur);
		arg_bool(a, "async", c->flags & GPUIO_GM_ASYNC);
		arg_u64(a, "device", c->device);
		if ((c->flags & GPUIO_GM_PEER) || c->dst_device != c->device) {
			arg_u64(a, "src_device", c->device);
			arg_u64(a, "dst_device", c->dst_device);
		}
		arg_u64(a, "stream", c->stream);
		arg_u64(a, "context", c->context);
		arg_u64(a, "correlation", c->correlation);
		arg_u64(a, "pid", exp_pid(x, h->pid));
		break;
	}
	case GPUIO_REC_GPU_MEMSET: {
		const struct gpuio_gpu_memset *s = (const void *)h;

		o->cat = "gpu";
		o->name = "memset";
		o->name_static = true;
		gact_flow(x, o, h->pid, s->correlation);
		arg_u64(a, "bytes", s->bytes);
		arg_u64(a, "value", s->value);
		ARG_NAME(a, "mem_kind", mem_kind_names, s->mem_kind);
		arg_bool(a, "async", s->flags & GPUIO_GM_ASYNC);
		arg_u64(a, "device", s->device);
		arg_u64(a, "stream", s->stream);
		arg_u64(a, "context", s->context);
		arg_u64(a, "correlation", s->correlation);
		arg_u64(a, "pid", exp_pid(x, h->pid));
		break;
	}
	case GPUIO_REC_GPU_SYNC: {
		const struct gpuio_gpu_sync *s = (const void *)h;
		const char *n = NAME_OF(sync_names, s->type);

		o->cat = "cuda_sync";
		o->name = n ? n : "synchronize";
		o->name_static = true;
		ARG_NAME(a, "type", sync_names, s->type);
		arg_u64(a, "stream", s->stream);
		arg_u64(a, "context", s->context);
		arg_u64(a, "correlation", s->correlation);
		arg_u64(a, "pid", exp_pid(x, h->pid));
		break;
	}
	default: {
		const struct gpuio_gpu_overhead *v = (const void *)h;

		o->cat = "cupti_overhead";
		gpu_overhead_args(o, v, a);
		arg_u64(a, "pid", exp_pid(x, h->pid));
		break;
	}
	}
}

static void gpu_api_args(struct exp_model *x, const struct ghost_ent *e, uint32_t hidx,
			 const struct gpuio_cuda_api *c, struct exp_gslice *o, struct exp_args *a)
{
	struct exp_gpu *g = &x->gpu;
	const struct gup_ent *u = e->aux ? &g->ups[e->aux - 1] : NULL;
	const struct gcorr_ent *ce = gcorr_find(g, c->hdr.pid, c->correlation);
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
		o->fkey = (uint64_t)exp_pid(x, c->hdr.pid) << 32 | c->correlation;
	}
	arg_s64(a, "ret", c->ret);
	if (c->ret && (err = cuda_error_name(driver, c->ret)) != NULL)
		arg_cstr(a, "error", err);
	ARG_NAME(a, "source", api_source_names, c->source);
	ARG_NAME(a, "kind", api_kind_names, c->kind);
	if (c->correlation)
		arg_u64(a, "correlation", c->correlation);
	if (c->cbid)
		arg_u64(a, "cbid", c->cbid);
	if (bytes)
		arg_u64(a, "bytes", bytes);
	if (stream)
		arg_u64(a, "stream", stream);
	if (mk)
		ARG_NAME(a, "memcpy_kind", memcpy_kind_names, mk);
	if (c->kind == GPUIO_API_LAUNCH) {
		const struct gstr *k = NULL;

		if (ce && ce->name)
			k = &g->strs[ce->name - 1];
		else if (func && (sv = kmap__get(&g->sym_map, c->hdr.pid, func)) != NULL)
			k = &g->strs[*sv];
		if (k) {
			arg_str(a, "kernel", k->s, k->len, true);
			a->a[a->n - 1].stable = true;
		}
		if (func)
			arg_hex(a, "func", func);
	}
	if (e->flags & GH_MERGED)
		arg_bool(a, "uprobe", true);
}

static void gpu_host_slice(struct exp_model *x, uint32_t hidx, const struct gpuio_hdr *h,
			   struct exp_gslice *o, struct exp_args *a)
{
	const struct ghost_ent *e = &x->gpu.hosts[hidx];

	o->pid = exp_pid(x, e->pid);
	if (e->lane_tid) {
		o->track = EXP_GS_HOSTLANE;
		o->tid = e->lane_tid;
	} else {
		o->track = EXP_GS_THREAD;
		o->tid = exp_pid(x, e->tid);
	}
	gslice_times(o, e->ts, e->end);
	switch (h->type) {
	case GPUIO_REC_CUDA_API:
		gpu_api_args(x, e, hidx, (const void *)h, o, a);
		break;
	case GPUIO_REC_NVTX: {
		const struct gpuio_nvtx_range *r = (const void *)h;

		o->cat = "nvtx";
		gname_copy(o, r->name, rec_name_len(h, offsetof(struct gpuio_nvtx_range, name), r->name,
						    r->name_len, sizeof(r->name)), "nvtx range");
		arg_u64(a, "depth", r->depth);
		break;
	}
	case GPUIO_REC_GPU_SYNC: {
		const struct gpuio_gpu_sync *s = (const void *)h;
		const char *n = NAME_OF(sync_names, s->type);

		o->cat = "cuda_sync";
		o->name = n ? n : "synchronize";
		o->name_static = true;
		ARG_NAME(a, "type", sync_names, s->type);
		arg_u64(a, "stream", s->stream);
		arg_u64(a, "context", s->context);
		arg_u64(a, "correlation", s->correlation);
		break;
	}
	default:
		o->cat = "cupti_overhead";
		gpu_overhead_args(o, (const void *)h, a);
		break;
	}
}

int exp_model__next_gpu(struct exp_model *x, struct exp_gslice *o, struct exp_args *a)
{
	struct exp_gpu *g = &x->gpu;
	const struct gpuio_hdr *h;
	size_t i;
	int err;

	if (g->next >= g->nacts + g->nhorder)
		return 0;
	i = g->next++;
	args_reset(a);
	o->nflows = o->flow_k = 0;
	o->fkey = 0;
	o->name_static = false;
	if (i < g->nacts) {
		const struct gact_ent *e = &g->acts[g->aorder[i]];
		uint8_t what = g->tracks[e->track].what;

		err = gread(x, e->off, what == GT_SYNC ? GPUIO_REC_GPU_SYNC :
			    what == GT_OVERHEAD ? GPUIO_REC_GPU_OVERHEAD : 0, &h);
		if (!err && what == GT_STREAM && (h->type < GPUIO_REC_GPU_KERNEL ||
						  h->type > GPUIO_REC_GPU_MEMSET)) {
			snprintf(x->p2_err, sizeof(x->p2_err), "the GPU record at offset %llu is no "
				 "longer what it was", (unsigned long long)e->off);
			err = -EBADMSG;
		}
		if (err)
			return err;
		gpu_act_slice(x, e, h, o, a);
		return 1;
	}
	{
		uint32_t hidx = g->horder[i - g->nacts];

		err = gread(x, g->hosts[hidx].off, g->hosts[hidx].type, &h);
		if (err)
			return err;
		gpu_host_slice(x, hidx, h, o, a);
	}
	return 1;
}

bool exp_model__next_gpu_counter(struct exp_model *x, const struct gpu_dev *d,
				 struct exp_counter_it *it, uint64_t *t, double *v)
{
	const struct exp_gpu *g = &x->gpu;

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

/* Events lost, as the tracer counts them (collector totals): BPF drops + failed writes. */
static uint64_t total_dropped(const struct gpuio_stats_event *s)
{
	return gpuio_stats__dropped(s);
}


static const char *gpu_state_name(uint32_t s)
{
	return s == GPUIO_GPU_ON ? "on" : s == GPUIO_GPU_UNAVAILABLE ? "unavailable" :
	       s == GPUIO_GPU_FINAL ? "final" : "unknown";
}

static const char *gpu_clock_name(uint32_t c)
{
	return c == GPUIO_GPU_CLOCK_MONOTONIC_CB ? "monotonic_callback" :
	       c == GPUIO_GPU_CLOCK_OFFSET ? "offset" : "none";
}

#define GPU_INFO_PROCS 8        /* collectors listed one by one in the info */

/* GPU drops: CUPTI's own and the collectors' failed writes (latest counts). */
static void gpu_drops(const struct exp_gpu *g, uint64_t *cupti, uint64_t *werr)
{
	*cupti = *werr = 0;
	for (size_t i = 0; i < g->ncolls; i++) {
		*cupti += g->colls[i].info.cupti_dropped;
		*werr += g->colls[i].info.write_errors;
	}
}

static void gpu_info_args(struct exp_model *x, struct exp_args *a)
{
	const struct exp_gpu *g = &x->gpu;
	struct exp_arg *d, *p;
	uint64_t cupti, werr, st[4] = { 0 };
	size_t listed = g->ncolls < GPU_INFO_PROCS ? g->ncolls : GPU_INFO_PROCS;

	gpu_drops(g, &cupti, &werr);
	for (size_t i = 0; i < g->ncolls; i++)
		st[g->colls[i].info.state < 4 ? g->colls[i].info.state : 0]++;
	d = arg_add(a, "gpu", EA_DICT);
	d->len = 0;
#define GARG(call) (call, d->len++)
	GARG(arg_u64(a, "collectors", g->ncolls));
	GARG(arg_u64(a, "collectors_on", st[GPUIO_GPU_ON]));
	GARG(arg_u64(a, "collectors_unavailable", st[GPUIO_GPU_UNAVAILABLE]));
	GARG(arg_u64(a, "collectors_final", st[GPUIO_GPU_FINAL]));
	GARG(arg_u64(a, "cupti_dropped", cupti));
	GARG(arg_u64(a, "collector_write_errors", werr));
	p = arg_add(a, "processes", EA_DICT);
	d->len++;
	p->len = (uint32_t)listed;
	for (size_t i = 0; i < listed; i++) {
		const struct gcoll *c = &g->colls[i];
		struct exp_arg *e = arg_add(a, c->key, EA_DICT);

		e->len = 0;
#define CARG(call) (call, e->len++)
		CARG(arg_cstr(a, "state", gpu_state_name(c->info.state)));
		if (c->reason[0])
			CARG(arg_str(a, "reason", c->reason, strlen(c->reason), false));
		CARG(arg_cstr(a, "how", c->info.how == GPUIO_GPU_HOW_LAUNCH ? "launch" :
				  c->info.how == GPUIO_GPU_HOW_ATTACH ? "attach" : "unknown"));
		CARG(arg_cstr(a, "clock", gpu_clock_name(c->info.clock)));
		CARG(arg_s64(a, "offset_ns", c->info.offset_ns));
		CARG(arg_u64(a, "uncertainty_ns", c->info.uncertainty_ns));
		CARG(arg_u64(a, "cupti_dropped", c->info.cupti_dropped));
		CARG(arg_u64(a, "records", c->info.records));
		CARG(arg_u64(a, "write_errors", c->info.write_errors));
		CARG(arg_u64(a, "cupti_version", c->info.cupti_version));
		CARG(arg_s64(a, "cupti_error", c->info.cupti_error));
#undef CARG
	}
	GARG(arg_u64(a, "processes_not_listed", g->ncolls - listed));
	GARG(arg_u64(a, "devices", g->ndevs));
	GARG(arg_u64(a, "kernels", g->kernels));
	GARG(arg_u64(a, "memcpys", g->memcpys));
	GARG(arg_u64(a, "memsets", g->memsets));
	GARG(arg_u64(a, "api_calls", g->api));
	GARG(arg_u64(a, "api_calls_merged", g->merged));
	GARG(arg_u64(a, "nvtx_ranges", g->nvtx));
	GARG(arg_u64(a, "syncs", g->syncs));
	GARG(arg_u64(a, "overheads", g->overheads));
	GARG(arg_u64(a, "flows", g->flows));
	GARG(arg_u64(a, "dangling_correlations", g->dangling_corr));
	GARG(arg_u64(a, "overlap_slices", g->overlap_slices));
	GARG(arg_us(a, "busy_bucket_us", (int64_t)g->bucket_ns));
#undef GARG
}

static void hdr_str(struct exp_args *a, const char *k, const char *s, size_t max)
{
	arg_str(a, k, s, strnlen(s, max), false);
}

void exp_model__info(struct exp_model *x, struct exp_args *a)
{
	const struct gpuio_cap_header *h = x->hdr;
	const struct gpuio_stats_event *s = &x->stats;
	uint64_t gcupti = 0, gwerr = 0;
	bool complete;

	args_reset(a);
	complete = x->have_stats && s->final && !x->truncated;
	x->st.capture_complete = complete;
	x->st.drops_known = x->have_stats;
	x->st.dropped = x->have_stats ? total_dropped(s) : 0;
	if (x->gpu.any)
		gpu_drops(&x->gpu, &gcupti, &gwerr);
	/* what the GPU collectors lost counts as dropped like the rest */
	if (x->have_stats)
		x->st.dropped += gcupti + gwerr;

	if (x->have_stats)
		arg_u64(a, "dropped", x->st.dropped);
	else
		arg_null(a, "dropped");
	arg_bool(a, "drops_known", x->have_stats);
	/* a snapshot that is not the final one counts drops only up to its time */
	arg_bool(a, "drops_final", x->have_stats && s->final);
	if (x->have_stats) {
		struct exp_arg *d = arg_add(a, "drops", EA_DICT);

		for (size_t i = 0; i < gpuio_ndrop_counters; i++)
			arg_u64(a, gpuio_drop_counters[i].name, s->bpf[gpuio_drop_counters[i].idx]);
		arg_u64(a, "capture_write_errors", s->user[GPUIO_USTAT_WRITE_ERRORS]);
		d->len = (uint32_t)gpuio_ndrop_counters + 1;
		if (x->gpu.any) {
			arg_u64(a, "cupti_dropped", gcupti);
			arg_u64(a, "gpu_write_errors", gwerr);
			d->len += 2;
		}
	} else {
		arg_null(a, "drops");
	}
	arg_u64(a, "unresolved_paths", x->st.unresolved_paths);
	arg_u64(a, "unresolved_block_paths", x->st.unresolved_block_paths);
	if (x->have_stats)
		arg_u64(a, "collector_unresolved_paths", s->user[GPUIO_USTAT_PATH_UNRESOLVED]);
	else
		arg_null(a, "collector_unresolved_paths");
	if (x->have_stats)
		arg_u64(a, "path_walks_truncated", s->bpf[GPUIO_STAT_PATH_TRUNC]);
	else
		arg_null(a, "path_walks_truncated");
	hdr_str(a, "vfs_mode", h->vfs_mode, sizeof(h->vfs_mode));
	hdr_str(a, "block_mode", h->block_mode, sizeof(h->block_mode));
	hdr_str(a, "proc_mode", h->proc_mode, sizeof(h->proc_mode));
	hdr_str(a, "pagecache_mode", h->pagecache_mode, sizeof(h->pagecache_mode));
	hdr_str(a, "iouring_mode", h->iouring_mode, sizeof(h->iouring_mode));
	hdr_str(a, "modes_detail", h->modes_detail, sizeof(h->modes_detail));
	hdr_str(a, "hostname", h->hostname, sizeof(h->hostname));
	hdr_str(a, "kernel", h->kernel, sizeof(h->kernel));
	hdr_str(a, "boot_id", h->boot_id, sizeof(h->boot_id));
	hdr_str(a, "target", h->target, sizeof(h->target));
	hdr_str(a, "cmdline", h->cmdline, sizeof(h->cmdline));
	arg_u64(a, "tracer_pid", h->tracer_pid);
	arg_u64(a, "ncpus", h->ncpus);
	arg_bool(a, "trace_all", h->flags & GPUIO_CAPF_ALL);
	arg_bool(a, "all_fds", h->flags & GPUIO_CAPF_ALL_FDS);
	arg_bool(a, "launched", h->flags & GPUIO_CAPF_LAUNCH);
	arg_u64(a, "capture_version", h->version);
	arg_u64(a, "abi_version", h->abi_version);
	arg_u64(a, "monotonic_base_ns", h->monotonic_ns);
	arg_u64(a, "realtime_base_ns", h->realtime_ns);
	arg_bool(a, "capture_complete", complete);
	arg_u64(a, "capture_truncated_bytes", x->truncated);
	arg_u64(a, "records", x->records);
	{
		struct exp_arg *d = arg_add(a, "record_counts", EA_DICT);

		arg_u64(a, "vfs", x->counts[GPUIO_REC_VFS]);
		arg_u64(a, "block", x->counts[GPUIO_REC_BLOCK]);
		arg_u64(a, "path", x->counts[GPUIO_REC_PATH]);
		arg_u64(a, "proc", x->counts[GPUIO_REC_PROC]);
		arg_u64(a, "stats", x->counts[GPUIO_REC_STATS]);
		arg_u64(a, "devname", x->counts[GPUIO_REC_DEVNAME]);
		arg_u64(a, "unknown", x->counts[0]);
		d->len = 7;
		if (x->gpu.any) {
			static const char *const gnames[] = {
				"gpu_info", "gpu_kernel", "gpu_memcpy", "gpu_memset", "cuda_api",
				"gpu_sync", "nvtx", "gpu_overhead", "gpu_sym",
			};

			for (unsigned t = GPUIO_REC_GPU_INFO; t <= GPUIO_REC_GPU_SYM; t++)
				arg_u64(a, gnames[t - GPUIO_REC_GPU_INFO], x->counts[t]);
			d->len += GPUIO_REC_GPU_SYM - GPUIO_REC_GPU_INFO + 1;
		}
	}
	arg_u64(a, "vfs_events", x->st.vfs);
	arg_u64(a, "block_requests", x->st.block);
	arg_u64(a, "flows", x->st.flows);
	arg_u64(a, "dangling_block_refs", x->st.dangling_flows);
	arg_us(a, "throughput_bucket_us", (int64_t)x->bucket_ns);
	if (x->gpu.any)
		gpu_info_args(x, a);
	/* merged outputs: where this capture sits on the shared timeline */
	if (x->map.prefix[0]) {
		arg_u64(a, "host_index", x->map.host);
		arg_u64(a, "pid_offset", x->map.pid_offset);
		arg_s64(a, "clock_offset_ns", x->map.ts_shift);
	}
}

/* ---- output file ---- */

/* Refuse outputs that are symlinks, non-regular files or a capture being read. */
static int check_output(const char *const *caps, int ncaps, const char *out)
{
	struct stat so, sc;

	if (lstat(out, &so) < 0)
		return 0;
	if (S_ISLNK(so.st_mode)) {
		pr_err("refusing to write %s: it is a symbolic link (remove it or choose another name)",
		       out);
		return -ELOOP;
	}
	if (!S_ISREG(so.st_mode)) {
		pr_err("refusing to write %s: it exists and is not a regular file "
		       "(choose another name)", out);
		return S_ISDIR(so.st_mode) ? -EISDIR : -EEXIST;
	}
	for (int i = 0; i < ncaps; i++) {
		if (stat(caps[i], &sc) == 0 && sc.st_dev == so.st_dev && sc.st_ino == so.st_ino) {
			pr_err("refusing to write %s: it is the capture being converted", out);
			return -EEXIST;
		}
	}
	return 0;
}

int exp_output__open(struct exp_output *o, const char *out_path, const char *const *caps,
		     int ncaps, const struct gpuio_export_opts *opts)
{
	int err;

	o->path = out_path;
	o->tmp = NULL;
	o->fd = -1;
	if (!strcmp(out_path, "-")) {
		o->fd = STDOUT_FILENO;
		return 0;
	}
	err = check_output(caps, ncaps, out_path);
	if (err)
		return err;
	if (asprintf(&o->tmp, "%s.tmp", out_path) < 0) {
		o->tmp = NULL;
		pr_err("out of memory");
		return -ENOMEM;
	}
	/* a stale or planted OUT.tmp is removed, never written through */
	if (unlink(o->tmp) < 0 && errno != ENOENT && errno != EACCES && errno != EROFS) {
		err = -errno;
		pr_err("cannot remove stale %s: %s", o->tmp, strerror(errno));
		goto fail;
	}
	o->fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (o->fd < 0) {
		err = -errno;
		pr_err("cannot create %s: %s%s", o->tmp, strerror(errno), exp_write_hint(err));
		goto fail;
	}
	if (opts && opts->owner_uid != (uid_t)-1 &&
	    fchown(o->fd, opts->owner_uid, opts->owner_gid) < 0) {
		err = -errno;
		pr_err("cannot give %s to uid %u: %s", o->tmp, (unsigned)opts->owner_uid,
		       strerror(errno));
		close(o->fd);
		o->fd = -1;
		unlink(o->tmp);
		goto fail;
	}
	return 0;
fail:
	free(o->tmp);
	o->tmp = NULL;
	return err;
}

int exp_output__commit(struct exp_output *o)
{
	int err = 0;

	if (o->tmp && rename(o->tmp, o->path) < 0) {
		err = -errno;
		pr_err("cannot rename %s to %s: %s", o->tmp, o->path, strerror(errno));
		unlink(o->tmp);
	}
	free(o->tmp);
	o->tmp = NULL;
	return err;
}

void exp_output__abort(struct exp_output *o)
{
	if (o->tmp) {
		unlink(o->tmp);
		free(o->tmp);
		o->tmp = NULL;
	}
}

int exp_model__export_one(const char *capture_path, const char *out_path,
			  const struct gpuio_export_opts *opts, struct gpuio_export_stats *st,
			  exp_render_fn render)
{
	struct exp_model *m = calloc(1, sizeof(*m));
	uint64_t bytes = 0;
	int err;

	if (!m) {
		pr_err("out of memory");
		return -ENOMEM;
	}
	err = exp_model__load(m, capture_path, NULL);
	if (!err)
		err = render(&m, 1, out_path, opts, NULL, &bytes);
	if (!err && st) {
		m->st.output_bytes = bytes;
		*st = m->st;
	}
	exp_model__free(m);
	free(m);
	return err;
}
