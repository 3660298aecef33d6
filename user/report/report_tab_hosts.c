// SPDX-License-Identifier: MIT
/*
 * report_tab_hosts.c — several captures of one job (report_hosts.c): the
 * straggler, its cause, and every host's loops with what they did during
 * the straggler's waits for data.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "report/report_doc.h"
#include "report/report_model.h"

#define GET(name) static void name(const struct rpt_ctx *c, const struct rpt_row *r, \
				   struct rpt_cell *o)
#define J (c->hosts)
#define HOST ((const struct rpt_hosts_host *)r->p)
#define JSON_ONLY (RPT_C_NOTEXT | RPT_C_NOHTML)

static const char *tw_name(int k)
{
	return rpt_tw_names[k];
}

/* ---- the straggler: the loop that waited the largest share of its run ---- */

static const struct rpt_hosts_host *straggler(const struct rpt_ctx *c)
{
	return &J->h[J->straggler];
}

static const struct rpt_wait *straggler_loop(const struct rpt_ctx *c)
{
	return straggler(c)->m->loops[J->loop];
}

static int straggler_rows(const struct rpt_ctx *c, const struct rpt_row *up, struct rpt_rows *out)
{
	return J->straggler >= 0 ? rpt_rows__add(out, straggler(c), (size_t)J->straggler, up) : 0;
}

GET(s_line)
{
	const struct rpt_wait *w = straggler_loop(c);
	char a[32];

	rpt_fmt_dur(rpt_wait__data(w), a, sizeof(a));
	rpt_cell_printf(o, "straggler: %s (%s), loop pid %u tid %u (%s): waited for data %.1f%% of "
			"its run (%s), its largest cause %s", HOST->label, HOST->m->path, w->pid,
			w->tid, rpt_wait__thread(HOST->m, w), 100.0 * rpt_hosts__waited(w), a,
			rpt_wait__cause(w));
}
GET(s_host) { rpt_cell_u64(o, r->i); }
GET(s_label) { rpt_cell_cstr(o, HOST->label); }
GET(s_capture) { rpt_cell_cstr(o, HOST->m->path); }
GET(s_pid) { rpt_cell_u64(o, straggler_loop(c)->pid); }
GET(s_tid) { rpt_cell_u64(o, straggler_loop(c)->tid); }
GET(s_waited) { rpt_cell_f(o, 100.0 * rpt_hosts__waited(straggler_loop(c)), 1); }
GET(s_cause) { rpt_cell_cstr(o, rpt_wait__cause(straggler_loop(c))); }
GET(s_waits) { rpt_cell_ns(o, J->window_ns); }

static const struct rpt_col straggler_cols[] = {
	{ "line", NULL, 0, RPT_C_PARA | RPT_C_NOJSON, s_line },
	{ "host", NULL, 0, JSON_ONLY, s_host },
	{ "label", NULL, 0, JSON_ONLY, s_label },
	{ "capture", NULL, 0, JSON_ONLY, s_capture },
	{ "pid", NULL, 0, JSON_ONLY, s_pid },
	{ "tid", NULL, 0, JSON_ONLY, s_tid },
	{ "waited_pct", NULL, 0, JSON_ONLY, s_waited },
	{ "cause", NULL, 0, JSON_ONLY, s_cause },
	{ "waits_us", "its waits for data, in which the other loops are measured", 0, 0, s_waits },
};
static const struct rpt_table straggler_tab = {
	.key = "straggler", .layout = RPT_RECORD, .flags = RPT_T_NULL | RPT_T_NOHEAD,
	RPT_COLS(straggler_cols), .rows = straggler_rows,
};

/* ---- every host's loops ---- */

static int loop_rows(const struct rpt_ctx *c, const struct rpt_row *up, struct rpt_rows *out)
{
	const struct rpt_hosts_host *h = up->p;

	for (size_t l = 0; l < h->m->nloops; l++)
		if (rpt_rows__add(out, h->m->loops[l], l, up))
			return -1;
	return 0;
}

#define LW ((const struct rpt_wait *)r->p)
#define LH ((const struct rpt_hosts_host *)r->up->p)
/* what it did meanwhile: not for the straggler itself, nor when there is none */
static const uint64_t *meanwhile(const struct rpt_ctx *c, const struct rpt_row *r)
{
	return J->straggler >= 0 && (int)r->up->i != J->straggler ? LH->meanwhile[r->i] : NULL;
}

GET(l_pid) { rpt_cell_u64(o, LW->pid); }
GET(l_tid) { rpt_cell_u64(o, LW->tid); }
GET(l_thread) { rpt_cell_cstr(o, rpt_wait__thread(LH->m, LW)); }
GET(l_span) { rpt_cell_ns(o, rpt_wait__span(LW)); }
GET(l_wait) { rpt_cell_ns(o, rpt_wait__data(LW)); }
GET(l_waited) { rpt_cell_f(o, 100.0 * rpt_hosts__waited(LW), 1); }
GET(l_cause) { rpt_cell_cstr(o, rpt_wait__cause(LW)); }
GET(l_meanwhile)
{
	const uint64_t *ns = meanwhile(c, r);

	if (ns)
		rpt_cell_nsmap(o, ns, RPT_TW_N, tw_name, 0, false);
	else
		rpt_cell_null(o);
}
GET(l_busy_with)
{
	const uint64_t *ns = meanwhile(c, r);
	const char *busy = ns ? rpt_hosts__busy_with(ns) : NULL;

	if (!busy) {
		rpt_cell_null(o);
		return;
	}
	/* blocked in a collective (all_reduce, barrier) waits in one of these */
	if (!strcmp(busy, "futex") || !strcmp(busy, "socket") || !strcmp(busy, "poll"))
		rpt_cell_printf(o, "%s (how a collective such as all_reduce waits for the straggler)",
				busy);
	else
		rpt_cell_cstr(o, busy);
}
GET(l_busy_key)
{
	const uint64_t *ns = meanwhile(c, r);

	if (ns)
		rpt_cell_cstr(o, rpt_hosts__busy_with(ns));
	else
		rpt_cell_null(o);
}

static const struct rpt_col loop_cols[] = {
	{ "pid", "pid", -8, 0, l_pid },
	{ "tid", "tid", -8, 0, l_tid },
	{ "thread", "thread", -16, 0, l_thread },
	{ "span_us", "run", 10, RPT_C_NOTEXT, l_span },
	{ "waiting_for_data_us", "data wait", 12, 0, l_wait },
	{ "waited_pct", "% of run", 8, 0, l_waited },
	{ "cause", "its largest cause", -18, 0, l_cause },
	{ "meanwhile_us", "during the straggler's waits", 0, 0, l_meanwhile },
	{ "meanwhile_busy_with", NULL, 0, JSON_ONLY, l_busy_key },
	{ "busy_with", "-> busy with", 0, RPT_C_NOJSON | RPT_C_TAIL, l_busy_with },
};
static const struct rpt_table loops_tab = {
	.key = "loops", .title = "its loops", .layout = RPT_ROWS, .flags = RPT_T_NOHEAD,
	.none = "no loop found", RPT_COLS(loop_cols), .rows = loop_rows,
};

static int host_rows(const struct rpt_ctx *c, const struct rpt_row *up, struct rpt_rows *out)
{
	for (int i = 0; i < J->n; i++)
		if (rpt_rows__add(out, &J->h[i], (size_t)i, up))
			return -1;
	return 0;
}

GET(h_lead) { rpt_cell_printf(o, "%s: %s", HOST->label, HOST->m->path); }
GET(h_label) { rpt_cell_cstr(o, HOST->label); }
GET(h_hostname) { rpt_cell_strn(o, HOST->m->hdr->hostname, sizeof(HOST->m->hdr->hostname)); }
GET(h_capture) { rpt_cell_cstr(o, HOST->m->path); }
GET(h_shift) { rpt_cell_f(o, (double)HOST->shift / 1e9, 3); }
GET(h_loops) { rpt_cell_table(o, &loops_tab); }

static const struct rpt_col host_cols[] = {
	{ "lead", NULL, 0, RPT_C_LEAD | RPT_C_NOJSON, h_lead },
	{ "label", NULL, 0, JSON_ONLY, h_label },
	{ "hostname", "host name", 0, 0, h_hostname },
	{ "capture", NULL, 0, JSON_ONLY, h_capture },
	{ "clock_shift_s", "its clock + this = the first capture's (s)", 0, 0, h_shift },
	{ "loops", NULL, 0, 0, h_loops },
};
static const struct rpt_table hosts_tab = {
	.key = "hosts", .layout = RPT_BLOCKS, .flags = RPT_T_NOHEAD, RPT_COLS(host_cols),
	.rows = host_rows,
};

/* ---- the section ---- */

static int across_rows(const struct rpt_ctx *c, const struct rpt_row *up, struct rpt_rows *out)
{
	return rpt_rows__add(out, J, 0, up);
}

GET(a_none)
{
	if (J->straggler < 0)
		rpt_cell_cstr(o, "no training loop in any capture (thread states needed: was "
			      "--no-sched on?)");
}
GET(a_straggler) { rpt_cell_table(o, &straggler_tab); }
GET(a_hosts) { rpt_cell_table(o, &hosts_tab); }

static const struct rpt_col across_cols[] = {
	{ "note", NULL, 0, RPT_C_PARA | RPT_C_NOJSON, a_none },
	{ "straggler", NULL, 0, 0, a_straggler },
	{ "hosts", NULL, 0, 0, a_hosts },
};
static void across_about(const struct rpt_ctx *c, const struct rpt_rows *rows, char *buf,
			 size_t len)
{
	snprintf(buf, len, "%d captures of one job; clocks met through their anchors", J->n);
}
const struct rpt_table rpt_tab_hosts = {
	.key = "across_hosts", .title = "ACROSS HOSTS", .layout = RPT_RECORD,
	RPT_COLS(across_cols), .rows = across_rows, .describe = across_about,
};
