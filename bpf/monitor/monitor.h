/* SPDX-License-Identifier: MIT */
/*
 * monitor.h — the map layouts shared by bpf/monitor/monitor.bpf.c (always-on
 * aggregation of `gpuio monitor`) and its reader in user/monitor/monitor_agg.c.
 *
 * Everything is cumulative since load; userspace turns it into Prometheus
 * counters and histograms. Included from BPF (after vmlinux.h) and from
 * userspace (after <linux/types.h>).
 */
#ifndef GPUIO_MONITOR_H
#define GPUIO_MONITOR_H

/*
 * log2 latency histograms in ns: slot 0 counts [0, 2^10), slot i (1..25)
 * [2^(i+9), 2^(i+10)), slot 26 everything from 2^35 ns (34 s) up. As a
 * Prometheus histogram: le = 2^(i+10) ns for i < 26, then +Inf.
 */
#define MON_HIST_SLOTS 27
#define MON_HIST_SHIFT 10

/* Directions: VFS uses READ/WRITE; block adds OTHER (flush, discard, …). */
enum mon_dir { MON_READ = 0, MON_WRITE = 1, MON_OTHER = 2, MON_NDIR = 3 };

/* Per (cgroup, device): dev is the filesystem's s_dev for VFS counters and
 * the disk for block counters (the same number for a whole-disk fs). */
struct mon_cg_key {
	__u64 cgid;              /* cgroup v2 id (kernfs inode of its directory) */
	__u32 dev;               /* kernel dev_t: major << 20 | minor */
	__u32 pad;
};

struct mon_cg_val {
	__u64 vfs_bytes[2];
	__u64 vfs_ops[2];
	__u64 vfs_lat_sum[2];                 /* ns */
	__u64 vfs_lat[2][MON_HIST_SLOTS];
	__u64 blk_bytes[MON_NDIR];
	__u64 blk_ops[MON_NDIR];
	__u64 pc_read_bytes;                  /* bytes of buffered reads */
	__u64 pc_miss_pages;                  /* pages those reads added to the cache */
	__u64 dirtied_pages;                  /* page-cache pages dirtied (future writeback) */
};

/* A process incarnation: (tgid, leader start time) survives PID reuse;
 * a process moving to another cgroup starts a new entry. */
struct mon_proc_key {
	__u32 tgid;
	__u32 pad;
	__u64 start_ns;          /* group leader's start_time (CLOCK_MONOTONIC) */
	__u64 cgid;
};

struct mon_proc_val {
	__u64 vfs_bytes[2];
	__u64 vfs_ops[2];
	__u64 blk_bytes[2];
	__u64 blk_ops[2];
	__u64 comm_ts;           /* when comm was read (newest CPU copy wins) */
	char comm[16];           /* process (group leader) name */
};

/* Key of the exited-processes map: the process is gone, fold and forget it. */
struct mon_exit_key {
	__u32 tgid;
	__u32 pad;
	__u64 start_ns;
};

struct mon_dev_val {
	__u64 bytes[MON_NDIR];
	__u64 ops[MON_NDIR];
	__u64 writeback_bytes;                /* writes submitted by kernel threads */
	__u64 queue_sum;                      /* ns, insert -> issue */
	__u64 service_sum[MON_NDIR];          /* ns, issue -> complete */
	__u64 queue[MON_HIST_SLOTS];
	__u64 service[MON_NDIR][MON_HIST_SLOTS];
};

/* Counters of the monitor's own health, per CPU (stats map index). */
enum mon_stat {
	MON_STAT_CG_NEW = 0,     /* cgroup entries created */
	MON_STAT_CG_FAIL,        /* cgroup entry could not be created */
	MON_STAT_PROC_NEW,
	MON_STAT_PROC_FAIL,
	MON_STAT_DEV_NEW,
	MON_STAT_DEV_FAIL,
	MON_STAT_RQ_FULL,        /* request map full: request not measured */
	MON_STAT_BIO_FULL,
	MON_STAT_TASK_FAIL,      /* no task storage: call not measured */
	MON_STAT_EXIT_NEW,
	MON_STAT_CUDA_NEW,       /* CUDA process entries created (monitor_cuda.bpf.c) */
	MON_STAT_CUDA_FAIL,      /* CUDA call not counted: entry could not be created */
	MON_STAT_SCHED_NEW,      /* thread-time process entries created (mon_sched.bpf.h) */
	MON_STAT_SCHED_FAIL,     /* thread time not counted: entry could not be created */
	MON_STAT_MAX
};

/*
 * CUDA API calls per process incarnation (bpf/monitor/monitor_cuda.bpf.c): one
 * counter per (API layer, enum gpuio_api_kind), keyed like mon_proc. The
 * uprobe's attach cookie says what the probed function is (MON_CUDA_COOKIE):
 * its kind, its layer, and how far the library's executable segment extends
 * below and above it, so a call made from inside the same library (a
 * library calling its own entry points) is not counted.
 */
#define MON_CUDA_KINDS   8       /* enum gpuio_api_kind: other .. free */
enum mon_cuda_api { MON_CUDA_RUNTIME = 0, MON_CUDA_DRIVER = 1, MON_CUDA_NAPI = 2 };

struct mon_cuda_val {
	__u64 calls[MON_CUDA_NAPI][MON_CUDA_KINDS];
	__u64 comm_ts;           /* set when comm was filled */
	char comm[16];           /* process (group leader) name */
};

/*
 * Thread time per process incarnation (bpf/monitor/mon_sched.bpf.h), keyed
 * like mon_proc: nanoseconds by thread state (every thread of the process,
 * summed) and, for the threads recognised as loops, their time and their
 * waits by cause. A sleep's state is what the thread was blocked in when it
 * went to sleep (MON_TS_FILE..MON_TS_OTHER, in this order so that a sleep
 * kind k is loop-wait cause k - 1).
 */
enum mon_ts {
	MON_TS_CPU = 0,          /* on a CPU */
	MON_TS_RUNNABLE,         /* woken or preempted, waiting for a CPU */
	MON_TS_FILE,             /* asleep in its own file syscall */
	MON_TS_FAULT,            /* asleep in a page fault (outside any syscall) */
	MON_TS_NET,              /* asleep in a socket syscall (or read/write on a socket) */
	MON_TS_OTHER,            /* any other sleep: futex, poll, pipe, timers, ... */
	MON_TS_N
};
enum mon_lw {
	MON_LW_DATA = 0,         /* asleep until a data producer woke it, and runnable right after */
	MON_LW_FILE,
	MON_LW_FAULT,
	MON_LW_NET,
	MON_LW_OTHER,
	MON_LW_TOTAL,            /* every ns of the loop thread: the denominator */
	MON_LW_N
};
#define MON_SCHED_N (MON_TS_N + MON_LW_N)
/* a thread is a loop once this many of its sleeps were ended by a producer */
#define MON_LOOP_MIN_WAKES 3

struct mon_sched_val {
	__u64 ns[MON_SCHED_N];   /* MON_TS_*, then MON_TS_N + MON_LW_* */
	__u64 comm_ts;
	char comm[16];
};

#define MON_CUDA_SPAN_BITS 30    /* below/above in the cookie: up to 1 GiB each */
#define MON_CUDA_SPAN_MAX  ((1ULL << MON_CUDA_SPAN_BITS) - 1)
#define MON_CUDA_COOKIE(kind, api, below, above) \
	((__u64)((kind) & 7) | ((__u64)((api) & 1) << 3) | \
	 ((__u64)(below) << 4) | ((__u64)(above) << (4 + MON_CUDA_SPAN_BITS)))

#endif /* GPUIO_MONITOR_H */
