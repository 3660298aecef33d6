/* SPDX-License-Identifier: MIT */
/*
 * monitor_trigger.h — automatic flight-recorder dumps: `--trigger EXPR`
 *   vfs_latency>DUR     a file syscall (read, write, open, fsync, …) took longer
 *   block_latency>DUR   a block request took longer, queue + service
 *   gpu_idle>DUR        every GPU idle that long (NVML utilisation 0); needs
 *                       GPU data: without NVML it is parsed, reported, inert
 *   loop_data_wait>R:DUR  a cgroup's loops waited for their data producers
 *                       more than R (0..1, or a percentage) of their time, in
 *                       every 5 s period for DUR (thread time must be on)
 * Matching is per event (the recorder's stream), per NVML sample, or per
 * cgroup each period; firing is rate-limited (--trigger-interval): one dump
 * per interval, the rest counted.
 */
#ifndef GPUIO_MONITOR_TRIGGER_H
#define GPUIO_MONITOR_TRIGGER_H
#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "bpf/gpuio_abi.h"

struct mon_buf;

enum mon_trigger_kind {
	MON_TRIG_VFS_LATENCY, MON_TRIG_BLOCK_LATENCY, MON_TRIG_GPU_IDLE, MON_TRIG_LOOP_DATA_WAIT,
};

struct monitor_agg;

/* A cgroup's loops, as the loop_data_wait trigger last saw them. */
struct mon_loop_watch {
	__u64 cgid;
	__u64 loop0, data0;      /* the counters at the period's start */
	__u64 t0;                /* the period's start (0: slot free) */
	__u64 above_since;       /* start of the run of periods above the share (0: none) */
	double last_ratio;
};

#define MON_LOOP_WATCH_MAX 128

#define MON_TRIGGERS_MAX 8

struct mon_trigger {
	enum mon_trigger_kind kind;
	__u64 threshold_ns;      /* latency, idle time, or how long the share held */
	double ratio;            /* loop_data_wait: the share of the loops' time */
	char expr[48];
	bool armed;              /* false: needs data this host lacks */
	__u64 matched, fired, suppressed;
};

struct monitor_triggers {
	struct mon_trigger t[MON_TRIGGERS_MAX];
	int n;
	__u64 interval_ns;
	__u64 last_fire_ns;      /* 0: never */
	int pending;             /* index of a trigger that matched, -1 none */
	char why[160];           /* what matched, for the log */
	bool told;               /* a suppression was logged since the last dump */
	__u64 gpu_idle_since;    /* 0: busy or unknown */
	__u64 match_cgid;        /* the cgroup of a pending loop_data_wait match (0: none) */
	struct mon_loop_watch loops[MON_LOOP_WATCH_MAX];
};

/* Parse one --trigger expression into ts. Returns 0 or -EINVAL (message printed). */
int monitor_triggers__add(struct monitor_triggers *ts, const char *expr);
/* Arm what can be armed; says once what cannot (and why). */
void monitor_triggers__arm(struct monitor_triggers *ts, bool have_gpu, bool have_loops);
/* The loops' wait per cgroup (the daemon's tick). */
void monitor_triggers__loops(struct monitor_triggers *ts, struct monitor_agg *agg, __u64 now);
/* The name of a trigger's kind ("vfs_latency", …). */
const char *monitor_trigger__kind_name(enum mon_trigger_kind kind);
/* A recorder event (callback of monitor_recorder__on_event). */
void monitor_triggers__event(void *ctx, const struct gpuio_hdr *h);
/* GPU busy/idle sample (NVML). */
void monitor_triggers__gpu(struct monitor_triggers *ts, bool busy, __u64 now);
/* A trigger is pending and the rate limit allows a dump now: returns its
 * index (and resets the pending state), else -1. Suppressions are counted
 * and logged once per interval. */
int monitor_triggers__take(struct monitor_triggers *ts, __u64 now);
void monitor_triggers__metrics(struct mon_buf *b, void *ctx);

#endif
