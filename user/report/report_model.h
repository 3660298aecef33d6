/* SPDX-License-Identifier: MIT */
/*
 * report_model.h — what `gpuio report` knows about a capture, built by
 * streaming over it (user/report/report_model.c) and rendered as text, JSON or HTML
 * (report_text.c, report_json.c, report_html.c).
 *
 * Memory is bounded by files, threads, devices, histograms and GPU records,
 * never by the number of VFS or block events:
 *  - pass 1 streams every record into per-file / per-thread / per-device
 *    aggregates and fixed-size timelines (buckets that double in width as the
 *    capture gets longer), and keeps the GPU intervals (kernels, copies,
 *    memsets, CUDA sync calls: proportional to GPU records only);
 *  - the GPU intervals are sorted and merged per (process, device) into busy
 *    time and idle gaps;
 *  - pass 2 (only when there are gaps) streams the VFS records again and clips
 *    each blocking call of a GPU process to the gaps it overlaps. A gap keeps
 *    at most RPT_GAP_SEGS_MAX host segments; past that, segments of one
 *    category closer than a growing tolerance are merged (the gap is then
 *    marked approximate), so memory stays bounded by the gaps.
 *
 * Times in the model are CLOCK_MONOTONIC ns like the records; renderers show
 * them as µs relative to the capture's monotonic anchor (the exports' ts) and
 * as wall-clock through the header's REALTIME/MONOTONIC pair.
 */
#ifndef GPUIO_REPORT_MODEL_H
#define GPUIO_REPORT_MODEL_H

#include <stdbool.h>
#include <stdint.h>
#include "capture/capture.h"
#include "lib/kmap.h"
#include "model/sched_tab.h"
#include "model/session.h"
#include "report/report.h"
#include "report/report_table.h"

/* log-linear latency histogram: 4 buckets per power of two, 2^0 .. 2^40 ns */
#define RPT_LAT_SUB      4
#define RPT_LAT_BUCKETS  (RPT_LAT_SUB + 39 * RPT_LAT_SUB)
/* log2 histograms (request sizes in bytes; device latencies in µs) */
#define RPT_LOG2_BUCKETS 40
/* timeline buckets (the width doubles when the capture outgrows them) */
#define RPT_TL_BUCKETS   120
#define RPT_TL_WIDTH0    1000000ull       /* 1 ms */
#define RPT_FILE_PIDS    4
#define RPT_GAP_SEGS_MAX 4096
#define RPT_TOP_GAPS     10
#define RPT_GAP_FILES    3
#define RPT_CKPT_MIN_BYTES (1ull << 20)   /* a write burst this big, then fsync/close */
#define RPT_SMALL_FILE   (1ull << 20)
#define RPT_PAGE         4096ull

enum rpt_pattern { RPT_PAT_SEQ, RPT_PAT_STRIDED, RPT_PAT_RANDOM, RPT_PAT_N };

/* What a process's host threads were doing while its GPU idled; the order is
 * the priority when several threads do different things at once. */
enum rpt_cause {
	RPT_CAUSE_READ,         /* blocked in file reads */
	RPT_CAUSE_WRITE,        /* writes, fsync, fdatasync, sync_file_range (checkpoints) */
	RPT_CAUSE_OTHER_IO,     /* opens, closes, other traced file calls */
	RPT_CAUSE_CUDA_SYNC,    /* CUDA synchronization calls */
	RPT_CAUSE_NONE,         /* none of the above: compute, Python, waiting... */
	RPT_CAUSE_N
};
extern const char *const rpt_cause_names[RPT_CAUSE_N];

/* What a file is to the job (report_roles.c): the data recommendations look
 * at data files only, and only checkpoints' write bursts are checkpoints. */
enum rpt_role {
	RPT_ROLE_DATA,          /* read by the job: datasets, shards, inputs */
	RPT_ROLE_CODE,          /* interpreter imports, libraries, system config */
	RPT_ROLE_CHECKPOINT,    /* written state: synced, recurring or named so */
	RPT_ROLE_OTHER,         /* logs, outputs, stdout, pseudo files */
	RPT_ROLE_N
};
extern const char *const rpt_role_names[RPT_ROLE_N];

struct rpt_role_sum {           /* the files of one role */
	uint64_t files, rbytes, wbytes, rtime;
};

struct rpt_hist {               /* log-linear latency histogram (ns) */
	uint64_t n, sum, min, max;
	uint32_t *b;            /* RPT_LAT_BUCKETS, allocated at the 2nd sample */
	uint64_t first;         /* the one sample before b exists */
};

/*
 * A file's prefetch hints (fadvise, readahead, madvise WILLNEED) and the
 * reads that came after a WILLNEED or readahead into the range it named:
 * whether they found their pages cached (cache_miss_pages 0) says whether
 * the hint was in time. The last RPT_PF_RANGES ranges are kept.
 */
#define RPT_PF_RANGES 8
struct rpt_prefetch {
	uint64_t hints, prefetch_hints, hinted_bytes;
	uint64_t reads, read_bytes, reads_missed, miss_pages;
	uint64_t lo[RPT_PF_RANGES], hi[RPT_PF_RANGES];
	uint32_t nranges;
};

struct rpt_file {
	uint32_t dev;
	uint64_t ino;
	uint64_t rbytes, wbytes, rops, wops;
	uint64_t opens, closes, syncs, other_ops, errors;
	uint64_t rtime, wtime, otime;   /* ns in read / write / other calls */
	struct rpt_hist lat;            /* read and write calls */
	struct rpt_hist rlat;           /* read calls only (staging evidence) */
	uint64_t pages, hit_pages, miss_pages;  /* buffered reads (and page faults) */
	uint64_t minor_faults, major_faults;    /* on its mappings (FAULT_COUNT records) */
	bool exec_mapped;               /* an instruction fetch faulted on it */
	uint64_t direct_rbytes;
	struct rpt_prefetch pf;         /* prefetch hints and the reads after them */
	uint64_t extent;                /* largest end offset read or written */
	uint64_t pat[RPT_PAT_N];        /* transitions between a thread's calls */
	uint32_t size_hist[RPT_LOG2_BUCKETS];
	uint32_t pids[RPT_FILE_PIDS];
	uint32_t npids;                 /* distinct pids seen (first few kept) */
	uint64_t blk_rbytes, blk_wbytes, blk_reqs, blk_svc_ns;
	uint64_t first_ts, last_ts;
	bool all_direct_opens, any_open;
	/* write burst not yet closed by fsync/close (checkpoint detection) */
	uint64_t burst_start, burst_end, burst_bytes;
	int64_t burst_off;              /* offset of its first write */
	uint32_t burst_pid, burst_tid, burst_writes;
	/* what the program did to it, for its role (report_roles.c) */
	uint32_t big_bursts, rewrites;  /* bursts >= RPT_CKPT_MIN_BYTES; those from offset 0 */
	bool rd_after_wr;               /* bytes read after bytes were written */
	bool stdio;                     /* written through fd 1 or 2 */
	bool special;                   /* a pipe, socket or character device */
	uint8_t role;                   /* enum rpt_role */
	/* pass 2 */
	uint64_t gpu_idle_read_ns, gpu_idle_miss_pages;
	const char *path;               /* set by rpt_model__finish */
	uint32_t path_len;
	bool nameless;                  /* no path record: "?dev=..,ino=.." */
};

struct rpt_stream {             /* one thread's position in one file */
	uint64_t last_off, last_end;
	int64_t last_stride;
};

struct rpt_thread {
	uint32_t pid, tid;
	char comm[16];
	uint64_t first_ts, last_ts;
	uint64_t io_ns, read_ns, write_ns, other_ns, cuda_sync_ns;
	uint64_t rbytes, wbytes, rops, wops, calls;
	uint64_t data_ops;              /* calls that fetched data (rpt_call_fetches_data) */
	uint64_t data_bytes;            /* of those, from data files and sockets (after the roles) */
	uint64_t launches;              /* CUDA kernel and graph launches it made */
	/* its time by state as the kernel summed it (THREAD_TIME): exact, lost
	 * scheduler records or not; kt_known: the capture has them for it */
	bool kt_known;
	uint32_t kt_flags;              /* GPUIO_TT_* */
	uint64_t kt_ns[GPUIO_TS_N];
	uint64_t kt_from, kt_to;        /* the span they cover */
};

struct rpt_proc {
	uint32_t pid, ppid;
	uint8_t name_rank;      /* of the record that named it (model/proc_names.h) */
	char comm[16];
	char args[200];
	uint64_t first_ts, last_ts, exit_ts;
	bool exited;
	uint64_t rbytes, wbytes;
	uint32_t nthreads;
	bool gpu;
	char cgroup[256];       /* the cgroup that names its job ("" unknown) */
};

/* A job the traced processes ran in: a distinct cgroup (rpt_model__jobs). */
struct rpt_net;

struct rpt_job {
	const char *cgroup;
	uint32_t nprocs;
};

struct rpt_series {             /* a timeline (see struct rpt_model.tl_*) */
	double v[RPT_TL_BUCKETS];
};

struct rpt_dev {
	uint32_t dev;
	char name[32];
	uint64_t ops[5], bytes[5];      /* by enum gpuio_blk_op */
	uint64_t wb_bytes, meta_bytes, sync_ops, errors;
	uint64_t q_sum, s_sum;
	uint32_t q_hist[RPT_LOG2_BUCKETS];  /* queue time, log2 µs */
	uint32_t s_hist[RPT_LOG2_BUCKETS];  /* service time, log2 µs */
	uint64_t inflight_ns;           /* sum of insert..complete: mean depth */
	struct rpt_series *rd, *wr, *depth;
};

struct rpt_gpu_iv {             /* one GPU activity or CUDA sync call */
	uint64_t s, e;
	uint32_t pid, dev;              /* dev: device, or tid for sync calls */
	uint8_t kind;                   /* 0 kernel, 1 memcpy, 2 memset */
};

struct rpt_seg {                /* host activity clipped to a gap */
	uint64_t s, e;
	uint32_t file;                  /* files[] index + 1 for reads, 0 none */
	uint8_t cause;
};

/* A thread's time by state and cause (report_wait.c): the loop's, and the GPU
 * launching thread's during the GPU's idle gaps; in order of precedence for sleeps. */
enum rpt_tw {
	RPT_TW_CPU,             /* on a CPU */
	RPT_TW_RUNNABLE,        /* waiting for a CPU (woken or preempted) */
	RPT_TW_FILE_IO,         /* asleep inside its own traced file calls */
	RPT_TW_FAULT,           /* asleep inside its own page faults (a fault record, or a WAIT
				 * outside any syscall) */
	RPT_TW_SOCKET,          /* asleep in a socket call not ended by its data producers */
	RPT_TW_PIPE,            /* asleep on a pipe, likewise */
	RPT_TW_GPU,             /* asleep inside its CUDA sync calls */
	RPT_TW_RANKS,           /* ... while its GPU ran a collective (NCCL): waiting for
				 * the other ranks */
	RPT_TW_DATA,            /* asleep until one of its data producers woke it */
	RPT_TW_FUTEX,           /* the rest, by what the WAIT record says it slept in */
	RPT_TW_POLL,
	RPT_TW_CHILD,
	RPT_TW_TIMER,
	RPT_TW_SLEEP,           /* any other sleep: no cause known */
	RPT_TW_N
};
extern const char *const rpt_tw_names[RPT_TW_N];
#define RPT_TW_NOSTATE RPT_TW_N         /* a GPU gap's time before the thread's first state */
#define RPT_LS_N (RPT_TW_N + 1)
const char *rpt_ls_name(int k);          /* rpt_tw_names, and "no_state" */

/* The launching thread's states as a GPU's idle time is drawn: a few groups */
enum rpt_lg { RPT_LG_DATA, RPT_LG_CPU, RPT_LG_RUNNABLE, RPT_LG_SYNC, RPT_LG_OTHER, RPT_LG_N };
extern const char *const rpt_lg_names[RPT_LG_N];
int rpt_lg_of(int tw);          /* an rpt_tw (or RPT_TW_NOSTATE)'s group */

struct rpt_gap {
	uint64_t s, e;
	uint32_t gpu;                   /* gpus[] index */
	uint32_t nsegs, csegs;
	struct rpt_seg *segs;
	bool approx;
	uint64_t cause_ns[RPT_CAUSE_N];
	uint32_t launcher_tid;          /* launched the work that ended the gap (0: none seen) */
	uint64_t launch_ns[RPT_LS_N];   /* that thread's state during the gap */
	int launcher_site;              /* where in its program it was (report_sites.h), -1 */
	int top;                        /* index in top_gaps, -1 */
};

struct rpt_gap_file {
	uint32_t file;                  /* files[] index + 1 */
	uint64_t ns;
};

struct rpt_gpu {                /* one device as one process sees it */
	uint32_t pid, device;
	uint64_t first, last;           /* first activity start, last end */
	uint64_t busy_ns, kernels, copies, memsets, copy_bytes;
	uint64_t kernel_ns, copy_ns;
	uint64_t idle_ns, ngaps;
	uint64_t cause_ns[RPT_CAUSE_N];
	uint32_t launcher_tid;          /* the process's thread that launched most, 0: none seen */
	uint64_t launcher_launches;
	uint64_t launch_ns[RPT_LS_N];   /* its state during this GPU's idle gaps */
	size_t gap0, ngap;              /* its gaps in model.gaps */
	/* its idle by phase of its process's loop (report_gpu_phase.c): before the
	 * first step, between steps, after the last; the launching thread's
	 * states while idle between steps. phased: its process has a loop with steps */
	bool phased;
	uint64_t phase_ns[3];
	uint64_t between_launch_ns[RPT_LS_N];
	struct rpt_series *busy;        /* busy fraction over time */
	struct rpt_series *cause[RPT_CAUSE_N];  /* idle ns by cause over time */
	struct rpt_series *launcher[RPT_LG_N];  /* idle ns by its launcher's state over time */
};

struct rpt_ckpt {
	uint32_t pid, tid, file;        /* file: files[] index */
	uint64_t s, e, bytes, writes;
	uint64_t gpu_lost_ns;           /* GPU idle of the process's devices in [s, e) */
	bool synced;                    /* ended by fsync/fdatasync/sync_file_range, not close */
};

struct rpt_reco {
	char kind[24];                  /* "stage", "loader", "shard", "async_checkpoint",
					 * "no_workers", "remote_data" */
	int loop;                       /* the loop it is about (m->loops), -1: the job */
	char text[400];                 /* what to do */
	char evidence[600];             /* the numbers behind it */
};


/* What the loop's data producers did while it waited for data. */
enum rpt_wa { RPT_WA_READ, RPT_WA_FAULT, RPT_WA_NET, RPT_WA_CPU, RPT_WA_RUNNABLE, RPT_WA_OTHER,
	      RPT_WA_N };
extern const char *const rpt_wa_names[RPT_WA_N];

#define RPT_WAKERS_MAX 64
struct rpt_waker {              /* a producer that ended the loop's waits for data */
	uint32_t pid, tid;      /* a process (its threads together: tid, the one that woke
				 * most), or a thread of the loop's own process */
	bool thread;
	uint64_t wakes, ns;     /* waits it ended, their length */
};
#define RPT_BLOCKED_MAX 12
struct rpt_blocked {            /* sleeps outside data and its own calls, by what they were in */
	uint8_t kind;           /* enum model_wait_kind */
	uint8_t ftype;          /* of the fd waited on */
	int16_t nr;             /* the syscall */
	uint64_t ns, n;
};
struct rpt_wait_file {          /* a file the wakers read while the loop waited */
	uint32_t file;          /* files[] */
	uint64_t bytes, ns, reads;
};
struct rpt_waitrec {            /* a WAIT record, as the report keeps it */
	uint64_t ts;
	uint32_t tid;
	int16_t nr;
	uint8_t kind;           /* enum model_wait_kind */
	uint8_t ftype;
};
struct rpt_step {               /* an NVTX step range, or from one wait for data to the next */
	uint64_t s, wait_ns, compute_ns;
	uint64_t ns[RPT_TW_N];          /* the loop thread's time by kind inside the step */
};
struct rpt_nvtx {               /* an NVTX range of a thread */
	uint64_t s, e;
	uint32_t pid, tid, name;        /* name: nvtx_names[] */
	uint32_t depth;
};
/* [s, e) spans of time (report_spans.c) */
struct rpt_span { uint64_t s, e; };
struct rpt_spans {
	struct rpt_span *a;
	size_t n, cap;
};

/* The loop's time inside its data iterator's next() (report_next.c; --stacks) */
struct rpt_next {
	bool known;                     /* its stacks said where next() is */
	int site;                       /* the line that calls it (report_sites.h), -1 none */
	uint32_t ref;                   /* a stack inside it */
	uint64_t b_code, e_code;        /* where: the caller's code at b_line calls e_code's */
	int b_line;
	uint64_t calls;                 /* times it was entered */
	uint64_t ns;                    /* in it, in all */
	uint64_t asleep_data_ns;        /* of ns: asleep until a producer woke it with data */
	uint64_t asleep_other_ns;       /* asleep otherwise (a lock, a timed wait) */
	uint64_t runnable_ns;           /* waiting for a CPU */
	uint64_t cpu_ns;                /* on a CPU: receiving, unpickling, collating */
};

struct rpt_wait {                /* one training loop */
	uint32_t pid, tid;              /* the loop thread */
	uint32_t index;                 /* in m->loops */
	bool own_reads;                 /* found by its own data reads (no producers) */
	bool stand_in;                  /* no loop found: the busiest thread, shown anyway */
	uint64_t own_read_ns;           /* its sleeps inside its own data reads */
	struct rpt_blocked blocked[RPT_BLOCKED_MAX];
	size_t nblocked;
#define RPT_LOOP_PEERS 8
	uint32_t peers[RPT_LOOP_PEERS]; /* net->peers[] it or its workers received from */
	size_t npeers;
	uint64_t span_s, span_e;        /* its first and last state */
	uint64_t ns[RPT_TW_N];
	uint64_t data_runnable_ns;      /* of ns[RPT_TW_DATA]: waiting for a CPU once woken with data */
	struct rpt_next next;           /* its time inside next() (stacks), next.known: there is one */
	/* its producers' stacks (report_loop_sites.c): their reads, faults and
	 * receives by line; their on-CPU samples by function */
	struct rpt_site_sum *fetch_sites, *cpu_funcs;
	size_t nfetch_sites, nfetch_cap, ncpu_funcs, ncpu_cap;
	uint64_t fetch_bytes, fetch_ns, samples;      /* their totals */
	uint64_t fetch_all_bytes;       /* the producers' data bytes, with a stack or not */
	struct rpt_waker wakers[RPT_WAKERS_MAX];
	size_t nwakers;
	uint64_t act_ns[RPT_WA_N];      /* the wakers' main threads, inside the waits */
	struct rpt_wait_file *files;    /* by time read inside the waits */
	size_t nfiles, cfiles;
	size_t ndata_files;             /* the first ones are data files (role) */
	uint64_t read_bytes, pages, hit_pages;  /* of the data files (pages: whole run) */
	char glob[256];                 /* "DIR/" "*EXT" of those files, or the top file */
	struct rpt_step *steps;
	size_t nsteps, csteps;
	const char *step_range;         /* steps are this NVTX range of the loop; NULL: from its waits */
	uint64_t gaps;                  /* unrecorded switches (sched_gaps) */
	/* kept for the job's view across hosts (report_hosts.c) */
	struct rpt_spans win;           /* its waits for data */
	struct rpt_spans tw[RPT_TW_N];  /* its time by kind */
};

struct rpt_model {
	const char *path;
	struct model_session *s;        /* the capture, decoded once; its tables */
	const struct model_facts *f;    /* model_session__facts(s): counts, drops, cut */
	const struct gpuio_cap_header *hdr;
	uint64_t file_size;
	struct rpt_opts opt;
	struct model_tool tool;         /* pass 1's handlers (report_load.c, report_gpu.c) */

	/* counts and summary */
	uint64_t first_ts, last_ts;     /* over records with a ts (ends included) */
	uint64_t vfs_rbytes, vfs_wbytes, vfs_rops, vfs_wops, vfs_calls, vfs_errors;
	uint64_t ledger_calls;          /* of them, lost calls the kernel summed (LOST_CALLS) */
	uint64_t ledger_reqs;           /* of blk_reqs, lost requests the kernel summed */
	uint64_t kt_threads;            /* threads whose time by state the kernel summed */
	uint64_t blk_rbytes, blk_wbytes, blk_rops, blk_wops, blk_reqs;
	uint64_t pages, hit_pages, miss_pages;
	uint64_t cupti_dropped, gpu_write_errors;       /* the collectors' (their last counts) */
	bool faults;                    /* the fault layer's build: fault counts are known */
	uint64_t minor_faults, major_faults;
	struct rpt_prefetch pf;         /* over all files (no ranges) */
	uint64_t unresolved;            /* files without a path record */

	/* tables */
	struct kmap file_map;           /* (dev, ino) -> files[] */
	struct rpt_file *files;
	size_t nfiles, cfiles;
	struct kmap stream_map;         /* (file, tid) -> streams[] */
	struct rpt_stream *streams;
	size_t nstreams, cstreams;
	struct kmap fd_map;             /* (pid, fd) -> open flags + 1 (0: closed) */
	struct kmap fault_map;          /* (pid << 32 | dev, ino) -> fault_last[] */
	struct rpt_fault_last { uint64_t minor, major; } *fault_last;
	size_t nfault_last, cfault_last;
	struct kmap thread_map;         /* (pid, tid) -> threads[] */
	struct kmap thread_files;       /* (threads[], files[]) -> bytes the thread fetched from it */
	struct rpt_thread *threads;
	size_t nthreads, cthreads;
	struct kmap proc_map;           /* (pid, 0) -> procs[] */
	struct rpt_proc *procs;
	size_t nprocs, cprocs;
	struct kmap dev_map;            /* (dev, 0) -> devs[] */
	struct rpt_dev *devs;
	size_t ndevs, cdevs;
	char **unnamed;                 /* "?dev=..,ino=.." names of files without a path */
	size_t nunnamed, cunnamed;

	/* timelines: bucket i covers [tl_t0 + i*tl_width, +tl_width) */
	uint64_t tl_t0, tl_width;
	struct rpt_series **series;
	size_t nseries, cseries;
	struct rpt_series *tl_rbytes, *tl_wbytes, *tl_reads_inflight;

	/* GPU */
	struct rpt_gpu_iv *gpu_ivs;     /* device activity, merged now and then */
	size_t ngpu_ivs, cgpu_ivs, gpu_compact_at;
	struct kmap gpu_map;            /* (pid, device) -> gpus[] */
	struct rpt_gpu_iv *syncs;       /* CUDA sync calls (dev = tid) */
	size_t nsyncs, csyncs;
	struct rpt_gpu_iv *colls;       /* collective kernels (NCCL), by process (dev = GPU) */
	size_t ncolls, ccolls;
	struct rpt_gpu_iv *launches;    /* kernel and graph launches (dev = tid), by pid, ts */
	size_t nlaunches, claunches;
	struct rpt_gpu *gpus;
	size_t ngpus, cgpus;
	struct rpt_gap *gaps;
	size_t ngaps, cgaps;
	size_t top_gaps[RPT_TOP_GAPS];
	size_t ntop_gaps;
	struct rpt_gap_file top_gap_files[RPT_TOP_GAPS][RPT_GAP_FILES];
	uint64_t gpu_idle_ns, gpu_span_ns, gpu_busy_ns;
	uint64_t cause_ns[RPT_CAUSE_N];
	uint64_t gap_reads_ns;          /* sum of read overlaps with gaps (concurrency) */
	bool gaps_approx;
	bool launch_states;             /* launch_ns filled (thread states and a launcher) */
	uint64_t launch_ns[RPT_LS_N];   /* the launching threads' states during the idle gaps */
	struct rpt_nvtx *nvtx;          /* NVTX ranges (steps) */
	size_t nnvtx, cnvtx;
	char (*nvtx_names)[64];
	size_t nnvtx_names, cnvtx_names;

	/* files by role; checkpoints: write bursts of checkpoint files */
	struct rpt_role_sum roles[RPT_ROLE_N];
	struct rpt_ckpt *ckpts;
	size_t nckpts, cckpts;

	/* thread states (scheduler layer) and why the loop waited (report_wait.c) */
	const struct sched_tab *sched;  /* the session's */
	struct rpt_wait *wait;          /* loops[0]; NULL: no thread states in the capture */
	struct rpt_wait **loops;        /* every training loop, most data-waiting first */
	size_t nloops;
	size_t *straggle;               /* loops[] indexes by the share of the run waited, most first */
	struct rpt_waitrec *waits;      /* WAIT records, by thread then time (report_blocked.c) */
	size_t nwaits, cwaits;

	/* socket calls with their peers (report_net.h); NULL: none */
	struct rpt_net *net;
	/* Python call sites (report_sites.h); NULL: no stacks */
	struct rpt_sites *sites;

	/* small data files, recommendations */
	uint64_t small_files, small_bytes, read_files, small_rops;
	struct rpt_reco recos[16];
	size_t nrecos;

	char err[320];
};

/* report_wait.c: the loop's run (first to last state); the workers' time inside its waits */
uint64_t rpt_wait__span(const struct rpt_wait *w);
uint64_t rpt_wait__steps_span(const struct rpt_wait *w);   /* first step's start to last's end */
/* Its wait for data: inside next() where its stacks say (w->next), else the
 * sleeps its producers ended (ns[RPT_TW_DATA]) */
uint64_t rpt_wait__data(const struct rpt_wait *w);
uint64_t rpt_wait__act_total(const struct rpt_wait *w);
/* "the loop ... waited 38% of its run (...) for data from 4 process(es); meanwhile ..." */
void rpt_wait__headline(const struct rpt_model *m, const struct rpt_wait *w, char *buf, size_t len);
/* The loop's thread name ("" unknown). */
const char *rpt_wait__thread(const struct rpt_model *m, const struct rpt_wait *w);
/* The i-th loop by the share of its run it waited for data (the straggler first). */
size_t rpt_straggler(const struct rpt_model *m, size_t i);
/* Its largest share of time that is not on a CPU: an rpt_tw_names[] name. */
const char *rpt_wait__cause(const struct rpt_wait *w);
/* The same of any time by kind (a step's) */
const char *rpt_tw_cause(const uint64_t ns[RPT_TW_N]);

/* Several captures of one job (report_hosts.c) */
struct rpt_hosts_host {
	const struct rpt_model *m;
	char label[80];                 /* its host name (#i when two share one) */
	int64_t shift;                  /* + its clock = the first capture's */
	uint64_t (*meanwhile)[RPT_TW_N]; /* per loop: its time by kind in the straggler's waits */
};
struct rpt_hosts {
	int n;
	struct rpt_hosts_host *h;
	int straggler;                  /* host index, -1: no loop anywhere */
	size_t loop;                    /* its loop that waited the largest share */
	uint64_t window_ns;             /* that loop's waits for data */
};
double rpt_hosts__waited(const struct rpt_wait *w);          /* share of its run */
const char *rpt_hosts__busy_with(const uint64_t ns[RPT_TW_N]);

/* Dropped events of any kind (BPF, capture writes, CUPTI); false: unknown */
bool rpt_model__dropped(const struct rpt_model *m, uint64_t *n);
bool rpt_model__sched_lost(const struct rpt_model *m, uint64_t *n);
uint64_t rpt_model__duration(const struct rpt_model *m);

/* percentile (0..1) of a histogram, ns (the bucket's midpoint) */
uint64_t rpt_hist__pct(const struct rpt_hist *h, double q);
enum rpt_pattern rpt_file__pattern(const struct rpt_file *f, uint64_t *single);
/* buffered-read page-cache hit ratio, -1 when no buffered reads */
double rpt_ratio(uint64_t hit, uint64_t all);

/* Time formatting: µs relative to the anchor (the exports' ts) and UTC. */
int64_t rpt_ts_rel_ns(const struct rpt_model *m, uint64_t t);
void rpt_fmt_wall(const struct rpt_model *m, uint64_t t, char *buf, size_t len);
uint64_t rpt_thread__wall(const struct rpt_model *m, const struct rpt_thread *t);
const char *rpt_proc_comm(const struct rpt_model *m, uint32_t pid);
/* The distinct cgroups of the traced processes, most processes first; at most max. */
size_t rpt_model__jobs(const struct rpt_model *m, struct rpt_job *out, size_t max);
const char *rpt_pattern_name(enum rpt_pattern p);

/* Files ranked: indices into m->files (sorted by read+write time, then the
 * top `top` by bytes and by ops appended when not yet in); *n on return. */
size_t *rpt_model__ranked_files(const struct rpt_model *m, unsigned top, size_t *n);


#endif /* GPUIO_REPORT_MODEL_H */
