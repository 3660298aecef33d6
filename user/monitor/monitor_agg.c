// SPDX-License-Identifier: MIT
/* monitor_agg.c — BPF maps -> bounded series -> Prometheus text. See monitor_agg.h. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "monitor/monitor.h"
#include "monitor/monitor_agg.h"
#include "monitor/monitor_bpf.h"
#include "monitor/monitor_names.h"
#include "lib/log.h"

/* ------------------------------------------------------------------ text */

void mon_buf__printf(struct mon_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->oom)
		return;
	for (;;) {
		size_t room = b->cap - b->len;

		va_start(ap, fmt);
		n = vsnprintf(b->p ? b->p + b->len : NULL, room, fmt, ap);
		va_end(ap);
		if (n < 0)
			return;
		if ((size_t)n < room) {
			b->len += (size_t)n;
			return;
		}
		size_t cap = b->cap ? b->cap * 2 : 65536;
		while (cap - b->len <= (size_t)n)
			cap *= 2;
		char *p = realloc(b->p, cap);
		if (!p) {
			b->oom = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
}

void mon_buf__label(struct mon_buf *b, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\')
			mon_buf__printf(b, "\\\\");
		else if (*v == '"')
			mon_buf__printf(b, "\\\"");
		else if (*v == '\n')
			mon_buf__printf(b, "\\n");
		else
			mon_buf__printf(b, "%c", *v);
	}
}

void mon_buf__free(struct mon_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

/* ------------------------------------------------------------------ hash table */

/* Chained hash over a fixed pool: bounded, no allocation after init. */
struct htab {
	size_t cap, esz, klen, nb;
	char *ents;
	int *next, *bucket;
	unsigned char *live;
	int free;
	size_t n;
};

static __u64 hash_bytes(const void *k, size_t len)
{
	const unsigned char *p = k;
	__u64 h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

static int htab_init(struct htab *t, size_t cap, size_t esz, size_t klen)
{
	memset(t, 0, sizeof(*t));
	t->cap = cap;
	t->esz = esz;
	t->klen = klen;
	for (t->nb = 64; t->nb < cap * 2; t->nb *= 2)
		;
	t->ents = calloc(cap, esz);
	t->next = malloc(cap * sizeof(int));
	t->bucket = malloc(t->nb * sizeof(int));
	t->live = calloc(cap, 1);
	if (!t->ents || !t->next || !t->bucket || !t->live)
		return -ENOMEM;
	for (size_t i = 0; i < t->nb; i++)
		t->bucket[i] = -1;
	for (size_t i = 0; i < cap; i++)
		t->next[i] = i + 1 < cap ? (int)i + 1 : -1;
	t->free = 0;
	return 0;
}

static void htab_fini(struct htab *t)
{
	free(t->ents);
	free(t->next);
	free(t->bucket);
	free(t->live);
}

static void *htab_ent(const struct htab *t, size_t i)
{
	return t->ents + i * t->esz;
}

static void *htab_find(const struct htab *t, const void *key)
{
	size_t b = hash_bytes(key, t->klen) & (t->nb - 1);

	for (int i = t->bucket[b]; i >= 0; i = t->next[i])
		if (!memcmp(htab_ent(t, i), key, t->klen))
			return htab_ent(t, i);
	return NULL;
}

static void *htab_add(struct htab *t, const void *key)
{
	size_t b = hash_bytes(key, t->klen) & (t->nb - 1);
	int i = t->free;
	void *e;

	if (i < 0)
		return NULL;
	t->free = t->next[i];
	e = htab_ent(t, i);
	memset(e, 0, t->esz);
	memcpy(e, key, t->klen);
	t->live[i] = 1;
	t->next[i] = t->bucket[b];
	t->bucket[b] = i;
	t->n++;
	return e;
}

static void htab_del(struct htab *t, void *e)
{
	int i = (int)(((char *)e - t->ents) / t->esz);
	size_t b = hash_bytes(e, t->klen) & (t->nb - 1);
	int *pp = &t->bucket[b];

	while (*pp >= 0 && *pp != i)
		pp = &t->next[*pp];
	if (*pp != i)
		return;
	*pp = t->next[i];
	t->live[i] = 0;
	t->next[i] = t->free;
	t->free = i;
	t->n--;
}

/* ------------------------------------------------------------------ series */

#define NCV (sizeof(struct mon_cg_val) / sizeof(__u64))
#define NPV 8    /* the leading counters of struct mon_proc_val */
#define NCU (MON_CUDA_NAPI * MON_CUDA_KINDS)   /* struct mon_cuda_val's calls */
#define NGV (NPV + NCU)  /* a process group: I/O counters, then CUDA calls */
_Static_assert(sizeof(struct mon_cg_val) % sizeof(__u64) == 0, "cg value is all u64");
_Static_assert(offsetof(struct mon_proc_val, comm_ts) == NPV * sizeof(__u64), "proc counters first");

struct cg_series {
	struct mon_cg_key key;
	__u64 last[NCV];         /* kernel sums at the previous refresh */
	__u64 tot[NCV];          /* every delta since the daemon started */
	__u64 active_ns;
	double score;            /* recent activity (decayed bytes + ops) */
	__u64 tot_at_score[NCV];
	__u32 gen;
	bool labeled;
};

struct group_key { __u64 cgid; char comm[16]; };

struct proc_group {
	struct group_key key;
	__u64 tot[NGV];
	__u64 active_ns;
	double score;
	bool labeled;
};

struct proc_src {
	struct mon_proc_key key;
	__u64 last[NPV];
	__u32 gen;
};

/* A mon_cuda entry (bpf/monitor/monitor_cuda.bpf.c). */
struct cuda_src {
	struct mon_proc_key key;
	__u64 last[NCU];
	__u32 gen;
};

/* CUDA calls per cgroup (summed from the process entries' deltas). */
struct cuda_cg {
	__u64 cgid;
	__u64 tot[NCU];
	__u64 active_ns;
	double score;
	bool labeled;
};

struct monitor_agg {
	pthread_mutex_t lock;
	struct monitor_loader *l;
	struct monitor_names *names;
	struct monitor_agg_opts o;
	int ncpus;
	void *vbuf;              /* one lookup of a per-CPU value */
	void *keys;              /* keys to delete after an iteration */
	struct htab cgs, groups, srcs, exited;
	__u64 cg_other[NCV];
	__u64 proc_other[NGV];
	/* CUDA call counts (monitor_agg__set_cuda; fd_cuda -1: off) */
	int fd_cuda;
	__u32 max_cuda;
	void *cuda_keys;
	struct htab csrcs, ccgs;
	__u64 ccg_other[NCU];
	unsigned ccg_labeled;
	__u64 cuda_entries, cuda_deleted;
	__u32 gen;
	unsigned cg_labeled, grp_labeled;   /* labelled series, per table */
	__u64 cg_entries, proc_entries, dev_entries, exited_entries;
	__u64 procs_deleted, procs_folded, untracked;
	monitor_agg_extra_fn extra[4];
	void *extra_ctx[4];
	int nextra;
};

static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static size_t round8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

int monitor_agg__new(struct monitor_loader *l, struct monitor_names *names,
		     const struct monitor_agg_opts *o, struct monitor_agg **out)
{
	struct monitor_agg *a = calloc(1, sizeof(*a));
	size_t vmax = sizeof(struct mon_dev_val);

	if (!a)
		return -ENOMEM;
	pthread_mutex_init(&a->lock, NULL);
	a->fd_cuda = -1;
	a->l = l;
	a->names = names;
	a->o = *o;
	a->ncpus = libbpf_num_possible_cpus();
	if (a->ncpus < 1)
		a->ncpus = 1;
	if (sizeof(struct mon_cg_val) > vmax)
		vmax = sizeof(struct mon_cg_val);
	a->vbuf = calloc((size_t)a->ncpus, round8(vmax));
	a->keys = calloc(l->max_procs + 1, sizeof(struct mon_proc_key));
	if (!a->vbuf || !a->keys ||
	    htab_init(&a->cgs, l->max_cgroups * 2, sizeof(struct cg_series), sizeof(struct mon_cg_key)) ||
	    htab_init(&a->groups, 4096, sizeof(struct proc_group), sizeof(struct group_key)) ||
	    htab_init(&a->srcs, l->max_procs * 2, sizeof(struct proc_src), sizeof(struct mon_proc_key)) ||
	    htab_init(&a->exited, l->max_exited, sizeof(struct mon_exit_key), sizeof(struct mon_exit_key))) {
		monitor_agg__free(a);
		return -ENOMEM;
	}
	*out = a;
	return 0;
}

void monitor_agg__free(struct monitor_agg *a)
{
	if (!a)
		return;
	htab_fini(&a->cgs);
	htab_fini(&a->groups);
	htab_fini(&a->srcs);
	htab_fini(&a->exited);
	if (a->fd_cuda >= 0) {
		htab_fini(&a->csrcs);
		htab_fini(&a->ccgs);
	}
	free(a->cuda_keys);
	free(a->vbuf);
	free(a->keys);
	pthread_mutex_destroy(&a->lock);
	free(a);
}

int monitor_agg__set_cuda(struct monitor_agg *a, int fd, __u32 max_entries)
{
	a->cuda_keys = calloc(max_entries + 1, sizeof(struct mon_proc_key));
	if (!a->cuda_keys ||
	    htab_init(&a->csrcs, max_entries * 2, sizeof(struct cuda_src), sizeof(struct mon_proc_key)) ||
	    htab_init(&a->ccgs, a->l->max_cgroups, sizeof(struct cuda_cg), sizeof(__u64))) {
		htab_fini(&a->csrcs);
		htab_fini(&a->ccgs);
		return -ENOMEM;
	}
	a->max_cuda = max_entries;
	a->fd_cuda = fd;
	return 0;
}

void monitor_agg__add_extra(struct monitor_agg *a, monitor_agg_extra_fn fn, void *ctx)
{
	if (a->nextra < 4) {
		a->extra[a->nextra] = fn;
		a->extra_ctx[a->nextra++] = ctx;
	}
}

/* Sum a per-CPU value of n u64 counters (the first n of each CPU's copy). */
static void sum_percpu(const struct monitor_agg *a, size_t vsize, size_t n, __u64 *out)
{
	memset(out, 0, n * sizeof(__u64));
	for (int c = 0; c < a->ncpus; c++) {
		const __u64 *v = (const __u64 *)((const char *)a->vbuf + (size_t)c * round8(vsize));

		for (size_t i = 0; i < n; i++)
			out[i] += v[i];
	}
}

/* Free a slot in a full table: the unlabelled entry idle the longest. Its
 * contributions are in "other" already, so nothing visible is lost. */
static bool evict_idle(struct htab *t, size_t active_off, size_t labeled_off)
{
	void *best = NULL;
	__u64 oldest = ~0ull;

	for (size_t i = 0; i < t->cap; i++) {
		char *e = htab_ent(t, i);
		__u64 act;

		if (!t->live[i] || *(bool *)(e + labeled_off))
			continue;
		memcpy(&act, e + active_off, sizeof(act));
		if (act < oldest) {
			oldest = act;
			best = e;
		}
	}
	if (best)
		htab_del(t, best);
	return best != NULL;
}

static __u64 cg_rank(const __u64 *v)
{
	const struct mon_cg_val *c = (const void *)v;

	return c->vfs_bytes[0] + c->vfs_bytes[1] + c->blk_bytes[0] + c->blk_bytes[1] + c->blk_bytes[2] +
	       c->vfs_ops[0] + c->vfs_ops[1];
}

static __u64 proc_rank(const __u64 *v)
{
	return v[0] + v[1] + v[4] + v[5] + v[2] + v[3];
}

static void refresh_cgroups(struct monitor_agg *a, __u64 now)
{
	struct mon_cg_key key, next, *prev = NULL;
	__u64 cur[NCV];

	a->cg_entries = 0;
	while (bpf_map_get_next_key(a->l->fd_cg, prev, &next) == 0) {
		struct cg_series *s;
		bool changed = false;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(a->l->fd_cg, &key, a->vbuf) != 0)
			continue;
		a->cg_entries++;
		sum_percpu(a, sizeof(struct mon_cg_val), NCV, cur);
		s = htab_find(&a->cgs, &key);
		if (!s && !(s = htab_add(&a->cgs, &key)) &&
		    evict_idle(&a->cgs, offsetof(struct cg_series, active_ns),
			       offsetof(struct cg_series, labeled)))
			s = htab_add(&a->cgs, &key);
		if (!s) {
			a->untracked++;
			continue;
		}
		if (!s->gen && !s->labeled && a->cg_labeled < a->o.top_cgroups) {
			/* a free label slot: the new series is labelled from its start */
			s->labeled = true;
			a->cg_labeled++;
		}
		for (size_t i = 0; i < NCV; i++) {
			__u64 d = cur[i] >= s->last[i] ? cur[i] - s->last[i] : cur[i];

			s->last[i] = cur[i];
			if (!d)
				continue;
			changed = true;
			s->tot[i] += d;
			if (!s->labeled)
				a->cg_other[i] += d;
		}
		if (changed) {
			s->active_ns = now;
			s->score += (double)(cg_rank(s->tot) - cg_rank(s->tot_at_score));
			memcpy(s->tot_at_score, s->tot, sizeof(s->tot_at_score));
		}
		s->gen = a->gen;
	}
	/* an entry the kernel evicted starts from zero when it comes back */
	for (size_t i = 0; i < a->cgs.cap; i++) {
		struct cg_series *s = htab_ent(&a->cgs, i);

		if (a->cgs.live[i] && s->gen != a->gen)
			memset(s->last, 0, sizeof(s->last));
	}
}

static void read_exited(struct monitor_agg *a)
{
	struct mon_exit_key key, next, *prev = NULL;

	a->exited_entries = 0;
	while (bpf_map_get_next_key(a->l->fd_exited, prev, &next) == 0) {
		key = next;
		prev = &key;
		a->exited_entries++;
		if (!htab_find(&a->exited, &key))
			htab_add(&a->exited, &key);
	}
}

/* Add n deltas d at counter index off of group gk (or "other"). */
static void group_add(struct monitor_agg *a, const struct group_key *gk, const __u64 *d, int off,
		      int n, double score, __u64 now)
{
	struct proc_group *g = htab_find(&a->groups, gk);

	if (!g && !(g = htab_add(&a->groups, gk)) &&
	    evict_idle(&a->groups, offsetof(struct proc_group, active_ns),
		       offsetof(struct proc_group, labeled)))
		g = htab_add(&a->groups, gk);
	if (g && !g->active_ns && !g->labeled && a->grp_labeled < a->o.top_procs) {
		g->labeled = true;
		a->grp_labeled++;
	}
	if (g)
		g->score += score;
	for (int i = 0; i < n; i++) {
		if (g)
			g->tot[off + i] += d[i];
		if (!g || !g->labeled)
			a->proc_other[off + i] += d[i];
	}
	if (g)
		g->active_ns = now;
}

static void refresh_procs(struct monitor_agg *a, __u64 now)
{
	struct mon_proc_key key, next, *prev = NULL, *del = a->keys;
	size_t ndel = 0;
	__u64 cur[NPV];

	a->proc_entries = 0;
	while (bpf_map_get_next_key(a->l->fd_proc, prev, &next) == 0) {
		struct mon_exit_key ek = { .tgid = next.tgid, .start_ns = next.start_ns };
		struct group_key gk = { 0 };
		struct proc_src *src;
		__u64 d[NPV], best_ts = 0;
		bool any = false;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(a->l->fd_proc, &key, a->vbuf) != 0)
			continue;
		a->proc_entries++;
		sum_percpu(a, sizeof(struct mon_proc_val), NPV, cur);
		for (int c = 0; c < a->ncpus; c++) {
			const struct mon_proc_val *v = (const void *)((char *)a->vbuf +
						(size_t)c * round8(sizeof(struct mon_proc_val)));

			if (v->comm_ts > best_ts) {
				best_ts = v->comm_ts;
				/* the key must not carry bytes past the NUL */
				memset(gk.comm, 0, sizeof(gk.comm));
				strncpy(gk.comm, v->comm, sizeof(gk.comm) - 1);
			}
		}
		gk.cgid = key.cgid;
		src = htab_find(&a->srcs, &key);
		if (!src)
			src = htab_add(&a->srcs, &key);
		for (int i = 0; i < NPV; i++) {
			__u64 last = src ? src->last[i] : 0;

			d[i] = cur[i] >= last ? cur[i] - last : cur[i];
			any |= d[i] != 0;
			if (src)
				src->last[i] = cur[i];
		}
		if (src)
			src->gen = a->gen;
		else
			a->untracked++;
		if (any)
			group_add(a, &gk, d, 0, NPV, (double)proc_rank(d), now);
		/* the process is gone: its counts are folded, free the entry */
		if (htab_find(&a->exited, &ek) && ndel < a->l->max_procs)
			del[ndel++] = key;
	}
	for (size_t i = 0; i < ndel; i++) {
		struct proc_src *src = htab_find(&a->srcs, &del[i]);

		if (bpf_map_delete_elem(a->l->fd_proc, &del[i]) == 0)
			a->procs_deleted++;
		if (src)
			htab_del(&a->srcs, src);
		a->procs_folded++;
	}
	/* sources whose entry the kernel evicted or we deleted */
	for (size_t i = 0; i < a->srcs.cap; i++) {
		struct proc_src *s = htab_ent(&a->srcs, i);

		if (a->srcs.live[i] && s->gen != a->gen)
			htab_del(&a->srcs, s);
	}
}

/* CUDA calls per process (mon_cuda): into the same (cgroup, comm) groups as
 * the I/O counters, and per cgroup; exited processes folded and deleted. */
static void refresh_cuda(struct monitor_agg *a, __u64 now)
{
	struct mon_proc_key key, next, *prev = NULL, *del = a->cuda_keys;
	struct mon_cuda_val v;
	size_t ndel = 0;

	if (a->fd_cuda < 0)
		return;
	a->cuda_entries = 0;
	while (bpf_map_get_next_key(a->fd_cuda, prev, &next) == 0) {
		struct mon_exit_key ek = { .tgid = next.tgid, .start_ns = next.start_ns };
		struct group_key gk = { 0 };
		const __u64 *cur = &v.calls[0][0];
		struct cuda_src *src;
		struct cuda_cg *c;
		__u64 d[NCU], sum = 0;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(a->fd_cuda, &key, &v) != 0)
			continue;
		a->cuda_entries++;
		snprintf(gk.comm, sizeof(gk.comm), "%.15s", v.comm);   /* zeros after the NUL */
		gk.cgid = key.cgid;
		src = htab_find(&a->csrcs, &key);
		if (!src)
			src = htab_add(&a->csrcs, &key);
		for (int i = 0; i < NCU; i++) {
			__u64 last = src ? src->last[i] : 0;

			d[i] = cur[i] >= last ? cur[i] - last : cur[i];
			sum += d[i];
			if (src)
				src->last[i] = cur[i];
		}
		if (src)
			src->gen = a->gen;
		else
			a->untracked++;
		if (sum) {
			group_add(a, &gk, d, NPV, NCU, (double)sum, now);
			c = htab_find(&a->ccgs, &key.cgid);
			if (!c && !(c = htab_add(&a->ccgs, &key.cgid)) &&
			    evict_idle(&a->ccgs, offsetof(struct cuda_cg, active_ns), offsetof(struct cuda_cg, labeled)))
				c = htab_add(&a->ccgs, &key.cgid);
			if (c && !c->active_ns && !c->labeled && a->ccg_labeled < a->o.top_cgroups) {
				c->labeled = true;
				a->ccg_labeled++;
			}
			for (int i = 0; i < NCU; i++) {
				if (c)
					c->tot[i] += d[i];
				if (!c || !c->labeled)
					a->ccg_other[i] += d[i];
			}
			if (c) {
				c->score += (double)sum;
				c->active_ns = now;
			}
		}
		if (htab_find(&a->exited, &ek) && ndel < a->max_cuda)
			del[ndel++] = key;
	}
	for (size_t i = 0; i < ndel; i++) {
		struct cuda_src *src = htab_find(&a->csrcs, &del[i]);

		if (bpf_map_delete_elem(a->fd_cuda, &del[i]) == 0)
			a->cuda_deleted++;
		if (src)
			htab_del(&a->csrcs, src);
	}
	for (size_t i = 0; i < a->csrcs.cap; i++) {
		struct cuda_src *s = htab_ent(&a->csrcs, i);

		if (a->csrcs.live[i] && s->gen != a->gen)
			htab_del(&a->csrcs, s);
	}
}

/* Exited processes are forgotten once every table has folded them. */
static void drop_exited(struct monitor_agg *a)
{
	/* exited processes are forgotten (an exit seen before the process's
	 * entry is read costs at most its last period's counts) */
	for (size_t i = 0; i < a->exited.cap; i++) {
		struct mon_exit_key *k = htab_ent(&a->exited, i);

		if (!a->exited.live[i])
			continue;
		bpf_map_delete_elem(a->l->fd_exited, k);
		htab_del(&a->exited, k);
	}
}

/*
 * Top-K by recent activity: scores decay each refresh; labelled series idle
 * for retire_ns give their slot up; free slots go to the most active; a
 * labelled series is replaced when an unlabelled one is more than twice as
 * active (hysteresis: labels do not flap). Returns how many are labelled.
 */
static unsigned relabel(struct htab *t, unsigned k, size_t score_off, size_t active_off,
			size_t labeled_off, __u64 now, __u64 retire_ns)
{
	unsigned labeled = 0;

#define F_SCORE(e) (*(double *)((e) + score_off))
#define F_LAB(e) (*(bool *)((e) + labeled_off))
	for (size_t i = 0; i < t->cap; i++) {
		char *e = htab_ent(t, i);
		__u64 act;

		if (!t->live[i])
			continue;
		F_SCORE(e) *= 0.8;
		if (!F_LAB(e))
			continue;
		memcpy(&act, e + active_off, sizeof(act));
		if (now - act > retire_ns)
			F_LAB(e) = false;
		else
			labeled++;
	}
	for (unsigned round = 0; round <= k; round++) {
		char *best = NULL, *worst = NULL;

		for (size_t i = 0; i < t->cap; i++) {
			char *e = htab_ent(t, i);

			if (!t->live[i])
				continue;
			if (F_LAB(e)) {
				if (!worst || F_SCORE(e) < F_SCORE(worst))
					worst = e;
			} else if (F_SCORE(e) >= 1.0 && (!best || F_SCORE(e) > F_SCORE(best))) {
				best = e;
			}
		}
		if (!best)
			break;
		if (labeled < k) {
			F_LAB(best) = true;
			labeled++;
		} else if (worst && F_SCORE(best) > 2 * F_SCORE(worst) + 1) {
			F_LAB(worst) = false;
			F_LAB(best) = true;
		} else {
			break;
		}
	}
#undef F_SCORE
#undef F_LAB
	return labeled;
}

static void refresh_locked(struct monitor_agg *a)
{
	__u64 now = mono_ns(), key, next, *prev = NULL;

	a->gen++;
	monitor_loader__flush(a->l);     /* first: every finished call is in the maps */
	refresh_cgroups(a, now);
	read_exited(a);
	refresh_procs(a, now);
	refresh_cuda(a, now);
	drop_exited(a);
	if (a->fd_cuda >= 0)
		a->ccg_labeled = relabel(&a->ccgs, a->o.top_cgroups, offsetof(struct cuda_cg, score),
			offsetof(struct cuda_cg, active_ns), offsetof(struct cuda_cg, labeled),
			now, a->o.retire_ns);
	a->cg_labeled = relabel(&a->cgs, a->o.top_cgroups, offsetof(struct cg_series, score),
		offsetof(struct cg_series, active_ns), offsetof(struct cg_series, labeled),
		now, a->o.retire_ns);
	a->grp_labeled = relabel(&a->groups, a->o.top_procs, offsetof(struct proc_group, score),
		offsetof(struct proc_group, active_ns), offsetof(struct proc_group, labeled),
		now, a->o.retire_ns);
	a->dev_entries = 0;
	while (bpf_map_get_next_key(a->l->fd_dev, prev, &next) == 0) {
		key = next;
		prev = &key;
		a->dev_entries++;
	}
}

void monitor_agg__refresh(struct monitor_agg *a)
{
	pthread_mutex_lock(&a->lock);
	refresh_locked(a);
	pthread_mutex_unlock(&a->lock);
}

/* ------------------------------------------------------------------ rendering */

static const char *const dir_name[MON_NDIR] = { "read", "write", "other" };

static void family(struct mon_buf *b, const char *name, const char *type, const char *help)
{
	mon_buf__printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* labels: `k="v",…` without braces (may be empty). */
static void hist(struct mon_buf *b, const char *name, const char *labels, const __u64 *slots,
		 __u64 sum_ns)
{
	const char *sep = labels[0] ? "," : "";
	__u64 cum = 0;

	for (int i = 0; i < MON_HIST_SLOTS - 1; i++) {
		cum += slots[i];
		mon_buf__printf(b, "%s_bucket{%s%sle=\"%.10g\"} %llu\n", name, labels, sep,
				(double)(1ull << (i + MON_HIST_SHIFT)) / 1e9, (unsigned long long)cum);
	}
	cum += slots[MON_HIST_SLOTS - 1];
	mon_buf__printf(b, "%s_bucket{%s%sle=\"+Inf\"} %llu\n", name, labels, sep,
			(unsigned long long)cum);
	mon_buf__printf(b, "%s_sum{%s} %.9f\n", name, labels, sum_ns / 1e9);
	mon_buf__printf(b, "%s_count{%s} %llu\n", name, labels, (unsigned long long)cum);
}

/* `cgroup="…",device="…"` of a cgroup series (NULL: the other series). */
static void cg_labels(struct monitor_agg *a, const struct cg_series *s, struct mon_buf *l)
{
	l->len = 0;
	mon_buf__printf(l, "cgroup=\"");
	mon_buf__label(l, s ? monitor_names__cgroup(a->names, s->key.cgid) : "other");
	mon_buf__printf(l, "\",device=\"");
	mon_buf__label(l, s ? monitor_names__dev(a->names, s->key.dev) : "other");
	mon_buf__printf(l, "\"");
}

static void grp_labels(struct monitor_agg *a, const struct proc_group *g, struct mon_buf *l)
{
	l->len = 0;
	mon_buf__printf(l, "cgroup=\"");
	mon_buf__label(l, g ? monitor_names__cgroup(a->names, g->key.cgid) : "other");
	mon_buf__printf(l, "\",comm=\"");
	mon_buf__label(l, g ? g->key.comm : "other");
	mon_buf__printf(l, "\"");
}

/* Walk the labelled cgroup series, then "other": fn(values, labels). */
#define FOR_CG(a, l, v, body) do { \
	for (size_t _i = 0; _i <= (a)->cgs.cap; _i++) { \
		const struct cg_series *_s = _i < (a)->cgs.cap ? htab_ent(&(a)->cgs, _i) : NULL; \
		if (_s && (!(a)->cgs.live[_i] || !_s->labeled)) continue; \
		const struct mon_cg_val *v = (const void *)(_s ? _s->tot : (a)->cg_other); \
		cg_labels(a, _s, l); \
		body \
	} } while (0)

#define FOR_GRP(a, l, v, body) do { \
	for (size_t _i = 0; _i <= (a)->groups.cap; _i++) { \
		const struct proc_group *_g = _i < (a)->groups.cap ? htab_ent(&(a)->groups, _i) : NULL; \
		if (_g && (!(a)->groups.live[_i] || !_g->labeled)) continue; \
		const __u64 *v = _g ? _g->tot : (a)->proc_other; \
		grp_labels(a, _g, l); \
		body \
	} } while (0)

static void render_cgroups(struct monitor_agg *a, struct mon_buf *b, struct mon_buf *l)
{
	family(b, "gpuio_cgroup_vfs_bytes_total", "counter",
	       "Bytes moved by read/write-family syscalls on regular files and block devices, by cgroup and filesystem device.");
	FOR_CG(a, l, v, {
		for (int d = 0; d < 2; d++)
			mon_buf__printf(b, "gpuio_cgroup_vfs_bytes_total{%s,op=\"%s\"} %llu\n", l->p,
					dir_name[d], (unsigned long long)v->vfs_bytes[d]);
	});
	family(b, "gpuio_cgroup_vfs_ops_total", "counter",
	       "read/write-family syscalls that succeeded, by cgroup and filesystem device.");
	FOR_CG(a, l, v, {
		for (int d = 0; d < 2; d++)
			mon_buf__printf(b, "gpuio_cgroup_vfs_ops_total{%s,op=\"%s\"} %llu\n", l->p,
					dir_name[d], (unsigned long long)v->vfs_ops[d]);
	});
	family(b, "gpuio_cgroup_vfs_latency_seconds", "histogram",
	       "Latency of those syscalls (log2 buckets).");
	FOR_CG(a, l, v, {
		for (int d = 0; d < 2; d++) {
			size_t at = l->len;

			if (!v->vfs_ops[d])
				continue;
			mon_buf__printf(l, ",op=\"%s\"", dir_name[d]);
			hist(b, "gpuio_cgroup_vfs_latency_seconds", l->p, v->vfs_lat[d], v->vfs_lat_sum[d]);
			l->len = at;
			l->p[at] = 0;
		}
	});
	family(b, "gpuio_cgroup_block_bytes_total", "counter",
	       "Bytes of block requests completed, by submitting cgroup and disk (cgroup \"kernel\": kernel threads, e.g. writeback).");
	FOR_CG(a, l, v, {
		if (v->blk_ops[0] + v->blk_ops[1] + v->blk_ops[2])
			for (int d = 0; d < MON_NDIR; d++)
				mon_buf__printf(b, "gpuio_cgroup_block_bytes_total{%s,op=\"%s\"} %llu\n",
						l->p, dir_name[d], (unsigned long long)v->blk_bytes[d]);
	});
	family(b, "gpuio_cgroup_block_ops_total", "counter", "Block requests completed, by submitting cgroup and disk.");
	FOR_CG(a, l, v, {
		if (v->blk_ops[0] + v->blk_ops[1] + v->blk_ops[2])
			for (int d = 0; d < MON_NDIR; d++)
				mon_buf__printf(b, "gpuio_cgroup_block_ops_total{%s,op=\"%s\"} %llu\n",
						l->p, dir_name[d], (unsigned long long)v->blk_ops[d]);
	});
	family(b, "gpuio_cgroup_pagecache_read_bytes_total", "counter",
	       "Bytes returned by buffered (non-O_DIRECT) reads.");
	FOR_CG(a, l, v, {
		if (v->pc_read_bytes)
			mon_buf__printf(b, "gpuio_cgroup_pagecache_read_bytes_total{%s} %llu\n", l->p,
					(unsigned long long)v->pc_read_bytes);
	});
	family(b, "gpuio_cgroup_pagecache_miss_bytes_total", "counter",
	       "Bytes of pages those reads added to the page cache (misses, readahead included).");
	FOR_CG(a, l, v, {
		if (v->pc_read_bytes)
			mon_buf__printf(b, "gpuio_cgroup_pagecache_miss_bytes_total{%s} %llu\n", l->p,
					(unsigned long long)v->pc_miss_pages * 4096);
	});
	family(b, "gpuio_cgroup_pagecache_hit_ratio", "gauge",
	       "1 - miss bytes / buffered read bytes since start (clamped to [0, 1]).");
	FOR_CG(a, l, v, {
		if (v->pc_read_bytes) {
			double r = 1.0 - (double)v->pc_miss_pages * 4096 / (double)v->pc_read_bytes;

			mon_buf__printf(b, "gpuio_cgroup_pagecache_hit_ratio{%s} %.4f\n", l->p,
					r < 0 ? 0 : r > 1 ? 1 : r);
		}
	});
	family(b, "gpuio_cgroup_dirtied_bytes_total", "counter",
	       "Bytes of page-cache pages dirtied (written back later), by cgroup and filesystem device.");
	FOR_CG(a, l, v, {
		if (v->dirtied_pages)
			mon_buf__printf(b, "gpuio_cgroup_dirtied_bytes_total{%s} %llu\n", l->p,
					(unsigned long long)v->dirtied_pages * 4096);
	});
}

static void render_procs(struct monitor_agg *a, struct mon_buf *b, struct mon_buf *l)
{
	static const struct { const char *name, *help; int off; } fam[] = {
		{ "gpuio_process_vfs_bytes_total", "Bytes moved by read/write syscalls, by cgroup and process name (top-K; the rest is comm=\"other\").", 0 },
		{ "gpuio_process_vfs_ops_total", "read/write syscalls, by cgroup and process name.", 2 },
		{ "gpuio_process_block_bytes_total", "Block bytes submitted, by cgroup and process name.", 4 },
		{ "gpuio_process_block_ops_total", "Block requests submitted, by cgroup and process name.", 6 },
	};

	for (size_t f = 0; f < sizeof(fam) / sizeof(fam[0]); f++) {
		family(b, fam[f].name, "counter", fam[f].help);
		FOR_GRP(a, l, v, {
			for (int d = 0; d < 2; d++)
				mon_buf__printf(b, "%s{%s,op=\"%s\"} %llu\n", fam[f].name, l->p, dir_name[d],
						(unsigned long long)v[fam[f].off + d]);
		});
	}
}

static const char *const cuda_api_name[MON_CUDA_NAPI] = { "runtime", "driver" };
/* enum gpuio_api_kind */
static const char *const cuda_kind_name[MON_CUDA_KINDS] = {
	"other", "launch", "memcpy", "memset", "sync", "graph_launch", "malloc", "free",
};

/* One sample per non-zero (api, kind) of CUDA counters v. */
static void cuda_samples(struct mon_buf *b, const char *name, const char *labels, const __u64 *v)
{
	for (int api = 0; api < MON_CUDA_NAPI; api++)
		for (int k = 0; k < MON_CUDA_KINDS; k++)
			if (v[api * MON_CUDA_KINDS + k])
				mon_buf__printf(b, "%s{%s,api=\"%s\",kind=\"%s\"} %llu\n", name, labels,
						cuda_api_name[api], cuda_kind_name[k],
						(unsigned long long)v[api * MON_CUDA_KINDS + k]);
}

static void render_cuda(struct monitor_agg *a, struct mon_buf *b, struct mon_buf *l)
{
	if (a->fd_cuda < 0)
		return;
	family(b, "gpuio_process_cuda_calls_total", "counter",
	       "CUDA API calls (uprobes on libcudart = api \"runtime\", libcuda = \"driver\"; a runtime call that reaches the driver counts in both; calls a library makes to its own entry points are not counted), by cgroup and process name (top-K; the rest is comm=\"other\").");
	FOR_GRP(a, l, v, {
		cuda_samples(b, "gpuio_process_cuda_calls_total", l->p, v + NPV);
	});
	family(b, "gpuio_cgroup_cuda_calls_total", "counter",
	       "CUDA API calls by cgroup (top-K; the rest is cgroup=\"other\").");
	for (size_t i = 0; i <= a->ccgs.cap; i++) {
		const struct cuda_cg *c = i < a->ccgs.cap ? htab_ent(&a->ccgs, i) : NULL;

		if (c && (!a->ccgs.live[i] || !c->labeled))
			continue;
		l->len = 0;
		mon_buf__printf(l, "cgroup=\"");
		mon_buf__label(l, c ? monitor_names__cgroup(a->names, c->cgid) : "other");
		mon_buf__printf(l, "\"");
		cuda_samples(b, "gpuio_cgroup_cuda_calls_total", l->p, c ? c->tot : a->ccg_other);
	}
}

static void render_devs(struct monitor_agg *a, struct mon_buf *b, struct mon_buf *l)
{
	struct mon_dev_val *vals;
	__u32 *devs, key, next, *prev = NULL;
	size_t n = 0, max = a->l->max_devs;

	devs = calloc(max, sizeof(*devs));
	vals = calloc(max, sizeof(*vals));
	if (!devs || !vals)
		goto out;
	while (n < max && bpf_map_get_next_key(a->l->fd_dev, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(a->l->fd_dev, &key, a->vbuf) != 0)
			continue;
		devs[n] = key;
		sum_percpu(a, sizeof(struct mon_dev_val), sizeof(struct mon_dev_val) / 8, (__u64 *)&vals[n]);
		n++;
	}
#define DEV_LABEL(i) do { l->len = 0; mon_buf__printf(l, "device=\""); \
		mon_buf__label(l, monitor_names__dev(a->names, devs[i])); mon_buf__printf(l, "\""); } while (0)
	family(b, "gpuio_device_bytes_total", "counter", "Bytes of block requests completed, by disk.");
	for (size_t i = 0; i < n; i++) {
		DEV_LABEL(i);
		for (int d = 0; d < MON_NDIR; d++)
			mon_buf__printf(b, "gpuio_device_bytes_total{%s,op=\"%s\"} %llu\n", l->p, dir_name[d],
					(unsigned long long)vals[i].bytes[d]);
	}
	family(b, "gpuio_device_ops_total", "counter", "Block requests completed, by disk.");
	for (size_t i = 0; i < n; i++) {
		DEV_LABEL(i);
		for (int d = 0; d < MON_NDIR; d++)
			mon_buf__printf(b, "gpuio_device_ops_total{%s,op=\"%s\"} %llu\n", l->p, dir_name[d],
					(unsigned long long)vals[i].ops[d]);
	}
	family(b, "gpuio_device_writeback_bytes_total", "counter",
	       "Bytes written by requests that kernel threads submitted (writeback, journal).");
	for (size_t i = 0; i < n; i++) {
		DEV_LABEL(i);
		mon_buf__printf(b, "gpuio_device_writeback_bytes_total{%s} %llu\n", l->p,
				(unsigned long long)vals[i].writeback_bytes);
	}
	family(b, "gpuio_device_queue_seconds", "histogram",
	       "Time block requests waited in the I/O scheduler (insert to issue).");
	for (size_t i = 0; i < n; i++) {
		DEV_LABEL(i);
		hist(b, "gpuio_device_queue_seconds", l->p, vals[i].queue, vals[i].queue_sum);
	}
	family(b, "gpuio_device_service_seconds", "histogram",
	       "Time the device took per request (issue to complete).");
	for (size_t i = 0; i < n; i++) {
		DEV_LABEL(i);
		for (int d = 0; d < MON_NDIR; d++) {
			size_t at = l->len;

			mon_buf__printf(l, ",op=\"%s\"", dir_name[d]);
			hist(b, "gpuio_device_service_seconds", l->p, vals[i].service[d], vals[i].service_sum[d]);
			l->len = at;
			l->p[at] = 0;
		}
	}
#undef DEV_LABEL
out:
	free(devs);
	free(vals);
}

static __u64 stat_sum(struct monitor_agg *a, __u32 idx)
{
	__u64 *v = a->vbuf, s = 0;

	if (bpf_map_lookup_elem(a->l->fd_stats, &idx, v) != 0)
		return 0;
	for (int c = 0; c < a->ncpus; c++)
		s += v[c];
	return s;
}

static void health_locked(struct monitor_agg *a, struct monitor_agg_health *h)
{
	__u64 pnew = stat_sum(a, MON_STAT_PROC_NEW), cnew = stat_sum(a, MON_STAT_CG_NEW);
	__u64 gone = a->proc_entries + a->procs_deleted;

	memset(h, 0, sizeof(*h));
	h->cg_entries = a->cg_entries;
	h->proc_entries = a->proc_entries;
	h->dev_entries = a->dev_entries;
	h->exited_entries = a->exited_entries;
	h->proc_evicted = pnew > gone ? pnew - gone : 0;
	h->cg_evicted = cnew > a->cg_entries ? cnew - a->cg_entries : 0;
	h->procs_folded = a->procs_folded;
	h->sources = a->srcs.n;
	h->groups = a->groups.n;
	h->cg_series = a->cgs.n;
}

void monitor_agg__health(struct monitor_agg *a, struct monitor_agg_health *h)
{
	pthread_mutex_lock(&a->lock);
	health_locked(a, h);
	pthread_mutex_unlock(&a->lock);
}

static void render_health(struct monitor_agg *a, struct mon_buf *b)
{
	static const char *const fails[][2] = {
		{ "cgroup_map", NULL }, { "proc_map", NULL }, { "dev_map", NULL },
	};
	struct monitor_agg_health h;
	struct { const char *map; __u64 entries, cap, created, failed, evicted; } m[5];
	int nm = a->fd_cuda >= 0 ? 5 : 4;
	static const int full_maps[] = { 0, 1, 2, 4 }, evict_maps[] = { 0, 1, 4 };

	(void)fails;
	health_locked(a, &h);
	m[0] = (typeof(m[0])){ "cgroup", h.cg_entries, a->l->max_cgroups, stat_sum(a, MON_STAT_CG_NEW),
			       stat_sum(a, MON_STAT_CG_FAIL), h.cg_evicted };
	m[1] = (typeof(m[0])){ "process", h.proc_entries, a->l->max_procs, stat_sum(a, MON_STAT_PROC_NEW),
			       stat_sum(a, MON_STAT_PROC_FAIL), h.proc_evicted };
	m[2] = (typeof(m[0])){ "device", h.dev_entries, a->l->max_devs, stat_sum(a, MON_STAT_DEV_NEW),
			       stat_sum(a, MON_STAT_DEV_FAIL), 0 };
	m[3] = (typeof(m[0])){ "exited", h.exited_entries, a->l->max_exited, stat_sum(a, MON_STAT_EXIT_NEW),
			       0, 0 };
	if (nm == 5) {
		__u64 cnew = stat_sum(a, MON_STAT_CUDA_NEW), gone = a->cuda_entries + a->cuda_deleted;

		m[4] = (typeof(m[0])){ "cuda_process", a->cuda_entries, a->max_cuda, cnew,
				       stat_sum(a, MON_STAT_CUDA_FAIL), cnew > gone ? cnew - gone : 0 };
	}
	family(b, "gpuio_monitor_map_entries", "gauge", "Entries in the monitor's BPF maps (at the last refresh).");
	for (int i = 0; i < nm; i++)
		mon_buf__printf(b, "gpuio_monitor_map_entries{map=\"%s\"} %llu\n", m[i].map,
				(unsigned long long)m[i].entries);
	family(b, "gpuio_monitor_map_capacity", "gauge", "Maximum entries of the monitor's BPF maps.");
	for (int i = 0; i < nm; i++)
		mon_buf__printf(b, "gpuio_monitor_map_capacity{map=\"%s\"} %llu\n", m[i].map,
				(unsigned long long)m[i].cap);
	family(b, "gpuio_monitor_map_creations_total", "counter", "Entries the kernel side created.");
	for (int i = 0; i < nm; i++)
		mon_buf__printf(b, "gpuio_monitor_map_creations_total{map=\"%s\"} %llu\n", m[i].map,
				(unsigned long long)m[i].created);
	family(b, "gpuio_monitor_map_full_total", "counter",
	       "Entries that could not be created (map full): their events were not counted.");
	for (int j = 0; j < (nm == 5 ? 4 : 3); j++)
		mon_buf__printf(b, "gpuio_monitor_map_full_total{map=\"%s\"} %llu\n", m[full_maps[j]].map,
				(unsigned long long)m[full_maps[j]].failed);
	mon_buf__printf(b, "gpuio_monitor_map_full_total{map=\"request\"} %llu\n",
			(unsigned long long)stat_sum(a, MON_STAT_RQ_FULL));
	mon_buf__printf(b, "gpuio_monitor_map_full_total{map=\"bio\"} %llu\n",
			(unsigned long long)stat_sum(a, MON_STAT_BIO_FULL));
	mon_buf__printf(b, "gpuio_monitor_map_full_total{map=\"task_storage\"} %llu\n",
			(unsigned long long)stat_sum(a, MON_STAT_TASK_FAIL));
	family(b, "gpuio_monitor_map_evictions_total", "counter",
	       "LRU evictions (entries created, neither present nor deleted by the daemon): counts since the previous refresh lost.");
	for (int j = 0; j < (nm == 5 ? 3 : 2); j++)
		mon_buf__printf(b, "gpuio_monitor_map_evictions_total{map=\"%s\"} %llu\n", m[evict_maps[j]].map,
				(unsigned long long)m[evict_maps[j]].evicted);
	family(b, "gpuio_monitor_processes_folded_total", "counter",
	       "Exited processes whose counts were folded into their series and whose entry was freed.");
	mon_buf__printf(b, "gpuio_monitor_processes_folded_total %llu\n", (unsigned long long)h.procs_folded);
	family(b, "gpuio_monitor_series", "gauge", "Series the daemon tracks in userspace (bounded).");
	mon_buf__printf(b, "gpuio_monitor_series{kind=\"cgroup\"} %llu\n", (unsigned long long)h.cg_series);
	mon_buf__printf(b, "gpuio_monitor_series{kind=\"process_group\"} %llu\n", (unsigned long long)h.groups);
	mon_buf__printf(b, "gpuio_monitor_series{kind=\"process\"} %llu\n", (unsigned long long)h.sources);
	mon_buf__printf(b, "gpuio_monitor_series{kind=\"untracked\"} %llu\n", (unsigned long long)a->untracked);
}

void monitor_agg__render(struct monitor_agg *a, struct mon_buf *b)
{
	struct mon_buf l = { 0 };

	pthread_mutex_lock(&a->lock);
	refresh_locked(a);
	mon_buf__printf(&l, " ");
	render_cgroups(a, b, &l);
	render_procs(a, b, &l);
	render_cuda(a, b, &l);
	render_devs(a, b, &l);
	render_health(a, b);
	for (int i = 0; i < a->nextra; i++)
		a->extra[i](b, a->extra_ctx[i]);
	pthread_mutex_unlock(&a->lock);
	mon_buf__free(&l);
}
