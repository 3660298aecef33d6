// SPDX-License-Identifier: MIT
/*
 * report_tab_files.c — the files: checkpoints (write bursts of checkpoint
 * files), the files by role (report_roles.c), every file ranked by time,
 * bytes and ops, and the small data files read once.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/units.h"
#include "report/report_doc.h"
#include "report/report_model.h"
#include "report/report_sites.h"

#define GET(name) static void name(const struct rpt_ctx *c, const struct rpt_row *r, \
				   struct rpt_cell *o)
#define M (c->m)
#define F ((const struct rpt_file *)r->p)
#define K ((const struct rpt_ckpt *)r->p)
#define JSON_ONLY (RPT_C_NOTEXT | RPT_C_NOHTML)

GET(group) { rpt_cell_group(o); }

/* ---- checkpoints ---- */

static int ckpt_rows(const struct rpt_ctx *c, const struct rpt_row *up, struct rpt_rows *out)
{
	for (size_t i = 0; i < M->nckpts; i++)
		if (rpt_rows__add(out, &M->ckpts[i], i, up))
			return -1;
	rpt_rows__limit(out, 50, "checkpoints (see --json)");
	return 0;
}

GET(k_pid) { rpt_cell_u64(o, K->pid); }
GET(k_tid) { rpt_cell_u64(o, K->tid); }
GET(k_path) { rpt_cell_str(o, M->files[K->file].path, M->files[K->file].path_len); }
GET(k_start) { rpt_cell_at(o, K->s); }
GET(k_dur) { rpt_cell_ns(o, K->e - K->s); }
GET(k_bytes) { rpt_cell_bytes(o, K->bytes); }
GET(k_writes) { rpt_cell_u64(o, K->writes); }
GET(k_ended) { rpt_cell_cstr(o, K->synced ? "fsync" : "close"); }
GET(k_rate)
{
	uint64_t d = K->e - K->s;

	rpt_cell_f(o, d ? (double)K->bytes / 1048576.0 / ((double)d / NS_PER_SEC_F) : 0, 1);
}
GET(k_gpu) { rpt_cell_ns(o, K->gpu_lost_ns); }

static const struct rpt_col ckpt_cols[] = {
	{ "pid", "pid", 7, 0, k_pid },
	{ "tid", "tid", 7, 0, k_tid },
	{ "path", "file", 100, RPT_C_TAIL, k_path },
	{ "start", "at", -50, 0, k_start },
	{ "dur_us", "took", 10, 0, k_dur },
	{ "bytes", "bytes", 10, 0, k_bytes },
	{ "writes", "writes", 7, 0, k_writes },
	{ "ended_by", "then", -5, 0, k_ended },
	{ "MiBps", "MiB/s", 8, 0, k_rate },
	{ "gpu_idle_us", "GPU idle", 10, 0, k_gpu },
};
const struct rpt_table rpt_tab_ckpts = {
	.key = "checkpoints", .title = "CHECKPOINTS",
	.about = "write bursts >= 1 MiB ended by fsync/close, in checkpoint files",
	.none = "none", .layout = RPT_ROWS, RPT_COLS(ckpt_cols), .rows = ckpt_rows,
};

/* ---- files by role ---- */

static int role_rows(const struct rpt_ctx *c, const struct rpt_row *up, struct rpt_rows *out)
{
	for (int k = 0; k < RPT_ROLE_N; k++)
		if (rpt_rows__add(out, &M->roles[k], (size_t)k, up))
			return -1;
	return 0;
}

#define RS ((const struct rpt_role_sum *)r->p)
GET(ro_name) { rpt_cell_cstr(o, rpt_role_names[r->i]); }
GET(ro_files) { rpt_cell_u64(o, RS->files); }
GET(ro_rbytes) { rpt_cell_bytes(o, RS->rbytes); }
GET(ro_wbytes) { rpt_cell_bytes(o, RS->wbytes); }
GET(ro_rtime) { rpt_cell_ns(o, RS->rtime); }
GET(ro_what)
{
	static const char *const what[RPT_ROLE_N] = {
		"read by the job", "interpreter, libraries, config", "written state, not read back",
		"logs, outputs, pseudo files",
	};

	rpt_cell_cstr(o, what[r->i]);
}

static const struct rpt_col role_cols[] = {
	{ "role", "role", -10, RPT_C_LEAD, ro_name },
	{ "files", "files", 8, 0, ro_files },
	{ "read_bytes", "read", 10, 0, ro_rbytes },
	{ "write_bytes", "written", 10, 0, ro_wbytes },
	{ "read_time_us", "read time", 10, 0, ro_rtime },
	{ "what", "what", 0, RPT_C_NOJSON | RPT_C_TAIL, ro_what },
};
const struct rpt_table rpt_tab_roles = {
	.key = "roles", .title = "FILES BY ROLE", .layout = RPT_ROWS, .flags = RPT_T_BYKEY,
	RPT_COLS(role_cols), .rows = role_rows,
};

/* ---- files, ranked (rpt_model__ranked_files) ---- */

static int file_rows(const struct rpt_ctx *c, const struct rpt_row *up, struct rpt_rows *out)
{
	size_t n, *idx = rpt_model__ranked_files(M, c->opt->top, &n);
	int err = idx ? 0 : -1;

	for (size_t k = 0; idx && k < n && !err; k++)
		err = rpt_rows__add(out, &M->files[idx[k]], idx[k], up);
	free(idx);
	return err;
}

static void files_about(const struct rpt_ctx *c, const struct rpt_rows *rows, char *buf,
			size_t len)
{
	snprintf(buf, len, "%zu of %zu: top %u by time, bytes and ops; --files all for every file",
		 rows->n, M->nfiles, c->opt->top);
}

GET(f_path) { rpt_cell_str(o, F->path, F->path_len); }
GET(f_role) { rpt_cell_cstr(o, rpt_role_names[F->role]); }
GET(f_dev) { rpt_cell_u64(o, F->dev); }
GET(f_ino) { rpt_cell_u64(o, F->ino); }
GET(f_rbytes) { rpt_cell_bytes(o, F->rbytes); }
GET(f_wbytes) { rpt_cell_bytes(o, F->wbytes); }
GET(f_rops) { rpt_cell_u64(o, F->rops); }
GET(f_wops) { rpt_cell_u64(o, F->wops); }
GET(f_opens) { rpt_cell_u64(o, F->opens); }
GET(f_closes) { rpt_cell_u64(o, F->closes); }
GET(f_syncs) { rpt_cell_u64(o, F->syncs); }
GET(f_other) { rpt_cell_u64(o, F->other_ops); }
GET(f_errors) { rpt_cell_u64(o, F->errors); }
GET(f_time) { rpt_cell_ns(o, F->rtime + F->wtime + F->otime); }
GET(f_rtime) { rpt_cell_ns(o, F->rtime); }
GET(f_wtime) { rpt_cell_ns(o, F->wtime); }
GET(f_otime) { rpt_cell_ns(o, F->otime); }
GET(f_mean) { rpt_cell_ns(o, F->lat.n ? F->lat.sum / F->lat.n : 0); }
GET(f_p50) { rpt_cell_ns(o, rpt_hist__pct(&F->lat, 0.5)); }
GET(f_p99) { rpt_cell_ns(o, rpt_hist__pct(&F->lat, 0.99)); }
GET(f_min) { rpt_cell_ns(o, F->lat.min); }
GET(f_max) { rpt_cell_ns(o, F->lat.max); }
GET(f_pages) { rpt_cell_u64(o, F->pages); }
GET(f_hit_pages) { rpt_cell_u64(o, F->hit_pages); }
GET(f_miss_pages) { rpt_cell_u64(o, F->miss_pages); }
GET(f_hit) { rpt_cell_ratio(o, rpt_ratio(F->hit_pages, F->pages)); }
GET(f_faults)
{
	if (M->faults)          /* captures from before the fault layer: no member */
		rpt_cell_group(o);
}
GET(f_minor) { rpt_cell_u64(o, F->minor_faults); }
GET(f_major) { rpt_cell_u64(o, F->major_faults); }
GET(f_direct) { rpt_cell_bytes(o, F->direct_rbytes); }
GET(f_extent) { rpt_cell_bytes(o, F->extent); }
GET(f_pf_hints) { rpt_cell_u64(o, F->pf.hints); }
GET(f_pf_prefetch) { rpt_cell_u64(o, F->pf.prefetch_hints); }
GET(f_pf_bytes) { rpt_cell_bytes(o, F->pf.hinted_bytes); }
GET(f_pf_reads) { rpt_cell_u64(o, F->pf.reads); }
GET(f_pf_rbytes) { rpt_cell_bytes(o, F->pf.read_bytes); }
GET(f_pf_missed) { rpt_cell_u64(o, F->pf.reads_missed); }
GET(f_pf_miss_pages) { rpt_cell_u64(o, F->pf.miss_pages); }
GET(f_pattern)
{
	uint64_t single;
	enum rpt_pattern p = rpt_file__pattern(F, &single);

	if (single)
		rpt_cell_null(o);
	else
		rpt_cell_cstr(o, rpt_pattern_name(p));
}
GET(f_seq) { rpt_cell_u64(o, F->pat[RPT_PAT_SEQ]); }
GET(f_strided) { rpt_cell_u64(o, F->pat[RPT_PAT_STRIDED]); }
GET(f_random) { rpt_cell_u64(o, F->pat[RPT_PAT_RANDOM]); }
GET(f_sizes) { rpt_cell_hist(o, F->size_hist, "bytes"); }
GET(f_pids) { rpt_cell_u32s(o, F->pids, F->npids < RPT_FILE_PIDS ? F->npids : RPT_FILE_PIDS); }
GET(f_more_pids) { rpt_cell_bool(o, F->npids > RPT_FILE_PIDS); }
GET(f_blk_reqs) { rpt_cell_u64(o, F->blk_reqs); }
GET(f_blk_rbytes) { rpt_cell_bytes(o, F->blk_rbytes); }
GET(f_blk_wbytes) { rpt_cell_bytes(o, F->blk_wbytes); }
GET(f_blk_svc) { rpt_cell_ns(o, F->blk_reqs ? F->blk_svc_ns / F->blk_reqs : 0); }
GET(f_idle_read) { rpt_cell_ns(o, F->gpu_idle_read_ns); }
GET(f_idle_miss) { rpt_cell_u64(o, F->gpu_idle_miss_pages); }

/* ---- a file's calls by the line of the program that made them (--stacks) ---- */

static int fsite_rows(const struct rpt_ctx *c, const struct rpt_row *up, struct rpt_rows *out)
{
	size_t n;
	const struct rpt_site_sum *v = rpt_sites__file(M, up->i, &n);

	for (size_t i = 0; i < n && i < 20; i++)
		if (rpt_rows__add(out, &v[i], i, up))
			return -1;
	rpt_rows__limit(out, 3, "lines (--json has up to 20)");
	return 0;
}

static const struct rpt_table fsite_tab = {
	.key = "call_sites", .title = "by the line that called", .layout = RPT_ROWS,
	.cols = rpt_site_cols, .ncols = RPT_SITE_NCOLS, .rows = fsite_rows,
};
GET(f_sites) { rpt_cell_table(o, &fsite_tab); }

static const struct rpt_col file_cols[] = {
	{ "path", "path", 110, RPT_C_TAIL, f_path },
	{ "role", "role", -10, 0, f_role },
	{ "dev", NULL, 0, JSON_ONLY, f_dev },
	{ "ino", NULL, 0, JSON_ONLY, f_ino },
	{ "read_bytes", "read", 10, 0, f_rbytes },
	{ "write_bytes", "written", 10, 0, f_wbytes },
	{ "read_ops", "reads", 7, 0, f_rops },
	{ "write_ops", "writes", 7, 0, f_wops },
	{ "opens", "opens", 6, 0, f_opens },
	{ "closes", NULL, 0, JSON_ONLY, f_closes },
	{ "syncs", NULL, 0, JSON_ONLY, f_syncs },
	{ "other_ops", NULL, 0, JSON_ONLY, f_other },
	{ "failed_ops", NULL, 0, JSON_ONLY, f_errors },
	{ "time_in_calls", "in calls", 10, RPT_C_NOJSON, f_time },
	{ "read_time_us", NULL, 0, JSON_ONLY, f_rtime },
	{ "write_time_us", NULL, 0, JSON_ONLY, f_wtime },
	{ "other_time_us", NULL, 0, JSON_ONLY, f_otime },
	{ "latency_us", NULL, 0, 0, group },
	{ "latency_us.mean", "mean", 9, 0, f_mean },
	{ "latency_us.p50", "p50", 9, 0, f_p50 },
	{ "latency_us.p99", "p99", 9, 0, f_p99 },
	{ "latency_us.min", NULL, 0, JSON_ONLY, f_min },
	{ "latency_us.max", NULL, 0, JSON_ONLY, f_max },
	{ "page_cache", NULL, 0, 0, group },
	{ "page_cache.pages", NULL, 0, JSON_ONLY, f_pages },
	{ "page_cache.hit_pages", NULL, 0, JSON_ONLY, f_hit_pages },
	{ "page_cache.miss_pages", NULL, 0, JSON_ONLY, f_miss_pages },
	{ "page_cache.hit_ratio", "cached", 7, 0, f_hit },
	{ "page_faults", NULL, 0, 0, f_faults },
	{ "page_faults.minor", "minor faults", 12, 0, f_minor },
	{ "page_faults.major", "major faults", 12, 0, f_major },
	{ "direct_read_bytes", NULL, 0, JSON_ONLY, f_direct },
	{ "extent_bytes", NULL, 0, JSON_ONLY, f_extent },
	{ "prefetch", NULL, 0, JSON_ONLY, group },
	{ "prefetch.hints", NULL, 0, JSON_ONLY, f_pf_hints },
	{ "prefetch.willneed_hints", NULL, 0, JSON_ONLY, f_pf_prefetch },
	{ "prefetch.hinted_bytes", NULL, 0, JSON_ONLY, f_pf_bytes },
	{ "prefetch.reads_after", NULL, 0, JSON_ONLY, f_pf_reads },
	{ "prefetch.read_bytes_after", NULL, 0, JSON_ONLY, f_pf_rbytes },
	{ "prefetch.reads_after_missed", NULL, 0, JSON_ONLY, f_pf_missed },
	{ "prefetch.miss_pages_after", NULL, 0, JSON_ONLY, f_pf_miss_pages },
	{ "pattern", "pattern", -10, 0, f_pattern },
	{ "pattern_counts", NULL, 0, JSON_ONLY, group },
	{ "pattern_counts.sequential", NULL, 0, JSON_ONLY, f_seq },
	{ "pattern_counts.strided", NULL, 0, JSON_ONLY, f_strided },
	{ "pattern_counts.random", NULL, 0, JSON_ONLY, f_random },
	{ "request_sizes", "request sizes", 0, JSON_ONLY, f_sizes },
	{ "pids", "pids", -12, RPT_C_NOTEXT, f_pids },
	{ "more_pids", NULL, 0, JSON_ONLY, f_more_pids },
	{ "block", NULL, 0, 0, group },
	{ "block.requests", "device requests", 8, RPT_C_NOTEXT, f_blk_reqs },
	{ "block.read_bytes", "device read", 10, 0, f_blk_rbytes },
	{ "block.write_bytes", "device written", 10, RPT_C_NOTEXT, f_blk_wbytes },
	{ "block.mean_service_us", "service", 9, RPT_C_NOTEXT, f_blk_svc },
	{ "gpu_idle_read_us", NULL, 0, JSON_ONLY, f_idle_read },
	{ "gpu_idle_miss_pages", NULL, 0, JSON_ONLY, f_idle_miss },
	{ "call_sites", NULL, 0, 0, f_sites },
};
const struct rpt_table rpt_tab_files = {
	.key = "files", .title = "FILES", .layout = RPT_ROWS, RPT_COLS(file_cols),
	.rows = file_rows, .describe = files_about,
};

/* the count the ranking is out of (JSON: files_total beside files) */
GET(files_total) { rpt_cell_u64(o, M->nfiles); }
static const struct rpt_col file_count_cols[] = {
	{ "files_total", NULL, 0, 0, files_total },
};
const struct rpt_table rpt_tab_file_counts = {
	.key = NULL, .layout = RPT_RECORD, .flags = RPT_T_INLINE | RPT_T_NOTEXT | RPT_T_NOHTML,
	RPT_COLS(file_count_cols), .rows = rpt_rows__one,
};

/* ---- small data files read once ---- */

static int small_rows(const struct rpt_ctx *c, const struct rpt_row *up, struct rpt_rows *out)
{
	return rpt_rows__add(out, M, 0, up);
}
GET(sm_count) { rpt_cell_u64(o, M->small_files); }
GET(sm_files) { rpt_cell_u64(o, M->read_files); }
GET(sm_bytes) { rpt_cell_bytes(o, M->small_bytes); }
GET(sm_reads) { rpt_cell_u64(o, M->small_rops); }
static const struct rpt_col small_cols[] = {
	{ "count", "small (< 1 MiB, read once)", 0, 0, sm_count },
	{ "read_files", "of the data files read", 0, RPT_C_JOIN, sm_files },
	{ "bytes", "their bytes", 0, RPT_C_JOIN, sm_bytes },
	{ "reads", "in reads", 0, RPT_C_JOIN, sm_reads },
};
const struct rpt_table rpt_tab_small_files = {
	.key = "small_files", .layout = RPT_RECORD, .flags = RPT_T_NOHEAD,
	RPT_COLS(small_cols), .rows = small_rows,
};
