// SPDX-License-Identifier: MIT
/*
 * report_load.c — pass 1 of the report: every record folded into files,
 * processes, threads and devices (latencies, patterns, page-cache misses,
 * checkpoints, block service).
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
#include "report/report_net.h"
#include "report/report_sites.h"
#include "report/report_priv.h"
#include "model/proc_names.h"

/* ---- tables ---- */

int rpt_file_get(struct rpt_model *m, uint32_t dev, uint64_t ino, struct rpt_file **out)
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

int rpt_proc_get(struct rpt_model *m, uint32_t pid, struct rpt_proc **out)
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

int rpt_thread_get(struct rpt_model *m, uint32_t pid, uint32_t tid, uint64_t ts,
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
		rc = rpt_proc_get(m, pid, &p);
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

int rpt_dev_get(struct rpt_model *m, uint32_t dev, struct rpt_dev **out)
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
		if (rpt_series_new(m, &d->rd) || rpt_series_new(m, &d->wr) || rpt_series_new(m, &d->depth))
			return -ENOMEM;
		*v = m->ndevs++;
	}
	*out = &m->devs[*v];
	return 0;
}

void rpt_note_time(struct rpt_model *m, uint64_t ts, uint64_t end)
{
	if (!ts)
		return;
	if (!m->first_ts || ts < m->first_ts)
		m->first_ts = ts;
	if (end > m->last_ts)
		m->last_ts = end;
}

void rpt_file_pid(struct rpt_file *f, uint32_t pid)
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
		f->big_bursts++;
		/* from the start (or at an unknown offset): the file written anew */
		if (f->burst_off <= 0)
			f->rewrites++;
	}
	f->burst_bytes = 0;
	f->burst_writes = 0;
	return 0;
}

static bool call_is_sync(unsigned call)
{
	return call == GPUIO_CALL_FSYNC || call == GPUIO_CALL_FDATASYNC ||
	       call == GPUIO_CALL_SYNC_FILE_RANGE || call == GPUIO_CALL_AIO_FSYNC ||
	       call == GPUIO_CALL_AIO_FDSYNC;
}

/* Which idle cause a host call is. */
enum rpt_cause rpt_call_cause(unsigned call)
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
		if (bytes && f->wbytes)
			f->rd_after_wr = true;
		rc |= rpt_hist_add(&f->rlat, dur);
	} else {
		f->wops++;
		f->wbytes += bytes;
		f->wtime += dur;
		if (gpuio_call__is_write(e->call) && (e->fd == 1 || e->fd == 2))
			f->stdio = true;
		if (bytes) {
			if (!f->burst_bytes) {
				f->burst_start = e->hdr.ts;
				f->burst_off = off;
				f->burst_pid = e->hdr.pid;
				f->burst_tid = e->hdr.tid;
			}
			f->burst_bytes += bytes;
			f->burst_writes++;
			if (end > f->burst_end)
				f->burst_end = end;
		}
	}
	rc |= rpt_hist_add(&f->lat, dur);
	f->size_hist[rpt_log2_idx(e->requested ? e->requested : bytes)]++;
	if (off >= 0 && bytes && (uint64_t)off + bytes > f->extent)
		f->extent = (uint64_t)off + bytes;
	rc |= file_pattern(m, f, e->hdr.tid, off, bytes);
	return rc ? -ENOMEM : 0;
}

/*
 * Did the call fetch data: a read of a file or a socket, a page fault on a
 * file, a socket receive (not a pipe: a queue's hand-over is not a source).
 */
bool rpt_call_fetches_data(const struct gpuio_vfs_event *e)
{
	/* a page fault that brought nothing in still waited for a page being read */
	if (e->ret <= 0 && e->call != GPUIO_CALL_PAGE_FAULT)
		return false;
	switch (e->call) {
	case GPUIO_CALL_PAGE_FAULT:
	case GPUIO_CALL_RECVFROM: case GPUIO_CALL_RECVMSG: case GPUIO_CALL_RECVMMSG:
		return true;
	}
	return gpuio_call__is_read(e->call) &&
	       (e->ftype == GPUIO_FT_REG || e->ftype == GPUIO_FT_BLK || e->ftype == GPUIO_FT_SOCK);
}

/* The calling thread's I/O time by cause (async io_uring requests overlap: not counted). */
static void thread_time(struct rpt_thread *t, const struct gpuio_vfs_event *e)
{
	if (gpuio_call__is_async(e->call))
		return;
	t->io_ns += e->dur_ns;
	if (rpt_call_fetches_data(e))
		t->data_ops++;
	switch (rpt_call_cause(e->call)) {
	case RPT_CAUSE_READ: t->read_ns += e->dur_ns; break;
	case RPT_CAUSE_WRITE: t->write_ns += e->dur_ns; break;
	default: t->other_ns += e->dur_ns; break;
	}
}

/* Not a file of data: a pipe, socket or character device (its role is other). */
bool rpt_special_ftype(unsigned ftype)
{
	return ftype == GPUIO_FT_FIFO || ftype == GPUIO_FT_SOCK || ftype == GPUIO_FT_CHR;
}

/* The call's file (and destination file of two-file calls), first/last seen. */
static int call_files(struct rpt_model *m, const struct gpuio_vfs_event *e, uint64_t end,
		      struct rpt_file **fo, struct rpt_file **f2o)
{
	const struct gpuio_hdr *h = &e->hdr;
	struct rpt_file *f = NULL, *f2 = NULL;
	int rc;

	/* io_submit names its first iocb's file, whose own records are the iocbs' */
	if ((e->ino || e->dev) && !gpuio_call__is_aio_syscall(e->call)) {
		rc = rpt_file_get(m, e->dev, e->ino, &f);
		if (rc)
			return rc;
		if (!f->first_ts || h->ts < f->first_ts)
			f->first_ts = h->ts;
		if (end > f->last_ts)
			f->last_ts = end;
		rpt_file_pid(f, h->pid);
		if (e->ret < 0)
			f->errors++;
		f->special |= rpt_special_ftype(e->ftype);
	}
	if (gpuio_call__two_files(e->call) && (e->ino2 || e->dev2)) {
		size_t fi = f ? (size_t)(f - m->files) : 0;

		rc = rpt_file_get(m, e->dev2, e->ino2, &f2);
		if (rc)
			return rc;
		if (f)
			f = &m->files[fi];      /* files[] may have moved */
		rpt_file_pid(f2, h->pid);
		f2->special |= rpt_special_ftype(e->ftype2);
	}
	*fo = f;
	*f2o = f2;
	return 0;
}

/* Totals and timelines of bytes moved, per run, thread and process. */
static void count_bytes(struct rpt_model *m, struct rpt_thread *t, struct rpt_proc *p,
			const struct gpuio_vfs_event *e, uint64_t end, uint64_t bytes, bool rd, bool wr)
{
	if (rd || gpuio_call__two_files(e->call)) {
		m->vfs_rops++;
		m->vfs_rbytes += bytes;
		t->rops++;
		t->rbytes += bytes;
		p->rbytes += bytes;
		rpt_tl_point(m, m->tl_rbytes, end, (double)bytes);
		rpt_tl_span(m, m->tl_reads_inflight, e->hdr.ts, end, 1.0);
	} else if (wr) {
		m->vfs_wops++;
		m->vfs_wbytes += bytes;
		t->wops++;
		t->wbytes += bytes;
		p->wbytes += bytes;
		rpt_tl_point(m, m->tl_wbytes, end, (double)bytes);
	}
}

/*
 * Where a transfer's bytes are in the file: a page fault's are the pages it
 * brought in, from the lowest (offset2), not the one page it touched.
 */
static int64_t xfer_offset(const struct gpuio_vfs_event *e)
{
	return e->call == GPUIO_CALL_PAGE_FAULT && e->offset2 >= 0 ? e->offset2 : e->offset;
}

/* A buffered read's pages and page-cache misses (O_DIRECT reads counted apart). */
static void read_pages(struct rpt_model *m, struct rpt_file *f, const struct gpuio_vfs_event *e,
		       uint64_t bytes)
{
	uint64_t *fl = e->fd >= 0 ? kmap__get(&m->fd_map, e->hdr.pid, (uint64_t)e->fd) : NULL;
	bool direct = fl && *fl ? ((*fl - 1) & KERNEL_O_DIRECT) :
		      (!fl && f->any_open && f->all_direct_opens);
	int64_t off = xfer_offset(e);
	uint64_t pages;

	/* a mapping is always the page cache's */
	if (direct && e->call != GPUIO_CALL_PAGE_FAULT) {
		f->direct_rbytes += bytes;
		return;
	}
	/* hits are counted per file at the end: readahead adds pages that later
	 * calls read, so per-call misses overshoot */
	if (off >= 0)
		pages = ((uint64_t)off + bytes - 1) / RPT_PAGE - (uint64_t)off / RPT_PAGE + 1;
	else
		pages = (bytes + RPT_PAGE - 1) / RPT_PAGE;
	f->pages += pages;
	f->miss_pages += e->cache_miss_pages;
}

/* Opens (flags per fd, for O_DIRECT), closes and syncs (checkpoints end there). */
static int file_ops(struct rpt_model *m, struct rpt_file *f, const struct gpuio_vfs_event *e,
		    uint64_t end, bool rd, bool wr)
{
	unsigned call = e->call;
	int rc = 0;

	if (gpuio_call__is_open(call)) {
		bool direct = e->flags & KERNEL_O_DIRECT;

		f->all_direct_opens = f->any_open ? f->all_direct_opens && direct : direct;
		f->any_open = true;
		f->opens++;
		if (e->ret >= 0) {
			uint64_t *v;

			rc = kmap__upsert(&m->fd_map, e->hdr.pid, (uint64_t)e->ret, &v);
			if (rc < 0)
				return rc;
			*v = (uint64_t)e->flags + 1;
		}
		return 0;
	}
	if (call == GPUIO_CALL_CLOSE) {
		uint64_t *v = e->fd >= 0 ? kmap__get(&m->fd_map, e->hdr.pid, (uint64_t)e->fd) : NULL;

		if (v)
			*v = 0;
		f->closes++;
		return ckpt_close(m, f, end, false);
	}
	if (call_is_sync(call)) {
		f->syncs++;
		return ckpt_close(m, f, end, true);
	}
	if (!rd && !wr && !gpuio_call__two_files(call))
		f->other_ops++;
	return rc;
}

/* What the thread fetched, per file: after the roles, its data files' share
 * says whether it fetches data (report_loops.c), not its imports. */
static int thread_file_bytes(struct rpt_model *m, struct rpt_thread *t, struct rpt_file *f,
			     uint64_t bytes)
{
	uint64_t *v;

	if (kmap__upsert(&m->thread_files, (uint64_t)(t - m->threads), (uint64_t)(f - m->files), &v) < 0)
		return -ENOMEM;
	*v += bytes;
	return 0;
}

static int on_vfs(void *ctx, const struct gpuio_vfs_event *e)
{
	struct rpt_model *m = ctx;
	const struct gpuio_hdr *h = &e->hdr;
	unsigned call = e->call;
	uint64_t end = rpt_end_of(h->ts, e->dur_ns), bytes;
	bool rd = gpuio_call__is_read(call), wr = gpuio_call__is_write(call);
	struct rpt_file *f, *f2;
	struct rpt_thread *t;
	struct rpt_proc *p;
	uint32_t ref;
	bool fetch;
	int rc;

	/* a receive on a Unix socket (a worker handing over a batch's file
	 * descriptors) fetches nothing; nor one on a socket whose peer is not
	 * known (its name record lost, or before a dump's window): only an IP
	 * peer's data is fetched */
	fetch = rpt_call_fetches_data(e) && (e->ftype != GPUIO_FT_SOCK || rpt_net__remote(m, e));
	/* where in the program it was made: kept for the loops and files */
	ref = m->sites ? rpt_sites__call_stack(m, h->tid, e->seq, h->ts, end) : 0;
	if (ref && (rc = rpt_sites__call(m, h->pid, h->tid, h->ts, end, ref, fetch,
					 e->ret > 0 && gpuio_call__moves_bytes(call) ? (uint64_t)e->ret : 0)))
		return rc;
	/* a socket call with a named peer is the network's (report_net.c) */
	rc = rpt_net__vfs(m, e);
	if (rc)
		return rc < 0 ? rc : 0;
	rpt_note_time(m, h->ts, end);
	rc = rpt_thread_get(m, h->pid, h->tid, h->ts, end, &t);
	if (rc || (rc = rpt_proc_get(m, h->pid, &p)))
		return rc;
	if (end > p->last_ts)
		p->last_ts = end;
	m->vfs_calls++;
	t->calls++;
	bytes = e->ret > 0 && gpuio_call__moves_bytes(call) ? (uint64_t)e->ret : 0;
	if (e->ret < 0)
		m->vfs_errors++;
	thread_time(t, e);
	rc = call_files(m, e, end, &f, &f2);
	if (rc)
		return rc;
	count_bytes(m, t, p, e, end, bytes, rd, wr);
	if (f && fetch && (rc = thread_file_bytes(m, t, f, (uint64_t)e->ret)))
		return rc;
	if (f && ref && (rc = rpt_sites__file_call(m, (size_t)(f - m->files), ref, bytes, e->dur_ns)))
		return rc;
	if (f) {
		if (rd || wr || gpuio_call__two_files(call)) {
			rc = file_xfer(m, f, e, !wr, xfer_offset(e), bytes, e->dur_ns, end);
			if (rc)
				return rc;
		} else {
			f->otime += e->dur_ns;
		}
		if (rd && bytes)
			read_pages(m, f, e, bytes);
		rpt_prefetch__note(m, f, e, rd, bytes);
		rc = file_ops(m, f, e, end, rd, wr);
		if (rc)
			return rc;
	}
	if (f2)
		return file_xfer(m, f2, e, false, e->offset2, bytes, e->dur_ns, end);
	return 0;
}

/*
 * Page faults of a process on a file, cumulative: what changed since its
 * last record. A minor fault found its page in the page cache: a hit page
 * (fault-around maps up to 16 pages per fault, and pages mapped that way
 * never fault: they are not seen); a major fault's misses come with its
 * page_fault call.
 */
static int on_fault_count(void *ctx, const struct gpuio_fault_count *e)
{
	struct rpt_model *m = ctx;
	struct rpt_fault_last *last;
	uint64_t *v, dmin, dmaj;
	struct rpt_file *f;
	int rc;

	rpt_note_time(m, e->hdr.ts, e->hdr.ts);
	rc = kmap__upsert(&m->fault_map, (uint64_t)e->hdr.pid << 32 | e->dev, e->ino, &v);
	if (rc < 0)
		return rc;
	if (rc) {
		if (array_grow((void **)&m->fault_last, &m->cfault_last, m->nfault_last + 1,
			       sizeof(*m->fault_last)))
			return -ENOMEM;
		memset(&m->fault_last[m->nfault_last], 0, sizeof(m->fault_last[0]));
		*v = m->nfault_last++;
	}
	last = &m->fault_last[*v];
	if (e->flags & GPUIO_FC_EXEC) {         /* a program or a library: its role */
		rc = rpt_file_get(m, e->dev, e->ino, &f);
		if (rc)
			return rc;
		f->exec_mapped = true;
	}
	dmin = e->minor > last->minor ? e->minor - last->minor : 0;
	dmaj = e->major > last->major ? e->major - last->major : 0;
	last->minor = e->minor > last->minor ? e->minor : last->minor;
	last->major = e->major > last->major ? e->major : last->major;
	if (!dmin && !dmaj)
		return 0;
	rc = rpt_file_get(m, e->dev, e->ino, &f);
	if (rc)
		return rc;
	rpt_file_pid(f, e->hdr.pid);
	f->minor_faults += dmin;
	f->major_faults += dmaj;
	f->pages += dmin;
	m->minor_faults += dmin;
	m->major_faults += dmaj;
	return 0;
}

static int on_block(void *ctx, const struct gpuio_block_event *b)
{
	struct rpt_model *m = ctx;
	uint64_t q = 0, s = 0, infl;
	unsigned op = b->op < 5 ? b->op : GPUIO_BLK_OTHER;
	struct rpt_dev *d;
	int rc;

	rpt_note_time(m, b->hdr.ts, b->complete_ns > b->hdr.ts ? b->complete_ns : b->hdr.ts);
	rc = rpt_dev_get(m, b->dev, &d);
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
	d->q_hist[rpt_log2_idx(q / 1000)]++;
	d->s_hist[rpt_log2_idx(s / 1000)]++;
	d->inflight_ns += infl;
	if (op == GPUIO_BLK_READ)
		rpt_tl_point(m, d->rd, b->complete_ns, b->bytes);
	else if (op == GPUIO_BLK_WRITE)
		rpt_tl_point(m, d->wr, b->complete_ns, b->bytes);
	rpt_tl_span(m, d->depth, b->hdr.ts, b->hdr.ts + infl, 1.0);
	rpt_file_blk(m, b->file_dev, b->ino, op, b->bytes, 1, s);
	return 0;
}

void rpt_file_blk(struct rpt_model *m, uint32_t file_dev, uint64_t ino, unsigned op, uint64_t bytes,
		  uint64_t reqs, uint64_t svc_ns)
{
	const uint64_t *fv = ino ? kmap__get(&m->file_map, file_dev, ino) : NULL;
	struct rpt_file *f;

	if (!fv)
		return;
	f = &m->files[*fv];
	if (op == GPUIO_BLK_READ)
		f->blk_rbytes += bytes;
	else if (op == GPUIO_BLK_WRITE)
		f->blk_wbytes += bytes;
	f->blk_reqs += reqs;
	f->blk_svc_ns += svc_ns;
}

/* A PROC record: the process and thread it speaks of (their names: the session's). */
static int on_proc(void *ctx, const struct gpuio_proc_event *e)
{
	struct rpt_model *m = ctx;
	const struct gpuio_hdr *h = &e->hdr;
	struct rpt_thread *t;
	struct rpt_proc *p;
	int rc;

	rpt_note_time(m, h->ts, h->ts);
	rc = rpt_proc_get(m, h->pid, &p);
	if (rc)
		return rc;
	if (e->kind == GPUIO_PROC_CGROUP)
		return 0;
	if (e->kind == GPUIO_PROC_EXIT) {
		if (h->ts > p->last_ts)
			p->last_ts = h->ts;
		return 0;
	}
	rc = rpt_thread_get(m, h->pid, h->tid, h->ts, h->ts, &t);
	if (rc)
		return rc;
	p = &m->procs[*kmap__get(&m->proc_map, h->pid, 0)];
	if (!p->first_ts || h->ts < p->first_ts)
		p->first_ts = h->ts;
	return 0;
}

static int on_sched(void *ctx, const struct gpuio_sched_event *e)
{
	rpt_note_time(ctx, e->hdr.ts, e->hdr.ts);
	return 0;
}

static int on_devname(void *ctx, const struct gpuio_devname_event *d)
{
	struct rpt_model *m = ctx;
	struct rpt_dev *dv;
	int rc = rpt_dev_get(m, d->dev, &dv);

	if (!rc && d->name[0]) {
		memcpy(dv->name, d->name, sizeof(dv->name));
		dv->name[sizeof(dv->name) - 1] = 0;
	}
	return rc;
}

/* Names as the session's one rule gives them (model/proc_names.h), once pass 1 is over. */
void rpt_names_from_session(struct rpt_model *m)
{
	for (size_t i = 0; i < m->nprocs; i++) {
		struct rpt_proc *p = &m->procs[i];
		const struct model_proc *sp = model_session__proc(m->s, p->pid);
		size_t n;

		if (!sp)
			continue;
		p->ppid = sp->ppid;
		p->exited = sp->exited;
		p->exit_ts = sp->exit_ts;
		if (sp->cgroup)
			snprintf(p->cgroup, sizeof(p->cgroup), "%s", sp->cgroup);
		if (!sp->rank)
			continue;
		memcpy(p->comm, sp->comm, sizeof(p->comm));
		p->comm[15] = 0;
		n = sp->args_len < sizeof(p->args) - 1 ? sp->args_len : sizeof(p->args) - 1;
		for (size_t k = 0; k < n; k++)
			p->args[k] = sp->args[k] ? sp->args[k] : ' ';
		p->args[n] = 0;
		while (n && p->args[n - 1] == ' ')
			p->args[--n] = 0;
	}
	for (size_t i = 0; i < m->nthreads; i++) {
		struct rpt_thread *t = &m->threads[i];
		const struct model_thread *st = model_session__thread(m->s, t->pid, t->tid);

		if (st && st->has_comm) {
			memcpy(t->comm, st->comm, sizeof(t->comm));
			t->comm[15] = 0;
		}
	}
}

static int on_wait(void *ctx, const struct gpuio_wait_event *e)
{
	return rpt_waits_add(ctx, e);
}

static int on_stack_at(void *ctx, const struct model_stack_at *a)
{
	return rpt_sites__stack_at(ctx, a);
}

/* Pass 1: the session reads every record once; the report folds in its part. */
int rpt_pass1(struct rpt_model *m)
{
	const struct model_tool *tools[] = { &m->tool };
	int rc;

	m->tool = (struct model_tool){
		.ctx = m, .vfs = on_vfs, .block = on_block, .proc = on_proc, .sched = on_sched,
		.devname = on_devname, .wait = on_wait, .fault_count = on_fault_count,
		.lost_calls = rpt_on_lost_calls, .thread_time = rpt_on_thread_time,
		.stack_at = on_stack_at,
	};
	m->faults = m->hdr->fault_mode[0] != 0;
	rpt_gpu_handlers(&m->tool);
	rc = model_session__run(m->s, tools, 1);
	if (rc == -EBADMSG) {
		snprintf(m->err, sizeof(m->err), "%s: %s; the capture is damaged from there on",
			 m->path, model_session__error(m->s));
		return rc;
	}
	if (rc)
		return rc;
	m->sched = model_session__sched(m->s);
	rpt_waits_sort(m);
	rpt_names_from_session(m);
	return 0;
}
