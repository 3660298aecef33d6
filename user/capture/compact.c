// SPDX-License-Identifier: MIT
/*
 * compact.c — record encoding of version 2 captures.
 *
 * After the header, the file is a sequence of frames:
 *     varint body_len | u8 kind | body[body_len]
 * (varint: LEB128, 7 bits a byte; zz: zigzag-mapped signed varint). The
 * length comes first so that a reader can tell a frame cut by the end of the
 * file (truncated) from a bad one, and skip nothing it cannot check.
 * Kinds:
 *   RAW    the record as in bpf/gpuio_abi.h, verbatim (all types but VFS)
 *   THREAD id, pid, tid: names a thread by a small id; resets its state
 *   FILE   id, pid, zz fd, dev, ino, u8 ftype: same for a file; resets state
 *   VFS    a struct gpuio_vfs_event (below), thread and files by id
 *   SCHED  a struct gpuio_sched_event (below), both threads by id
 * Definitions come right before the first record using them, in the same
 * write. Ids are bounded (THR_CAP, FILE_CAP): when a table is nearly full
 * (before a record, so that one record's ids never collide) the encoder
 * forgets it and numbers from 0 again; a definition simply replaces the
 * decoder's slot, so the decoder needs no rule of its own.
 * VFS body: u8 presence bits P, zz ts delta from the previous record (any
 * kind), thread id, cpu, call, dur, zz ret, then only what P says is not
 * predicted: requested (when != ret), zz offset (unless -1 or the file's
 * previous offset + ret), file id (unless the thread's previous file), seq
 * (unless the thread's previous + 1), cache_miss_pages, flags (when != 0),
 * the second file's id and zz offset2 (two-file calls only).
 * SCHED body: u8 presence bits, zz ts delta, thread id, cpu, kind, flags,
 * other thread's id (unless 0/0), prev_state, target_cpu (unless 0 or cpu),
 * waker_seq (unless 0), zz prio, comm (16 bytes, unless 0 or the last comm
 * seen for the other thread or for this one).
 * Every field is carried or predicted exactly: records read back bit-identical.
 * Records of other types stay verbatim (RAW): the model reads GPU records
 * back by file offset (model/gpu_cache.c), which stays valid for them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "capture/capture.h"
#include "capture/compact.h"

enum { K_RAW = 1, K_THREAD = 2, K_FILE = 3, K_VFS = 4, K_SCHED = 5 };

/* VFS presence bits */
#define P_REQ_IS_RET 0x01   /* requested == (u64)ret: not stored */
#define P_OFF_NEXT   0x02   /* offset == the file's predicted next offset */
#define P_OFF_NONE   0x04   /* offset == -1 */
#define P_FILE_SAME  0x08   /* file id == the thread's previous file id */
#define P_SEQ_NEXT   0x10   /* seq == the thread's previous seq + 1 */
#define P_CMP        0x20   /* cache_miss_pages stored (else 0) */
#define P_FLAGS      0x40   /* flags stored (else 0) */
#define P_FILE2      0x80   /* second file stored (else fd2 -1, the rest 0, offset2 -1) */

/* SCHED presence bits */
#define S_COMM_OTHER 0x01   /* comm == the last comm of the other thread */
#define S_COMM_SELF  0x02   /* comm == the last comm of a record of this thread */
#define S_COMM_ZERO  0x04   /* comm all zero */
#define S_TCPU_CPU   0x08   /* target_cpu == hdr.cpu */
#define S_TCPU_ZERO  0x10   /* target_cpu == 0 */
#define S_STATE      0x20   /* prev_state stored (else 0) */
#define S_WSEQ       0x40   /* waker_seq stored (else 0) */
#define S_NO_OTHER   0x80   /* other_pid == other_tid == 0: no id */

/* Table bounds: memory is fixed; more threads or files only cost definitions. */
#define THR_CAP  4096u
#define FILE_CAP 16384u
#define NO_ID    UINT32_MAX

struct thr_key { __u32 pid, tid; };
struct file_key { __u64 ino; __u32 pid, dev; __s32 fd; __u8 ftype; };

/* Prediction state, kept alike by the encoder and the decoder. */
struct thr_state {
	__u32 next_seq, last_file;
	char comm_other[16], comm_self[16];   /* sched: last comm as the other / as hdr thread */
};
struct file_state { __s64 next_off; };

struct gpuio_cenc {
	__u64 prev_ts;
	__u32 nthr, nfile;       /* ids handed out since the last reset */
	/* the last id each table gave (NO_ID: none since a reset): a thread's
	 * calls mostly follow each other on one file, so most lookups end here */
	__u32 last_thr, last_file;
	/* open addressing, 2x the cap: slot = id + 1, 0 empty */
	__u32 thr_slot[2 * THR_CAP], file_slot[2 * FILE_CAP];
	struct thr_key thr_key[THR_CAP];
	struct file_key file_key[FILE_CAP];
	struct thr_state thr[THR_CAP];
	struct file_state file[FILE_CAP];
};

/*
 * The decoder's tables grow with the ids a capture defines (the encoder hands
 * them out from 0 up): a small capture costs a few entries, not the bounds.
 */
struct thr_ent {
	bool ok;
	struct thr_key key;
	struct thr_state st;
};
struct file_ent {
	bool ok;
	struct file_key key;
	struct file_state st;
};

struct gpuio_cdec {
	__u64 prev_ts;
	__u32 nthr, nfile;       /* entries allocated (at most THR_CAP, FILE_CAP) */
	struct thr_ent *thr;
	struct file_ent *file;
};

/* ---- varints ---- */

static unsigned char *put_u(unsigned char *p, __u64 v)
{
	while (v >= 0x80) {
		*p++ = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	*p++ = (unsigned char)v;
	return p;
}

static __u64 zz(__s64 v) { return ((__u64)v << 1) ^ (__u64)(v >> 63); }
static __s64 unzz(__u64 v) { return (__s64)(v >> 1) ^ -(__s64)(v & 1); }
static unsigned char *put_s(unsigned char *p, __s64 v) { return put_u(p, zz(v)); }

/* A bounded reader of one frame body. */
struct cur {
	const unsigned char *p, *end;
	bool bad;
};

static __u64 get_u(struct cur *c)
{
	__u64 v = 0;

	for (unsigned shift = 0; shift < 64; shift += 7) {
		unsigned char b;

		if (c->p >= c->end)
			break;
		b = *c->p++;
		if (shift == 63 && b > 1)
			break;
		v |= (__u64)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	c->bad = true;
	return 0;
}

static __u32 get_u32(struct cur *c)
{
	__u64 v = get_u(c);

	if (v > UINT32_MAX)
		c->bad = true;
	return (__u32)v;
}

static __s64 get_s(struct cur *c) { return unzz(get_u(c)); }

static __u8 get_byte(struct cur *c)
{
	if (c->p >= c->end) {
		c->bad = true;
		return 0;
	}
	return *c->p++;
}

/* ---- encoder ---- */

static __u32 hash64(__u64 x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return (__u32)x;
}

static __u32 thr_hash(const struct thr_key *k) { return hash64((__u64)k->pid << 32 | k->tid); }
static __u32 file_hash(const struct file_key *k)
{
	return hash64(k->ino * 31 + ((__u64)k->dev << 32) + ((__u64)k->pid << 8) +
		      ((__u64)(__u32)k->fd << 40) + k->ftype);
}
static bool file_eq(const struct file_key *a, const struct file_key *b)
{
	return a->ino == b->ino && a->pid == b->pid && a->dev == b->dev && a->fd == b->fd &&
	       a->ftype == b->ftype;
}

struct gpuio_cenc *gpuio_cenc__new(void)
{
	struct gpuio_cenc *e = calloc(1, sizeof(struct gpuio_cenc));

	if (e)
		e->last_thr = e->last_file = NO_ID;
	return e;
}

void gpuio_cenc__free(struct gpuio_cenc *e) { free(e); }

static unsigned char *frame_start(unsigned char *p, size_t body_len, int kind)
{
	p = put_u(p, body_len);
	*p++ = (unsigned char)kind;
	return p;
}

/* Write a small body built in tmp as a frame. */
static unsigned char *put_frame(unsigned char *out, int kind, const unsigned char *tmp, size_t n)
{
	out = frame_start(out, n, kind);
	memcpy(out, tmp, n);
	return out + n;
}

/* The thread's id; its definition is written at *out first when new. */
static __u32 enc_thread(struct gpuio_cenc *e, __u32 pid, __u32 tid, unsigned char **out)
{
	struct thr_key k = { pid, tid };
	unsigned char tmp[32], *t = tmp;
	__u32 h, id = e->last_thr;

	if (id != NO_ID && e->thr_key[id].pid == pid && e->thr_key[id].tid == tid)
		return id;
	for (h = thr_hash(&k) & (2 * THR_CAP - 1); e->thr_slot[h]; h = (h + 1) & (2 * THR_CAP - 1)) {
		id = e->thr_slot[h] - 1;
		if (e->thr_key[id].pid == pid && e->thr_key[id].tid == tid)
			return e->last_thr = id;
	}
	id = e->last_thr = e->nthr++;
	e->thr_slot[h] = id + 1;
	e->thr_key[id] = k;
	e->thr[id] = (struct thr_state){ .last_file = NO_ID };
	t = put_u(t, id);
	t = put_u(t, pid);
	t = put_u(t, tid);
	*out = put_frame(*out, K_THREAD, tmp, (size_t)(t - tmp));
	return id;
}

static __u32 enc_file(struct gpuio_cenc *e, const struct file_key *k, unsigned char **out)
{
	unsigned char tmp[48], *t = tmp;
	__u32 h, id = e->last_file;

	if (id != NO_ID && file_eq(&e->file_key[id], k))
		return id;
	for (h = file_hash(k) & (2 * FILE_CAP - 1); e->file_slot[h]; h = (h + 1) & (2 * FILE_CAP - 1)) {
		id = e->file_slot[h] - 1;
		if (file_eq(&e->file_key[id], k))
			return e->last_file = id;
	}
	id = e->last_file = e->nfile++;
	e->file_slot[h] = id + 1;
	e->file_key[id] = *k;
	e->file[id].next_off = INT64_MIN;       /* "unknown": any value works if both sides agree */
	t = put_u(t, id);
	t = put_u(t, k->pid);
	t = put_s(t, k->fd);
	t = put_u(t, k->dev);
	t = put_u(t, k->ino);
	*t++ = k->ftype;
	*out = put_frame(*out, K_FILE, tmp, (size_t)(t - tmp));
	return id;
}

/*
 * Before a record: a table without room for the 2 ids one record may define
 * starts again from id 0, so that the ids of one record never collide.
 */
static void enc_room(struct gpuio_cenc *e)
{
	if (e->nthr > THR_CAP - 2) {
		memset(e->thr_slot, 0, sizeof(e->thr_slot));
		e->nthr = 0;
		e->last_thr = NO_ID;
	}
	if (e->nfile > FILE_CAP - 2) {
		memset(e->file_slot, 0, sizeof(e->file_slot));
		e->nfile = 0;
		e->last_file = NO_ID;
	}
}

/* The prediction updates, the same on both sides. */
static void after_vfs(struct thr_state *ts, struct file_state *fs, __u32 fid,
		      const struct gpuio_vfs_event *v)
{
	ts->next_seq = v->seq + 1;
	ts->last_file = fid;
	if (v->offset != -1)
		fs->next_off = (__s64)((__u64)v->offset + (__u64)(v->ret > 0 ? v->ret : 0));
}

static bool one_file(const struct gpuio_vfs_event *v)
{
	return v->fd2 == -1 && !v->ino2 && !v->dev2 && !v->ftype2 && v->offset2 == -1;
}

static size_t enc_vfs(struct gpuio_cenc *e, const struct gpuio_vfs_event *v, unsigned char *out)
{
	struct file_key k1 = { v->ino, v->hdr.pid, v->dev, v->fd, v->ftype };
	unsigned char body[128], *b = body + 1, *o = out;
	__u32 tid, fid, fid2 = NO_ID;
	struct thr_state *ts;
	struct file_state *fs;
	__u8 P = 0;

	enc_room(e);
	tid = enc_thread(e, v->hdr.pid, v->hdr.tid, &o);
	fid = enc_file(e, &k1, &o);
	if (!one_file(v)) {
		struct file_key k2 = { v->ino2, v->hdr.pid, v->dev2, v->fd2, v->ftype2 };

		fid2 = enc_file(e, &k2, &o);
	}
	ts = &e->thr[tid];
	fs = &e->file[fid];
	b = put_s(b, (__s64)(v->hdr.ts - e->prev_ts));
	b = put_u(b, tid);
	b = put_u(b, v->hdr.cpu);
	b = put_u(b, v->call);
	b = put_u(b, v->dur_ns);
	b = put_s(b, v->ret);
	if (v->requested == (__u64)v->ret)
		P |= P_REQ_IS_RET;
	else
		b = put_u(b, v->requested);
	if (v->offset == -1)
		P |= P_OFF_NONE;
	else if (v->offset == fs->next_off)
		P |= P_OFF_NEXT;
	else
		b = put_s(b, v->offset);
	if (fid == ts->last_file)
		P |= P_FILE_SAME;
	else
		b = put_u(b, fid);
	if (v->seq == ts->next_seq)
		P |= P_SEQ_NEXT;
	else
		b = put_u(b, v->seq);
	if (v->cache_miss_pages) {
		P |= P_CMP;
		b = put_u(b, v->cache_miss_pages);
	}
	if (v->flags) {
		P |= P_FLAGS;
		b = put_u(b, v->flags);
	}
	if (fid2 != NO_ID) {
		P |= P_FILE2;
		b = put_u(b, fid2);
		b = put_s(b, v->offset2);
	}
	body[0] = P;
	o = put_frame(o, K_VFS, body, (size_t)(b - body));
	after_vfs(ts, fs, fid, v);
	e->prev_ts = v->hdr.ts;
	return (size_t)(o - out);
}

static void after_sched(struct thr_state *self, struct thr_state *other,
			const struct gpuio_sched_event *s)
{
	memcpy(self->comm_self, s->comm, sizeof(s->comm));
	if (other)
		memcpy(other->comm_other, s->comm, sizeof(s->comm));
}

static const char zero_comm[16];

static size_t enc_sched(struct gpuio_cenc *e, const struct gpuio_sched_event *s, unsigned char *out)
{
	unsigned char body[96], *b = body + 1, *o = out;
	__u32 tid, oid = NO_ID;
	struct thr_state *other = NULL;
	__u8 P = 0;

	enc_room(e);
	tid = enc_thread(e, s->hdr.pid, s->hdr.tid, &o);
	if (!s->other_pid && !s->other_tid)
		P |= S_NO_OTHER;
	else
		oid = enc_thread(e, s->other_pid, s->other_tid, &o);
	if (oid != NO_ID)
		other = &e->thr[oid];
	b = put_s(b, (__s64)(s->hdr.ts - e->prev_ts));
	b = put_u(b, tid);
	b = put_u(b, s->hdr.cpu);
	b = put_u(b, s->kind);
	b = put_u(b, s->flags);
	if (oid != NO_ID)
		b = put_u(b, oid);
	if (s->prev_state) {
		P |= S_STATE;
		b = put_u(b, s->prev_state);
	}
	if (s->target_cpu == s->hdr.cpu)
		P |= S_TCPU_CPU;
	else if (!s->target_cpu)
		P |= S_TCPU_ZERO;
	else
		b = put_u(b, s->target_cpu);
	if (s->waker_seq) {
		P |= S_WSEQ;
		b = put_u(b, s->waker_seq);
	}
	b = put_s(b, s->prio);
	if (!memcmp(s->comm, zero_comm, 16))
		P |= S_COMM_ZERO;
	else if (other && !memcmp(s->comm, other->comm_other, 16))
		P |= S_COMM_OTHER;
	else if (!memcmp(s->comm, e->thr[tid].comm_self, 16))
		P |= S_COMM_SELF;
	else {
		memcpy(b, s->comm, 16);
		b += 16;
	}
	body[0] = P;
	o = put_frame(o, K_SCHED, body, (size_t)(b - body));
	after_sched(&e->thr[tid], other, s);
	e->prev_ts = s->hdr.ts;
	return (size_t)(o - out);
}

size_t gpuio_cenc__encode(struct gpuio_cenc *e, const void *rec, size_t len, unsigned char *out)
{
	struct gpuio_hdr h;
	unsigned char *o;

	if (len >= sizeof(h)) {
		memcpy(&h, rec, sizeof(h));
		if (h.type == GPUIO_REC_VFS && h.size == len &&
		    len == sizeof(struct gpuio_vfs_event)) {
			struct gpuio_vfs_event v;

			memcpy(&v, rec, sizeof(v));
			return enc_vfs(e, &v, out);
		}
		if (h.type == GPUIO_REC_SCHED && h.size == len &&
		    len == sizeof(struct gpuio_sched_event)) {
			struct gpuio_sched_event s;

			memcpy(&s, rec, sizeof(s));
			return enc_sched(e, &s, out);
		}
		e->prev_ts = h.ts;
	}
	o = frame_start(out, len, K_RAW);
	memcpy(o, rec, len);
	return (size_t)(o - out) + len;
}

/* ---- decoder ---- */

struct gpuio_cdec *gpuio_cdec__new(void)
{
	return calloc(1, sizeof(struct gpuio_cdec));
}

void gpuio_cdec__free(struct gpuio_cdec *d)
{
	if (!d)
		return;
	free(d->thr);
	free(d->file);
	free(d);
}

void gpuio_cdec__reset(struct gpuio_cdec *d)
{
	d->prev_ts = 0;
	for (__u32 i = 0; i < d->nthr; i++)
		d->thr[i].ok = false;
	for (__u32 i = 0; i < d->nfile; i++)
		d->file[i].ok = false;
}

/*
 * Room for entry id (< cap) in a table of *n entries of size sz: doubled (16
 * at least, cap at most), the new entries zero (undefined). False when out of
 * memory.
 */
static bool grow(void **tab, __u32 *n, __u32 id, size_t sz, __u32 cap)
{
	__u32 want = *n ? *n : 16;
	void *p;

	if (id < *n)
		return true;
	while (want <= id)
		want *= 2;
	if (want > cap)
		want = cap;
	p = realloc(*tab, (size_t)want * sz);
	if (!p)
		return false;
	memset((char *)p + (size_t)*n * sz, 0, (size_t)(want - *n) * sz);
	*tab = p;
	*n = want;
	return true;
}

#define BAD(...) do { snprintf(why, whylen, __VA_ARGS__); return -EBADMSG; } while (0)

static int dec_raw(struct gpuio_cdec *d, struct cur *c, unsigned char *rec, char *why, size_t whylen)
{
	size_t n = (size_t)(c->end - c->p), min;
	struct gpuio_hdr h;

	if (n < sizeof(h))
		BAD("raw record of %zu bytes", n);
	memcpy(&h, c->p, sizeof(h));
	min = gpuio_rec_min_size(h.type);
	/* the checks of a version 1 record */
	if (h.type == 0 || h.size != n || h.size > GPUIO_REC_SIZE_MAX || (min && h.size < min) ||
	    (h.size & 7) != 0)
		BAD("type %u, size %u in a frame of %zu bytes", h.type, h.size, n);
	memcpy(rec, c->p, n);
	memset(rec + n, 0, 16 < GPUIO_REC_SIZE_MAX - n ? 16 : GPUIO_REC_SIZE_MAX - n);
	c->p = c->end;
	d->prev_ts = h.ts;
	return GPUIO_CDEC_REC;
}

static int dec_thread(struct gpuio_cdec *d, struct cur *c, char *why, size_t whylen)
{
	__u32 id = get_u32(c);
	struct thr_key k;

	k.pid = get_u32(c);
	k.tid = get_u32(c);
	if (c->bad || id >= THR_CAP)
		BAD("a thread definition that makes no sense (id %u)", id);
	if (!grow((void **)&d->thr, &d->nthr, id, sizeof(*d->thr), THR_CAP))
		BAD("out of memory for thread %u", id);
	d->thr[id] = (struct thr_ent){ .ok = true, .key = k, .st.last_file = NO_ID };
	return GPUIO_CDEC_DEF;
}

static int dec_file(struct gpuio_cdec *d, struct cur *c, char *why, size_t whylen)
{
	__u32 id = get_u32(c);
	struct file_key k;
	__s64 fd;

	k.pid = get_u32(c);
	fd = get_s(c);
	k.dev = get_u32(c);
	k.ino = get_u(c);
	k.ftype = get_byte(c);
	k.fd = (__s32)fd;
	if (c->bad || id >= FILE_CAP || fd != k.fd)
		BAD("a file definition that makes no sense (id %u)", id);
	if (!grow((void **)&d->file, &d->nfile, id, sizeof(*d->file), FILE_CAP))
		BAD("out of memory for file %u", id);
	d->file[id] = (struct file_ent){ .ok = true, .key = k, .st.next_off = INT64_MIN };
	return GPUIO_CDEC_DEF;
}

static bool file_ref(struct gpuio_cdec *d, __u32 id, __u32 pid)
{
	return id < d->nfile && d->file[id].ok && d->file[id].key.pid == pid;
}

static bool thr_ref(const struct gpuio_cdec *d, __u32 id)
{
	return id < d->nthr && d->thr[id].ok;
}

/* A defined thread's (pid, tid), into a record's fields. */
static void thr_ids(const struct gpuio_cdec *d, __u32 id, __u32 *pid, __u32 *tid)
{
	*pid = d->thr[id].key.pid;
	*tid = d->thr[id].key.tid;
}

/* A defined file's identity, into a VFS record's fields (first or second file). */
static void file_ids(const struct gpuio_cdec *d, __u32 id, __s32 *fd, __u32 *dev, __u64 *ino,
		     __u8 *ftype)
{
	const struct file_key *k = &d->file[id].key;

	*fd = k->fd;
	*dev = k->dev;
	*ino = k->ino;
	*ftype = k->ftype;
}

static int dec_vfs(struct gpuio_cdec *d, struct cur *c, unsigned char *rec, char *why, size_t whylen)
{
	struct gpuio_vfs_event v;
	struct thr_state *ts;
	struct file_state *fs;
	__u32 tid, fid, fid2 = NO_ID;
	__u64 call;
	__u8 P;

	memset(&v, 0, sizeof(v));
	P = get_byte(c);
	v.hdr.type = GPUIO_REC_VFS;
	v.hdr.size = sizeof(v);
	v.hdr.ts = d->prev_ts + (__u64)get_s(c);
	tid = get_u32(c);
	if (c->bad || !thr_ref(d, tid))
		BAD("a VFS record of an undefined thread (id %u)", tid);
	ts = &d->thr[tid].st;
	thr_ids(d, tid, &v.hdr.pid, &v.hdr.tid);
	v.hdr.cpu = get_u32(c);
	call = get_u(c);
	v.call = (__u16)call;
	v.dur_ns = get_u(c);
	v.ret = get_s(c);
	v.requested = P & P_REQ_IS_RET ? (__u64)v.ret : get_u(c);
	if (P & P_OFF_NONE)
		v.offset = -1;
	else if (!(P & P_OFF_NEXT))
		v.offset = get_s(c);
	fid = P & P_FILE_SAME ? ts->last_file : get_u32(c);
	if (c->bad || call > UINT16_MAX || (P & P_OFF_NONE && P & P_OFF_NEXT) ||
	    !file_ref(d, fid, v.hdr.pid))
		BAD("a VFS record of an undefined file (id %u) or bad values", fid);
	fs = &d->file[fid].st;
	if (P & P_OFF_NEXT)
		v.offset = fs->next_off;
	file_ids(d, fid, &v.fd, &v.dev, &v.ino, &v.ftype);
	v.seq = P & P_SEQ_NEXT ? ts->next_seq : get_u32(c);
	v.cache_miss_pages = P & P_CMP ? get_u32(c) : 0;
	v.flags = P & P_FLAGS ? get_u32(c) : 0;
	if (P & P_FILE2) {
		fid2 = get_u32(c);
		v.offset2 = get_s(c);
		if (c->bad || !file_ref(d, fid2, v.hdr.pid))
			BAD("a VFS record of an undefined second file (id %u)", fid2);
		file_ids(d, fid2, &v.fd2, &v.dev2, &v.ino2, &v.ftype2);
	} else {
		v.fd2 = -1;
		v.offset2 = -1;
	}
	if (c->bad || c->p != c->end)
		BAD("a VFS record %s", c->bad ? "cut short or with a bad number" : "with bytes too many");
	after_vfs(ts, fs, fid, &v);
	d->prev_ts = v.hdr.ts;
	memcpy(rec, &v, sizeof(v));
	memset(rec + sizeof(v), 0, 16);
	return GPUIO_CDEC_REC;
}

static int dec_sched(struct gpuio_cdec *d, struct cur *c, unsigned char *rec, char *why,
		     size_t whylen)
{
	struct gpuio_sched_event s;
	struct thr_state *other = NULL;
	__u32 tid, oid = NO_ID;
	__s64 prio;
	__u8 P;

	memset(&s, 0, sizeof(s));
	P = get_byte(c);
	s.hdr.type = GPUIO_REC_SCHED;
	s.hdr.size = sizeof(s);
	s.hdr.ts = d->prev_ts + (__u64)get_s(c);
	tid = get_u32(c);
	s.hdr.cpu = get_u32(c);
	s.kind = get_u32(c);
	s.flags = get_u32(c);
	if (!(P & S_NO_OTHER))
		oid = get_u32(c);
	if (c->bad || !thr_ref(d, tid) || (oid != NO_ID && !thr_ref(d, oid)))
		BAD("a scheduler record of an undefined thread (ids %u, %u)", tid, oid);
	thr_ids(d, tid, &s.hdr.pid, &s.hdr.tid);
	if (oid != NO_ID) {
		other = &d->thr[oid].st;
		thr_ids(d, oid, &s.other_pid, &s.other_tid);
	}
	s.prev_state = P & S_STATE ? get_u32(c) : 0;
	if ((P & S_TCPU_CPU) && (P & S_TCPU_ZERO))
		c->bad = true;
	s.target_cpu = P & S_TCPU_CPU ? s.hdr.cpu : P & S_TCPU_ZERO ? 0 : get_u32(c);
	s.waker_seq = P & S_WSEQ ? get_u32(c) : 0;
	prio = get_s(c);
	s.prio = (__s32)prio;
	if (prio != s.prio || __builtin_popcount(P & (S_COMM_OTHER | S_COMM_SELF | S_COMM_ZERO)) > 1 ||
	    (P & S_COMM_OTHER && !other))
		c->bad = true;
	if (P & S_COMM_OTHER && other)
		memcpy(s.comm, other->comm_other, 16);
	else if (P & S_COMM_SELF)
		memcpy(s.comm, d->thr[tid].st.comm_self, 16);
	else if (!(P & S_COMM_ZERO)) {
		if (c->end - c->p < 16)
			c->bad = true;
		else {
			memcpy(s.comm, c->p, 16);
			c->p += 16;
		}
	}
	if (c->bad || c->p != c->end)
		BAD("a scheduler record %s", c->bad ? "cut short or with a bad number" :
		    "with bytes too many");
	after_sched(&d->thr[tid].st, other, &s);
	d->prev_ts = s.hdr.ts;
	memcpy(rec, &s, sizeof(s));
	memset(rec + sizeof(s), 0, 16);
	return GPUIO_CDEC_REC;
}

int gpuio_cdec__decode(struct gpuio_cdec *d, const unsigned char *p, size_t avail,
		       unsigned char *rec, size_t *used, char *why, size_t whylen)
{
	size_t len = 0, hlen = 0;
	struct cur c;
	int rc;

	*used = 0;
	/* the length: 3 bytes at most (GPUIO_REC_SIZE_MAX < 2^21) */
	for (unsigned shift = 0;; shift += 7) {
		if (hlen == avail)
			return GPUIO_CDEC_MORE;
		if (hlen == 3)
			BAD("bad frame length");
		len |= (size_t)(p[hlen] & 0x7f) << shift;
		if (!(p[hlen++] & 0x80))
			break;
	}
	if (len > GPUIO_REC_SIZE_MAX)
		BAD("a frame of %zu bytes (at most %u)", len, (unsigned)GPUIO_REC_SIZE_MAX);
	if (avail - hlen < 1 + len)
		return GPUIO_CDEC_MORE;
	c.p = p + hlen + 1;
	c.end = c.p + len;
	c.bad = false;
	switch (p[hlen]) {
	case K_RAW:    rc = dec_raw(d, &c, rec, why, whylen); break;
	case K_THREAD: rc = dec_thread(d, &c, why, whylen); break;
	case K_FILE:   rc = dec_file(d, &c, why, whylen); break;
	case K_VFS:    rc = dec_vfs(d, &c, rec, why, whylen); break;
	case K_SCHED:  rc = dec_sched(d, &c, rec, why, whylen); break;
	default:       BAD("unknown frame kind %u", p[hlen]);
	}
	if (rc > 0 && c.p != c.end)
		BAD("a frame of kind %u with %zu bytes too many", p[hlen], (size_t)(c.end - c.p));
	if (rc > 0)
		*used = hlen + 1 + len;
	return rc;
}
