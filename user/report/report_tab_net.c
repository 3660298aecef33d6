// SPDX-License-Identifier: MIT
/*
 * report_tab_net.c — the network (report_net.c): socket calls by peer and
 * by process; only where the capture named its sockets.
 */
#include <stdio.h>
#include <string.h>
#include "report/report_doc.h"
#include "report/report_model.h"
#include "report/report_net.h"

#define GET(name) static void name(const struct rpt_ctx *c, const struct rpt_row *r, \
				   struct rpt_cell *o)
#define M (c->m)
#define N (M->net)
#define PE ((const struct rpt_net_peer *)r->p)
#define PR ((const struct rpt_net_proc *)r->p)
#define JSON_ONLY (RPT_C_NOTEXT | RPT_C_NOHTML)

static uint64_t mean(const struct rpt_hist *h)
{
	return h->n ? h->sum / h->n : 0;
}

/* ---- peers ---- */

static int peer_rows(const struct rpt_ctx *c, const struct rpt_row *up, struct rpt_rows *out)
{
	for (size_t i = 0; i < N->npeers; i++)
		if (rpt_rows__add(out, &N->peers[i], i, up))
			return -1;
	rpt_rows__limit(out, c->opt->top, "peers");
	return 0;
}

GET(pe_name) { rpt_cell_strn(o, PE->name, sizeof(PE->name)); }
GET(pe_proto) { rpt_cell_cstr(o, PE->proto); }
GET(pe_role) { rpt_cell_cstr(o, PE->client ? "client" : PE->server ? "server" : "-"); }
GET(pe_sockets) { rpt_cell_u64(o, PE->sockets); }
GET(pe_requests) { rpt_cell_u64(o, PE->requests); }
GET(pe_rbytes) { rpt_cell_bytes(o, PE->rbytes); }
GET(pe_sbytes) { rpt_cell_bytes(o, PE->sbytes); }
GET(pe_rcalls) { rpt_cell_u64(o, PE->rcalls); }
GET(pe_scalls) { rpt_cell_u64(o, PE->scalls); }
GET(pe_errors) { rpt_cell_u64(o, PE->errors); }
GET(pe_connects) { rpt_cell_u64(o, PE->connects); }
GET(pe_conn_time) { rpt_cell_ns(o, PE->connect_time); }
GET(pe_conn_max) { rpt_cell_ns(o, PE->connect_max); }
GET(pe_rtime) { rpt_cell_ns(o, PE->rtime); }
GET(pe_stime) { rpt_cell_ns(o, PE->stime); }
GET(pe_req_mean) { rpt_cell_ns(o, mean(&PE->req)); }
GET(pe_req_p50) { rpt_cell_ns(o, rpt_hist__pct(&PE->req, 0.5)); }
GET(pe_req_p99) { rpt_cell_ns(o, rpt_hist__pct(&PE->req, 0.99)); }
GET(pe_req_max) { rpt_cell_ns(o, PE->req.max); }
GET(pe_recv_mean) { rpt_cell_ns(o, mean(&PE->rlat)); }
GET(pe_recv_p99) { rpt_cell_ns(o, rpt_hist__pct(&PE->rlat, 0.99)); }
GET(pe_pids) { rpt_cell_u32s(o, PE->pids, PE->npids < RPT_FILE_PIDS ? PE->npids : RPT_FILE_PIDS); }
GET(pe_nprocs) { rpt_cell_u64(o, PE->npids); }

static const struct rpt_col peer_cols[] = {
	{ "peer", "peer", -24, 0, pe_name },
	{ "proto", "proto", -6, 0, pe_proto },
	{ "role", "role", -6, 0, pe_role },
	{ "sockets", "socks", 5, 0, pe_sockets },
	{ "requests", "requests", 8, 0, pe_requests },
	{ "received_bytes", "received", 10, 0, pe_rbytes },
	{ "sent_bytes", "sent", 10, 0, pe_sbytes },
	{ "recv_calls", NULL, 0, JSON_ONLY, pe_rcalls },
	{ "send_calls", NULL, 0, JSON_ONLY, pe_scalls },
	{ "errors", NULL, 0, JSON_ONLY, pe_errors },
	{ "connects", "conns", 5, 0, pe_connects },
	{ "connect_time_us", "conn time", 10, 0, pe_conn_time },
	{ "connect_max_us", NULL, 0, JSON_ONLY, pe_conn_max },
	{ "recv_time_us", "recv time", 10, 0, pe_rtime },
	{ "send_time_us", "send time", 10, 0, pe_stime },
	{ "request_mean_us", "req mean", 9, 0, pe_req_mean },
	{ "request_p50_us", "req p50", 9, 0, pe_req_p50 },
	{ "request_p99_us", "req p99", 9, 0, pe_req_p99 },
	{ "request_max_us", NULL, 0, JSON_ONLY, pe_req_max },
	{ "recv_mean_us", "recv mean", 9, 0, pe_recv_mean },
	{ "recv_p99_us", NULL, 0, JSON_ONLY, pe_recv_p99 },
	{ "pids", NULL, 0, JSON_ONLY, pe_pids },
	{ "processes", NULL, 0, JSON_ONLY, pe_nprocs },
};
static const struct rpt_table peers_tab = {
	.key = "peers", .title = "by peer", .layout = RPT_ROWS, RPT_COLS(peer_cols),
	.rows = peer_rows,
};

/* ---- processes ---- */

static int proc_rows(const struct rpt_ctx *c, const struct rpt_row *up, struct rpt_rows *out)
{
	for (size_t i = 0; i < N->nprocs; i++)
		if (rpt_rows__add(out, &N->procs[i], i, up))
			return -1;
	rpt_rows__limit(out, c->opt->top, "processes");
	return 0;
}

GET(pr_pid) { rpt_cell_u64(o, PR->pid); }
GET(pr_comm) { rpt_cell_strn(o, rpt_proc_comm(M, PR->pid), 16); }
GET(pr_rbytes) { rpt_cell_bytes(o, PR->rbytes); }
GET(pr_sbytes) { rpt_cell_bytes(o, PR->sbytes); }
GET(pr_rcalls) { rpt_cell_u64(o, PR->rcalls); }
GET(pr_scalls) { rpt_cell_u64(o, PR->scalls); }
GET(pr_requests) { rpt_cell_u64(o, PR->requests); }
GET(pr_rtime) { rpt_cell_ns(o, PR->rtime); }
GET(pr_stime) { rpt_cell_ns(o, PR->stime); }
GET(pr_ip_rtime) { rpt_cell_ns(o, PR->ip_rtime); }
GET(pr_busy_tid) { rpt_cell_u64(o, PR->busy_tid); }
GET(pr_busy_rtime) { rpt_cell_ns(o, PR->busy_rtime); }
GET(pr_busy_wall) { rpt_cell_ns(o, PR->busy_wall); }
GET(pr_busy)
{
	char a[32], b[32];

	if (!PR->busy_tid)
		return;
	rpt_fmt_dur(PR->busy_rtime, a, sizeof(a));
	rpt_fmt_dur(PR->busy_wall, b, sizeof(b));
	rpt_cell_printf(o, "tid %u: %s of its %s (%.1f%%)", PR->busy_tid, a, b,
			PR->busy_wall ? 100.0 * (double)PR->busy_rtime / (double)PR->busy_wall : 0);
}

static const struct rpt_col proc_cols[] = {
	{ "pid", "pid", 7, 0, pr_pid },
	{ "comm", "comm", -15, 0, pr_comm },
	{ "received_bytes", "received", 10, 0, pr_rbytes },
	{ "sent_bytes", "sent", 10, 0, pr_sbytes },
	{ "recv_calls", NULL, 0, JSON_ONLY, pr_rcalls },
	{ "send_calls", NULL, 0, JSON_ONLY, pr_scalls },
	{ "requests", "requests", 8, 0, pr_requests },
	{ "recv_time_us", "recv time", 10, 0, pr_rtime },
	{ "send_time_us", "send time", 10, 0, pr_stime },
	{ "ip_recv_time_us", NULL, 0, JSON_ONLY, pr_ip_rtime },
	{ "busiest_tid", NULL, 0, JSON_ONLY, pr_busy_tid },
	{ "busiest_ip_recv_time_us", NULL, 0, JSON_ONLY, pr_busy_rtime },
	{ "busiest_wall_us", NULL, 0, JSON_ONLY, pr_busy_wall },
	{ "busiest", "busiest receiving thread (IP peers)", 0, RPT_C_NOJSON | RPT_C_TAIL, pr_busy },
};
static const struct rpt_table procs_tab = {
	.key = "processes", .title = "by process", .layout = RPT_ROWS, RPT_COLS(proc_cols),
	.rows = proc_rows,
};

/* ---- the section ---- */

static int net_rows(const struct rpt_ctx *c, const struct rpt_row *up, struct rpt_rows *out)
{
	return rpt_net__any(M) ? rpt_rows__one(c, up, out) : 0;
}

GET(calls) { rpt_cell_u64(o, N->calls); }
GET(rbytes) { rpt_cell_bytes(o, N->rbytes); }
GET(sbytes) { rpt_cell_bytes(o, N->sbytes); }
GET(requests) { rpt_cell_u64(o, N->requests); }
GET(rtime) { rpt_cell_ns(o, N->rtime); }
GET(stime) { rpt_cell_ns(o, N->stime); }
GET(peers) { rpt_cell_table(o, &peers_tab); }
GET(procs) { rpt_cell_table(o, &procs_tab); }

static const struct rpt_col net_cols[] = {
	{ "calls", "socket calls", 0, 0, calls },
	{ "received_bytes", "received", 0, RPT_C_JOIN, rbytes },
	{ "sent_bytes", "sent", 0, RPT_C_JOIN, sbytes },
	{ "requests", "requests", 0, RPT_C_JOIN, requests },
	{ "recv_time_us", "receiving", 0, RPT_C_JOIN, rtime },
	{ "send_time_us", "sending", 0, RPT_C_JOIN, stime },
	{ "peers", NULL, 0, 0, peers },
	{ "processes", NULL, 0, 0, procs },
};
const struct rpt_table rpt_tab_network = {
	.key = "network", .title = "NETWORK",
	.about = "socket calls by peer; time: inside the calls; a request: a send burst answered",
	.layout = RPT_RECORD, RPT_COLS(net_cols), .rows = net_rows,
};
