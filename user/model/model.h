/* SPDX-License-Identifier: MIT */
/*
 * model.h — what every exporter shows, built once from a capture. Used by
 * the exporters (user/export/: the walk, the sinks, merge, stream):
 * both output formats render the same model, so they carry the same slices,
 * args, tracks and flows by construction.
 *
 * exp_model__load() makes pass 1 over the capture (metadata, paths, block
 * requests, io_uring intervals) and lays out lanes, throughput buckets and
 * the sort order; the VFS calls are streamed in pass 2 (exp_model__next_vfs).
 * Memory is bounded by files, threads, disks, block and io_uring requests —
 * never by the number of ordinary VFS calls.
 *
 * Event model (see the top of export/json_sink.c for the JSON rendering):
 *  - processes (pid, name "comm: argv"), threads (pid, tid, comm), io_uring
 *    lanes per process, disks with lanes and two throughput counters;
 *  - a VFS slice per call, a block slice per request, a flow from a call to
 *    each request naming it (hdr.tid, vfs_seq), one "gpuio trace info"
 *    instant with the header and counters.
 * Args are typed lists (struct exp_args) that each writer renders.
 *
 * GPU records (struct exp_gpu): pass 1 keeps one compact entry per record
 * (never the record); after it the model merges uprobe records CUPTI also
 * saw (same thread, same call, uprobe interval brackets CUPTI's within a
 * slack of 2 us + the collector's clock uncertainty), places syncs with no
 * thread (the thread of their API call by correlation, else their GPU by
 * context), nests host slices per thread (an overlap lane for those that do
 * not nest with the other GPU host slices; VFS calls on the same thread are
 * not considered), lays out stream lanes and busy buckets per GPU. The
 * writers then read the GPU records back in time order (exp_model__next_gpu).
 */
#ifndef GPUIO_EXPORT_MODEL_H
#define GPUIO_EXPORT_MODEL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "capture/capture.h"
#include "lib/kmap.h"
#include "model/sched_tab.h"
#include "model/session.h"

/* What an export wrote, counted by the model (gpuio_export() hands it out). */
struct gpuio_export_stats {
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
	__u64 truncated_bytes;  /* bytes of a partial record at the end (cut short) */
	__u64 output_bytes;     /* uncompressed output bytes */
	bool capture_complete;  /* final STATS record present and nothing cut */
	bool drops_known;       /* a STATS record was present */
	__u64 dropped;          /* valid when drops_known */
};

#define EXP_INFO_PID        0x3fffffffu
#define EXP_DISK_PID_BASE   0x40000000u
/* lane tids are unique in the whole trace: Perfetto names threads by tid */
#define EXP_LANE_TID(d, l)  (0x50000000u + ((uint32_t)(d) << 16) + (uint32_t)(l))
#define EXP_URING_TID_BASE  0x20000000u
/* GPU side: "GPU N" pseudo-processes (like disks), their stream lanes, and
 * the extra tracks of a host thread whose CUDA/NVTX slices do not nest */
#define EXP_GPU_PID_BASE    0x60000000u
#define EXP_GPU_TID_BASE    0x70000000u
#define EXP_GHOST_TID_BASE  0x30000000u
/* a thread's state lane (JSON): this + its output tid */
#define EXP_STATE_TID_BASE  0x10000000u
#define EXP_PROC_NAME_MAX   200

/* ---- typed args ---- */

enum exp_arg_type {
	EA_U64, EA_S64, EA_BOOL,
	EA_STR,         /* len bytes at v.str, any bytes (writers make them valid UTF-8) */
	EA_US,          /* v.s ns shown as µs (JSON: 3 decimals; protobuf: double) */
	EA_NULL,        /* JSON null; left out of protobuf (no null there) */
	EA_DICT,        /* the next len args are its entries (a nested dict counts as one) */
	EA_F3,          /* v.d, already rounded to 3 decimals (JSON: 3 decimals; protobuf: double) */
};

struct exp_arg {
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

#define EXP_ARGS_MAX 256
struct exp_args {
	unsigned n;
	size_t used;                    /* of scratch */
	struct exp_arg a[EXP_ARGS_MAX];
	char scratch[4096];
};

/* ---- tables built in pass 1 ---- */

/* Print why a pass failed when the capture went bad under us; returns err. */
struct exp_model;
int exp_model__said(const struct exp_model *x, int err);

/* A process the timeline shows; its name is the session's (model_session__proc). */
struct proc_ent {
	uint32_t pid;
	uint32_t sort;
};

/* A thread the timeline shows; its name is the session's (model_session__thread). */
struct thread_ent {
	uint32_t pid, tid;
	bool has_sched;         /* has thread states (a state lane in JSON) */
};

/* A disk; its name is the session's (model_session__devname). */
struct dev_ent {
	uint32_t dev;
	uint64_t nreq;
	uint32_t index;         /* among disks with requests */
	uint32_t nlanes;
	double *bucket_bytes;   /* [nbuckets][2]: read, write */
};

struct blk_ent {
	uint64_t ts, issue, complete, sector, ino;
	uint32_t bytes, dev_idx, file_dev, pid, tid, seq;
	uint32_t disk;          /* devs[dev_idx].index, set before sorting */
	int32_t error;
	uint8_t op, flags, attr;
	uint32_t lane;
};

struct async_ent {
	uint64_t ordinal;       /* n-th VFS record of the capture */
	uint64_t start, end;
	uint32_t pid;
	uint32_t lane_tid;
};

struct lane_ent {
	uint32_t pid, tid, n;
};

/* How a capture is placed in a multi-capture output (gpuio merge). */
struct exp_remap {
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

/*
 * GPU records (types 7..15). They arrive in CUPTI buffers, late and out of
 * time order, so pass 1 keeps a compact entry per record (its file offset,
 * interval, track) and the exporter re-reads each record when it writes it,
 * in time order (a small read cache, exp_model__next_gpu): ~32 bytes per
 * device activity, ~48 per host-side record, ~24 per correlation id, plus
 * the distinct kernel/API/symbol names — never the records themselves.
 */
struct gact_ent {               /* kernel, memcpy, memset; device-side sync/overhead */
	uint64_t off;           /* of the record in the capture */
	uint64_t ts, end;
	uint32_t track;         /* gpu.tracks[] (after layout: sorted index) */
	uint32_t lane;          /* 1.. on its track */
};

/* gh_ent.flags */
#define GH_DROPPED   0x01       /* a uprobe record CUPTI also saw: merged into it */
#define GH_MERGED    0x02       /* a CUPTI API record with a uprobe record merged in */
#define GH_DEVICE    0x04       /* a sync with no host thread: moved to its GPU */

struct ghost_ent {              /* CUDA API call, NVTX range, host sync, overhead */
	uint64_t off;
	uint64_t ts, end;
	uint32_t pid, tid;
	uint32_t name;          /* API calls: gpu.strs[] */
	uint32_t aux;           /* gpu.ups[] + 1: the uprobe args (its own or merged), 0 none */
	uint32_t lane_tid;      /* 0: on its thread, else an overlap lane's output tid */
	uint8_t type;           /* GPUIO_REC_* */
	uint8_t source;         /* API: enum gpuio_api_source */
	uint8_t kind;           /* API: enum gpuio_api_kind */
	uint8_t flags;          /* GH_* */
};

struct gup_ent {                /* what a uprobe read from a call's arguments */
	uint64_t bytes, stream, func;
	uint8_t memcpy_kind;
};

struct gcorr_ent {              /* one (pid, correlation id), sorted by key */
	uint64_t key;           /* pid << 32 | correlation */
	uint32_t nact;          /* device activities naming it */
	uint32_t bound;         /* of them, written with an arrow so far */
	uint32_t src;           /* gpu.hosts[] + 1 of the API call drawing the arrows, 0 none */
	uint32_t name;          /* gpu.strs[] + 1 of its (first) kernel, 0 none */
};

/* gpu_track.what */
enum { GT_STREAM, GT_SYNC, GT_OVERHEAD };

struct gpu_track {              /* (device, pid, stream): lanes of one stream */
	uint32_t device, pid;
	uint64_t stream;
	uint8_t what;
	uint32_t dev_idx;       /* gpu.devs[] */
	uint32_t nlanes;
	uint32_t tid0;          /* output tid of lane 1 (lanes are tid0 .. tid0 + nlanes - 1) */
	uint32_t rank;          /* order among the device's lanes (first lane) */
};

struct gpu_dev {
	uint32_t device;        /* CUPTI device id, UINT32_MAX unknown */
	uint32_t index;         /* among GPUs, by device id */
	uint32_t npids;         /* processes with activity on it */
	uint32_t last_pid;
	uint64_t nact;
	double *busy;           /* [nbuckets] ns busy */
};

struct gstr {
	char *s;
	uint32_t len;
	uint32_t norm;          /* API names: strs[] of the name without _v2/_ptsz.. */
};

struct ghost_lane {             /* an overlap lane of a host thread */
	uint32_t pid, tid, n, out_tid;
};

struct exp_gpu {
	struct gact_ent *acts;
	size_t nacts, cacts;
	struct ghost_ent *hosts;
	size_t nhosts, chosts;
	struct gup_ent *ups;
	size_t nups, cups;
	struct gcorr_ent *corr;
	size_t ncorr, ccorr;
	struct gpu_track *tracks;
	size_t ntracks, ctracks;
	struct kmap track_map;  /* (device << 32 | pid, stream << 2 | what) -> tracks[] */
	struct gpu_dev *devs;
	size_t ndevs, cdevs;
	struct kmap dev_map;    /* (device, 0) -> devs[] */
	uint32_t *dev_order;    /* devs[] by index */
	struct gstr *strs;
	size_t nstrs, cstrs;
	struct kmap str_map;    /* (hash, len) -> strs[] */
	struct kmap sym_map;    /* (pid, addr) -> strs[] */
	struct kmap ctx_map;    /* (pid, context) -> device */
	char (*coll_keys)[16];  /* "PID" of each collector (the session's order), for the info */
	size_t ncoll_keys;
	struct ghost_lane *glanes;
	size_t nglanes, cglanes;
	uint32_t nlane_tids;    /* GPU stream lanes */
	uint64_t t0, bucket_ns;
	size_t nbuckets;
	/* output: activities then host records, each in time order */
	uint32_t *aorder, *horder;
	size_t nhorder, next;
	/* counts (the records of each kind: the session's facts) */
	uint64_t merged, flows;
	uint64_t dangling_corr; /* activities whose API call is not in the capture */
	uint64_t overlap_slices;/* host slices moved to an overlap lane */
};

/* flow_map values: low bits flags, bits 2..31 requests naming the call (pass
 * 1), bits 32..63 requests bound so far (output) */
#define FLOW_REFERENCED 0x1
#define FLOW_VFS_SEEN   0x2
#define FLOW_COUNT_ONE  0x4
#define FLOW_COUNT(v)   ((uint32_t)(((v) & 0xffffffffu) >> 2))
#define FLOW_BOUND_ONE  (1ull << 32)

struct exp_model {
	const char *path;
	struct model_session *s;        /* the capture, decoded once; its tables (owned) */
	const struct model_facts *f;    /* model_session__facts(s) */
	const struct gpuio_cap_header *hdr;
	bool cache_known;
	bool online;            /* fed record by record (gpuio trace --stream) */
	struct exp_remap map;

	struct kmap proc_map;   /* (pid, 0) -> procs[] */
	struct proc_ent *procs;
	size_t nprocs, cprocs;
	struct kmap thread_map; /* (pid, tid) -> threads[] */
	struct thread_ent *threads;
	size_t nthreads, cthreads;
	struct kmap dev_map;    /* (dev, 0) -> devs[] */
	struct dev_ent *devs;
	size_t ndevs, cdevs;
	uint32_t *disk_order;   /* devs[] indices of disks with requests, by dev */
	size_t ndisks;
	struct kmap flow_map;   /* (tid, seq) -> FLOW_* */
	uint64_t seen_threads[64]; /* (pid << 32 | tid) + 1 of threads noted */
	uint64_t *flow_bits;    /* a one-hash filter over flow_map's keys: most */
	uint64_t flow_mask;     /* calls are named by no request: skip the map */
	struct blk_ent *blks;
	size_t nblks, cblks;
	struct async_ent *asyncs;
	size_t nasyncs, casyncs, async_next;
	struct lane_ent *ulanes;
	size_t nulanes, culanes;

	struct model_tool tool;         /* pass 1's handlers (load.c, gpu_load.c) */
	uint64_t vfs_ordinal;
	uint64_t tmin;          /* earliest VFS/block start (pass 1), UINT64_MAX: none */
	struct exp_gpu gpu;
	char err[200];          /* why a later pass failed (the capture changed) */
	uint64_t t0, bucket_ns;
	size_t nbuckets;
	struct gpuio_export_stats st;
};

/*
 * Open capture_path, run pass 1 and lay everything out. map may be NULL (a
 * single capture). Every failure is reported by one pr_err line. Returns 0
 * or -errno; m is valid for exp_model__free() either way.
 */
int exp_model__load(struct exp_model *m, const char *capture_path,
		    const struct exp_remap *map);
void exp_model__free(struct exp_model *m);

/*
 * Online use (gpuio trace --stream): no passes; the caller feeds every record
 * to its online session with exp_model__tool() among the tools (names,
 * paths, counts) and asks for VFS/block args as it goes; io_uring lanes,
 * disk lanes and flows are then the caller's. The model does not own s.
 */
int exp_model__init_online(struct exp_model *m, struct model_session *s);
const struct model_tool *exp_model__tool(struct exp_model *m);
struct dev_ent *exp_model__dev(struct exp_model *m, uint32_t dev);
struct proc_ent *exp_model__proc(struct exp_model *m, uint32_t pid);
struct thread_ent *exp_model__thread(struct exp_model *m, uint32_t pid, uint32_t tid);

/*
 * Pass 2: every VFS record again, in capture order, to fn. 0, fn's error, or
 * -EBADMSG with the reason in exp_model__error() when the capture changed.
 */
typedef int (*exp_vfs_fn)(void *ctx, const struct gpuio_vfs_event *e);
int exp_model__each_vfs(struct exp_model *m, exp_vfs_fn fn, void *ctx);
const char *exp_model__error(const struct exp_model *m);

/* Output ids after the remap. */
static inline uint32_t exp_pid(const struct exp_model *m, uint32_t pid)
{
	return pid + m->map.pid_offset;
}
/* A timestamp on the output's monotonic clock (Perfetto) */
static inline uint64_t exp_ts(const struct exp_model *m, uint64_t t)
{
	return t + (uint64_t)m->map.ts_shift;
}
/*
 * The timeline origin (JSON ts 0), on the output clock: the earliest of the
 * capture's anchor (trace start) and every timestamp the export writes, so
 * that no JSON ts is negative (calls already running at attach, GPU records
 * from before it). A merge puts every capture on the earliest of their origins.
 */
uint64_t exp_model__origin(const struct exp_model *m);
/* The trace start (the capture header's anchor) on the output clock. */
static inline uint64_t exp_model__anchor(const struct exp_model *m)
{
	return m->map.ts_shift + m->hdr->monotonic_ns;
}
/* A timestamp relative to the output's ts 0 (JSON), ns */
static inline int64_t exp_ts_rel(const struct exp_model *m, uint64_t t)
{
	/* unsigned difference then signed: events before the anchor are negative */
	return (int64_t)(exp_ts(m, t) - m->map.ts_base);
}
uint32_t exp_disk_pid(const struct exp_model *m, size_t disk);
uint32_t exp_lane_tid(const struct exp_model *m, size_t disk, uint32_t lane);
uint32_t exp_info_pid(const struct exp_model *m);
/* Flow id of the k-th request (1-based) bound to call (tid, seq): never 0. */
uint64_t exp_flow_id(const struct exp_model *m, uint32_t tid, uint32_t seq, uint32_t k);

/* ---- events ---- */

/* "comm: argv" of a process (prefixed), cut at EXP_PROC_NAME_MAX; its length.
 * buf: at least EXP_PROC_NAME_BUF bytes */
#define EXP_PROC_NAME_BUF (EXP_PROC_NAME_MAX + 64 + 80)
/* "cgroup=…, slurm_job=…, …" of p's job (lib/job_identity.h) in buf, or NULL when unknown. */
const char *exp_model__proc_labels(const struct exp_model *m, const struct proc_ent *p, char *buf,
				   size_t len);
size_t exp_model__proc_name(struct exp_model *m, const struct proc_ent *p, char *buf,
			    size_t len);
/* comm of a thread (its own, else its process's) */
/* The args of a thread-state interval (JSON state slices). */
void exp_model__tstate_args(const struct exp_model *m, const struct tstate_iv *iv,
			    struct exp_args *a);
const char *exp_model__thread_name(struct exp_model *m, const struct proc_ent *p,
				   const struct thread_ent *t, char buf[32], size_t *len);
/* "sda", or "8:0" for a disk without a DEVNAME record */
void exp_model__disk_name(const struct exp_model *m, const struct dev_ent *d, char *buf,
			  size_t len);

/* A context switch or wake-up, with output ids and names (see model/sched_tab.h);
 * exp_model__sched() fills it. */
struct exp_sched {
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
/* e's output form; comm: the name the record carries for its untraced side / waker */
void exp_model__sched(struct exp_model *m, const struct sched_ent *e, const char *comm,
		      struct exp_sched *o);

struct exp_vfs {
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
void exp_model__vfs(struct exp_model *m, const struct gpuio_vfs_event *e, struct exp_vfs *v,
		    struct exp_args *a);

struct exp_block {
	const char *name;       /* op */
	uint64_t ts, end;
	uint32_t pid, tid;      /* disk pid, lane tid */
	uint32_t flow_k;        /* k-th request bound to (ftid, fseq); 0: no arrow */
	uint32_t ftid, fseq;
};

/* Online: o->flow_k is 0 (the caller binds flows). */
void exp_model__block(struct exp_model *m, const struct blk_ent *b, size_t disk,
		      const char *dname, struct exp_block *o, struct exp_args *a);
/* A block record as the model stores it (dev_idx, disk and lane left 0). */
void exp_blk_from_record(struct blk_ent *e, const struct gpuio_block_event *b);

/* Throughput counters of one disk: values only when they change, then 0, 0. */
struct exp_counter_it {
	size_t k;
	double last_r, last_w;
	bool done;
};
bool exp_model__next_counter(struct exp_model *m, const struct dev_ent *d,
			     struct exp_counter_it *it, uint64_t *t, double *rd, double *wr);

/* ---- GPU ---- */

/* Output pid of the gpu-th GPU (index in device order). */
uint32_t exp_gpu_pid(const struct exp_model *m, size_t gpu);
/* "GPU 0" ("GPU ?" when the device is unknown) */
void exp_model__gpu_name(const struct gpu_dev *d, char *buf, size_t len);
/* "GPU 0 · stream 7" (+ " · pid P" when several processes use the GPU, + " · lane N" past 1) */
size_t exp_model__gpu_lane_name(const struct exp_model *m, const struct gpu_track *t,
				uint32_t lane, char *buf, size_t len);
/* "tid T · CUDA overlap N" */
size_t exp_model__ghost_lane_name(const struct ghost_lane *l, char *buf, size_t len);

/* exp_gslice.track */
enum { EXP_GS_THREAD, EXP_GS_HOSTLANE, EXP_GS_GPULANE };

struct exp_gslice {
	const char *cat;        /* gpu, cuda_api, nvtx, cuda_sync, cupti_overhead */
	const char *name;       /* NUL terminated (names are cut at a NUL byte) */
	bool name_static;       /* a string literal */
	char namebuf[GPUIO_GPU_NAME_MAX + 64];
	uint64_t ts, dur;       /* capture clock */
	uint32_t pid, tid;      /* output pid and track tid */
	uint8_t track;          /* EXP_GS_* */
	uint32_t nflows;        /* arrows out (an API call to its activities) */
	uint32_t flow_k;        /* the k-th arrow in (an activity), 0 none */
	uint64_t fkey;          /* flow key: output pid << 32 | correlation */
};

/*
 * The GPU slices, device activities then host-side records, each in time
 * order (longest first on a tie, so that slices nest in that order too).
 * 1, 0 at the end, -EBADMSG (exp_model__error) when the capture changed.
 */
int exp_model__gpu_rewind(struct exp_model *m);
int exp_model__next_gpu(struct exp_model *m, struct exp_gslice *o, struct exp_args *a);
/* JSON bind_id of a GPU flow (bit 63 set: never a VFS call's tid << 32 | seq) */
/* The key of a CUDA call's arrows: (host, output pid, correlation id). */
static inline uint64_t exp_gpu_fkey(const struct exp_model *m, uint32_t pid, uint32_t corr)
{
	return (uint64_t)m->map.host << 56 | (uint64_t)exp_pid(m, pid) << 32 | corr;
}
static inline uint64_t exp_gpu_bind(uint64_t fkey)
{
	return 1ull << 63 | fkey;
}
/* Protobuf flow id of the k-th arrow (1-based) of fkey: never 0. */
uint64_t exp_gpu_flow_id(uint64_t fkey, uint32_t k);
/* Busy fraction of one GPU per bucket: values only when they change, then 0. */
bool exp_model__next_gpu_counter(struct exp_model *m, const struct gpu_dev *d,
				 struct exp_counter_it *it, uint64_t *t, double *v);

/* Args of the "gpuio trace info" instant (fills st.capture_complete etc). */
void exp_model__info(struct exp_model *m, struct exp_args *a);

#endif /* GPUIO_EXPORT_MODEL_H */
