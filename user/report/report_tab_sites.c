// SPDX-License-Identifier: MIT
/*
 * report_tab_sites.c — the columns of a call-site row (report_sites.h): the
 * line of the program, how often, how many bytes, how long; in JSON its
 * file, line and function apart, and one whole stack that had it.
 */
#include <stdio.h>
#include "report/report_doc.h"
#include "report/report_model.h"
#include "report/report_sites.h"

#define GET(name) static void name(const struct rpt_ctx *c, const struct rpt_row *r, \
				   struct rpt_cell *o)
#define M (c->m)
#define SS ((const struct rpt_site_sum *)r->p)
#define SITE (rpt_sites__get(M, SS->site))
#define JSON_ONLY (RPT_C_NOTEXT | RPT_C_NOHTML)

GET(s_text) { rpt_cell_cstr(o, rpt_sites__text(M, SS->site, o->buf, RPT_CELL_BUF)); }
GET(s_file) { rpt_cell_cstr(o, SITE ? SITE->file : NULL); }
GET(s_line)
{
	if (SITE && SITE->line >= 0)
		rpt_cell_u64(o, (uint64_t)SITE->line);
	else
		rpt_cell_null(o);
}
GET(s_func) { rpt_cell_cstr(o, SITE ? SITE->func : NULL); }
GET(s_library) { rpt_cell_bool(o, SITE && SITE->library); }
GET(s_n) { rpt_cell_u64(o, SS->n); }
GET(s_bytes) { rpt_cell_bytes(o, SS->bytes); }
GET(s_ns) { rpt_cell_ns(o, SS->ns); }
GET(s_chain)
{
	rpt_sites__chain(M, SS->ref, o->buf, RPT_CELL_BUF);
	rpt_cell_cstr(o, o->buf);
}

const struct rpt_col rpt_site_cols[RPT_SITE_NCOLS] = {
	{ "site", "line of the program", 80, RPT_C_TAIL | RPT_C_NOJSON, s_text },
	{ "file", NULL, 0, JSON_ONLY, s_file },
	{ "line", NULL, 0, JSON_ONLY, s_line },
	{ "function", NULL, 0, JSON_ONLY, s_func },
	{ "library", NULL, 0, JSON_ONLY, s_library },
	{ "count", "count", 8, 0, s_n },
	{ "bytes", "bytes", 10, RPT_C_NOZERO, s_bytes },
	{ "time_us", "time", 10, 0, s_ns },
	{ "chain", NULL, 0, JSON_ONLY, s_chain },
};
