// SPDX-License-Identifier: MIT
/*
 * stream_emit.c — what each record of the live stream becomes: track
 * descriptors when a process, thread, disk or lane is first seen (again when
 * its name changed), VFS and block slices with their flows, disk lanes and
 * throughput buckets, the trace info.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include "model/calls.h"
#include "capture/capture.h"
#include "export/export.h"
#include "timeline/timeline.h"
#include "lib/log.h"
#include "lib/out_file.h"
#include "export/pftrace.h"
#include "export/output.h"
#include "export/stream.h"
#include "export/stream_priv.h"
#include "lib/units.h"

/* ---- small containers ---- */

static int lanes__assign(struct stream_olanes *l, uint64_t start, uint64_t end, uint32_t *lane,
			 bool *is_new)
{
	*is_new = false;
	for (uint32_t i = 0; i < l->n; i++) {
		if (l->end[i] <= start) {
			if (end > l->end[i])
				l->end[i] = end;
			*lane = i + 1;
			return 0;
		}
	}
	if (l->n == l->cap) {
		uint32_t cap = l->cap ? l->cap * 2 : 8;
		uint64_t *e = realloc(l->end, cap * sizeof(*e));
		uint32_t *t;

		if (!e)
			return -ENOMEM;
		l->end = e;
		t = realloc(l->tid, cap * sizeof(*t));
		if (!t)
			return -ENOMEM;
		l->tid = t;
		l->cap = cap;
	}
	l->end[l->n] = end;
	l->tid[l->n] = 0;
	*lane = ++l->n;
	*is_new = true;
	return 0;
}

int stream_pendq__push(struct stream_pendq *q, const struct gpuio_hdr *h, size_t len,
		       struct stream_pend **out)
{
	struct stream_pend *e;

	if (array_grow((void **)&q->a, &q->cap, q->n + 1, sizeof(*q->a)))
		return -ENOMEM;
	e = &q->a[q->n++];
	memset(e, 0, offsetof(struct stream_pend, r));
	e->type = (uint8_t)h->type;
	memcpy(&e->r, h, len);
	*out = e;
	return 0;
}

static uint64_t name_hash(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
	return h & 0xffffffffu;
}

/*
 * Descriptors already in this file: (kind, id) -> file generation (16 bits),
 * names version (16 bits, bumped by every PROC record) and name hash (32).
 * A track seen in this file since the last rename costs one lookup.
 */
static bool desc_fresh(struct gpuio_stream *s, unsigned kind, uint64_t id)
{
	uint64_t *v = kmap__get(&s->desc, kind, id);

	return v && (*v >> 32) == ((uint64_t)(pftrace__generation(s->p) & 0xffff) << 16 |
				   (s->names_ver & 0xffff));
}

/* true when the descriptor (kind, id) named hash is not yet in this file */
static bool desc_due(struct gpuio_stream *s, unsigned kind, uint64_t id, uint64_t hash)
{
	uint64_t gen = pftrace__generation(s->p) & 0xffff, *v;
	bool due;

	if (kmap__upsert(&s->desc, kind, id, &v) < 0) {
		s->err = -ENOMEM;
		return false;
	}
	due = (*v >> 48) != gen || (*v & 0xffffffffu) != hash;
	*v = gen << 48 | (uint64_t)(s->names_ver & 0xffff) << 32 | hash;
	return due;
}

/* ---- descriptors, on first use in each file (and again after a rename) ---- */

static void need_process(struct gpuio_stream *s, uint32_t pid)
{
	char name[TL_PROC_NAME_BUF];
	size_t n;

	if (desc_fresh(s, PFT_PROCESS, pid))
		return;
	n = tl_model__proc_name_of(s->m, pid, name, sizeof(name));
	if (n && desc_due(s, PFT_PROCESS, pid, name_hash(name, n)))
		pftrace__process(s->p, PFT_UUID(pid, PFT_PROCESS), pid, name, n, NULL);
}

static void need_thread(struct gpuio_stream *s, uint32_t pid, uint32_t tid)
{
	uint64_t key = ((uint64_t)pid << 32) | tid;
	char comm[32];
	const char *tn;
	size_t n;

	if (desc_fresh(s, PFT_THREAD, key))
		return;
	tn = tl_model__thread_name_of(s->m, pid, tid, comm, &n);
	need_process(s, pid);
	if (!tn)
		return;
	if (desc_due(s, PFT_THREAD, key, name_hash(tn, n)))
		pftrace__thread(s->p, PFT_UUID(tid, PFT_THREAD), pid, tid, tn, n);
}

static void disk_name(struct gpuio_stream *s, const struct stream_disk *d, char *buf, size_t len)
{
	tl_model__disk_name_of(s->m, d->dev, buf, len);
}

static void need_disk(struct gpuio_stream *s, struct stream_disk *d)
{
	uint32_t pid = TL_DISK_PID_BASE + d->index;
	uint64_t disk = PFT_UUID(pid, PFT_DISK);
	char dname[48], name[160];
	int n;

	disk_name(s, d, dname, sizeof(dname));
	n = snprintf(name, sizeof(name), "disk %s", dname);
	if (!desc_due(s, PFT_DISK, pid, name_hash(name, (size_t)n)))
		return;
	pftrace__track(s->p, disk, 0, name, (size_t)n, true, -1);
	snprintf(name, sizeof(name), "throughput %s read_MiBps", dname);
	pftrace__counter_track(s->p, PFT_UUID((uint64_t)pid << 1, PFT_COUNTER), disk, name, "MiB/s");
	snprintf(name, sizeof(name), "throughput %s write_MiBps", dname);
	pftrace__counter_track(s->p, PFT_UUID((uint64_t)pid << 1 | 1, PFT_COUNTER), disk, name,
			       "MiB/s");
}

static void need_lane(struct gpuio_stream *s, struct stream_disk *d, uint32_t lane)
{
	uint32_t tid = TL_LANE_TID(d->index, lane);
	char name[32];
	int n;

	need_disk(s, d);
	if (!desc_due(s, PFT_LANE, tid, 0))
		return;
	n = snprintf(name, sizeof(name), "lane %u", lane);
	pftrace__track(s->p, PFT_UUID(tid, PFT_LANE),
		       PFT_UUID(TL_DISK_PID_BASE + d->index, PFT_DISK), name, (size_t)n, false, lane);
}

static void need_uring_lane(struct gpuio_stream *s, uint32_t pid, uint32_t lane, uint32_t tid)
{
	char name[32];
	int n;

	need_process(s, pid);
	if (!desc_due(s, PFT_URING, tid, 0))
		return;
	n = snprintf(name, sizeof(name), "async I/O lane %u", lane);
	pftrace__track(s->p, PFT_UUID(tid, PFT_URING), PFT_UUID(pid, PFT_PROCESS), name,
		       (size_t)n, false, -1);
}

/* ---- throughput ---- */

void stream_counter_emit(struct gpuio_stream *s, struct stream_disk *d, uint64_t k, double rb,
			 double wb, bool force)
{
	double scale = NS_PER_SEC_F / (double)BUCKET_NS / 1048576.0, r, w;
	uint32_t pid = TL_DISK_PID_BASE + d->index;
	char rs[48], ws[48];

	/* the same rounding and "only when it changes" as the JSON counters */
	snprintf(rs, sizeof(rs), "%.3f", rb * scale);
	snprintf(ws, sizeof(ws), "%.3f", wb * scale);
	r = strtod(rs, NULL);
	w = strtod(ws, NULL);
	if (d->emitted && !force && r == d->last_r && w == d->last_w)
		return;
	need_disk(s, d);
	pftrace__counter(s->p, k * BUCKET_NS, PFT_UUID((uint64_t)pid << 1, PFT_COUNTER), r);
	pftrace__counter(s->p, k * BUCKET_NS, PFT_UUID((uint64_t)pid << 1 | 1, PFT_COUNTER), w);
	d->emitted = true;
	d->last_r = r;
	d->last_w = w;
}

/* Emit and recycle the buckets before absolute index upto. */
void stream_buckets_close(struct gpuio_stream *s, struct stream_disk *d, uint64_t upto)
{
	/* a long idle stretch: one zero, not one event per bucket */
	if (upto > d->base + RING) {
		for (uint64_t k = d->base; k < d->base + RING; k++) {
			double *b = d->ring[k % RING];

			stream_counter_emit(s, d, k, b[0], b[1], false);
			b[0] = b[1] = 0;
		}
		d->base = upto - RING;
		stream_counter_emit(s, d, d->base, 0, 0, false);
	}
	for (; d->base < upto; d->base++) {
		double *b = d->ring[d->base % RING];

		stream_counter_emit(s, d, d->base, b[0], b[1], false);
		b[0] = b[1] = 0;
	}
}

static void buckets_add(struct gpuio_stream *s, struct stream_disk *d, const struct gpuio_block_event *b)
{
	uint64_t ts = b->hdr.ts, e = b->complete_ns > ts ? b->complete_ns : ts;
	uint64_t st = b->issue_ns >= ts && b->issue_ns <= e ? b->issue_ns : ts;
	uint64_t k0 = st / BUCKET_NS, k1 = e / BUCKET_NS;
	int col;

	if (b->op == GPUIO_BLK_READ)
		col = 0;
	else if (b->op == GPUIO_BLK_WRITE)
		col = 1;
	else
		return;
	if (!d->started) {
		d->base = k0;
		d->started = true;
	}
	if (k1 >= d->base + RING)
		stream_buckets_close(s, d, k1 - RING + 1);
	/* what lies before the open window lands in its first bucket */
	if (k0 < d->base)
		k0 = d->base;
	if (k1 < d->base)
		k1 = d->base;
	if (k0 == k1 || e == st) {
		d->ring[k1 % RING][col] += b->bytes;
		return;
	}
	for (uint64_t k = k0; k <= k1; k++) {
		uint64_t bs = k * BUCKET_NS, be = bs + BUCKET_NS;
		uint64_t os = st > bs ? st : bs, oe = e < be ? e : be;

		if (oe > os)
			d->ring[k % RING][col] += (double)b->bytes * (double)(oe - os) / (double)(e - st);
	}
}

/* ---- records ---- */

static struct stream_disk *disk_of(struct gpuio_stream *s, uint32_t dev)
{
	uint64_t *v;
	int rc = kmap__upsert(&s->disk_map, dev, 0, &v);

	if (rc < 0)
		return NULL;
	if (rc) {
		if (array_grow((void **)&s->disks, &s->cdisks, s->ndisks + 1, sizeof(*s->disks)))
			return NULL;
		memset(&s->disks[s->ndisks], 0, sizeof(s->disks[0]));
		s->disks[s->ndisks].dev = dev;
		s->disks[s->ndisks].index = (uint32_t)s->ndisks;
		*v = ++s->ndisks;
	}
	return &s->disks[*v - 1];
}

/* Was the thread's call seq (or a later one) emitted already? Calls of a
 * thread are emitted in their order, so the highest seq written says. */
static bool call_written(const struct gpuio_stream *s, uint32_t tid, uint32_t seq)
{
	const uint64_t *w = kmap__get(&s->written, tid, 0);

	return w && seq <= *w;
}

int stream_on_block(struct gpuio_stream *s, const struct gpuio_block_event *b)
{
	struct stream_disk *d = disk_of(s, b->dev);
	uint64_t end = b->complete_ns > b->hdr.ts ? b->complete_ns : b->hdr.ts, *fv;
	struct stream_pend *e;
	bool is_new;
	int err;

	if (!d)
		return -ENOMEM;
	err = stream_pendq__push(&s->next, &b->hdr, sizeof(*b), &e);
	if (!err)
		err = lanes__assign(&d->lanes, b->hdr.ts, end, &e->lane, &is_new);
	if (err)
		return err;
	e->disk = d->index;
	if (end > s->latest_ns)
		s->latest_ns = end;
	buckets_add(s, d, b);
	if (b->vfs_seq && !call_written(s, b->hdr.tid, b->vfs_seq)) {
		/* the call is emitted a pump later: count the requests naming it
		 * (one already written, e.g. by a readahead that completed after
		 * its read returned, gets no arrow: its list is closed) */
		if (kmap__upsert(&s->flows, b->hdr.tid, b->vfs_seq, &fv) < 0)
			return -ENOMEM;
		if ((*fv & 0xffffffffu) != 0xffffffffu) {
			*fv = (s->round << 32) | ((*fv & 0xffffffffu) + 1);
			e->flow_k = (uint32_t)(*fv & 0xffffffffu);
		}
	}
	return 0;
}

void stream_emit_block(struct gpuio_stream *s, const struct stream_pend *e)
{
	struct stream_disk *d = &s->disks[e->disk];
	struct pftrace_flows f = { 0 };
	struct tl_block o;
	uint64_t track, id;
	char dname[48];

	disk_name(s, d, dname, sizeof(dname));
	tl_model__block_record(s->m, &e->r.b, e->lane, d->index, dname, &o, &s->args);
	need_lane(s, d, e->lane);
	track = PFT_UUID(o.tid, PFT_LANE);
	if (e->flow_k) {
		id = tl_flow_id(s->m, o.ftid, o.fseq, e->flow_k);
		f.in = &id;
		f.nin = 1;
		s->st.flows++;
	}
	pftrace__slice_begin(s->p, o.ts, track, "block", o.name, true, &s->args, f.nin ? &f : NULL);
	pftrace__slice_end(s->p, o.end, track);
	s->st.block++;
}

void stream_emit_vfs(struct gpuio_stream *s, const struct gpuio_vfs_event *e)
{
	struct pftrace_flows f = { 0 };
	uint64_t track, *fv;
	struct tl_vfs v;
	uint32_t n = 0;

	tl_model__vfs(s->m, e, &v, &s->args);
	if (v.async) {
		/* io_uring requests overlap on their thread: lanes per process */
		uint64_t *pv;
		struct stream_olanes *l;
		uint32_t lane;
		bool is_new;

		if (kmap__upsert(&s->uring, e->hdr.pid, 0, &pv) < 0)
			goto nomem;
		if (!*pv) {
			if (array_grow((void **)&s->uring_lanes, &s->curing, s->nuring + 1,
				     sizeof(*s->uring_lanes)))
				goto nomem;
			memset(&s->uring_lanes[s->nuring], 0, sizeof(s->uring_lanes[0]));
			*pv = ++s->nuring;
		}
		l = &s->uring_lanes[*pv - 1];
		if (lanes__assign(l, v.ts, v.ts + v.dur, &lane, &is_new))
			goto nomem;
		if (is_new)
			l->tid[lane - 1] = TL_URING_TID_BASE + s->next_uring_tid++;
		v.tid = l->tid[lane - 1];
		need_uring_lane(s, v.pid, lane, v.tid);
		track = PFT_UUID(v.tid, PFT_URING);
	} else {
		need_thread(s, v.pid, v.tid);
		track = PFT_UUID(v.tid, PFT_THREAD);
	}
	if (e->seq) {
		uint64_t *w;

		if (kmap__upsert(&s->written, e->hdr.tid, 0, &w) < 0)
			goto nomem;
		if (e->seq > *w)
			*w = e->seq;
	}
	if (e->seq && (fv = kmap__get(&s->flows, e->hdr.tid, e->seq)) != NULL) {
		n = (uint32_t)(*fv & 0xffffffffu);
		/* later requests naming it get no arrow: its list is written now */
		*fv = (s->round << 32) | 0xffffffffu;
	}
	if (n && n != 0xffffffffu) {
		if (array_grow((void **)&s->fids, &s->cfids, n, sizeof(*s->fids)))
			goto nomem;
		for (uint32_t k = 0; k < n; k++)
			s->fids[k] = tl_flow_id(s->m, e->hdr.tid, e->seq, k + 1);
		f.out = s->fids;
		f.nout = n;
	}
	pftrace__slice_begin(s->p, v.ts, track, "vfs", v.name, v.name != v.namebuf, &s->args,
			     f.nout ? &f : NULL);
	pftrace__slice_end(s->p, v.ts + v.dur, track);
	s->st.vfs++;
	return;
nomem:
	s->err = -ENOMEM;
}

/* Drop flow entries older than FLOW_ROUNDS pumps (kmap has no delete: rebuild). */
int stream_flows_sweep(struct gpuio_stream *s)
{
	struct kmap fresh = { 0 };

	for (size_t i = 0; i < s->flows.cap; i++) {
		const struct kslot *k = &s->flows.slots[i];
		uint64_t *v;

		if (!k->used || (k->val >> 32) + FLOW_ROUNDS < s->round)
			continue;
		if (kmap__upsert(&fresh, k->a, k->b, &v) < 0) {
			kmap__free(&fresh);
			return -ENOMEM;
		}
		*v = k->val;
	}
	kmap__free(&s->flows);
	s->flows = fresh;
	return 0;
}

/* ---- files ---- */

void stream_emit_info(struct gpuio_stream *s)
{
	uint64_t track = PFT_UUID(TL_INFO_PID, PFT_INFO);

	tl_model__set_totals(s->m, s->st.vfs, s->st.block, s->st.flows, BUCKET_NS);
	tl_model__info(s->m, &s->args);
	if (desc_due(s, PFT_INFO, TL_INFO_PID, 0))
		pftrace__track(s->p, track, 0, "gpuio", 5, false, -1);
	pftrace__instant(s->p, s->file_start_ns, track, "gpuio", "gpuio trace info", &s->args);
}

/* A switch or wake-up: Perfetto's sched events (thread states), their threads' tracks. */
void stream_emit_sched(struct gpuio_stream *s, const struct gpuio_sched_event *r)
{
	struct sched_ent e;
	struct sched_gap g;
	struct tl_sched o;

	if (sched_ent__from(&s->sched_keys, r, &e))
		return;         /* out of memory: the stream goes on without it */
	sched_chain__step(&s->chain, &s->sched_keys, &e, &g);
	if (e.kind != GPUIO_SCHED_SWITCH || (e.flags & GPUIO_SF_PREV_TRACED))
		need_thread(s, r->hdr.pid, r->hdr.tid);
	if (e.kind == GPUIO_SCHED_SWITCH && (e.flags & GPUIO_SF_NEXT_TRACED))
		need_thread(s, r->other_pid, r->other_tid);
	tl_model__sched(s->m, &s->sched_keys, &e, &g, r->comm, &o);
	pftrace__sched(s->p, &o);
	s->st.sched++;
}
