// SPDX-License-Identifier: MIT
/*
 * monitor_render.c — the monitor's series as Prometheus text: counters and
 * log2 latency histograms per cgroup, process group and device, CUDA call
 * counts, and the daemon's own health (drops, evictions, map fill).
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
#include "lib/job_identity.h"
#include "lib/log.h"
#include "monitor/monitor_agg_priv.h"
#include "lib/units.h"

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
				(double)(1ull << (i + MON_HIST_SHIFT)) / NS_PER_SEC_F, (unsigned long long)cum);
	}
	cum += slots[MON_HIST_SLOTS - 1];
	mon_buf__printf(b, "%s_bucket{%s%sle=\"+Inf\"} %llu\n", name, labels, sep,
			(unsigned long long)cum);
	mon_buf__printf(b, "%s_sum{%s} %.9f\n", name, labels, sum_ns / NS_PER_SEC_F);
	mon_buf__printf(b, "%s_count{%s} %llu\n", name, labels, (unsigned long long)cum);
}

/* `,k="v"` when v is not empty */
static void opt_label(struct mon_buf *l, const char *k, const char *v)
{
	if (!v || !v[0])
		return;
	mon_buf__printf(l, ",%s=\"", k);
	mon_buf__label(l, v);
	mon_buf__printf(l, "\"");
}

/* `cgroup="…"` and the job identity its path names (slurm_job, k8s_pod_uid…). */
static void cgroup_labels(struct monitor_agg *a, bool other, __u64 cgid, struct mon_buf *l)
{
	const struct job_identity *job = other ? NULL : monitor_names__job(a->names, cgid);

	mon_buf__printf(l, "cgroup=\"");
	mon_buf__label(l, other ? "other" : monitor_names__cgroup(a->names, cgid));
	mon_buf__printf(l, "\"");
	for (int i = 0; job && i < JOB_IDENTITY_NFIELDS; i++)
		opt_label(l, job_identity_keys[i], job_identity__field(job, i));
}

/* `cgroup="…",…,device="…",mountpoint="…",fstype="…"` of a cgroup series (NULL: the other series). */
static void cg_labels(struct monitor_agg *a, const struct mon_cg_series *s, struct mon_buf *l)
{
	l->len = 0;
	cgroup_labels(a, !s, s ? s->key.cgid : 0, l);
	mon_buf__printf(l, ",device=\"");
	mon_buf__label(l, s ? monitor_names__dev(a->names, s->key.dev) : "other");
	mon_buf__printf(l, "\"");
	if (s) {
		opt_label(l, "mountpoint", monitor_names__mountpoint(a->names, s->key.dev));
		opt_label(l, "fstype", monitor_names__fstype(a->names, s->key.dev));
	}
}

static void grp_labels(struct monitor_agg *a, const struct mon_proc_group *g, struct mon_buf *l)
{
	l->len = 0;
	cgroup_labels(a, !g, g ? g->key.cgid : 0, l);
	mon_buf__printf(l, ",comm=\"");
	mon_buf__label(l, g ? g->key.comm : "other");
	mon_buf__printf(l, "\"");
}

/* Walk the labelled cgroup series, then "other": fn(values, labels). */
#define FOR_CG(a, l, v, body) do { \
	for (size_t _i = 0; _i <= (a)->cgs.cap; _i++) { \
		const struct mon_cg_series *_s = _i < (a)->cgs.cap ? mon_htab_ent(&(a)->cgs, _i) : NULL; \
		if (_s && (!(a)->cgs.live[_i] || !_s->labeled)) continue; \
		const struct mon_cg_val *v = (const void *)(_s ? _s->tot : (a)->cg_other); \
		cg_labels(a, _s, l); \
		body \
	} } while (0)

#define FOR_GRP(a, l, v, body) do { \
	for (size_t _i = 0; _i <= (a)->groups.cap; _i++) { \
		const struct mon_proc_group *_g = _i < (a)->groups.cap ? mon_htab_ent(&(a)->groups, _i) : NULL; \
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
	/* --no-latency: not measured, so not served (an empty histogram would read as fast) */
	if (!a->l->no_latency) {
		family(b, "gpuio_cgroup_vfs_latency_seconds", "histogram",
		       "Latency of those syscalls (log2 buckets).");
		FOR_CG(a, l, v, {
			for (int d = 0; d < 2; d++) {
				size_t at = l->len;

				if (!v->vfs_ops[d])
					continue;
				mon_buf__printf(l, ",op=\"%s\"", dir_name[d]);
				hist(b, "gpuio_cgroup_vfs_latency_seconds", l->p, v->vfs_lat[d],
				     v->vfs_lat_sum[d]);
				l->len = at;
				l->p[at] = 0;
			}
		});
	}
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
	/* left out of the series above (--pseudo-fs keeps them there): said, not lost */
	{
		const struct mon_cg_val *p = (const void *)a->cg_pseudo;

		family(b, "gpuio_pseudo_fs_vfs_bytes_total", "counter",
		       "Bytes of read/write-family syscalls on pseudo filesystems (proc, sysfs, cgroup, debugfs...), all cgroups: not in the gpuio_cgroup_vfs_* series unless --pseudo-fs.");
		for (int d = 0; d < 2; d++)
			mon_buf__printf(b, "gpuio_pseudo_fs_vfs_bytes_total{op=\"%s\"} %llu\n", dir_name[d],
					(unsigned long long)p->vfs_bytes[d]);
		family(b, "gpuio_pseudo_fs_vfs_ops_total", "counter",
		       "read/write-family syscalls on pseudo filesystems, all cgroups.");
		for (int d = 0; d < 2; d++)
			mon_buf__printf(b, "gpuio_pseudo_fs_vfs_ops_total{op=\"%s\"} %llu\n", dir_name[d],
					(unsigned long long)p->vfs_ops[d]);
	}
}

static void render_procs(struct monitor_agg *a, struct mon_buf *b, struct mon_buf *l)
{
	static const struct { const char *name, *help; int off; } fam[] = {
		{ "gpuio_process_vfs_bytes_total", "Bytes moved by read/write syscalls, by cgroup and process name (top-K; the rest is comm=\"other\").", 0 },
		{ "gpuio_process_vfs_ops_total", "read/write syscalls, by cgroup and process name.", 2 },
		{ "gpuio_process_block_bytes_total", "Block bytes submitted, by cgroup and process name.", 4 },
		{ "gpuio_process_block_ops_total", "Block requests submitted, by cgroup and process name.", 6 },
	};

	for (size_t f = 0; f < ARRAY_SIZE(fam); f++) {
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
		const struct cuda_cg *c = i < a->ccgs.cap ? mon_htab_ent(&a->ccgs, i) : NULL;

		if (c && (!a->ccgs.live[i] || !c->labeled))
			continue;
		l->len = 0;
		cgroup_labels(a, !c, c ? c->cgid : 0, l);
		cuda_samples(b, "gpuio_cgroup_cuda_calls_total", l->p, c ? c->tot : a->ccg_other);
	}
}

static const char *const ts_name[MON_TS_N] = {
	"on_cpu", "runnable", "file_io", "page_fault", "network", "other_sleep",
};
static const char *const lw_name[MON_LW_TOTAL] = { "data", "file_io", "page_fault", "network", "other" };

/* The thread-time samples of one series: ns (NSC counters) under labels l. */
static void sched_samples(struct mon_buf *b, const char *pre, const char *what, const char *labels,
			  const __u64 *ns)
{
	__u64 any = 0;

	if (!strcmp(what, "thread")) {
		for (int i = 0; i < MON_TS_N; i++)
			any |= ns[i];
		for (int i = 0; any && i < MON_TS_N; i++)
			mon_buf__printf(b, "%sthread_seconds_total{%s,state=\"%s\"} %.9f\n", pre, labels,
					ts_name[i], ns[i] / NS_PER_SEC_F);
	} else if (ns[MON_TS_N + MON_LW_TOTAL]) {
		if (!strcmp(what, "loop"))
			mon_buf__printf(b, "%sloop_seconds_total{%s} %.9f\n", pre, labels,
					ns[MON_TS_N + MON_LW_TOTAL] / NS_PER_SEC_F);
		else
			for (int i = 0; i < MON_LW_TOTAL; i++)
				mon_buf__printf(b, "%sloop_wait_seconds_total{%s,cause=\"%s\"} %.9f\n", pre,
						labels, lw_name[i], ns[MON_TS_N + i] / NS_PER_SEC_F);
	}
}

/* Thread time and loop waits, per cgroup (gpuio_thread_seconds_total...)
 * and per process group (gpuio_process_thread_seconds_total...). */
static void render_sched(struct monitor_agg *a, struct mon_buf *b, struct mon_buf *l)
{
	static const struct { const char *what, *name, *type, *help; } fam[] = {
		{ "thread", "thread_seconds_total", "counter",
		  "Time of the threads of a cgroup's processes by state: on_cpu, runnable (waiting for a CPU), or asleep in file_io (file syscalls), page_fault, network (socket calls), other_sleep (futex, poll, pipes, timers...)." },
		{ "wait", "loop_wait_seconds_total", "counter",
		  "Sleep of the threads recognised as loops (woken by a data producer at least 3 times) by cause: data (asleep until a producer - a descendant process or a file-reading thread of its own - woke it, and runnable right after), file_io, page_fault, network, other." },
		{ "loop", "loop_seconds_total", "counter",
		  "All the time of the threads recognised as loops (the denominator of their waits)." },
	};
	char name[96];

	if (a->l->fd_sched < 0)
		return;
	for (size_t f = 0; f < ARRAY_SIZE(fam); f++) {
		snprintf(name, sizeof(name), "gpuio_%s", fam[f].name);
		family(b, name, fam[f].type, fam[f].help);
		for (size_t i = 0; i <= a->scgs.cap; i++) {
			const struct sched_cg *c = i < a->scgs.cap ? mon_htab_ent(&a->scgs, i) : NULL;

			if (c && (!a->scgs.live[i] || !c->labeled))
				continue;
			l->len = 0;
			cgroup_labels(a, !c, c ? c->cgid : 0, l);
			sched_samples(b, "gpuio_", fam[f].what, l->p, c ? c->tot : a->scg_other);
		}
	}
	for (size_t f = 0; f < ARRAY_SIZE(fam); f++) {
		snprintf(name, sizeof(name), "gpuio_process_%s", fam[f].name);
		family(b, name, fam[f].type, "The same by cgroup and process name (top-K; the rest is comm=\"other\").");
		FOR_GRP(a, l, v, {
			sched_samples(b, "gpuio_process_", fam[f].what, l->p, v + NPV + NCU);
		});
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
		monitor_sum_percpu(a, sizeof(struct mon_dev_val), sizeof(struct mon_dev_val) / 8, (__u64 *)&vals[n]);
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
	struct { const char *map; __u64 entries, cap, created, failed, evicted; } m[6];
	int nm = 4, nfull = 3, nevict = 2;
	int full_maps[5] = { 0, 1, 2 }, evict_maps[4] = { 0, 1 };

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
	if (a->fd_cuda >= 0) {
		__u64 cnew = stat_sum(a, MON_STAT_CUDA_NEW), gone = a->cuda_entries + a->cuda_deleted;

		m[nm] = (typeof(m[0])){ "cuda_process", a->cuda_entries, a->max_cuda, cnew,
				       stat_sum(a, MON_STAT_CUDA_FAIL), cnew > gone ? cnew - gone : 0 };
		full_maps[nfull++] = evict_maps[nevict++] = nm++;
	}
	if (a->l->fd_sched >= 0) {
		__u64 snew = stat_sum(a, MON_STAT_SCHED_NEW), gone = a->sched_entries + a->sched_deleted;

		m[nm] = (typeof(m[0])){ "sched_process", a->sched_entries, a->l->max_procs, snew,
				       stat_sum(a, MON_STAT_SCHED_FAIL), snew > gone ? snew - gone : 0 };
		full_maps[nfull++] = evict_maps[nevict++] = nm++;
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
	for (int j = 0; j < nfull; j++)
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
	for (int j = 0; j < nevict; j++)
		mon_buf__printf(b, "gpuio_monitor_map_evictions_total{map=\"%s\"} %llu\n", m[evict_maps[j]].map,
				(unsigned long long)m[evict_maps[j]].evicted);
	family(b, "gpuio_monitor_processes_folded_total", "counter",
	       "Exited processes whose counts were folded into their series and whose entry was freed.");
	mon_buf__printf(b, "gpuio_monitor_processes_folded_total %llu\n", (unsigned long long)h.procs_folded);
	family(b, "gpuio_monitor_series", "gauge", "Series the daemon tracks in userspace (bounded).");
	mon_buf__printf(b, "gpuio_monitor_series{kind=\"cgroup\"} %llu\n", (unsigned long long)h.cg_series);
	mon_buf__printf(b, "gpuio_monitor_series{kind=\"process_group\"} %llu\n", (unsigned long long)h.groups);
	mon_buf__printf(b, "gpuio_monitor_series{kind=\"process\"} %llu\n", (unsigned long long)h.sources);
	if (a->l->fd_sched >= 0)
		mon_buf__printf(b, "gpuio_monitor_series{kind=\"sched_cgroup\"} %llu\n", (unsigned long long)a->scgs.n);
	mon_buf__printf(b, "gpuio_monitor_series{kind=\"untracked\"} %llu\n", (unsigned long long)a->untracked);
}

void monitor_agg__render(struct monitor_agg *a, struct mon_buf *b)
{
	struct mon_buf l = { 0 };

	pthread_mutex_lock(&a->lock);
	monitor_refresh_locked(a);
	mon_buf__printf(&l, " ");
	render_cgroups(a, b, &l);
	render_procs(a, b, &l);
	render_cuda(a, b, &l);
	render_sched(a, b, &l);
	render_devs(a, b, &l);
	render_health(a, b);
	for (int i = 0; i < a->nextra; i++)
		a->extra[i](b, a->extra_ctx[i]);
	pthread_mutex_unlock(&a->lock);
	mon_buf__free(&l);
}
