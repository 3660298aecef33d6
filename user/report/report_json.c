// SPDX-License-Identifier: MIT
/*
 * report_json.c — `gpuio report --json`: the same content as the text report,
 * one object per capture (an array of them for several captures).
 *
 * Times: *_ts_us fields are µs after the capture's monotonic anchor (the
 * exports' ts, 3 decimals = exact ns); *_utc the same instant as wall-clock;
 * durations *_us. Byte counts are exact integers.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/json_writer.h"
#include "model/waits.h"
#include "report/report_model.h"
#include "report/report_net.h"
#include "lib/job_identity.h"
#include "lib/units.h"

struct jw {
	struct json_writer *w;
	bool first[16];
	int depth;
};

static void j_key(struct jw *j, const char *k)
{
	if (!j->first[j->depth])
		json_writer__putc(j->w, ',');
	j->first[j->depth] = false;
	if (k) {
		json_writer__putc(j->w, '"');
		json_writer__puts(j->w, k);
		json_writer__puts(j->w, "\":");
	}
}

static void j_open(struct jw *j, const char *k, char c)
{
	j_key(j, k);
	json_writer__putc(j->w, c);
	j->first[++j->depth] = true;
}

static void j_close(struct jw *j, char c)
{
	json_writer__putc(j->w, c);
	j->depth--;
}

static void j_u64(struct jw *j, const char *k, uint64_t v)
{
	j_key(j, k);
	json_writer__u64(j->w, v);
}

static void j_us(struct jw *j, const char *k, int64_t ns)
{
	j_key(j, k);
	json_writer__us(j->w, ns);
}

static void j_f(struct jw *j, const char *k, double v)
{
	j_key(j, k);
	json_writer__f3(j->w, v);
}

/* a ratio, null when undefined */
static void j_ratio(struct jw *j, const char *k, double v)
{
	j_key(j, k);
	if (v < 0) {
		json_writer__puts(j->w, "null");
		return;
	}
	json_writer__printf(j->w, "%.6f", v);
}

static void j_str(struct jw *j, const char *k, const char *s, size_t n)
{
	j_key(j, k);
	json_writer__str(j->w, s, n);
}

static void j_cstr(struct jw *j, const char *k, const char *s)
{
	j_str(j, k, s, strlen(s));
}

static void j_hstr(struct jw *j, const char *k, const char *s, size_t max)
{
	j_key(j, k);
	json_writer__strn(j->w, s, max);
}

static void j_bool(struct jw *j, const char *k, bool v)
{
	j_key(j, k);
	json_writer__bool(j->w, v);
}

static void j_null(struct jw *j, const char *k)
{
	j_key(j, k);
	json_writer__puts(j->w, "null");
}

static void j_at(struct jw *j, const struct rpt_model *m, const char *k, uint64_t t)
{
	char key[48], wall[48];

	snprintf(key, sizeof(key), "%s_ts_us", k);
	j_us(j, key, rpt_ts_rel_ns(m, t));
	snprintf(key, sizeof(key), "%s_utc", k);
	rpt_fmt_wall(m, t, wall, sizeof(wall));
	j_cstr(j, key, wall);
}

static void j_log2_hist(struct jw *j, const char *k, const uint32_t *h)
{
	j_open(j, k, '[');
	for (int i = 0; i < RPT_LOG2_BUCKETS; i++) {
		if (!h[i])
			continue;
		j_open(j, NULL, '{');
		j_u64(j, "lo", i ? 1ull << (i - 1) : 0);
		j_u64(j, "hi", i ? (1ull << i) - 1 : 0);
		j_u64(j, "count", h[i]);
		j_close(j, '}');
	}
	j_close(j, ']');
}

/* values of a timeline, each divided by div (bytes -> MiB/s, ns -> depth) */
static void j_series(struct jw *j, const char *k, const struct rpt_series *s, double div)
{
	j_open(j, k, '[');
	for (unsigned i = 0; i < RPT_TL_BUCKETS; i++) {
		j_key(j, NULL);
		json_writer__f3(j->w, div > 0 ? s->v[i] / div : 0);
	}
	j_close(j, ']');
}

static void j_timeline_hdr(struct jw *j, const struct rpt_model *m)
{
	j_us(j, "bucket_us", (int64_t)m->tl_width);
	j_us(j, "start_ts_us", rpt_ts_rel_ns(m, m->tl_t0));
}

static void summary(struct jw *j, const struct rpt_model *m)
{
	const struct gpuio_cap_header *h = m->hdr;
	uint64_t d;
	bool known = rpt_model__dropped(m, &d);

	j_open(j, "summary", '{');
	if (m->first_ts)
		j_at(j, m, "start", m->first_ts);
	j_us(j, "duration_us", (int64_t)rpt_model__duration(m));
	j_u64(j, "processes", m->nprocs);
	j_u64(j, "threads", m->nthreads);
	j_open(j, "vfs", '{');
	j_u64(j, "read_bytes", m->vfs_rbytes);
	j_u64(j, "write_bytes", m->vfs_wbytes);
	j_u64(j, "read_ops", m->vfs_rops);
	j_u64(j, "write_ops", m->vfs_wops);
	j_u64(j, "calls", m->vfs_calls);
	j_u64(j, "failed_calls", m->vfs_errors);
	j_close(j, '}');
	j_open(j, "block", '{');
	j_u64(j, "read_bytes", m->blk_rbytes);
	j_u64(j, "write_bytes", m->blk_wbytes);
	j_u64(j, "read_ops", m->blk_rops);
	j_u64(j, "write_ops", m->blk_wops);
	j_u64(j, "requests", m->blk_reqs);
	j_close(j, '}');
	j_open(j, "page_cache", '{');
	j_u64(j, "pages", m->pages);
	j_u64(j, "hit_pages", m->hit_pages);
	j_u64(j, "miss_pages", m->miss_pages);
	j_ratio(j, "hit_ratio", rpt_ratio(m->hit_pages, m->pages));
	j_close(j, '}');
	if (m->faults) {                /* captures from before the fault layer: none */
		j_open(j, "page_faults", '{');
		j_u64(j, "minor", m->minor_faults);
		j_u64(j, "major", m->major_faults);
		j_close(j, '}');
	}
	j_open(j, "attach_modes", '{');
	j_hstr(j, "vfs", h->vfs_mode, sizeof(h->vfs_mode));
	j_hstr(j, "block", h->block_mode, sizeof(h->block_mode));
	j_hstr(j, "proc", h->proc_mode, sizeof(h->proc_mode));
	j_hstr(j, "pagecache", h->pagecache_mode, sizeof(h->pagecache_mode));
	j_hstr(j, "io_uring", h->iouring_mode, sizeof(h->iouring_mode));
	j_hstr(j, "sched", h->sched_mode, sizeof(h->sched_mode));
	if (h->fault_mode[0])
		j_hstr(j, "fault", h->fault_mode, sizeof(h->fault_mode));
	j_close(j, '}');
	j_bool(j, "drops_known", known);
	if (known)
		j_u64(j, "dropped", d);
	else
		j_null(j, "dropped");
	j_u64(j, "cupti_dropped", m->cupti_dropped);
	j_bool(j, "lossy", !known || d || m->f->truncated);
	j_bool(j, "complete", known && m->f->stats.final && !m->f->truncated);
	j_u64(j, "truncated_bytes", m->f->truncated);
	j_u64(j, "records", m->f->records);
	j_u64(j, "unresolved_paths", m->unresolved);
	j_close(j, '}');
}

static void files(struct jw *j, const struct rpt_model *m, const struct rpt_opts *opt)
{
	size_t n, *idx = rpt_model__ranked_files(m, opt->top, &n);

	j_u64(j, "files_total", m->nfiles);
	j_open(j, "files", '[');
	for (size_t k = 0; k < n; k++) {
		const struct rpt_file *f = &m->files[idx[k]];
		uint64_t single;
		enum rpt_pattern p = rpt_file__pattern(f, &single);

		j_open(j, NULL, '{');
		j_str(j, "path", f->path, f->path_len);
		j_cstr(j, "role", rpt_role_names[f->role]);
		j_u64(j, "dev", f->dev);
		j_u64(j, "ino", f->ino);
		j_u64(j, "read_bytes", f->rbytes);
		j_u64(j, "write_bytes", f->wbytes);
		j_u64(j, "read_ops", f->rops);
		j_u64(j, "write_ops", f->wops);
		j_u64(j, "opens", f->opens);
		j_u64(j, "closes", f->closes);
		j_u64(j, "syncs", f->syncs);
		j_u64(j, "other_ops", f->other_ops);
		j_u64(j, "failed_ops", f->errors);
		j_us(j, "read_time_us", (int64_t)f->rtime);
		j_us(j, "write_time_us", (int64_t)f->wtime);
		j_us(j, "other_time_us", (int64_t)f->otime);
		j_open(j, "latency_us", '{');
		j_us(j, "mean", (int64_t)(f->lat.n ? f->lat.sum / f->lat.n : 0));
		j_us(j, "p50", (int64_t)rpt_hist__pct(&f->lat, 0.5));
		j_us(j, "p99", (int64_t)rpt_hist__pct(&f->lat, 0.99));
		j_us(j, "min", (int64_t)f->lat.min);
		j_us(j, "max", (int64_t)f->lat.max);
		j_close(j, '}');
		j_open(j, "page_cache", '{');
		j_u64(j, "pages", f->pages);
		j_u64(j, "hit_pages", f->hit_pages);
		j_u64(j, "miss_pages", f->miss_pages);
		j_ratio(j, "hit_ratio", rpt_ratio(f->hit_pages, f->pages));
		j_close(j, '}');
		if (m->faults) {
			j_open(j, "page_faults", '{');
			j_u64(j, "minor", f->minor_faults);
			j_u64(j, "major", f->major_faults);
			j_close(j, '}');
		}
		j_u64(j, "direct_read_bytes", f->direct_rbytes);
		j_u64(j, "extent_bytes", f->extent);
		if (single)
			j_null(j, "pattern");
		else
			j_cstr(j, "pattern", rpt_pattern_name(p));
		j_open(j, "pattern_counts", '{');
		j_u64(j, "sequential", f->pat[RPT_PAT_SEQ]);
		j_u64(j, "strided", f->pat[RPT_PAT_STRIDED]);
		j_u64(j, "random", f->pat[RPT_PAT_RANDOM]);
		j_close(j, '}');
		j_log2_hist(j, "request_sizes", f->size_hist);
		j_open(j, "pids", '[');
		for (uint32_t i = 0; i < f->npids && i < RPT_FILE_PIDS; i++)
			j_u64(j, NULL, f->pids[i]);
		j_close(j, ']');
		j_bool(j, "more_pids", f->npids > RPT_FILE_PIDS);
		j_open(j, "block", '{');
		j_u64(j, "requests", f->blk_reqs);
		j_u64(j, "read_bytes", f->blk_rbytes);
		j_u64(j, "write_bytes", f->blk_wbytes);
		j_us(j, "mean_service_us", (int64_t)(f->blk_reqs ? f->blk_svc_ns / f->blk_reqs : 0));
		j_close(j, '}');
		j_us(j, "gpu_idle_read_us", (int64_t)f->gpu_idle_read_ns);
		j_u64(j, "gpu_idle_miss_pages", f->gpu_idle_miss_pages);
		j_close(j, '}');
	}
	j_close(j, ']');
	free(idx);
	j_open(j, "small_files", '{');
	j_u64(j, "count", m->small_files);
	j_u64(j, "read_files", m->read_files);
	j_u64(j, "bytes", m->small_bytes);
	j_u64(j, "reads", m->small_rops);
	j_close(j, '}');
}

/* "roles": {"data": {files, read_bytes, ...}, "code": ...} (report_roles.c) */
static void roles(struct jw *j, const struct rpt_model *m)
{
	j_open(j, "roles", '{');
	for (int r = 0; r < RPT_ROLE_N; r++) {
		j_open(j, rpt_role_names[r], '{');
		j_u64(j, "files", m->roles[r].files);
		j_u64(j, "read_bytes", m->roles[r].rbytes);
		j_u64(j, "write_bytes", m->roles[r].wbytes);
		j_us(j, "read_time_us", (int64_t)m->roles[r].rtime);
		j_close(j, '}');
	}
	j_close(j, '}');
}

static void reco(struct jw *j, const struct rpt_reco *r)
{
	j_open(j, NULL, '{');
	j_cstr(j, "kind", r->kind);
	j_cstr(j, "text", r->text);
	j_cstr(j, "evidence", r->evidence);
	j_close(j, '}');
}

/* One loop (report_wait.c): its time, producers, files, steps, recommendations. */
static void loop(struct jw *j, const struct rpt_model *m, const struct rpt_wait *w, const char *key)
{
	char line[1024];

	j_open(j, key, '{');
	rpt_wait__headline(m, w, line, sizeof(line));
	j_cstr(j, "headline", line);
	j_u64(j, "pid", w->pid);
	j_u64(j, "tid", w->tid);
	j_cstr(j, "thread", rpt_wait__thread(m, w));
	j_cstr(j, "process", rpt_proc_comm(m, w->pid));
	j_cstr(j, "found_by", w->stand_in ? "busiest_thread" : w->own_reads ? "own_reads" : "data_waits");
	j_us(j, "start_us", rpt_ts_rel_ns(m, w->span_s));
	j_us(j, "span_us", (int64_t)rpt_wait__span(w));
	j_open(j, "loop_us", '{');
	for (int k = 0; k < RPT_TW_N; k++)
		j_us(j, rpt_tw_names[k], (int64_t)w->ns[k]);
	j_close(j, '}');
	j_us(j, "data_then_runnable_us", (int64_t)w->data_runnable_ns);
	j_us(j, "own_data_reads_us", (int64_t)w->own_read_ns);
	j_open(j, "blocked_in", '[');
	for (size_t i = 0; i < w->nblocked; i++) {
		const struct rpt_blocked *b = &w->blocked[i];
		const char *sc = model_wait__syscall_name(b->nr), *ft = model_wait__ftype_name(b->ftype);

		j_open(j, NULL, '{');
		j_cstr(j, "kind", model_wait__kind_name(b->kind));
		if (sc)
			j_cstr(j, "syscall", sc);
		else
			j_null(j, "syscall");
		if (ft)
			j_cstr(j, "on", ft);
		else
			j_null(j, "on");
		j_u64(j, "sleeps", b->n);
		j_us(j, "us", (int64_t)b->ns);
		j_close(j, '}');
	}
	j_close(j, ']');
	j_open(j, "wakers", '[');
	for (size_t i = 0; i < w->nwakers; i++) {
		const struct rpt_waker *k = &w->wakers[i];

		j_open(j, NULL, '{');
		j_u64(j, "pid", k->pid);
		j_u64(j, "tid", k->tid);
		j_cstr(j, "kind", k->thread ? "thread" : "process");
		j_cstr(j, "comm", rpt_proc_comm(m, k->pid));
		j_u64(j, "wakes", k->wakes);
		j_us(j, "wait_us", (int64_t)k->ns);
		j_close(j, '}');
	}
	j_close(j, ']');
	j_open(j, "wakers_meanwhile_us", '{');
	for (int k = 0; k < RPT_WA_N; k++)
		j_us(j, rpt_wa_names[k], (int64_t)w->act_ns[k]);
	j_close(j, '}');
	j_cstr(j, "data_files", w->glob);
	j_u64(j, "data_files_read", w->ndata_files);
	j_u64(j, "data_read_bytes", w->read_bytes);
	j_ratio(j, "data_hit_ratio", rpt_ratio(w->hit_pages, w->pages));
	j_open(j, "files", '[');
	for (size_t i = 0; i < w->nfiles; i++) {
		const struct rpt_file *f = &m->files[w->files[i].file];

		j_open(j, NULL, '{');
		j_str(j, "path", f->path ? f->path : "", f->path ? f->path_len : 0);
		j_cstr(j, "role", rpt_role_names[f->role]);
		j_u64(j, "bytes", w->files[i].bytes);
		j_u64(j, "reads", w->files[i].reads);
		j_us(j, "read_us", (int64_t)w->files[i].ns);
		j_close(j, '}');
	}
	j_close(j, ']');
	if (w->step_range)
		j_cstr(j, "steps_from", "nvtx");
	else
		j_cstr(j, "steps_from", "waits");
	if (w->step_range)
		j_cstr(j, "step_range", w->step_range);
	else
		j_null(j, "step_range");
	j_open(j, "steps", '[');
	for (size_t i = 0; i < w->nsteps; i++) {
		j_open(j, NULL, '{');
		j_us(j, "start_us", rpt_ts_rel_ns(m, w->steps[i].s));
		j_us(j, "wait_us", (int64_t)w->steps[i].wait_ns);
		j_us(j, "rest_us", (int64_t)w->steps[i].compute_ns);
		j_cstr(j, "cause", rpt_tw_cause(w->steps[i].ns));
		j_open(j, "time_us", '{');
		for (int k = 0; k < RPT_TW_N; k++)
			if (w->steps[i].ns[k])
				j_us(j, rpt_tw_names[k], (int64_t)w->steps[i].ns[k]);
		j_close(j, '}');
		j_close(j, '}');
	}
	j_close(j, ']');
	j_open(j, "peers", '[');
	for (size_t i = 0; i < w->npeers; i++) {
		const struct rpt_net_peer *q = &m->net->peers[w->peers[i]];

		j_open(j, NULL, '{');
		j_cstr(j, "peer", q->name);
		j_cstr(j, "proto", q->proto ? q->proto : "");
		j_u64(j, "bytes", q->rbytes);
		j_u64(j, "requests", q->requests);
		j_us(j, "us", (int64_t)q->rtime);
		j_close(j, '}');
	}
	j_close(j, ']');
	j_open(j, "recommendations", '[');
	for (size_t i = 0; i < m->nrecos; i++)
		if (m->recos[i].loop == (int)w->index)
			reco(j, &m->recos[i]);
	j_close(j, ']');
	j_u64(j, "sched_gaps", w->gaps);
	j_close(j, '}');
}

/* "wait": loops[0] (for older readers), "loops": every loop, "stragglers"
 * with two loops or more; null / [] without thread states. */
static void loops(struct jw *j, const struct rpt_model *m)
{
	if (m->wait)
		loop(j, m, m->wait, "wait");
	else
		j_null(j, "wait");
	j_open(j, "loops", '[');
	for (size_t i = 0; i < m->nloops; i++)
		loop(j, m, m->loops[i], NULL);
	j_close(j, ']');
	j_open(j, "stragglers", '[');
	for (size_t i = 0; m->nloops > 1 && i < m->nloops; i++) {
		const struct rpt_wait *w = m->loops[rpt_straggler(m, i)];
		uint64_t span = rpt_wait__span(w);

		j_open(j, NULL, '{');
		j_u64(j, "loop", w->index);
		j_u64(j, "pid", w->pid);
		j_u64(j, "tid", w->tid);
		j_us(j, "waiting_for_data_us", (int64_t)w->ns[RPT_TW_DATA]);
		j_us(j, "span_us", (int64_t)span);
		j_f(j, "waited_pct", span ? 100.0 * (double)w->ns[RPT_TW_DATA] / (double)span : 0);
		j_cstr(j, "cause", rpt_wait__cause(w));
		j_close(j, '}');
	}
	j_close(j, ']');
}

static void devices(struct jw *j, const struct rpt_model *m)
{
	static const char *const ops[] = { "read", "write", "flush", "discard", "other" };
	uint64_t dur = rpt_model__duration(m);
	double secs = (double)m->tl_width / NS_PER_SEC_F;

	j_open(j, "devices", '[');
	for (size_t i = 0; i < m->ndevs; i++) {
		const struct rpt_dev *d = &m->devs[i];
		uint64_t reqs = 0;

		for (int k = 0; k < 5; k++)
			reqs += d->ops[k];
		if (!reqs)
			continue;
		j_open(j, NULL, '{');
		j_cstr(j, "name", d->name);
		j_u64(j, "dev", d->dev);
		j_u64(j, "requests", reqs);
		j_open(j, "ops", '{');
		for (int k = 0; k < 5; k++)
			j_u64(j, ops[k], d->ops[k]);
		j_close(j, '}');
		j_open(j, "bytes", '{');
		for (int k = 0; k < 5; k++)
			j_u64(j, ops[k], d->bytes[k]);
		j_close(j, '}');
		j_u64(j, "writeback_bytes", d->wb_bytes);
		j_ratio(j, "writeback_share", rpt_ratio(d->wb_bytes, d->bytes[GPUIO_BLK_WRITE]));
		j_u64(j, "metadata_bytes", d->meta_bytes);
		j_u64(j, "errors", d->errors);
		j_us(j, "mean_queue_us", (int64_t)(d->q_sum / reqs));
		j_us(j, "mean_service_us", (int64_t)(d->s_sum / reqs));
		j_f(j, "mean_queue_depth", dur ? (double)d->inflight_ns / (double)dur : 0);
		j_log2_hist(j, "queue_us_hist", d->q_hist);
		j_log2_hist(j, "service_us_hist", d->s_hist);
		j_open(j, "timeline", '{');
		j_timeline_hdr(j, m);
		j_series(j, "read_MiBps", d->rd, 1048576.0 * secs);
		j_series(j, "write_MiBps", d->wr, 1048576.0 * secs);
		j_series(j, "queue_depth", d->depth, (double)m->tl_width);
		j_close(j, '}');
		j_close(j, '}');
	}
	j_close(j, ']');
}

static void threads(struct jw *j, const struct rpt_model *m)
{
	j_open(j, "processes", '[');
	for (size_t i = 0; i < m->nprocs; i++) {
		const struct rpt_proc *p = &m->procs[i];

		j_open(j, NULL, '{');
		j_u64(j, "pid", p->pid);
		j_u64(j, "ppid", p->ppid);
		j_hstr(j, "comm", p->comm, sizeof(p->comm));
		j_hstr(j, "args", p->args, sizeof(p->args));
		j_u64(j, "threads", p->nthreads);
		j_u64(j, "read_bytes", p->rbytes);
		j_u64(j, "write_bytes", p->wbytes);
		j_bool(j, "gpu", p->gpu);
		if (p->exited)
			j_at(j, m, "exit", p->exit_ts);
		j_close(j, '}');
	}
	j_close(j, ']');
	j_open(j, "threads", '[');
	for (size_t i = 0; i < m->nthreads; i++) {
		const struct rpt_thread *t = &m->threads[i];
		uint64_t wall = rpt_thread__wall(m, t);
		uint64_t busy = t->io_ns + t->cuda_sync_ns;

		j_open(j, NULL, '{');
		j_u64(j, "pid", t->pid);
		j_u64(j, "tid", t->tid);
		j_hstr(j, "comm", t->comm[0] ? t->comm : rpt_proc_comm(m, t->pid), 16);
		j_at(j, m, "first", t->first_ts);
		j_us(j, "wall_us", (int64_t)wall);
		j_us(j, "io_us", (int64_t)t->io_ns);
		j_us(j, "read_us", (int64_t)t->read_ns);
		j_us(j, "write_us", (int64_t)t->write_ns);
		j_us(j, "other_io_us", (int64_t)t->other_ns);
		j_us(j, "cuda_sync_us", (int64_t)t->cuda_sync_ns);
		j_us(j, "rest_us", (int64_t)(wall > busy ? wall - busy : 0));
		j_u64(j, "read_bytes", t->rbytes);
		j_u64(j, "write_bytes", t->wbytes);
		j_u64(j, "read_ops", t->rops);
		j_u64(j, "write_ops", t->wops);
		j_u64(j, "calls", t->calls);
		j_close(j, '}');
	}
	j_close(j, ']');
	j_open(j, "reads_in_flight", '{');
	j_timeline_hdr(j, m);
	j_series(j, "mean", m->tl_reads_inflight, (double)m->tl_width);
	j_close(j, '}');
}

static void causes(struct jw *j, const char *k, const uint64_t *ns)
{
	j_open(j, k, '{');
	for (int c = 0; c < RPT_CAUSE_N; c++)
		j_us(j, rpt_cause_names[c], (int64_t)ns[c]);
	j_close(j, '}');
}

/* The launching thread's state during the idle gaps (null without thread states). */
static void launch_states(struct jw *j, const struct rpt_model *m, const char *k, const uint64_t *ns)
{
	if (!m->launch_states) {
		j_null(j, k);
		return;
	}
	j_open(j, k, '{');
	for (int c = 0; c < RPT_LS_N; c++)
		j_us(j, rpt_ls_name(c), (int64_t)ns[c]);
	j_close(j, '}');
}

static void gpu(struct jw *j, const struct rpt_model *m)
{
	j_open(j, "gpu", '{');
	j_bool(j, "present", m->ngpus > 0);
	j_u64(j, "collector_records", m->f->gpu_infos);
	if (m->f->gpu_infos) {
		j_u64(j, "collector_state", m->f->gpu_info.state);
		j_hstr(j, "collector_reason", m->f->gpu_info.reason, sizeof(m->f->gpu_info.reason));
		j_us(j, "clock_uncertainty_us", (int64_t)m->f->gpu_info.uncertainty_ns);
	}
	j_u64(j, "cupti_dropped", m->cupti_dropped);
	j_us(j, "busy_us", (int64_t)m->gpu_busy_ns);
	j_us(j, "idle_us", (int64_t)m->gpu_idle_ns);
	j_us(j, "span_us", (int64_t)m->gpu_span_ns);
	causes(j, "idle_by_cause_us", m->cause_ns);
	launch_states(j, m, "idle_by_launcher_state_us", m->launch_ns);
	j_f(j, "reads_in_flight_during_read_idle",
	    m->cause_ns[RPT_CAUSE_READ] ? (double)m->gap_reads_ns / (double)m->cause_ns[RPT_CAUSE_READ] : 0);
	j_bool(j, "approximate", m->gaps_approx);
	j_open(j, "devices", '[');
	for (size_t i = 0; i < m->ngpus; i++) {
		const struct rpt_gpu *g = &m->gpus[i];
		uint64_t span = g->last - g->first;

		j_open(j, NULL, '{');
		j_u64(j, "pid", g->pid);
		j_u64(j, "device", g->device);
		j_at(j, m, "first", g->first);
		j_at(j, m, "last", g->last);
		j_us(j, "span_us", (int64_t)span);
		j_us(j, "busy_us", (int64_t)g->busy_ns);
		j_ratio(j, "busy_fraction", span ? (double)g->busy_ns / (double)span : -1);
		j_u64(j, "kernels", g->kernels);
		j_u64(j, "copies", g->copies);
		j_u64(j, "memsets", g->memsets);
		j_us(j, "kernel_us", (int64_t)g->kernel_ns);
		j_us(j, "copy_us", (int64_t)g->copy_ns);
		j_u64(j, "gaps", g->ngaps);
		j_us(j, "idle_us", (int64_t)g->idle_ns);
		causes(j, "idle_by_cause_us", g->cause_ns);
		if (g->launcher_tid) {
			j_open(j, "launcher", '{');
			j_u64(j, "tid", g->launcher_tid);
			j_u64(j, "launches", g->launcher_launches);
			launch_states(j, m, "idle_by_state_us", g->launch_ns);
			j_close(j, '}');
		} else {
			j_null(j, "launcher");
		}
		j_open(j, "timeline", '{');
		j_timeline_hdr(j, m);
		j_series(j, "busy", g->busy, (double)m->tl_width);
		for (int c = 0; c < RPT_CAUSE_N; c++) {
			char k[48];

			snprintf(k, sizeof(k), "idle_%s", rpt_cause_names[c]);
			j_series(j, k, g->cause[c], (double)m->tl_width);
		}
		j_close(j, '}');
		j_close(j, '}');
	}
	j_close(j, ']');
	j_open(j, "largest_gaps", '[');
	for (size_t i = 0; i < m->ntop_gaps; i++) {
		const struct rpt_gap *gp = &m->gaps[m->top_gaps[i]];

		j_open(j, NULL, '{');
		j_u64(j, "pid", m->gpus[gp->gpu].pid);
		j_u64(j, "device", m->gpus[gp->gpu].device);
		j_at(j, m, "start", gp->s);
		j_us(j, "dur_us", (int64_t)(gp->e - gp->s));
		causes(j, "by_cause_us", gp->cause_ns);
		if (gp->launcher_tid) {
			j_u64(j, "launcher_tid", gp->launcher_tid);
			launch_states(j, m, "launcher_state_us", gp->launch_ns);
		} else {
			j_null(j, "launcher_tid");
			j_null(j, "launcher_state_us");
		}
		j_bool(j, "approximate", gp->approx);
		j_open(j, "files", '[');
		for (int k = 0; k < RPT_GAP_FILES && m->top_gap_files[i][k].ns; k++) {
			const struct rpt_file *f = &m->files[m->top_gap_files[i][k].file - 1];

			j_open(j, NULL, '{');
			j_str(j, "path", f->path, f->path_len);
			j_us(j, "read_us", (int64_t)m->top_gap_files[i][k].ns);
			j_close(j, '}');
		}
		j_close(j, ']');
		j_close(j, '}');
	}
	j_close(j, ']');
	j_close(j, '}');
}

static void ckpts(struct jw *j, const struct rpt_model *m)
{
	j_open(j, "checkpoints", '[');
	for (size_t i = 0; i < m->nckpts; i++) {
		const struct rpt_ckpt *k = &m->ckpts[i];
		uint64_t dur = k->e - k->s;

		j_open(j, NULL, '{');
		j_u64(j, "pid", k->pid);
		j_u64(j, "tid", k->tid);
		j_str(j, "path", m->files[k->file].path, m->files[k->file].path_len);
		j_at(j, m, "start", k->s);
		j_us(j, "dur_us", (int64_t)dur);
		j_u64(j, "bytes", k->bytes);
		j_u64(j, "writes", k->writes);
		j_cstr(j, "ended_by", k->synced ? "fsync" : "close");
		j_f(j, "MiBps", dur ? (double)k->bytes / 1048576.0 / ((double)dur / NS_PER_SEC_F) : 0);
		j_us(j, "gpu_idle_us", (int64_t)k->gpu_lost_ns);
		j_close(j, '}');
	}
	j_close(j, ']');
}

/* "jobs": [{cgroup, processes, slurm_job...}] — the identity their cgroups name */
static void jobs(struct jw *j, const struct rpt_model *m)
{
	struct rpt_job jb[16];
	size_t n = rpt_model__jobs(m, jb, 16);

	j_open(j, "jobs", '[');
	for (size_t i = 0; i < n; i++) {
		struct job_identity id;

		job_identity__parse(jb[i].cgroup, &id);
		j_open(j, NULL, '{');
		j_cstr(j, "cgroup", jb[i].cgroup);
		j_u64(j, "processes", jb[i].nprocs);
		for (int k = 0; k < JOB_IDENTITY_NFIELDS; k++)
			if (job_identity__field(&id, k)[0])
				j_cstr(j, job_identity_keys[k], job_identity__field(&id, k));
		j_close(j, '}');
	}
	j_close(j, ']');
}

static void one(struct jw *j, const struct rpt_model *m, const struct rpt_opts *opt)
{
	const struct gpuio_cap_header *h = m->hdr;
	uint64_t d;
	bool known = rpt_model__dropped(m, &d);

	j_open(j, NULL, '{');
	j_cstr(j, "capture", m->path);
	j_u64(j, "size_bytes", m->file_size);
	j_hstr(j, "hostname", h->hostname, sizeof(h->hostname));
	j_hstr(j, "kernel", h->kernel, sizeof(h->kernel));
	j_hstr(j, "target", h->target, sizeof(h->target));
	jobs(j, m);
	j_u64(j, "monotonic_base_ns", h->monotonic_ns);
	j_u64(j, "realtime_base_ns", h->realtime_ns);
	j_cstr(j, "time_base", "*_ts_us = (CLOCK_MONOTONIC ns - monotonic_base_ns) / 1000, "
	       "as the exports' ts");
	j_open(j, "warnings", '[');
	if (!known)
		j_cstr(j, NULL, "drops unknown: no stats record");
	else if (d)
		j_cstr(j, NULL, "lossy capture: events were dropped");
	if (m->f->truncated)
		j_cstr(j, NULL, "capture cut short: partial record at the end ignored");
	if (!m->f->records)
		j_cstr(j, NULL, "the capture holds no records");
	if (m->gaps_approx)
		j_cstr(j, NULL, "GPU idle split approximate in some gaps");
	j_close(j, ']');
	summary(j, m);
	j_open(j, "recommendations", '[');
	for (size_t i = 0; i < m->nrecos; i++)
		reco(j, &m->recos[i]);
	j_close(j, ']');
	loops(j, m);
	gpu(j, m);
	ckpts(j, m);
	files(j, m, opt);
	roles(j, m);
	devices(j, m);
	threads(j, m);
	if (rpt_net__any(m)) {          /* only where sockets were named */
		j_key(j, "network");
		rpt_net__json(j->w, m);
	}
	j_close(j, '}');
}

/* The JSON writer on stdout (after what stdio holds), and its end. */
static int j_begin(struct jw *j)
{
	*j = (struct jw){ .first = { true } };
	fflush(stdout);
	return json_writer__new(STDOUT_FILENO, false, false, &j->w);
}

static int j_end(struct jw *j)
{
	json_writer__putc(j->w, '\n');
	return json_writer__close(j->w);
}

int rpt_json__write(struct rpt_model *const *models, int n, const struct rpt_opts *opt)
{
	struct jw j;
	int err = j_begin(&j);

	if (err)
		return err;
	if (n != 1)
		j_open(&j, NULL, '[');
	for (int i = 0; i < n; i++)
		one(&j, models[i], opt);
	if (n != 1)
		j_close(&j, ']');
	return j_end(&j);
}

static void hosts_loop(struct jw *j, const struct rpt_hosts *h, int i, size_t l)
{
	const struct rpt_model *m = h->h[i].m;
	const struct rpt_wait *w = m->loops[l];

	j_open(j, NULL, '{');
	j_u64(j, "pid", w->pid);
	j_u64(j, "tid", w->tid);
	j_cstr(j, "thread", rpt_wait__thread(m, w));
	j_us(j, "span_us", (int64_t)rpt_wait__span(w));
	j_us(j, "waiting_for_data_us", (int64_t)w->ns[RPT_TW_DATA]);
	j_f(j, "waited_pct", 100.0 * rpt_hosts__waited(w));
	j_cstr(j, "cause", rpt_wait__cause(w));
	if (h->straggler >= 0 && i != h->straggler) {
		j_open(j, "meanwhile_us", '{');
		for (int k = 0; k < RPT_TW_N; k++)
			j_us(j, rpt_tw_names[k], (int64_t)h->h[i].meanwhile[l][k]);
		j_close(j, '}');
		j_cstr(j, "meanwhile_busy_with", rpt_hosts__busy_with(h->h[i].meanwhile[l]));
	} else {
		j_null(j, "meanwhile_us");
		j_null(j, "meanwhile_busy_with");
	}
	j_close(j, '}');
}

/* {"across_hosts": {...}, "reports": [each capture's report]} */
int rpt_json__write_hosts(const struct rpt_hosts *h, const struct rpt_opts *opt)
{
	struct jw j;
	int err = j_begin(&j);

	if (err)
		return err;
	j_open(&j, NULL, '{');
	j_open(&j, "across_hosts", '{');
	if (h->straggler >= 0) {
		const struct rpt_hosts_host *s = &h->h[h->straggler];
		const struct rpt_wait *w = s->m->loops[h->loop];

		j_open(&j, "straggler", '{');
		j_u64(&j, "host", (uint64_t)h->straggler);
		j_cstr(&j, "label", s->label);
		j_cstr(&j, "capture", s->m->path);
		j_u64(&j, "pid", w->pid);
		j_u64(&j, "tid", w->tid);
		j_f(&j, "waited_pct", 100.0 * rpt_hosts__waited(w));
		j_cstr(&j, "cause", rpt_wait__cause(w));
		j_us(&j, "waits_us", (int64_t)h->window_ns);
		j_close(&j, '}');
	} else {
		j_null(&j, "straggler");
	}
	j_open(&j, "hosts", '[');
	for (int i = 0; i < h->n; i++) {
		j_open(&j, NULL, '{');
		j_cstr(&j, "label", h->h[i].label);
		j_hstr(&j, "hostname", h->h[i].m->hdr->hostname, sizeof(h->h[i].m->hdr->hostname));
		j_cstr(&j, "capture", h->h[i].m->path);
		j_f(&j, "clock_shift_s", (double)h->h[i].shift / 1e9);
		j_open(&j, "loops", '[');
		for (size_t l = 0; l < h->h[i].m->nloops; l++)
			hosts_loop(&j, h, i, l);
		j_close(&j, ']');
		j_close(&j, '}');
	}
	j_close(&j, ']');
	j_close(&j, '}');
	j_open(&j, "reports", '[');
	for (int i = 0; i < h->n; i++)
		one(&j, h->h[i].m, opt);
	j_close(&j, ']');
	j_close(&j, '}');
	return j_end(&j);
}
