// SPDX-License-Identifier: MIT
/*
 * report_model.c — streaming aggregation behind `gpuio report` (see
 * report_model.h for the passes and the memory bound).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include "model/calls.h"
#include "report/report_model.h"

#define KERNEL_O_DIRECT 040000   /* the kernel's value: records carry raw flags */

const char *const rpt_cause_names[RPT_CAUSE_N] = {
	[RPT_CAUSE_READ] = "file_read", [RPT_CAUSE_WRITE] = "write_fsync",
	[RPT_CAUSE_OTHER_IO] = "other_file_io", [RPT_CAUSE_CUDA_SYNC] = "cuda_sync",
	[RPT_CAUSE_NONE] = "other",
};

/* ---- small helpers ---- */

static uint64_t end_of(uint64_t ts, uint64_t dur)
{
	return dur > UINT64_MAX - ts ? UINT64_MAX : ts + dur;
}

static unsigned lat_idx(uint64_t v)
{
	unsigned k;

	if (v < RPT_LAT_SUB)
		return (unsigned)v;
	k = 63 - (unsigned)__builtin_clzll(v);         /* >= 2 */
	if (k > 40)
		return RPT_LAT_BUCKETS - 1;
	return RPT_LAT_SUB + (k - 2) * RPT_LAT_SUB + (unsigned)((v >> (k - 2)) & 3);
}

/* [lo, hi) of a lat bucket */
static void lat_bounds(unsigned i, uint64_t *lo, uint64_t *hi)
{
	unsigned k, sub;

	if (i < RPT_LAT_SUB) {
		*lo = i;
		*hi = i + 1;
		return;
	}
	k = (i - RPT_LAT_SUB) / RPT_LAT_SUB + 2;
	sub = (i - RPT_LAT_SUB) % RPT_LAT_SUB;
	*lo = (1ull << k) + (uint64_t)sub * (1ull << (k - 2));
	*hi = *lo + (1ull << (k - 2));
}

static unsigned log2_idx(uint64_t v)
{
	unsigned k;

	if (!v)
		return 0;
	k = 64 - (unsigned)__builtin_clzll(v);   /* 1 -> 1, 2..3 -> 2, 4..7 -> 3 */
	return k < RPT_LOG2_BUCKETS ? k : RPT_LOG2_BUCKETS - 1;
}

static int hist_add(struct rpt_hist *h, uint64_t v)
{
	if (!h->n) {
		h->min = h->max = h->first = v;
	} else {
		if (!h->b) {
			h->b = calloc(RPT_LAT_BUCKETS, sizeof(*h->b));
			if (!h->b)
				return -ENOMEM;
			h->b[lat_idx(h->first)]++;
		}
		h->b[lat_idx(v)]++;
		if (v < h->min)
			h->min = v;
		if (v > h->max)
			h->max = v;
	}
	h->n++;
	h->sum += v;
	return 0;
}

uint64_t rpt_hist__pct(const struct rpt_hist *h, double q)
{
	uint64_t want, seen = 0, lo, hi;

	if (!h->n)
		return 0;
	if (!h->b)
		return h->first;
	want = (uint64_t)(q * (double)h->n + 0.999999);
	if (want < 1)
		want = 1;
	for (unsigned i = 0; i < RPT_LAT_BUCKETS; i++) {
		seen += h->b[i];
		if (seen >= want) {
			uint64_t mid;

			lat_bounds(i, &lo, &hi);
			mid = lo + (hi - lo) / 2;
			/* never outside what was seen */
			return mid < h->min ? h->min : mid > h->max ? h->max : mid;
		}
	}
	return h->max;
}

double rpt_ratio(uint64_t hit, uint64_t all)
{
	return all ? (double)hit / (double)all : -1.0;
}

const char *rpt_pattern_name(enum rpt_pattern p)
{
	static const char *const n[] = { "sequential", "strided", "random" };

	return p < RPT_PAT_N ? n[p] : "?";
}

/* Sequential when >= 80% of a thread's successive calls continue where the
 * previous ended; strided when most of the rest repeat one stride. */
enum rpt_pattern rpt_file__pattern(const struct rpt_file *f, uint64_t *single)
{
	uint64_t all = f->pat[0] + f->pat[1] + f->pat[2];

	*single = !all;
	if (!all)
		return RPT_PAT_SEQ;
	if (f->pat[RPT_PAT_SEQ] * 10 >= all * 8)
		return RPT_PAT_SEQ;
	if ((f->pat[RPT_PAT_SEQ] + f->pat[RPT_PAT_STRIDED]) * 10 >= all * 8)
		return RPT_PAT_STRIDED;
	return RPT_PAT_RANDOM;
}

int64_t rpt_ts_rel_ns(const struct rpt_model *m, uint64_t t)
{
	return (int64_t)(t - m->hdr->monotonic_ns);
}

void rpt_fmt_wall(const struct rpt_model *m, uint64_t t, char *buf, size_t len)
{
	uint64_t ns = m->hdr->realtime_ns + (uint64_t)rpt_ts_rel_ns(m, t);
	time_t secs = (time_t)(ns / 1000000000ull);
	struct tm tm;
	char d[40];

	if (!m->hdr->realtime_ns || !gmtime_r(&secs, &tm)) {
		snprintf(buf, len, "?");
		return;
	}
	strftime(d, sizeof(d), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%06lluZ", d, (unsigned long long)(ns % 1000000000ull / 1000));
}

void rpt_fmt_bytes(uint64_t b, char *buf, size_t len)
{
	static const char *const u[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	double v = (double)b;
	int i = 0;

	while (v >= 1024 && i < 5) {
		v /= 1024;
		i++;
	}
	if (!i)
		snprintf(buf, len, "%llu B", (unsigned long long)b);
	else
		snprintf(buf, len, "%.*f %s", v < 10 ? 2 : v < 100 ? 1 : 0, v, u[i]);
}

void rpt_fmt_dur(uint64_t ns, char *buf, size_t len)
{
	if (ns < 1000)
		snprintf(buf, len, "%llu ns", (unsigned long long)ns);
	else if (ns < 1000000)
		snprintf(buf, len, "%.1f us", (double)ns / 1e3);
	else if (ns < 10000000000ull)
		snprintf(buf, len, "%.*f ms", ns < 100000000 ? 2 : 1, (double)ns / 1e6);
	else
		snprintf(buf, len, "%.2f s", (double)ns / 1e9);
}

uint64_t rpt_model__duration(const struct rpt_model *m)
{
	return m->last_ts > m->first_ts ? m->last_ts - m->first_ts : 0;
}

bool rpt_model__dropped(const struct rpt_model *m, uint64_t *n)
{
	const struct gpuio_stats_event *s = &m->stats;
	uint64_t d = m->cupti_dropped + m->gpu_write_errors;

	if (m->have_stats)
		d += gpuio_stats__dropped(s);
	*n = d;
	return m->have_stats;
}

/* A thread's wall time: first record .. last record (its process's exit for
 * the main thread, when known). */
uint64_t rpt_thread__wall(const struct rpt_model *m, const struct rpt_thread *t)
{
	uint64_t end = t->last_ts;
	uint64_t *v = kmap__get(&m->proc_map, t->pid, 0);

	if (v && t->tid == t->pid && m->procs[*v].exited && m->procs[*v].exit_ts > end)
		end = m->procs[*v].exit_ts;
	return end > t->first_ts ? end - t->first_ts : 0;
}

const char *rpt_proc_comm(const struct rpt_model *m, uint32_t pid)
{
	uint64_t *v = kmap__get(&m->proc_map, pid, 0);

	return v && m->procs[*v].comm[0] ? m->procs[*v].comm : "?";
}

/* ---- timelines ---- */

static int series_new(struct rpt_model *m, struct rpt_series **out)
{
	struct rpt_series *s = calloc(1, sizeof(*s));

	if (!s || array_grow((void **)&m->series, &m->cseries, m->nseries + 1,
			   sizeof(*m->series))) {
		free(s);
		return -ENOMEM;
	}
	m->series[m->nseries++] = s;
	*out = s;
	return 0;
}

/* Make t fit the timeline, halving the resolution as often as needed. */
static void tl_fit(struct rpt_model *m, uint64_t t)
{
	while (t > m->tl_t0 && (t - m->tl_t0) / m->tl_width >= RPT_TL_BUCKETS &&
	       m->tl_width < (1ull << 58)) {
		for (size_t k = 0; k < m->nseries; k++) {
			double *v = m->series[k]->v;

			for (unsigned i = 0; i < RPT_TL_BUCKETS / 2; i++)
				v[i] = v[2 * i] + v[2 * i + 1];
			for (unsigned i = RPT_TL_BUCKETS / 2; i < RPT_TL_BUCKETS; i++)
				v[i] = 0;
		}
		m->tl_width *= 2;
	}
}

static unsigned tl_idx(const struct rpt_model *m, uint64_t t)
{
	uint64_t i = t > m->tl_t0 ? (t - m->tl_t0) / m->tl_width : 0;

	return i < RPT_TL_BUCKETS ? (unsigned)i : RPT_TL_BUCKETS - 1;
}

static void tl_point(struct rpt_model *m, struct rpt_series *s, uint64_t t, double v)
{
	tl_fit(m, t);
	s->v[tl_idx(m, t)] += v;
}

/* Add w per ns of [a, b) to the buckets it covers. */
static void tl_span(struct rpt_model *m, struct rpt_series *s, uint64_t a, uint64_t b, double w)
{
	unsigned i, j;

	if (b <= a)
		return;
	tl_fit(m, b);
	if (a < m->tl_t0)
		a = m->tl_t0;
	if (b <= a)
		return;
	i = tl_idx(m, a);
	j = tl_idx(m, b - 1);
	for (unsigned k = i; k <= j; k++) {
		uint64_t lo = m->tl_t0 + (uint64_t)k * m->tl_width, hi = lo + m->tl_width;
		uint64_t x = a > lo ? a : lo, y = b < hi ? b : hi;

		if (k == RPT_TL_BUCKETS - 1)
			y = b;
		if (y > x)
			s->v[k] += w * (double)(y - x);
	}
}

/* ---- tables ---- */

static int file_get(struct rpt_model *m, uint32_t dev, uint64_t ino, struct rpt_file **out)
{
	uint64_t *v;
	int rc = kmap__upsert(&m->file_map, dev, ino, &v);

	if (rc < 0)
		return rc;
	if (rc) {
		if (array_grow((void **)&m->files, &m->cfiles, m->nfiles + 1, sizeof(*m->files)))
			return -ENOMEM;
		memset(&m->files[m->nfiles], 0, sizeof(m->files[0]));
		m->files[m->nfiles].dev = dev;
		m->files[m->nfiles].ino = ino;
		*v = m->nfiles++;
	}
	*out = &m->files[*v];
	return 0;
}

static int proc_get(struct rpt_model *m, uint32_t pid, struct rpt_proc **out)
{
	uint64_t *v;
	int rc = kmap__upsert(&m->proc_map, pid, 0, &v);

	if (rc < 0)
		return rc;
	if (rc) {
		if (array_grow((void **)&m->procs, &m->cprocs, m->nprocs + 1, sizeof(*m->procs)))
			return -ENOMEM;
		memset(&m->procs[m->nprocs], 0, sizeof(m->procs[0]));
		m->procs[m->nprocs].pid = pid;
		*v = m->nprocs++;
	}
	*out = &m->procs[*v];
	return 0;
}

static int thread_get(struct rpt_model *m, uint32_t pid, uint32_t tid, uint64_t ts,
		      uint64_t end, struct rpt_thread **out)
{
	struct rpt_thread *t;
	struct rpt_proc *p;
	uint64_t *v;
	int rc = kmap__upsert(&m->thread_map, pid, tid, &v);

	if (rc < 0)
		return rc;
	if (rc) {
		if (array_grow((void **)&m->threads, &m->cthreads, m->nthreads + 1,
			     sizeof(*m->threads)))
			return -ENOMEM;
		memset(&m->threads[m->nthreads], 0, sizeof(m->threads[0]));
		m->threads[m->nthreads].pid = pid;
		m->threads[m->nthreads].tid = tid;
		m->threads[m->nthreads].first_ts = ts;
		*v = m->nthreads++;
		rc = proc_get(m, pid, &p);
		if (rc)
			return rc;
		p->nthreads++;
		if (!p->first_ts || ts < p->first_ts)
			p->first_ts = ts;
	}
	t = &m->threads[*v];
	if (ts < t->first_ts)
		t->first_ts = ts;
	if (end > t->last_ts)
		t->last_ts = end;
	*out = t;
	return 0;
}

static int dev_get(struct rpt_model *m, uint32_t dev, struct rpt_dev **out)
{
	struct rpt_dev *d;
	uint64_t *v;
	int rc = kmap__upsert(&m->dev_map, dev, 0, &v);

	if (rc < 0)
		return rc;
	if (rc) {
		if (array_grow((void **)&m->devs, &m->cdevs, m->ndevs + 1, sizeof(*m->devs)))
			return -ENOMEM;
		d = &m->devs[m->ndevs];
		memset(d, 0, sizeof(*d));
		d->dev = dev;
		snprintf(d->name, sizeof(d->name), "%u:%u", dev >> 20, dev & 0xfffff);
		if (series_new(m, &d->rd) || series_new(m, &d->wr) || series_new(m, &d->depth))
			return -ENOMEM;
		*v = m->ndevs++;
	}
	*out = &m->devs[*v];
	return 0;
}

/* PATH record: "leaf\0parent\0..top" components or a plain path. */
static int on_path(struct rpt_model *m, const struct gpuio_path_event *p)
{
	return exp_paths__add(&m->path_map, &m->paths, &m->npaths, &m->cpaths, p);
}

static void note_time(struct rpt_model *m, uint64_t ts, uint64_t end)
{
	if (!ts)
		return;
	if (!m->first_ts || ts < m->first_ts)
		m->first_ts = ts;
	if (end > m->last_ts)
		m->last_ts = end;
}

static void file_pid(struct rpt_file *f, uint32_t pid)
{
	unsigned n = f->npids < RPT_FILE_PIDS ? f->npids : RPT_FILE_PIDS;

	for (unsigned i = 0; i < n; i++)
		if (f->pids[i] == pid)
			return;
	if (f->npids < RPT_FILE_PIDS)
		f->pids[f->npids] = pid;
	/* beyond the kept few the count may repeat pids: "N+ processes" */
	f->npids++;
}

/* The access pattern of one thread's successive transfers in f. */
static int file_pattern(struct rpt_model *m, struct rpt_file *f, uint32_t tid, int64_t off,
			uint64_t len)
{
	struct rpt_stream *st;
	uint64_t *v;
	int rc;

	if (off < 0 || !len)
		return 0;
	rc = kmap__upsert(&m->stream_map, (uint64_t)(f - m->files), tid, &v);
	if (rc < 0)
		return rc;
	if (rc) {
		if (array_grow((void **)&m->streams, &m->cstreams, m->nstreams + 1,
			     sizeof(*m->streams)))
			return -ENOMEM;
		*v = m->nstreams++;
		st = &m->streams[*v];
		st->last_stride = 0;
	} else {
		int64_t stride;

		st = &m->streams[*v];
		stride = off - (int64_t)st->last_off;
		if ((uint64_t)off == st->last_end)
			f->pat[RPT_PAT_SEQ]++;
		else if (stride == st->last_stride && stride)
			f->pat[RPT_PAT_STRIDED]++;
		else
			f->pat[RPT_PAT_RANDOM]++;
		st->last_stride = stride;
	}
	st->last_off = (uint64_t)off;
	st->last_end = (uint64_t)off + len;
	return 0;
}

static int ckpt_close(struct rpt_model *m, struct rpt_file *f, uint64_t end, bool synced)
{
	struct rpt_ckpt *c;

	if (f->burst_bytes >= RPT_CKPT_MIN_BYTES) {
		if (array_grow((void **)&m->ckpts, &m->cckpts, m->nckpts + 1, sizeof(*m->ckpts)))
			return -ENOMEM;
		c = &m->ckpts[m->nckpts++];
		memset(c, 0, sizeof(*c));
		c->pid = f->burst_pid;
		c->tid = f->burst_tid;
		c->file = (uint32_t)(f - m->files);
		c->s = f->burst_start;
		c->e = end > f->burst_end ? end : f->burst_end;
		c->bytes = f->burst_bytes;
		c->writes = f->burst_writes;
		c->synced = synced;
	}
	f->burst_bytes = 0;
	f->burst_writes = 0;
	return 0;
}

static bool call_is_sync(unsigned call)
{
	return call == GPUIO_CALL_FSYNC || call == GPUIO_CALL_FDATASYNC ||
	       call == GPUIO_CALL_SYNC_FILE_RANGE;
}

/* Which idle cause a host call is. */
static enum rpt_cause call_cause(unsigned call)
{
	if (gpuio_call__is_read(call) || gpuio_call__two_files(call))
		return RPT_CAUSE_READ;
	if (gpuio_call__is_write(call) || call_is_sync(call) || call == GPUIO_CALL_FALLOCATE ||
	    call == GPUIO_CALL_FTRUNCATE)
		return RPT_CAUSE_WRITE;
	return RPT_CAUSE_OTHER_IO;
}

/* One data transfer (read or write side of a call) on f. */
static int file_xfer(struct rpt_model *m, struct rpt_file *f, const struct gpuio_vfs_event *e,
		     bool rd, int64_t off, uint64_t bytes, uint64_t dur, uint64_t end)
{
	int rc = 0;

	if (rd) {
		f->rops++;
		f->rbytes += bytes;
		f->rtime += dur;
		rc |= hist_add(&f->rlat, dur);
	} else {
		f->wops++;
		f->wbytes += bytes;
		f->wtime += dur;
		if (bytes) {
			if (!f->burst_bytes) {
				f->burst_start = e->hdr.ts;
				f->burst_pid = e->hdr.pid;
				f->burst_tid = e->hdr.tid;
			}
			f->burst_bytes += bytes;
			f->burst_writes++;
			if (end > f->burst_end)
				f->burst_end = end;
		}
	}
	rc |= hist_add(&f->lat, dur);
	f->size_hist[log2_idx(e->requested ? e->requested : bytes)]++;
	if (off >= 0 && bytes && (uint64_t)off + bytes > f->extent)
		f->extent = (uint64_t)off + bytes;
	rc |= file_pattern(m, f, e->hdr.tid, off, bytes);
	return rc ? -ENOMEM : 0;
}

static int on_vfs(struct rpt_model *m, const struct gpuio_vfs_event *e)
{
	const struct gpuio_hdr *h = &e->hdr;
	unsigned call = e->call;
	uint64_t end = end_of(h->ts, e->dur_ns), bytes;
	bool async = gpuio_call__is_async(call), rd, wr;
	struct rpt_thread *t;
	struct rpt_proc *p;
	struct rpt_file *f = NULL, *f2 = NULL;
	int rc;

	note_time(m, h->ts, end);
	rc = thread_get(m, h->pid, h->tid, h->ts, end, &t);
	if (rc || (rc = proc_get(m, h->pid, &p)))
		return rc;
	if (end > p->last_ts)
		p->last_ts = end;
	m->vfs_calls++;
	t->calls++;
	rd = gpuio_call__is_read(call);
	wr = gpuio_call__is_write(call);
	bytes = e->ret > 0 && gpuio_call__moves_bytes(call) ? (uint64_t)e->ret : 0;
	if (e->ret < 0)
		m->vfs_errors++;
	if (!async) {
		t->io_ns += e->dur_ns;
		switch (call_cause(call)) {
		case RPT_CAUSE_READ: t->read_ns += e->dur_ns; break;
		case RPT_CAUSE_WRITE: t->write_ns += e->dur_ns; break;
		default: t->other_ns += e->dur_ns; break;
		}
	}
	if (e->ino || e->dev) {
		rc = file_get(m, e->dev, e->ino, &f);
		if (rc)
			return rc;
		if (!f->first_ts || h->ts < f->first_ts)
			f->first_ts = h->ts;
		if (end > f->last_ts)
			f->last_ts = end;
		file_pid(f, h->pid);
		if (e->ret < 0)
			f->errors++;
	}
	if (gpuio_call__two_files(call) && (e->ino2 || e->dev2)) {
		size_t fi = f ? (size_t)(f - m->files) : 0;

		rc = file_get(m, e->dev2, e->ino2, &f2);
		if (rc)
			return rc;
		if (f)
			f = &m->files[fi];      /* files[] may have moved */
		file_pid(f2, h->pid);
	}
	if (rd || gpuio_call__two_files(call)) {
		m->vfs_rops++;
		m->vfs_rbytes += bytes;
		t->rops++;
		t->rbytes += bytes;
		p->rbytes += bytes;
		tl_point(m, m->tl_rbytes, end, (double)bytes);
		tl_span(m, m->tl_reads_inflight, h->ts, end, 1.0);
	} else if (wr) {
		m->vfs_wops++;
		m->vfs_wbytes += bytes;
		t->wops++;
		t->wbytes += bytes;
		p->wbytes += bytes;
		tl_point(m, m->tl_wbytes, end, (double)bytes);
	}
	if (!f)
		goto dst;
	if (rd || wr || gpuio_call__two_files(call)) {
		rc = file_xfer(m, f, e, !wr, e->offset, bytes, e->dur_ns, end);
		if (rc)
			return rc;
	} else {
		f->otime += e->dur_ns;
	}
	if (rd && bytes) {
		uint64_t *fl = e->fd >= 0 ? kmap__get(&m->fd_map, h->pid, (uint64_t)e->fd) : NULL;
		bool direct = fl && *fl ? ((*fl - 1) & KERNEL_O_DIRECT) :
			      (!fl && f->any_open && f->all_direct_opens);

		if (direct) {
			f->direct_rbytes += bytes;
		} else {
			uint64_t pages;

			/* hits are counted per file at the end: readahead adds pages
			 * that later calls read, so per-call misses overshoot */
			if (e->offset >= 0)
				pages = ((uint64_t)e->offset + bytes - 1) / RPT_PAGE -
					(uint64_t)e->offset / RPT_PAGE + 1;
			else
				pages = (bytes + RPT_PAGE - 1) / RPT_PAGE;
			f->pages += pages;
			f->miss_pages += e->cache_miss_pages;
		}
	}
	if (gpuio_call__is_open(call)) {
		bool direct = e->flags & KERNEL_O_DIRECT;

		f->all_direct_opens = f->any_open ? f->all_direct_opens && direct : direct;
		f->any_open = true;
		f->opens++;
		if (e->ret >= 0) {
			uint64_t *v;

			rc = kmap__upsert(&m->fd_map, h->pid, (uint64_t)e->ret, &v);
			if (rc < 0)
				return rc;
			*v = (uint64_t)e->flags + 1;
		}
	} else if (call == GPUIO_CALL_CLOSE) {
		uint64_t *v = e->fd >= 0 ? kmap__get(&m->fd_map, h->pid, (uint64_t)e->fd) : NULL;

		if (v)
			*v = 0;
		f->closes++;
		rc = ckpt_close(m, f, end, false);
		if (rc)
			return rc;
	} else if (call_is_sync(call)) {
		f->syncs++;
		rc = ckpt_close(m, f, end, true);
		if (rc)
			return rc;
	} else if (!rd && !wr && !gpuio_call__two_files(call)) {
		f->other_ops++;
	}
dst:
	if (f2)
		return file_xfer(m, f2, e, false, e->offset2, bytes, e->dur_ns, end);
	return 0;
}

static int on_block(struct rpt_model *m, const struct gpuio_block_event *b)
{
	uint64_t q = 0, s = 0, infl;
	unsigned op = b->op < 5 ? b->op : GPUIO_BLK_OTHER;
	struct rpt_dev *d;
	uint64_t *fv;
	int rc;

	note_time(m, b->hdr.ts, b->complete_ns > b->hdr.ts ? b->complete_ns : b->hdr.ts);
	rc = dev_get(m, b->dev, &d);
	if (rc)
		return rc;
	m->blk_reqs++;
	d->ops[op]++;
	d->bytes[op] += b->bytes;
	if (op == GPUIO_BLK_READ) {
		m->blk_rops++;
		m->blk_rbytes += b->bytes;
	} else if (op == GPUIO_BLK_WRITE) {
		m->blk_wops++;
		m->blk_wbytes += b->bytes;
		if (b->attr & GPUIO_BA_WRITEBACK)
			d->wb_bytes += b->bytes;
	}
	if (b->attr & GPUIO_BA_BDEV_PAGE)
		d->meta_bytes += b->bytes;
	if (b->rq_flags & GPUIO_RQ_SYNC)
		d->sync_ops++;
	if (b->error)
		d->errors++;
	if (!(b->attr & GPUIO_BA_NO_INSERT) && b->issue_ns > b->hdr.ts)
		q = b->issue_ns - b->hdr.ts;
	if (b->complete_ns > b->issue_ns)
		s = b->complete_ns - b->issue_ns;
	infl = b->complete_ns > b->hdr.ts ? b->complete_ns - b->hdr.ts : 0;
	d->q_sum += q;
	d->s_sum += s;
	d->q_hist[log2_idx(q / 1000)]++;
	d->s_hist[log2_idx(s / 1000)]++;
	d->inflight_ns += infl;
	if (op == GPUIO_BLK_READ)
		tl_point(m, d->rd, b->complete_ns, b->bytes);
	else if (op == GPUIO_BLK_WRITE)
		tl_point(m, d->wr, b->complete_ns, b->bytes);
	tl_span(m, d->depth, b->hdr.ts, b->hdr.ts + infl, 1.0);
	fv = b->ino ? kmap__get(&m->file_map, b->file_dev, b->ino) : NULL;
	if (fv) {
		struct rpt_file *f = &m->files[*fv];

		if (op == GPUIO_BLK_READ)
			f->blk_rbytes += b->bytes;
		else if (op == GPUIO_BLK_WRITE)
			f->blk_wbytes += b->bytes;
		f->blk_reqs++;
		f->blk_svc_ns += s;
	}
	return 0;
}

static int on_proc(struct rpt_model *m, const struct gpuio_proc_event *e)
{
	const struct gpuio_hdr *h = &e->hdr;
	struct rpt_thread *t;
	struct rpt_proc *p;
	int rc;

	note_time(m, h->ts, h->ts);
	rc = proc_get(m, h->pid, &p);
	if (rc)
		return rc;
	if (e->kind == GPUIO_PROC_EXIT) {
		p->exited = true;
		p->exit_ts = h->ts;
		if (h->ts > p->last_ts)
			p->last_ts = h->ts;
		return 0;
	}
	rc = thread_get(m, h->pid, h->tid, h->ts, h->ts, &t);
	if (rc)
		return rc;
	p = &m->procs[*kmap__get(&m->proc_map, h->pid, 0)];
	if (!p->first_ts || h->ts < p->first_ts)
		p->first_ts = h->ts;
	if (e->comm[0]) {
		memcpy(t->comm, e->comm, sizeof(t->comm));
		t->comm[15] = 0;
		if (h->tid == h->pid || !p->comm[0]) {
			memcpy(p->comm, e->comm, sizeof(p->comm));
			p->comm[15] = 0;
		}
	}
	if (e->kind == GPUIO_PROC_FORK)
		p->ppid = e->ppid;
	if ((e->kind == GPUIO_PROC_EXEC || e->kind == GPUIO_PROC_ATTACH) && e->args_len) {
		size_t n = e->args_len, max = h->size - offsetof(struct gpuio_proc_event, args);

		if (n > max)
			n = max;
		if (n > sizeof(p->args) - 1)
			n = sizeof(p->args) - 1;
		for (size_t i = 0; i < n; i++)
			p->args[i] = e->args[i] ? e->args[i] : ' ';
		p->args[n] = 0;
		while (n && p->args[n - 1] == ' ')
			p->args[--n] = 0;
	}
	return 0;
}

static int gpu_get(struct rpt_model *m, uint32_t pid, uint32_t dev, struct rpt_gpu **out)
{
	struct rpt_gpu *g;
	uint64_t *v;
	int rc = kmap__upsert(&m->gpu_map, pid, dev, &v);

	if (rc < 0)
		return rc;
	if (rc) {
		if (array_grow((void **)&m->gpus, &m->cgpus, m->ngpus + 1, sizeof(*m->gpus)))
			return -ENOMEM;
		g = &m->gpus[m->ngpus];
		memset(g, 0, sizeof(*g));
		g->pid = pid;
		g->device = dev;
		if (series_new(m, &g->busy))
			return -ENOMEM;
		for (int c = 0; c < RPT_CAUSE_N; c++)
			if (series_new(m, &g->cause[c]))
				return -ENOMEM;
		*v = m->ngpus++;
	}
	*out = &m->gpus[*v];
	return 0;
}

static int cmp_iv(const void *pa, const void *pb)
{
	const struct rpt_gpu_iv *a = pa, *b = pb;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	if (a->s != b->s)
		return a->s < b->s ? -1 : 1;
	return 0;
}

/* Sort the device intervals and merge those of one (pid, device) that overlap
 * or touch: what is left is busy periods, separated by the idle gaps. */
static void iv_compact(struct rpt_model *m)
{
	size_t o = 0;

	if (m->ngpu_ivs)
		qsort(m->gpu_ivs, m->ngpu_ivs, sizeof(*m->gpu_ivs), cmp_iv);
	for (size_t i = 0; i < m->ngpu_ivs; i++) {
		const struct rpt_gpu_iv *v = &m->gpu_ivs[i];
		struct rpt_gpu_iv *c = o ? &m->gpu_ivs[o - 1] : NULL;

		if (c && c->pid == v->pid && c->dev == v->dev && v->s <= c->e) {
			if (v->e > c->e)
				c->e = v->e;
		} else {
			m->gpu_ivs[o++] = *v;
		}
	}
	m->ngpu_ivs = o;
}

static int gpu_iv_add(struct rpt_model *m, struct rpt_gpu_iv **arr, size_t *n, size_t *cap,
		      uint64_t s, uint64_t e, uint32_t pid, uint32_t dev, uint8_t kind)
{
	struct rpt_gpu_iv *v;

	note_time(m, s, e);
	tl_fit(m, e);
	if (array_grow((void **)arr, cap, *n + 1, sizeof(**arr)))
		return -ENOMEM;
	v = &(*arr)[(*n)++];
	v->s = s;
	v->e = e;
	v->pid = pid;
	v->dev = dev;
	v->kind = kind;
	return 0;
}

static int on_gpu(struct rpt_model *m, const struct gpuio_hdr *h)
{
	struct rpt_gpu *g;
	struct rpt_proc *p;
	struct rpt_thread *t;
	uint64_t end, *v;
	uint32_t dev;
	uint8_t kind;
	int rc;

	switch (h->type) {
	case GPUIO_REC_GPU_INFO: {
		const struct gpuio_gpu_info *g = (const void *)h;

		m->gpu_info = *g;
		m->gpu_infos++;
		/* cumulative per collector (process): keep each one's last */
		rc = kmap__upsert(&m->fd_map, (1ull << 40) | h->pid, 0, &v);
		if (rc < 0)
			return rc;
		*v = g->cupti_dropped;
		rc = kmap__upsert(&m->fd_map, (2ull << 40) | h->pid, 0, &v);
		if (rc < 0)
			return rc;
		*v = g->write_errors;
		return 0;
	}
	case GPUIO_REC_GPU_KERNEL:
		end = ((const struct gpuio_gpu_kernel *)h)->end_ns;
		dev = ((const struct gpuio_gpu_kernel *)h)->device;
		kind = 0;
		break;
	case GPUIO_REC_GPU_MEMCPY:
		end = ((const struct gpuio_gpu_memcpy *)h)->end_ns;
		dev = ((const struct gpuio_gpu_memcpy *)h)->device;
		kind = 1;
		break;
	case GPUIO_REC_GPU_MEMSET:
		end = ((const struct gpuio_gpu_memset *)h)->end_ns;
		dev = ((const struct gpuio_gpu_memset *)h)->device;
		kind = 2;
		break;
	case GPUIO_REC_CUDA_API: {
		const struct gpuio_cuda_api *a = (const void *)h;

		if (a->kind != GPUIO_API_SYNC || a->end_ns < h->ts || !h->tid)
			return 0;
		rc = thread_get(m, h->pid, h->tid, h->ts, a->end_ns, &t);
		if (rc)
			return rc;
		t->cuda_sync_ns += a->end_ns - h->ts;
		return gpu_iv_add(m, &m->syncs, &m->nsyncs, &m->csyncs, h->ts, a->end_ns,
				  h->pid, h->tid, 0);
	}
	case GPUIO_REC_GPU_SYNC: {
		const struct gpuio_gpu_sync *s = (const void *)h;

		if (s->end_ns < h->ts || !h->tid)
			return 0;
		return gpu_iv_add(m, &m->syncs, &m->nsyncs, &m->csyncs, h->ts, s->end_ns,
				  h->pid, h->tid, 0);
	}
	default:
		return 0;
	}
	if (end < h->ts)
		return 0;       /* nonsense interval: not activity */
	rc = proc_get(m, h->pid, &p);
	if (rc)
		return rc;
	p->gpu = true;
	rc = gpu_get(m, h->pid, dev, &g);
	if (rc)
		return rc;
	if (!g->first || h->ts < g->first)
		g->first = h->ts;
	if (end > g->last)
		g->last = end;
	if (kind == 0) {
		g->kernels++;
		g->kernel_ns += end - h->ts;
	} else if (kind == 1) {
		g->copies++;
		g->copy_ns += end - h->ts;
		g->copy_bytes += ((const struct gpuio_gpu_memcpy *)h)->bytes;
	} else {
		g->memsets++;
	}
	rc = gpu_iv_add(m, &m->gpu_ivs, &m->ngpu_ivs, &m->cgpu_ivs, h->ts, end, h->pid, dev, kind);
	if (rc)
		return rc;
	if (m->ngpu_ivs >= m->gpu_compact_at) {
		/* back-to-back activity is one busy interval: memory follows the
		 * idle gaps, not the number of kernels */
		iv_compact(m);
		m->gpu_compact_at = m->ngpu_ivs * 2 > (1u << 16) ? m->ngpu_ivs * 2 : (1u << 16);
	}
	return 0;
}

static int pass1(struct rpt_model *m)
{
	const struct gpuio_hdr *h;
	int rc;

	while ((rc = gpuio_cap_reader__next(m->r, &h)) > 0) {
		m->records++;
		m->counts[h->type <= GPUIO_REC_GPU_SYM ? h->type : 0]++;
		switch (h->type) {
		case GPUIO_REC_VFS:
			rc = on_vfs(m, (const void *)h);
			break;
		case GPUIO_REC_BLOCK:
			rc = on_block(m, (const void *)h);
			break;
		case GPUIO_REC_PATH:
			rc = on_path(m, (const void *)h);
			break;
		case GPUIO_REC_PROC:
			rc = on_proc(m, (const void *)h);
			break;
		case GPUIO_REC_STATS:
			gpuio_stats__from_record(h, &m->stats);
			m->have_stats = true;
			rc = 0;
			break;
		case GPUIO_REC_DEVNAME: {
			const struct gpuio_devname_event *d = (const void *)h;
			struct rpt_dev *dv;

			rc = dev_get(m, d->dev, &dv);
			if (!rc && d->name[0]) {
				memcpy(dv->name, d->name, sizeof(dv->name));
				dv->name[sizeof(dv->name) - 1] = 0;
			}
			break;
		}
		default:
			rc = on_gpu(m, h);
			break;
		}
		if (rc)
			return rc;
	}
	if (rc < 0) {
		snprintf(m->err, sizeof(m->err), "%s: %s; the capture is damaged from there on",
			 m->path, gpuio_cap_reader__error(m->r));
		return -EBADMSG;
	}
	m->truncated = gpuio_cap_reader__truncated(m->r);
	m->trunc_offset = gpuio_cap_reader__offset(m->r);
	return 0;
}

/* ---- GPU busy time and idle gaps ---- */

static int gpu_build(struct rpt_model *m)
{
	size_t i = 0;

	iv_compact(m);
	while (i < m->ngpu_ivs) {
		struct rpt_gpu *g = &m->gpus[*kmap__get(&m->gpu_map, m->gpu_ivs[i].pid,
							 m->gpu_ivs[i].dev)];
		size_t j = i;

		/* compacted: one interval per busy period, gaps in between */
		g->gap0 = m->ngaps;
		for (; j < m->ngpu_ivs && m->gpu_ivs[j].pid == g->pid &&
		       m->gpu_ivs[j].dev == g->device; j++) {
			const struct rpt_gpu_iv *v = &m->gpu_ivs[j];

			g->busy_ns += v->e - v->s;
			tl_span(m, g->busy, v->s, v->e, 1.0);
			if (j > i) {
				struct rpt_gap *gp;

				if (array_grow((void **)&m->gaps, &m->cgaps, m->ngaps + 1,
					     sizeof(*m->gaps)))
					return -ENOMEM;
				gp = &m->gaps[m->ngaps++];
				memset(gp, 0, sizeof(*gp));
				gp->s = m->gpu_ivs[j - 1].e;
				gp->e = v->s;
				gp->gpu = (uint32_t)(g - m->gpus);
				gp->top = -1;
				g->idle_ns += gp->e - gp->s;
				g->ngaps++;
			}
		}
		g->ngap = m->ngaps - g->gap0;
		m->gpu_idle_ns += g->idle_ns;
		m->gpu_busy_ns += g->busy_ns;
		m->gpu_span_ns += g->last - g->first;
		i = j;
	}
	/* the intervals are not needed any more */
	free(m->gpu_ivs);
	m->gpu_ivs = NULL;
	m->ngpu_ivs = m->cgpu_ivs = 0;
	/* the largest gaps, for the report's list (and their per-file detail) */
	for (size_t k = 0; k < m->ngaps; k++) {
		uint64_t len = m->gaps[k].e - m->gaps[k].s;
		size_t pos = m->ntop_gaps;

		while (pos > 0 && len > m->gaps[m->top_gaps[pos - 1]].e -
					m->gaps[m->top_gaps[pos - 1]].s)
			pos--;
		if (pos >= RPT_TOP_GAPS)
			continue;
		if (m->ntop_gaps < RPT_TOP_GAPS)
			m->ntop_gaps++;
		memmove(&m->top_gaps[pos + 1], &m->top_gaps[pos],
			(m->ntop_gaps - 1 - pos) * sizeof(m->top_gaps[0]));
		m->top_gaps[pos] = k;
	}
	for (size_t k = 0; k < m->ntop_gaps; k++)
		m->gaps[m->top_gaps[k]].top = (int)k;
	return 0;
}

/* First gap of gpu g whose end is after t (gaps of one GPU are disjoint). */
static size_t gap_first(const struct rpt_model *m, const struct rpt_gpu *g, uint64_t t)
{
	size_t lo = g->gap0, hi = g->gap0 + g->ngap;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->gaps[mid].e <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int cmp_seg_key(const void *pa, const void *pb)
{
	const struct rpt_seg *a = pa, *b = pb;

	if (a->cause != b->cause)
		return a->cause < b->cause ? -1 : 1;
	if (a->file != b->file)
		return a->file < b->file ? -1 : 1;
	return a->s < b->s ? -1 : a->s > b->s;
}

/* Too many host segments in one gap: merge those of one (cause, file) that
 * touch, then those closer than a growing tolerance, then forget files. */
static void gap_compact(struct rpt_model *m, struct rpt_gap *gp)
{
	uint64_t tol = 0;
	bool by_file = true;

	for (;;) {
		size_t o = 0;

		if (gp->nsegs)
			qsort(gp->segs, gp->nsegs, sizeof(*gp->segs), cmp_seg_key);
		for (size_t i = 0; i < gp->nsegs; i++) {
			struct rpt_seg *c = &gp->segs[i];

			if (o && gp->segs[o - 1].cause == c->cause &&
			    gp->segs[o - 1].file == c->file && c->s <= gp->segs[o - 1].e + tol) {
				if (c->e > gp->segs[o - 1].e)
					gp->segs[o - 1].e = c->e;
			} else {
				gp->segs[o++] = *c;
			}
		}
		gp->nsegs = (uint32_t)o;
		if (gp->nsegs <= RPT_GAP_SEGS_MAX / 2)
			break;
		gp->approx = true;
		m->gaps_approx = true;
		if (tol > gp->e - gp->s && by_file) {
			for (size_t i = 0; i < gp->nsegs; i++)
				gp->segs[i].file = 0;
			by_file = false;
			tol = 0;
			continue;
		}
		tol = tol ? tol * 2 : 1000;
	}
}

static int gap_add(struct rpt_model *m, struct rpt_gap *gp, uint64_t s, uint64_t e,
		   uint8_t cause, uint32_t file)
{
	struct rpt_seg *sg;

	if (gp->nsegs >= RPT_GAP_SEGS_MAX)
		gap_compact(m, gp);
	if (gp->nsegs >= gp->csegs) {
		uint32_t nc = gp->csegs ? gp->csegs * 2 : 8;
		void *p = realloc(gp->segs, nc * sizeof(*gp->segs));

		if (!p)
			return -ENOMEM;
		gp->segs = p;
		gp->csegs = nc;
	}
	sg = &gp->segs[gp->nsegs++];
	sg->s = s;
	sg->e = e;
	sg->cause = cause;
	sg->file = file;
	return 0;
}

/* Clip host interval [s, e) of pid to the idle gaps of pid's GPUs. Returns
 * the total overlap (ns), or -ENOMEM as a negative value. */
static int64_t host_clip(struct rpt_model *m, uint32_t pid, uint64_t s, uint64_t e,
			 uint8_t cause, uint32_t file)
{
	int64_t total = 0;

	if (e <= s)
		return 0;
	for (size_t gi = 0; gi < m->ngpus; gi++) {
		const struct rpt_gpu *g = &m->gpus[gi];

		if (g->pid != pid || e <= g->first || s >= g->last)
			continue;
		for (size_t k = gap_first(m, g, s); k < g->gap0 + g->ngap && m->gaps[k].s < e; k++) {
			struct rpt_gap *gp = &m->gaps[k];
			uint64_t a = s > gp->s ? s : gp->s, b = e < gp->e ? e : gp->e;

			if (b <= a)
				continue;
			if (gap_add(m, gp, a, b, cause, file))
				return -ENOMEM;
			total += (int64_t)(b - a);
		}
	}
	return total;
}

static int pass2(struct rpt_model *m)
{
	const struct gpuio_hdr *h;
	int rc;

	rc = gpuio_cap_reader__rewind(m->r);
	if (rc)
		return rc;
	while ((rc = gpuio_cap_reader__next(m->r, &h)) > 0) {
		const struct gpuio_vfs_event *e = (const void *)h;
		uint64_t *pv, *fv;
		uint32_t file = 0;
		enum rpt_cause c;
		int64_t ov;

		if (h->type != GPUIO_REC_VFS || gpuio_call__is_async(e->call))
			continue;
		pv = kmap__get(&m->proc_map, h->pid, 0);
		if (!pv || !m->procs[*pv].gpu)
			continue;
		c = call_cause(e->call);
		fv = (e->ino || e->dev) ? kmap__get(&m->file_map, e->dev, e->ino) : NULL;
		if (fv)
			file = (uint32_t)*fv + 1;
		ov = host_clip(m, h->pid, h->ts, end_of(h->ts, e->dur_ns), c,
			       c == RPT_CAUSE_READ ? file : 0);
		if (ov < 0)
			return (int)ov;
		if (ov > 0 && c == RPT_CAUSE_READ) {
			m->gap_reads_ns += (uint64_t)ov;
			if (fv) {
				m->files[*fv].gpu_idle_read_ns += (uint64_t)ov;
				m->files[*fv].gpu_idle_miss_pages += e->cache_miss_pages;
			}
		}
	}
	if (rc < 0) {
		snprintf(m->err, sizeof(m->err), "%s: %s (the capture changed while reading it)",
			 m->path, gpuio_cap_reader__error(m->r));
		return -EBADMSG;
	}
	for (size_t i = 0; i < m->nsyncs; i++) {
		const struct rpt_gpu_iv *v = &m->syncs[i];

		if (host_clip(m, v->pid, v->s, v->e, RPT_CAUSE_CUDA_SYNC, 0) < 0)
			return -ENOMEM;
	}
	return 0;
}

struct edge {
	uint64_t t;
	int8_t d;
	uint8_t cause;
};

static int cmp_edge(const void *pa, const void *pb)
{
	const struct edge *a = pa, *b = pb;

	return a->t < b->t ? -1 : a->t > b->t;
}

static int cmp_gap_file(const void *pa, const void *pb)
{
	const struct rpt_gap_file *a = pa, *b = pb;

	if (a->file != b->file)
		return a->file < b->file ? -1 : 1;
	return 0;
}

/* Split each gap into causes: at each instant the highest-priority cause
 * among the host segments covering it, else "other". */
static int gaps_resolve(struct rpt_model *m)
{
	struct edge *ed = NULL;
	size_t ced = 0;
	int rc = 0;

	for (size_t k = 0; k < m->ngaps; k++) {
		struct rpt_gap *gp = &m->gaps[k];
		struct rpt_gpu *g = &m->gpus[gp->gpu];
		uint32_t cnt[RPT_CAUSE_N] = { 0 };
		uint64_t prev = gp->s;
		size_t n = 0;

		if (array_grow((void **)&ed, &ced, 2 * (size_t)gp->nsegs + 1, sizeof(*ed))) {
			rc = -ENOMEM;
			break;
		}
		for (uint32_t i = 0; i < gp->nsegs; i++) {
			ed[n++] = (struct edge){ gp->segs[i].s, 1, gp->segs[i].cause };
			ed[n++] = (struct edge){ gp->segs[i].e, -1, gp->segs[i].cause };
		}
		ed[n++] = (struct edge){ gp->e, 0, RPT_CAUSE_NONE };
		if (n)
			qsort(ed, n, sizeof(*ed), cmp_edge);
		for (size_t i = 0; i < n; i++) {
			if (ed[i].t > prev) {
				int c = 0;
				uint64_t end = ed[i].t < gp->e ? ed[i].t : gp->e;

				while (c < RPT_CAUSE_NONE && !cnt[c])
					c++;
				if (end > prev) {
					gp->cause_ns[c] += end - prev;
					tl_span(m, g->cause[c], prev, end, 1.0);
				}
				prev = ed[i].t;
			}
			if (ed[i].d > 0)
				cnt[ed[i].cause]++;
			else if (ed[i].d < 0 && cnt[ed[i].cause])
				cnt[ed[i].cause]--;
		}
		for (int c = 0; c < RPT_CAUSE_N; c++) {
			g->cause_ns[c] += gp->cause_ns[c];
			m->cause_ns[c] += gp->cause_ns[c];
		}
		if (gp->top >= 0 && gp->nsegs) {
			/* per-file read time in this gap: the few largest */
			struct rpt_gap_file *tmp = calloc(gp->nsegs, sizeof(*tmp));
			size_t nt = 0, o = 0;

			if (!tmp) {
				rc = -ENOMEM;
				break;
			}
			for (uint32_t i = 0; i < gp->nsegs; i++)
				if (gp->segs[i].cause == RPT_CAUSE_READ && gp->segs[i].file)
					tmp[nt++] = (struct rpt_gap_file){ gp->segs[i].file,
						gp->segs[i].e - gp->segs[i].s };
			if (nt)
				qsort(tmp, nt, sizeof(*tmp), cmp_gap_file);
			for (size_t i = 0; i < nt; i++) {
				if (o && tmp[o - 1].file == tmp[i].file)
					tmp[o - 1].ns += tmp[i].ns;
				else
					tmp[o++] = tmp[i];
			}
			for (size_t i = 0; i < o; i++) {
				struct rpt_gap_file *top = m->top_gap_files[gp->top];

				for (int j = 0; j < RPT_GAP_FILES; j++) {
					if (tmp[i].ns > top[j].ns) {
						memmove(&top[j + 1], &top[j],
							(RPT_GAP_FILES - 1 - j) * sizeof(*top));
						top[j] = tmp[i];
						break;
					}
				}
			}
			free(tmp);
		}
		free(gp->segs);
		gp->segs = NULL;
		gp->nsegs = gp->csegs = 0;
	}
	free(ed);
	return rc;
}

/* GPU idle time of pid's devices inside [s, e). */
static uint64_t gpu_idle_in(const struct rpt_model *m, uint32_t pid, uint64_t s, uint64_t e)
{
	uint64_t total = 0;

	for (size_t gi = 0; gi < m->ngpus; gi++) {
		const struct rpt_gpu *g = &m->gpus[gi];

		if (g->pid != pid)
			continue;
		for (size_t k = gap_first(m, g, s); k < g->gap0 + g->ngap && m->gaps[k].s < e; k++) {
			uint64_t a = s > m->gaps[k].s ? s : m->gaps[k].s;
			uint64_t b = e < m->gaps[k].e ? e : m->gaps[k].e;

			if (b > a)
				total += b - a;
		}
	}
	return total;
}

/* ---- ranking, names, recommendations ---- */

static const struct rpt_model *rank_m;

static int cmp_time(const void *pa, const void *pb)
{
	const struct rpt_file *a = &rank_m->files[*(const size_t *)pa];
	const struct rpt_file *b = &rank_m->files[*(const size_t *)pb];
	uint64_t x = a->rtime + a->wtime + a->otime, y = b->rtime + b->wtime + b->otime;

	return x > y ? -1 : x < y;
}

static int cmp_bytes(const void *pa, const void *pb)
{
	const struct rpt_file *a = &rank_m->files[*(const size_t *)pa];
	const struct rpt_file *b = &rank_m->files[*(const size_t *)pb];
	uint64_t x = a->rbytes + a->wbytes, y = b->rbytes + b->wbytes;

	return x > y ? -1 : x < y;
}

static int cmp_ops(const void *pa, const void *pb)
{
	const struct rpt_file *a = &rank_m->files[*(const size_t *)pa];
	const struct rpt_file *b = &rank_m->files[*(const size_t *)pb];
	uint64_t x = a->rops + a->wops + a->opens + a->closes + a->syncs + a->other_ops;
	uint64_t y = b->rops + b->wops + b->opens + b->closes + b->syncs + b->other_ops;

	return x > y ? -1 : x < y;
}

size_t *rpt_model__ranked_files(const struct rpt_model *m, unsigned top, size_t *n)
{
	size_t *all = malloc((m->nfiles + 1) * sizeof(*all));
	size_t *out = malloc((m->nfiles + 1) * sizeof(*out));
	unsigned char *in = calloc(m->nfiles + 1, 1);
	size_t k = 0, lim = top && top < m->nfiles ? top : m->nfiles;
	int (*cmps[])(const void *, const void *) = { cmp_time, cmp_bytes, cmp_ops };

	if (!all || !out || !in) {
		free(all);
		free(out);
		free(in);
		*n = 0;
		return NULL;
	}
	rank_m = m;
	for (int c = 0; c < 3; c++) {
		for (size_t i = 0; i < m->nfiles; i++)
			all[i] = i;
		if (m->nfiles)
			qsort(all, m->nfiles, sizeof(*all), cmps[c]);
		for (size_t i = 0; i < lim; i++)
			if (!in[all[i]]) {
				in[all[i]] = 1;
				out[k++] = all[i];
			}
	}
	/* shown by time, whatever ranking brought them in */
	if (k)
		qsort(out, k, sizeof(*out), cmp_time);
	free(all);
	free(in);
	*n = k;
	return out;
}

static int name_files(struct rpt_model *m)
{
	for (size_t i = 0; i < m->nfiles; i++) {
		struct rpt_file *f = &m->files[i];
		uint64_t *v = kmap__get(&m->path_map, f->dev, f->ino);

		if (v) {
			f->path = m->paths[*v].s;
			f->path_len = m->paths[*v].len;
		} else {
			char buf[80];
			struct path_ent *pe;
			int len = snprintf(buf, sizeof(buf), "?dev=%u:%u,ino=%llu", f->dev >> 20,
					   f->dev & 0xfffff, (unsigned long long)f->ino);

			/* kept in paths[] so that rpt_model__free frees it */
			if (array_grow((void **)&m->paths, &m->cpaths, m->npaths + 1,
				     sizeof(*m->paths)))
				return -ENOMEM;
			pe = &m->paths[m->npaths++];
			pe->s = strdup(buf);
			if (!pe->s)
				return -ENOMEM;
			pe->len = (uint32_t)len;
			f->path = pe->s;
			f->path_len = pe->len;
			m->unresolved++;
		}
	}
	return 0;
}

static struct rpt_reco *reco_new(struct rpt_model *m, const char *kind)
{
	struct rpt_reco *r;

	if (m->nrecos >= sizeof(m->recos) / sizeof(m->recos[0]))
		return NULL;
	r = &m->recos[m->nrecos++];
	memset(r, 0, sizeof(*r));
	snprintf(r->kind, sizeof(r->kind), "%s", kind);
	return r;
}

static size_t appendf(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static size_t appendf(char *buf, size_t len, const char *fmt, ...)
{
	size_t used = strnlen(buf, len);
	va_list ap;

	if (used + 1 >= len)
		return used;
	va_start(ap, fmt);
	vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
	return strnlen(buf, len);
}

static void recommend(struct rpt_model *m)
{
	char a[32], b[32], c[32];
	struct rpt_reco *r;

	/* 1. the GPU idles on file reads that are not overlapped */
	for (size_t gi = 0; gi < m->ngpus; gi++) {
		const struct rpt_gpu *g = &m->gpus[gi];
		uint64_t span = g->last - g->first, rd = g->cause_ns[RPT_CAUSE_READ];
		double conc;

		if (!span || rd * 10 < span)
			continue;
		conc = m->cause_ns[RPT_CAUSE_READ] ?
		       (double)m->gap_reads_ns / (double)m->cause_ns[RPT_CAUSE_READ] : 0;
		r = reco_new(m, "loader");
		if (!r)
			break;
		rpt_fmt_dur(rd, a, sizeof(a));
		rpt_fmt_dur(span, b, sizeof(b));
		snprintf(r->text, sizeof(r->text), conc < 1.5 ?
			 "GPU %u of pid %u (%s) waits for file reads that run one at a time: "
			 "use more data-loader workers or prefetch the next batches" :
			 "GPU %u of pid %u (%s) waits for file reads although several are in "
			 "flight: prefetch further ahead or move the data to faster storage",
			 g->device, g->pid, rpt_proc_comm(m, g->pid));
		snprintf(r->evidence, sizeof(r->evidence),
			 "GPU idle %s (%.1f%% of its %s active span) while host threads were "
			 "blocked in file reads; %.2f reads in flight on average during those gaps",
			 a, 100.0 * (double)rd / (double)span, b, conc);
	}
	/* 2. checkpoints stall the GPU */
	if (m->nckpts && m->gpu_span_ns) {
		uint64_t lost = 0, bytes = 0, dur = 0;

		for (size_t i = 0; i < m->nckpts; i++) {
			lost += m->ckpts[i].gpu_lost_ns;
			bytes += m->ckpts[i].bytes;
			dur += m->ckpts[i].e - m->ckpts[i].s;
		}
		if (lost * 20 >= m->gpu_span_ns && (r = reco_new(m, "async_checkpoint"))) {
			rpt_fmt_dur(lost, a, sizeof(a));
			rpt_fmt_bytes(bytes, b, sizeof(b));
			rpt_fmt_dur(dur, c, sizeof(c));
			snprintf(r->text, sizeof(r->text),
				 "checkpoints stall the GPU: write them asynchronously (copy the state "
				 "to host memory, write and fsync from a background thread or process)");
			snprintf(r->evidence, sizeof(r->evidence),
				 "%zu checkpoint(s), %s written in %s; GPU idle %s during them "
				 "(%.1f%% of the GPU active span)", m->nckpts, b, c, a,
				 100.0 * (double)lost / (double)m->gpu_span_ns);
		}
	}
	/* 3. many small files, each read once */
	if (m->small_files >= 64 && m->small_files * 2 >= m->read_files &&
	    (r = reco_new(m, "shard"))) {
		rpt_fmt_bytes(m->small_files ? m->small_bytes / m->small_files : 0, a, sizeof(a));
		snprintf(r->text, sizeof(r->text),
			 "many small files, each read once: pack them into larger shards "
			 "(tar/WebDataset, TFRecord, HDF5, ...) of 100 MiB or more");
		snprintf(r->evidence, sizeof(r->evidence),
			 "%llu of %llu files read are under 1 MiB and read once (mean %s, %llu read "
			 "calls); per-file opens and metadata dominate such loads",
			 (unsigned long long)m->small_files, (unsigned long long)m->read_files, a,
			 (unsigned long long)m->small_rops);
	}
	/* 4. hot, re-read files with device latency: stage them (tf-Darshan) */
	{
		size_t nf = 0;
		char ev[600] = "";

		for (size_t i = 0; i < m->nfiles && nf < 5; i++) {
			const struct rpt_file *f = &m->files[i];
			double reread = f->extent ? (double)f->rbytes / (double)f->extent : 0;
			uint64_t miss_b = f->miss_pages * RPT_PAGE;
			uint64_t svc = f->blk_reqs ? f->blk_svc_ns / f->blk_reqs : 0;

			if (f->rbytes * 20 < m->vfs_rbytes || reread < 1.5 || !f->rops)
				continue;
			/* the cache did not keep it, or the device is slow for it */
			if (!((double)miss_b >= 1.5 * (double)f->extent ||
			      (f->blk_reqs && svc >= 2000000 && f->miss_pages)))
				continue;
			rpt_fmt_bytes(f->rbytes, a, sizeof(a));
			rpt_fmt_dur(f->rlat.n ? f->rlat.sum / f->rlat.n : 0, b, sizeof(b));
			appendf(ev, sizeof(ev), "%s%.*s: read %s (%.1fx its size), %.0f%% of pages "
				"missed the cache, mean read %s, device service %.2f ms",
				nf ? "; " : "", (int)(f->path_len < 120 ? f->path_len : 120), f->path,
				a, reread, f->pages ? 100.0 * (1 - rpt_ratio(f->hit_pages, f->pages)) : 0,
				b, (double)svc / 1e6);
			nf++;
		}
		if (nf && (r = reco_new(m, "stage"))) {
			snprintf(r->text, sizeof(r->text),
				 "stage %zu hot, re-read file(s) to faster storage (local NVMe, tmpfs) "
				 "or cache them in memory: they are read repeatedly from the device",
				 nf);
			snprintf(r->evidence, sizeof(r->evidence), "%s", ev);
		}
	}
}

static void small_files(struct rpt_model *m)
{
	for (size_t i = 0; i < m->nfiles; i++) {
		struct rpt_file *f = &m->files[i];

		/* pages the buffered reads touched that no read had to add */
		f->hit_pages = f->pages - (f->miss_pages < f->pages ? f->miss_pages : f->pages);
		m->pages += f->pages;
		m->hit_pages += f->hit_pages;
		m->miss_pages += f->miss_pages;

		if (!f->rops || !f->rbytes)
			continue;
		m->read_files++;
		if (f->extent && f->extent < RPT_SMALL_FILE && f->rbytes <= f->extent) {
			m->small_files++;
			m->small_bytes += f->rbytes;
			m->small_rops += f->rops;
		}
	}
}

int rpt_model__load(struct rpt_model *m, const char *path, const struct rpt_opts *opt)
{
	struct stat sb;
	int rc;

	memset(m, 0, sizeof(*m));
	m->path = path;
	if (opt)
		m->opt = *opt;
	rc = gpuio_cap_reader__open(path, &m->r, m->err, sizeof(m->err));
	if (rc)
		return rc;
	m->hdr = gpuio_cap_reader__header(m->r);
	if (stat(path, &sb) == 0)
		m->file_size = (uint64_t)sb.st_size;
	m->tl_t0 = m->hdr->monotonic_ns;
	m->tl_width = RPT_TL_WIDTH0;
	if (series_new(m, &m->tl_rbytes) || series_new(m, &m->tl_wbytes) ||
	    series_new(m, &m->tl_reads_inflight))
		goto nomem;
	rc = pass1(m);
	if (rc == -ENOMEM)
		goto nomem;
	if (rc)
		return rc;
	for (size_t i = 0; i < m->fd_map.cap; i++) {
		const struct kslot *s = &m->fd_map.slots[i];

		if (s->used && (s->a >> 40) == 1)
			m->cupti_dropped += s->val;
		else if (s->used && (s->a >> 40) == 2)
			m->gpu_write_errors += s->val;
	}
	if (gpu_build(m))
		goto nomem;
	if (m->ngaps && !m->opt.no_gpu_pass) {
		rc = pass2(m);
		if (rc == -ENOMEM)
			goto nomem;
		if (rc)
			return rc;
	}
	if (gaps_resolve(m))
		goto nomem;
	for (size_t i = 0; i < m->nckpts; i++)
		m->ckpts[i].gpu_lost_ns = gpu_idle_in(m, m->ckpts[i].pid, m->ckpts[i].s,
						      m->ckpts[i].e);
	if (name_files(m))
		goto nomem;
	small_files(m);         /* also page-cache totals */
	recommend(m);
	return 0;
nomem:
	snprintf(m->err, sizeof(m->err), "%s: out of memory", path);
	return -ENOMEM;
}

void rpt_model__free(struct rpt_model *m)
{
	if (m->r)
		gpuio_cap_reader__close(m->r);
	for (size_t i = 0; i < m->nfiles; i++) {
		free(m->files[i].lat.b);
		free(m->files[i].rlat.b);
	}
	for (size_t i = 0; i < m->npaths; i++)
		free(m->paths[i].s);
	for (size_t i = 0; i < m->nseries; i++)
		free(m->series[i]);
	for (size_t i = 0; i < m->ngaps; i++)
		free(m->gaps[i].segs);
	free(m->series);
	free(m->files);
	free(m->streams);
	free(m->threads);
	free(m->procs);
	free(m->devs);
	free(m->paths);
	free(m->gpu_ivs);
	free(m->syncs);
	free(m->gpus);
	free(m->gaps);
	free(m->ckpts);
	kmap__free(&m->file_map);
	kmap__free(&m->stream_map);
	kmap__free(&m->fd_map);
	kmap__free(&m->thread_map);
	kmap__free(&m->proc_map);
	kmap__free(&m->dev_map);
	kmap__free(&m->path_map);
	kmap__free(&m->gpu_map);
	memset(m, 0, sizeof(*m));
}
