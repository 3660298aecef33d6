/* SPDX-License-Identifier: MIT */
/*
 * sink.h — what an output format implements to be an exporter: one callback
 * per thing the timeline model shows. tl_model__walk (timeline/walk.c) walks
 * a loaded model once, in a fixed order, and hands each thing to the sink;
 * export/json_sink.c and pftrace_sink.c only render (so both formats carry
 * the same events by construction). A new format is a new sink:
 * docs/architecture.md.
 *
 * Order of the walk, per capture: process, its threads, its lanes (io_uring,
 * CUDA overlap, thread states); VFS slices in capture order, and among them
 * the on-CPU samples with Python stacks (--stacks --sample-hz); the scheduler
 * events and thread states in time order; per disk: disk, its lanes,
 * its block slices, its throughput counters; per GPU: gpu, then every stream
 * lane, the GPU slices in time order, the busy counters; last the info.
 * The slices' args are in sink->args when the callback runs.
 */
#ifndef GPUIO_TIMELINE_SINK_H
#define GPUIO_TIMELINE_SINK_H

#include <stddef.h>
#include <stdint.h>
#include "timeline/timeline.h"

struct tl_sink;

/* A thread-state interval on the thread's state lane; args in sink->args. */
struct tl_tstate {
	uint64_t ts, end;       /* output clock */
	uint32_t pid, lane_tid;
	const char *name;       /* tstate_names[] */
};

struct tl_sink_ops {
	/* labels: "key=value" pairs joined by ", " (the job, from the cgroup), or NULL */
	void (*process)(struct tl_sink *s, uint32_t pid, const char *name, size_t len,
			uint64_t sort, const char *labels);
	void (*thread)(struct tl_sink *s, uint32_t pid, uint32_t tid, const char *name, size_t len,
		       uint64_t sort);
	/* a track of a process that is not a thread: io_uring and CUDA overlap lanes */
	void (*proc_lane)(struct tl_sink *s, uint32_t pid, uint32_t tid, const char *name,
			  size_t len, uint64_t sort);
	void (*vfs)(struct tl_sink *s, const struct tl_vfs *v);
	/* an on-CPU sample with its Python stack (NULL: the format has no samples) */
	void (*sample)(struct tl_sink *s, const struct tl_sample *o);
	/* a thread's state track (JSON: a lane; Perfetto draws states on the thread itself) */
	void (*state_lane)(struct tl_sink *s, uint32_t pid, uint32_t tid, const char *name,
			   size_t len, uint64_t sort);
	/* raw events (.pftrace: ftrace sched events) and the states derived from them (JSON);
	 * a format implements one of the two, the other is NULL */
	void (*sched)(struct tl_sink *s, const struct tl_sched *o);
	void (*tstate)(struct tl_sink *s, const struct tl_tstate *o);
	/* name: "disk sda" (prefixed in merges); dname: "sda" */
	void (*disk)(struct tl_sink *s, uint32_t pid, const char *name, size_t len,
		     const char *dname, uint64_t sort);
	void (*disk_lane)(struct tl_sink *s, uint32_t pid, uint32_t tid, uint32_t lane);
	void (*block)(struct tl_sink *s, const struct tl_block *o);
	void (*disk_counter)(struct tl_sink *s, uint32_t pid, const char *dname, uint64_t t,
			     double rd, double wr);
	/* name: "GPU 0" (prefixed in merges); gname: "GPU 0" */
	void (*gpu)(struct tl_sink *s, uint32_t pid, const char *name, size_t len, const char *gname,
		    uint64_t sort);
	void (*gpu_lane)(struct tl_sink *s, uint32_t pid, uint32_t tid, const char *name, size_t len,
			 uint64_t sort);
	void (*gslice)(struct tl_sink *s, const struct tl_gslice *o);
	void (*gpu_counter)(struct tl_sink *s, uint32_t pid, const char *gname, uint64_t t,
			    double v);
	/* a group of tracks that is no process (a PyTorch profiler's GPU): JSON a
	 * pseudo-process, .pftrace a top-level track; its lanes are gpu_lane()s
	 * and their slices TL_GS_GPULANE gslices. NULL: the sink has none. */
	void (*group)(struct tl_sink *s, uint32_t pid, const char *name, size_t len, uint64_t sort);
	/* the "gpuio trace info" instant of one capture, on its own track */
	void (*info)(struct tl_sink *s, uint32_t pid, const char *name, size_t len, uint64_t sort);
	int (*error)(const struct tl_sink *s);
	uint64_t (*events)(const struct tl_sink *s);      /* written so far */
};

struct tl_sink {
	const struct tl_sink_ops *ops;
	struct tl_model *m;            /* the capture being walked */
	struct tl_args args;           /* the current slice's args */
};

/* Walk one loaded model into s. 0, or -errno (-EBADMSG: the capture changed, said). */
int tl_model__walk(struct tl_sink *s, struct tl_model *m);

#endif /* GPUIO_TIMELINE_SINK_H */
