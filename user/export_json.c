// SPDX-License-Identifier: MIT
/*
 * export_json.c — capture -> Chrome trace JSON (array form) for Perfetto.
 *
 * Output: "[", one event per line, "]". ts/dur are µs with exactly three
 * decimals, relative to the capture header's monotonic_ns (exact: printed
 * from integer ns). Events:
 *
 *  - Metadata (ph "M", no ts): process_name / process_sort_index for every
 *    pid seen in VFS or PROC records, thread_name / thread_sort_index for
 *    every (pid, tid). Process name = comm of the best PROC record (EXEC >
 *    ATTACH > FORK, later wins on a tie), plus ": argv joined by spaces"
 *    when known, cut at 200 bytes. Thread name = comm of the latest PROC
 *    record of that tid (NAME, THREAD, EXEC, FORK, ATTACH; EXIT only if
 *    nothing else), else the process name's comm. Processes sort by pid,
 *    threads main first then by tid.
 *  - VFS call: X slice, cat "vfs", name = call name, on (pid, tid); args
 *    path, fd, bytes, requested, offset, errno+error, cache_miss_pages,
 *    flags, ftype, length, path2/fd2/offset2/ftype2 (see emit_vfs()).
 *    io_uring requests are asynchronous (several in flight per thread), so
 *    they go on per-process lanes (tid 0x20000000 + n, "io_uring lane N",
 *    greedy like block lanes) with the submitting thread in args.tid.
 *  - Block request: X slice, cat "block", name = op, on pid 0x40000000 +
 *    disk index ("disk NAME"), tid = 0x50000000 + (disk index << 16) + lane
 *    (unique in the trace) named "lane N" for lanes 1..N, greedy by
 *    start so slices on a lane never overlap.
 *  - Flow (v2): a VFS slice named by >= 1 block request (hdr.tid, vfs_seq)
 *    carries bind_id "0x<tid<<32|seq>" + flow_out; each such block slice
 *    the same bind_id + flow_in. Only when both ends are in the capture.
 *  - Counter "throughput NAME" (cat "block") per disk: read/write MiB/s in
 *    equal buckets (<= 2000, >= 1 ms), bytes spread over issue..complete;
 *    a value is written only when it changes, plus a zero at the end.
 *  - Trace info: pid 0x3fffffff "gpuio", a global instant "gpuio trace
 *    info" at ts 0 with the header, record counts and drop counters.
 *
 * Passes: (1) metadata, paths, block requests and io_uring intervals into
 * memory; (2) VFS events streamed out. Memory is bounded by files, threads,
 * disks, block requests and io_uring requests — never by the number of
 * ordinary VFS calls.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "capture.h"
#include "calls.h"
#include "export.h"
#include "json_writer.h"
#include "log.h"

#define INFO_PID        0x3fffffffu
#define DISK_PID_BASE   0x40000000u
/* lane tids are unique in the whole trace: Perfetto names threads by tid */
#define LANE_TID(d, l)  (0x50000000u + ((uint32_t)(d) << 16) + (uint32_t)(l))
#define URING_TID_BASE  0x20000000u
#define PROC_NAME_MAX   200
#define MAX_BUCKETS     2000
#define MIN_BUCKET_NS   1000000ull
#define ELLIPSIS        "\xe2\x80\xa6"   /* U+2026, for paths cut at the top */

/* ---- (u64, u64) -> u32 open-addressing map ---- */

struct kslot {
	uint64_t a, b;
	uint32_t val;
	uint32_t used;
};

struct kmap {
	struct kslot *slots;
	size_t cap, n;          /* cap is a power of two */
};

static uint64_t kmix(uint64_t a, uint64_t b)
{
	uint64_t x = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull + (a << 6) + (a >> 2));

	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 29;
	return x;
}

static struct kslot *kmap__slot(const struct kmap *m, uint64_t a, uint64_t b)
{
	size_t i = kmix(a, b) & (m->cap - 1);

	while (m->slots[i].used && (m->slots[i].a != a || m->slots[i].b != b))
		i = (i + 1) & (m->cap - 1);
	return &m->slots[i];
}

static uint32_t *kmap__get(const struct kmap *m, uint64_t a, uint64_t b)
{
	struct kslot *s;

	if (!m->cap)
		return NULL;
	s = kmap__slot(m, a, b);
	return s->used ? &s->val : NULL;
}

/* Find or insert (a, b): 1 and a zeroed *val when new, 0 when present. */
static int kmap__upsert(struct kmap *m, uint64_t a, uint64_t b, uint32_t **val)
{
	struct kslot *s;

	if ((m->n + 1) * 2 > m->cap) {
		struct kmap bigger = { .cap = m->cap ? m->cap * 2 : 64 };

		bigger.slots = calloc(bigger.cap, sizeof(*bigger.slots));
		if (!bigger.slots)
			return -ENOMEM;
		for (size_t i = 0; i < m->cap; i++)
			if (m->slots[i].used)
				*kmap__slot(&bigger, m->slots[i].a, m->slots[i].b) = m->slots[i];
		bigger.n = m->n;
		free(m->slots);
		*m = bigger;
	}
	s = kmap__slot(m, a, b);
	*val = &s->val;
	if (s->used)
		return 0;
	s->used = 1;
	s->a = a;
	s->b = b;
	s->val = 0;
	m->n++;
	return 1;
}

static void kmap__free(struct kmap *m)
{
	free(m->slots);
	m->slots = NULL;
	m->cap = m->n = 0;
}

/* Grow a dynamic array so that it holds at least need elements. */
static int grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t ncap = *cap ? *cap : 64;
	void *p;

	if (need <= *cap)
		return 0;
	while (ncap < need)
		ncap *= 2;
	p = realloc(*arr, ncap * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = ncap;
	return 0;
}

/* ---- tables built in pass 1 ---- */

struct path_ent {
	char *s;
	uint32_t len;
};

enum { RANK_NONE, RANK_FORK, RANK_ATTACH, RANK_EXEC };

struct proc_ent {
	uint32_t pid;
	uint8_t rank;
	char comm[16];
	char *args;             /* NUL separated, args_len bytes */
	uint32_t args_len;
	uint32_t sort;
};

struct thread_ent {
	uint32_t pid, tid;
	bool has_comm;
	char comm[16];
};

struct dev_ent {
	uint32_t dev;
	bool named;
	char name[32];
	uint64_t nreq;
	uint32_t index;         /* among disks with requests */
	uint32_t nlanes;
	double *bucket_bytes;   /* [nbuckets][2]: read, write */
};

struct blk_ent {
	uint64_t ts, issue, complete, sector, ino;
	uint32_t bytes, dev_idx, file_dev, pid, tid, seq;
	uint32_t disk;          /* devs[dev_idx].index, set before sorting */
	int32_t error;
	uint8_t op, flags, attr;
	uint32_t lane;
};

struct async_ent {
	uint64_t ordinal;       /* n-th VFS record of the capture */
	uint64_t start, end;
	uint32_t pid;
	uint32_t lane_tid;
};

struct lane_ent {
	uint32_t pid, tid, n;
};

/* flow_map values */
#define FLOW_REFERENCED 0x1
#define FLOW_VFS_SEEN   0x2

struct exporter {
	struct gpuio_cap_reader *r;
	const struct gpuio_cap_header *hdr;
	struct json_writer *w;
	bool first_event;
	bool cache_known;

	struct kmap path_map;   /* (dev, ino) -> paths[] */
	struct path_ent *paths;
	size_t npaths, cpaths;
	struct kmap proc_map;   /* (pid, 0) -> procs[] */
	struct proc_ent *procs;
	size_t nprocs, cprocs;
	struct kmap thread_map; /* (pid, tid) -> threads[] */
	struct thread_ent *threads;
	size_t nthreads, cthreads;
	struct kmap dev_map;    /* (dev, 0) -> devs[] */
	struct dev_ent *devs;
	size_t ndevs, cdevs;
	uint32_t *disk_order;   /* devs[] indices of disks with requests, by dev */
	size_t ndisks;
	struct kmap flow_map;   /* (tid, seq) -> FLOW_* */
	struct blk_ent *blks;
	size_t nblks, cblks;
	struct async_ent *asyncs;
	size_t nasyncs, casyncs, async_next;
	struct lane_ent *ulanes;
	size_t nulanes, culanes;

	struct gpuio_stats_event stats;
	bool have_stats;
	uint64_t counts[GPUIO_REC_DEVNAME + 1];   /* [0]: unknown types */
	uint64_t records, vfs_ordinal;
	uint64_t truncated, trunc_offset;
	uint64_t t0, bucket_ns;
	size_t nbuckets;
	struct gpuio_export_stats st;
};

static int note_thread(struct exporter *x, uint32_t pid, uint32_t tid, struct thread_ent **out)
{
	uint32_t *v;
	int rc;

	rc = kmap__upsert(&x->proc_map, pid, 0, &v);
	if (rc < 0)
		return rc;
	if (rc) {
		if (grow((void **)&x->procs, &x->cprocs, x->nprocs + 1, sizeof(*x->procs)))
			return -ENOMEM;
		memset(&x->procs[x->nprocs], 0, sizeof(x->procs[0]));
		x->procs[x->nprocs].pid = pid;
		*v = (uint32_t)x->nprocs++;
	}
	rc = kmap__upsert(&x->thread_map, pid, tid, &v);
	if (rc < 0)
		return rc;
	if (rc) {
		if (grow((void **)&x->threads, &x->cthreads, x->nthreads + 1, sizeof(*x->threads)))
			return -ENOMEM;
		memset(&x->threads[x->nthreads], 0, sizeof(x->threads[0]));
		x->threads[x->nthreads].pid = pid;
		x->threads[x->nthreads].tid = tid;
		*v = (uint32_t)x->nthreads++;
	}
	if (out)
		*out = &x->threads[*v];
	return 0;
}

static struct proc_ent *proc_get(struct exporter *x, uint32_t pid)
{
	uint32_t *v = kmap__get(&x->proc_map, pid, 0);

	return v ? &x->procs[*v] : NULL;
}

static struct dev_ent *dev_get(struct exporter *x, uint32_t dev, bool create)
{
	uint32_t *v;
	int rc;

	if (!create) {
		v = kmap__get(&x->dev_map, dev, 0);
		return v ? &x->devs[*v] : NULL;
	}
	rc = kmap__upsert(&x->dev_map, dev, 0, &v);
	if (rc < 0)
		return NULL;
	if (rc) {
		if (grow((void **)&x->devs, &x->cdevs, x->ndevs + 1, sizeof(*x->devs)))
			return NULL;
		memset(&x->devs[x->ndevs], 0, sizeof(x->devs[0]));
		x->devs[x->ndevs].dev = dev;
		*v = (uint32_t)x->ndevs++;
	}
	return &x->devs[*v];
}

/* PATH record -> the absolute path it names. */
static int on_path(struct exporter *x, const struct gpuio_path_event *p)
{
	size_t len = p->len, out_len = 0, cap;
	struct path_ent *pe;
	uint32_t *v;
	char *s;
	int rc;

	if (p->flags & GPUIO_PATH_COMPONENTS) {
		/* "leaf\0parent\0...top\0": reverse into "/top/.../parent/leaf" */
		size_t end = len;

		cap = len + 2 + sizeof(ELLIPSIS) + 2;
		s = malloc(cap);
		if (!s)
			return -ENOMEM;
		if (p->flags & GPUIO_PATH_TRUNCATED) {
			memcpy(s, "/" ELLIPSIS, 1 + strlen(ELLIPSIS));
			out_len = 1 + strlen(ELLIPSIS);
		}
		while (end > 0) {
			size_t start = end;

			/* a trailing NUL ends the last (top) name; skip empty names */
			if (p->data[end - 1] == 0) {
				end--;
				continue;
			}
			while (start > 0 && p->data[start - 1] != 0)
				start--;
			s[out_len++] = '/';
			memcpy(s + out_len, p->data + start, end - start);
			out_len += end - start;
			end = start;
		}
		if (!out_len)
			s[out_len++] = '/';
	} else {
		s = malloc(len + 1);
		if (!s)
			return -ENOMEM;
		memcpy(s, p->data, len);
		out_len = len;
	}
	s[out_len] = 0;

	rc = kmap__upsert(&x->path_map, p->dev, p->ino, &v);
	if (rc < 0 || (rc && grow((void **)&x->paths, &x->cpaths, x->npaths + 1, sizeof(*x->paths)))) {
		free(s);
		return -ENOMEM;
	}
	if (rc) {
		*v = (uint32_t)x->npaths++;
		pe = &x->paths[*v];
	} else {
		pe = &x->paths[*v];      /* later records win */
		free(pe->s);
	}
	pe->s = s;
	pe->len = (uint32_t)out_len;
	return 0;
}

static bool comm_set(const char comm[16])
{
	return comm[0] != 0;
}

static int on_proc(struct exporter *x, const struct gpuio_proc_event *p)
{
	struct thread_ent *t;
	struct proc_ent *pe;
	uint8_t rank = RANK_NONE;
	int err;

	err = note_thread(x, p->hdr.pid, p->hdr.tid, &t);
	if (err)
		return err;
	pe = proc_get(x, p->hdr.pid);
	if (p->kind == GPUIO_PROC_EXEC)
		rank = RANK_EXEC;
	else if (p->kind == GPUIO_PROC_ATTACH)
		rank = RANK_ATTACH;
	else if (p->kind == GPUIO_PROC_FORK)
		rank = RANK_FORK;
	if (rank && rank >= pe->rank && comm_set(p->comm)) {
		char *args = NULL;
		uint32_t n = p->args_len;

		/* the reader clamps args_len to the record; drop trailing NULs */
		while (n && p->args[n - 1] == 0)
			n--;
		if (n) {
			args = malloc(n);
			if (!args)
				return -ENOMEM;
			memcpy(args, p->args, n);
		}
		free(pe->args);
		pe->args = args;
		pe->args_len = n;
		pe->rank = rank;
		memcpy(pe->comm, p->comm, sizeof(pe->comm));
	}
	if (comm_set(p->comm) && (p->kind != GPUIO_PROC_EXIT || !t->has_comm)) {
		memcpy(t->comm, p->comm, sizeof(t->comm));
		t->has_comm = true;
	}
	return 0;
}

static int on_block(struct exporter *x, const struct gpuio_block_event *b)
{
	struct dev_ent *d = dev_get(x, b->dev, true);
	struct blk_ent *e;
	uint32_t *v;

	if (!d || grow((void **)&x->blks, &x->cblks, x->nblks + 1, sizeof(*x->blks)))
		return -ENOMEM;
	d->nreq++;
	e = &x->blks[x->nblks++];
	e->ts = b->hdr.ts;
	e->issue = b->issue_ns;
	e->complete = b->complete_ns;
	e->sector = b->sector;
	e->ino = b->ino;
	e->bytes = b->bytes;
	e->dev_idx = (uint32_t)(d - x->devs);
	e->file_dev = b->file_dev;
	e->pid = b->hdr.pid;
	e->tid = b->hdr.tid;
	e->seq = b->vfs_seq;
	e->error = b->error;
	e->op = b->op;
	e->flags = b->rq_flags;
	e->attr = b->attr;
	e->lane = 0;
	if (b->vfs_seq) {
		if (kmap__upsert(&x->flow_map, b->hdr.tid, b->vfs_seq, &v) < 0)
			return -ENOMEM;
		*v |= FLOW_REFERENCED;
	}
	return 0;
}

static int on_vfs_meta(struct exporter *x, const struct gpuio_vfs_event *e)
{
	int err = note_thread(x, e->hdr.pid, e->hdr.tid, NULL);

	if (err)
		return err;
	if (gpuio_call__is_async(e->call)) {
		struct async_ent *a;

		if (grow((void **)&x->asyncs, &x->casyncs, x->nasyncs + 1, sizeof(*x->asyncs)))
			return -ENOMEM;
		a = &x->asyncs[x->nasyncs++];
		a->ordinal = x->vfs_ordinal;
		a->start = e->hdr.ts;
		a->end = e->hdr.ts + e->dur_ns;
		if (a->end < a->start)
			a->end = a->start;
		a->pid = e->hdr.pid;
		a->lane_tid = 0;
	}
	return 0;
}

/* Pass 1: everything but the VFS events themselves. */
static int pass_meta(struct exporter *x)
{
	const struct gpuio_hdr *h;
	int rc, err = 0;

	while (!err && (rc = gpuio_cap_reader__next(x->r, &h)) > 0) {
		x->records++;
		x->counts[h->type <= GPUIO_REC_DEVNAME ? h->type : 0]++;
		switch (h->type) {
		case GPUIO_REC_VFS:
			err = on_vfs_meta(x, (const void *)h);
			x->vfs_ordinal++;
			break;
		case GPUIO_REC_BLOCK:
			err = on_block(x, (const void *)h);
			break;
		case GPUIO_REC_PATH:
			err = on_path(x, (const void *)h);
			break;
		case GPUIO_REC_PROC:
			err = on_proc(x, (const void *)h);
			break;
		case GPUIO_REC_STATS:
			memcpy(&x->stats, h, sizeof(x->stats));
			x->have_stats = true;
			break;
		case GPUIO_REC_DEVNAME: {
			const struct gpuio_devname_event *d = (const void *)h;
			struct dev_ent *de = dev_get(x, d->dev, true);

			if (!de) {
				err = -ENOMEM;
				break;
			}
			de->named = true;
			memset(de->name, 0, sizeof(de->name));
			memcpy(de->name, d->name, strnlen(d->name, sizeof(d->name)));
			break;
		}
		default:
			break;      /* newer record types: skipped by size */
		}
	}
	if (err)
		return err;
	if (rc < 0)
		return -EBADMSG;
	x->truncated = gpuio_cap_reader__truncated(x->r);
	x->trunc_offset = gpuio_cap_reader__offset(x->r);
	return 0;
}

/* ---- layout: lanes, buckets, sort order ---- */

static int cmp_blk(const void *pa, const void *pb)
{
	const struct blk_ent *a = pa, *b = pb;

	if (a->disk != b->disk)
		return a->disk < b->disk ? -1 : 1;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	if (a->complete != b->complete)
		return a->complete < b->complete ? -1 : 1;
	return a->sector < b->sector ? -1 : a->sector > b->sector;
}

static uint64_t blk_end(const struct blk_ent *b)
{
	return b->complete > b->ts ? b->complete : b->ts;
}

/*
 * Greedy lanes: a slice takes the lowest-numbered lane whose last slice ended
 * by its start, else a new lane. Busy lanes sit in a min-heap by end time,
 * free ones in a min-heap by number, so deep queues cost O(log lanes).
 */
struct lane_busy {
	uint64_t end;
	uint32_t lane;
};

struct lanes {
	struct lane_busy *busy;
	uint32_t *free;
	size_t nbusy, cbusy, nfree, cfree;
	uint32_t nlanes;
};

static void lanes__reset(struct lanes *l)
{
	l->nbusy = l->nfree = 0;
	l->nlanes = 0;
}

static void lanes__free(struct lanes *l)
{
	free(l->busy);
	free(l->free);
}

static void busy_down(struct lane_busy *h, size_t n, size_t i)
{
	for (;;) {
		size_t c = 2 * i + 1;
		struct lane_busy t;

		if (c >= n)
			return;
		if (c + 1 < n && h[c + 1].end < h[c].end)
			c++;
		if (h[i].end <= h[c].end)
			return;
		t = h[i], h[i] = h[c], h[c] = t;
		i = c;
	}
}

static void free_down(uint32_t *h, size_t n, size_t i)
{
	for (;;) {
		size_t c = 2 * i + 1;
		uint32_t t;

		if (c >= n)
			return;
		if (c + 1 < n && h[c + 1] < h[c])
			c++;
		if (h[i] <= h[c])
			return;
		t = h[i], h[i] = h[c], h[c] = t;
		i = c;
	}
}

static int lanes__assign(struct lanes *l, uint64_t start, uint64_t end, uint32_t *lane)
{
	size_t i;

	/* lanes that finished by start become free */
	while (l->nbusy && l->busy[0].end <= start) {
		if (grow((void **)&l->free, &l->cfree, l->nfree + 1, sizeof(*l->free)))
			return -ENOMEM;
		i = l->nfree++;
		l->free[i] = l->busy[0].lane;
		for (; i && l->free[(i - 1) / 2] > l->free[i]; i = (i - 1) / 2) {
			uint32_t t = l->free[i];

			l->free[i] = l->free[(i - 1) / 2];
			l->free[(i - 1) / 2] = t;
		}
		l->busy[0] = l->busy[--l->nbusy];
		busy_down(l->busy, l->nbusy, 0);
	}
	if (grow((void **)&l->busy, &l->cbusy, l->nbusy + 1, sizeof(*l->busy)))
		return -ENOMEM;
	if (l->nfree) {
		*lane = l->free[0];
		l->free[0] = l->free[--l->nfree];
		free_down(l->free, l->nfree, 0);
	} else {
		*lane = ++l->nlanes;
	}
	i = l->nbusy++;
	l->busy[i] = (struct lane_busy){ .end = end, .lane = *lane };
	for (; i && l->busy[(i - 1) / 2].end > l->busy[i].end; i = (i - 1) / 2) {
		struct lane_busy t = l->busy[i];

		l->busy[i] = l->busy[(i - 1) / 2];
		l->busy[(i - 1) / 2] = t;
	}
	return 0;
}

static int cmp_dev_idx(const void *pa, const void *pb, void *arg)
{
	const struct dev_ent *devs = arg;
	uint32_t a = devs[*(const uint32_t *)pa].dev, b = devs[*(const uint32_t *)pb].dev;

	return a < b ? -1 : a > b;
}

static int layout_block(struct exporter *x)
{
	uint64_t tmin = UINT64_MAX, tmax = 0, span;
	struct lanes lanes = { 0 };
	int err = 0;

	/* disks with requests, numbered in dev_t order */
	x->disk_order = calloc(x->ndevs ? x->ndevs : 1, sizeof(*x->disk_order));
	if (!x->disk_order)
		return -ENOMEM;
	for (size_t i = 0; i < x->ndevs; i++)
		if (x->devs[i].nreq)
			x->disk_order[x->ndisks++] = (uint32_t)i;
	if (x->ndisks > 1)
		qsort_r(x->disk_order, x->ndisks, sizeof(*x->disk_order), cmp_dev_idx, x->devs);
	for (size_t i = 0; i < x->ndisks; i++)
		x->devs[x->disk_order[i]].index = (uint32_t)i;

	for (size_t i = 0; i < x->nblks; i++)
		x->blks[i].disk = x->devs[x->blks[i].dev_idx].index;
	if (x->nblks > 1)
		qsort(x->blks, x->nblks, sizeof(*x->blks), cmp_blk);
	for (size_t i = 0; i < x->nblks; i++) {
		struct blk_ent *b = &x->blks[i];

		if (i == 0 || b->disk != x->blks[i - 1].disk)
			lanes__reset(&lanes);
		err = lanes__assign(&lanes, b->ts, blk_end(b), &b->lane);
		if (err)
			goto out;
		if (b->lane > x->devs[b->dev_idx].nlanes)
			x->devs[b->dev_idx].nlanes = b->lane;
		if (b->ts < tmin)
			tmin = b->ts;
		if (blk_end(b) > tmax)
			tmax = blk_end(b);
	}
	if (!x->nblks)
		goto out;

	/* throughput buckets: <= MAX_BUCKETS of >= 1 ms over all requests */
	span = tmax - tmin;
	x->t0 = tmin;
	x->bucket_ns = span / MAX_BUCKETS + (span % MAX_BUCKETS != 0);
	if (x->bucket_ns < MIN_BUCKET_NS)
		x->bucket_ns = MIN_BUCKET_NS;
	x->nbuckets = (size_t)(span / x->bucket_ns) + 1;
	if (x->nbuckets > MAX_BUCKETS)
		x->nbuckets = MAX_BUCKETS;
	for (size_t i = 0; i < x->ndisks; i++) {
		struct dev_ent *d = &x->devs[x->disk_order[i]];

		d->bucket_bytes = calloc(x->nbuckets * 2, sizeof(double));
		if (!d->bucket_bytes) {
			err = -ENOMEM;
			goto out;
		}
	}
	for (size_t i = 0; i < x->nblks; i++) {
		const struct blk_ent *b = &x->blks[i];
		double *bb = x->devs[b->dev_idx].bucket_bytes;
		uint64_t s = b->issue >= b->ts && b->issue <= blk_end(b) ? b->issue : b->ts;
		uint64_t e = blk_end(b);
		size_t k0, k1;
		int col;

		if (b->op == GPUIO_BLK_READ)
			col = 0;
		else if (b->op == GPUIO_BLK_WRITE)
			col = 1;
		else
			continue;
		k0 = (size_t)((s - x->t0) / x->bucket_ns);
		k1 = (size_t)((e - x->t0) / x->bucket_ns);
		if (k1 >= x->nbuckets)
			k1 = x->nbuckets - 1;
		if (k0 > k1)
			k0 = k1;
		if (k0 == k1 || e == s) {
			bb[k1 * 2 + col] += b->bytes;
			continue;
		}
		/* spread over the service time, in proportion to the overlap */
		for (size_t k = k0; k <= k1; k++) {
			uint64_t bs = x->t0 + k * x->bucket_ns, be = bs + x->bucket_ns;
			uint64_t os = s > bs ? s : bs, oe = e < be ? e : be;

			if (k == k1)
				oe = e;
			if (oe > os)
				bb[k * 2 + col] += (double)b->bytes * (double)(oe - os) / (double)(e - s);
		}
	}
out:
	lanes__free(&lanes);
	return err;
}

static int cmp_async(const void *pa, const void *pb, void *arg)
{
	const struct async_ent *as = arg;
	const struct async_ent *a = &as[*(const uint32_t *)pa], *b = &as[*(const uint32_t *)pb];

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->end < b->end ? -1 : a->end > b->end;
}

/* io_uring requests overlap on their thread: give them lanes per process. */
static int layout_async(struct exporter *x)
{
	struct lanes lanes = { 0 };
	uint32_t *idx;
	int err = 0;

	if (!x->nasyncs)
		return 0;
	idx = malloc(x->nasyncs * sizeof(*idx));
	if (!idx)
		return -ENOMEM;
	for (size_t i = 0; i < x->nasyncs; i++)
		idx[i] = (uint32_t)i;
	qsort_r(idx, x->nasyncs, sizeof(*idx), cmp_async, x->asyncs);
	for (size_t i = 0; i < x->nasyncs; i++) {
		struct async_ent *a = &x->asyncs[idx[i]];
		uint32_t before, lane;

		if (i == 0 || a->pid != x->asyncs[idx[i - 1]].pid)
			lanes__reset(&lanes);
		before = lanes.nlanes;
		err = lanes__assign(&lanes, a->start, a->end, &lane);
		if (err)
			break;
		if (lanes.nlanes > before) {
			struct lane_ent *l;

			if (grow((void **)&x->ulanes, &x->culanes, x->nulanes + 1, sizeof(*x->ulanes))) {
				err = -ENOMEM;
				break;
			}
			l = &x->ulanes[x->nulanes];
			l->pid = a->pid;
			l->n = lane;
			l->tid = URING_TID_BASE + (uint32_t)x->nulanes;
			x->nulanes++;
		}
		/* lanes of one process are contiguous in ulanes[], numbered from 1 */
		a->lane_tid = x->ulanes[x->nulanes - lanes.nlanes + lane - 1].tid;
	}
	free(idx);
	lanes__free(&lanes);
	return err;
}

static int cmp_proc(const void *pa, const void *pb)
{
	const struct proc_ent *a = pa, *b = pb;

	return a->pid < b->pid ? -1 : a->pid > b->pid;
}

static int cmp_thread(const void *pa, const void *pb)
{
	const struct thread_ent *a = pa, *b = pb;
	bool am = a->tid == a->pid, bm = b->tid == b->pid;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (am != bm)
		return am ? -1 : 1;
	return a->tid < b->tid ? -1 : a->tid > b->tid;
}

/* ---- output helpers ---- */

static void ev_start(struct exporter *x)
{
	json_writer__puts(x->w, x->first_event ? "{" : ",\n{");
	x->first_event = false;
	x->st.events++;
}

/* ,"key": (or "key": first in an object) */
static void key(struct exporter *x, bool *first, const char *k)
{
	json_writer__puts(x->w, *first ? "\"" : ",\"");
	json_writer__puts(x->w, k);
	json_writer__puts(x->w, "\":");
	*first = false;
}

static void ts_rel(struct exporter *x, uint64_t t)
{
	/* unsigned difference then signed: events before the anchor are negative */
	json_writer__us(x->w, (int64_t)(t - x->hdr->monotonic_ns));
}

static void bind_id(struct exporter *x, uint32_t tid, uint32_t seq)
{
	json_writer__printf(x->w, ",\"bind_id\":\"0x%llx\"",
			    (unsigned long long)(((uint64_t)tid << 32) | seq));
}

/*
 * The path of (dev, ino); names non-files; counts what it cannot name in
 * *unresolved (VFS calls and block requests apart: requests also carry
 * file-system metadata and mmap'ed files that no call named).
 */
static void write_path(struct exporter *x, uint32_t dev, uint64_t ino, unsigned ftype,
		       __u64 *unresolved)
{
	uint32_t *v = kmap__get(&x->path_map, dev, ino);
	const char *kind = NULL;
	char buf[96];

	if (v) {
		json_writer__str(x->w, x->paths[*v].s, x->paths[*v].len);
		return;
	}
	if (ftype == GPUIO_FT_FIFO)
		kind = "pipe";
	else if (ftype == GPUIO_FT_SOCK)
		kind = "socket";
	else if (ftype == 0)
		kind = "anon";
	if (kind) {
		snprintf(buf, sizeof(buf), "%s:[%llu]", kind, (unsigned long long)ino);
	} else {
		snprintf(buf, sizeof(buf), "?dev=%u:%u,ino=%llu", dev >> 20, dev & 0xfffff,
			 (unsigned long long)ino);
		(*unresolved)++;
	}
	json_writer__cstr(x->w, buf);
}

static void write_ftype(struct exporter *x, bool *first, const char *k, unsigned ftype)
{
	const char *name;
	char buf[16];

	if (ftype == GPUIO_FT_REG)
		return;
	name = gpuio_ftype__name(ftype);
	if (!name) {
		snprintf(buf, sizeof(buf), "type%u", ftype);
		name = buf;
	}
	key(x, first, k);
	json_writer__cstr(x->w, name);
}

static void emit_vfs(struct exporter *x, const struct gpuio_vfs_event *e)
{
	struct json_writer *w = x->w;
	unsigned call = e->call;
	const char *name = gpuio_call__name(call);
	bool is_open = gpuio_call__is_open(call), failed = e->ret < 0, first = true;
	uint32_t tid = e->hdr.tid, *fv = NULL;
	bool async = gpuio_call__is_async(call), flow = false;
	char buf[160];

	/* io_uring lanes were laid out in pass 1, in VFS record order */
	if (async) {
		while (x->async_next < x->nasyncs && x->asyncs[x->async_next].ordinal < x->vfs_ordinal)
			x->async_next++;
		if (x->async_next < x->nasyncs && x->asyncs[x->async_next].ordinal == x->vfs_ordinal)
			tid = x->asyncs[x->async_next].lane_tid;
	}
	if (e->seq) {
		fv = kmap__get(&x->flow_map, e->hdr.tid, e->seq);
		/* one source per bind_id: a repeated (tid, seq) gets no second arrow */
		if (fv && !(*fv & FLOW_VFS_SEEN)) {
			*fv |= FLOW_VFS_SEEN;
			flow = true;
		}
	}

	ev_start(x);
	json_writer__puts(w, "\"name\":");
	if (name) {
		json_writer__putc(w, '"');
		json_writer__puts(w, name);
		json_writer__putc(w, '"');
	} else {
		json_writer__printf(w, "\"call_%u\"", call);
	}
	json_writer__puts(w, ",\"cat\":\"vfs\",\"ph\":\"X\",\"ts\":");
	ts_rel(x, e->hdr.ts);
	json_writer__puts(w, ",\"dur\":");
	json_writer__us(w, e->dur_ns > INT64_MAX ? INT64_MAX : (int64_t)e->dur_ns);
	json_writer__puts(w, ",\"pid\":");
	json_writer__u64(w, e->hdr.pid);
	json_writer__puts(w, ",\"tid\":");
	json_writer__u64(w, tid);
	if (flow) {
		bind_id(x, e->hdr.tid, e->seq);
		json_writer__puts(w, ",\"flow_out\":true");
	}
	json_writer__puts(w, ",\"args\":{");

	/* a failed open has no file: nothing to name */
	if (!(is_open && failed && !e->ino && !e->dev)) {
		key(x, &first, "path");
		write_path(x, e->dev, e->ino, e->ftype, &x->st.unresolved_paths);
	}
	if (is_open) {
		if (!failed) {
			key(x, &first, "fd");
			json_writer__s64(w, e->ret);
		}
	} else if (e->fd >= 0) {
		key(x, &first, "fd");
		json_writer__s64(w, e->fd);
	}
	if (gpuio_call__moves_bytes(call)) {
		if (!failed) {
			key(x, &first, "bytes");
			json_writer__s64(w, e->ret);
		}
		key(x, &first, "requested");
		json_writer__u64(w, e->requested);
	}
	if (call == GPUIO_CALL_FTRUNCATE || call == GPUIO_CALL_FALLOCATE ||
	    call == GPUIO_CALL_SYNC_FILE_RANGE) {
		key(x, &first, "length");
		json_writer__u64(w, e->requested);
	}
	if (e->offset >= 0) {
		key(x, &first, "offset");
		json_writer__s64(w, e->offset);
	}
	if (failed) {
		uint64_t en = 0 - (uint64_t)e->ret;

		key(x, &first, "errno");
		json_writer__u64(w, en);
		key(x, &first, "error");
		json_writer__cstr(w, en <= 4095 ? gpuio_errno__name((int)en, buf, sizeof(buf)) : "E?");
	}
	if (gpuio_call__is_read(call) && !async && x->cache_known) {
		key(x, &first, "cache_miss_pages");
		json_writer__u64(w, e->cache_miss_pages);
	}
	if (is_open) {
		key(x, &first, "flags");
		json_writer__cstr(w, gpuio_open_flags__str(e->flags, buf, sizeof(buf)));
	} else if (call == GPUIO_CALL_SYNC_FILE_RANGE) {
		key(x, &first, "flags");
		json_writer__cstr(w, gpuio_sfr_flags__str(e->flags, buf, sizeof(buf)));
	} else if (call == GPUIO_CALL_FALLOCATE && e->flags) {
		key(x, &first, "mode");
		json_writer__cstr(w, gpuio_fallocate_mode__str(e->flags, buf, sizeof(buf)));
	} else if (call == GPUIO_CALL_SPLICE && e->flags) {
		key(x, &first, "flags");
		json_writer__cstr(w, gpuio_splice_flags__str(e->flags, buf, sizeof(buf)));
	}
	if (!(is_open && failed && !e->ino && !e->dev))
		write_ftype(x, &first, "ftype", e->ftype);
	if (gpuio_call__two_files(call)) {
		key(x, &first, "path2");
		write_path(x, e->dev2, e->ino2, e->ftype2, &x->st.unresolved_paths);
		if (e->fd2 >= 0) {
			key(x, &first, "fd2");
			json_writer__s64(w, e->fd2);
		}
		if (e->offset2 >= 0) {
			key(x, &first, "offset2");
			json_writer__s64(w, e->offset2);
		}
		write_ftype(x, &first, "ftype2", e->ftype2);
	}
	if (async) {
		key(x, &first, "tid");
		json_writer__u64(w, e->hdr.tid);
	}
	json_writer__puts(w, "}}");
	x->st.vfs++;
}

/* Pass 2: the VFS events, streamed in capture order. */
static int pass_vfs(struct exporter *x)
{
	const struct gpuio_hdr *h;
	uint64_t n = 0;
	int rc = 1;

	x->vfs_ordinal = 0;
	x->async_next = 0;
	/* stop where pass 1 stopped, even if the file grew meanwhile */
	while (n < x->records && (rc = gpuio_cap_reader__next(x->r, &h)) > 0) {
		n++;
		if (h->type != GPUIO_REC_VFS)
			continue;
		emit_vfs(x, (const void *)h);
		x->vfs_ordinal++;
		if (json_writer__error(x->w))
			return json_writer__error(x->w);
	}
	return rc < 0 ? -EBADMSG : 0;
}

static void meta_name(struct exporter *x, const char *what, uint32_t pid, const uint32_t *tid,
		      const char *name, size_t len)
{
	ev_start(x);
	json_writer__printf(x->w, "\"name\":\"%s\",\"ph\":\"M\",\"pid\":%u", what, pid);
	if (tid)
		json_writer__printf(x->w, ",\"tid\":%u", *tid);
	json_writer__puts(x->w, ",\"args\":{\"name\":");
	json_writer__str(x->w, name, len);
	json_writer__puts(x->w, "}}");
}

static void meta_sort(struct exporter *x, const char *what, uint32_t pid, const uint32_t *tid,
		      uint64_t index)
{
	ev_start(x);
	json_writer__printf(x->w, "\"name\":\"%s\",\"ph\":\"M\",\"pid\":%u", what, pid);
	if (tid)
		json_writer__printf(x->w, ",\"tid\":%u", *tid);
	json_writer__printf(x->w, ",\"args\":{\"sort_index\":%llu}}", (unsigned long long)index);
}

/* comm of a process: its best PROC record, else its main thread, else any thread. */
static const char *proc_comm(struct exporter *x, const struct proc_ent *p, char *buf, size_t len)
{
	uint32_t *v;

	if (comm_set(p->comm)) {
		snprintf(buf, len, "%.16s", p->comm);
		return buf;
	}
	v = kmap__get(&x->thread_map, p->pid, p->pid);
	if (v && x->threads[*v].has_comm) {
		snprintf(buf, len, "%.16s", x->threads[*v].comm);
		return buf;
	}
	for (size_t i = 0; i < x->nthreads; i++) {
		if (x->threads[i].pid == p->pid && x->threads[i].has_comm) {
			snprintf(buf, len, "%.16s", x->threads[i].comm);
			return buf;
		}
	}
	snprintf(buf, len, "pid %u", p->pid);
	return buf;
}

static void emit_process_meta(struct exporter *x)
{
	char comm[32], name[PROC_NAME_MAX + 64];
	size_t t = 0;

	/* threads are sorted by pid: walk both lists together */
	for (size_t i = 0; i < x->nprocs; i++) {
		struct proc_ent *p = &x->procs[i];
		size_t n, idx = 0;

		proc_comm(x, p, comm, sizeof(comm));
		n = (size_t)snprintf(name, sizeof(name), "%s", comm);
		if (p->args_len) {
			n += (size_t)snprintf(name + n, sizeof(name) - n, ": ");
			for (uint32_t k = 0; k < p->args_len && n < sizeof(name) - 1; k++)
				name[n++] = p->args[k] ? p->args[k] : ' ';
			name[n] = 0;
		}
		n = json_utf8_cut(name, n, PROC_NAME_MAX);
		p->sort = (uint32_t)i + 1;
		meta_name(x, "process_name", p->pid, NULL, name, n);
		meta_sort(x, "process_sort_index", p->pid, NULL, p->sort);
		for (; t < x->nthreads && x->threads[t].pid == p->pid; t++) {
			const struct thread_ent *th = &x->threads[t];
			const char *tn = th->has_comm ? th->comm : comm;

			meta_name(x, "thread_name", p->pid, &th->tid, tn, strnlen(tn, 16));
			meta_sort(x, "thread_sort_index", p->pid, &th->tid, idx++);
			x->st.threads++;
		}
		for (size_t l = 0; l < x->nulanes; l++) {
			const struct lane_ent *le = &x->ulanes[l];

			if (le->pid != p->pid)
				continue;
			n = (size_t)snprintf(name, sizeof(name), "io_uring lane %u", le->n);
			meta_name(x, "thread_name", p->pid, &le->tid, name, n);
			meta_sort(x, "thread_sort_index", p->pid, &le->tid, 100000 + le->n);
		}
	}
	x->st.processes = x->nprocs;
}

static void disk_name(const struct dev_ent *d, char *buf, size_t len)
{
	if (d->named && d->name[0])
		snprintf(buf, len, "%.32s", d->name);
	else
		snprintf(buf, len, "%u:%u", d->dev >> 20, d->dev & 0xfffff);
}

static void emit_block(struct exporter *x, const struct blk_ent *b, const char *dname,
		       uint32_t pid)
{
	struct json_writer *w = x->w;
	const char *op = gpuio_blk_op__name(b->op);
	uint32_t *fv = b->seq ? kmap__get(&x->flow_map, b->tid, b->seq) : NULL;
	bool first = true;
	char buf[96];

	ev_start(x);
	json_writer__printf(w, "\"name\":\"%s\",\"cat\":\"block\",\"ph\":\"X\",\"ts\":", op);
	ts_rel(x, b->ts);
	json_writer__puts(w, ",\"dur\":");
	json_writer__us(w, (int64_t)(blk_end(b) - b->ts));
	json_writer__printf(w, ",\"pid\":%u,\"tid\":%u", pid, LANE_TID(pid - DISK_PID_BASE, b->lane));
	if (fv && (*fv & FLOW_VFS_SEEN)) {
		bind_id(x, b->tid, b->seq);
		json_writer__puts(w, ",\"flow_in\":true");
		x->st.flows++;
	} else if (b->seq) {
		x->st.dangling_flows++;
	}
	json_writer__puts(w, ",\"args\":{");
	key(x, &first, "dev");
	json_writer__cstr(w, dname);
	key(x, &first, "op");
	json_writer__cstr(w, op);
	key(x, &first, "flags");
	json_writer__cstr(w, gpuio_rq_flags__str(b->flags, buf, sizeof(buf)));
	key(x, &first, "sector");
	json_writer__u64(w, b->sector);
	key(x, &first, "bytes");
	json_writer__u64(w, b->bytes);
	key(x, &first, "queue_us");
	json_writer__us(w, (int64_t)(b->issue - b->ts));
	key(x, &first, "service_us");
	json_writer__us(w, (int64_t)(b->complete - b->issue));
	if (b->pid) {
		key(x, &first, "pid");
		json_writer__u64(w, b->pid);
	}
	if (b->tid) {
		key(x, &first, "tid");
		json_writer__u64(w, b->tid);
	}
	if (b->ino) {
		key(x, &first, "path");
		write_path(x, b->file_dev, b->ino, GPUIO_FT_REG, &x->st.unresolved_block_paths);
	}
	key(x, &first, "writeback");
	json_writer__bool(w, b->attr & GPUIO_BA_WRITEBACK);
	if (b->attr & GPUIO_BA_BDEV_PAGE) {
		/* the device's own pages: filesystem metadata, journal, raw I/O */
		key(x, &first, "metadata");
		json_writer__bool(w, true);
	}
	if (b->error) {
		key(x, &first, "error");
		json_writer__s64(w, b->error);
	}
	json_writer__puts(w, "}}");
	x->st.block++;
}

static void emit_counter(struct exporter *x, const char *cname, uint32_t pid, uint64_t t,
			 double rd, double wr)
{
	ev_start(x);
	json_writer__puts(x->w, "\"name\":");
	json_writer__cstr(x->w, cname);
	json_writer__puts(x->w, ",\"cat\":\"block\",\"ph\":\"C\",\"ts\":");
	ts_rel(x, t);
	json_writer__printf(x->w, ",\"pid\":%u,\"args\":{\"read_MiBps\":", pid);
	json_writer__f3(x->w, rd);
	json_writer__puts(x->w, ",\"write_MiBps\":");
	json_writer__f3(x->w, wr);
	json_writer__puts(x->w, "}}");
}

static void emit_disks(struct exporter *x)
{
	size_t i = 0;

	for (size_t d = 0; d < x->ndisks; d++) {
		struct dev_ent *dev = &x->devs[x->disk_order[d]];
		uint32_t pid = DISK_PID_BASE + (uint32_t)d;
		char dname[48], pname[64], cname[64];
		double scale = 1e9 / (double)x->bucket_ns / 1048576.0, last_r = -1, last_w = -1;

		disk_name(dev, dname, sizeof(dname));
		snprintf(pname, sizeof(pname), "disk %s", dname);
		snprintf(cname, sizeof(cname), "throughput %s", dname);
		meta_name(x, "process_name", pid, NULL, pname, strlen(pname));
		meta_sort(x, "process_sort_index", pid, NULL, x->nprocs + 1 + d);
		for (uint32_t l = 1; l <= dev->nlanes; l++) {
			uint32_t tid = LANE_TID(d, l);
			char lname[32];

			snprintf(lname, sizeof(lname), "lane %u", l);
			meta_name(x, "thread_name", pid, &tid, lname, strlen(lname));
			meta_sort(x, "thread_sort_index", pid, &tid, l);
		}
		x->st.lanes += dev->nlanes;
		/* blks[] is sorted by disk, and disks are numbered in that order */
		for (; i < x->nblks && x->blks[i].disk == d; i++)
			emit_block(x, &x->blks[i], dname, pid);
		for (size_t k = 0; k < x->nbuckets; k++) {
			double r = dev->bucket_bytes[k * 2] * scale, w = dev->bucket_bytes[k * 2 + 1] * scale;
			char rs[48], ws[48];

			/* compare what would be printed: no change, no event */
			snprintf(rs, sizeof(rs), "%.3f", r);
			snprintf(ws, sizeof(ws), "%.3f", w);
			r = strtod(rs, NULL);
			w = strtod(ws, NULL);
			if (k && r == last_r && w == last_w)
				continue;
			last_r = r;
			last_w = w;
			emit_counter(x, cname, pid, x->t0 + k * x->bucket_ns, r, w);
		}
		emit_counter(x, cname, pid, x->t0 + x->nbuckets * x->bucket_ns, 0, 0);
	}
	x->st.disks = x->ndisks;
}

static void str_arg(struct exporter *x, bool *first, const char *k, const char *s, size_t max)
{
	key(x, first, k);
	json_writer__strn(x->w, s, max);
}

static void u64_arg(struct exporter *x, bool *first, const char *k, uint64_t v)
{
	key(x, first, k);
	json_writer__u64(x->w, v);
}

static const char *const drop_names[] = {
	[GPUIO_STAT_RB_DROP_VFS] = "rb_drop_vfs",
	[GPUIO_STAT_RB_DROP_BLOCK] = "rb_drop_block",
	[GPUIO_STAT_RB_DROP_PATH] = "rb_drop_path",
	[GPUIO_STAT_RB_DROP_PROC] = "rb_drop_proc",
	[GPUIO_STAT_MAP_FULL_PID] = "map_full_pid",
	[GPUIO_STAT_MAP_FULL_RQ] = "map_full_rq",
	[GPUIO_STAT_MAP_FULL_TASK] = "map_full_task",
};

/* Events lost, as the tracer counts them (collector totals): BPF drops + failed writes. */
static uint64_t total_dropped(const struct gpuio_stats_event *s)
{
	uint64_t n = s->user[GPUIO_USTAT_WRITE_ERRORS];

	for (size_t i = 0; i < sizeof(drop_names) / sizeof(drop_names[0]); i++)
		n += s->bpf[i];
	return n;
}

static void emit_info(struct exporter *x)
{
	const struct gpuio_cap_header *h = x->hdr;
	const struct gpuio_stats_event *s = &x->stats;
	struct json_writer *w = x->w;
	bool first = true, complete;
	uint32_t pid = INFO_PID;

	complete = x->have_stats && s->final && !x->truncated;
	x->st.capture_complete = complete;
	x->st.drops_known = x->have_stats;
	x->st.dropped = x->have_stats ? total_dropped(s) : 0;

	meta_name(x, "process_name", pid, NULL, "gpuio", 5);
	meta_sort(x, "process_sort_index", pid, NULL, x->nprocs + x->ndisks + 1);
	ev_start(x);
	json_writer__printf(w, "\"name\":\"gpuio trace info\",\"cat\":\"gpuio\",\"ph\":\"i\","
			    "\"s\":\"g\",\"ts\":0.000,\"pid\":%u,\"tid\":%u,\"args\":{", pid, pid);
	key(x, &first, "dropped");
	if (x->have_stats)
		json_writer__u64(w, x->st.dropped);
	else
		json_writer__puts(w, "null");
	key(x, &first, "drops_known");
	json_writer__bool(w, x->have_stats);
	/* a snapshot that is not the final one counts drops only up to its time */
	key(x, &first, "drops_final");
	json_writer__bool(w, x->have_stats && s->final);
	key(x, &first, "drops");
	if (x->have_stats) {
		bool f2 = true;

		json_writer__putc(w, '{');
		for (size_t i = 0; i < sizeof(drop_names) / sizeof(drop_names[0]); i++)
			u64_arg(x, &f2, drop_names[i], s->bpf[i]);
		u64_arg(x, &f2, "capture_write_errors", s->user[GPUIO_USTAT_WRITE_ERRORS]);
		json_writer__putc(w, '}');
	} else {
		json_writer__puts(w, "null");
	}
	u64_arg(x, &first, "unresolved_paths", x->st.unresolved_paths);
	u64_arg(x, &first, "unresolved_block_paths", x->st.unresolved_block_paths);
	key(x, &first, "collector_unresolved_paths");
	if (x->have_stats)
		json_writer__u64(w, s->user[GPUIO_USTAT_PATH_UNRESOLVED]);
	else
		json_writer__puts(w, "null");
	key(x, &first, "path_walks_truncated");
	if (x->have_stats)
		json_writer__u64(w, s->bpf[GPUIO_STAT_PATH_TRUNC]);
	else
		json_writer__puts(w, "null");
	str_arg(x, &first, "vfs_mode", h->vfs_mode, sizeof(h->vfs_mode));
	str_arg(x, &first, "block_mode", h->block_mode, sizeof(h->block_mode));
	str_arg(x, &first, "proc_mode", h->proc_mode, sizeof(h->proc_mode));
	str_arg(x, &first, "pagecache_mode", h->pagecache_mode, sizeof(h->pagecache_mode));
	str_arg(x, &first, "iouring_mode", h->iouring_mode, sizeof(h->iouring_mode));
	str_arg(x, &first, "modes_detail", h->modes_detail, sizeof(h->modes_detail));
	str_arg(x, &first, "hostname", h->hostname, sizeof(h->hostname));
	str_arg(x, &first, "kernel", h->kernel, sizeof(h->kernel));
	str_arg(x, &first, "boot_id", h->boot_id, sizeof(h->boot_id));
	str_arg(x, &first, "target", h->target, sizeof(h->target));
	str_arg(x, &first, "cmdline", h->cmdline, sizeof(h->cmdline));
	u64_arg(x, &first, "tracer_pid", h->tracer_pid);
	u64_arg(x, &first, "ncpus", h->ncpus);
	key(x, &first, "trace_all");
	json_writer__bool(w, h->flags & GPUIO_CAPF_ALL);
	key(x, &first, "all_fds");
	json_writer__bool(w, h->flags & GPUIO_CAPF_ALL_FDS);
	key(x, &first, "launched");
	json_writer__bool(w, h->flags & GPUIO_CAPF_LAUNCH);
	u64_arg(x, &first, "capture_version", h->version);
	u64_arg(x, &first, "abi_version", h->abi_version);
	u64_arg(x, &first, "monotonic_base_ns", h->monotonic_ns);
	u64_arg(x, &first, "realtime_base_ns", h->realtime_ns);
	key(x, &first, "capture_complete");
	json_writer__bool(w, complete);
	u64_arg(x, &first, "capture_truncated_bytes", x->truncated);
	u64_arg(x, &first, "records", x->records);
	key(x, &first, "record_counts");
	json_writer__printf(w, "{\"vfs\":%llu,\"block\":%llu,\"path\":%llu,\"proc\":%llu,"
			    "\"stats\":%llu,\"devname\":%llu,\"unknown\":%llu}",
			    (unsigned long long)x->counts[GPUIO_REC_VFS],
			    (unsigned long long)x->counts[GPUIO_REC_BLOCK],
			    (unsigned long long)x->counts[GPUIO_REC_PATH],
			    (unsigned long long)x->counts[GPUIO_REC_PROC],
			    (unsigned long long)x->counts[GPUIO_REC_STATS],
			    (unsigned long long)x->counts[GPUIO_REC_DEVNAME],
			    (unsigned long long)x->counts[0]);
	u64_arg(x, &first, "vfs_events", x->st.vfs);
	u64_arg(x, &first, "block_requests", x->st.block);
	u64_arg(x, &first, "flows", x->st.flows);
	u64_arg(x, &first, "dangling_block_refs", x->st.dangling_flows);
	key(x, &first, "throughput_bucket_us");
	json_writer__us(w, (int64_t)x->bucket_ns);
	json_writer__puts(w, "}}");
}

static int write_trace(struct exporter *x)
{
	int err;

	x->first_event = true;
	json_writer__puts(x->w, "[\n");
	emit_process_meta(x);
	err = gpuio_cap_reader__rewind(x->r);
	if (err)
		return err;
	err = pass_vfs(x);
	if (err)
		return err;
	emit_disks(x);
	emit_info(x);
	json_writer__puts(x->w, "\n]\n");
	return json_writer__error(x->w);
}

bool gpuio_export__is_gz(const char *name)
{
	size_t n = strlen(name);

	return n > 3 && !strcmp(name + n - 3, ".gz");
}

bool gpuio_export__is_json_name(const char *name)
{
	size_t n = strlen(name);

	return (n > 5 && !strcmp(name + n - 5, ".json")) ||
	       (n > 8 && !strcmp(name + n - 8, ".json.gz"));
}

static const char *open_hint(int err)
{
	switch (err) {
	case -ENOENT:
		return " (check the path: captures are the .gpuio files `gpuio trace` writes)";
	case -EACCES:
	case -EPERM:
		return " (no permission: run as the capture's owner, or with sudo)";
	case -EBADMSG:
		return " (give the .gpuio capture, not an exported .json)";
	case -EPROTO:
		return " (convert it with the gpuio version that recorded it)";
	default:
		return "";
	}
}

static const char *write_hint(int err)
{
	switch (err) {
	case -ENOSPC:
	case -EDQUOT:
		return " (disk full: free space or choose another -o)";
	case -EACCES:
	case -EPERM:
	case -EROFS:
		return " (choose a writable directory with -o)";
	case -ENOENT:
	case -ENOTDIR:
		return " (the output directory does not exist: create it or choose another -o)";
	default:
		return "";
	}
}

/* Refuse outputs that are symlinks, non-regular files or the capture itself. */
static int check_output(const char *cap, const char *out)
{
	struct stat so, sc;

	if (lstat(out, &so) < 0)
		return 0;
	if (S_ISLNK(so.st_mode)) {
		pr_err("refusing to write %s: it is a symbolic link (remove it or choose another name)",
		       out);
		return -ELOOP;
	}
	if (!S_ISREG(so.st_mode)) {
		pr_err("refusing to write %s: it exists and is not a regular file "
		       "(choose another name)", out);
		return S_ISDIR(so.st_mode) ? -EISDIR : -EEXIST;
	}
	if (stat(cap, &sc) == 0 && sc.st_dev == so.st_dev && sc.st_ino == so.st_ino) {
		pr_err("refusing to write %s: it is the capture being converted", out);
		return -EEXIST;
	}
	return 0;
}

static void exporter__free(struct exporter *x)
{
	if (!x)
		return;
	gpuio_cap_reader__close(x->r);
	for (size_t i = 0; i < x->npaths; i++)
		free(x->paths[i].s);
	free(x->paths);
	for (size_t i = 0; i < x->nprocs; i++)
		free(x->procs[i].args);
	free(x->procs);
	free(x->threads);
	for (size_t i = 0; i < x->ndevs; i++)
		free(x->devs[i].bucket_bytes);
	free(x->devs);
	free(x->disk_order);
	free(x->blks);
	free(x->asyncs);
	free(x->ulanes);
	kmap__free(&x->path_map);
	kmap__free(&x->proc_map);
	kmap__free(&x->thread_map);
	kmap__free(&x->dev_map);
	kmap__free(&x->flow_map);
	free(x);
}

int gpuio_export_json(const char *capture_path, const char *out_path,
		      const struct gpuio_export_opts *opts, struct gpuio_export_stats *st)
{
	bool to_stdout = !strcmp(out_path, "-");
	struct exporter *x;
	char errbuf[320], *tmp = NULL;
	int fd = -1, err;

	x = calloc(1, sizeof(*x));
	if (!x) {
		pr_err("out of memory");
		return -ENOMEM;
	}
	err = gpuio_cap_reader__open(capture_path, &x->r, errbuf, sizeof(errbuf));
	if (err) {
		pr_err("%s%s", errbuf, open_hint(err));
		goto out;
	}
	x->hdr = gpuio_cap_reader__header(x->r);
	x->cache_known = x->hdr->pagecache_mode[0] && strcmp(x->hdr->pagecache_mode, "off") &&
			 strcmp(x->hdr->pagecache_mode, "none");

	err = pass_meta(x);
	if (err == -EBADMSG) {
		pr_err("%s: %s; the capture is damaged from there on: record it again "
		       "(`gpuio info` shows what precedes the damage)", capture_path,
		       gpuio_cap_reader__error(x->r));
		goto out;
	} else if (err) {
		pr_err("cannot read %s: %s", capture_path, strerror(-err));
		goto out;
	}
	if (x->truncated)
		pr_warn("%s: capture cut short at offset %llu: %llu bytes of a partial record "
			"ignored (exporting the %llu whole records before it)", capture_path,
			(unsigned long long)x->trunc_offset, (unsigned long long)x->truncated,
			(unsigned long long)x->records);
	err = layout_block(x);
	if (!err)
		err = layout_async(x);
	if (!err && x->nprocs) {
		qsort(x->procs, x->nprocs, sizeof(*x->procs), cmp_proc);
		qsort(x->threads, x->nthreads, sizeof(*x->threads), cmp_thread);
		/* the maps index the arrays: rebuild them after sorting */
		for (size_t i = 0; i < x->nprocs && !err; i++) {
			uint32_t *v;
			err = kmap__upsert(&x->proc_map, x->procs[i].pid, 0, &v) < 0 ? -ENOMEM : 0;
			if (!err)
				*v = (uint32_t)i;
		}
		for (size_t i = 0; i < x->nthreads && !err; i++) {
			uint32_t *v;
			err = kmap__upsert(&x->thread_map, x->threads[i].pid, x->threads[i].tid, &v) < 0 ?
			      -ENOMEM : 0;
			if (!err)
				*v = (uint32_t)i;
		}
	}
	if (err) {
		pr_err("cannot export %s: %s", capture_path, strerror(-err));
		goto out;
	}

	if (to_stdout) {
		fd = STDOUT_FILENO;
	} else {
		err = check_output(capture_path, out_path);
		if (err)
			goto out;
		if (asprintf(&tmp, "%s.tmp", out_path) < 0) {
			tmp = NULL;
			err = -ENOMEM;
			pr_err("out of memory");
			goto out;
		}
		/* a stale or planted OUT.tmp is removed, never written through */
		if (unlink(tmp) < 0 && errno != ENOENT && errno != EACCES && errno != EROFS) {
			err = -errno;
			pr_err("cannot remove stale %s: %s", tmp, strerror(errno));
			goto out;
		}
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd < 0) {
			err = -errno;
			pr_err("cannot create %s: %s%s", tmp, strerror(errno), write_hint(err));
			goto out;
		}
		if (opts && opts->owner_uid != (uid_t)-1 &&
		    fchown(fd, opts->owner_uid, opts->owner_gid) < 0) {
			err = -errno;
			pr_err("cannot give %s to uid %u: %s", tmp, (unsigned)opts->owner_uid,
			       strerror(errno));
			goto out;
		}
	}
	err = json_writer__new(fd, !to_stdout && gpuio_export__is_gz(out_path), !to_stdout, &x->w);
	if (err) {
		pr_err("cannot write %s: %s", out_path, strerror(-err));
		goto out;
	}
	fd = -1;        /* the writer owns it now */
	err = write_trace(x);
	if (err == -EBADMSG) {
		pr_err("%s: %s (the capture changed while it was being read?)", capture_path,
		       gpuio_cap_reader__error(x->r));
	}
	x->st.output_bytes = json_writer__bytes(x->w);
	{
		int cerr = json_writer__close(x->w);

		x->w = NULL;
		if (!err)
			err = cerr;
	}
	if (err) {
		if (err != -EBADMSG)
			pr_err("cannot write %s: %s%s", out_path, strerror(-err), write_hint(err));
		goto out;
	}
	if (tmp && rename(tmp, out_path) < 0) {
		err = -errno;
		pr_err("cannot rename %s to %s: %s", tmp, out_path, strerror(errno));
		goto out;
	}
	x->st.records = x->records;
	x->st.truncated_bytes = x->truncated;
	if (st)
		*st = x->st;
out:
	if (fd >= 0 && fd != STDOUT_FILENO)
		close(fd);
	if (x->w)
		json_writer__close(x->w);
	if (err && tmp)
		unlink(tmp);
	free(tmp);
	exporter__free(x);
	return err;
}
