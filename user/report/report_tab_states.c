// SPDX-License-Identifier: MIT
/*
 * report_tab_states.c — THREAD STATES: each thread's time on a CPU,
 * runnable, asleep and blocked as the kernel summed it at every switch and
 * wake-up (report_thread_time.c), busiest first. Exact whatever scheduler
 * records the ring lost or shed; no rows for a capture without the sums.
 */
#include <linux/types.h>
#include <stdlib.h>
#include "bpf/gpuio_abi.h"
#include "report/report_doc.h"
#include "report/report_model.h"

#define GET(name) static void name(const struct rpt_ctx *c, const struct rpt_row *r, \
				   struct rpt_cell *o)
#define M (c->m)
#define T ((const struct rpt_thread *)r->p)
#define JSON_ONLY (RPT_C_NOTEXT | RPT_C_NOHTML)

static int cmp_cpu(const void *pa, const void *pb, void *arg)
{
	const struct rpt_thread *a = ((const struct rpt_row *)pa)->p;
	const struct rpt_thread *b = ((const struct rpt_row *)pb)->p;

	(void)arg;
	if (a->kt_ns[GPUIO_TS_CPU] != b->kt_ns[GPUIO_TS_CPU])
		return a->kt_ns[GPUIO_TS_CPU] > b->kt_ns[GPUIO_TS_CPU] ? -1 : 1;
	return ((const struct rpt_row *)pa)->i < ((const struct rpt_row *)pb)->i ? -1 : 1;
}

static int state_rows(const struct rpt_ctx *c, const struct rpt_row *up, struct rpt_rows *out)
{
	for (size_t i = 0; i < M->nthreads; i++)
		if (M->threads[i].kt_known && rpt_rows__add(out, &M->threads[i], i, up))
			return -1;
	if (out->n)
		qsort_r(out->a, out->n, sizeof(*out->a), cmp_cpu, NULL);
	rpt_rows__limit(out, c->opt->top, "threads");
	return 0;
}

static uint64_t span_of(const struct rpt_thread *t)
{
	return t->kt_to > t->kt_from ? t->kt_to - t->kt_from : 0;
}

GET(s_pid) { rpt_cell_u64(o, T->pid); }
GET(s_tid) { rpt_cell_u64(o, T->tid); }
GET(s_comm) { rpt_cell_strn(o, T->comm[0] ? T->comm : rpt_proc_comm(M, T->pid), 16); }
GET(s_span) { rpt_cell_ns(o, span_of(T)); }
GET(s_cpu) { rpt_cell_ns(o, T->kt_ns[GPUIO_TS_CPU]); }
GET(s_cpu_pct) { rpt_cell_pct(o, T->kt_ns[GPUIO_TS_CPU], span_of(T)); }
GET(s_runnable) { rpt_cell_ns(o, T->kt_ns[GPUIO_TS_RUNNABLE]); }
GET(s_sleep) { rpt_cell_ns(o, T->kt_ns[GPUIO_TS_SLEEP]); }
GET(s_blocked) { rpt_cell_ns(o, T->kt_ns[GPUIO_TS_BLOCKED]); }
GET(s_born) { rpt_cell_bool(o, (T->kt_flags & GPUIO_TT_BORN) != 0); }
GET(s_exited) { rpt_cell_bool(o, (T->kt_flags & GPUIO_TT_EXITED) != 0); }

static const struct rpt_col state_cols[] = {
	{ "pid", "pid", 7, 0, s_pid },
	{ "tid", "tid", 7, 0, s_tid },
	{ "comm", "comm", -15, 0, s_comm },
	{ "span_us", "span", 10, 0, s_span },
	{ "on_cpu_us", "on cpu", 10, 0, s_cpu },
	{ "on_cpu_pct", "cpu%", 6, RPT_C_NOJSON, s_cpu_pct },
	{ "runnable_us", "runnable", 10, 0, s_runnable },
	{ "asleep_us", "asleep", 10, 0, s_sleep },
	{ "blocked_us", "blocked", 10, 0, s_blocked },
	{ "born", NULL, 0, JSON_ONLY, s_born },
	{ "exited", NULL, 0, JSON_ONLY, s_exited },
};
const struct rpt_table rpt_tab_thread_states = {
	.key = "thread_states", .title = "THREAD STATES",
	.about = "each thread's time by state, summed in the kernel at every switch and wake-up: "
		 "exact whatever records were lost; asleep interruptible, blocked uninterruptible (D)",
	.layout = RPT_ROWS, RPT_COLS(state_cols), .rows = state_rows,
};
