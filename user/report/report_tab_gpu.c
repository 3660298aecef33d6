// SPDX-License-Identifier: MIT
/*
 * report_tab_gpu.c — the GPU section (report_gpu.c): the collector's state,
 * each device's busy and idle time with the idle split by what the host
 * threads did and by the launching thread's state, the largest idle gaps,
 * and the files read while the GPU idled.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "capture/capture.h"
#include "report/report_doc.h"
#include "report/report_model.h"
#include "report/report_sites.h"

#define GET(name) static void name(const struct rpt_ctx *c, const struct rpt_row *r, \
				   struct rpt_cell *o)
#define M (c->m)
#define G ((const struct rpt_gpu *)r->p)
#define GP ((const struct rpt_gap *)r->p)
#define JSON_ONLY (RPT_C_NOTEXT | RPT_C_NOHTML)

static const char *cause_name(int k)
{
	return rpt_cause_names[k];
}

static const char *ls_name(int k)
{
	return rpt_ls_name(k);
}

GET(group) { rpt_cell_group(o); }

/* ---- devices: one per (process, GPU) ---- */

static int gpu_rows(const struct rpt_ctx *c, const struct rpt_row *up, struct rpt_rows *out)
{
	for (size_t i = 0; i < M->ngpus; i++)
		if (rpt_rows__add(out, &M->gpus[i], i, up))
			return -1;
	return 0;
}

GET(g_lead)
{
	rpt_cell_printf(o, "GPU %u pid %u (%s)", G->device, G->pid, rpt_proc_comm(M, G->pid));
}
GET(g_pid) { rpt_cell_u64(o, G->pid); }
GET(g_device) { rpt_cell_u64(o, G->device); }
GET(g_first) { rpt_cell_at(o, G->first); }
GET(g_last) { rpt_cell_at(o, G->last); }
GET(g_span) { rpt_cell_ns(o, G->last - G->first); }
GET(g_busy) { rpt_cell_ns(o, G->busy_ns); }
GET(g_busy_frac)
{
	uint64_t span = G->last - G->first;

	rpt_cell_ratio(o, span ? (double)G->busy_ns / (double)span : -1);
}
GET(g_kernels) { rpt_cell_u64(o, G->kernels); }
GET(g_copies) { rpt_cell_u64(o, G->copies); }
GET(g_memsets) { rpt_cell_u64(o, G->memsets); }
GET(g_kernel_ns) { rpt_cell_ns(o, G->kernel_ns); }
GET(g_copy_ns) { rpt_cell_ns(o, G->copy_ns); }
GET(g_gaps) { rpt_cell_u64(o, G->ngaps); }
GET(g_idle) { rpt_cell_ns(o, G->idle_ns); }
GET(g_causes) { rpt_cell_nsmap(o, G->cause_ns, RPT_CAUSE_N, cause_name, G->idle_ns, false); }
GET(g_launcher)
{
	if (G->launcher_tid)
		rpt_cell_group(o);
	else
		rpt_cell_null(o);
}
GET(g_launcher_tid) { rpt_cell_u64(o, G->launcher_tid); }
GET(g_launches) { rpt_cell_u64(o, G->launcher_launches); }
GET(g_launch_states)
{
	if (M->launch_states)
		rpt_cell_nsmap(o, G->launch_ns, RPT_LS_N, ls_name, G->idle_ns, false);
	else
		rpt_cell_null(o);
}
GET(g_launch_note)
{
	if (!G->launcher_tid || M->launch_states)
		return;
	rpt_cell_cstr(o, M->hdr->flags & GPUIO_CAPF_NO_BPF ?
		      "no thread states (traced without BPF)" :
		      "no thread states in this capture (traced with --no-sched?)");
}
GET(tl_bucket) { rpt_cell_ns(o, M->tl_width); }
GET(tl_start) { rpt_cell_ts(o, rpt_ts_rel_ns(M, M->tl_t0)); }
GET(g_tl_busy) { rpt_cell_series(o, G->busy->v, (double)M->tl_width); }
#define CAUSE_SERIES(name, k) \
	GET(name) { rpt_cell_series(o, G->cause[k]->v, (double)M->tl_width); }
CAUSE_SERIES(g_tl_read, RPT_CAUSE_READ)
CAUSE_SERIES(g_tl_write, RPT_CAUSE_WRITE)
CAUSE_SERIES(g_tl_other, RPT_CAUSE_OTHER_IO)
CAUSE_SERIES(g_tl_sync, RPT_CAUSE_CUDA_SYNC)
CAUSE_SERIES(g_tl_none, RPT_CAUSE_NONE)
_Static_assert(RPT_CAUSE_N == 5, "a series column per idle cause");
GET(g_ltl)
{
	if (M->launch_states && G->launcher_tid)
		rpt_cell_group(o);
}
#define LAUNCHER_SERIES(name, k) \
	GET(name) { rpt_cell_series(o, G->launcher[k]->v, (double)M->tl_width); }
LAUNCHER_SERIES(g_ltl_data, RPT_LG_DATA)
LAUNCHER_SERIES(g_ltl_cpu, RPT_LG_CPU)
LAUNCHER_SERIES(g_ltl_runnable, RPT_LG_RUNNABLE)
LAUNCHER_SERIES(g_ltl_sync, RPT_LG_SYNC)
LAUNCHER_SERIES(g_ltl_other, RPT_LG_OTHER)
_Static_assert(RPT_LG_N == 5, "a series column per launcher state group");

static const struct rpt_col gpu_cols[] = {
	{ "lead", NULL, 0, RPT_C_LEAD | RPT_C_NOJSON, g_lead },
	{ "pid", "pid", 0, JSON_ONLY, g_pid },
	{ "device", "device", 0, JSON_ONLY, g_device },
	{ "first", "from", 0, 0, g_first },
	{ "last", "to", 0, JSON_ONLY, g_last },
	{ "span_us", "span", 0, 0, g_span },
	{ "busy_us", "busy", 0, 0, g_busy },
	{ "busy_fraction", "busy share", 0, 0, g_busy_frac },
	{ "kernels", "kernels", 0, 0, g_kernels },
	{ "copies", "copies", 0, 0, g_copies },
	{ "memsets", "memsets", 0, 0, g_memsets },
	{ "kernel_us", "in kernels", 0, 0, g_kernel_ns },
	{ "copy_us", "in copies", 0, 0, g_copy_ns },
	{ "gaps", "idle gaps", 0, 0, g_gaps },
	{ "idle_us", "idle", 0, 0, g_idle },
	{ "idle_by_cause_us", "idle while the host threads were in", 0, 0, g_causes },
	{ "launcher", NULL, 0, JSON_ONLY, g_launcher },
	{ "launcher.tid", "launching thread (most launches)", 0, 0, g_launcher_tid },
	{ "launcher.launches", "launches", 0, 0, g_launches },
	{ "launcher.idle_by_state_us", "the launching threads during the idle gaps (each gap: the "
	  "thread whose launch ended it)", 0, 0, g_launch_states },
	{ "launcher_note", "launching threads", 0, RPT_C_NOJSON, g_launch_note },
	{ "launcher_timeline", "busy, and idle by what its launching thread was doing, over time", 0,
	  RPT_C_NOTEXT | RPT_C_FIGURE | RPT_C_STACK, g_ltl },
	{ "launcher_timeline.busy", "busy", 0, RPT_C_NOTEXT, g_tl_busy },
	{ "launcher_timeline.waiting_for_data", "idle: launcher waiting for data", 0, RPT_C_NOTEXT,
	  g_ltl_data },
	{ "launcher_timeline.on_cpu", "idle: launcher on a CPU", 0, RPT_C_NOTEXT, g_ltl_cpu },
	{ "launcher_timeline.runnable", "idle: launcher waiting for a CPU", 0, RPT_C_NOTEXT,
	  g_ltl_runnable },
	{ "launcher_timeline.gpu_sync", "idle: launcher in a CUDA sync", 0, RPT_C_NOTEXT, g_ltl_sync },
	{ "launcher_timeline.other", "idle: launcher asleep otherwise, or unknown", 0, RPT_C_NOTEXT,
	  g_ltl_other },
	{ "timeline", "busy and idle by cause over time", 0, RPT_C_NOTEXT | RPT_C_FIGURE | RPT_C_STACK,
	  group },
	{ "timeline.bucket_us", NULL, 0, JSON_ONLY, tl_bucket },
	{ "timeline.start_ts_us", NULL, 0, JSON_ONLY, tl_start },
	{ "timeline.busy", "busy", 0, RPT_C_NOTEXT, g_tl_busy },
	{ "timeline.idle_file_read", "idle: file reads", 0, RPT_C_NOTEXT, g_tl_read },
	{ "timeline.idle_write_fsync", "idle: writes/fsync", 0, RPT_C_NOTEXT, g_tl_write },
	{ "timeline.idle_other_file_io", "idle: other file calls", 0, RPT_C_NOTEXT, g_tl_other },
	{ "timeline.idle_cuda_sync", "idle: CUDA sync", 0, RPT_C_NOTEXT, g_tl_sync },
	{ "timeline.idle_other", "idle: other (compute, ...)", 0, RPT_C_NOTEXT, g_tl_none },
};
static const struct rpt_table gpu_devices_tab = {
	.key = "devices", .layout = RPT_BLOCKS, .flags = RPT_T_NOHEAD, RPT_COLS(gpu_cols),
	.rows = gpu_rows,
};

/* ---- the largest idle gaps ---- */

static int gap_rows(const struct rpt_ctx *c, const struct rpt_row *up, struct rpt_rows *out)
{
	for (size_t i = 0; i < M->ntop_gaps; i++)
		if (rpt_rows__add(out, &M->gaps[M->top_gaps[i]], i, up))
			return -1;
	return 0;
}

GET(gp_pid) { rpt_cell_u64(o, M->gpus[GP->gpu].pid); }
GET(gp_device) { rpt_cell_u64(o, M->gpus[GP->gpu].device); }
GET(gp_start) { rpt_cell_at(o, GP->s); }
GET(gp_dur) { rpt_cell_ns(o, GP->e - GP->s); }
GET(gp_causes) { rpt_cell_nsmap(o, GP->cause_ns, RPT_CAUSE_N, cause_name, 0, false); }
GET(gp_launcher)
{
	if (GP->launcher_tid)
		rpt_cell_u64(o, GP->launcher_tid);
	else
		rpt_cell_null(o);
}
GET(gp_launch_states)
{
	if (GP->launcher_tid && M->launch_states)
		rpt_cell_nsmap(o, GP->launch_ns, RPT_LS_N, ls_name, 0, false);
	else
		rpt_cell_null(o);
}
GET(gp_approx) { rpt_cell_bool(o, GP->approx); }
GET(gp_site)
{
	if (GP->launcher_site < 0)
		rpt_cell_null(o);
	else
		rpt_cell_cstr(o, rpt_sites__text(M, GP->launcher_site, o->buf, RPT_CELL_BUF));
}

/* the files read during one of the largest gaps (up to RPT_GAP_FILES) */
static int gap_file_rows(const struct rpt_ctx *c, const struct rpt_row *up, struct rpt_rows *out)
{
	for (int k = 0; k < RPT_GAP_FILES && M->top_gap_files[up->i][k].ns; k++)
		if (rpt_rows__add(out, &M->top_gap_files[up->i][k], (size_t)k, up))
			return -1;
	return 0;
}
#define GF ((const struct rpt_gap_file *)r->p)
GET(gf_path)
{
	const struct rpt_file *f = &M->files[GF->file - 1];

	rpt_cell_str(o, f->path, f->path_len);
}
GET(gf_ns) { rpt_cell_ns(o, GF->ns); }
static const struct rpt_col gap_file_cols[] = {
	{ "path", "file", 90, RPT_C_TAIL, gf_path },
	{ "read_us", "reading", 10, 0, gf_ns },
};
static const struct rpt_table gap_files_tab = {
	.key = "files", .title = "files read during it", .layout = RPT_ROWS, RPT_COLS(gap_file_cols),
	.rows = gap_file_rows,
};
GET(gp_files) { rpt_cell_table(o, &gap_files_tab); }

GET(gp_lead)
{
	char a[32];

	rpt_fmt_dur(GP->e - GP->s, a, sizeof(a));
	rpt_cell_printf(o, "%s idle: GPU %u of pid %u", a, M->gpus[GP->gpu].device,
			M->gpus[GP->gpu].pid);
}

static const struct rpt_col gap_cols[] = {
	{ "lead", NULL, 0, RPT_C_LEAD | RPT_C_NOJSON, gp_lead },
	{ "pid", "pid", 8, JSON_ONLY, gp_pid },
	{ "device", "GPU", 4, JSON_ONLY, gp_device },
	{ "start", "from", -50, 0, gp_start },
	{ "dur_us", "length", 10, JSON_ONLY, gp_dur },
	{ "approximate", "approximate", 7, RPT_C_NOZERO, gp_approx },
	{ "by_cause_us", "host threads were in", 0, 0, gp_causes },
	{ "launcher_tid", "its launching thread", 8, 0, gp_launcher },
	{ "launcher_state_us", "the launcher was", 0, 0, gp_launch_states },
	{ "launcher_site", "at the line", 0, RPT_C_NOZERO, gp_site },
	{ "files", NULL, 0, 0, gp_files },
};
static const struct rpt_table gaps_tab = {
	.key = "largest_gaps", .title = "largest idle gaps", .layout = RPT_BLOCKS,
	RPT_COLS(gap_cols), .rows = gap_rows,
};

/* ---- files read while the GPU idled ---- */

static int idle_file_rows(const struct rpt_ctx *c, const struct rpt_row *up, struct rpt_rows *out)
{
	for (size_t i = 0; i < M->nfiles; i++)
		if (M->files[i].gpu_idle_read_ns && rpt_rows__add(out, &M->files[i], i, up))
			return -1;
	return 0;
}
#define F ((const struct rpt_file *)r->p)
GET(if_ns) { rpt_cell_ns(o, F->gpu_idle_read_ns); }
GET(if_miss) { rpt_cell_u64(o, F->gpu_idle_miss_pages); }
GET(if_path) { rpt_cell_str(o, F->path, F->path_len); }
static const struct rpt_col idle_file_cols[] = {
	{ "path", "file", 90, RPT_C_TAIL, if_path },
	{ "read_us", "reading", 12, 0, if_ns },
	{ "miss_pages", "pages missed", 12, 0, if_miss },
};
static const struct rpt_table idle_files_tab = {
	.key = "idle_reads", .title = "files read while the GPU idled (time overlapping gaps, "
	"page-cache misses of those reads)", .layout = RPT_ROWS, RPT_COLS(idle_file_cols),
	.rows = idle_file_rows,
};

/* ---- the section: the collector, the totals, then the tables above ---- */

GET(present) { rpt_cell_bool(o, M->ngpus > 0); }
GET(collector_records) { rpt_cell_u64(o, M->f->gpu_infos); }
GET(collector_state)
{
	if (M->f->gpu_infos)
		rpt_cell_u64(o, M->f->gpu_info.state);
}
GET(collector_reason)
{
	if (M->f->gpu_infos)
		rpt_cell_strn(o, M->f->gpu_info.reason, sizeof(M->f->gpu_info.reason));
}
GET(clock_unc)
{
	if (M->f->gpu_infos)
		rpt_cell_ns(o, M->f->gpu_info.uncertainty_ns);
}
/* Why there is nothing to show (text and HTML) */
GET(no_gpu_note)
{
	if (M->ngpus)
		rpt_cell_cstr(o, "busy = union of kernels, copies and memsets between the first and last "
			      "activity; idle gaps split by what the process's host threads did (first "
			      "match wins: reads > writes/fsync > other file calls > CUDA sync > none)");
	else if (M->f->gpu_infos && M->f->gpu_info.state == GPUIO_GPU_UNAVAILABLE &&
		 M->f->gpu_info.cupti_error == GPUIO_CUPTI_HELD)
		rpt_cell_printf(o, "another profiler holds CUPTI in pid %u (the PyTorch profiler, Nsight "
				"Systems or DCGM profiling?): gpuio recorded no GPU activity there; its "
				"CUDA API calls come from uprobes", M->f->gpu_info.hdr.pid);
	else if (M->f->gpu_infos && M->f->gpu_info.state == GPUIO_GPU_UNAVAILABLE)
		rpt_cell_printf(o, "collector unavailable: %.128s", M->f->gpu_info.reason);
	else
		rpt_cell_cstr(o, "no GPU activity records in this capture (trace a CUDA program with the "
			      "CUPTI collector to see GPU idle time explained)");
}
GET(cupti_dropped) { rpt_cell_u64(o, M->cupti_dropped); }
GET(busy) { rpt_cell_ns(o, M->gpu_busy_ns); }
GET(idle) { rpt_cell_ns(o, M->gpu_idle_ns); }
GET(span) { rpt_cell_ns(o, M->gpu_span_ns); }
GET(causes) { rpt_cell_nsmap(o, M->cause_ns, RPT_CAUSE_N, cause_name, M->gpu_idle_ns, false); }
GET(launch_states)
{
	if (M->launch_states)
		rpt_cell_nsmap(o, M->launch_ns, RPT_LS_N, ls_name, M->gpu_idle_ns, false);
	else
		rpt_cell_null(o);
}
GET(reads_in_flight)
{
	rpt_cell_f(o, M->cause_ns[RPT_CAUSE_READ] ?
		   (double)M->gap_reads_ns / (double)M->cause_ns[RPT_CAUSE_READ] : 0, 2);
}
GET(approx) { rpt_cell_bool(o, M->gaps_approx); }
GET(devices) { rpt_cell_table(o, &gpu_devices_tab); }
GET(gaps) { rpt_cell_table(o, &gaps_tab); }
GET(idle_files) { rpt_cell_table(o, &idle_files_tab); }

static const struct rpt_col section_cols[] = {
	{ "note", NULL, 0, RPT_C_PARA | RPT_C_NOJSON, no_gpu_note },
	{ "present", NULL, 0, JSON_ONLY, present },
	{ "collector_records", NULL, 0, JSON_ONLY, collector_records },
	{ "collector_state", NULL, 0, JSON_ONLY, collector_state },
	{ "collector_reason", NULL, 0, JSON_ONLY, collector_reason },
	{ "clock_uncertainty_us", "clock uncertainty", 0, RPT_C_NOTEXT, clock_unc },
	{ "cupti_dropped", "CUPTI dropped", 0, RPT_C_NOTEXT, cupti_dropped },
	{ "busy_us", "all GPUs|busy", 0, RPT_C_NOZERO, busy },
	{ "idle_us", "idle", 0, RPT_C_JOIN | RPT_C_NOZERO, idle },
	{ "span_us", "of", 0, RPT_C_JOIN | RPT_C_NOZERO, span },
	{ "idle_by_cause_us", "idle while the host threads were in", 0, RPT_C_NOZERO, causes },
	{ "idle_by_launcher_state_us", "idle while the launching threads were", 0, RPT_C_NOZERO,
	  launch_states },
	{ "reads_in_flight_during_read_idle", "reads in flight during read idle", 0, RPT_C_NOZERO,
	  reads_in_flight },
	{ "approximate", NULL, 0, JSON_ONLY, approx },
	{ "devices", NULL, 0, 0, devices },
	{ "largest_gaps", NULL, 0, 0, gaps },
	{ "idle_reads", NULL, 0, 0, idle_files },
};
const struct rpt_table rpt_tab_gpu = {
	.key = "gpu", .title = "GPU", .layout = RPT_RECORD, RPT_COLS(section_cols),
	.rows = rpt_rows__one,
};
