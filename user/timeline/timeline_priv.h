/* SPDX-License-Identifier: MIT */
/*
 * timeline_priv.h — what the timeline model's own files share (user/timeline/)
 * and no one else may use: its tables, pass-1 helpers, lane layout, args.
 */
#ifndef GPUIO_TIMELINE_PRIV_H
#define GPUIO_TIMELINE_PRIV_H
#include "timeline/timeline.h"
#include "lib/kmap.h"
#include "lib/units.h"

/* ---- the model's tables (pass 1) ---- */

/* A process the timeline shows; its name is the session's (model_session__proc). */
struct tl_proc {
	uint32_t pid;
	uint32_t sort;
};

/* A thread the timeline shows; its name is the session's (model_session__thread). */
struct tl_thread {
	uint32_t pid, tid;
	bool has_sched;         /* has thread states (a state lane in JSON) */
};

/* A disk; its name is the session's (model_session__devname). */
struct tl_disk {
	uint32_t dev;
	uint64_t nreq;
	uint32_t index;         /* among disks with requests */
	uint32_t nlanes;
	double *bucket_bytes;   /* [nbuckets][2]: read, write */
};

struct tl_blk {
	uint64_t ts, issue, complete, sector, ino;
	uint32_t bytes, dev_idx, file_dev, pid, tid, seq;
	uint32_t disk;          /* devs[dev_idx].index, set before sorting */
	int32_t error;
	uint8_t op, flags, attr;
	uint32_t lane;
};

struct tl_async {
	uint64_t ordinal;       /* n-th VFS record of the capture */
	uint64_t start, end;
	uint32_t pid;
	uint32_t lane_tid;
};

struct tl_ulane {
	uint32_t pid, tid, n;
};

/* Page faults of one process on one file (its latest FAULT_COUNT record). */
struct tl_fault {
	uint32_t dev;
	uint64_t ino, minor, major;
};

/*
 * GPU records (types 7..15). They arrive in CUPTI buffers, late and out of
 * time order, so pass 1 keeps a compact entry per record (its file offset,
 * interval, track) and the exporter re-reads each record when it writes it,
 * in time order (a small read cache, tl_model__next_gpu): ~32 bytes per
 * device activity, ~48 per host-side record, ~24 per correlation id, plus
 * the distinct kernel/API/symbol names — never the records themselves.
 */
struct tl_gact {               /* kernel, memcpy, memset; device-side sync/overhead */
	uint64_t off;           /* of the record in the capture */
	uint64_t ts, end;
	uint32_t track;         /* gpu.tracks[] (after layout: sorted index) */
	uint32_t lane;          /* 1.. on its track */
};

/* gh_ent.flags */
#define GH_DROPPED   0x01       /* a uprobe record CUPTI also saw: merged into it */
#define GH_MERGED    0x02       /* a CUPTI API record with a uprobe record merged in */
#define GH_DEVICE    0x04       /* a sync with no host thread: moved to its GPU */

struct tl_ghost {              /* CUDA API call, NVTX range, host sync, overhead */
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

struct tl_gup {                /* what a uprobe read from a call's arguments */
	uint64_t bytes, stream, func;
	uint8_t memcpy_kind;
};

struct tl_gcorr {              /* one (pid, correlation id), sorted by key */
	uint64_t key;           /* pid << 32 | correlation */
	uint32_t nact;          /* device activities naming it */
	uint32_t bound;         /* of them, written with an arrow so far */
	uint32_t src;           /* gpu.hosts[] + 1 of the API call drawing the arrows, 0 none */
	uint32_t name;          /* gpu.strs[] + 1 of its (first) kernel, 0 none */
};

/* tl_gtrack.what */
enum { GT_STREAM, GT_SYNC, GT_OVERHEAD };

struct tl_gtrack {              /* (device, pid, stream): lanes of one stream */
	uint32_t device, pid;
	uint64_t stream;
	uint8_t what;
	uint32_t dev_idx;       /* gpu.devs[] */
	uint32_t nlanes;
	uint32_t tid0;          /* output tid of lane 1 (lanes are tid0 .. tid0 + nlanes - 1) */
	uint32_t rank;          /* order among the device's lanes (first lane) */
};

struct tl_gdev {
	uint32_t device;        /* CUPTI device id, UINT32_MAX unknown */
	uint32_t index;         /* among GPUs, by device id */
	uint32_t npids;         /* processes with activity on it */
	uint32_t last_pid;
	uint64_t nact;
	double *busy;           /* [nbuckets] ns busy */
};

struct tl_gstr {
	char *s;
	uint32_t len;
	uint32_t norm;          /* API names: strs[] of the name without _v2/_ptsz.. */
};

struct tl_glane {             /* an overlap lane of a host thread */
	uint32_t pid, tid, n, out_tid;
};

struct tl_gpu {
	struct tl_gact *acts;
	size_t nacts, cacts;
	struct tl_ghost *hosts;
	size_t nhosts, chosts;
	struct tl_gup *ups;
	size_t nups, cups;
	struct tl_gcorr *corr;
	size_t ncorr, ccorr;
	struct tl_gtrack *tracks;
	size_t ntracks, ctracks;
	struct kmap track_map;  /* (device << 32 | pid, stream << 2 | what) -> tracks[] */
	struct tl_gdev *devs;
	size_t ndevs, cdevs;
	struct kmap dev_map;    /* (device, 0) -> devs[] */
	uint32_t *dev_order;    /* devs[] by index */
	struct tl_gstr *strs;
	size_t nstrs, cstrs;
	struct kmap str_map;    /* (hash, len) -> strs[] */
	struct kmap sym_map;    /* (pid, addr) -> strs[] */
	struct kmap ctx_map;    /* (pid, context) -> device */
	char (*coll_keys)[16];  /* "PID" of each collector (the session's order), for the info */
	size_t ncoll_keys;
	struct tl_glane *glanes;
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

/* A VFS call that block requests name, 16 bytes (a hash map's slot took 32,
 * and it kept twice as many slots as keys). */
struct tl_flow {
	uint32_t tid, seq;
	uint64_t v;             /* FLOW_* */
};

/* Where tl_flow_get() last looked for a thread's call: flows[pos] is the
 * first entry not below (tid, seq). A thread's calls come in seq order, so
 * the next lookup steps forward from there, in cache, instead of a binary
 * search of the whole table (a cache miss a step once it is large). */
#define TL_FLOW_CURS 4096
struct tl_flow_cur {
	uint32_t tid, seq;
	size_t pos;             /* 0 with tid 0 and seq 0: unused */
	bool used;
};

/* flow values: low bits flags, bits 2..31 requests naming the call (pass
 * 1), bits 32..63 requests bound so far (output) */
#define FLOW_REFERENCED 0x1
#define FLOW_VFS_SEEN   0x2
#define FLOW_COUNT_ONE  0x4
#define FLOW_COUNT(v)   ((uint32_t)(((v) & 0xffffffffu) >> 2))
#define FLOW_BOUND_ONE  (1ull << 32)

struct tl_model {
	const char *path;
	struct model_session *s;        /* the capture, decoded once; its tables (owned) */
	const struct model_facts *f;    /* model_session__facts(s) */
	const struct gpuio_cap_header *hdr;
	bool cache_known;
	bool online;            /* following a capture being written (--stream) */
	struct tl_remap map;

	struct kmap proc_map;   /* (pid, 0) -> procs[] */
	struct tl_proc *procs;
	size_t nprocs, cprocs;
	struct kmap thread_map; /* (pid, tid) -> threads[] */
	struct tl_thread *threads;
	size_t nthreads, cthreads;
	struct kmap dev_map;    /* (dev, 0) -> devs[] */
	struct tl_disk *devs;
	size_t ndevs, cdevs;
	uint32_t *disk_order;   /* devs[] indices of disks with requests, by dev */
	size_t ndisks;
	struct tl_flow *flows;  /* (tid, seq) -> FLOW_*: appended by pass 1, then sorted by */
	size_t nflows, cflows;  /* key with one entry a key (tl_flow_get) */
	uint64_t seen_threads[64]; /* (pid << 32 | tid) + 1 of threads noted */
	struct tl_flow_cur *flow_cur; /* TL_FLOW_CURS cursors into flows, by tid (tl_flow_get) */
	struct tl_blk *blks;
	size_t nblks, cblks;
	struct tl_async *asyncs;
	size_t nasyncs, casyncs, async_next;
	struct tl_ulane *ulanes;
	size_t nulanes, culanes;
	struct kmap fault_map;  /* (pid << 32 | dev, ino) -> faults[] */
	struct tl_fault *faults;
	size_t nfaults, cfaults;

	struct model_tool tool;         /* pass 1's handlers (load.c, gpu_load.c) */
	uint64_t vfs_ordinal;
	uint64_t tmin;          /* earliest VFS/block start (pass 1), UINT64_MAX: none */
	struct tl_gpu gpu;
	char err[200];          /* why a later pass failed (the capture changed) */
	uint64_t t0, bucket_ns;
	size_t nbuckets;
	struct tl_stats st;
	const struct findings *findings;        /* the report's, drawn by findings.c (or NULL) */
	struct tl_stacks *stacks;       /* Python stacks (stacks.c); NULL: the capture has none */
};


static inline uint32_t tl_pid_(const struct tl_model *m, uint32_t pid)
{
	return pid + m->map.pid_offset;
}
static inline uint64_t tl_ts_(const struct tl_model *m, uint64_t t)
{
	return t + (uint64_t)m->map.ts_shift;
}
/* The key of a CUDA call's arrows: (host, output pid, correlation id). */
static inline uint64_t tl_gpu_fkey(const struct tl_model *m, uint32_t pid, uint32_t corr)
{
	return (uint64_t)m->map.host << 56 | (uint64_t)tl_pid_(m, pid) << 32 | corr;
}

/* ---- what walk.c shows (events.c, gpu_slices.c) ---- */

/* "cgroup=…, slurm_job=…, …" of p's job (lib/job_identity.h) in buf, or NULL when unknown. */
const char *tl_model__proc_labels(const struct tl_model *m, const struct tl_proc *p, char *buf,
				  size_t len);
size_t tl_model__proc_name(struct tl_model *m, const struct tl_proc *p, char *buf, size_t len);
/* The args of a thread-state interval (JSON state slices). */
void tl_model__tstate_args(struct tl_model *m, const struct tstate_iv *iv,
			   struct tl_args *a);
/* comm of a thread (its own, else its process's) */
const char *tl_model__thread_name(struct tl_model *m, const struct tl_proc *p,
				  const struct tl_thread *t, char buf[32], size_t *len);
/* "sda", or "8:0" for a disk without a DEVNAME record */
void tl_model__disk_name(const struct tl_model *m, const struct tl_disk *d, char *buf,
			 size_t len);
/* faults.c: a page_fault slice's args after its path; the fault counts (pass 1,
 * cumulative per process), summed per file into the trace info */
void tl_model__fault_args(const struct gpuio_vfs_event *e, struct tl_args *a);
int tl_fault_count(struct tl_model *x, const struct gpuio_fault_count *e);
void tl_model__fault_info(struct tl_model *x, struct tl_args *a);
/* Online: o->flow_k is 0 (the caller binds flows). */
void tl_model__block(struct tl_model *m, const struct tl_blk *b, size_t disk,
		     const char *dname, struct tl_block *o, struct tl_args *a);
/* A block record as the model stores it (dev_idx, disk and lane left 0). */
void tl_blk_from_record(struct tl_blk *e, const struct gpuio_block_event *b);
/* Throughput counters of one disk: values only when they change, then 0, 0. */
struct tl_counter_it {
	size_t k;
	double last_r, last_w;
	bool done;
};
bool tl_model__next_counter(struct tl_model *m, const struct tl_disk *d,
			    struct tl_counter_it *it, uint64_t *t, double *rd, double *wr);
uint32_t tl_disk_pid(const struct tl_model *m, size_t disk);
uint32_t tl_lane_tid(const struct tl_model *m, size_t disk, uint32_t lane);
/* Output pid of the gpu-th GPU (index in device order). */
uint32_t tl_gpu_pid(const struct tl_model *m, size_t gpu);
/* "GPU 0" ("GPU ?" when the device is unknown) */
void tl_model__gpu_name(const struct tl_gdev *d, char *buf, size_t len);
/* "GPU 0 · stream 7" (+ " · pid P" when several processes use the GPU, + " · lane N" past 1) */
size_t tl_model__gpu_lane_name(const struct tl_model *m, const struct tl_gtrack *t,
			       uint32_t lane, char *buf, size_t len);
/* "tid T · CUDA overlap N" */
size_t tl_model__ghost_lane_name(const struct tl_glane *l, char *buf, size_t len);
/*
 * The GPU slices, device activities then host-side records, each in time
 * order (longest first on a tie, so that slices nest in that order too).
 * 1, 0 at the end, -EBADMSG (tl_model__error) when the capture changed.
 */
int tl_model__gpu_rewind(struct tl_model *m);
int tl_model__next_gpu(struct tl_model *m, struct tl_gslice *o, struct tl_args *a);
/* Busy fraction of one GPU per bucket: values only when they change, then 0. */
bool tl_model__next_gpu_counter(struct tl_model *m, const struct tl_gdev *d,
				struct tl_counter_it *it, uint64_t *t, double *v);
/* Pass 2: every VFS record again, in capture order, to fn; with Python
 * stacks, each on-CPU sample that has one to sfn (may be NULL). */
typedef int (*tl_vfs_fn)(void *ctx, const struct gpuio_vfs_event *e);
typedef int (*tl_sample_fn)(void *ctx, const struct tl_sample *o);
int tl_model__each_vfs(struct tl_model *m, tl_vfs_fn fn, tl_sample_fn sfn, void *ctx);
/* Online: the process or thread entry (created), the disk entry (created). */
struct tl_disk *tl_model__dev(struct tl_model *m, uint32_t dev);
struct tl_proc *tl_model__proc(struct tl_model *m, uint32_t pid);
struct tl_thread *tl_model__thread(struct tl_model *m, uint32_t pid, uint32_t tid);

struct tl_lane_busy;

/* Any GPU record at all (types GPU_INFO .. GPU_SYM). */
static inline bool tl_model__gpu_any(const struct tl_model *x)
{
	for (unsigned t = GPUIO_REC_GPU_INFO; t <= GPUIO_REC_GPU_SYM; t++)
		if (x->f->counts[t])
			return true;
	return false;
}

#define MAX_BUCKETS     2000
#define MIN_BUCKET_NS   1000000ull
struct tl_arg *tl_arg_add(struct tl_args *a, const char *key, uint8_t type);
void tl_arg_u64(struct tl_args *a, const char *k, uint64_t v);
void tl_arg_s64(struct tl_args *a, const char *k, int64_t v);
void tl_arg_bool(struct tl_args *a, const char *k, bool v);
void tl_arg_us(struct tl_args *a, const char *k, int64_t ns);
void tl_arg_null(struct tl_args *a, const char *k);
void tl_arg_str(struct tl_args *a, const char *k, const char *s, size_t len, bool intern);
void tl_arg_copy(struct tl_args *a, const char *k, const char *s, bool intern);
void tl_args_reset(struct tl_args *a);
/* findings.c: the report's findings' tracks and slices, into the walk's sink */
struct tl_sink;
int tl_walk_findings(struct tl_sink *s, struct tl_model *m);
int tl_note_thread(struct tl_model *x, uint32_t pid, uint32_t tid, struct tl_thread **out);
extern const char *const tl_memcpy_kind_names[11];
extern const char *const tl_memcpy_slice_names[11];
extern const char *const tl_mem_kind_names[8];
extern const char *const tl_api_source_names[5];
extern const char *const tl_api_kind_names[8];
extern const char *const tl_sync_names[5];
extern const char *const tl_object_kind_names[6];
#define TL_NAME_OF(tab, i) ((size_t)(i) < ARRAY_SIZE(tab) ? tab[i] : NULL)
bool tl_is_uprobe(unsigned source);
int tl_gact_add(struct tl_model *x, uint64_t off, uint64_t ts, uint64_t end, uint32_t device,
	     uint32_t pid, uint64_t stream, uint8_t what);
size_t tl_rec_name_len(const struct gpuio_hdr *h, size_t name_off, const char *name, size_t len, size_t max);
void tl_gpu_handlers(struct model_tool *t);
void tl_gpu_free(struct tl_gpu *g);
int tl_pass1(struct tl_model *x);
uint64_t tl_blk_end(const struct tl_blk *b);
struct tl_lanes {
	struct tl_lane_busy *busy;
	uint32_t *free;
	size_t nbusy, cbusy, nfree, cfree;
	uint32_t nlanes;
};
void tl_lanes__reset(struct tl_lanes *l);
void tl_lanes__free(struct tl_lanes *l);
int tl_lanes__assign(struct tl_lanes *l, uint64_t start, uint64_t end, uint32_t *lane);
int tl_layout_block(struct tl_model *x);
int tl_layout_async(struct tl_model *x);
const struct tl_gcorr *tl_gcorr_find(const struct tl_gpu *g, uint32_t pid, uint32_t corr);
int tl_gpu_layout(struct tl_model *x);
uint64_t *tl_flow_get(const struct tl_model *x, uint32_t tid, uint32_t seq);
void tl_arg_name(struct tl_args *a, const char *k, const char *const *tab, size_t n, unsigned v);
void tl_arg_cstr(struct tl_args *a, const char *k, const char *s);
void tl_arg_f3(struct tl_args *a, const char *k, double v);
#define TL_ARG_NAME(a, k, tab, v) tl_arg_name(a, k, tab, ARRAY_SIZE(tab), v)
void tl_arg_hex(struct tl_args *a, const char *k, uint64_t v);

/*
 * stacks.c: Python stacks. A stack as shown: its text (frames innermost
 * first, "file:line function" joined by "\n"), its site (the innermost frame
 * of the program's own code, NULL: none), its frames.
 */
struct tl_stack {
	char *text, *site;
	size_t len, site_len;
	struct tl_frame *frames;
	unsigned nframes;
};
/* The stack a session reference names (NULL: none, or not shown). */
const struct tl_stack *tl_stacks__get(struct tl_model *x, uint32_t ref);
/* Pass 1: a STACK_AT record (keeps the switch-outs'); then sort them. */
int tl_stacks__pass1(struct tl_model *x, const struct model_stack_at *a);
void tl_stacks__finish(struct tl_model *x);
/* Pass 2: a STACK_AT record; 1 with *o filled for an on-CPU sample to show. */
int tl_stacks__pass2(struct tl_model *x, const struct model_stack_at *a, struct tl_sample *o);
void tl_stacks__rewind(struct tl_model *x);
/* The args `site` and `stack` of a call or fault (pass 2), of a state a
 * switch-out began; the info's "python_stacks" (when the capture has any). */
void tl_stacks__call_args(struct tl_model *x, const struct gpuio_vfs_event *e, struct tl_args *a);
void tl_stacks__state_args(struct tl_model *x, const struct tstate_iv *iv, struct tl_args *a);
void tl_stacks__info(struct tl_model *x, struct tl_args *a);
void tl_stacks__free(struct tl_model *x);

#endif /* GPUIO_TIMELINE_PRIV_H */
