// SPDX-License-Identifier: MIT
/*
 * report_doc.c — the report, in order: the same tables, in the same order,
 * for text, JSON and HTML (report_doc.h). To show something new, add a
 * column to its table (report_tab_*.c) or a table here.
 */
#include "report/report_doc.h"
#include "report/report_model.h"

static const struct rpt_table *const doc[] = {
	&rpt_tab_warnings,
	&rpt_tab_headlines,
	&rpt_tab_stragglers,
	&rpt_tab_loops,
	&rpt_tab_wait,
	&rpt_tab_recos,
	&rpt_tab_gpu,
	&rpt_tab_ckpts,
	&rpt_tab_capture,
	&rpt_tab_summary,
	&rpt_tab_roles,
	&rpt_tab_file_counts,
	&rpt_tab_files,
	&rpt_tab_small_files,
	&rpt_tab_devices,
	&rpt_tab_processes,
	&rpt_tab_threads,
	&rpt_tab_reads_in_flight,
	&rpt_tab_thread_states,
	&rpt_tab_vfs_throughput,
	&rpt_tab_network,
};

void rpt_doc__render(struct rpt_sink *s)
{
	for (size_t i = 0; i < sizeof(doc) / sizeof(doc[0]) && !s->err; i++)
		rpt_table__render(s, doc[i], NULL);
}

const char *rpt_doc__title(const struct rpt_ctx *c)
{
	return c->m->path;
}

void rpt_doc__hosts(struct rpt_sink *s, const struct rpt_hosts *h)
{
	s->c.hosts = h;
	rpt_table__render(s, &rpt_tab_hosts, NULL);
	s->c.hosts = NULL;
}

int rpt_doc__hosts_n(const struct rpt_hosts *h)
{
	return h->n;
}

const struct rpt_model *rpt_doc__hosts_model(const struct rpt_hosts *h, int i)
{
	return h->h[i].m;
}
