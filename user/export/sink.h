/* SPDX-License-Identifier: MIT */
/*
 * sink.h — what an output format implements to be an exporter: one callback
 * per thing the model shows. export/walk.c walks a loaded model once, in a
 * fixed order, and hands each thing to the sink; json_sink.c and
 * pftrace_sink.c only render (so both formats carry the same events by
 * construction). A new format is a new sink: see the README's architecture.
 *
 * Order of the walk, per capture: process, its threads, its lanes (io_uring,
 * CUDA overlap, thread states); VFS slices in capture order; the scheduler
 * events and thread states in time order; per disk: disk, its lanes,
 * its block slices, its throughput counters; per GPU: gpu, then every stream
 * lane, the GPU slices in time order, the busy counters; last the info.
 * The slices' args are in sink->args when the callback runs.
 */
#ifndef GPUIO_EXPORT_SINK_H
#define GPUIO_EXPORT_SINK_H

#include <stddef.h>
#include <stdint.h>
#include "model/model.h"

struct exp_sink;

/* A thread-state interval on the thread's state lane; args in sink->args. */
struct exp_tstate {
	uint64_t ts, end;       /* output clock */
	uint32_t pid, lane_tid;
	const char *name;       /* tstate_names[] */
};

struct exp_sink_ops {
	/* labels: "key=value" pairs joined by ", " (the job, from the cgroup), or NULL */
	void (*process)(struct exp_sink *s, uint32_t pid, const char *name, size_t len,
			uint64_t sort, const char *labels);
	void (*thread)(struct exp_sink *s, uint32_t pid, uint32_t tid, const char *name, size_t len,
		       uint64_t sort);
	/* a track of a process that is not a thread: io_uring and CUDA overlap lanes */
	void (*proc_lane)(struct exp_sink *s, uint32_t pid, uint32_t tid, const char *name,
			  size_t len, uint64_t sort);
	void (*vfs)(struct exp_sink *s, const struct exp_vfs *v);
	/* a thread's state track (JSON: a lane; Perfetto draws states on the thread itself) */
	void (*state_lane)(struct exp_sink *s, uint32_t pid, uint32_t tid, const char *name,
			   size_t len, uint64_t sort);
	/* raw events (.pftrace: ftrace sched events) and the states derived from them (JSON);
	 * a format implements one of the two, the other is NULL */
	void (*sched)(struct exp_sink *s, const struct exp_sched *o);
	void (*tstate)(struct exp_sink *s, const struct exp_tstate *o);
	/* name: "disk sda" (prefixed in merges); dname: "sda" */
	void (*disk)(struct exp_sink *s, uint32_t pid, const char *name, size_t len,
		     const char *dname, uint64_t sort);
	void (*disk_lane)(struct exp_sink *s, uint32_t pid, uint32_t tid, uint32_t lane);
	void (*block)(struct exp_sink *s, const struct exp_block *o);
	void (*disk_counter)(struct exp_sink *s, uint32_t pid, const char *dname, uint64_t t,
			     double rd, double wr);
	/* name: "GPU 0" (prefixed in merges); gname: "GPU 0" */
	void (*gpu)(struct exp_sink *s, uint32_t pid, const char *name, size_t len, const char *gname,
		    uint64_t sort);
	void (*gpu_lane)(struct exp_sink *s, uint32_t pid, uint32_t tid, const char *name, size_t len,
			 uint64_t sort);
	void (*gslice)(struct exp_sink *s, const struct exp_gslice *o);
	void (*gpu_counter)(struct exp_sink *s, uint32_t pid, const char *gname, uint64_t t,
			    double v);
	/* the "gpuio trace info" instant of one capture, on its own track */
	void (*info)(struct exp_sink *s, uint32_t pid, const char *name, size_t len, uint64_t sort);
	int (*error)(const struct exp_sink *s);
	uint64_t (*events)(const struct exp_sink *s);      /* written so far */
};

struct exp_sink {
	const struct exp_sink_ops *ops;
	struct exp_model *m;            /* the capture being walked */
	struct exp_args args;           /* the current slice's args */
};

/* Walk one loaded model into s. 0, or -errno (-EBADMSG: the capture changed, said). */
int exp_walk(struct exp_sink *s, struct exp_model *m);

#endif /* GPUIO_EXPORT_SINK_H */
