/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * vfs.bpf.h — the VFS layer's logic, independent of how it is hooked.
 *
 * A hook variant (syscall tracepoints here; fentry/kprobe elsewhere) decodes
 * its arguments into vfs_begin() at entry and calls vfs_end() at return.
 * Per-thread state lives in task storage (cheaper than a hash keyed by tid).
 */
#ifndef GPUIO_VFS_BPF_H
#define GPUIO_VFS_BPF_H
#include "trace/common.bpf.h"
#include "trace/batch.bpf.h"
#include "trace/pystack.bpf.h"

#define S_IFMT_  00170000
#define S_IFREG_ 0100000
#define S_IFBLK_ 0060000

/*
 * How a hook reaches the file's identity (the cheapest its program type allows):
 *   ACC_BTF    the file is a trusted BTF pointer (fentry/fexit arguments)
 *   ACC_CAST   bpf_rdonly_cast makes the file one (tp_btf, 6.2+)
 *   ACC_PROBE  probe_read helpers, through the thread's one-file cache
 */
enum { ACC_PROBE, ACC_CAST, ACC_BTF };

/*
 * A page fault of the thread on a file mapping, in flight until the task's
 * fault counters move (fault.bpf.h). Apart from the call fields: a fault is
 * settled lazily, after the thread may have begun a call.
 */
struct fault_state {
	__u64 ts;            /* entry; 0: none in flight */
	__u64 end;           /* the last moment seen inside it */
	__u64 addr;          /* the faulting address */
	__u64 ino;           /* its file, 0: not known (yet): anonymous memory */
	__s64 off;           /* file offset of the faulting page */
	__s64 lo;            /* lowest file offset it brought in, -1 none */
	__u64 maj, min;      /* the task's maj_flt, min_flt at entry */
	__u64 nvcsw;         /* its voluntary switches at entry: sleeps, not preemptions */
	__u32 dev;
	__u32 seq;           /* from the thread's call numbers */
	__u32 pages;         /* pages it added to the page cache */
	__u8 ftype;
	__u8 slept;
	__u8 write;
	__u8 exec;           /* an instruction fetch */
};

/* In-flight call of one thread. */
struct call_state {
	__u64 ts;
	__u64 file;          /* struct file * of fd, to read f_pos at return */
	__u64 file2;
	__s64 offset;        /* explicit offset or f_pos at entry; -1 none */
	__s64 offset2;
	__u64 requested;
	__u64 ino, ino2;
	__u32 dev, dev2;
	__s32 fd, fd2;
	__u32 seq;           /* number of this thread's current/last call */
	__u32 misses;        /* pages added to the page cache during the call */
	__u32 flags;
	__u16 call;          /* enum gpuio_call, NONE when idle */
	__u8 ftype, ftype2;
	__u8 implicit_pos;   /* offset(s) come from f_pos: fix up at return */
	__u8 implicit_pos2;
	__u8 hook;           /* the hook that began the call must end it */
	__u8 traced;         /* the task is in the traced set (cached) */
	__u64 named_ino;     /* the file this thread last named (emit_path): */
	__u32 named_dev;     /* most calls repeat it, so the map is not asked */
	/* the file this thread last identified: most calls repeat it, so where
	 * each inode field costs a probe_read helper only f_inode is read */
	__u8 c_ftype;
	__u64 c_file, c_inode, c_ino;
	__u32 c_dev;
	/* the thread's last socket and whether it is traced (sock.bpf.h) */
	__u8 sk_ok;
	__u64 sk_file, sk_ino;
	__u64 mmsg;          /* recvmmsg/sendmmsg: the user's mmsghdr array */
	struct fault_state fault;
	struct vfs_batch batch;  /* its ended calls' records, waiting (batch.bpf.h) */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct call_state);
} calls SEC(".maps");

/* Paths already sent, so a file opened a million times is named once. */
struct path_key { __u64 ino; __u32 dev; __u32 pad; };
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct path_key);
	__type(value, __u8);
} paths_sent SEC(".maps");

/* Scratch for the path walk: room past GPUIO_PATH_MAX for the last name. */
struct path_scratch {
	struct gpuio_path_event ev;
	char spill[256];
};
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct path_scratch);
} path_buf SEC(".maps");

static __always_inline struct call_state *call_state_get(bool create)
{
	struct call_state *cs;

	cs = bpf_task_storage_get(&calls, bpf_get_current_task_btf(), NULL,
				  create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
	if (!cs && create)
		stat_inc(GPUIO_STAT_MAP_FULL_TASK);
	return cs;
}

#include "trace/fd_file.bpf.h"

struct file_id { __u64 ino; __u32 dev; __u8 ftype; };

/* dev, ino and type of an inode, one probe_read each */
static __always_inline void inode_ident(struct inode *inode, struct file_id *id)
{
	umode_t mode = BPF_CORE_READ(inode, i_mode);

	id->ino = BPF_CORE_READ(inode, i_ino);
	id->dev = inode_dev(inode);
	id->ftype = (mode & S_IFMT_) >> 12;
}

/* f's inode (one probe_read), NULL for no file or no inode */
static __always_inline struct inode *file_inode_of(struct file *f)
{
	return f ? BPF_CORE_READ(f, f_inode) : NULL;
}

static __always_inline bool file_ident(struct file *f, struct file_id *id)
{
	struct inode *inode = file_inode_of(f);

	if (!inode)
		return false;
	inode_ident(inode, id);
	return true;
}

/*
 * file_ident through the thread's one-entry cache. A struct file can be
 * freed and its memory reused for another open, so the hit is checked on the
 * inode pointer too (one read): same file and same inode, same identity.
 */
static __always_inline bool file_ident_cached(struct call_state *cs, struct file *f,
					      struct file_id *id)
{
	struct inode *inode = file_inode_of(f);

	if (!inode)
		return false;
	if ((__u64)f == cs->c_file && (__u64)inode == cs->c_inode) {
		id->ino = cs->c_ino;
		id->dev = cs->c_dev;
		id->ftype = cs->c_ftype;
		return true;
	}
	inode_ident(inode, id);
	cs->c_file = (__u64)f;
	cs->c_inode = (__u64)inode;
	cs->c_ino = id->ino;
	cs->c_dev = id->dev;
	cs->c_ftype = id->ftype;
	return true;
}

/* Plain loads: f is a trusted BTF pointer (a fentry/fexit argument). */
static __always_inline bool file_ident_btf(struct file *f, struct file_id *id)
{
	struct inode *inode;

	if (!f)
		return false;
	inode = f->f_inode;
	if (!inode)
		return false;
	id->ino = inode->i_ino;
	id->dev = inode->i_sb->s_dev;
	id->ftype = (inode->i_mode & S_IFMT_) >> 12;
	return true;
}

/*
 * file_ident with plain loads instead of probe_read helpers: bpf_rdonly_cast
 * (6.2+) makes the file a BTF pointer. Used by the tp_btf syscall variant;
 * kernels without the kfunc refuse that variant and the loader falls back to
 * raw_tp, which uses the cached walk above.
 */

static __always_inline bool file_ident_fast(struct file *fp, struct file_id *id)
{
	struct file *f;
	struct inode *inode;

	if (!fp)
		return false;
	f = bpf_rdonly_cast(fp, bpf_core_type_id_kernel(struct file));
	inode = f->f_inode;
	if (!inode)
		return false;
	id->ino = inode->i_ino;
	id->dev = inode->i_sb->s_dev;
	id->ftype = (inode->i_mode & S_IFMT_) >> 12;
	return true;
}

/* Regular files and block devices by default; everything with --all-fds. */
static __always_inline bool ftype_wanted(__u8 ftype)
{
	return all_fds || ftype == GPUIO_FT_REG || ftype == GPUIO_FT_BLK;
}

static __always_inline __s64 file_pos(__u64 file)
{
	return BPF_CORE_READ((struct file *)file, f_pos);
}

/* The same with a plain load where bpf_rdonly_cast exists (tp_btf). */
static __always_inline __s64 file_pos_acc(__u64 file, const int acc)
{
	if (acc == ACC_CAST)
		return ((struct file *)bpf_rdonly_cast((void *)file,
				bpf_core_type_id_kernel(struct file)))->f_pos;
	return file_pos(file);
}

/*
 * Emit (dev, ino) -> absolute path by walking dentries up to the root,
 * crossing mounts. Names go leaf first, NUL separated; userspace reverses.
 * The walk is a bpf_loop callback so the verifier checks one step, not 40.
 */
#define PATH_DEPTH 40
struct walk_ctx {
	struct path_scratch *s;
	struct dentry *d;
	struct vfsmount *vmnt;
	struct mount *mnt;
	__u32 off;
	__u16 flags;
	bool done;
};

/*
 * A pseudo file's dentry (memfd, pipe, socket, anon inode) has no parent and
 * is not a mount root: the kernel names it by its filesystem's d_dname (see
 * fs/d_path.c). Say which one, so userspace writes the same name /proc does.
 */
static __always_inline __u16 pseudo_kind(struct dentry *d)
{
	unsigned long magic = BPF_CORE_READ(d, d_sb, s_magic);

	if (magic == 0x50495045)                /* PIPEFS_MAGIC: "pipe:[ino]" */
		return GPUIO_PATH_PIPE;
	if (magic == 0x534F434B)                /* SOCKFS_MAGIC: "socket:[ino]" */
		return GPUIO_PATH_SOCKET;
	if (magic == 0x09041934)                /* ANON_INODE_FS_MAGIC: "anon_inode:NAME" */
		return GPUIO_PATH_ANON;
	return GPUIO_PATH_PSEUDO;               /* simple_dname: "/NAME (deleted)" */
}

static long path_step(__u32 i, void *arg)
{
	struct walk_ctx *w = arg;
	/* locals, not w->x: CO-RE relocations must see only kernel types */
	struct dentry *d = w->d, *parent, *mnt_root;
	struct vfsmount *vmnt = w->vmnt;
	struct mount *mnt = w->mnt, *mnt_parent;
	const unsigned char *name;
	__u32 off = w->off;
	bool detached;
	long n;

	mnt_root = BPF_CORE_READ(vmnt, mnt_root);
	if (d == mnt_root) {
		mnt_parent = BPF_CORE_READ(mnt, mnt_parent);
		if (mnt_parent == mnt)
			goto done;              /* the root of the namespace */
		w->d = BPF_CORE_READ(mnt, mnt_mountpoint);
		w->mnt = mnt_parent;
		w->vmnt = (struct vfsmount *)((char *)mnt_parent +
					      bpf_core_field_offset(struct mount, mnt));
		return 0;
	}
	parent = BPF_CORE_READ(d, d_parent);
	detached = parent == d;
	if (detached && off)
		goto done;                      /* the top of a detached tree */
	/* the file itself unlinked (or O_TMPFILE): /proc says "PATH (deleted)" */
	if (!off && !detached && !BPF_CORE_READ(d, d_hash.pprev))
		w->flags |= GPUIO_PATH_DELETED;
	if (off >= GPUIO_PATH_MAX - 1) {
		w->flags |= GPUIO_PATH_TRUNCATED;
		goto done;
	}
	name = BPF_CORE_READ(d, d_name.name);
	n = bpf_probe_read_kernel_str(&w->s->ev.data[off & (GPUIO_PATH_MAX - 1)], 256, name);
	if (n <= 0)
		goto done;
	w->off = off + n;
	w->d = parent;
	if (detached) {
		w->flags |= pseudo_kind(d);
		goto done;
	}
	return 0;
done:
	w->done = true;
	return 1;
}

/*
 * The path of a file, once (paths_sent): 1 when it is named (now or
 * before), 0 when not yet. A name the ring had no room for is owed: the
 * thread's next call on the file asks again (vfs_end_name), and while the
 * ring has no room for one the walk is not even made.
 */
__noinline int emit_path_of(__u64 file, __u64 ino, __u32 dev, __u64 pid_tgid, __u64 ts)
{
	struct file *f = (struct file *)file;
	struct path_key key = { .ino = ino, .dev = dev };
	struct walk_ctx w = {};
	__u32 zero = 0, size, off;
	__u8 one = 1;

	if (!f)
		return 0;
	if (bpf_map_lookup_elem(&paths_sent, &key))
		return 1;
	if (bpf_ringbuf_query(&events, BPF_RB_RING_SIZE) -
	    bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) < sizeof(struct gpuio_path_event) + 64)
		return 0;               /* owed, not lost: not counted */
	w.s = bpf_map_lookup_elem(&path_buf, &zero);
	if (!w.s)
		return 0;
	w.d = BPF_CORE_READ(f, f_path.dentry);
	w.vmnt = BPF_CORE_READ(f, f_path.mnt);
	w.mnt = (struct mount *)((char *)w.vmnt - bpf_core_field_offset(struct mount, mnt));
	w.flags = GPUIO_PATH_COMPONENTS;
	bpf_loop(PATH_DEPTH, path_step, &w, 0);
	if (!w.done) {
		w.flags |= GPUIO_PATH_TRUNCATED;
		stat_inc(GPUIO_STAT_PATH_TRUNC);
	}
	off = w.off;
	if (off > GPUIO_PATH_MAX)
		off = GPUIO_PATH_MAX;
	size = (offsetof(struct gpuio_path_event, data) + off + 7) & ~7u;
	if (size > sizeof(w.s->ev))
		size = sizeof(w.s->ev);
	fill_hdr(&w.s->ev.hdr, GPUIO_REC_PATH, size, pid_tgid >> 32, (__u32)pid_tgid, ts);
	w.s->ev.ino = ino;
	w.s->ev.dev = dev;
	w.s->ev.len = off;
	w.s->ev.flags = w.flags;
	/* zero the pad bytes up to the 8-byte boundary */
	if (off < GPUIO_PATH_MAX)
		w.s->ev.data[off & (GPUIO_PATH_MAX - 1)] = 0;
	if (bpf_ringbuf_output(&events, &w.s->ev, size, BPF_RB_NO_WAKEUP) != 0) {
		stat_inc(GPUIO_STAT_RB_DROP_PATH);
		return 0;
	}
	bpf_map_update_elem(&paths_sent, &key, &one, BPF_ANY);
	return 1;
}

/* Global (emit_path_of): checked once per program, not at each of its call sites. */
static __always_inline bool emit_path(struct file *f, const struct file_id *id,
				      __u64 pid_tgid, __u64 ts)
{
	return emit_path_of((__u64)f, id->ino, id->dev, pid_tgid, ts) != 0;
}

/* Total length of an iovec array in user memory (first 16 entries). */
static __always_inline __u64 iov_total(__u64 uiov, __u64 cnt)
{
	struct iovec iov;
	__u64 total = 0;
	int i;

	for (i = 0; i < 16; i++) {
		if (i >= cnt)
			break;
		if (bpf_probe_read_user(&iov, sizeof(iov), (void *)(uiov + i * sizeof(iov))))
			break;
		total += iov.iov_len;
	}
	return total;
}

/*
 * The current task's call state when it is traced, else NULL. Filter first:
 * most syscalls on a node are not ours. A task never leaves the traced set
 * while it lives (its process leaves when the leader is freed, and its storage
 * with it), so its task storage remembers a yes: the TGID hash is consulted
 * once per thread, and each call pays one task-storage lookup.
 */
static __always_inline struct call_state *current_traced(void)
{
	struct call_state *cs;

	/* the bitmap first: an untraced caller leaves after an inlined lookup */
	if (!tgid_traced(bpf_get_current_pid_tgid() >> 32))
		return NULL;
	cs = bpf_task_storage_get(&calls, bpf_get_current_task_btf(), NULL, 0);
	if (cs && cs->traced)
		return cs;
	cs = call_state_get(true);
	if (cs)
		cs->traced = 1;
	return cs;
}

/*
 * Entry of a traced call. fd2 is the second file of two-file calls (-1 if
 * none). offset < 0 with implicit set means "use the file position".
 */
struct vfs_args {
	__u16 call;
	__u8 hook;           /* which function-level hook began it (0: syscall) */
	struct file *file;   /* known file (function hooks); else looked up by fd */
	struct file *file2;
	__s32 fd, fd2;
	__s64 offset, offset2;
	bool implicit, implicit2;
	/* an open (its file comes at return), said by the decoder: vfs_begin
	 * never branches on call, so the verifier checks it once, not once per
	 * call the decoder names (10,456 instructions, 26 ms, for sys_enter) */
	bool is_open;
	__u64 requested;
	__u32 flags;
	__u64 mmsg;          /* recvmmsg/sendmmsg: the mmsghdr array, read at return */
};

#include "trace/sock.bpf.h"


/* cs NULL: no cache (the second file of two-file calls, which are rare) */
static __always_inline bool acc_ident(struct call_state *cs, struct file *f,
				      struct file_id *id, const int acc)
{
	if (acc == ACC_BTF)
		return file_ident_btf(f, id);
	if (acc == ACC_CAST)
		return file_ident_fast(f, id);
	return cs ? file_ident_cached(cs, f, id) : file_ident(f, id);
}

static __always_inline void vfs_begin(struct call_state *cs, const struct vfs_args *a,
				      const int acc)
{
	struct file_id id = {}, id2 = {};
	struct file *f = NULL, *f2 = NULL;
	bool is_open = a->is_open;

	if (bench_cut == 1)
		return;
	/* a function hook nested in another traced call (splice internals,
	 * kernel readers) belongs to the outer call */
	if (a->hook && cs->call != GPUIO_CALL_NONE)
		return;
	if (!is_open) {
		f = a->file ? a->file : fd_to_file_acc(a->fd, acc);
		if (!acc_ident(cs, f, &id, acc))
			f = NULL;
		if (a->file2 || a->fd2 >= 0) {
			f2 = a->file2 ? a->file2 : fd_to_file_acc(a->fd2, acc);
			if (!acc_ident(NULL, f2, &id2, acc))
				f2 = NULL;
		}
		/* with no wanted file behind the call there is nothing to attribute */
		if (!(f && file_wanted(cs, f, &id, acc)) && !(f2 && file_wanted(cs, f2, &id2, acc)))
			return;
	}
	if (bench_cut == 2)
		return;
	cs->hook = a->hook;
	cs->ts = bench_cut == 3 ? 0 : bpf_ktime_get_ns();
	cs->seq++;
	cs->call = a->call;
	cs->fd = a->fd;
	cs->fd2 = a->fd2;
	cs->requested = a->requested;
	cs->flags = a->flags;
	cs->mmsg = a->mmsg;
	cs->misses = 0;
	cs->file = (__u64)f;
	cs->file2 = (__u64)f2;
	cs->ino = id.ino;
	cs->dev = id.dev;
	cs->ftype = id.ftype;
	cs->ino2 = id2.ino;
	cs->dev2 = id2.dev;
	cs->ftype2 = id2.ftype;
	cs->implicit_pos = a->implicit && f;
	cs->implicit_pos2 = a->implicit2 && f2;
	cs->offset = cs->implicit_pos ? file_pos_acc((__u64)f, acc) : a->offset;
	cs->offset2 = cs->implicit_pos2 ? file_pos_acc((__u64)f2, acc) : a->offset2;
}

/* A call's record, from its state at return. */
static __always_inline void vfs_fill(struct gpuio_vfs_event *e, const struct call_state *cs,
				     __u16 call, long ret, __u64 id_tgid, __u64 now)
{
	fill_hdr(&e->hdr, GPUIO_REC_VFS, sizeof(*e), id_tgid >> 32, (__u32)id_tgid, cs->ts);
	e->dur_ns = now - cs->ts;
	e->ret = ret;
	e->requested = cs->requested;
	e->offset = cs->offset;
	e->offset2 = cs->offset2;
	e->ino = cs->ino;
	e->ino2 = cs->ino2;
	e->dev = cs->dev;
	e->dev2 = cs->dev2;
	e->fd = cs->fd;
	e->fd2 = cs->fd2;
	e->seq = cs->seq;
	e->cache_miss_pages = cs->misses;
	e->flags = cs->flags;
	e->call = call;
	e->ftype = cs->ftype;
	e->ftype2 = cs->ftype2;
}

/* An open that returned a wanted file: its fd and identity (into *id), its path out. */
static __always_inline bool vfs_end_open(struct call_state *cs, long ret, struct file_id *id,
					 __u64 id_tgid, __u64 now, const int acc)
{
	struct file *f;

	/* failed opens have no file to name; see README limitations */
	if (ret < 0)
		return false;
	f = fd_to_file_acc(ret, acc);
	if (!file_ident(f, id) || !ftype_wanted(id->ftype))
		return false;
	cs->fd = ret;
	cs->ino = id->ino;
	cs->dev = id->dev;
	cs->ftype = id->ftype;
	emit_path(f, id, id_tgid, now);
	return true;
}

/*
 * Files that were never opened by name (memfd_create, inherited or
 * pre-attach fds, pipes): named at their first call.
 */
static __always_inline void vfs_end_name(struct call_state *cs, struct file_id *id,
					 __u64 id_tgid, __u64 now)
{
	if (cs->file && (cs->ino != cs->named_ino || cs->dev != cs->named_dev)) {
		bool named = true;

		id->ino = cs->ino;
		id->dev = cs->dev;
		/* a socket is named with its peer (its path too); one without
		 * a peer yet is asked again at its next call */
		if (cs->ftype == GPUIO_FT_SOCK)
			named = emit_sock_peer((struct file *)cs->file, cs->ino, cs->dev,
					       id_tgid, now);
		else
			named = emit_path((struct file *)cs->file, id, id_tgid, now);
		if (named) {
			cs->named_ino = cs->ino;
			cs->named_dev = cs->dev;
		}
	}
	if (cs->file2) {
		id->ino = cs->ino2;
		id->dev = cs->dev2;
		if (cs->ftype2 == GPUIO_FT_SOCK)
			emit_sock_peer((struct file *)cs->file2, cs->ino2, cs->dev2, id_tgid, now);
		else
			emit_path((struct file *)cs->file2, id, id_tgid, now);
	}
}

/* The offsets a call's record carries, and its bytes (ret, but *mmsg's total). */
static __always_inline long vfs_end_offsets(struct call_state *cs, __u16 call, long ret,
					    const int acc)
{
	/* for read/write-style calls the position moved by what was transferred */
	if (cs->implicit_pos && ret > 0)
		cs->offset = file_pos_acc(cs->file, acc) - ret;
	if (cs->implicit_pos2 && ret > 0)
		cs->offset2 = file_pos_acc(cs->file2, acc) - ret;
	/* pipes and sockets have no position */
	if (cs->offset < 0 || (cs->ftype != GPUIO_FT_REG && cs->ftype != GPUIO_FT_BLK))
		cs->offset = -1;
	if (cs->offset2 < 0 || (cs->ftype2 != GPUIO_FT_REG && cs->ftype2 != GPUIO_FT_BLK))
		cs->offset2 = -1;
	/* *mmsg: the messages moved go to offset2, their bytes to ret */
	if (call_is_mmsg(call)) {
		cs->offset2 = ret >= 0 ? ret : -1;
		if (ret > 0)
			ret = (long)mmsg_total(cs->mmsg, (__u64)ret, true);
	}
	return ret;
}

/* A call's record: into the thread's batch; taken (the iterator, at the end): straight out. */
static __always_inline void vfs_emit(struct call_state *cs, __u16 call, long ret,
				     __u64 id_tgid, __u64 now)
{
	struct gpuio_vfs_event *e;

	if (vfs_batch && !batch_closing && bench_cut == 0 && batch_lock(&cs->batch)) {
		struct vfs_batch *b = &cs->batch;
		__u32 n = b->n;

		if (n < VFS_BATCH_CAP) {
			/* masked as well, and the mask kept: 6.1's verifier
			 * loses the bound when the compiler reloads n from the
			 * stack, and the compiler drops a mask it sees as idle */
			__u32 i = n;

			barrier_var(i);
			vfs_fill(&b->ev[i & (VFS_BATCH_CAP - 1)], cs, call, ret, id_tgid, now);
			if (n == 0)
				b->first_ns = now;
			b->n = ++n;
			if (n >= vfs_batch || now - b->first_ns >= VFS_BATCH_AGE_NS || batch_closing)
				batch_flush_locked(b, id_tgid >> 32, (__u32)id_tgid);
			batch_unlock(b);
			return;
		}
		batch_unlock(b);
	}
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		stat_inc(GPUIO_STAT_RB_DROP_VFS);
		ledger_add(id_tgid >> 32, cs->dev, cs->ino, call, cs->ftype, ret, now - cs->ts);
		return;
	}
	if (bench_cut == 5) {
		bpf_ringbuf_discard(e, rb_wakeup_flag());
		return;
	}
	vfs_fill(e, cs, call, ret, id_tgid, now);
	if (bench_cut == 6) {
		bpf_ringbuf_discard(e, rb_wakeup_flag());
		return;
	}
	bpf_ringbuf_submit(e, rb_wakeup_flag());
}

/* A call's record straight to the ring: for the end functions that are
 * global (aio.bpf.h, sock_accept.bpf.h), whose calls are rare; the batch
 * path stays vfs_end's. */
static __always_inline void vfs_emit_direct(struct call_state *cs, __u16 call, long ret,
					    __u64 id_tgid, __u64 now)
{
	struct gpuio_vfs_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e) {
		stat_inc(GPUIO_STAT_RB_DROP_VFS);
		ledger_add(id_tgid >> 32, cs->dev, cs->ino, call, cs->ftype, ret, now - cs->ts);
		return;
	}
	vfs_fill(e, cs, call, ret, id_tgid, now);
	bpf_ringbuf_submit(e, rb_wakeup_flag());
}

#include "trace/aio.bpf.h"
#include "trace/sock_accept.bpf.h"
#include "trace/vma.bpf.h"
#include "trace/hints.bpf.h"

static __always_inline void vfs_end(long ret, __u8 hook, const int acc)
{
	struct file_id id = {};
	struct call_state *cs;
	__u64 now, id_tgid;
	__u16 call;

	/* every exit of a hooked call comes here, a bystander's too: the bitmap first */
	if (!tgid_traced(bpf_get_current_pid_tgid() >> 32))
		return;
	cs = call_state_get(false);
	if (!cs || cs->call == GPUIO_CALL_NONE || cs->hook != hook)
		return;
	call = cs->call;
	cs->call = GPUIO_CALL_NONE;
	now = bench_cut == 3 ? 0 : bpf_ktime_get_ns();
	id_tgid = bpf_get_current_pid_tgid();

	/* AIO syscalls: their iocbs kept or ended, their own record (aio.bpf.h) */
	if (call == GPUIO_CALL_IO_SUBMIT || call == GPUIO_CALL_IO_GETEVENTS) {
		if (aio_call_end(cs, call, ret, now) && py_stacks)
			py_stack_at(id_tgid >> 32, (__u32)id_tgid, GPUIO_SA_CALL, cs->seq, now);
		return;
	}
	/* accept: the record is the new socket's (sock_accept.bpf.h) */
	if (call == GPUIO_CALL_ACCEPT) {
		sock_accept_end(cs, ret, now);
		return;
	}
	if (call == GPUIO_CALL_OPEN || call == GPUIO_CALL_OPENAT ||
	    call == GPUIO_CALL_OPENAT2 || call == GPUIO_CALL_CREAT) {
		if (!vfs_end_open(cs, ret, &id, id_tgid, now, acc))
			return;
	} else {
		vfs_end_name(cs, &id, id_tgid, now);
	}
	ret = vfs_end_offsets(cs, call, ret, acc);
	if (bench_cut == 3 || bench_cut == 4)
		return;
	/* where in the program the call was made (--stacks): named by its seq */
	if (py_stacks)
		py_stack_at(id_tgid >> 32, (__u32)id_tgid, GPUIO_SA_CALL, cs->seq, now);
	vfs_emit(cs, call, ret, id_tgid, now);
}

/*
 * The end of the trace (gpuio reads this iterator twice, batch.bpf.h): the
 * records still waiting in each thread's batch, out.
 */
SEC("?iter/task")
int vfs_batch_flush(struct bpf_iter__task *ctx)
{
	struct task_struct *t = ctx->task;
	struct call_state *cs;

	if (!t)
		return 0;
	cs = bpf_task_storage_get(&calls, t, NULL, 0);
	if (!cs || !cs->batch.n)
		return 0;
	if (!batch_try_flush(&cs->batch, t->tgid, t->pid) && batch_final)
		stat_add(GPUIO_STAT_RB_DROP_VFS, cs->batch.n);
	return 0;
}

#endif
