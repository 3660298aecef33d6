/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * mon_vfs.bpf.h — file I/O per (cgroup, device) and per process: syscall entry/exit (tp_btf or raw_tp), the call's file from its fd, its latency into the histograms; per-thread accumulation in task storage, folded when the key changes.
 * Part of monitor.bpf.c (one BPF object), included once from it.
 */
#ifndef GPUIO_MON_VFS_BPF_H
#define GPUIO_MON_VFS_BPF_H

#include "monitor/mon_state.bpf.h"

/* ------------------------------------------------------------- VFS (syscalls) */

#if defined(__TARGET_ARCH_x86)
enum {
	NR_read = 0, NR_write = 1, NR_pread64 = 17, NR_pwrite64 = 18, NR_readv = 19,
	NR_writev = 20, NR_preadv = 295, NR_pwritev = 296, NR_preadv2 = 327, NR_pwritev2 = 328,
	NR_sendfile = 40, NR_splice = 275, NR_copy_file_range = 326,
	NR_io_getevents = 208, NR_io_submit = 209, NR_io_pgetevents = 333,
};

/* 1: io_submit, 2: io_getevents / io_pgetevents, 0: neither */
static __always_inline int nr_aio(long nr)
{
	return nr == NR_io_submit ? 1 : nr == NR_io_getevents || nr == NR_io_pgetevents ? 2 : 0;
}
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

/* Two-file calls (sendfile, splice, copy_file_range): their source and destination fds. */
static __always_inline bool nr_two(long nr, __u64 a0, __u64 a1, __u64 a2, int *src, int *dst)
{
	switch (nr) {
	case NR_sendfile:               /* (out_fd, in_fd, ...) */
		*src = (int)a1, *dst = (int)a0;
		return true;
	case NR_splice:                 /* (fd_in, off_in, fd_out, ...) */
	case NR_copy_file_range:
		*src = (int)a0, *dst = (int)a2;
		return true;
	}
	return false;
}

struct mon_fid { __u64 ino; __u32 dev; __u32 flags; __u32 mode; bool ok; };

/* --no-latency: no clock read at a call's entry or exit, no latency
 * histograms; bytes and calls are still counted (most of the per-call cost
 * over an empty program is the two clock reads) */
const volatile bool lat_on = true;

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
	out->mode = 0;
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
	out->mode = mode;
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

static __always_inline void sys_enter_fid(int dir, const struct mon_fid *fid, const struct mon_fid *fid2,
					  const bool fast);

static __always_inline void sys_enter(long nr, int fd, const bool fast)
{
	int dir = nr_dir(nr);
	struct mon_fid id, none = { .ok = false };

	if (dir < 0)
		return;
	fd_ident(fd, &id, fast);
	if (id.ok)
		sys_enter_fid(dir, &id, &none, fast);
}

/*
 * A two-file call: its bytes are a read of its source and a write of its
 * destination, each counted where it is a file (a pipe's or socket's side
 * is not file I/O).
 */
static __always_inline void sys_enter_two(int src, int dst, const bool fast)
{
	struct mon_fid a, b, none = { .ok = false };

	fd_ident(src, &a, fast);
	fd_ident(dst, &b, fast);
	if (a.ok)
		sys_enter_fid(MON_READ, &a, &b, fast);
	else if (b.ok)
		sys_enter_fid(MON_WRITE, &b, &none, fast);
}

/* A counted call begins on fid (and on fid2, written, when ok). */
static __always_inline void sys_enter_fid(int dir, const struct mon_fid *fid, const struct mon_fid *fid2,
					  const bool fast)
{
	const struct mon_fid id = *fid;
	struct mon_task *t;

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
	t->two = fid2->ok;
	t->dev2 = fid2->dev;
	t->pending = 1;
	t->ts = lat_on ? bpf_ktime_get_ns() : 0;
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

/* A call's bytes straight into the maps (a two-file call's destination, an
 * AIO request): dir is MON_READ or MON_WRITE. */
static __always_inline void count_straight_for(__u32 tgid, __u64 cgid, __u32 dev, __u32 dir,
					       __u64 start_ns, __u64 bytes, __u64 lat)
{
	struct mon_proc_key pk = { .tgid = tgid, .start_ns = start_ns, .cgid = cgid };
	struct mon_cg_val *cg = cg_get(cgid, dev);
	struct mon_proc_val *pv;

	dir &= 1;
	if (cg) {
		cg->vfs_bytes[dir] += bytes;
		cg->vfs_ops[dir]++;
		if (lat_on) {
			cg->vfs_lat_sum[dir] += lat;
			cg->vfs_lat[dir][hist_slot(lat)]++;
		}
	}
	pv = proc_get(&pk, true);
	if (pv) {
		pv->vfs_bytes[dir] += bytes;
		pv->vfs_ops[dir]++;
	}
}

/* ... for the current process */
static __always_inline void count_straight(__u64 cgid, __u32 dev, __u32 dir, __u64 start_ns,
					   __u64 bytes, __u64 lat)
{
	count_straight_for(bpf_get_current_pid_tgid() >> 32, cgid, dev, dir, start_ns, bytes, lat);
}

#include "monitor/mon_aio.bpf.h"
#include "monitor/mon_uring.bpf.h"

static __always_inline void sys_exit(long ret, const bool fast)
{
	struct mon_task *t = task_state(false, fast);
	struct mon_proc_key pk = {};
	struct mon_proc_val *pv;
	struct mon_cg_val *cg;
	__u64 lat, bytes, cgid;
	__u32 dir, slot;
	__u8 aio;

	if (!t || !t->pending)
		return;
	t->pending = 0;
	aio = t->aio;
	t->aio = 0;
	if (ret < 0)
		return;
	if (aio) {
		mon_aio_end(aio, t->ino, ret, t->start_ns, t->ts);
		return;
	}
	lat = lat_on ? bpf_ktime_get_ns() - t->ts : 0;
	bytes = ret;
	dir = t->dir & 1;
	if (dir == MON_READ && bytes)
		t->reader = 1;      /* a data producer, for the thread-time waits (mon_sched.bpf.h) */
	slot = hist_slot(lat);
	cgid = mon_cgroup_id();
	if (t->two) {
		t->two = 0;
		count_straight(cgid, t->dev2, MON_WRITE, t->start_ns, bytes, lat);
	}

	if (fast && t->acc_on && t->acc_cgid == cgid && t->acc_dev == t->dev) {
		struct mon_acc *a = &t->s;

		a->vfs_bytes[dir] += bytes;
		a->vfs_ops[dir]++;
		if (lat_on) {
			a->vfs_lat_sum[dir] += lat;
			a->vfs_lat[dir][slot]++;
		}
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
		if (lat_on) {
			cg->vfs_lat_sum[dir] += lat;
			cg->vfs_lat[dir][slot]++;
		}
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
	int src, dst;

	if (nr_dir(id) >= 0)
		sys_enter(id, (int)regs->di, true);
	else if (nr_two(id, regs->di, regs->si, regs->dx, &src, &dst))
		sys_enter_two(src, dst, true);
	else if (nr_aio(id))
		mon_aio_begin(nr_aio(id), id == NR_io_submit ? regs->dx : regs->r10, true);
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
	int src, dst;

	if (nr_dir(id) >= 0)
		sys_enter(id, (int)BPF_CORE_READ(regs, di), false);
	else if (nr_two(id, BPF_CORE_READ(regs, di), BPF_CORE_READ(regs, si),
			BPF_CORE_READ(regs, dx), &src, &dst))
		sys_enter_two(src, dst, false);
	else if (nr_aio(id))
		mon_aio_begin(nr_aio(id), id == NR_io_submit ? BPF_CORE_READ(regs, dx) :
			      BPF_CORE_READ(regs, r10), false);
	return 0;
}

SEC("?raw_tp/sys_exit")
int BPF_PROG(mon_sys_exit_raw, struct pt_regs *regs, long ret)
{
	sys_exit(ret, false);
	return 0;
}

#endif /* GPUIO_MON_VFS_BPF_H */
