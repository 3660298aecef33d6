// SPDX-License-Identifier: MIT
/*
 * report_text.c — `gpuio report` for a terminal: the report's tables
 * (report_table.h) laid out as text. A table of rows is a header line and a
 * line per row (the first --top of them); a table of blocks, a block per row
 * (its lead on a line, then "head value" pairs, then its own tables); a
 * record, a line per column; a list, bullets.
 *
 * Timestamps print as "ts=<µs>", the time base of the JSON and Perfetto
 * exports (µs after the capture's monotonic anchor).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "report/report.h"
#include "report/report_doc.h"
#include "report/report_table.h"

#define LINE_MAX_COLS 100       /* blocks wrap their pairs here */
#define BAR_COLS      30        /* the widest bar */

/* Where a table starts (its title, at s->depth tables deep), and its rows
 * (inside it: the walker counts the table open): 0 and 2 at the top, 4 and
 * 6 inside a block of the top, ... */
struct text_sink {
	struct rpt_sink s;
	uint64_t bar_max;               /* the largest row's bars (the table open now) */
	int dedent;                     /* records open: their tables are not indented as much */
};

static int table_ind(const struct rpt_sink *s)
{
	return 4 * s->depth - 2 * ((const struct text_sink *)s)->dedent;
}

static int row_ind(const struct rpt_sink *s)
{
	return 4 * (s->depth - 1) + 2 - 2 * ((const struct text_sink *)s)->dedent;
}

/* Bytes on a terminal: control bytes as '?'. */
static void put_clean(const char *s, size_t n)
{
	for (size_t i = 0; i < n && s[i]; i++)
		putchar((unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i]);
}

static const char *head_of(const struct rpt_col *col)
{
	return col->head ? col->head : col->key;
}

/* a head outside a record: "line|item" is "item" */
static const char *item_of(const struct rpt_col *col)
{
	const char *bar = strchr(head_of(col), '|');

	return bar ? bar + 1 : head_of(col);
}

static const char *nsmap_name(const struct rpt_cell *c, size_t k)
{
	return c->name((int)k);
}

/* "name 1.20 s (40%), ..." (zeros left out) */
static int put_nsmap(const struct rpt_cell *c)
{
	char a[32];
	int w = 0;

	for (size_t k = 0, first = 1; k < c->n; k++) {
		if (!c->ns[k])
			continue;
		rpt_fmt_dur(c->ns[k], a, sizeof(a));
		w += printf("%s%s %s", first ? "" : ", ", nsmap_name(c, k), a);
		if (c->total)
			w += printf(" (%.1f%%)", 100.0 * (double)c->ns[k] / (double)c->total);
		first = 0;
	}
	if (!w)
		w = printf("-");
	return w;
}

/* A string in width w: truncated on the right, or (a tail) on the left with "..." */
static int put_str(const struct rpt_cell *c, int w, bool tail)
{
	size_t n = strnlen(c->s, c->n), aw = (size_t)(w < 0 ? -w : w);

	if (!aw || n <= aw) {
		put_clean(c->s, n);
		if (aw && !tail)
			printf("%*s", (int)(aw - n), "");
		return (int)(aw > n ? aw : n);
	}
	if (tail && aw > 3) {
		fputs("...", stdout);
		put_clean(c->s + n - (aw - 3), aw - 3);
	} else {
		put_clean(c->s, aw);
	}
	return (int)aw;
}

/* One scalar cell in width w (0: as wide as it is); the columns it took. */
static int put_cell(const struct rpt_sink *s, const struct rpt_col *col, const struct rpt_cell *c,
		    int w)
{
	char buf[96];

	switch (c->kind) {
	case RPT_STR:
		return put_str(c, w, col->flags & RPT_C_TAIL);
	case RPT_NSMAP:
		return put_nsmap(c);
	case RPT_U32S: {
		int n = 0;

		for (size_t k = 0; k < c->n; k++)
			n += printf("%s%u", k ? " " : "", c->u32s[k]);
		return n;
	}
	case RPT_PAIRS: {
		const char *p = c->s;
		int n = 0;

		for (size_t k = 0; k < c->n; k++) {
			n += printf("%s%s=", k ? " " : "", p);
			p += strlen(p) + 1;
			put_clean(*p ? p : "none", *p ? strlen(p) : 4);   /* a layer not loaded */
			n += (int)strlen(p);
			p += strlen(p) + 1;
		}
		return n;
	}
	default:
		rpt_cell__text(&s->c, c, buf, sizeof(buf));
		if (c->kind == RPT_AT) {
			char wall[48];

			rpt_ctx__wall(&s->c, c->u, wall, sizeof(wall));
			snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), " (%s)", wall);
		}
		return printf("%*s", w, buf);
	}
}

/* A log2 histogram as rows of stars. */
static void put_hist(int ind, const char *head, const struct rpt_cell *c)
{
	uint32_t max = 0;
	int lo = -1, hi = -1;

	for (int i = 0; i < RPT_HIST_N; i++)
		if (c->u32s[i]) {
			if (lo < 0)
				lo = i;
			hi = i;
			if (c->u32s[i] > max)
				max = c->u32s[i];
		}
	if (lo < 0)
		return;
	printf("%*s%s:\n", ind, "", head);
	for (int i = lo; i <= hi; i++) {
		uint64_t a = i ? 1ull << (i - 1) : 0, b = i ? (1ull << i) - 1 : 0;
		int w = (int)((uint64_t)c->u32s[i] * 40 / max);

		printf("%*s  %10" PRIu64 " -> %-10" PRIu64 " %s : %-8u |%.*s%*s|\n", ind, "", a, b,
		       c->unit, c->u32s[i], w, "****************************************", 40 - w, "");
	}
}

static bool scalar(const struct rpt_cell *c)
{
	return c->kind != RPT_TABLE && c->kind != RPT_HIST && c->kind != RPT_SERIES &&
	       c->kind != RPT_GROUP && !c->head;
}

/* ---- bars: a row's RPT_C_BAR cells, scaled to the largest row ---- */

static uint64_t bar_total(const struct rpt_cell *cells, const struct rpt_table *t)
{
	uint64_t sum = 0;

	for (size_t k = 0; k < t->ncols; k++)
		if (t->cols[k].flags & RPT_C_BAR && cells[k].kind == RPT_NS && cells[k].i > 0)
			sum += (uint64_t)cells[k].i;
	return sum;
}

static void put_bars(struct text_sink *ts, const struct rpt_table *t, const struct rpt_cell *cells)
{
	static const char glyph[] = "W#=+";
	int which = 0, drawn = 0;

	if (!ts->bar_max)
		return;
	putchar(' ');
	for (size_t k = 0; k < t->ncols; k++) {
		double f;
		int w;

		if (!(t->cols[k].flags & RPT_C_BAR) || cells[k].kind != RPT_NS)
			continue;
		f = BAR_COLS * (double)(cells[k].i > 0 ? cells[k].i : 0) / (double)ts->bar_max + 0.5;
		/* past the scale: cut (before the conversion: a corrupt capture's
		 * cell can be 10^13 times the scale, past any int), and marked */
		w = f >= BAR_COLS - drawn ? BAR_COLS - drawn : (int)f;
		for (int i = 0; i < w; i++)
			putchar(glyph[which % 4]);
		drawn += w;
		which++;
	}
	if (bar_total(cells, t) > ts->bar_max)
		putchar('>');
}

/* ---- layouts ---- */

static void title(struct rpt_sink *s, const struct rpt_table *t, const struct rpt_rows *rows)
{
	char about[512];

	if (!t->title || t->flags & RPT_T_NOHEAD)
		return;
	about[0] = 0;
	if (t->describe)
		t->describe(&s->c, rows, about, sizeof(about));
	else if (t->about)
		snprintf(about, sizeof(about), "%s", t->about);
	if (!s->depth)
		printf("\n%s%s%s%s\n", t->title, about[0] ? " (" : "", about, about[0] ? ")" : "");
	else
		printf("%*s%s%s%s:\n", table_ind(s), "", t->title, about[0] ? " " : "", about);
}

/* The header line: a head per scalar column (kinds from the first row's cells). */
static void header(struct rpt_sink *s, const struct rpt_table *t, const struct rpt_cell *first)
{
	const struct rpt_col *tail = NULL;

	printf("%*s", table_ind(s) + 1, "");
	for (size_t k = 0; k < t->ncols; k++) {
		const struct rpt_col *col = &t->cols[k];

		if (!rpt_col__shows(s, col, NULL) || (first[k].kind != RPT_SKIP && !scalar(&first[k])) ||
		    first[k].head)
			continue;
		if (col->flags & RPT_C_TAIL) {
			tail = col;
			continue;
		}
		printf(" %*s", col->width, head_of(col));
	}
	if (tail)
		printf(" %s", head_of(tail));
	printf("\n");
}

/* Cells of row i for the header and the bars (with buffers: entry functions may print) */
static struct rpt_cell *cells_for(struct rpt_sink *s, const struct rpt_table *t,
				  const struct rpt_rows *rows, size_t i, char *bufs)
{
	struct rpt_cell *cells = calloc(t->ncols, sizeof(*cells));

	for (size_t k = 0; cells && k < t->ncols; k++) {
		cells[k] = (struct rpt_cell){ .kind = RPT_SKIP, .buf = bufs + k * RPT_CELL_BUF };
		if (rpt_col__shows(s, &t->cols[k], NULL))
			t->cols[k].get(&s->c, &rows->a[i], &cells[k]);
		cells[k].head = rpt_col__is_group(t, k);
	}
	return cells;
}

/* The header, and the bars' scale: the largest row shown */
static void rows_head(struct text_sink *ts, const struct rpt_table *t, const struct rpt_rows *rows)
{
	struct rpt_sink *s = &ts->s;
	char *bufs = malloc(t->ncols * RPT_CELL_BUF);
	struct rpt_cell *cells;

	if (!bufs)
		return;
	cells = cells_for(s, t, rows, 0, bufs);
	if (cells)
		header(s, t, cells);
	free(cells);
	{
		uint64_t *tot = calloc(rows->n + 1, sizeof(*tot));

		for (size_t i = 0; tot && i < rows->n; i++) {
			cells = cells_for(s, t, rows, i, bufs);
			tot[i] = cells ? bar_total(cells, t) : 0;
			free(cells);
		}
		ts->bar_max = tot ? rpt_bars__scale(tot, rows->n) : 0;
		free(tot);
	}
	free(bufs);
}

static void begin(struct rpt_sink *s, const struct rpt_table *t, const struct rpt_rows *rows)
{
	struct text_sink *ts = (struct text_sink *)s;

	ts->bar_max = 0;
	if (!rows->n) {                 /* nothing: say so where the table says what to say */
		if (!s->depth && t->none && t->layout != RPT_RECORD) {
			title(s, t, rows);
			printf("  %s\n", t->none);
		}
		return;
	}
	title(s, t, rows);
	if (t->layout == RPT_ROWS)
		rows_head(ts, t, rows);
}

static void row_line(struct text_sink *ts, const struct rpt_table *t, const struct rpt_cell *cells)
{
	struct rpt_sink *s = &ts->s;
	size_t tail = t->ncols;

	printf("%*s", row_ind(s) - 1, "");
	for (size_t k = 0; k < t->ncols; k++) {
		const struct rpt_col *col = &t->cols[k];

		if (!rpt_col__shows(s, col, NULL) || !scalar(&cells[k]))
			continue;
		if (col->flags & RPT_C_TAIL) {
			tail = k;
			continue;
		}
		putchar(' ');
		if (cells[k].kind == RPT_SKIP)
			printf("%*s", col->width, "");
		else
			put_cell(s, col, &cells[k], col->width);
	}
	if (tail < t->ncols && cells[tail].kind != RPT_SKIP) {
		putchar(' ');
		put_cell(s, &t->cols[tail], &cells[tail], t->cols[tail].width);
	}
	put_bars(ts, t, cells);
	printf("\n");
}

/* The row's own tables and charts, under it. */
static void row_below(struct rpt_sink *s, const struct rpt_table *t, const struct rpt_row *r,
		      const struct rpt_cell *cells)
{
	for (size_t k = 0; k < t->ncols; k++) {
		const struct rpt_cell *c = &cells[k];

		if (!rpt_col__shows(s, &t->cols[k], c))
			continue;
		if (c->kind == RPT_TABLE)
			rpt_table__render(s, c->table, r);
		else if (c->kind == RPT_HIST && t->cols[k].flags & RPT_C_FIGURE)
			put_hist(row_ind(s) + 2, head_of(&t->cols[k]), c);
	}
}

/* A block: its lead, then "head value" pairs wrapped, maps on their own lines. */
static void row_block(struct rpt_sink *s, const struct rpt_table *t, const struct rpt_row *r,
		      const struct rpt_cell *cells)
{
	int ind = row_ind(s) + 2, at = 0;

	for (size_t k = 0; k < t->ncols; k++)
		if (t->cols[k].flags & RPT_C_LEAD && rpt_col__shows(s, &t->cols[k], &cells[k])) {
			printf("%*s", ind - 2, "");
			put_cell(s, &t->cols[k], &cells[k], t->cols[k].width);
			printf("\n");
		}
	for (size_t k = 0; k < t->ncols; k++) {
		const struct rpt_col *col = &t->cols[k];
		const struct rpt_cell *c = &cells[k];

		if (col->flags & RPT_C_LEAD || !rpt_col__shows(s, col, c) || !scalar(c))
			continue;
		if (col->flags & RPT_C_PARA || c->kind == RPT_NSMAP) {
			if (at)
				printf("\n");
			at = 0;
			if (col->flags & RPT_C_PARA) {
				printf("%*s", ind, "");
				put_cell(s, col, c, 0);
				printf("\n");
				continue;
			}
			if (at)
				printf("\n");
			printf("%*s%s: ", ind, "", head_of(col));
			put_nsmap(c);
			printf("\n");
			continue;
		}
		if (at > LINE_MAX_COLS) {
			printf("\n");
			at = 0;
		}
		at += at ? printf(", ") : printf("%*s", ind, "");
		at += printf("%s ", item_of(col));
		at += put_cell(s, col, c, 0);
	}
	if (at)
		printf("\n");
	row_below(s, t, r, cells);
}

/* A record: a line per column ("head  value"), or after the one before (RPT_C_JOIN). */
static void row_record(struct rpt_sink *s, const struct rpt_table *t, const struct rpt_row *r,
		       const struct rpt_cell *cells)
{
	int ind = row_ind(s);
	bool open = false;
	const char *bar;

	for (size_t k = 0; k < t->ncols; k++) {
		const struct rpt_col *col = &t->cols[k];
		const struct rpt_cell *c = &cells[k];

		if (!rpt_col__shows(s, col, c) || !scalar(c))
			continue;
		if (col->flags & RPT_C_PARA) {
			if (open)
				printf("\n");
			printf("%*s", ind, "");
			put_cell(s, col, c, 0);
			printf("\n");
			open = false;
			continue;
		}
		bar = strchr(head_of(col), '|');
		if (col->flags & RPT_C_JOIN && open) {
			printf(", %s ", bar ? bar + 1 : head_of(col));
		} else {
			if (open)
				printf("\n");
			if (bar)
				printf("%*s%-11.*s %s ", ind, "", (int)(bar - head_of(col)), head_of(col),
				       bar + 1);
			else
				printf("%*s%-11s ", ind, "", head_of(col));
		}
		put_cell(s, col, c, 0);
		open = true;
	}
	if (open)
		printf("\n");
	/* a record's own tables are its lines' peers, not indented under them */
	((struct text_sink *)s)->dedent++;
	row_below(s, t, r, cells);
	((struct text_sink *)s)->dedent--;
}

static void row(struct rpt_sink *s, const struct rpt_table *t, const struct rpt_rows *rows,
		size_t i, const struct rpt_cell *cells)
{
	const struct rpt_row *r = &rows->a[i];

	switch (t->layout) {
	case RPT_ROWS:
		row_line((struct text_sink *)s, t, cells);
		row_below(s, t, r, cells);
		break;
	case RPT_BLOCKS:
		row_block(s, t, r, cells);
		break;
	case RPT_RECORD:
		row_record(s, t, r, cells);
		break;
	case RPT_LIST:
		printf("%*s%s", row_ind(s) - (t->flags & RPT_T_WARN ? 2 : 0),
		       "", t->flags & RPT_T_WARN ? "!! " : "* ");
		put_cell(s, &t->cols[0], &cells[0], 0);
		printf("\n");
		break;
	}
}

static void end(struct rpt_sink *s, const struct rpt_table *t, const struct rpt_rows *rows)
{
	if (t->layout == RPT_RECORD || t->layout == RPT_LIST)
		return;
	if (rows->shown < rows->n)
		printf("%*s... %zu more%s%s\n", table_ind(s) + 2, "", rows->n - rows->shown,
		       rows->more ? " " : "", rows->more ? rows->more : "");
}

static const struct rpt_sink_ops text_ops = { .begin = begin, .row = row, .end = end };

static int finish(const struct text_sink *ts)
{
	if (ts->s.err)
		return ts->s.err;
	return fflush(stdout) || ferror(stdout) ? -EIO : 0;
}

int rpt_text__print(const struct rpt_model *m, const struct rpt_opts *opt)
{
	struct text_sink ts = { .s = { .ops = &text_ops, .fmt = RPT_FMT_TEXT,
				       .c = { .m = m, .opt = opt } } };

	printf("gpuio report: ");
	put_clean(rpt_doc__title(&ts.s.c), SIZE_MAX);
	printf("\n");
	rpt_doc__render(&ts.s);
	return finish(&ts);
}

int rpt_text__print_hosts(const struct rpt_hosts *h)
{
	struct text_sink ts = { .s = { .ops = &text_ops, .fmt = RPT_FMT_TEXT } };

	rpt_doc__hosts(&ts.s, h);
	printf("\n");
	return finish(&ts);
}
