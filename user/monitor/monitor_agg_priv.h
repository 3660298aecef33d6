/* SPDX-License-Identifier: MIT */
/*
 * monitor_agg_priv.h — the aggregator's state, shared by monitor_agg.c
 * (series tables), monitor_refresh.c (BPF maps -> series) and
 * monitor_render.c (series -> Prometheus text).
 */
#ifndef GPUIO_MONITOR_AGG_PRIV_H
#define GPUIO_MONITOR_AGG_PRIV_H

#include <pthread.h>
#include "bpf/monitor/monitor.h"
#include "monitor/monitor_agg.h"


/* ------------------------------------------------------------------ hash table */

/* Chained hash over a fixed pool: bounded, no allocation after init. */
struct mon_htab {
	size_t cap, esz, klen, nb;
	char *ents;
	int *next, *bucket;
	unsigned char *live;
	int free;
	size_t n;
};

void *mon_htab_ent(const struct mon_htab *t, size_t i);

void *mon_htab_find(const struct mon_htab *t, const void *key);

void *mon_htab_add(struct mon_htab *t, const void *key);

void mon_htab_del(struct mon_htab *t, void *e);

/* ------------------------------------------------------------------ series */

#define NCV (sizeof(struct mon_cg_val) / sizeof(__u64))
#define NPV 8    /* the leading counters of struct mon_proc_val */
#define NCU (MON_CUDA_NAPI * MON_CUDA_KINDS)   /* struct mon_cuda_val's calls */
#define NSC MON_SCHED_N  /* struct mon_sched_val's ns: thread states, then loop counters */
#define NGV (NPV + NCU + NSC)  /* a process group: I/O counters, CUDA calls, thread time */

struct mon_cg_series {
	struct mon_cg_key key;
	__u64 last[NCV];         /* kernel sums at the previous refresh */
	__u64 tot[NCV];          /* every delta since the daemon started */
	__u64 active_ns;
	double score;            /* recent activity (decayed bytes + ops) */
	__u64 tot_at_score[NCV];
	__u32 gen;
	bool labeled;
	bool pseudo;             /* on a pseudo filesystem: never labelled, summed in cg_pseudo */
};

struct mon_group_key { __u64 cgid; char comm[16]; };

struct mon_proc_group {
	struct mon_group_key key;
	__u64 tot[NGV];
	__u64 active_ns;
	double score;
	bool labeled;
};

struct mon_proc_src {
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

/* A mon_sched_proc entry (thread time, bpf/monitor/mon_sched.bpf.h). */
struct sched_src {
	struct mon_proc_key key;
	__u64 last[NSC];
	__u32 gen;
};

/* Thread time per cgroup (summed from the process entries' deltas). */
struct sched_cg {
	__u64 cgid;
	__u64 tot[NSC];
	__u64 active_ns;
	double score;
	bool labeled;
};

#define MON_EXTRA_MAX 8

struct monitor_agg {
	pthread_mutex_t lock;
	struct monitor_loader *l;
	struct monitor_names *names;
	struct monitor_agg_opts o;
	int ncpus;
	void *vbuf;              /* one lookup of a per-CPU value */
	void *keys;              /* keys to delete after an iteration */
	struct mon_htab cgs, groups, srcs, exited;
	__u64 cg_other[NCV];
	__u64 cg_pseudo[NCV];    /* series on pseudo filesystems (opts.pseudo_fs off) */
	__u64 proc_other[NGV];
	/* CUDA call counts (monitor_agg__set_cuda; fd_cuda -1: off) */
	int fd_cuda;
	__u32 max_cuda;
	void *cuda_keys;
	struct mon_htab csrcs, ccgs;
	__u64 ccg_other[NCU];
	unsigned ccg_labeled;
	__u64 cuda_entries, cuda_deleted;
	/* thread time (l->fd_sched; -1: --no-thread-time) */
	void *sched_keys;
	struct mon_htab ssrcs, scgs;
	__u64 scg_other[NSC];
	unsigned scg_labeled;
	__u64 sched_entries, sched_deleted;
	__u32 gen;
	unsigned cg_labeled, grp_labeled;   /* labelled series, per table */
	__u64 cg_entries, proc_entries, dev_entries, exited_entries;
	__u64 procs_deleted, procs_folded, untracked;
	monitor_agg_extra_fn extra[MON_EXTRA_MAX];
	void *extra_ctx[MON_EXTRA_MAX];
	int nextra;
};


size_t mon_round8(size_t n);

void monitor_sum_percpu(const struct monitor_agg *a, size_t vsize, size_t n, __u64 *out);

void monitor_refresh_locked(struct monitor_agg *a);

#endif /* GPUIO_MONITOR_AGG_PRIV_H */
