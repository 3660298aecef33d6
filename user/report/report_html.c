// SPDX-License-Identifier: MIT
/*
 * report_html.c — `gpuio report --html FILE`: one self-contained page of the
 * report's tables (report_table.h), with inline SVG charts drawn from the
 * cells themselves: log2 histograms, series over the capture's timeline
 * (lines, or stacked: a GPU's busy and idle by cause), and bar charts of a
 * table's bar columns (a loop's steps). No external URL anywhere: it opens
 * offline.
 *
 * A few lines of inline JS count the charts into <html data-charts=N> and
 * record any script error into <html data-js-errors=N>, so a headless browser
 * test can read both from the DOM.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/json_writer.h"
#include "report/report.h"
#include "report/report_doc.h"
#include "report/report_table.h"

static const char *const palette[] = {
	"#4e79a7", "#e15759", "#f28e2b", "#76b7b2", "#59a14f", "#edc948", "#b07aa1",
	"#ff9da7", "#9c755f", "#bab0ac",
};
#define NPALETTE (sizeof(palette) / sizeof(palette[0]))

struct html_sink {
	struct rpt_sink s;
	FILE *f;
};

static FILE *out_of(struct rpt_sink *s)
{
	return ((struct html_sink *)s)->f;
}

static void esc(FILE *f, const char *s, size_t n)
{
	for (size_t i = 0; i < n && s[i]; i++) {
		unsigned char c = (unsigned char)s[i];

		switch (c) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default:
			/* control bytes are not worth a parse error */
			fputc(c < 0x20 || c == 0x7f ? '?' : c, f);
		}
	}
}

static void escs(FILE *f, const char *s)
{
	esc(f, s, strlen(s));
}

/* "line|item" heads (records in text): the whole, with a space */
static void put_head(FILE *f, const struct rpt_col *col)
{
	const char *h = col->head ? col->head : col->key, *bar = strchr(h, '|');

	if (bar) {
		esc(f, h, (size_t)(bar - h));
		fputc(' ', f);
		h = bar + 1;
	}
	escs(f, h);
}

static const char *head_of(const struct rpt_col *col)
{
	const char *h = col->head ? col->head : col->key, *bar = strchr(h, '|');

	return bar ? bar + 1 : h;
}

static bool scalar(const struct rpt_cell *c)
{
	return c->kind != RPT_TABLE && c->kind != RPT_HIST && c->kind != RPT_SERIES &&
	       c->kind != RPT_GROUP;
}

static bool left(const struct rpt_cell *c)
{
	return c->kind == RPT_STR || c->kind == RPT_NSMAP || c->kind == RPT_AT || c->kind == RPT_TS;
}

/* One scalar cell's content. */
static void put_cell_in(struct rpt_sink *s, const struct rpt_cell *c, bool inline_map);

static void put_cell(struct rpt_sink *s, const struct rpt_cell *c)
{
	put_cell_in(s, c, false);
}

/* One scalar cell's content; a map as a small table, or inline in a row of a table. */
static void put_cell_in(struct rpt_sink *s, const struct rpt_cell *c, bool inline_map)
{
	FILE *f = out_of(s);
	char buf[96], wall[48];

	switch (c->kind) {
	case RPT_STR:
		esc(f, c->s, c->n);
		break;
	case RPT_NSMAP:         /* a small table: name, time, share */
		if (inline_map) {
			for (size_t k = 0, first = 1; k < c->n; k++) {
				if (!c->ns[k])
					continue;
				rpt_fmt_dur(c->ns[k], buf, sizeof(buf));
				fprintf(f, "%s%s %s", first ? "" : ", ", c->name((int)k), buf);
				first = 0;
			}
			break;
		}
		fprintf(f, "<table>");
		for (size_t k = 0; k < c->n; k++) {
			if (!c->ns[k])
				continue;
			rpt_fmt_dur(c->ns[k], buf, sizeof(buf));
			fprintf(f, "<tr><td class=l>%s</td><td>%s</td>", c->name((int)k), buf);
			if (c->total)
				fprintf(f, "<td>%.1f%%</td>", 100.0 * (double)c->ns[k] / (double)c->total);
			fprintf(f, "</tr>");
		}
		fprintf(f, "</table>");
		break;
	case RPT_U32S:
		for (size_t k = 0; k < c->n; k++)
			fprintf(f, "%s%u", k ? " " : "", c->u32s[k]);
		break;
	case RPT_PAIRS: {
		const char *p = c->s;

		for (size_t k = 0; k < c->n; k++) {
			fprintf(f, "%s", k ? " " : "");
			escs(f, p);
			p += strlen(p) + 1;
			fputc('=', f);
			escs(f, *p ? p : "none");
			p += strlen(p) + 1;
		}
		break;
	}
	case RPT_AT:
		rpt_ctx__wall(&s->c, c->u, wall, sizeof(wall));
		fprintf(f, "<span class=ts title=\"%s\">%s</span>", wall,
			rpt_cell__text(&s->c, c, buf, sizeof(buf)));
		break;
	case RPT_TS:
		fprintf(f, "<span class=ts>%s</span>", rpt_cell__text(&s->c, c, buf, sizeof(buf)));
		break;
	case RPT_SKIP:
		break;
	default:
		escs(f, rpt_cell__text(&s->c, c, buf, sizeof(buf)));
	}
}

/* ---- charts ---- */

/* A log2 histogram as vertical bars. */
static void svg_hist(FILE *f, const char *title, const struct rpt_cell *c)
{
	const int W = 420, H = 160, L = 40, B = 40;
	const uint32_t *h = c->u32s;
	int lo = -1, hi = -1, nb;
	uint32_t max = 0;

	for (int i = 0; i < RPT_HIST_N; i++)
		if (h[i]) {
			if (lo < 0)
				lo = i;
			hi = i;
			if (h[i] > max)
				max = h[i];
		}
	if (lo < 0)
		return;
	nb = hi - lo + 1;
	fprintf(f, "<figure><figcaption>");
	escs(f, title);
	fprintf(f, "</figcaption><svg class=chart width=%d height=%d viewBox=\"0 0 %d %d\">", W, H,
		W, H);
	fprintf(f, "<line x1=%d y1=%d x2=%d y2=%d stroke=#888 />", L, H - B, W - 5, H - B);
	for (int i = lo; i <= hi; i++) {
		double bw = (double)(W - L - 10) / nb;
		double x = L + (i - lo) * bw, bh = (double)(H - B - 10) * h[i] / max;
		uint64_t a = i ? 1ull << (i - 1) : 0;

		fprintf(f, "<rect x=%.1f y=%.1f width=%.1f height=%.1f fill=%s><title>%" PRIu64
			"..%" PRIu64 " %s: %u</title></rect>", x + 1, H - B - bh, bw - 2, bh,
			palette[0], a, (uint64_t)(i ? (1ull << i) - 1 : 0), c->unit, h[i]);
		if (nb <= 12 || (i - lo) % 2 == 0)
			fprintf(f, "<text x=%.1f y=%d font-size=9 text-anchor=middle>%" PRIu64
				"</text>", x + bw / 2, H - B + 12, a);
	}
	fprintf(f, "<text x=%d y=%d font-size=10 text-anchor=middle>%s (log2 buckets)</text>"
		"<text x=4 y=14 font-size=10>%u</text></svg></figure>\n", (W + L) / 2, H - 8, c->unit,
		max);
}

struct series_set {
	const struct rpt_cell *c[NPALETTE];
	const char *label[NPALETTE];
	int n;
};

static double sv(const struct rpt_cell *c, int i)
{
	return c->div > 0 ? c->series[i] / c->div : 0;
}

/* Series over the capture's timeline: lines, or columns stacked bottom up. */
static void svg_series(struct rpt_sink *s, const char *title, const struct series_set *ss,
		       bool stack)
{
	const int W = 860, H = 180, L = 50, B = 30;
	FILE *f = out_of(s);
	double max = 0, bw;
	int last = 0, first = RPT_SERIES_N;
	int64_t t0;
	uint64_t width;

	for (int i = 0; i < RPT_SERIES_N; i++) {
		double sum = 0;

		for (int k = 0; k < ss->n; k++) {
			double v = sv(ss->c[k], i);

			sum = stack ? sum + v : (v > sum ? v : sum);
			if (v > 0) {
				last = i > last ? i : last;
				first = i < first ? i : first;
			}
		}
		max = sum > max ? sum : max;
	}
	if (max <= 0)
		return;
	if (!stack)
		first = 0;
	rpt_ctx__timeline(&s->c, &t0, &width);
	bw = (double)(W - L - 10) / (last - first + 1);
	fprintf(f, "<figure><figcaption>");
	escs(f, title);
	fprintf(f, "</figcaption><svg class=chart width=%d height=%d viewBox=\"0 0 %d %d\">", W,
		H + 14, W, H + 14);
	fprintf(f, "<line x1=%d y1=%d x2=%d y2=%d stroke=#888 /><line x1=%d y1=10 x2=%d y2=%d "
		"stroke=#888 />", L, H - B, W - 5, H - B, L, L, H - B);
	for (int k = 0; k < ss->n && !stack; k++) {
		fprintf(f, "<polyline fill=none stroke-width=2 stroke=\"%s\" points=\"", palette[k]);
		for (int i = first; i <= last; i++)
			fprintf(f, "%.1f,%.1f ", L + bw * (i - first + 0.5),
				H - B - (H - B - 10) * sv(ss->c[k], i) / max);
		fprintf(f, "\"><title>%s</title></polyline>", ss->label[k]);
	}
	for (int i = first; i <= last && stack; i++) {
		double y = H - B;

		for (int k = 0; k < ss->n; k++) {
			double h = (H - B - 10) * sv(ss->c[k], i) / max;

			if (h <= 0)
				continue;
			fprintf(f, "<rect x=%.1f y=%.1f width=%.1f height=%.1f fill=\"%s\"><title>%s"
				"</title></rect>", L + bw * (i - first), y - h, bw, h, palette[k],
				ss->label[k]);
			y -= h;
		}
	}
	for (int k = 0; k < ss->n; k++)
		fprintf(f, "<rect x=%d y=%d width=10 height=10 fill=\"%s\" /><text x=%d y=%d "
			"font-size=10>%s</text>", L + k * 130, H - 4, palette[k], L + 14 + k * 130, H + 5,
			ss->label[k]);
	fprintf(f, "<text x=4 y=14 font-size=10>%.2f</text>", max);
	fprintf(f, "<text x=%d y=14 font-size=10 text-anchor=end>ts=%.3f..%.3f s (bucket %.3f ms)"
		"</text></svg></figure>\n", W - 5,
		(double)(t0 + (int64_t)(first * width)) / 1e9,
		(double)(t0 + (int64_t)((last + 1) * width)) / 1e9, (double)width / 1e6);
}

/* The charts of a row: its histograms, and its FIGURE groups of series. */
static void figures(struct rpt_sink *s, const struct rpt_table *t, const struct rpt_cell *cells,
		    const char *lead)
{
	FILE *f = out_of(s);
	bool flex = false;

	for (size_t k = 0; k < t->ncols; k++) {
		const struct rpt_col *col = &t->cols[k];
		char title[160];

		/* a FIGURE group heads its series: not shown as a cell, drawn here */
		if (col->flags & RPT_C_NOHTML || !(col->flags & RPT_C_FIGURE) ||
		    cells[k].kind == RPT_SKIP)
			continue;
		snprintf(title, sizeof(title), "%s%s%s", lead ? lead : "", lead ? ": " : "",
			 head_of(col));
		if (cells[k].kind == RPT_HIST) {
			if (!flex)
				fprintf(f, "<div style=\"display:flex;gap:12px;flex-wrap:wrap\">");
			flex = true;
			svg_hist(f, title, &cells[k]);
		} else if (cells[k].kind == RPT_GROUP) {
			struct series_set ss = { .n = 0 };
			size_t n = strlen(col->key);

			for (size_t j = k + 1; j < t->ncols && !strncmp(t->cols[j].key, col->key, n) &&
			     t->cols[j].key[n] == '.'; j++)
				if (cells[j].kind == RPT_SERIES && ss.n < (int)NPALETTE) {
					ss.c[ss.n] = &cells[j];
					ss.label[ss.n++] = head_of(&t->cols[j]);
				}
			if (flex)
				fprintf(f, "</div>");
			flex = false;
			svg_series(s, title, &ss, col->flags & RPT_C_STACK);
		}
	}
	if (flex)
		fprintf(f, "</div>");
}

#define BARS_MAX 4000           /* rows drawn (the first ones) */

/* A table's bar columns as stacked bars, one per row (all rows, not only the
 * ones the table lists): the first bar column red, the second blue. */
static void svg_bars(struct rpt_sink *s, const struct rpt_table *t, const struct rpt_rows *rows)
{
	static const char *const bar_color[] = { "#e15759", "#4e79a7", "#f28e2b", "#59a14f" };
	const int W = 860, H = 180, L = 60, B = 30;
	FILE *f = out_of(s);
	size_t n = rows->n < BARS_MAX ? rows->n : BARS_MAX;
	struct rpt_cell *cells = calloc(t->ncols, sizeof(*cells));
	uint64_t *tot = calloc(n + 1, sizeof(*tot)), scale;
	double bw;
	char a[32];

	for (size_t i = 0; cells && tot && i < n; i++)
		for (size_t k = 0; k < t->ncols; k++)
			if (t->cols[k].flags & RPT_C_BAR) {
				t->cols[k].get(&s->c, &rows->a[i], &cells[k]);
				tot[i] += cells[k].kind == RPT_NS && cells[k].i > 0 ? (uint64_t)cells[k].i : 0;
			}
	if (!cells || !tot || !n || !(scale = rpt_bars__scale(tot, n)))
		goto out;
	bw = (double)(W - L - 10) / (double)n;
	fprintf(f, "<figure><figcaption>");
	escs(f, t->title ? t->title : t->key);
	if (t->describe) {
		char about[512];

		t->describe(&s->c, rows, about, sizeof(about));
		fputc(' ', f);
		escs(f, about);
	}
	fprintf(f, "</figcaption><svg class=chart width=%d height=%d viewBox=\"0 0 %d %d\">"
		"<line x1=%d y1=%d x2=%d y2=%d stroke=#888 />", W, H, W, H, L, H - B, W - 5, H - B);
	for (size_t i = 0; i < n; i++) {
		double y = H - B, top = 10;
		int c = 0;

		for (size_t k = 0; k < t->ncols; k++) {
			double h;

			if (!(t->cols[k].flags & RPT_C_BAR))
				continue;
			t->cols[k].get(&s->c, &rows->a[i], &cells[k]);
			h = (double)(H - B - 10) * (double)(cells[k].i > 0 ? cells[k].i : 0) / (double)scale;
			if (y - h < top)
				h = y - top;    /* cut at the top */
			rpt_fmt_dur(cells[k].i > 0 ? (uint64_t)cells[k].i : 0, a, sizeof(a));
			fprintf(f, "<rect x=%.1f y=%.1f width=%.1f height=%.1f fill=\"%s\"><title>%zu: "
				"%s %s</title></rect>", L + bw * (double)i, y - h, bw > 2 ? bw - 0.5 : bw,
				h > 0 ? h : 0, bar_color[c++ % 4], i + 1, head_of(&t->cols[k]), a);
			y -= h;
		}
		if (tot[i] > scale)     /* a cut bar: marked */
			fprintf(f, "<rect x=%.1f y=6 width=%.1f height=3 fill=#000 />", L + bw * (double)i,
				bw > 2 ? bw - 0.5 : bw);
	}
	rpt_fmt_dur(scale, a, sizeof(a));
	fprintf(f, "<text x=4 y=14 font-size=10>%s</text><text x=%d y=%d font-size=10 "
		"text-anchor=middle>1..%zu%s</text></svg></figure>\n", a, (W + L) / 2, H - 8, n,
		n < rows->n ? " (the first ones)" : "");
out:
	free(cells);
	free(tot);
}

/* ---- layouts ---- */

static bool has_bars(const struct rpt_table *t)
{
	for (size_t k = 0; k < t->ncols; k++)
		if (t->cols[k].flags & RPT_C_BAR)
			return true;
	return false;
}

static bool has_bars(const struct rpt_table *t);

/* A section's title as a page heading: "WHY THE LOOP WAITED" -> "Why the
 * loop waited" (the text's capitals are its way of making a heading);
 * acronyms stay */
static void heading(FILE *f, const char *t)
{
	static const char *const keep[] = { "GPU", "CPU", "VFS", "I/O", "NVTX" };
	char buf[256];
	size_t n = 0;

	for (const char *w = t; *w && n + 1 < sizeof(buf);) {
		size_t len = strcspn(w, " (");
		bool acronym = false;

		for (size_t k = 0; k < sizeof(keep) / sizeof(keep[0]); k++)
			acronym |= strlen(keep[k]) == len && !strncmp(w, keep[k], len);
		for (size_t i = 0; i < len && n + 1 < sizeof(buf); i++)
			buf[n++] = acronym || (w == t && i == 0) ? w[i] : (char)tolower((unsigned char)w[i]);
		w += len;
		while ((*w == ' ' || *w == '(') && n + 1 < sizeof(buf))
			buf[n++] = *w++;
	}
	buf[n] = 0;
	escs(f, buf);
}

static void title(struct rpt_sink *s, const struct rpt_table *t, const struct rpt_rows *rows)
{
	FILE *f = out_of(s);
	char about[512];
	int h = s->depth ? 4 : 2;

	if (t->title && !(t->flags & RPT_T_NOHEAD)) {
		fprintf(f, "<h%d>", h);
		if (h == 2)
			heading(f, t->title);
		else
			escs(f, t->title);
		fprintf(f, "</h%d>", h);
	}
	about[0] = 0;
	if (t->describe)
		t->describe(&s->c, rows, about, sizeof(about));
	else if (t->about)
		snprintf(about, sizeof(about), "%s", t->about);
	if (about[0] && !(t->layout == RPT_ROWS && has_bars(t))) {  /* a chart's caption says it */
		fprintf(f, "<p class=ev>");
		escs(f, about);
		fprintf(f, "</p>");
	}
}

static void begin(struct rpt_sink *s, const struct rpt_table *t, const struct rpt_rows *rows)
{
	FILE *f = out_of(s);

	if (!rows->n) {
		if (!s->depth && t->none && t->layout != RPT_RECORD) {
			title(s, t, rows);
			fprintf(f, "<p>");
			escs(f, t->none);
			fprintf(f, "</p>");
		}
		return;
	}
	title(s, t, rows);
	if (t->layout == RPT_LIST) {
		if (!(t->flags & RPT_T_WARN))
			fprintf(f, "<ul>");
		return;
	}
	if (t->layout == RPT_ROWS && has_bars(t))
		svg_bars(s, t, rows);
	if (t->layout != RPT_ROWS || !rows->n)
		return;
	fprintf(f, "<table><tr>");
	for (size_t k = 0; k < t->ncols; k++) {
		const struct rpt_col *col = &t->cols[k];

		if (!rpt_col__shows(s, col, NULL) || rpt_col__is_group(t, k))
			continue;
		fprintf(f, col->width < 0 || col->flags & RPT_C_TAIL ? "<th class=l>" : "<th>");
		escs(f, head_of(col));
		fprintf(f, "</th>");
	}
	fprintf(f, "</tr>");
}

static void cell_td(struct rpt_sink *s, const struct rpt_row *r, const struct rpt_cell *c)
{
	FILE *f = out_of(s);

	fprintf(f, "<td%s>", left(c) ? " class=l" : "");
	if (c->kind == RPT_TABLE)
		rpt_table__render(s, c->table, r);
	else if (scalar(c))
		put_cell_in(s, c, true);
	fprintf(f, "</td>");
}

/* A block or a record: its title and sentences, its charts, its values as
 * "head value" items that wrap, then its own tables. */
static void row_kv(struct rpt_sink *s, const struct rpt_table *t, const struct rpt_row *r,
		   const struct rpt_cell *cells)
{
	FILE *f = out_of(s);
	char lead[128] = "";

	for (size_t k = 0; k < t->ncols; k++) {
		if (!rpt_col__shows(s, &t->cols[k], &cells[k]))
			continue;
		if (t->cols[k].flags & RPT_C_LEAD) {
			fprintf(f, "<h3>");
			put_cell(s, &cells[k]);
			fprintf(f, "</h3>");
			if (cells[k].kind == RPT_STR)
				snprintf(lead, sizeof(lead), "%.*s", (int)cells[k].n, cells[k].s);
		} else if (t->cols[k].flags & RPT_C_PARA) {
			fprintf(f, "<p>");
			put_cell(s, &cells[k]);
			fprintf(f, "</p>");
		}
	}
	figures(s, t, cells, lead[0] ? lead : NULL);
	fprintf(f, "<div class=kv>");
	for (size_t k = 0; k < t->ncols; k++) {
		const struct rpt_col *col = &t->cols[k];

		if (col->flags & (RPT_C_LEAD | RPT_C_PARA) || !rpt_col__shows(s, col, &cells[k]) ||
		    !scalar(&cells[k]))
			continue;
		fprintf(f, "<span%s><b>", cells[k].kind == RPT_NSMAP ? " class=map" : "");
		put_head(f, col);
		fprintf(f, "</b> ");
		put_cell(s, &cells[k]);
		fprintf(f, "</span>");
	}
	fprintf(f, "</div>\n");
	for (size_t k = 0; k < t->ncols; k++)
		if (cells[k].kind == RPT_TABLE && rpt_col__shows(s, &t->cols[k], &cells[k]))
			rpt_table__render(s, cells[k].table, r);
}

static void row(struct rpt_sink *s, const struct rpt_table *t, const struct rpt_rows *rows,
		size_t i, const struct rpt_cell *cells)
{
	FILE *f = out_of(s);
	const struct rpt_row *r = &rows->a[i];

	switch (t->layout) {
	case RPT_ROWS:
		fprintf(f, "<tr>");
		for (size_t k = 0; k < t->ncols; k++)
			if (rpt_col__shows(s, &t->cols[k], NULL) && !rpt_col__is_group(t, k))
				cell_td(s, r, &cells[k]);
		fprintf(f, "</tr>");
		break;
	case RPT_BLOCKS:
	case RPT_RECORD:
		row_kv(s, t, r, cells);
		break;
	case RPT_LIST:
		fprintf(f, t->flags & RPT_T_WARN ? "<div class=warn>" : "<li>");
		put_cell(s, &cells[0]);
		fprintf(f, t->flags & RPT_T_WARN ? "</div>" : "</li>");
		break;
	}
}

static void end(struct rpt_sink *s, const struct rpt_table *t, const struct rpt_rows *rows)
{
	FILE *f = out_of(s);

	if (!rows->n)
		return;
	if (t->layout == RPT_LIST) {
		if (!(t->flags & RPT_T_WARN))
			fprintf(f, "</ul>");
		return;
	}
	if (t->layout == RPT_ROWS)
		fprintf(f, "</table>");
	if (rows->shown < rows->n)
		fprintf(f, "<p class=ev>... %zu more %s (--json has them all)</p>",
			rows->n - rows->shown, rows->more ? rows->more : "");
	if (!s->depth)
		fprintf(f, "\n");
}

static const struct rpt_sink_ops html_ops = { .begin = begin, .row = row, .end = end };

static const char CSS[] =
	"body{font:14px/1.4 system-ui,sans-serif;margin:20px;color:#222;max-width:1100px}"
	"h1{font-size:20px}h2{font-size:17px;border-bottom:1px solid #ccc;margin-top:28px}"
	"h3{font-size:15px;margin:14px 0 4px}h4{font-size:13px;margin:10px 0 2px}"
	"table{border-collapse:collapse;font-size:12px;margin:4px 0}td,th{padding:2px 6px;"
	"border-bottom:1px solid #eee;text-align:right;vertical-align:top}"
	"td.l,th.l{text-align:left;word-break:break-all}td table{margin:0}"
	".warn{background:#fde2e1;border:1px solid #e15759;padding:6px 10px;margin:6px 0}"
	".ev{color:#555;font-size:12px}.ts{font-family:monospace;color:#345}"
	"figure{margin:10px 0}figcaption{font-size:12px;color:#444}svg.chart{background:#fafafa}"
	".kv{display:flex;flex-wrap:wrap;gap:3px 18px;font-size:12px;margin:4px 0}"
	".kv>span{white-space:nowrap}.kv>span.map{white-space:normal}.kv b{color:#555;font-weight:600}";

static int render(FILE *f, const struct rpt_model *m, const struct rpt_opts *opt)
{
	struct html_sink hs = { .s = { .ops = &html_ops, .fmt = RPT_FMT_HTML,
				       .c = { .m = m, .opt = opt } }, .f = f };

	fprintf(f, "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
		"<title>gpuio report</title><style>%s</style>"
		"<script>window.addEventListener('error',function(){var h=document.documentElement;"
		"h.setAttribute('data-js-errors',(+h.getAttribute('data-js-errors')||0)+1);});"
		"</script></head><body>\n<h1>gpuio report: ", CSS);
	escs(f, rpt_doc__title(&hs.s.c));
	fprintf(f, "</h1>\n");
	rpt_doc__render(&hs.s);
	fprintf(f, "\n<script>document.documentElement.setAttribute('data-charts',"
		"document.querySelectorAll('svg.chart').length);</script>\n</body></html>\n");
	if (hs.s.err)
		return hs.s.err;
	return ferror(f) ? -EIO : 0;
}

int rpt_html__write(const struct rpt_model *m, const struct rpt_opts *opt, const char *out)
{
	char *tmp = NULL;
	FILE *f;
	int fd, rc;

	if (asprintf(&tmp, "%s.tmp", out) < 0)
		return -ENOMEM;
	/* never through a symlink */
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		rc = -errno;
		free(tmp);
		return rc;
	}
	f = fdopen(fd, "w");
	if (!f) {
		rc = -errno;
		close(fd);
		goto fail;
	}
	rc = render(f, m, opt);
	if (fflush(f) || fsync(fileno(f)))
		rc = rc ? rc : -errno;
	if (fclose(f) && !rc)
		rc = -errno;
	if (rc)
		goto fail;
	if (rename(tmp, out)) {
		rc = -errno;
		goto fail;
	}
	free(tmp);
	return 0;
fail:
	unlink(tmp);
	free(tmp);
	return rc;
}
