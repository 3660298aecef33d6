/* SPDX-License-Identifier: MIT */
/*
 * timeline.h — what every exporter shows of a capture, built once: the
 * timeline model. Both output formats (export/json_sink.c, pftrace_sink.c)
 * render the same model through one walk (sink.h), so they carry the same
 * slices, args, tracks and flows by construction; the live stream
 * (export/stream*.c) asks it for the same names and args record by record.
 *
 * tl_model__load() has the capture's session (model/session.h) read every
 * record once with the model's handlers (load.c, gpu_load.c), then lays out
 * lanes, throughput buckets, the GPU side and the sort order; the walk
 * replays the VFS calls (pass 2) and reads the GPU records back in time
 * order. Memory is bounded by files, threads, disks, block and io_uring
 * requests and GPU records — never by the number of ordinary VFS calls.
 *
 * Event model (the JSON rendering: the top of export/json_sink.c; every arg:
 * docs/export-schema.md):
 *  - processes (pid, name "comm: argv"), threads (pid, tid, comm), io_uring
 *    lanes per process, disks with lanes and two throughput counters;
 *  - a VFS slice per call, a block slice per request, a flow from a call to
 *    each request naming it (hdr.tid, vfs_seq), thread states, GPU lanes
 *    with kernels, copies, memsets and their CUDA calls, one
 *    "gpuio trace info" instant with the header and counters.
 *
 * The model's own structures are private (timeline_priv.h).
 */
#ifndef GPUIO_TIMELINE_H
#define GPUIO_TIMELINE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "capture/capture.h"
#include "model/sched_tab.h"
#include "model/session.h"

struct tl_model;

/* What the walk wrote (gpuio_export() hands it out, with the bytes). */
struct tl_stats {
	__u64 records;          /* whole records read from the capture */
	__u64 events;           /* JSON events written (metadata included); for
				   protobuf: TracePackets */
	__u64 vfs;              /* VFS slices */
	__u64 block;            /* block request slices */
	__u64 flows;            /* VFS -> block arrows (block slices bound) */
	__u64 dangling_flows;   /* block requests naming a VFS call not in the capture */
	__u64 unresolved_paths; /* VFS calls whose file had no PATH record */
	__u64 unresolved_block_paths; /* block requests naming an unnamed inode */
	__u64 processes, threads, disks, lanes;
	__u64 steps, gaps;      /* the report's findings drawn: step slices, GPU idle gaps */
	__u64 truncated_bytes;  /* bytes of a partial record at the end (cut short) */
	bool capture_complete;  /* final STATS record present and nothing cut */
	bool drops_known;       /* a STATS record was present */
	__u64 dropped;          /* valid when drops_known */
};

/* Output ids: pseudo-processes and lanes live above any real pid. */
#define TL_INFO_PID        0x3fffffffu
#define TL_DISK_PID_BASE   0x40000000u
/* lane tids are unique in the whole trace: Perfetto names threads by tid */
#define TL_LANE_TID(d, l)  (0x50000000u + ((uint32_t)(d) << 16) + (uint32_t)(l))
#define TL_URING_TID_BASE  0x20000000u
/* GPU side: "GPU N" pseudo-processes (like disks), their stream lanes, and
 * the extra tracks of a host thread whose CUDA/NVTX slices do not nest */
#define TL_GPU_PID_BASE    0x60000000u
#define TL_GPU_TID_BASE    0x70000000u
#define TL_GHOST_TID_BASE  0x30000000u
/* the report's findings' tracks (steps, GPU idle gaps): + host << 12 + track */
#define TL_FIND_TID_BASE   0x78000000u
/* a thread's state lane (JSON): this + its output tid */
#define TL_STATE_TID_BASE  0x10000000u
#define TL_PROC_NAME_MAX   200

/* "comm: argv" of a process (prefixed), cut at TL_PROC_NAME_MAX: a buffer for it */
#define TL_PROC_NAME_BUF (TL_PROC_NAME_MAX + 64 + 80)

/* ---- typed args ---- */

enum tl_arg_type {
	TLA_U64, TLA_S64, TLA_BOOL,
	TLA_STR,         /* len bytes at v.str, any bytes (writers make them valid UTF-8) */
	TLA_US,          /* v.s ns shown as µs (JSON: 3 decimals; protobuf: double) */
	TLA_NULL,        /* JSON null; left out of protobuf (no null there) */
	TLA_DICT,        /* the next len args are its entries (a nested dict counts as one) */
	TLA_F3,          /* v.d, already rounded to 3 decimals (JSON: 3 decimals; protobuf: double) */
};

struct tl_arg {
	const char *key;
	uint8_t type;
	bool intern;    /* a string that repeats (paths, flags): worth interning */
	bool stable;    /* v.str stays put and unchanged while the output is written */
	uint32_t len;
	union {
		uint64_t u;
		int64_t s;
		bool b;
		const char *str;
		double d;
	} v;
};

#define TL_ARGS_MAX 256
struct tl_args {
	unsigned n;
	size_t used;                    /* of scratch */
	struct tl_arg a[TL_ARGS_MAX];
	char scratch[4096];
};

/* How a capture is placed in a multi-capture output (gpuio merge). */
struct tl_remap {
	uint32_t pid_offset;    /* added to every pid and tid */
	int64_t ts_shift;       /* ns added to every timestamp (clock alignment) */
	const char *prefix;     /* "host: " before process, disk and info names */
	uint32_t disk_base;     /* disks of earlier captures */
	uint32_t uring_base;    /* io_uring lanes of earlier captures */
	uint32_t gpu_base;      /* GPUs of earlier captures */
	uint32_t gtid_base;     /* GPU stream lanes of earlier captures */
	uint32_t ghost_base;    /* host GPU overlap lanes of earlier captures */
	uint32_t host;          /* capture index: info pid, flow ids, pftrace machine */
	uint64_t ts_base;       /* JSON ts 0 on the output clock (0: this capture's origin) */
	bool merged;            /* one of several captures (gpuio merge) */
};

/* What a capture takes of the shared id spaces of a merge (the next one's bases). */
struct tl_extent {
	uint32_t disks, uring_lanes, gpus, gpu_lane_tids, ghost_lanes;
};

/* ---- load, free ---- */

/*
 * Open capture_path, run pass 1 and lay everything out. map may be NULL (a
 * single capture). Every failure is reported by one pr_err line. Returns 0
 * or -errno (*out is then NULL).
 */
int tl_model__load(const char *capture_path, const struct tl_remap *map, struct tl_model **out);
void tl_model__free(struct tl_model *m);
/* Print why a later pass failed when the capture went bad under us; returns err. */
int tl_model__said(const struct tl_model *m, int err);
const char *tl_model__error(const struct tl_model *m);

const char *tl_model__capture_path(const struct tl_model *m);
const struct gpuio_cap_header *tl_model__header(const struct tl_model *m);
const struct tl_stats *tl_model__stats(const struct tl_model *m);
/* Does the capture hold what the report's findings come from (thread
 * states, or GPU activity)? */
bool tl_model__has_findings_input(const struct tl_model *m);
/* Its scheduler records (what the report's pass holds, as thread states). */
uint64_t tl_model__sched_records(const struct tl_model *m);
/* Where this capture sits in a merge (gpuio merge sets prefix and ts_base after load). */
struct tl_remap *tl_model__remap(struct tl_model *m);
void tl_model__extent(const struct tl_model *m, struct tl_extent *e);

/* ---- output ids and clock ---- */

uint32_t tl_pid(const struct tl_model *m, uint32_t pid);
/* A timestamp on the output's monotonic clock (Perfetto). */
uint64_t tl_ts(const struct tl_model *m, uint64_t t);
/* A timestamp relative to the output's ts 0 (JSON), ns (negative: before it). */
int64_t tl_ts_rel(const struct tl_model *m, uint64_t t);
/*
 * The timeline origin (JSON ts 0), on the output clock: the earliest of the
 * capture's anchor (trace start) and every timestamp the export writes, so
 * that no JSON ts is negative (calls already running at attach, GPU records
 * from before it). A merge puts every capture on the earliest of their origins.
 */
uint64_t tl_model__origin(const struct tl_model *m);
/* The trace start (the capture header's anchor) on the output clock. */
uint64_t tl_model__anchor(const struct tl_model *m);
uint32_t tl_info_pid(const struct tl_model *m);
/* Flow id of the k-th request (1-based) bound to call (tid, seq): never 0. */
uint64_t tl_flow_id(const struct tl_model *m, uint32_t tid, uint32_t seq, uint32_t k);
/* JSON bind_id of a GPU flow (bit 63 set: never a VFS call's tid << 32 | seq) */
static inline uint64_t tl_gpu_bind(uint64_t fkey)
{
	return 1ull << 63 | fkey;
}
/* Protobuf flow id of the k-th arrow (1-based) of a CUDA call's key: never 0. */
uint64_t tl_gpu_flow_id(uint64_t fkey, uint32_t k);

/* ---- what the sinks and the stream render ---- */

/* A context switch or wake-up, with output ids and names (see model/sched_tab.h);
 * tl_model__sched() fills it. */
struct tl_sched {
	uint64_t ts;            /* output clock */
	uint32_t cpu;
	uint8_t kind;           /* GPUIO_SCHED_*: switch prev -> next; wake: waker wakes tid */
	uint32_t tid, otid;     /* switch: prev, next; wake: woken, waker (output tids, 0 idle) */
	const char *comm, *ocomm;
	int prio;               /* prev's / the woken task's */
	int64_t prev_state;     /* switch: ftrace encoding (sched_ftrace_prev_state) */
	uint32_t target_cpu;    /* wake */
	bool prev_traced, next_traced;  /* switch: which side is a traced thread */
	/* the switch-in of prev the trace missed, assumed at bridge_at (0: none),
	 * from bridge_from (output tid, 0: not ours) named bridge_comm */
	uint64_t bridge_at;
	uint32_t bridge_from;
	const char *bridge_comm;
	/* next left left_cpu unseen, assumed at left_at (0: none; sched_tab.h) */
	uint64_t left_at;
	uint32_t left_cpu;
	char buf[3][32];
};
/* e's output form (its threads named in t); g: its break in the chain
 * (sched_tab.h), NULL none; comm: the name the record carries for its
 * untraced side / waker */
void tl_model__sched(struct tl_model *m, const struct sched_tab *t, const struct sched_ent *e,
		     const struct sched_gap *g, const char *comm, struct tl_sched *o);

struct tl_vfs {
	const char *name;
	char namebuf[24];
	uint64_t ts, dur;       /* capture clock; dur clamped to INT64_MAX */
	uint32_t pid, tid;      /* output pid and track tid (thread or io_uring lane) */
	bool async;             /* on an io_uring lane */
	uint32_t nflows;        /* requests bound to it (0: no arrow) */
	uint32_t ftid, fseq;    /* the call's (tid, seq), for flow ids */
};

/* One VFS call: its slice and args. Call once per record, in capture order.
 * Online: v->tid is the thread (the caller puts io_uring calls on lanes) and
 * v->nflows 0 (the caller binds flows). */
void tl_model__vfs(struct tl_model *m, const struct gpuio_vfs_event *e, struct tl_vfs *v,
		   struct tl_args *a);

struct tl_block {
	const char *name;       /* op */
	uint64_t ts, end;
	uint32_t pid, tid;      /* disk pid, lane tid */
	uint32_t flow_k;        /* k-th request bound to (ftid, fseq); 0: no arrow */
	uint32_t ftid, fseq;
};

/* tl_gslice.track */
enum { TL_GS_THREAD, TL_GS_HOSTLANE, TL_GS_GPULANE };

struct tl_gslice {
	const char *cat;        /* gpu, cuda_api, nvtx, cuda_sync, cupti_overhead */
	const char *name;       /* NUL terminated (names are cut at a NUL byte) */
	bool name_static;       /* a string literal */
	char namebuf[GPUIO_GPU_NAME_MAX + 64];
	uint64_t ts, dur;       /* capture clock */
	uint32_t pid, tid;      /* output pid and track tid */
	uint8_t track;          /* TL_GS_* */
	uint32_t nflows;        /* arrows out (an API call to its activities) */
	uint32_t flow_k;        /* the k-th arrow in (an activity), 0 none */
	uint64_t fkey;          /* flow key: output pid << 32 | correlation */
};

/* A frame of a Python stack (model/stacks.h), as the exports show it. */
struct tl_frame {
	const char *file;       /* "" when unknown */
	const char *func;
	int line;               /* -1 unknown */
	bool native;            /* a native frame: file is its ELF file, no line */
};

/* An on-CPU sample of a thread with its Python stack (sink.h: sample). */
struct tl_sample {
	uint64_t ts;            /* capture clock (tl_ts: the output's) */
	uint32_t pid, tid;      /* output ids */
	uint64_t key;           /* the stack: one key, one list of frames (per capture) */
	const struct tl_frame *frames;  /* innermost first; valid while the model is */
	unsigned nframes;
};

/* The report's findings to draw as tracks (model/findings.h); f must outlive
 * the walk. Without: no findings tracks. */
struct findings;
void tl_model__set_findings(struct tl_model *m, const struct findings *f);

/* Args of the "gpuio trace info" instant (fills the stats' capture_complete etc). */
void tl_model__info(struct tl_model *m, struct tl_args *a);

/* ---- online (gpuio trace --stream) ---- */

/*
 * No passes: the caller has its session follow the capture
 * (model_session__follow) with tl_model__tool() among the tools (which
 * processes and threads there are) and asks for names and args as it goes;
 * io_uring lanes, disk lanes and flows are the caller's. The model does not
 * own s.
 */
int tl_model__new_online(struct model_session *s, struct tl_model **out);
const struct model_tool *tl_model__tool(struct tl_model *m);
/* "comm: argv" of a known process, its length; 0: the process is not known. */
size_t tl_model__proc_name_of(struct tl_model *m, uint32_t pid, char *buf, size_t len);
/* A thread's name (its own, else its process's; the thread becomes known); NULL: no memory. */
const char *tl_model__thread_name_of(struct tl_model *m, uint32_t pid, uint32_t tid,
				     char buf[32], size_t *len);
/* "sda", or "8:0" for a disk without a DEVNAME record */
void tl_model__disk_name_of(struct tl_model *m, uint32_t dev, char *buf, size_t len);
/* One block request on lane of disk (named dname): its slice and args; o->flow_k is 0. */
void tl_model__block_record(struct tl_model *m, const struct gpuio_block_event *b, uint32_t lane,
			    size_t disk, const char *dname, struct tl_block *o, struct tl_args *a);
/* What the stream wrote so far, for the info instant. */
void tl_model__set_totals(struct tl_model *m, uint64_t vfs, uint64_t block, uint64_t flows,
			  uint64_t bucket_ns);

#endif /* GPUIO_TIMELINE_H */
