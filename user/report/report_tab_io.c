// SPDX-License-Identifier: MIT
/*
 * report_tab_io.c — the disks, the processes and threads, and the VFS over
 * time: each device's requests with queue and service times, each thread's
 * time in traced calls, reads in flight and throughput per timeline bucket.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "capture/capture.h"
#include "lib/sort.h"
#include "lib/units.h"
#include "report/report_doc.h"
#include "report/report_model.h"

#define GET(name) static void name(const struct rpt_ctx *c, const struct rpt_row *r, \
				   struct rpt_cell *o)
#define M (c->m)
#define D ((const struct rpt_dev *)r->p)
#define P ((const struct rpt_proc *)r->p)
#define T ((const struct rpt_thread *)r->p)
#define JSON_ONLY (RPT_C_NOTEXT | RPT_C_NOHTML)
#define MIB 1048576.0

GET(group) { rpt_cell_group(o); }
GET(tl_bucket) { rpt_cell_ns(o, M->tl_width); }
GET(tl_start) { rpt_cell_ts(o, rpt_ts_rel_ns(M, M->tl_t0)); }

static double secs_per_bucket(const struct rpt_model *m)
{
	return (double)m->tl_width / NS_PER_SEC_F;
}

/* ---- devices ---- */

static uint64_t dev_reqs(const struct rpt_dev *d)
{
	uint64_t n = 0;

	for (int k = 0; k < 5; k++)
		n += d->ops[k];
	return n;
}

static int dev_rows(const struct rpt_ctx *c, const struct rpt_row *up, struct rpt_rows *out)
{
	for (size_t i = 0; i < M->ndevs; i++)
		if (dev_reqs(&M->devs[i]) && rpt_rows__add(out, &M->devs[i], i, up))
			return -1;
	return 0;
}

GET(d_name) { rpt_cell_strn(o, D->name, sizeof(D->name)); }
GET(d_dev) { rpt_cell_u64(o, D->dev); }
GET(d_reqs) { rpt_cell_u64(o, dev_reqs(D)); }
#define DEV_OP(name, field, k) GET(name) { rpt_cell_u64(o, D->field[k]); }
DEV_OP(d_ops_r, ops, GPUIO_BLK_READ)
DEV_OP(d_ops_w, ops, GPUIO_BLK_WRITE)
DEV_OP(d_ops_f, ops, GPUIO_BLK_FLUSH)
DEV_OP(d_ops_d, ops, GPUIO_BLK_DISCARD)
DEV_OP(d_ops_o, ops, 4)
GET(d_b_r) { rpt_cell_bytes(o, D->bytes[GPUIO_BLK_READ]); }
GET(d_b_w) { rpt_cell_bytes(o, D->bytes[GPUIO_BLK_WRITE]); }
GET(d_b_f) { rpt_cell_bytes(o, D->bytes[GPUIO_BLK_FLUSH]); }
GET(d_b_d) { rpt_cell_bytes(o, D->bytes[GPUIO_BLK_DISCARD]); }
GET(d_b_o) { rpt_cell_bytes(o, D->bytes[4]); }
GET(d_wb) { rpt_cell_bytes(o, D->wb_bytes); }
GET(d_wb_share) { rpt_cell_ratio(o, rpt_ratio(D->wb_bytes, D->bytes[GPUIO_BLK_WRITE])); }
GET(d_meta) { rpt_cell_bytes(o, D->meta_bytes); }
GET(d_errors) { rpt_cell_u64(o, D->errors); }
GET(d_queue) { rpt_cell_ns(o, D->q_sum / dev_reqs(D)); }
GET(d_service) { rpt_cell_ns(o, D->s_sum / dev_reqs(D)); }
GET(d_depth)
{
	uint64_t dur = rpt_model__duration(M);

	rpt_cell_f(o, dur ? (double)D->inflight_ns / (double)dur : 0, 2);
}
GET(d_peak)
{
	double peak = 0;

	for (unsigned k = 0; k < RPT_TL_BUCKETS; k++)
		if (D->rd->v[k] + D->wr->v[k] > peak)
			peak = D->rd->v[k] + D->wr->v[k];
	rpt_cell_f(o, peak / MIB / secs_per_bucket(M), 1);
}
GET(d_qhist) { rpt_cell_hist(o, D->q_hist, "us"); }
GET(d_shist) { rpt_cell_hist(o, D->s_hist, "us"); }
GET(d_tl_rd) { rpt_cell_series(o, D->rd->v, MIB * secs_per_bucket(M)); }
GET(d_tl_wr) { rpt_cell_series(o, D->wr->v, MIB * secs_per_bucket(M)); }
GET(d_tl_depth) { rpt_cell_series(o, D->depth->v, (double)M->tl_width); }

static const struct rpt_col dev_cols[] = {
	{ "name", NULL, 0, RPT_C_LEAD, d_name },
	{ "dev", NULL, 0, JSON_ONLY, d_dev },
	{ "requests", "requests", 0, 0, d_reqs },
	{ "ops", NULL, 0, 0, group },
	{ "ops.read", "reads", 0, 0, d_ops_r },
	{ "ops.write", "writes", 0, 0, d_ops_w },
	{ "ops.flush", "flushes", 0, 0, d_ops_f },
	{ "ops.discard", "discards", 0, 0, d_ops_d },
	{ "ops.other", NULL, 0, JSON_ONLY, d_ops_o },
	{ "bytes", NULL, 0, 0, group },
	{ "bytes.read", "read", 0, 0, d_b_r },
	{ "bytes.write", "written", 0, 0, d_b_w },
	{ "bytes.flush", NULL, 0, JSON_ONLY, d_b_f },
	{ "bytes.discard", NULL, 0, JSON_ONLY, d_b_d },
	{ "bytes.other", NULL, 0, JSON_ONLY, d_b_o },
	{ "writeback_bytes", NULL, 0, JSON_ONLY, d_wb },
	{ "writeback_share", "writeback", 0, 0, d_wb_share },
	{ "metadata_bytes", "metadata/journal", 0, 0, d_meta },
	{ "errors", "errors", 0, 0, d_errors },
	{ "mean_queue_us", "mean queue", 0, 0, d_queue },
	{ "mean_service_us", "mean service", 0, 0, d_service },
	{ "mean_queue_depth", "mean queue depth", 0, 0, d_depth },
	{ "peak_MiBps", "peak MiB/s", 0, 0, d_peak },
	{ "queue_us_hist", "queue time (insert -> issue)", 0, RPT_C_FIGURE, d_qhist },
	{ "service_us_hist", "service time (issue -> complete)", 0, RPT_C_FIGURE, d_shist },
	{ "timeline", "throughput over time (MiB/s)", 0, RPT_C_NOTEXT | RPT_C_FIGURE, group },
	{ "timeline.bucket_us", NULL, 0, JSON_ONLY, tl_bucket },
	{ "timeline.start_ts_us", NULL, 0, JSON_ONLY, tl_start },
	{ "timeline.read_MiBps", "read MiB/s", 0, RPT_C_NOTEXT, d_tl_rd },
	{ "timeline.write_MiBps", "write MiB/s", 0, RPT_C_NOTEXT, d_tl_wr },
	{ "timeline.queue_depth", "requests in flight (mean per bucket)", 0,
	  RPT_C_NOTEXT | RPT_C_FIGURE, d_tl_depth },
};
const struct rpt_table rpt_tab_devices = {
	.key = "devices", .title = "DEVICES", .none = "no block requests", .layout = RPT_BLOCKS,
	RPT_COLS(dev_cols), .rows = dev_rows,
};

/* ---- processes ---- */

static int proc_rows(const struct rpt_ctx *c, const struct rpt_row *up, struct rpt_rows *out)
{
	for (size_t i = 0; i < M->nprocs; i++)
		if (rpt_rows__add(out, &M->procs[i], i, up))
			return -1;
	rpt_rows__limit(out, c->opt->top, "processes");
	return 0;
}

GET(p_pid) { rpt_cell_u64(o, P->pid); }
GET(p_ppid) { rpt_cell_u64(o, P->ppid); }
GET(p_comm) { rpt_cell_strn(o, P->comm, sizeof(P->comm)); }
GET(p_args) { rpt_cell_strn(o, P->args, sizeof(P->args)); }
GET(p_threads) { rpt_cell_u64(o, P->nthreads); }
GET(p_rbytes) { rpt_cell_bytes(o, P->rbytes); }
GET(p_wbytes) { rpt_cell_bytes(o, P->wbytes); }
GET(p_gpu) { rpt_cell_bool(o, P->gpu); }
GET(p_exit)
{
	if (P->exited)
		rpt_cell_at(o, P->exit_ts);
}

static const struct rpt_col proc_cols[] = {
	{ "pid", "pid", 7, 0, p_pid },
	{ "ppid", "ppid", 7, 0, p_ppid },
	{ "comm", "comm", -15, 0, p_comm },
	{ "args", "args", 80, RPT_C_TAIL, p_args },
	{ "threads", "threads", 7, 0, p_threads },
	{ "read_bytes", "read", 10, 0, p_rbytes },
	{ "write_bytes", "written", 10, 0, p_wbytes },
	{ "gpu", "GPU", 3, 0, p_gpu },
	{ "exit", "exited", 0, RPT_C_NOTEXT, p_exit },
};
const struct rpt_table rpt_tab_processes = {
	.key = "processes", .title = "PROCESSES", .layout = RPT_ROWS, RPT_COLS(proc_cols),
	.rows = proc_rows,
};

/* ---- threads, most time in traced calls first ---- */

static int cmp_thread_io(const void *pa, const void *pb, void *arg)
{
	const struct rpt_thread *a = ((const struct rpt_row *)pa)->p;
	const struct rpt_thread *b = ((const struct rpt_row *)pb)->p;

	(void)arg;
	if (a->io_ns != b->io_ns)
		return a->io_ns > b->io_ns ? -1 : 1;
	return ((const struct rpt_row *)pa)->i < ((const struct rpt_row *)pb)->i ? -1 : 1;
}

static int thread_rows(const struct rpt_ctx *c, const struct rpt_row *up, struct rpt_rows *out)
{
	for (size_t i = 0; i < M->nthreads; i++)
		if (rpt_rows__add(out, &M->threads[i], i, up))
			return -1;
	if (out->n)
		qsort_r(out->a, out->n, sizeof(*out->a), cmp_thread_io, NULL);
	rpt_rows__limit(out, c->opt->top, "threads");
	return 0;
}

static void threads_about(const struct rpt_ctx *c, const struct rpt_rows *rows, char *buf,
			  size_t len)
{
	size_t readers = 0;

	for (size_t i = 0; i < M->nthreads; i++)
		readers += M->threads[i].rops > 0;
	snprintf(buf, len, "time in traced I/O calls vs the rest of the thread's wall time; %zu "
		 "thread(s) in %zu process(es) read files", readers, M->nprocs);
}

GET(t_pid) { rpt_cell_u64(o, T->pid); }
GET(t_tid) { rpt_cell_u64(o, T->tid); }
GET(t_comm) { rpt_cell_strn(o, T->comm[0] ? T->comm : rpt_proc_comm(M, T->pid), 16); }
GET(t_first) { rpt_cell_at(o, T->first_ts); }
GET(t_wall) { rpt_cell_ns(o, rpt_thread__wall(M, T)); }
GET(t_io) { rpt_cell_ns(o, T->io_ns); }
GET(t_io_pct) { rpt_cell_pct(o, T->io_ns, rpt_thread__wall(M, T)); }
GET(t_read) { rpt_cell_ns(o, T->read_ns); }
GET(t_write) { rpt_cell_ns(o, T->write_ns); }
GET(t_other) { rpt_cell_ns(o, T->other_ns); }
GET(t_sync) { rpt_cell_ns(o, T->cuda_sync_ns); }
GET(t_rest)
{
	uint64_t wall = rpt_thread__wall(M, T), busy = T->io_ns + T->cuda_sync_ns;

	rpt_cell_ns(o, wall > busy ? wall - busy : 0);
}
GET(t_rbytes) { rpt_cell_bytes(o, T->rbytes); }
GET(t_wbytes) { rpt_cell_bytes(o, T->wbytes); }
GET(t_rops) { rpt_cell_u64(o, T->rops); }
GET(t_wops) { rpt_cell_u64(o, T->wops); }
GET(t_calls) { rpt_cell_u64(o, T->calls); }

static const struct rpt_col thread_cols[] = {
	{ "pid", "pid", 7, 0, t_pid },
	{ "tid", "tid", 7, 0, t_tid },
	{ "comm", "comm", -15, 0, t_comm },
	{ "first", "first", 0, JSON_ONLY, t_first },
	{ "wall_us", "wall", 10, 0, t_wall },
	{ "io_us", "io", 10, 0, t_io },
	{ "io_pct", "io%", 6, RPT_C_NOJSON, t_io_pct },
	{ "read_us", "read", 10, 0, t_read },
	{ "write_us", "write", 10, 0, t_write },
	{ "other_io_us", "other io", 10, 0, t_other },
	{ "cuda_sync_us", "cuda sync", 10, 0, t_sync },
	{ "rest_us", NULL, 0, JSON_ONLY, t_rest },
	{ "read_bytes", "read bytes", 10, 0, t_rbytes },
	{ "write_bytes", NULL, 0, JSON_ONLY, t_wbytes },
	{ "read_ops", NULL, 0, JSON_ONLY, t_rops },
	{ "write_ops", NULL, 0, JSON_ONLY, t_wops },
	{ "calls", NULL, 0, JSON_ONLY, t_calls },
};
const struct rpt_table rpt_tab_threads = {
	.key = "threads", .title = "THREADS", .layout = RPT_ROWS, RPT_COLS(thread_cols),
	.rows = thread_rows, .describe = threads_about,
};

/* ---- the VFS over time ---- */

static double peak_of(const struct rpt_series *s, unsigned *at)
{
	double peak = 0;

	*at = 0;
	for (unsigned k = 0; k < RPT_TL_BUCKETS; k++)
		if (s->v[k] > peak) {
			peak = s->v[k];
			*at = k;
		}
	return peak;
}

GET(rf_avg)
{
	uint64_t dur = rpt_model__duration(M), rt = 0;

	for (size_t i = 0; i < M->nthreads; i++)
		rt += M->threads[i].read_ns;
	rpt_cell_f(o, dur ? (double)rt / (double)dur : 0, 2);
}
GET(rf_peak)
{
	unsigned at;

	rpt_cell_f(o, peak_of(M->tl_reads_inflight, &at) / (double)M->tl_width, 2);
}
GET(rf_peak_at)
{
	unsigned at;

	peak_of(M->tl_reads_inflight, &at);
	rpt_cell_ts(o, rpt_ts_rel_ns(M, M->tl_t0 + at * M->tl_width));
}
GET(rf_mean) { rpt_cell_series(o, M->tl_reads_inflight->v, (double)M->tl_width); }

static const struct rpt_col rif_cols[] = {
	{ "bucket_us", "in windows of", 0, RPT_C_NOTEXT, tl_bucket },
	{ "start_ts_us", NULL, 0, JSON_ONLY, tl_start },
	{ "average", "reads in flight on average", 0, 0, rf_avg },
	{ "peak", "peak", 0, RPT_C_JOIN, rf_peak },
	{ "peak_ts_us", "at", 0, RPT_C_JOIN, rf_peak_at },
	{ "mean", "file reads in flight over time (loader concurrency)", 0,
	  RPT_C_NOTEXT | RPT_C_FIGURE, rf_mean },
};
const struct rpt_table rpt_tab_reads_in_flight = {
	.key = "reads_in_flight", .layout = RPT_RECORD, .flags = RPT_T_NOHEAD,
	RPT_COLS(rif_cols), .rows = rpt_rows__one,
};

GET(vt_read) { rpt_cell_series(o, M->tl_rbytes->v, MIB * secs_per_bucket(M)); }
GET(vt_write) { rpt_cell_series(o, M->tl_wbytes->v, MIB * secs_per_bucket(M)); }
static const struct rpt_col vt_cols[] = {
	{ "timeline", "VFS throughput over time (MiB/s)", 0, RPT_C_NOTEXT | RPT_C_FIGURE, group },
	{ "timeline.bucket_us", NULL, 0, JSON_ONLY, tl_bucket },
	{ "timeline.start_ts_us", NULL, 0, JSON_ONLY, tl_start },
	{ "timeline.read_MiBps", "read MiB/s", 0, RPT_C_NOTEXT, vt_read },
	{ "timeline.write_MiBps", "write MiB/s", 0, RPT_C_NOTEXT, vt_write },
};
const struct rpt_table rpt_tab_vfs_throughput = {
	.key = "vfs_throughput", .layout = RPT_RECORD, .flags = RPT_T_NOTEXT, RPT_COLS(vt_cols),
	.rows = rpt_rows__one,
};
