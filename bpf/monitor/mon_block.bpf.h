/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * mon_block.bpf.h — block requests per device and cgroup: the submitter taken at bio queue (where it is current), queue and service time into histograms at completion.
 * Part of monitor.bpf.c (one BPF object), included once from it.
 */
#ifndef GPUIO_MON_BLOCK_BPF_H
#define GPUIO_MON_BLOCK_BPF_H

#include "monitor/mon_state.bpf.h"

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
	o->pk.cgid = mon_cgroup_id();
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

#endif /* GPUIO_MON_BLOCK_BPF_H */
