// SPDX-License-Identifier: MIT
/*
 * monitor_refresh.c — one refresh of the monitor's series: the BPF maps (per
 * cgroup, process, device, CUDA calls) read and summed over CPUs, bounded to
 * the top series by activity (the rest in "other"), idle and exited series
 * evicted, labels resolved.
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

/* Sum a per-CPU value of n u64 counters (the first n of each CPU's copy). */
void monitor_sum_percpu(const struct monitor_agg *a, size_t vsize, size_t n, __u64 *out)
{
	memset(out, 0, n * sizeof(__u64));
	for (int c = 0; c < a->ncpus; c++) {
		const __u64 *v = (const __u64 *)((const char *)a->vbuf + (size_t)c * mon_round8(vsize));

		for (size_t i = 0; i < n; i++)
			out[i] += v[i];
	}
}

/* Free a slot in a full table: the unlabelled entry idle the longest. Its
 * contributions are in "other" already, so nothing visible is lost. */
static bool evict_idle(struct mon_htab *t, size_t active_off, size_t labeled_off)
{
	void *best = NULL;
	__u64 oldest = ~0ull;

	for (size_t i = 0; i < t->cap; i++) {
		char *e = mon_htab_ent(t, i);
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
		mon_htab_del(t, best);
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
		struct mon_cg_series *s;
		bool changed = false;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(a->l->fd_cg, &key, a->vbuf) != 0)
			continue;
		a->cg_entries++;
		monitor_sum_percpu(a, sizeof(struct mon_cg_val), NCV, cur);
		s = mon_htab_find(&a->cgs, &key);
		if (!s && !(s = mon_htab_add(&a->cgs, &key)) &&
		    evict_idle(&a->cgs, offsetof(struct mon_cg_series, active_ns),
			       offsetof(struct mon_cg_series, labeled)))
			s = mon_htab_add(&a->cgs, &key);
		if (!s) {
			a->untracked++;
			continue;
		}
		if (!s->gen)            /* new: the daemon's own /proc reads are not the jobs' data */
			s->pseudo = !a->o.pseudo_fs && monitor_names__pseudo_fs(a->names, key.dev);
		if (!s->gen && !s->pseudo && !s->labeled && a->cg_labeled < a->o.top_cgroups) {
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
			if (s->pseudo)
				a->cg_pseudo[i] += d;
			else if (!s->labeled)
				a->cg_other[i] += d;
		}
		if (changed && !s->pseudo) {    /* a score of 0 is never labelled */
			s->active_ns = now;
			s->score += (double)(cg_rank(s->tot) - cg_rank(s->tot_at_score));
			memcpy(s->tot_at_score, s->tot, sizeof(s->tot_at_score));
		}
		s->gen = a->gen;
	}
	/* an entry the kernel evicted starts from zero when it comes back */
	for (size_t i = 0; i < a->cgs.cap; i++) {
		struct mon_cg_series *s = mon_htab_ent(&a->cgs, i);

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
		if (!mon_htab_find(&a->exited, &key))
			mon_htab_add(&a->exited, &key);
	}
}

/* Add n deltas d at counter index off of group gk (or "other"). */
static void group_add(struct monitor_agg *a, const struct mon_group_key *gk, const __u64 *d, int off,
		      int n, double score, __u64 now)
{
	struct mon_proc_group *g = mon_htab_find(&a->groups, gk);

	if (!g && !(g = mon_htab_add(&a->groups, gk)) &&
	    evict_idle(&a->groups, offsetof(struct mon_proc_group, active_ns),
		       offsetof(struct mon_proc_group, labeled)))
		g = mon_htab_add(&a->groups, gk);
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
		struct mon_group_key gk = { 0 };
		struct mon_proc_src *src;
		__u64 d[NPV], best_ts = 0;
		bool any = false;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(a->l->fd_proc, &key, a->vbuf) != 0)
			continue;
		a->proc_entries++;
		monitor_sum_percpu(a, sizeof(struct mon_proc_val), NPV, cur);
		for (int c = 0; c < a->ncpus; c++) {
			const struct mon_proc_val *v = (const void *)((char *)a->vbuf +
						(size_t)c * mon_round8(sizeof(struct mon_proc_val)));

			if (v->comm_ts > best_ts) {
				best_ts = v->comm_ts;
				/* the key must not carry bytes past the NUL */
				memset(gk.comm, 0, sizeof(gk.comm));
				memcpy(gk.comm, v->comm, strnlen(v->comm, sizeof(gk.comm) - 1));
			}
		}
		gk.cgid = key.cgid;
		src = mon_htab_find(&a->srcs, &key);
		if (!src)
			src = mon_htab_add(&a->srcs, &key);
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
		if (mon_htab_find(&a->exited, &ek) && ndel < a->l->max_procs)
			del[ndel++] = key;
	}
	for (size_t i = 0; i < ndel; i++) {
		struct mon_proc_src *src = mon_htab_find(&a->srcs, &del[i]);

		if (bpf_map_delete_elem(a->l->fd_proc, &del[i]) == 0)
			a->procs_deleted++;
		if (src)
			mon_htab_del(&a->srcs, src);
		a->procs_folded++;
	}
	/* sources whose entry the kernel evicted or we deleted */
	for (size_t i = 0; i < a->srcs.cap; i++) {
		struct mon_proc_src *s = mon_htab_ent(&a->srcs, i);

		if (a->srcs.live[i] && s->gen != a->gen)
			mon_htab_del(&a->srcs, s);
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
		struct mon_group_key gk = { 0 };
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
		src = mon_htab_find(&a->csrcs, &key);
		if (!src)
			src = mon_htab_add(&a->csrcs, &key);
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
			c = mon_htab_find(&a->ccgs, &key.cgid);
			if (!c && !(c = mon_htab_add(&a->ccgs, &key.cgid)) &&
			    evict_idle(&a->ccgs, offsetof(struct cuda_cg, active_ns), offsetof(struct cuda_cg, labeled)))
				c = mon_htab_add(&a->ccgs, &key.cgid);
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
		if (mon_htab_find(&a->exited, &ek) && ndel < a->max_cuda)
			del[ndel++] = key;
	}
	for (size_t i = 0; i < ndel; i++) {
		struct cuda_src *src = mon_htab_find(&a->csrcs, &del[i]);

		if (bpf_map_delete_elem(a->fd_cuda, &del[i]) == 0)
			a->cuda_deleted++;
		if (src)
			mon_htab_del(&a->csrcs, src);
	}
	for (size_t i = 0; i < a->csrcs.cap; i++) {
		struct cuda_src *s = mon_htab_ent(&a->csrcs, i);

		if (a->csrcs.live[i] && s->gen != a->gen)
			mon_htab_del(&a->csrcs, s);
	}
}

/* Thread time per process (mon_sched_proc): into the (cgroup, comm) groups
 * after the I/O counters and CUDA calls, and per cgroup; exited processes
 * folded and deleted. Ranked by CPU time and waits for data (us), not by
 * sleep: a node's idle daemons do not take the labelled slots. */
static void refresh_sched(struct monitor_agg *a, __u64 now)
{
	struct mon_proc_key key, next, *prev = NULL, *del = a->sched_keys;
	struct mon_sched_val v;
	size_t ndel = 0;

	if (a->l->fd_sched < 0)
		return;
	a->sched_entries = 0;
	while (bpf_map_get_next_key(a->l->fd_sched, prev, &next) == 0) {
		struct mon_exit_key ek = { .tgid = next.tgid, .start_ns = next.start_ns };
		struct mon_group_key gk = { 0 };
		struct sched_src *src;
		struct sched_cg *c;
		__u64 d[NSC];
		double score;
		bool any = false;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(a->l->fd_sched, &key, &v) != 0)
			continue;
		a->sched_entries++;
		snprintf(gk.comm, sizeof(gk.comm), "%.15s", v.comm);   /* zeros after the NUL */
		gk.cgid = key.cgid;
		src = mon_htab_find(&a->ssrcs, &key);
		if (!src)
			src = mon_htab_add(&a->ssrcs, &key);
		for (int i = 0; i < NSC; i++) {
			__u64 last = src ? src->last[i] : 0;

			d[i] = v.ns[i] >= last ? v.ns[i] - last : v.ns[i];
			any |= d[i] != 0;
			if (src)
				src->last[i] = v.ns[i];
		}
		if (src)
			src->gen = a->gen;
		else
			a->untracked++;
		if (any) {
			score = (double)(d[MON_TS_CPU] + d[MON_TS_N + MON_LW_DATA]) / 1e3;
			group_add(a, &gk, d, NPV + NCU, NSC, score, now);
			c = mon_htab_find(&a->scgs, &key.cgid);
			if (!c && !(c = mon_htab_add(&a->scgs, &key.cgid)) &&
			    evict_idle(&a->scgs, offsetof(struct sched_cg, active_ns), offsetof(struct sched_cg, labeled)))
				c = mon_htab_add(&a->scgs, &key.cgid);
			if (c && !c->active_ns && !c->labeled && a->scg_labeled < a->o.top_cgroups) {
				c->labeled = true;
				a->scg_labeled++;
			}
			for (int i = 0; i < NSC; i++) {
				if (c)
					c->tot[i] += d[i];
				if (!c || !c->labeled)
					a->scg_other[i] += d[i];
			}
			if (c) {
				c->score += score;
				c->active_ns = now;
			}
		}
		if (mon_htab_find(&a->exited, &ek) && ndel < a->l->max_procs)
			del[ndel++] = key;
	}
	for (size_t i = 0; i < ndel; i++) {
		struct sched_src *src = mon_htab_find(&a->ssrcs, &del[i]);

		if (bpf_map_delete_elem(a->l->fd_sched, &del[i]) == 0)
			a->sched_deleted++;
		if (src)
			mon_htab_del(&a->ssrcs, src);
	}
	for (size_t i = 0; i < a->ssrcs.cap; i++) {
		struct sched_src *s = mon_htab_ent(&a->ssrcs, i);

		if (a->ssrcs.live[i] && s->gen != a->gen)
			mon_htab_del(&a->ssrcs, s);
	}
}

/* Exited processes are forgotten once every table has folded them. */
static void drop_exited(struct monitor_agg *a)
{
	/* exited processes are forgotten (an exit seen before the process's
	 * entry is read costs at most its last period's counts) */
	for (size_t i = 0; i < a->exited.cap; i++) {
		struct mon_exit_key *k = mon_htab_ent(&a->exited, i);

		if (!a->exited.live[i])
			continue;
		bpf_map_delete_elem(a->l->fd_exited, k);
		mon_htab_del(&a->exited, k);
	}
}

/*
 * Top-K by recent activity: scores decay each refresh; labelled series idle
 * for retire_ns give their slot up; free slots go to the most active; a
 * labelled series is replaced when an unlabelled one is more than twice as
 * active (hysteresis: labels do not flap). Returns how many are labelled.
 */
static unsigned relabel(struct mon_htab *t, unsigned k, size_t score_off, size_t active_off,
			size_t labeled_off, __u64 now, __u64 retire_ns)
{
	unsigned labeled = 0;

#define F_SCORE(e) (*(double *)((e) + score_off))
#define F_LAB(e) (*(bool *)((e) + labeled_off))
	for (size_t i = 0; i < t->cap; i++) {
		char *e = mon_htab_ent(t, i);
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
			char *e = mon_htab_ent(t, i);

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

void monitor_refresh_locked(struct monitor_agg *a)
{
	__u64 now = clock_mono_ns(), key, next, *prev = NULL;

	a->gen++;
	monitor_loader__flush(a->l);     /* first: every finished call is in the maps */
	refresh_cgroups(a, now);
	read_exited(a);
	refresh_procs(a, now);
	refresh_cuda(a, now);
	refresh_sched(a, now);
	drop_exited(a);
	if (a->l->fd_sched >= 0)
		a->scg_labeled = relabel(&a->scgs, a->o.top_cgroups, offsetof(struct sched_cg, score),
			offsetof(struct sched_cg, active_ns), offsetof(struct sched_cg, labeled),
			now, a->o.retire_ns);
	if (a->fd_cuda >= 0)
		a->ccg_labeled = relabel(&a->ccgs, a->o.top_cgroups, offsetof(struct cuda_cg, score),
			offsetof(struct cuda_cg, active_ns), offsetof(struct cuda_cg, labeled),
			now, a->o.retire_ns);
	a->cg_labeled = relabel(&a->cgs, a->o.top_cgroups, offsetof(struct mon_cg_series, score),
		offsetof(struct mon_cg_series, active_ns), offsetof(struct mon_cg_series, labeled),
		now, a->o.retire_ns);
	a->grp_labeled = relabel(&a->groups, a->o.top_procs, offsetof(struct mon_proc_group, score),
		offsetof(struct mon_proc_group, active_ns), offsetof(struct mon_proc_group, labeled),
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
	monitor_refresh_locked(a);
	pthread_mutex_unlock(&a->lock);
}
