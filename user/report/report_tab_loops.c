// SPDX-License-Identifier: MIT
/*
 * report_tab_loops.c — the training loops (report_wait.c): the stragglers
 * side by side, then each loop as a block — its time by state and cause,
 * what else it slept in, who woke it with data and what they did
 * meanwhile, the files they read, its steps, its peers, its own
 * recommendations.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "model/waits.h"
#include "report/report_doc.h"
#include "report/report_model.h"
#include "report/report_net.h"
#include "report/report_sites.h"

#define GET(name) static void name(const struct rpt_ctx *c, const struct rpt_row *r, \
				   struct rpt_cell *o)
#define M (c->m)
#define W ((const struct rpt_wait *)r->p)
#define LOOP_OF(row) ((const struct rpt_wait *)(row)->up->p)
#define JSON_ONLY (RPT_C_NOTEXT | RPT_C_NOHTML)

static const char *tw_name(int k)
{
	return rpt_tw_names[k];
}

static const char *wa_name(int k)
{
	return rpt_wa_names[k];
}

/* ---- the stragglers: every loop by the share of its run it waited for data ---- */

static int straggler_rows(const struct rpt_ctx *c, const struct rpt_row *up, struct rpt_rows *out)
{
	for (size_t i = 0; M->nloops > 1 && i < M->nloops; i++)
		if (rpt_rows__add(out, M->loops[rpt_straggler(M, i)], i, up))
			return -1;
	return 0;
}

GET(st_loop) { rpt_cell_u64(o, W->index); }
GET(st_pid) { rpt_cell_u64(o, W->pid); }
GET(st_tid) { rpt_cell_u64(o, W->tid); }
GET(st_thread) { rpt_cell_cstr(o, rpt_wait__thread(M, W)); }
GET(st_wait) { rpt_cell_ns(o, rpt_wait__data(W)); }
GET(st_span) { rpt_cell_ns(o, rpt_wait__span(W)); }
GET(st_waited) { rpt_cell_pct(o, rpt_wait__data(W), rpt_wait__span(W)); }
GET(st_cause) { rpt_cell_cstr(o, rpt_wait__cause(W)); }

static const struct rpt_col straggler_cols[] = {
	{ "loop", "loop", 4, RPT_C_NOTEXT, st_loop },
	{ "pid", "pid", -8, 0, st_pid },
	{ "tid", "tid", -8, 0, st_tid },
	{ "thread", "thread", -16, 0, st_thread },
	{ "waiting_for_data_us", "data wait", 12, 0, st_wait },
	{ "span_us", "run", 10, RPT_C_NOTEXT, st_span },
	{ "waited_pct", "of run", 7, 0, st_waited },
	{ "cause", "its largest cause", 0, RPT_C_TAIL, st_cause },
};
static void straggler_about(const struct rpt_ctx *c, const struct rpt_rows *rows, char *buf,
			    size_t len)
{
	snprintf(buf, len, "thread states; %zu training loops, the one that waited most first",
		 rows->n);
}
const struct rpt_table rpt_tab_stragglers = {
	.key = "stragglers", .title = "WHY THE LOOPS WAITED", .layout = RPT_ROWS,
	RPT_COLS(straggler_cols), .rows = straggler_rows, .describe = straggler_about,
};

/* ---- a loop's own tables ---- */

/* what else it slept in (WAIT records), largest first */
static int blocked_rows(const struct rpt_ctx *c, const struct rpt_row *up, struct rpt_rows *out)
{
	const struct rpt_wait *w = up->p;

	for (size_t i = 0; i < w->nblocked; i++)
		if (rpt_rows__add(out, &w->blocked[i], i, up))
			return -1;
	rpt_rows__limit(out, 6, "kinds of sleep");
	return 0;
}

#define BL ((const struct rpt_blocked *)r->p)
GET(bl_what)
{
	const char *sc = model_wait__syscall_name(BL->nr), *ft = model_wait__ftype_name(BL->ftype);

	if (BL->kind == MODEL_WAIT_FAULT)
		rpt_cell_cstr(o, "a page fault or other kernel work");
	else if (sc && ft)
		rpt_cell_printf(o, "%s on a %s", sc, ft);
	else if (sc)
		rpt_cell_cstr(o, sc);
	else if (BL->nr >= 0)
		rpt_cell_printf(o, "syscall %d", BL->nr);
	else
		rpt_cell_cstr(o, model_wait__kind_name(BL->kind));
}
GET(bl_kind) { rpt_cell_cstr(o, model_wait__kind_name(BL->kind)); }
GET(bl_syscall) { rpt_cell_cstr(o, model_wait__syscall_name(BL->nr)); }
GET(bl_on) { rpt_cell_cstr(o, model_wait__ftype_name(BL->ftype)); }
GET(bl_n) { rpt_cell_u64(o, BL->n); }
GET(bl_ns) { rpt_cell_ns(o, BL->ns); }

static const struct rpt_col blocked_cols[] = {
	{ "what", "in", -36, RPT_C_NOJSON, bl_what },
	{ "kind", NULL, 0, JSON_ONLY, bl_kind },
	{ "syscall", NULL, 0, JSON_ONLY, bl_syscall },
	{ "on", NULL, 0, JSON_ONLY, bl_on },
	{ "sleeps", "sleeps", 8, 0, bl_n },
	{ "us", "time", 10, 0, bl_ns },
};
static const struct rpt_table blocked_tab = {
	.key = "blocked_in", .title = "its other sleeps were in", .layout = RPT_ROWS,
	RPT_COLS(blocked_cols), .rows = blocked_rows,
};

/* who woke it with data: its producers */
static int waker_rows(const struct rpt_ctx *c, const struct rpt_row *up, struct rpt_rows *out)
{
	const struct rpt_wait *w = up->p;

	for (size_t i = 0; i < w->nwakers; i++)
		if (rpt_rows__add(out, &w->wakers[i], i, up))
			return -1;
	return 0;
}

#define WK ((const struct rpt_waker *)r->p)
GET(wk_pid) { rpt_cell_u64(o, WK->pid); }
GET(wk_tid) { rpt_cell_u64(o, WK->tid); }
GET(wk_kind) { rpt_cell_cstr(o, WK->thread ? "thread" : "process"); }
GET(wk_comm) { rpt_cell_cstr(o, rpt_proc_comm(M, WK->pid)); }
GET(wk_wakes) { rpt_cell_u64(o, WK->wakes); }
GET(wk_ns) { rpt_cell_ns(o, WK->ns); }

static const struct rpt_col waker_cols[] = {
	{ "pid", "pid", 8, 0, wk_pid },
	{ "tid", "tid", 8, 0, wk_tid },
	{ "kind", "a", -8, 0, wk_kind },
	{ "comm", "comm", -16, 0, wk_comm },
	{ "wakes", "wakes", 7, 0, wk_wakes },
	{ "wait_us", "its waits", 10, 0, wk_ns },
};
static const struct rpt_table waker_tab = {
	.key = "wakers", .title = "woken with data by", .layout = RPT_ROWS,
	RPT_COLS(waker_cols), .rows = waker_rows,
};

/* the files its producers read while it waited, by time */
static int wfile_rows(const struct rpt_ctx *c, const struct rpt_row *up, struct rpt_rows *out)
{
	const struct rpt_wait *w = up->p;

	for (size_t i = 0; i < w->nfiles; i++)
		if (rpt_rows__add(out, &w->files[i], i, up))
			return -1;
	rpt_rows__limit(out, 5, "files");
	return 0;
}

#define WF ((const struct rpt_wait_file *)r->p)
#define WF_FILE (&M->files[WF->file])
GET(wf_path) { rpt_cell_str(o, WF_FILE->path, WF_FILE->path_len); }
GET(wf_role) { rpt_cell_cstr(o, rpt_role_names[WF_FILE->role]); }
GET(wf_bytes) { rpt_cell_bytes(o, WF->bytes); }
GET(wf_reads) { rpt_cell_u64(o, WF->reads); }
GET(wf_ns) { rpt_cell_ns(o, WF->ns); }

static const struct rpt_col wfile_cols[] = {
	{ "path", "file", 80, RPT_C_TAIL, wf_path },
	{ "role", "role", -10, 0, wf_role },
	{ "bytes", "read", 10, 0, wf_bytes },
	{ "reads", "calls", 7, 0, wf_reads },
	{ "read_us", "in", 10, 0, wf_ns },
};
static const struct rpt_table wfile_tab = {
	.key = "files", .title = "files its producers read while it waited", .layout = RPT_ROWS,
	RPT_COLS(wfile_cols), .rows = wfile_rows,
};

/* its steps: NVTX ranges, or from one wait for data to the next */
static int step_rows(const struct rpt_ctx *c, const struct rpt_row *up, struct rpt_rows *out)
{
	const struct rpt_wait *w = up->p;

	for (size_t i = 0; i < w->nsteps; i++)
		if (rpt_rows__add(out, &w->steps[i], i, up))
			return -1;
	rpt_rows__limit(out, w->nsteps <= 24 ? 0 : 20, "steps (--json has them all)");
	return 0;
}

#define ST ((const struct rpt_step *)r->p)
GET(sp_n) { rpt_cell_u64(o, r->i + 1); }
GET(sp_start) { rpt_cell_ts(o, rpt_ts_rel_ns(M, ST->s)); }
GET(sp_wait) { rpt_cell_ns(o, ST->wait_ns); }
GET(sp_rest) { rpt_cell_ns(o, ST->compute_ns); }
GET(sp_cause) { rpt_cell_cstr(o, rpt_tw_cause(ST->ns)); }
GET(sp_time) { rpt_cell_nsmap(o, ST->ns, RPT_TW_N, tw_name, 0, true); }

static const struct rpt_col step_cols[] = {
	{ "step", "step", 5, RPT_C_NOJSON, sp_n },
	{ "start_us", "start", 18, 0, sp_start },
	{ "wait_us", "wait", 10, RPT_C_BAR, sp_wait },
	{ "rest_us", "rest", 10, RPT_C_BAR, sp_rest },
	{ "cause", "cause", -16, 0, sp_cause },
	{ "time_us", "by kind", 0, RPT_C_NOTEXT, sp_time },
};
static void steps_about(const struct rpt_ctx *c, const struct rpt_rows *rows, char *buf,
			size_t len)
{
	const struct rpt_wait *w = rows->n ? rows->a[0].up->p : NULL;

	if (w && w->step_range)
		snprintf(buf, len, "(%zu: the loop's NVTX range \"%s\"; W its wait for data, # the "
			 "rest)", rows->n, w->step_range);
	else
		snprintf(buf, len, "(%zu: a wait for data, then the work until the next; W wait, # "
			 "rest)", rows->n);
}
static const struct rpt_table step_tab = {
	.key = "steps", .title = "STEPS", .layout = RPT_ROWS, RPT_COLS(step_cols),
	.rows = step_rows, .describe = steps_about,
};

/* the peers it or its producers received from */
static int peer_rows(const struct rpt_ctx *c, const struct rpt_row *up, struct rpt_rows *out)
{
	const struct rpt_wait *w = up->p;

	for (size_t i = 0; i < w->npeers; i++)
		if (rpt_rows__add(out, &M->net->peers[w->peers[i]], i, up))
			return -1;
	return 0;
}

#define PR ((const struct rpt_net_peer *)r->p)
GET(pr_peer) { rpt_cell_cstr(o, PR->name); }
GET(pr_proto) { rpt_cell_cstr(o, PR->proto ? PR->proto : ""); }
GET(pr_bytes) { rpt_cell_bytes(o, PR->rbytes); }
GET(pr_requests) { rpt_cell_u64(o, PR->requests); }
GET(pr_ns) { rpt_cell_ns(o, PR->rtime); }

static const struct rpt_col lpeer_cols[] = {
	{ "peer", "peer", -24, 0, pr_peer },
	{ "proto", "proto", -6, 0, pr_proto },
	{ "bytes", "received", 10, 0, pr_bytes },
	{ "requests", "requests", 8, 0, pr_requests },
	{ "us", "receiving", 10, 0, pr_ns },
};
static const struct rpt_table lpeer_tab = {
	.key = "peers", .title = "peers it or its producers received from", .layout = RPT_ROWS,
	RPT_COLS(lpeer_cols), .rows = peer_rows,
};

/* ---- the loops ---- */

static int loop_rows(const struct rpt_ctx *c, const struct rpt_row *up, struct rpt_rows *out)
{
	for (size_t i = 0; i < M->nloops; i++)
		if (rpt_rows__add(out, M->loops[i], i, up))
			return -1;
	return 0;
}

/* loops[0], the JSON's "wait" (for readers from before there were several) */
static int wait_rows(const struct rpt_ctx *c, const struct rpt_row *up, struct rpt_rows *out)
{
	return M->wait ? rpt_rows__add(out, M->wait, 0, up) : 0;
}

GET(lp_lead)
{
	const char *how = !W->stand_in ? "" : W->ns[RPT_TW_DATA] ?
		"; no thread waited for data 3 times: the one that waited most" :
		"; no thread waited for data: the busiest thread";

	rpt_cell_printf(o, "LOOP %zu: pid %u tid %u (%s, thread %s%s)", r->i + 1, W->pid, W->tid,
			rpt_proc_comm(M, W->pid), rpt_wait__thread(M, W), how);
}
GET(lp_headline)
{
	rpt_wait__headline(M, W, o->buf, RPT_CELL_BUF);
	rpt_cell_cstr(o, o->buf);
}
GET(lp_process) { rpt_cell_cstr(o, rpt_proc_comm(M, W->pid)); }
GET(lp_found_by)
{
	rpt_cell_cstr(o, W->stand_in ? "busiest_thread" : W->own_reads ? "own_reads" : "data_waits");
}
GET(lp_start) { rpt_cell_ts(o, rpt_ts_rel_ns(M, W->span_s)); }
GET(lp_time) { rpt_cell_nsmap(o, W->ns, RPT_TW_N, tw_name, rpt_wait__span(W), false); }
GET(lp_data_runnable) { rpt_cell_ns(o, W->data_runnable_ns); }
GET(lp_own_reads) { rpt_cell_ns(o, W->own_read_ns); }
GET(lp_blocked) { rpt_cell_table(o, &blocked_tab); }
GET(lp_wakers) { rpt_cell_table(o, &waker_tab); }
GET(lp_meanwhile)
{
	rpt_cell_nsmap(o, W->act_ns, RPT_WA_N, wa_name, rpt_wait__act_total(W), false);
}
GET(lp_glob) { rpt_cell_cstr(o, W->glob); }
GET(lp_ndata) { rpt_cell_u64(o, W->ndata_files); }
GET(lp_read_bytes) { rpt_cell_bytes(o, W->read_bytes); }
GET(lp_hit) { rpt_cell_ratio(o, rpt_ratio(W->hit_pages, W->pages)); }
GET(lp_files) { rpt_cell_table(o, &wfile_tab); }
GET(lp_steps_from)
{
	rpt_cell_cstr(o, W->step_range ? "nvtx" : W->next.known ? "next" : "waits");
}
GET(lp_step_range) { rpt_cell_cstr(o, W->step_range); }
GET(lp_steps) { rpt_cell_table(o, &step_tab); }
GET(lp_peers) { rpt_cell_table(o, &lpeer_tab); }
GET(lp_recos) { rpt_cell_table(o, &rpt_tab_recos); }
GET(lp_gaps)
{
	rpt_cell_u64(o, W->gaps);
}
GET(lp_gaps_note)
{
	uint64_t lost;

	if (!W->gaps)
		return;
	/* none lost by gpuio: the kernel's tracepoint did not fire for them
	 * (docs/limitations.md: some kernels skip switches away from some tasks) */
	if (rpt_model__sched_lost(c->m, &lost) && !lost)
		rpt_cell_printf(o, "note: %" PRIu64 " context switch(es) the kernel did not report "
				"(sched_gaps; no scheduler record was lost): the states around them "
				"are approximate", W->gaps);
	else
		rpt_cell_printf(o, "note: %" PRIu64 " context switch(es) were not recorded "
				"(sched_gaps): the states around them are approximate", W->gaps);
}

/* ---- its producers' stacks (report_loop_sites.c) ---- */

static int fetch_rows(const struct rpt_ctx *c, const struct rpt_row *up, struct rpt_rows *out)
{
	const struct rpt_wait *w = up->p;

	for (size_t i = 0; i < w->nfetch_sites && i < 20; i++)
		if (rpt_rows__add(out, &w->fetch_sites[i], i, up))
			return -1;
	rpt_rows__limit(out, 5, "lines (--json has up to 20)");
	return 0;
}
static const struct rpt_table fetch_tab = {
	.key = "fetch_sites", .title = "its producers' reads, faults and receives, by line",
	.layout = RPT_ROWS, .cols = rpt_site_cols, .ncols = RPT_SITE_NCOLS, .rows = fetch_rows,
};

static int cpu_rows(const struct rpt_ctx *c, const struct rpt_row *up, struct rpt_rows *out)
{
	const struct rpt_wait *w = up->p;

	for (size_t i = 0; i < w->ncpu_funcs && i < 20; i++)
		if (rpt_rows__add(out, &w->cpu_funcs[i], i, up))
			return -1;
	rpt_rows__limit(out, 5, "functions (--json has up to 20)");
	return 0;
}
static void cpu_about(const struct rpt_ctx *c, const struct rpt_rows *rows, char *buf, size_t len)
{
	const struct rpt_wait *w = rows->n ? rows->a[0].up->p : NULL;

	snprintf(buf, len, "(on-CPU samples: %llu; time = samples / %u Hz)",
		 w ? (unsigned long long)w->samples : 0ull, rpt_sites__sample_hz(M));
}
static const struct rpt_table cpu_tab = {
	.key = "cpu_by_function", .title = "its producers' CPU, by function",
	.layout = RPT_ROWS, .cols = rpt_site_cols, .ncols = RPT_SITE_NCOLS, .rows = cpu_rows,
	.describe = cpu_about,
};

GET(lp_fetch) { rpt_cell_table(o, &fetch_tab); }
/* stacks on sleeps only (the default) place the reads that slept */
GET(lp_placed)
{
	uint64_t all = W->fetch_all_bytes > W->fetch_bytes ? W->fetch_all_bytes : W->fetch_bytes;

	if (all && W->nfetch_sites)
		rpt_cell_pct(o, W->fetch_bytes, all);
	else
		rpt_cell_null(o);
}
GET(lp_cpu) { rpt_cell_table(o, &cpu_tab); }

/* ---- the wait the program sees: its time inside next() (report_next.c) ---- */

#define NX (&W->next)
/* the loop's wait for data: inside next() where its stacks say, else its sleeps */
GET(nx_wait) { rpt_cell_ns(o, rpt_wait__data(W)); }
GET(nx_from) { rpt_cell_cstr(o, NX->known ? "next" : "sleeps"); }
GET(nx_group)
{
	if (NX->known)
		rpt_cell_group(o);
	else
		rpt_cell_null(o);
}
GET(nx_site) { rpt_cell_cstr(o, rpt_sites__text(M, NX->site, o->buf, RPT_CELL_BUF)); }
GET(nx_calls) { rpt_cell_u64(o, NX->calls); }
GET(nx_data) { rpt_cell_ns(o, NX->asleep_data_ns); }
GET(nx_other) { rpt_cell_ns(o, NX->asleep_other_ns); }
GET(nx_runnable) { rpt_cell_ns(o, NX->runnable_ns); }
GET(nx_cpu) { rpt_cell_ns(o, NX->cpu_ns); }
GET(nx_share) { rpt_cell_pct(o, rpt_wait__data(W), rpt_wait__span(W)); }
GET(nx_chain)
{
	rpt_sites__chain(M, NX->ref, o->buf, RPT_CELL_BUF);
	rpt_cell_cstr(o, o->buf);
}

static const struct rpt_col loop_cols[] = {
	{ "lead", NULL, 0, RPT_C_LEAD | RPT_C_NOJSON, lp_lead },
	{ "headline", NULL, 0, RPT_C_PARA, lp_headline },
	{ "pid", "pid", 0, JSON_ONLY, st_pid },
	{ "tid", "tid", 0, JSON_ONLY, st_tid },
	{ "thread", "thread", 0, JSON_ONLY, st_thread },
	{ "process", "process", 0, JSON_ONLY, lp_process },
	{ "found_by", "found by", 0, 0, lp_found_by },
	{ "start_us", "from", 0, 0, lp_start },
	{ "span_us", "for", 0, 0, st_span },
	{ "waiting_for_data_us", "waiting for data", 0, 0, nx_wait },
	{ "waiting_for_data_pct", "of its run", 0, RPT_C_JOIN, nx_share },
	{ "waiting_for_data_from", "measured as", 0, RPT_C_JOIN, nx_from },
	{ "next", NULL, 0, 0, nx_group },
	{ "next.site", "in next() at", 0, 0, nx_site },
	{ "next.calls", "calls", 0, RPT_C_JOIN, nx_calls },
	{ "next.asleep_for_data_us", "asleep for data", 0, RPT_C_JOIN, nx_data },
	{ "next.asleep_other_us", "asleep otherwise", 0, RPT_C_JOIN, nx_other },
	{ "next.runnable_us", "waiting for a CPU", 0, RPT_C_JOIN, nx_runnable },
	{ "next.on_cpu_us", "on a CPU", 0, RPT_C_JOIN, nx_cpu },
	{ "next.chain", NULL, 0, JSON_ONLY, nx_chain },
	{ "loop_us", "its time", 0, 0, lp_time },
	{ "data_then_runnable_us", "of its data wait, runnable once woken", 0, RPT_C_NOZERO,
	  lp_data_runnable },
	{ "own_data_reads_us", "in its own data reads", 0, RPT_C_NOZERO, lp_own_reads },
	{ "blocked_in", NULL, 0, 0, lp_blocked },
	{ "wakers", NULL, 0, 0, lp_wakers },
	{ "wakers_meanwhile_us", "meanwhile the producers that fetch its data", 0, RPT_C_NOZERO,
	  lp_meanwhile },
	{ "data_files", "data files", 0, RPT_C_NOZERO, lp_glob },
	{ "data_files_read", "files", 0, RPT_C_NOZERO, lp_ndata },
	{ "data_read_bytes", "read", 0, RPT_C_NOZERO, lp_read_bytes },
	{ "data_hit_ratio", "page-cache hits", 0, RPT_C_NOZERO, lp_hit },
	{ "files", NULL, 0, 0, lp_files },
	{ "fetch_sites_bytes_pct", "their bytes read at a known line",
	  0, RPT_C_NOZERO, lp_placed },
	{ "fetch_sites", NULL, 0, 0, lp_fetch },
	{ "cpu_by_function", NULL, 0, 0, lp_cpu },
	{ "steps_from", NULL, 0, JSON_ONLY, lp_steps_from },
	{ "step_range", NULL, 0, JSON_ONLY, lp_step_range },
	{ "steps", NULL, 0, 0, lp_steps },
	{ "peers", NULL, 0, 0, lp_peers },
	{ "recommendations", NULL, 0, RPT_C_NOTEXT | RPT_C_NOHTML, lp_recos },
	{ "sched_gaps", NULL, 0, JSON_ONLY, lp_gaps },
	{ "sched_gaps_note", NULL, 0, RPT_C_NOJSON | RPT_C_PARA, lp_gaps_note },
};
static void loops_about(const struct rpt_ctx *c, const struct rpt_rows *rows, char *buf,
			size_t len)
{
	snprintf(buf, len, "thread states; %zu training loop%s", rows->n, rows->n == 1 ? "" : "s");
}
const struct rpt_table rpt_tab_loops = {
	.key = "loops", .title = "WHY THE LOOP WAITED", .layout = RPT_BLOCKS,
	RPT_COLS(loop_cols), .rows = loop_rows, .describe = loops_about,
};
const struct rpt_table rpt_tab_wait = {
	.key = "wait", .layout = RPT_RECORD, .flags = RPT_T_NOTEXT | RPT_T_NOHTML | RPT_T_NULL,
	RPT_COLS(loop_cols), .rows = wait_rows,
};
