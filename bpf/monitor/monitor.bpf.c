// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * monitor.bpf.c — `gpuio monitor`'s always-on aggregation. Nothing goes to
 * userspace per event: every hook adds into per-CPU maps that the daemon
 * reads when scraped (bpf/monitor/monitor.h has the layouts).
 *
 *   sys_enter/sys_exit   read/write-family calls on regular files and block
 *                        devices: bytes, ops, log2 latency per (cgroup, fs
 *                        device) and bytes/ops per process incarnation
 *   block_bio_queue      who submitted a bio (cgroup, process), while current
 *   block_rq_insert/issue/complete
 *                        per disk: bytes, ops, queue and service histograms;
 *                        per cgroup/process: block bytes/ops; writes from
 *                        kernel threads are writeback
 *   mm_filemap_add_to_page_cache
 *                        pages a buffered read added (its cache misses)
 *   writeback_dirty_folio
 *                        pages dirtied per cgroup
 *   sched_process_exit/exec
 *                        a process is gone (userspace folds and deletes its
 *                        entry) / renamed (its comm in the entry)
 *
 * Two variants of every program: tp_btf (plain loads through typed
 * pointers) and raw_tp (CO-RE reads); user/monitor/monitor_bpf.c loads the best.
 * In the tp_btf variant a thread's syscall counters accumulate in its task
 * storage and are folded into the maps lazily (struct mon_acc; the daemon
 * runs the task iterator mon_iter_task before each refresh, so the page is
 * still exact); raw_tp may not use the spin lock that needs, so it adds
 * every call straight into the maps.
 *
 * Cost per I/O syscall (pread of a cached file, bpf_stats run_time_ns/run_cnt
 * on this 6.18 VM; the empty floor bench_empty.bpf.c is 44 + 44 ns):
 *   before: enter 82 + exit 112 ns (two per-CPU LRU hash lookups per call)
 *   tp_btf: enter 73 + exit 76 ns; raw_tp: enter 146 + exit 110 ns.
 * What is left is mostly intrinsic: the two bpf_ktime_get_ns() (~30 ns each
 * here), the program dispatch and stats overhead (~33 ns per program, as in
 * the floor), one task storage lookup per edge (~4 ns), the fd -> file walk
 * (~6 ns), the cgroup id (~4 ns) and a handful of adds.
 * LRU maps bound memory and absorb process churn; creations are counted so
 * userspace can report evictions.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "monitor/monitor.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

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
};
_Static_assert(__builtin_offsetof(struct mon_task_raw, init) == __builtin_offsetof(struct mon_task, init),
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

static __always_inline void stat_inc(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&mon_stats, &idx);

	if (v)
		(*v)++;
}

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

/* ------------------------------------------------------------- VFS (syscalls) */

#if defined(__TARGET_ARCH_x86)
enum {
	NR_read = 0, NR_write = 1, NR_pread64 = 17, NR_pwrite64 = 18, NR_readv = 19,
	NR_writev = 20, NR_preadv = 295, NR_pwritev = 296, NR_preadv2 = 327, NR_pwritev2 = 328,
};
#else
#error "gpuio monitor's syscall table is x86_64 only for now"
#endif

/* 0 read, 1 write, -1 not a call we count. */
static __always_inline int nr_dir(long nr)
{
	switch (nr) {
	case NR_read: case NR_pread64: case NR_readv: case NR_preadv: case NR_preadv2:
		return MON_READ;
	case NR_write: case NR_pwrite64: case NR_writev: case NR_pwritev: case NR_pwritev2:
		return MON_WRITE;
	}
	return -1;
}

struct mon_fid { __u64 ino; __u32 dev; __u32 flags; bool ok; };

/* The file behind fd: wanted only if a regular file or a block device. */
static __always_inline void fd_ident(int fd, struct mon_fid *out, const bool fast)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct file **arr;
	struct file *fp = NULL;
	struct inode *inode;
	struct fdtable *fdt;
	umode_t mode;

	out->ok = false;
	if (fd < 0)
		return;
	if (fast) {
		struct files_struct *files = task->files;

		if (!files)
			return;
		fdt = files->fdt;
		if (!fdt || (unsigned int)fd >= fdt->max_fds)
			return;
		arr = fdt->fd;
	} else {
		fdt = BPF_CORE_READ(task, files, fdt);
		if (!fdt || (unsigned int)fd >= BPF_CORE_READ(fdt, max_fds))
			return;
		arr = BPF_CORE_READ(fdt, fd);
	}
	if (fast && void_cast)  /* a plain (fault-tolerant) load, no helper call */
		fp = ((struct file **)bpf_rdonly_cast(arr, 0))[fd];
	else
		bpf_probe_read_kernel(&fp, sizeof(fp), &arr[fd]);
	if (!fp)
		return;
	if (fast) {
		struct file *f = bpf_rdonly_cast(fp, bpf_core_type_id_kernel(struct file));

		inode = f->f_inode;
		if (!inode)
			return;
		mode = inode->i_mode;
		out->ino = inode->i_ino;
		out->dev = inode->i_sb->s_dev;
		out->flags = f->f_flags;
	} else {
		inode = BPF_CORE_READ(fp, f_inode);
		if (!inode)
			return;
		mode = BPF_CORE_READ(inode, i_mode);
		out->ino = BPF_CORE_READ(inode, i_ino);
		out->dev = BPF_CORE_READ(inode, i_sb, s_dev);
		out->flags = BPF_CORE_READ(fp, f_flags);
	}
	mode &= S_IFMT_;
	out->ok = mode == S_IFREG_ || mode == S_IFBLK_;
}

/* fast (tp_btf): struct mon_task; raw_tp: only its head is there. */
static __always_inline struct mon_task *task_state(bool create, const bool fast)
{
	struct mon_task *t;

	t = bpf_task_storage_get(fast ? (void *)&mon_task : (void *)&mon_task_raw,
				 bpf_get_current_task_btf(), NULL,
				 create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
	if (!t && create)
		stat_inc(MON_STAT_TASK_FAIL);
	return t;
}

static __always_inline void sys_enter(long nr, int fd, const bool fast)
{
	int dir = nr_dir(nr);
	struct mon_task *t;
	struct mon_fid id;

	if (dir < 0)
		return;
	fd_ident(fd, &id, fast);
	if (!id.ok)
		return;
	t = task_state(true, fast);
	if (!t)
		return;
	if (!t->init) {
		struct task_struct *task = bpf_get_current_task_btf();

		t->start_ns = BPF_CORE_READ(task, group_leader, start_time);
		t->init = 1;
	}
	t->dir = dir;
	t->dev = id.dev;
	t->ino = id.ino;
	t->direct = !!(id.flags & O_DIRECT_);
	t->misses = 0;
	t->pending = 1;
	t->ts = bpf_ktime_get_ns();
}

/* Add s - r of t into the maps for t's key (see struct mon_acc). */
static __always_inline void acc_fold(struct mon_task *t, struct task_struct *task, __u32 tgid)
{
	struct mon_proc_key pk = {};
	struct mon_proc_val *pv;
	struct mon_cg_val *cg;
	__u64 *s, *r, *c, *p;
	__u64 cgid;
	__u32 dev, k = 0;
	struct sink *sk;

	if (!t->acc_on ||
	    (t->s.vfs_ops[0] == t->r.vfs_ops[0] && t->s.vfs_ops[1] == t->r.vfs_ops[1]))
		return;          /* nothing pending (every counted call is an op) */
	cgid = t->acc_cgid;
	dev = t->acc_dev;
	sk = bpf_map_lookup_elem(&mon_sink, &k);
	if (!sk)
		return;
	cg = cg_get(cgid, dev);
	pk.tgid = tgid;
	pk.start_ns = t->start_ns;
	pk.cgid = cgid;
	pv = proc_get(&pk, true);
	if (pv && !pv->comm_ts)
		proc_fill_comm(pv, task);
	c = cg ? (__u64 *)cg : (__u64 *)&sk->cg;
	p = pv ? (__u64 *)pv : (__u64 *)&sk->proc;
	s = (__u64 *)&t->s;
	r = (__u64 *)&t->r;
	bpf_spin_lock(&t->lock);
	if (t->acc_cgid == cgid && t->acc_dev == dev) {   /* not re-keyed meanwhile */
		for (int i = 0; i < MON_ACC_CG; i++) {
			__u64 v = *(volatile __u64 *)&s[i], d = v - r[i];

			r[i] = v;
			c[i] += d;
			if (i < 4)
				p[i] += d;
		}
		{
			__u64 v = *(volatile __u64 *)&t->s.pc_read_bytes;

			cg = (void *)c;
			cg->pc_read_bytes += v - t->r.pc_read_bytes;
			t->r.pc_read_bytes = v;
			v = *(volatile __u64 *)&t->s.pc_miss_pages;
			cg->pc_miss_pages += v - t->r.pc_miss_pages;
			t->r.pc_miss_pages = v;
		}
	}
	bpf_spin_unlock(&t->lock);
}

/* Fold what t holds and accumulate for (cgid, dev) from now on. */
static __always_inline void acc_rekey(struct mon_task *t, __u64 cgid, __u32 dev)
{
	struct task_struct *task = bpf_get_current_task_btf();

	acc_fold(t, task, bpf_get_current_pid_tgid() >> 32);
	bpf_spin_lock(&t->lock);
	t->acc_cgid = cgid;
	t->acc_dev = dev;
	t->acc_on = 1;
	bpf_spin_unlock(&t->lock);
	t->streak = 0;
}

static __always_inline void sys_exit(long ret, const bool fast)
{
	struct mon_task *t = task_state(false, fast);
	struct mon_proc_key pk = {};
	struct mon_proc_val *pv;
	struct mon_cg_val *cg;
	__u64 lat, bytes, cgid;
	__u32 dir, slot;

	if (!t || !t->pending)
		return;
	t->pending = 0;
	if (ret < 0)
		return;
	lat = bpf_ktime_get_ns() - t->ts;
	bytes = ret;
	dir = t->dir & 1;
	slot = hist_slot(lat);
	cgid = bpf_get_current_cgroup_id();

	if (fast && t->acc_on && t->acc_cgid == cgid && t->acc_dev == t->dev) {
		struct mon_acc *a = &t->s;

		a->vfs_bytes[dir] += bytes;
		a->vfs_ops[dir]++;
		a->vfs_lat_sum[dir] += lat;
		a->vfs_lat[dir][slot]++;
		if (dir == MON_READ && !t->direct) {
			a->pc_read_bytes += bytes;
			a->pc_miss_pages += t->misses;
		}
		t->streak = 0;
		return;
	}

	/* straight into the maps: raw_tp, a thread's first call, another key */
	cg = cg_get(cgid, t->dev);
	if (cg) {
		cg->vfs_bytes[dir] += bytes;
		cg->vfs_ops[dir]++;
		cg->vfs_lat_sum[dir] += lat;
		cg->vfs_lat[dir][slot]++;
		if (dir == MON_READ && !t->direct) {
			cg->pc_read_bytes += bytes;
			cg->pc_miss_pages += t->misses;
		}
	}
	pk.tgid = bpf_get_current_pid_tgid() >> 32;
	pk.start_ns = t->start_ns;
	pk.cgid = cgid;
	pv = proc_get(&pk, true);
	if (pv) {
		if (!pv->comm_ts)
			proc_fill_comm(pv, bpf_get_current_task_btf());
		pv->vfs_bytes[dir] += bytes;
		pv->vfs_ops[dir]++;
	}
	if (fast && (!t->acc_on || ++t->streak >= 8))
		acc_rekey(t, cgid, t->dev);
}

SEC("?tp_btf/sys_enter")
int BPF_PROG(mon_sys_enter_btf, struct pt_regs *regs, long id)
{
	if (nr_dir(id) >= 0)
		sys_enter(id, (int)regs->di, true);
	return 0;
}

SEC("?tp_btf/sys_exit")
int BPF_PROG(mon_sys_exit_btf, struct pt_regs *regs, long ret)
{
	sys_exit(ret, true);
	return 0;
}

SEC("?raw_tp/sys_enter")
int BPF_PROG(mon_sys_enter_raw, struct pt_regs *regs, long id)
{
	if (nr_dir(id) >= 0)
		sys_enter(id, (int)BPF_CORE_READ(regs, di), false);
	return 0;
}

SEC("?raw_tp/sys_exit")
int BPF_PROG(mon_sys_exit_raw, struct pt_regs *regs, long ret)
{
	sys_exit(ret, false);
	return 0;
}

/* ------------------------------------------------------------- page cache */

struct folio___old {
	unsigned long flags;
	unsigned char _folio_order;
} __attribute__((preserve_access_index));

/* Pages in a folio (same reading as bpf/trace/pagecache.bpf.h). */
static __always_inline __u32 folio_npages(struct folio *folio)
{
	struct folio___old *old = (void *)folio;
	unsigned long flags = 0, flags1 = 0;
	unsigned char order = 0;
	int head = bpf_core_enum_value(enum pageflags, PG_head);

	if (bpf_core_field_exists(old->flags))
		bpf_core_read(&flags, sizeof(flags), &old->flags);
	else
		bpf_core_read(&flags, sizeof(flags), &folio->flags);
	if (!(flags & (1UL << (head & 63))))
		return 1;
	if (bpf_core_field_exists(old->_folio_order)) {
		bpf_core_read(&order, sizeof(order), &old->_folio_order);
		return 1U << (order & 0x1f);
	}
	bpf_core_read(&flags1, sizeof(flags1), &folio->_flags_1);
	return 1U << (flags1 & 0x1f);
}

/* A page added while a buffered read is in flight is a miss of that read
 * (readahead included); only the read's own file counts, not metadata. */
static __always_inline int on_cache_add(struct folio *folio, const bool fast)
{
	struct mon_task *t = task_state(false, fast);

	if (!t || !t->pending || t->dir != MON_READ)
		return 0;
	if (BPF_CORE_READ(folio, mapping, host, i_ino) != t->ino)
		return 0;
	t->misses += folio_npages(folio);
	return 0;
}

static __always_inline int on_dirty(struct folio *folio, struct address_space *mapping)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct mon_cg_val *cg;

	if (!mapping || (BPF_CORE_READ(task, flags) & PF_KTHREAD_))
		return 0;
	cg = cg_get(bpf_get_current_cgroup_id(), BPF_CORE_READ(mapping, host, i_sb, s_dev));
	if (cg)
		cg->dirtied_pages += folio_npages(folio);
	return 0;
}

SEC("?tp_btf/mm_filemap_add_to_page_cache")
int BPF_PROG(mon_cache_add_btf, struct folio *folio)
{ return on_cache_add(folio, true); }
SEC("?tp_btf/writeback_dirty_folio")
int BPF_PROG(mon_dirty_btf, struct folio *folio, struct address_space *mapping)
{ return on_dirty(folio, mapping); }
SEC("?raw_tp/mm_filemap_add_to_page_cache")
int BPF_PROG(mon_cache_add_raw, struct folio *folio)
{ return on_cache_add(folio, false); }
SEC("?raw_tp/writeback_dirty_folio")
int BPF_PROG(mon_dirty_raw, struct folio *folio, struct address_space *mapping)
{ return on_dirty(folio, mapping); }

/* ------------------------------------------------------------- block */

/* The submitter, when current is a user task; tgid 0 for kernel threads. */
static __always_inline void owner_current(struct mon_owner *o, const bool fast)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct mon_task *t;

	__builtin_memset(o, 0, sizeof(*o));
	if (BPF_CORE_READ(task, flags) & PF_KTHREAD_)
		return;
	o->pk.tgid = bpf_get_current_pid_tgid() >> 32;
	o->pk.cgid = bpf_get_current_cgroup_id();
	t = task_state(false, fast);
	o->pk.start_ns = t && t->init ? t->start_ns :
			 BPF_CORE_READ(task, group_leader, start_time);
}

static __always_inline int on_bio_queue(struct bio *bio, const bool fast)
{
	__u64 key = (__u64)bio;
	struct mon_owner o;

	owner_current(&o, fast);
	if (!o.pk.tgid) {
		/* bios are reused: never leave a stale owner behind */
		bpf_map_delete_elem(&mon_bios, &key);
		return 0;
	}
	if (bpf_map_update_elem(&mon_bios, &key, &o, BPF_ANY) != 0)
		stat_inc(MON_STAT_BIO_FULL);
	return 0;
}

static __always_inline struct mon_rq *rq_track(struct request *rq, __u64 now, bool insert,
					      const bool fast)
{
	__u64 key = (__u64)rq, bio = (__u64)BPF_CORE_READ(rq, bio);
	struct mon_rq st = {}, *s;
	struct mon_owner *o;

	s = bpf_map_lookup_elem(&mon_rqs, &key);
	if (s)
		return s;
	o = bio ? bpf_map_lookup_elem(&mon_bios, &bio) : NULL;
	if (o) {
		st.o = *o;
		bpf_map_delete_elem(&mon_bios, &bio);
	} else {
		owner_current(&st.o, fast);
	}
	st.insert_ns = now;
	st.no_insert = !insert;
	if (bpf_map_update_elem(&mon_rqs, &key, &st, BPF_NOEXIST) != 0) {
		stat_inc(MON_STAT_RQ_FULL);
		return NULL;
	}
	return bpf_map_lookup_elem(&mon_rqs, &key);
}

static __always_inline int on_rq_insert(struct request *rq, const bool fast)
{
	rq_track(rq, bpf_ktime_get_ns(), true, fast);
	return 0;
}

static __always_inline int on_rq_issue(struct request *rq, const bool fast)
{
	__u64 now = bpf_ktime_get_ns();
	struct mon_rq *s = rq_track(rq, now, false, fast);

	if (s)
		s->issue_ns = now;
	return 0;
}

static __always_inline int on_rq_complete(struct request *rq, unsigned int nr_bytes)
{
	__u64 key = (__u64)rq, now = bpf_ktime_get_ns(), issue, q, svc;
	struct mon_proc_val *pv;
	struct mon_dev_val *dv;
	struct mon_cg_val *cg;
	struct gendisk *disk;
	struct zeroes *z;
	struct mon_rq *s;
	__u32 dev, op, d;

	s = bpf_map_lookup_elem(&mon_rqs, &key);
	if (!s)
		return 0;
	issue = s->issue_ns ? s->issue_ns : s->insert_ns;
	q = issue - s->insert_ns;
	svc = now - issue;
	op = BPF_CORE_READ(rq, cmd_flags) & 0xff;   /* REQ_OP_MASK */
	d = op == 0 ? MON_READ : op == 1 ? MON_WRITE : MON_OTHER;
	disk = BPF_CORE_READ(rq, q, disk);
	dev = disk ? ((__u32)BPF_CORE_READ(disk, major) << 20) |
		     (__u32)BPF_CORE_READ(disk, first_minor) : 0;

	z = zeroes();
	dv = z ? get_or_create(&mon_dev, &dev, &z->dev, MON_STAT_DEV_NEW, MON_STAT_DEV_FAIL) : NULL;
	if (dv) {
		dv->bytes[d] += nr_bytes;
		dv->ops[d]++;
		if (!s->o.pk.tgid && d == MON_WRITE)
			dv->writeback_bytes += nr_bytes;
		if (!s->no_insert) {
			dv->queue_sum += q;
			dv->queue[hist_slot(q)]++;
		}
		dv->service_sum[d] += svc;
		dv->service[d][hist_slot(svc)]++;
	}
	cg = cg_get(s->o.pk.cgid, dev);
	if (cg) {
		cg->blk_bytes[d] += nr_bytes;
		cg->blk_ops[d]++;
	}
	if (s->o.pk.tgid && d != MON_OTHER) {
		pv = proc_get(&s->o.pk, false);
		if (pv) {
			pv->blk_bytes[d] += nr_bytes;
			pv->blk_ops[d]++;
		}
	}
	/* partial completion: the rest of the request completes later */
	if (nr_bytes < BPF_CORE_READ(rq, __data_len)) {
		s->insert_ns = now;
		s->issue_ns = now;
		return 0;
	}
	bpf_map_delete_elem(&mon_rqs, &key);
	return 0;
}

SEC("?tp_btf/block_bio_queue")
int BPF_PROG(mon_bio_queue_btf, struct bio *bio)
{ return on_bio_queue(bio, true); }
SEC("?tp_btf/block_rq_insert")
int BPF_PROG(mon_rq_insert_btf, struct request *rq)
{ return on_rq_insert(rq, true); }
SEC("?tp_btf/block_rq_issue")
int BPF_PROG(mon_rq_issue_btf, struct request *rq)
{ return on_rq_issue(rq, true); }
SEC("?tp_btf/block_rq_complete")
int BPF_PROG(mon_rq_complete_btf, struct request *rq, int error, unsigned int nr_bytes)
{ return on_rq_complete(rq, nr_bytes); }

SEC("?raw_tp/block_bio_queue")
int BPF_PROG(mon_bio_queue_raw, struct bio *bio)
{ return on_bio_queue(bio, false); }
SEC("?raw_tp/block_rq_insert")
int BPF_PROG(mon_rq_insert_raw, struct request *rq)
{ return on_rq_insert(rq, false); }
SEC("?raw_tp/block_rq_issue")
int BPF_PROG(mon_rq_issue_raw, struct request *rq)
{ return on_rq_issue(rq, false); }
SEC("?raw_tp/block_rq_complete")
int BPF_PROG(mon_rq_complete_raw, struct request *rq, int error, unsigned int nr_bytes)
{ return on_rq_complete(rq, nr_bytes); }

/* ------------------------------------------------------------- processes */

static __always_inline int on_exit(struct task_struct *task, const bool fast)
{
	struct mon_exit_key k = {};
	__u8 one = 1;

	if (fast) {      /* every exiting thread: its pending counts go to the maps */
		struct mon_task *t = bpf_task_storage_get(&mon_task, task, NULL, 0);

		if (t)
			acc_fold(t, task, BPF_CORE_READ(task, tgid));
	}

	/* signal->live reaches 0 when the last thread of the group exits */
	if (BPF_CORE_READ(task, signal, live.counter) != 0 ||
	    (BPF_CORE_READ(task, flags) & PF_KTHREAD_))
		return 0;
	k.tgid = BPF_CORE_READ(task, tgid);
	k.start_ns = BPF_CORE_READ(task, group_leader, start_time);
	if (bpf_map_update_elem(&mon_exited, &k, &one, BPF_ANY) == 0)
		stat_inc(MON_STAT_EXIT_NEW);
	return 0;
}

/* exec renames the process: refresh the comm of its entry (this CPU's copy,
 * newest wins in userspace) */
static __always_inline int on_exec(struct task_struct *task)
{
	struct mon_proc_key pk = {};
	struct mon_proc_val *pv;

	pk.tgid = BPF_CORE_READ(task, tgid);
	pk.start_ns = BPF_CORE_READ(task, group_leader, start_time);
	pk.cgid = bpf_get_current_cgroup_id();
	pv = proc_get(&pk, false);
	if (pv)
		proc_fill_comm(pv, task);
	return 0;
}

SEC("?tp_btf/sched_process_exit")
int BPF_PROG(mon_exit_btf, struct task_struct *p)
{ return on_exit(p, true); }
SEC("?tp_btf/sched_process_exec")
int BPF_PROG(mon_exec_btf, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{ return on_exec(p); }
SEC("?raw_tp/sched_process_exit")
int BPF_PROG(mon_exit_raw, struct task_struct *p)
{ return on_exit(p, false); }
SEC("?raw_tp/sched_process_exec")
int BPF_PROG(mon_exec_raw, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{ return on_exec(p); }

/* Run by the daemon before each refresh (tp_btf variant): every thread's
 * pending counts into the maps. */
SEC("?iter/task")
int mon_iter_task(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	struct mon_task *t;

	if (!task)
		return 0;
	t = bpf_task_storage_get(&mon_task, task, NULL, 0);
	if (t)
		acc_fold(t, task, task->tgid);
	return 0;
}
