/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * mon_state.bpf.h — the monitor's maps (per-cgroup, per-process, per-device
 * accumulators, per-thread state in task storage, in-flight requests) and
 * the helpers every hook of monitor.bpf.c uses: counters, log2 histogram
 * slots, get-or-create. Included once, from monitor.bpf.c.
 */
#ifndef GPUIO_MON_STATE_BPF_H
#define GPUIO_MON_STATE_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "monitor/monitor.h"
#include "lib/core_fixes.bpf.h"
#include "monitor/mon_cgroup.bpf.h"

/* Sizes are set by userspace before load (--max-* options). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_PERCPU_HASH);
	__uint(max_entries, 2048);
	__type(key, struct mon_cg_key);
	__type(value, struct mon_cg_val);
} mon_cg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_PERCPU_HASH);
	__uint(max_entries, 8192);
	__type(key, struct mon_proc_key);
	__type(value, struct mon_proc_val);
} mon_proc SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_PERCPU_HASH);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, struct mon_dev_val);
} mon_dev SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, struct mon_exit_key);
	__type(value, __u8);
} mon_exited SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MON_STAT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} mon_stats SEC(".maps");

/*
 * Per-thread accumulation (tp_btf variant). A thread's successful calls on
 * one (cgroup, device) key are added into its own task storage (s: plain
 * adds, this thread only) instead of two per-CPU hash lookups per call; the
 * part of s already added to the maps is r. s - r is folded into mon_cg and
 * mon_proc, under the storage's spin lock, by whoever gets there first:
 *   - the thread itself, when its key changes (8 calls in a row elsewhere;
 *     until then those calls go straight to the maps) and when it exits
 *     (sched_process_exit);
 *   - the task iterator mon_iter_task, which the daemon runs before every
 *     refresh: every call finished before the refresh is in the maps.
 * Each field is read once and r set to what was read, so a call is added
 * once whichever side folds it (the thread keeps adding to s meanwhile).
 * The first 60 counters mirror struct mon_cg_val; the proc entry takes the
 * first 4 (vfs_bytes, vfs_ops).
 */
struct mon_acc {
	__u64 vfs_bytes[2];
	__u64 vfs_ops[2];
	__u64 vfs_lat_sum[2];
	__u64 vfs_lat[2][MON_HIST_SLOTS];
	__u64 pc_read_bytes;
	__u64 pc_miss_pages;
};
#define MON_ACC_CG   (__builtin_offsetof(struct mon_cg_val, blk_bytes) / 8)   /* 60 */
_Static_assert(__builtin_offsetof(struct mon_acc, pc_read_bytes) == __builtin_offsetof(struct mon_cg_val, blk_bytes),
	       "mon_acc mirrors the head of mon_cg_val");
_Static_assert(__builtin_offsetof(struct mon_proc_val, vfs_ops) == __builtin_offsetof(struct mon_acc, vfs_ops),
	       "mon_proc_val starts like mon_acc");

/* The call in flight on a thread (task storage: freed with the thread). */
struct mon_task {
	struct bpf_spin_lock lock;       /* s/r folds and acc key changes */
	__u32 misses;
	__u64 ts;
	__u64 start_ns;          /* group leader's start_time, read once */
	__u64 ino;
	__u32 dev;
	__u8 pending;
	__u8 dir;
	__u8 direct;
	__u8 init;
	__u8 reader;             /* has read a regular file (a data producer) */
	__u8 two;                /* a two-file call: its bytes are written to dev2 too */
	__u8 aio;                /* an AIO syscall (mon_aio.bpf.h); ino: its user pointer */
	__u32 dev2;
	__u64 acc_cgid;          /* the key s accumulates for */
	__u32 acc_dev;
	__u8 acc_on;
	__u8 streak;             /* calls in a row on another key */
	struct mon_acc s;
	struct mon_acc r;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct mon_task);
} mon_task SEC(".maps");

/* raw_tp programs may not use a map holding a bpf_spin_lock: their storage
 * is the head of struct mon_task (no accumulation, calls go to the maps). */
struct mon_task_raw {
	__u32 lock_pad;
	__u32 misses;
	__u64 ts;
	__u64 start_ns;
	__u64 ino;
	__u32 dev;
	__u8 pending;
	__u8 dir;
	__u8 direct;
	__u8 init;
	__u8 reader;
	__u8 two;
	__u8 aio;
	__u32 dev2;
};
_Static_assert(__builtin_offsetof(struct mon_task_raw, dev2) == __builtin_offsetof(struct mon_task, dev2),
	       "mon_task_raw is the head of mon_task");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct mon_task_raw);
} mon_task_raw SEC(".maps");

/* Who a block request belongs to: decided where the submitter is current. */
struct mon_owner {
	struct mon_proc_key pk;  /* pk.tgid 0: a kernel thread (writeback, …) */
};

struct mon_rq {
	__u64 insert_ns;
	__u64 issue_ns;
	struct mon_owner o;
	__u8 no_insert;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);              /* struct bio * */
	__type(value, struct mon_owner);
} mon_bios SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);              /* struct request * */
	__type(value, struct mon_rq);
} mon_rqs SEC(".maps");

#define PF_KTHREAD_  0x00200000
#define S_IFMT_      00170000
#define S_IFREG_     0100000
#define S_IFBLK_     0060000
#define O_DIRECT_    040000

extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym __weak;
/* bpf_rdonly_cast(p, 0) (an untrusted void *, 6.17+) saves the fd lookup's
 * probe_read (~5 ns): the loader retries tp_btf without it when refused. */
const volatile bool void_cast = true;

#define STAT_MAP mon_stats
#include "lib/stat.bpf.h"

/* floor(log2(v)) for v > 0, branch-free halving (BPF has no clz) */
static __always_inline __u32 log2_u64(__u64 v)
{
	__u32 r = 0, s;

	s = (v > 0xFFFFFFFFULL) << 5; v >>= s; r |= s;
	s = (v > 0xFFFF) << 4; v >>= s; r |= s;
	s = (v > 0xFF) << 3; v >>= s; r |= s;
	s = (v > 0xF) << 2; v >>= s; r |= s;
	s = (v > 0x3) << 1; v >>= s; r |= s;
	r |= (v >> 1);
	return r;
}

static __always_inline __u32 hist_slot(__u64 ns)
{
	__u32 s;

	if (ns < (1ULL << MON_HIST_SHIFT))
		return 0;
	s = log2_u64(ns) - (MON_HIST_SHIFT - 1);
	return s < MON_HIST_SLOTS ? s : MON_HIST_SLOTS - 1;
}

/* Look up key, creating a zeroed entry when absent (counted). */
static __always_inline void *get_or_create(void *map, const void *key, const void *zero,
					   __u32 stat_new, __u32 stat_fail)
{
	void *v = bpf_map_lookup_elem(map, key);

	if (v)
		return v;
	if (bpf_map_update_elem(map, key, zero, BPF_NOEXIST) == 0)
		stat_inc(stat_new);
	v = bpf_map_lookup_elem(map, key);
	if (!v)
		stat_inc(stat_fail);
	return v;
}

/* Zeroed values for creation (too big for the stack). */
struct zeroes {
	struct mon_cg_val cg;
	struct mon_proc_val proc;
	struct mon_dev_val dev;
};
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct zeroes);
} mon_zero SEC(".maps");

/* Where a fold's share goes when its map entry cannot be created (counted
 * as *_FAIL like a dropped call): keeps the locked fold loop branch-free. */
struct sink { struct mon_cg_val cg; struct mon_proc_val proc; };
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sink);
} mon_sink SEC(".maps");

static __always_inline struct zeroes *zeroes(void)
{
	__u32 k = 0;

	return bpf_map_lookup_elem(&mon_zero, &k);
}

static __always_inline struct mon_cg_val *cg_get(__u64 cgid, __u32 dev)
{
	struct mon_cg_key k = { .cgid = cgid, .dev = dev };
	struct zeroes *z = zeroes();

	if (!z)
		return NULL;
	return get_or_create(&mon_cg, &k, &z->cg, MON_STAT_CG_NEW, MON_STAT_CG_FAIL);
}

/* The process comm, once per CPU copy of an entry (exec refreshes it). */
static __always_inline void proc_fill_comm(struct mon_proc_val *v, struct task_struct *task)
{
	struct task_struct *leader = BPF_CORE_READ(task, group_leader);

	BPF_CORE_READ_STR_INTO(&v->comm, leader, comm);
	v->comm_ts = bpf_ktime_get_ns();
}

static __always_inline struct mon_proc_val *proc_get(const struct mon_proc_key *k, bool create)
{
	struct zeroes *z;

	if (!create)
		return bpf_map_lookup_elem(&mon_proc, k);
	z = zeroes();
	if (!z)
		return NULL;
	return get_or_create(&mon_proc, k, &z->proc, MON_STAT_PROC_NEW, MON_STAT_PROC_FAIL);
}

#endif /* GPUIO_MON_STATE_BPF_H */
