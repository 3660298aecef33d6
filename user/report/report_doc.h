/* SPDX-License-Identifier: MIT */
/*
 * report_doc.h — the report as a document: its tables in the order every
 * format shows them (report_doc.c), for the sinks (report_text.c,
 * report_json.c, report_html.c) to render. The tables are declared by
 * subject in report_tab_*.c.
 */
#ifndef GPUIO_REPORT_DOC_H
#define GPUIO_REPORT_DOC_H

#include "report/report_table.h"

/* One capture's report, every table in order, into s (s->c.m set). */
void rpt_doc__render(struct rpt_sink *s);
/* The capture's path, for a page's title */
const char *rpt_doc__title(const struct rpt_ctx *c);

/* Several captures of one job: the view across them (the straggler, each
 * host's loops), into s; then the caller renders each capture's report. */
void rpt_doc__hosts(struct rpt_sink *s, const struct rpt_hosts *h);
int rpt_doc__hosts_n(const struct rpt_hosts *h);
const struct rpt_model *rpt_doc__hosts_model(const struct rpt_hosts *h, int i);

/* The tables, by subject (report_tab_*.c) */
extern const struct rpt_table rpt_tab_capture, rpt_tab_warnings, rpt_tab_headlines;
extern const struct rpt_table rpt_tab_summary, rpt_tab_recos;
extern const struct rpt_table rpt_tab_stragglers, rpt_tab_loops, rpt_tab_wait;
extern const struct rpt_table rpt_tab_gpu;
extern const struct rpt_table rpt_tab_ckpts, rpt_tab_roles, rpt_tab_files, rpt_tab_file_counts;
extern const struct rpt_table rpt_tab_small_files;
extern const struct rpt_table rpt_tab_devices, rpt_tab_processes, rpt_tab_threads;
extern const struct rpt_table rpt_tab_thread_states;
extern const struct rpt_table rpt_tab_reads_in_flight, rpt_tab_vfs_throughput;
extern const struct rpt_table rpt_tab_network;
extern const struct rpt_table rpt_tab_hosts;
/* The columns of a call-site row (struct rpt_site_sum rows, report_tab_sites.c) */
#define RPT_SITE_NCOLS 9
extern const struct rpt_col rpt_site_cols[RPT_SITE_NCOLS];

#endif /* GPUIO_REPORT_DOC_H */
