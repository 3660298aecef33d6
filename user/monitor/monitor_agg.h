/* SPDX-License-Identifier: MIT */
/*
 * monitor_agg.h — turns bpf/monitor/monitor.bpf.c's maps into Prometheus text.
 *
 * The kernel keeps cumulative per-CPU sums; each refresh (a scrape, or the
 * daemon's 1 s tick) reads them, adds the deltas to bounded userspace
 * series, folds and deletes the entries of processes that exited, and
 * keeps label cardinality bounded: the top-K series (by bytes) are
 * labelled, everything else is summed into cgroup="other" / comm="other".
 * A labelled series shows its whole total; "other" only what it received
 * while unlabelled, so every exported counter only ever goes up.
 */
#ifndef GPUIO_MONITOR_AGG_H
#define GPUIO_MONITOR_AGG_H
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct monitor_loader;
struct monitor_names;
struct monitor_agg;

/* A growable text buffer (the /metrics page). */
struct mon_buf {
	char *p;
	size_t len, cap;
	bool oom;
};
void mon_buf__printf(struct mon_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* A Prometheus label value, escaped (\\, \", \n). */
void mon_buf__label(struct mon_buf *b, const char *v);
void mon_buf__free(struct mon_buf *b);

struct monitor_agg_opts {
	unsigned top_cgroups;    /* labelled (cgroup, device) series */
	unsigned top_procs;      /* labelled (cgroup, comm) series */
	__u64 retire_ns;         /* a labelled series idle this long gives its slot up */
	bool pseudo_fs;          /* label proc, sysfs… series too (else summed apart) */
};

/* Extra families appended to the page (recorder, GPU, …). */
typedef void (*monitor_agg_extra_fn)(struct mon_buf *b, void *ctx);

int monitor_agg__new(struct monitor_loader *l, struct monitor_names *names,
		     const struct monitor_agg_opts *o, struct monitor_agg **out);
void monitor_agg__free(struct monitor_agg *a);
/* Also read the CUDA call counts map (bpf/monitor/monitor_cuda.bpf.c) at fd. */
int monitor_agg__set_cuda(struct monitor_agg *a, int fd, __u32 max_entries);
void monitor_agg__add_extra(struct monitor_agg *a, monitor_agg_extra_fn fn, void *ctx);
/* Each cgroup whose loops ran: its loops' time and their data wait so far
 * (ns, cumulative; the loop_data_wait trigger). Thread-safe. */
typedef void (*monitor_agg_loop_fn)(void *ctx, __u64 cgid, __u64 loop_ns, __u64 data_ns);
void monitor_agg__each_loop(struct monitor_agg *a, monitor_agg_loop_fn fn, void *ctx);
/* Each cgroup with series, its path and job (NULL: none); a cgroup may come
 * twice (thread time, then I/O). Thread-safe (the names are read under the lock). */
struct job_identity;
typedef void (*monitor_agg_cgroup_fn)(void *ctx, __u64 cgid, const char *path,
				      const struct job_identity *job);
void monitor_agg__each_cgroup(struct monitor_agg *a, monitor_agg_cgroup_fn fn, void *ctx);
/* Read the maps and fold exited processes (thread-safe). */
void monitor_agg__refresh(struct monitor_agg *a);
/* Refresh, then render the whole page into b (thread-safe). */
void monitor_agg__render(struct monitor_agg *a, struct mon_buf *b);

struct monitor_agg_health {
	__u64 cg_entries, proc_entries, dev_entries, exited_entries;
	__u64 proc_evicted, cg_evicted;
	__u64 procs_folded;      /* exited processes folded and deleted */
	__u64 sources, groups, cg_series;
};
void monitor_agg__health(struct monitor_agg *a, struct monitor_agg_health *h);

#endif
