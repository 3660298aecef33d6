// SPDX-License-Identifier: MIT
/*
 * report_tab_summary.c — the report's opening tables: the capture (host,
 * target, the jobs its processes ran in), the warnings, the headlines, the
 * summary of what was traced, and the recommendations.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "capture/capture.h"
#include "capture/cap_layers.h"
#include "lib/job_identity.h"
#include "report/report_doc.h"
#include "report/report_model.h"

#define GET(name) static void name(const struct rpt_ctx *c, const struct rpt_row *r, \
				   struct rpt_cell *o)
#define M (c->m)

static double pct(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : 0;
}

/* ---- the capture: JSON members of the report itself; text and HTML its summary's head ---- */

GET(cap_path) { rpt_cell_cstr(o, M->path); }
GET(cap_size) { rpt_cell_bytes(o, M->file_size); }
GET(cap_host) { rpt_cell_strn(o, M->hdr->hostname, sizeof(M->hdr->hostname)); }
GET(cap_kernel) { rpt_cell_strn(o, M->hdr->kernel, sizeof(M->hdr->kernel)); }
GET(cap_target) { rpt_cell_strn(o, M->hdr->target, sizeof(M->hdr->target)); }
GET(cap_mono) { rpt_cell_u64(o, M->hdr->monotonic_ns); }
GET(cap_real) { rpt_cell_u64(o, M->hdr->realtime_ns); }
GET(cap_base)
{
	rpt_cell_cstr(o, "*_ts_us = (CLOCK_MONOTONIC ns - monotonic_base_ns) / 1000, "
		      "as the exports' ts");
}
GET(cap_base_text)
{
	rpt_cell_printf(o, "ts = us after MONOTONIC %" PRIu64 " ns (as in the exports)",
			(uint64_t)M->hdr->monotonic_ns);
}

/* The jobs its processes ran in (rpt_model__jobs): a row per distinct cgroup */
#define JOBS_MAX 16
static int job_rows(const struct rpt_ctx *c, const struct rpt_row *up, struct rpt_rows *out)
{
	struct rpt_job jb[JOBS_MAX];
	size_t n = rpt_model__jobs(M, jb, JOBS_MAX);

	for (size_t i = 0; i < n; i++)
		if (rpt_rows__add(out, jb[i].cgroup, i, up))
			return -1;
	return 0;
}

static struct rpt_job job_of(const struct rpt_ctx *c, const struct rpt_row *r)
{
	struct rpt_job jb[JOBS_MAX];
	size_t n = rpt_model__jobs(M, jb, JOBS_MAX);

	return r->i < n ? jb[r->i] : (struct rpt_job){ .cgroup = "" };
}

GET(job_cgroup) { rpt_cell_cstr(o, r->p); }
GET(job_procs) { rpt_cell_u64(o, job_of(c, r).nprocs); }
GET(job_who)
{
	struct job_identity id;

	job_identity__parse(r->p, &id);
	if (!job_identity__format(&id, o->buf, RPT_CELL_BUF))
		snprintf(o->buf, RPT_CELL_BUF, "no Slurm, Kubernetes or systemd identity");
	rpt_cell_cstr(o, o->buf);
}
static void job_field(const struct rpt_row *r, struct rpt_cell *o, int k)
{
	struct job_identity id;

	job_identity__parse(r->p, &id);
	if (job_identity__field(&id, k)[0])
		rpt_cell_printf(o, "%s", job_identity__field(&id, k));
}
GET(job_f0) { job_field(r, o, 0); }
GET(job_f1) { job_field(r, o, 1); }
GET(job_f2) { job_field(r, o, 2); }
GET(job_f3) { job_field(r, o, 3); }
GET(job_f4) { job_field(r, o, 4); }
GET(job_f5) { job_field(r, o, 5); }

_Static_assert(JOB_IDENTITY_NFIELDS == 6, "a column per job identity field");
static const struct rpt_col job_cols[] = {
	{ "cgroup", "cgroup", 0, RPT_C_TAIL, job_cgroup },
	{ "processes", "processes", 9, 0, job_procs },
	{ "identity", "identity", 0, RPT_C_NOJSON, job_who },      /* whole: never cut */
	{ "slurm_job", NULL, 0, RPT_C_NOTEXT | RPT_C_NOHTML, job_f0 },
	{ "slurm_step", NULL, 0, RPT_C_NOTEXT | RPT_C_NOHTML, job_f1 },
	{ "k8s_pod_uid", NULL, 0, RPT_C_NOTEXT | RPT_C_NOHTML, job_f2 },
	{ "k8s_qos", NULL, 0, RPT_C_NOTEXT | RPT_C_NOHTML, job_f3 },
	{ "container_id", NULL, 0, RPT_C_NOTEXT | RPT_C_NOHTML, job_f4 },
	{ "unit", NULL, 0, RPT_C_NOTEXT | RPT_C_NOHTML, job_f5 },
};
static const struct rpt_table jobs_tab = {
	.key = "jobs", .title = "jobs (the cgroups of its processes)", .layout = RPT_ROWS,
	RPT_COLS(job_cols), .rows = job_rows,
};
GET(cap_jobs) { rpt_cell_table(o, &jobs_tab); }

static const struct rpt_col capture_cols[] = {
	{ "capture", "capture", 0, 0, cap_path },
	{ "size_bytes", "size", 0, RPT_C_JOIN, cap_size },
	{ "hostname", "host", 0, RPT_C_JOIN, cap_host },
	{ "kernel", "kernel", 0, RPT_C_JOIN, cap_kernel },
	{ "target", "target", 0, RPT_C_JOIN, cap_target },
	{ "jobs", "jobs", 0, 0, cap_jobs },
	{ "monotonic_base_ns", NULL, 0, RPT_C_NOTEXT | RPT_C_NOHTML, cap_mono },
	{ "realtime_base_ns", NULL, 0, RPT_C_NOTEXT | RPT_C_NOHTML, cap_real },
	{ "time_base", NULL, 0, RPT_C_NOTEXT | RPT_C_NOHTML, cap_base },
	{ "time_base_text", "time base", 0, RPT_C_NOJSON, cap_base_text },
};
const struct rpt_table rpt_tab_capture = {
	.key = NULL, .title = "SUMMARY", .layout = RPT_RECORD, .flags = RPT_T_INLINE,
	RPT_COLS(capture_cols), .rows = rpt_rows__one,
};

/* ---- warnings: what makes the numbers below incomplete ---- */

enum warn { W_DROPS_UNKNOWN, W_LOSSY, W_STATES, W_CUT, W_NO_FINAL, W_APPROX, W_EMPTY, W_N };

static uint64_t sched_lost(const struct rpt_model *m)
{
	uint64_t n;

	rpt_model__sched_lost(m, &n);
	return n;
}

static bool warn_applies(const struct rpt_model *m, int w)
{
	uint64_t d;
	bool known = rpt_model__dropped(m, &d);

	switch (w) {
	case W_DROPS_UNKNOWN: return !known;
	case W_LOSSY: return known && d;
	case W_STATES: return known && sched_lost(m);
	case W_CUT: return m->f->truncated;
	case W_NO_FINAL: return known && !m->f->truncated && !m->f->stats.final;
	case W_APPROX: return m->gaps_approx;
	default: return !m->f->records;
	}
}

static int warn_rows(const struct rpt_ctx *c, const struct rpt_row *up, struct rpt_rows *out)
{
	for (int w = 0; w < W_N; w++)
		if (warn_applies(M, w) && rpt_rows__add(out, M, (size_t)w, up))
			return -1;
	return 0;
}

GET(warn_text)
{
	uint64_t d = 0, ring;

	rpt_model__dropped(M, &d);
	ring = d - M->f->stats.user[GPUIO_USTAT_WRITE_ERRORS] - M->cupti_dropped - M->gpu_write_errors;
	switch (r->i) {
	case W_DROPS_UNKNOWN:
		rpt_cell_cstr(o, "drops unknown: the capture has no stats record (tracer killed?); "
			      "counts below may be incomplete");
		break;
	case W_LOSSY: {
		uint64_t vfs = gpuio_stats__bpf(&M->f->stats, GPUIO_STAT_RB_DROP_VFS);
		uint64_t blk = gpuio_stats__bpf(&M->f->stats, GPUIO_STAT_RB_DROP_BLOCK);

		if (!M->ledger_calls && !M->ledger_reqs) {
			rpt_cell_printf(o, "LOSSY CAPTURE: %" PRIu64 " events lost (ring buffer/maps %" PRIu64
					", capture write errors %" PRIu64 ", CUPTI dropped %" PRIu64
					"): totals below undercount", d, ring,
					(uint64_t)M->f->stats.user[GPUIO_USTAT_WRITE_ERRORS],
					M->cupti_dropped + M->gpu_write_errors);
			break;
		}
		/* the kernel summed the lost calls: the file totals hold them */
		rpt_cell_printf(o, "LOSSY CAPTURE: %" PRIu64 " events lost (ring buffer/maps %" PRIu64
				", capture write errors %" PRIu64 ", CUPTI dropped %" PRIu64 "); the "
				"totals per file, process and disk include %" PRIu64 " of the %" PRIu64
				" lost file calls%s and %" PRIu64 " of the %" PRIu64 " lost block requests%s, "
				"summed in the kernel; their latencies, offsets and threads are not known, "
				"and other layers' totals undercount",
				d, ring, (uint64_t)M->f->stats.user[GPUIO_USTAT_WRITE_ERRORS],
				M->cupti_dropped + M->gpu_write_errors, M->ledger_calls, vfs,
				M->ledger_calls >= vfs ? " (exact)" : "", M->ledger_reqs, blk,
				M->ledger_reqs >= blk ? " (exact)" : "");
		break;
	}
	case W_STATES:
		if (M->kt_threads)
			rpt_cell_printf(o, "%" PRIu64 " scheduler records lost or shed: each thread's time "
					"by state (THREAD STATES) is still exact, summed in the kernel for %"
					PRIu64 " threads; the loops' waits by cause and the "
					"exports' thread states are drawn from the records that remain",
					sched_lost(M), M->kt_threads);
		else
			rpt_cell_printf(o, "%" PRIu64 " scheduler records lost or shed: thread states "
					"and the loops' waits by cause are drawn from the records that remain "
					"(a capture from before the kernel summed each thread's time)",
					sched_lost(M));
		break;
	case W_CUT:
		rpt_cell_printf(o, "capture cut short at offset %" PRIu64 " (%" PRIu64 " bytes of a "
				"partial record ignored): the report covers what was written",
				M->f->trunc_offset, M->f->truncated);
		break;
	case W_NO_FINAL:
		rpt_cell_cstr(o, "no final stats record: the tracer did not end cleanly");
		break;
	case W_APPROX:
		rpt_cell_cstr(o, "some GPU idle gaps held too many host calls: their split is "
			      "approximate (merged within a tolerance)");
		break;
	default:
		rpt_cell_cstr(o, "the capture holds no records");
	}
}

static const struct rpt_col warn_cols[] = { { "warning", NULL, 0, 0, warn_text } };
const struct rpt_table rpt_tab_warnings = {
	.key = "warnings", .layout = RPT_LIST, .flags = RPT_T_WARN, RPT_COLS(warn_cols),
	.rows = warn_rows,
};

/* ---- headlines: the answers, one line each ---- */

enum headline { H_GPU, H_READS, H_FAULTS, H_PREFETCH, H_WRITES, H_CKPTS, H_SMALL };

static int headline_rows(const struct rpt_ctx *c, const struct rpt_row *up, struct rpt_rows *out)
{
	const struct rpt_model *m = M;
	int err = 0;

	for (size_t i = 0; i < m->ngpus; i++)
		err |= rpt_rows__add(out, &m->gpus[i], H_GPU, up);
	if (m->vfs_rops)
		err |= rpt_rows__add(out, m, H_READS, up);
	if (m->minor_faults || m->major_faults)
		err |= rpt_rows__add(out, m, H_FAULTS, up);
	if (m->pf.prefetch_hints)
		err |= rpt_rows__add(out, m, H_PREFETCH, up);
	if (m->vfs_wops)
		err |= rpt_rows__add(out, m, H_WRITES, up);
	if (m->nckpts)
		err |= rpt_rows__add(out, m, H_CKPTS, up);
	if (m->small_files >= 10 && m->small_files * 4 >= m->read_files)
		err |= rpt_rows__add(out, m, H_SMALL, up);
	/* i: whether a headline came before (then "nothing crossed a threshold" says something) */
	err |= rpt_rows__add(out, m, out->n ? 1 : 0, up);
	if (!err)
		out->a[out->n - 1].p = NULL;    /* the recommendations' line */
	return err;
}

/* The launching thread's two largest states while idle between steps: "waiting_for_data 1.34 s, on_cpu 0.60 s" */
static int launcher_states(const struct rpt_gpu *g, char *buf, size_t len)
{
	int best[2] = { -1, -1 }, n = 0;
	char d[32];

	for (int k = 0; k < RPT_LS_N; k++) {
		if (!g->between_launch_ns[k])
			continue;
		if (best[0] < 0 || g->between_launch_ns[k] > g->between_launch_ns[best[0]]) {
			best[1] = best[0];
			best[0] = k;
		} else if (best[1] < 0 || g->between_launch_ns[k] > g->between_launch_ns[best[1]]) {
			best[1] = k;
		}
	}
	for (int i = 0; i < 2 && best[i] >= 0; i++) {
		rpt_fmt_dur(g->between_launch_ns[best[i]], d, sizeof(d));
		n += snprintf(buf + n, len - (size_t)n, "%s%s %s", i ? ", " : "",
			      rpt_ls_name(best[i]), d);
	}
	return n;
}

/*
 * "GPU 0 of pid 7 (python3): busy 40.0% of 2.00 s; idle 1.20 s: 0.80 s before
 * the first step, 0.30 s between steps (its launching thread waiting_for_data
 * 0.20 s, on_cpu 0.10 s), 0.10 s after the last; in traced calls: file reads
 * 1.00 s (83%)"
 */
static void headline_gpu(const struct rpt_ctx *c, const struct rpt_gpu *g, struct rpt_cell *o)
{
	static const char *const short_cause[RPT_CAUSE_N] = {
		"file reads", "writes/fsync", "other file calls", "CUDA sync", "outside traced calls",
	};
	char a[32], b[32], d[32], ls[128];
	uint64_t span = g->last - g->first;
	int n, first = 1;

	rpt_fmt_dur(span, a, sizeof(a));
	rpt_fmt_dur(g->idle_ns, b, sizeof(b));
	n = snprintf(o->buf, RPT_CELL_BUF, "GPU %u of pid %u (%s): busy %.1f%% of %s; idle %s",
		     g->device, g->pid, rpt_proc_comm(M, g->pid), pct(g->busy_ns, span), a, b);
	if (g->phased) {
		static const char *const what[3] = { "before the first step", "between steps",
						     "after the last" };

		for (int p = 0; p < 3 && n > 0 && n < RPT_CELL_BUF; p++) {
			if (!g->phase_ns[p] && p != 1)
				continue;
			rpt_fmt_dur(g->phase_ns[p], d, sizeof(d));
			n += snprintf(o->buf + n, RPT_CELL_BUF - (size_t)n, "%s %s %s", first ? ":" : ",",
				      d, what[p]);
			first = 0;
			if (p == 1 && M->launch_states && launcher_states(g, ls, sizeof(ls)))
				n += snprintf(o->buf + n, RPT_CELL_BUF - (size_t)n,
					      " (its launching thread %s)", ls);
		}
	}
	/* by phase, the rest (outside traced calls) is said: the traced calls' share follows */
	for (int k = 0, said = 0; k < RPT_CAUSE_N && n > 0 && n < RPT_CELL_BUF; k++) {
		if (!g->cause_ns[k] || (k == RPT_CAUSE_NONE && g->phased))
			continue;
		rpt_fmt_dur(g->cause_ns[k], d, sizeof(d));
		n += snprintf(o->buf + n, RPT_CELL_BUF - (size_t)n, "%s%s %s (%.0f%%)",
			      said++ ? ", " : !g->phased ? ": " : "; in traced calls: ", short_cause[k],
			      d, pct(g->cause_ns[k], g->idle_ns));
	}
	rpt_cell_cstr(o, o->buf);
}

GET(headline_text)
{
	const struct rpt_model *m = M;
	char a[32], b[32];

	if (!r->p) {                    /* the recommendations' line (i: a headline came before) */
		rpt_cell_printf(o, "%zu recommendation(s)%s", m->nrecos, m->nrecos ? " below" :
				r->i ? ": nothing crossed a threshold" : "");
		return;
	}
	switch (r->i) {
	case H_GPU:
		headline_gpu(c, r->p, o);
		return;
	case H_READS:
		rpt_fmt_bytes(m->vfs_rbytes, a, sizeof(a));
		rpt_fmt_bytes(m->blk_rbytes, b, sizeof(b));
		if (m->pages)
			rpt_cell_printf(o, "reads: %s in %" PRIu64 " calls, page-cache hit ratio %.1f%%; "
					"from the device: %s", a, m->vfs_rops,
					100 * rpt_ratio(m->hit_pages, m->pages), b);
		else
			rpt_cell_printf(o, "reads: %s in %" PRIu64 " calls; from the device: %s", a,
					m->vfs_rops, b);
		return;
	case H_FAULTS:
		rpt_cell_printf(o, "page faults on file mappings: %" PRIu64 " minor, %" PRIu64 " major "
				"(their bytes and time are in the reads)", m->minor_faults,
				m->major_faults);
		return;
	case H_PREFETCH:
		rpt_fmt_bytes(m->pf.read_bytes, a, sizeof(a));
		rpt_cell_printf(o, "prefetch hints: %" PRIu64 " asked the kernel to read ahead; the %"
				PRIu64 " reads (%s) into their ranges after them: %" PRIu64 " found "
				"every page cached, %" PRIu64 " still read from the device",
				m->pf.prefetch_hints, m->pf.reads, a,
				m->pf.reads - m->pf.reads_missed, m->pf.reads_missed);
		return;
	case H_WRITES:
		rpt_fmt_bytes(m->vfs_wbytes, a, sizeof(a));
		rpt_fmt_bytes(m->blk_wbytes, b, sizeof(b));
		rpt_cell_printf(o, "writes: %s in %" PRIu64 " calls; to the device: %s", a, m->vfs_wops, b);
		return;
	case H_CKPTS: {
		uint64_t bytes = 0, lost = 0;

		for (size_t i = 0; i < m->nckpts; i++) {
			bytes += m->ckpts[i].bytes;
			lost += m->ckpts[i].gpu_lost_ns;
		}
		rpt_fmt_bytes(bytes, a, sizeof(a));
		rpt_fmt_dur(lost, b, sizeof(b));
		rpt_cell_printf(o, "%zu checkpoint(s): %s written then synced/closed%s%s%s", m->nckpts,
				a, m->ngpus ? "; GPU idle " : "", m->ngpus ? b : "",
				m->ngpus ? " during them" : "");
		return;
	}
	default:
		rpt_cell_printf(o, "%" PRIu64 " of %" PRIu64 " data files read are small (< 1 MiB) and "
				"read once", m->small_files, m->read_files);
	}
}

static const struct rpt_col headline_cols[] = { { "headline", NULL, 0, 0, headline_text } };
const struct rpt_table rpt_tab_headlines = {
	.key = "headlines", .title = "HEADLINES", .layout = RPT_LIST, RPT_COLS(headline_cols),
	.rows = headline_rows,
};

/* ---- the summary: what was traced, how, and what was lost ---- */

GET(s_start)
{
	if (M->first_ts)
		rpt_cell_at(o, M->first_ts);
}
GET(s_duration) { rpt_cell_ns(o, rpt_model__duration(M)); }
GET(s_procs) { rpt_cell_u64(o, M->nprocs); }
GET(s_threads) { rpt_cell_u64(o, M->nthreads); }
GET(s_group) { rpt_cell_group(o); }
GET(s_vfs_rbytes) { rpt_cell_bytes(o, M->vfs_rbytes); }
GET(s_vfs_wbytes) { rpt_cell_bytes(o, M->vfs_wbytes); }
GET(s_vfs_rops) { rpt_cell_u64(o, M->vfs_rops); }
GET(s_vfs_wops) { rpt_cell_u64(o, M->vfs_wops); }
GET(s_vfs_calls) { rpt_cell_u64(o, M->vfs_calls); }
GET(s_vfs_errors) { rpt_cell_u64(o, M->vfs_errors); }
GET(s_blk_rbytes) { rpt_cell_bytes(o, M->blk_rbytes); }
GET(s_blk_wbytes) { rpt_cell_bytes(o, M->blk_wbytes); }
GET(s_blk_rops) { rpt_cell_u64(o, M->blk_rops); }
GET(s_blk_wops) { rpt_cell_u64(o, M->blk_wops); }
GET(s_blk_reqs) { rpt_cell_u64(o, M->blk_reqs); }
GET(s_pages) { rpt_cell_u64(o, M->pages); }
GET(s_hit_pages) { rpt_cell_u64(o, M->hit_pages); }
GET(s_miss_pages) { rpt_cell_u64(o, M->miss_pages); }
GET(s_hit_ratio) { rpt_cell_ratio(o, rpt_ratio(M->hit_pages, M->pages)); }
/* captures from before the fault layer have no fault counts: no member */
GET(s_faults)
{
	if (M->faults)
		rpt_cell_group(o);
}
GET(s_minor) { rpt_cell_u64(o, M->minor_faults); }
GET(s_major) { rpt_cell_u64(o, M->major_faults); }
/* The attach mode of each layer (capture/cap_layers.h: one row a layer) */
GET(s_attach)
{
	const struct gpuio_cap_layer *ly;

	rpt_cell_pairs(o);
	gpuio_cap_layer__for_each(ly)
		if (gpuio_cap_layer__shown(ly, M->hdr)) {
			size_t n;
			const char *mode = gpuio_cap_layer__mode(ly, M->hdr, &n);

			rpt_cell_pair_add(o, ly->name, mode, n);
		}
}
GET(s_drops_known)
{
	uint64_t d;

	rpt_cell_bool(o, rpt_model__dropped(M, &d));
}
GET(s_dropped)
{
	uint64_t d;

	if (rpt_model__dropped(M, &d))
		rpt_cell_u64(o, d);
	else
		rpt_cell_null(o);
}
GET(s_cupti_dropped) { rpt_cell_u64(o, M->cupti_dropped); }
GET(s_lossy)
{
	uint64_t d;
	bool known = rpt_model__dropped(M, &d);

	rpt_cell_bool(o, !known || d || M->f->truncated);
}
GET(s_complete)
{
	uint64_t d;
	bool known = rpt_model__dropped(M, &d);

	rpt_cell_bool(o, known && M->f->stats.final && !M->f->truncated);
}
GET(s_truncated) { rpt_cell_u64(o, M->f->truncated); }
GET(s_records) { rpt_cell_u64(o, M->f->records); }
GET(s_unresolved) { rpt_cell_u64(o, M->unresolved); }

#define JSON_ONLY (RPT_C_NOTEXT | RPT_C_NOHTML)
static const struct rpt_col summary_cols[] = {
	{ "start", "time|from", 0, 0, s_start },
	{ "duration_us", "for", 0, RPT_C_JOIN, s_duration },
	{ "processes", "tasks|processes", 0, 0, s_procs },
	{ "threads", "threads", 0, RPT_C_JOIN, s_threads },
	{ "vfs", NULL, 0, 0, s_group },
	{ "vfs.read_bytes", "VFS|read", 0, 0, s_vfs_rbytes },
	{ "vfs.read_ops", "in calls", 0, RPT_C_JOIN, s_vfs_rops },
	{ "vfs.write_bytes", "write", 0, RPT_C_JOIN, s_vfs_wbytes },
	{ "vfs.write_ops", "in calls", 0, RPT_C_JOIN, s_vfs_wops },
	{ "vfs.calls", "calls in all", 0, RPT_C_JOIN, s_vfs_calls },
	{ "vfs.failed_calls", "failed", 0, RPT_C_JOIN, s_vfs_errors },
	{ "block", NULL, 0, 0, s_group },
	{ "block.read_bytes", "block|read", 0, 0, s_blk_rbytes },
	{ "block.read_ops", "in requests", 0, RPT_C_JOIN, s_blk_rops },
	{ "block.write_bytes", "write", 0, RPT_C_JOIN, s_blk_wbytes },
	{ "block.write_ops", "in requests", 0, RPT_C_JOIN, s_blk_wops },
	{ "block.requests", NULL, 0, JSON_ONLY, s_blk_reqs },
	{ "page_cache", NULL, 0, 0, s_group },
	{ "page_cache.hit_ratio", "page cache|hit ratio", 0, 0, s_hit_ratio },
	{ "page_cache.pages", "pages touched by buffered reads", 0, RPT_C_JOIN, s_pages },
	{ "page_cache.hit_pages", "hit", 0, RPT_C_JOIN, s_hit_pages },
	{ "page_cache.miss_pages", "added by misses", 0, RPT_C_JOIN, s_miss_pages },
	{ "page_faults", NULL, 0, 0, s_faults },
	{ "page_faults.minor", "page faults|minor", 0, 0, s_minor },
	{ "page_faults.major", "major", 0, RPT_C_JOIN, s_major },
	{ "attach_modes", "attach", 0, 0, s_attach },
	{ "drops_known", NULL, 0, JSON_ONLY, s_drops_known },
	{ "dropped", "drops|measured", 0, 0, s_dropped },
	{ "cupti_dropped", "of them CUPTI's", 0, RPT_C_JOIN | RPT_C_NOZERO, s_cupti_dropped },
	{ "lossy", "lossy", 0, RPT_C_JOIN, s_lossy },
	{ "complete", "complete", 0, RPT_C_JOIN, s_complete },
	{ "truncated_bytes", "cut short by", 0, RPT_C_JOIN | RPT_C_NOZERO, s_truncated },
	{ "records", "records", 0, 0, s_records },
	{ "unresolved_paths", "files without a path", 0, RPT_C_JOIN, s_unresolved },
};
const struct rpt_table rpt_tab_summary = {
	.key = "summary", .title = "SUMMARY", .layout = RPT_RECORD, .flags = RPT_T_NOHEAD,
	RPT_COLS(summary_cols), .rows = rpt_rows__one,
};

/* ---- recommendations (report_reco.c) ---- */

static int reco_rows(const struct rpt_ctx *c, const struct rpt_row *up, struct rpt_rows *out)
{
	/* inside a loop: its own; at the top: all */
	const struct rpt_wait *w = up ? up->p : NULL;

	for (size_t i = 0; i < M->nrecos; i++)
		if ((!w || M->recos[i].loop == (int)w->index) &&
		    rpt_rows__add(out, &M->recos[i], i, up))
			return -1;
	return 0;
}

#define RECO ((const struct rpt_reco *)r->p)
GET(reco_lead) { rpt_cell_printf(o, "%zu. [%s] %s", r->i + 1, RECO->kind, RECO->text); }
GET(reco_kind) { rpt_cell_cstr(o, RECO->kind); }
GET(reco_text) { rpt_cell_cstr(o, RECO->text); }
GET(reco_evidence) { rpt_cell_cstr(o, RECO->evidence); }

static const struct rpt_col reco_cols[] = {
	{ "lead", NULL, 0, RPT_C_LEAD | RPT_C_NOJSON, reco_lead },
	{ "kind", NULL, 0, JSON_ONLY, reco_kind },
	{ "text", NULL, 0, JSON_ONLY, reco_text },
	{ "evidence", "evidence:", 0, 0, reco_evidence },
};
const struct rpt_table rpt_tab_recos = {
	.key = "recommendations", .title = "RECOMMENDATIONS", .layout = RPT_BLOCKS,
	RPT_COLS(reco_cols), .rows = reco_rows,
};
