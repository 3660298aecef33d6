// SPDX-License-Identifier: MIT
/*
 * monitor_agg.c — BPF maps -> bounded series -> Prometheus text
 * (monitor_agg.h): the series tables and the text buffer. A refresh reads
 * the maps (monitor_refresh.c); a scrape renders (monitor_render.c).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "bpf/monitor/monitor.h"
#include "monitor/monitor_agg.h"
#include "monitor/monitor_bpf.h"
#include "monitor/monitor_names.h"
#include "lib/log.h"
#include "monitor/monitor_agg_priv.h"
#include "lib/clock.h"

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

static __u64 hash_bytes(const void *k, size_t len)
{
	const unsigned char *p = k;
	__u64 h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

static int htab_init(struct mon_htab *t, size_t cap, size_t esz, size_t klen)
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

static void htab_fini(struct mon_htab *t)
{
	free(t->ents);
	free(t->next);
	free(t->bucket);
	free(t->live);
}

void *mon_htab_ent(const struct mon_htab *t, size_t i)
{
	return t->ents + i * t->esz;
}

void *mon_htab_find(const struct mon_htab *t, const void *key)
{
	size_t b = hash_bytes(key, t->klen) & (t->nb - 1);

	for (int i = t->bucket[b]; i >= 0; i = t->next[i])
		if (!memcmp(mon_htab_ent(t, i), key, t->klen))
			return mon_htab_ent(t, i);
	return NULL;
}

void *mon_htab_add(struct mon_htab *t, const void *key)
{
	size_t b = hash_bytes(key, t->klen) & (t->nb - 1);
	int i = t->free;
	void *e;

	if (i < 0)
		return NULL;
	t->free = t->next[i];
	e = mon_htab_ent(t, i);
	memset(e, 0, t->esz);
	memcpy(e, key, t->klen);
	t->live[i] = 1;
	t->next[i] = t->bucket[b];
	t->bucket[b] = i;
	t->n++;
	return e;
}

void mon_htab_del(struct mon_htab *t, void *e)
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
_Static_assert(sizeof(struct mon_cg_val) % sizeof(__u64) == 0, "cg value is all u64");
_Static_assert(offsetof(struct mon_proc_val, comm_ts) == NPV * sizeof(__u64), "proc counters first");


size_t mon_round8(size_t n)
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
	a->vbuf = calloc((size_t)a->ncpus, mon_round8(vmax));
	a->keys = calloc(l->max_procs + 1, sizeof(struct mon_proc_key));
	if (!a->vbuf || !a->keys ||
	    htab_init(&a->cgs, l->max_cgroups * 2, sizeof(struct mon_cg_series), sizeof(struct mon_cg_key)) ||
	    htab_init(&a->groups, 4096, sizeof(struct mon_proc_group), sizeof(struct mon_group_key)) ||
	    htab_init(&a->srcs, l->max_procs * 2, sizeof(struct mon_proc_src), sizeof(struct mon_proc_key)) ||
	    htab_init(&a->exited, l->max_exited, sizeof(struct mon_exit_key), sizeof(struct mon_exit_key))) {
		monitor_agg__free(a);
		return -ENOMEM;
	}
	if (l->fd_sched >= 0 &&
	    (!(a->sched_keys = calloc(l->max_procs + 1, sizeof(struct mon_proc_key))) ||
	     htab_init(&a->ssrcs, l->max_procs * 2, sizeof(struct sched_src), sizeof(struct mon_proc_key)) ||
	     htab_init(&a->scgs, l->max_cgroups, sizeof(struct sched_cg), sizeof(__u64)))) {
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
	htab_fini(&a->ssrcs);
	htab_fini(&a->scgs);
	free(a->sched_keys);
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
	if (a->nextra == MON_EXTRA_MAX) {
		pr_warn("monitor: more than %d extra metric families: one is not shown", MON_EXTRA_MAX);
		return;
	}
	a->extra[a->nextra] = fn;
	a->extra_ctx[a->nextra++] = ctx;
}

void monitor_agg__each_loop(struct monitor_agg *a, monitor_agg_loop_fn fn, void *ctx)
{
	pthread_mutex_lock(&a->lock);
	for (size_t i = 0; i < a->scgs.cap; i++) {
		const struct sched_cg *c = mon_htab_ent(&a->scgs, i);

		if (a->scgs.live[i] && c->tot[MON_TS_N + MON_LW_TOTAL])
			fn(ctx, c->cgid, c->tot[MON_TS_N + MON_LW_TOTAL], c->tot[MON_TS_N + MON_LW_DATA]);
	}
	pthread_mutex_unlock(&a->lock);
}

void monitor_agg__each_cgroup(struct monitor_agg *a, monitor_agg_cgroup_fn fn, void *ctx)
{
	pthread_mutex_lock(&a->lock);
	for (size_t i = 0; i < a->scgs.cap; i++)
		if (a->scgs.live[i]) {
			__u64 id = ((const struct sched_cg *)mon_htab_ent(&a->scgs, i))->cgid;

			fn(ctx, id, monitor_names__cgroup(a->names, id), monitor_names__job(a->names, id));
		}
	for (size_t i = 0; i < a->cgs.cap; i++)
		if (a->cgs.live[i]) {
			__u64 id = ((const struct mon_cg_series *)mon_htab_ent(&a->cgs, i))->key.cgid;

			fn(ctx, id, monitor_names__cgroup(a->names, id), monitor_names__job(a->names, id));
		}
	pthread_mutex_unlock(&a->lock);
}
