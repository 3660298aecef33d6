/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * block.bpf.h — block requests: insert -> issue -> complete.
 *
 * Completion runs in IRQ/kworker context, so attribution is taken at bio
 * submission (block_bio_queue), where the submitter is current: the traced
 * thread itself (with its in-flight VFS call or page fault, for flow
 * arrows), or — for a flusher writing back pages — the traced process that
 * dirtied the file.
 * The file comes from the first page of the bio (page->mapping->host).
 */
#ifndef GPUIO_BLOCK_BPF_H
#define GPUIO_BLOCK_BPF_H
#include "trace/pagecache.bpf.h"
#include "trace/ledger.bpf.h"

struct bio_owner {
	__u64 ino;
	__u32 pid, tid;
	__u32 seq;           /* VFS call of tid that submitted it, 0 none */
	__u32 file_dev;
	__u8 attr;           /* GPUIO_BA_* */
};

struct rq_state {
	__u64 insert_ns;
	__u64 issue_ns;
	struct bio_owner o;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 32768);
	__type(key, __u64);          /* struct bio * */
	__type(value, struct bio_owner);
} bios SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);          /* struct request * */
	__type(value, struct rq_state);
} rqs SEC(".maps");


/* The submitter is current: it, and its in-flight VFS call for the flow. */
static __always_inline void owner_current(struct bio_owner *o, __u64 pid_tgid)
{
	struct call_state *cs = call_state_get(false);

	o->pid = pid_tgid >> 32;
	o->tid = (__u32)pid_tgid;
	o->attr |= GPUIO_BA_SUBMITTER;
	if (cs && cs->call != GPUIO_CALL_NONE) {
		o->seq = cs->seq;
		/* O_DIRECT pages are the user's buffer: the call names the file */
		if (!o->ino && !(o->attr & GPUIO_BA_BDEV_PAGE) &&
		    (cs->ftype == GPUIO_FT_REG || cs->ftype == GPUIO_FT_BLK)) {
			o->ino = cs->ino;
			o->file_dev = cs->dev;
		}
	} else if (cs && cs->fault.ts) {
		/* a page fault's readahead: flows from the fault like a read's */
		__u64 ino = 0;
		__u32 dev = 0;

		fault_bio_owner(cs, &o->seq, &ino, &dev);
		if (!o->ino && ino && !(o->attr & GPUIO_BA_BDEV_PAGE)) {
			o->ino = ino;
			o->file_dev = dev;
		}
	}
}

#define PAGE_MAPPING_FLAGS_ 0x3UL

/* The file (dev, ino, inode pointer) whose page the bio carries, if any. */
static __always_inline __u64 bio_file(struct bio *bio, struct bio_owner *o)
{
	struct page *page = NULL;
	struct address_space *mapping;
	struct bio_vec *vec;
	struct inode *host;

	vec = BPF_CORE_READ(bio, bi_io_vec);
	if (!vec)
		return 0;
	/* a split or cloned bio shares its parent's vector (bi_vcnt 0) */
	vec += BPF_CORE_READ(bio, bi_iter.bi_idx);
	page = BPF_CORE_READ(vec, bv_page);
	if (!page)
		return 0;
	mapping = BPF_CORE_READ(page, mapping);
	/* anonymous / movable pages (e.g. O_DIRECT user buffers) name no file */
	if (!mapping || ((unsigned long)mapping & PAGE_MAPPING_FLAGS_))
		return 0;
	host = BPF_CORE_READ(mapping, host);
	if (!host)
		return 0;
	/* the block device's own page cache: metadata or journal, not a file */
	if ((BPF_CORE_READ(host, i_mode) & S_IFMT_) == S_IFBLK_) {
		o->attr |= GPUIO_BA_BDEV_PAGE;
		return (__u64)host;
	}
	o->ino = BPF_CORE_READ(host, i_ino);
	o->file_dev = inode_dev(host);
	return (__u64)host;
}

/*
 * Who a bio belongs to, decided in the submitter's context: a traced task
 * (not a kernel thread under -a), else for a write the traced task that
 * dirtied the file (a flusher writing back its pages). False: nobody's.
 */
static __always_inline bool bio_attribute(struct bio *bio, __u32 opf, struct bio_owner *o)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct task_struct *task = bpf_get_current_task_btf();
	bool kthread = !BPF_CORE_READ(task, mm);
	struct owner *d;
	__u64 inode;

	inode = bio ? bio_file(bio, o) : 0;
	if (tgid_traced(id >> 32) && !(trace_all && kthread)) {
		owner_current(o, id);
		return true;
	}
	if ((opf & 0xff) == 1 /* REQ_OP_WRITE */ && inode &&
	    (d = bpf_map_lookup_elem(&dirtiers, &inode))) {
		o->pid = d->pid;
		o->tid = d->tid;
		o->attr |= GPUIO_BA_WRITEBACK;
		return true;
	}
	return trace_all;
}

static __always_inline int on_bio_queue(struct bio *bio)
{
	struct bio_owner o = {};
	__u64 key = (__u64)bio;

	if (!bio_attribute(bio, BPF_CORE_READ(bio, bi_opf), &o)) {
		/* bios are reused: never leave a stale owner behind */
		bpf_map_delete_elem(&bios, &key);
		return 0;
	}
	if (bpf_map_update_elem(&bios, &key, &o, BPF_ANY) != 0)
		stat_inc(GPUIO_STAT_MAP_FULL_RQ);
	return 0;
}

static __always_inline struct rq_state *rq_track(struct request *rq, __u64 now, bool insert)
{
	__u64 key = (__u64)rq, bio = (__u64)BPF_CORE_READ(rq, bio);
	struct rq_state st = {}, *s;
	struct bio_owner *o;

	s = bpf_map_lookup_elem(&rqs, &key);
	if (s)
		return s;
	o = bio ? bpf_map_lookup_elem(&bios, &bio) : NULL;
	if (o) {
		st.o = *o;
		bpf_map_delete_elem(&bios, &bio);
	} else if (!bio_attribute((struct bio *)bio, BPF_CORE_READ(rq, cmd_flags), &st.o)) {
		/* a bio no hook saw (e.g. a clone): decide here the same way */
		return NULL;
	}
	st.insert_ns = now;
	if (!insert)
		st.o.attr |= GPUIO_BA_NO_INSERT;
	if (bpf_map_update_elem(&rqs, &key, &st, BPF_NOEXIST) != 0) {
		stat_inc(GPUIO_STAT_MAP_FULL_RQ);
		return NULL;
	}
	return bpf_map_lookup_elem(&rqs, &key);
}

static __always_inline int on_rq_insert(struct request *rq)
{
	rq_track(rq, bpf_ktime_get_ns(), true);
	return 0;
}

static __always_inline int on_rq_issue(struct request *rq)
{
	__u64 now = bpf_ktime_get_ns();
	struct rq_state *s = rq_track(rq, now, false);

	if (s)
		s->issue_ns = now;
	return 0;
}

static __always_inline __u8 rq_op_flags(__u32 opf, __u8 *flags)
{
	__u32 op = opf & 0xff;   /* REQ_OP_MASK */
	__u8 f = 0;

	if (opf & (1U << bpf_core_enum_value(enum req_flag_bits, __REQ_SYNC)))
		f |= GPUIO_RQ_SYNC;
	if (opf & (1U << bpf_core_enum_value(enum req_flag_bits, __REQ_META)))
		f |= GPUIO_RQ_META;
	if (opf & (1U << bpf_core_enum_value(enum req_flag_bits, __REQ_FUA)))
		f |= GPUIO_RQ_FUA;
	if (opf & (1U << bpf_core_enum_value(enum req_flag_bits, __REQ_PREFLUSH)))
		f |= GPUIO_RQ_PREFLUSH;
	if (opf & (1U << bpf_core_enum_value(enum req_flag_bits, __REQ_RAHEAD)))
		f |= GPUIO_RQ_RAHEAD;
	*flags = f;
	switch (op) {
	case 0: return GPUIO_BLK_READ;
	case 1: return GPUIO_BLK_WRITE;
	case 2: return GPUIO_BLK_FLUSH;
	case 3: return GPUIO_BLK_DISCARD;
	}
	return GPUIO_BLK_OTHER;
}

static __always_inline int on_rq_complete(struct request *rq, int error, unsigned int nr_bytes)
{
	__u64 key = (__u64)rq, now = bpf_ktime_get_ns();
	struct gpuio_block_event *e;
	struct rq_state *s;
	struct gendisk *disk;
	unsigned int left;

	s = bpf_map_lookup_elem(&rqs, &key);
	if (!s)
		return 0;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		struct ledger_key k = { .ino = s->o.ino, .tgid = s->o.pid, .file_dev = s->o.file_dev };
		__u8 fl;

		stat_inc(GPUIO_STAT_RB_DROP_BLOCK);
		/* its disk, op and bytes summed (ledger.bpf.h) */
		disk = BPF_CORE_READ(rq, q, disk);
		k.dev = disk ? ((__u32)BPF_CORE_READ(disk, major) << 20) |
			       (__u32)BPF_CORE_READ(disk, first_minor) : 0;
		k.call = GPUIO_LOST_BLOCK | rq_op_flags(BPF_CORE_READ(rq, cmd_flags), &fl);
		ledger_add_key(&k, nr_bytes, now - (s->issue_ns ? s->issue_ns : s->insert_ns));
		goto out;
	}
	fill_hdr(&e->hdr, GPUIO_REC_BLOCK, sizeof(*e), s->o.pid, s->o.tid, s->insert_ns);
	e->issue_ns = s->issue_ns ? s->issue_ns : s->insert_ns;
	e->complete_ns = now;
	e->sector = BPF_CORE_READ(rq, __sector);
	e->ino = s->o.ino;
	e->bytes = nr_bytes;
	disk = BPF_CORE_READ(rq, q, disk);
	e->dev = disk ? ((__u32)BPF_CORE_READ(disk, major) << 20) |
			(__u32)BPF_CORE_READ(disk, first_minor) : 0;
	e->file_dev = s->o.file_dev;
	e->vfs_seq = s->o.seq;
	e->error = error;
	e->op = rq_op_flags(BPF_CORE_READ(rq, cmd_flags), &e->rq_flags);
	e->attr = s->o.attr;
	e->pad = 0;
	bpf_ringbuf_submit(e, rb_wakeup_flag());
	stat_inc(GPUIO_STAT_EVENTS_BLOCK);
out:
	/* partial completion: the rest of the request completes later */
	left = BPF_CORE_READ(rq, __data_len);
	if (nr_bytes < left) {
		s->insert_ns = now;
		s->issue_ns = now;
		return 0;
	}
	bpf_map_delete_elem(&rqs, &key);
	return 0;
}

SEC("?tp_btf/block_bio_queue")
int BPF_PROG(blk_bio_queue_btf, struct bio *bio)
{ return on_bio_queue(bio); }
/* A bio split at the device's limits (blk_mq_submit_bio): the front part is a
 * new bio that never passes block_bio_queue. Owned here, in the submitter's
 * context: its request may be issued later by kblockd (the device was busy),
 * where nobody is current to own it. */
SEC("?tp_btf/block_split")
int BPF_PROG(blk_split_btf, struct bio *bio, unsigned int new_sector)
{ return on_bio_queue(bio); }
SEC("?tp_btf/block_rq_insert")
int BPF_PROG(blk_rq_insert_btf, struct request *rq)
{ return on_rq_insert(rq); }
SEC("?tp_btf/block_rq_issue")
int BPF_PROG(blk_rq_issue_btf, struct request *rq)
{ return on_rq_issue(rq); }
SEC("?tp_btf/block_rq_complete")
int BPF_PROG(blk_rq_complete_btf, struct request *rq, int error, unsigned int nr_bytes)
{ return on_rq_complete(rq, error, nr_bytes); }

SEC("?raw_tp/block_bio_queue")
int BPF_PROG(blk_bio_queue_raw, struct bio *bio)
{ return on_bio_queue(bio); }
SEC("?raw_tp/block_split")
int BPF_PROG(blk_split_raw, struct bio *bio, unsigned int new_sector)
{ return on_bio_queue(bio); }
SEC("?raw_tp/block_rq_insert")
int BPF_PROG(blk_rq_insert_raw, struct request *rq)
{ return on_rq_insert(rq); }
SEC("?raw_tp/block_rq_issue")
int BPF_PROG(blk_rq_issue_raw, struct request *rq)
{ return on_rq_issue(rq); }
SEC("?raw_tp/block_rq_complete")
int BPF_PROG(blk_rq_complete_raw, struct request *rq, int error, unsigned int nr_bytes)
{ return on_rq_complete(rq, error, nr_bytes); }

#endif
