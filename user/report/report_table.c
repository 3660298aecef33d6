// SPDX-License-Identifier: MIT
/*
 * report_table.c — walking a declared table into a sink (report_table.h):
 * the rows, each row's cells from the columns' entry functions, and the
 * words a scalar cell becomes in text and HTML.
 */
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/json_writer.h"
#include "report/report_model.h"
#include "report/report_table.h"

_Static_assert(RPT_HIST_N == RPT_LOG2_BUCKETS, "histogram cells are the model's log2 buckets");
_Static_assert(RPT_SERIES_N == RPT_TL_BUCKETS, "series cells are the model's timeline buckets");

bool rpt_cell__empty(const struct rpt_cell *c)
{
	switch (c->kind) {
	case RPT_SKIP: case RPT_NULL:
		return true;
	case RPT_U64: case RPT_BYTES: case RPT_BOOL:
		return !c->u;
	case RPT_NS: case RPT_TS:
		return !c->i;
	case RPT_F: case RPT_PCT:
		return c->d == 0;
	case RPT_RATIO:
		return c->d < 0;
	case RPT_STR:
		return !c->n || !c->s[0];
	case RPT_NSMAP:
		for (size_t k = 0; k < c->n; k++)
			if (c->ns[k])
				return false;
		return true;
	case RPT_U32S: case RPT_PAIRS:
		return !c->n;
	default:
		return false;
	}
}

bool rpt_table__shows(const struct rpt_sink *s, const struct rpt_table *t)
{
	static const unsigned off[] = {
		[RPT_FMT_TEXT] = RPT_T_NOTEXT, [RPT_FMT_JSON] = RPT_T_NOJSON,
		[RPT_FMT_HTML] = RPT_T_NOHTML,
	};

	return !(t->flags & off[s->fmt]);
}

bool rpt_col__shows(const struct rpt_sink *s, const struct rpt_col *col, const struct rpt_cell *c)
{
	static const unsigned off[] = {
		[RPT_FMT_TEXT] = RPT_C_NOTEXT, [RPT_FMT_JSON] = RPT_C_NOJSON,
		[RPT_FMT_HTML] = RPT_C_NOHTML,
	};

	if (col->flags & off[s->fmt])
		return false;
	/* a group is a JSON object; text and HTML show its members */
	if (c && (c->head || c->kind == RPT_GROUP) && s->fmt != RPT_FMT_JSON)
		return false;
	if (c && col->flags & RPT_C_NOZERO && s->fmt != RPT_FMT_JSON && rpt_cell__empty(c))
		return false;
	/* series are numbers for machines: charts draw them, a cell does not */
	return !c || c->kind != RPT_SKIP;
}

int rpt_rows__add(struct rpt_rows *out, const void *p, size_t i, const struct rpt_row *up)
{
	if (out->n == out->cap) {
		size_t cap = out->cap ? out->cap * 2 : 16;
		struct rpt_row *a = realloc(out->a, cap * sizeof(*a));

		if (!a)
			return -ENOMEM;
		out->a = a;
		out->cap = cap;
	}
	out->a[out->n++] = (struct rpt_row){ .p = p, .i = i, .up = up };
	out->shown = out->n;
	return 0;
}

int rpt_rows__one(const struct rpt_ctx *c, const struct rpt_row *up, struct rpt_rows *out)
{
	return rpt_rows__add(out, up ? up->p : c->m, 0, up);
}

void rpt_rows__limit(struct rpt_rows *out, size_t max, const char *what)
{
	if (max && max < out->n)
		out->shown = max;
	out->more = what;
}

bool rpt_col__is_group(const struct rpt_table *t, size_t k)
{
	size_t n = strlen(t->cols[k].key);

	return k + 1 < t->ncols && !strncmp(t->cols[k + 1].key, t->cols[k].key, n) &&
	       t->cols[k + 1].key[n] == '.';
}

/* A group that is not there (or null) has no members either. */
static void groups_of(const struct rpt_table *t, struct rpt_cell *cells)
{
	for (size_t k = 0; k < t->ncols; k++) {
		size_t n = strlen(t->cols[k].key);

		if (!rpt_col__is_group(t, k))
			continue;
		cells[k].head = true;
		if (cells[k].kind != RPT_SKIP && cells[k].kind != RPT_NULL)
			continue;
		for (size_t j = k + 1; j < t->ncols && !strncmp(t->cols[j].key, t->cols[k].key, n) &&
		     t->cols[j].key[n] == '.'; j++)
			cells[j].kind = RPT_SKIP;
	}
}

/* A row's cells: every column's, RPT_SKIP where it does not show in s's format. */
static void cells_of(const struct rpt_sink *s, const struct rpt_table *t, const struct rpt_row *r,
		     struct rpt_cell *cells, char *bufs)
{
	for (size_t k = 0; k < t->ncols; k++) {
		const struct rpt_col *col = &t->cols[k];

		cells[k] = (struct rpt_cell){ .kind = RPT_SKIP, .buf = bufs + k * RPT_CELL_BUF };
		cells[k].buf[0] = 0;
		/* a group's head decides for its members in every format */
		if (rpt_col__shows(s, col, NULL) || rpt_col__is_group(t, k))
			col->get(&s->c, r, &cells[k]);
	}
	groups_of(t, cells);
}

void rpt_table__render(struct rpt_sink *s, const struct rpt_table *t, const struct rpt_row *up)
{
	struct rpt_rows rows = { 0 };
	struct rpt_cell *cells;
	char *bufs;
	size_t n;

	if (!rpt_table__shows(s, t))
		return;
	if (t->rows(&s->c, up, &rows)) {
		s->err = -ENOMEM;
		free(rows.a);
		return;
	}
	cells = calloc(t->ncols ? t->ncols : 1, sizeof(*cells));
	bufs = malloc((t->ncols ? t->ncols : 1) * RPT_CELL_BUF);
	if (!cells || !bufs) {
		s->err = -ENOMEM;
		free(cells);
		free(bufs);
		free(rows.a);
		return;
	}
	/* machines get every row; people the first ones */
	n = s->fmt == RPT_FMT_JSON ? rows.n : rows.shown;
	s->ops->begin(s, t, &rows);
	s->depth++;
	for (size_t i = 0; i < n; i++) {
		cells_of(s, t, &rows.a[i], cells, bufs);
		s->ops->row(s, t, &rows, i, cells);
	}
	s->depth--;
	s->ops->end(s, t, &rows);
	free(bufs);
	free(cells);
	free(rows.a);
}

/* ---- cells ---- */

/* A cell's value, its buffer kept */
static void set(struct rpt_cell *o, struct rpt_cell v)
{
	v.buf = o->buf;
	*o = v;
}

void rpt_cell_u64(struct rpt_cell *o, uint64_t v)
{
	set(o, (struct rpt_cell){ .kind = RPT_U64, .u = v });
}

void rpt_cell_bytes(struct rpt_cell *o, uint64_t v)
{
	set(o, (struct rpt_cell){ .kind = RPT_BYTES, .u = v });
}

void rpt_cell_ns(struct rpt_cell *o, uint64_t ns)
{
	set(o, (struct rpt_cell){ .kind = RPT_NS, .i = ns > INT64_MAX ? INT64_MAX : (int64_t)ns });
}

void rpt_cell_ts(struct rpt_cell *o, int64_t rel_ns)
{
	set(o, (struct rpt_cell){ .kind = RPT_TS, .i = rel_ns });
}

void rpt_cell_at(struct rpt_cell *o, uint64_t mono_ns)
{
	set(o, (struct rpt_cell){ .kind = RPT_AT, .u = mono_ns });
}

void rpt_cell_f(struct rpt_cell *o, double v, int prec)
{
	set(o, (struct rpt_cell){ .kind = RPT_F, .d = v, .prec = prec });
}

void rpt_cell_pct(struct rpt_cell *o, uint64_t part, uint64_t whole)
{
	set(o, (struct rpt_cell){ .kind = RPT_PCT,
				.d = whole ? 100.0 * (double)part / (double)whole : 0 });
}

void rpt_cell_ratio(struct rpt_cell *o, double v)
{
	set(o, (struct rpt_cell){ .kind = RPT_RATIO, .d = v });
}

void rpt_cell_str(struct rpt_cell *o, const char *s, size_t n)
{
	set(o, (struct rpt_cell){ .kind = RPT_STR, .s = s ? s : "", .n = s ? n : 0 });
}

void rpt_cell_cstr(struct rpt_cell *o, const char *s)
{
	if (!s)
		rpt_cell_null(o);
	else
		rpt_cell_str(o, s, strlen(s));
}

void rpt_cell_strn(struct rpt_cell *o, const char *s, size_t max)
{
	rpt_cell_str(o, s, strnlen(s, max));
}

void rpt_cell_bool(struct rpt_cell *o, bool v)
{
	set(o, (struct rpt_cell){ .kind = RPT_BOOL, .u = v });
}

void rpt_cell_null(struct rpt_cell *o)
{
	set(o, (struct rpt_cell){ .kind = RPT_NULL });
}

void rpt_cell_group(struct rpt_cell *o)
{
	set(o, (struct rpt_cell){ .kind = RPT_GROUP });
}

void rpt_cell_nsmap(struct rpt_cell *o, const uint64_t *ns, size_t n, const char *(*name)(int),
		    uint64_t total, bool nonzero)
{
	set(o, (struct rpt_cell){ .kind = RPT_NSMAP, .ns = ns, .n = n, .name = name, .total = total,
				.nonzero = nonzero });
}

void rpt_cell_u32s(struct rpt_cell *o, const uint32_t *v, size_t n)
{
	set(o, (struct rpt_cell){ .kind = RPT_U32S, .u32s = v, .n = n });
}

void rpt_cell_hist(struct rpt_cell *o, const uint32_t *h, const char *unit)
{
	set(o, (struct rpt_cell){ .kind = RPT_HIST, .u32s = h, .unit = unit });
}

void rpt_cell_series(struct rpt_cell *o, const double *v, double div)
{
	set(o, (struct rpt_cell){ .kind = RPT_SERIES, .series = v, .div = div });
}

void rpt_cell_table(struct rpt_cell *o, const struct rpt_table *t)
{
	set(o, (struct rpt_cell){ .kind = RPT_TABLE, .table = t });
}

void rpt_cell_pairs(struct rpt_cell *o)
{
	set(o, (struct rpt_cell){ .kind = RPT_PAIRS, .s = o->buf, .n = 0 });
	o->u = 0;                       /* bytes used in buf */
}

void rpt_cell_pair_add(struct rpt_cell *o, const char *key, const char *val, size_t max)
{
	size_t kl = strlen(key), vl = strnlen(val, max);

	if (o->u + kl + vl + 2 > RPT_CELL_BUF)
		return;
	memcpy(o->buf + o->u, key, kl + 1);
	o->u += kl + 1;
	memcpy(o->buf + o->u, val, vl);
	o->buf[o->u + vl] = 0;
	o->u += vl + 1;
	o->n++;
}

void rpt_cell_printf(struct rpt_cell *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(o->buf, RPT_CELL_BUF, fmt, ap);
	va_end(ap);
	rpt_cell_str(o, o->buf, n < 0 ? 0 : n >= RPT_CELL_BUF ? RPT_CELL_BUF - 1 : (size_t)n);
}

/* ---- words ---- */

void rpt_ctx__wall(const struct rpt_ctx *c, uint64_t t, char *buf, size_t len)
{
	rpt_fmt_wall(c->m, t, buf, len);
}

int64_t rpt_ctx__rel(const struct rpt_ctx *c, uint64_t t)
{
	return rpt_ts_rel_ns(c->m, t);
}

void rpt_ctx__timeline(const struct rpt_ctx *c, int64_t *t0_rel, uint64_t *width)
{
	*t0_rel = rpt_ts_rel_ns(c->m, c->m->tl_t0);
	*width = c->m->tl_width;
}

const char *rpt_cell__text(const struct rpt_ctx *c, const struct rpt_cell *x, char *buf, size_t len)
{
	char rel[32];

	buf[0] = 0;
	switch (x->kind) {
	case RPT_NULL:
		snprintf(buf, len, "-");
		break;
	case RPT_U64:
		snprintf(buf, len, "%" PRIu64, x->u);
		break;
	case RPT_BYTES:
		rpt_fmt_bytes(x->u, buf, len);
		break;
	case RPT_NS:
		rpt_fmt_dur(x->i < 0 ? 0 : (uint64_t)x->i, buf, len);
		break;
	case RPT_TS:
		json_fmt_us(rel, x->i);
		snprintf(buf, len, "ts=%sus", rel);
		break;
	case RPT_AT:
		json_fmt_us(rel, rpt_ctx__rel(c, x->u));
		snprintf(buf, len, "ts=%sus", rel);
		break;
	case RPT_F:
		snprintf(buf, len, "%.*f", x->prec, x->d);
		break;
	case RPT_PCT:
		snprintf(buf, len, "%.1f%%", x->d);
		break;
	case RPT_RATIO:
		if (x->d < 0)
			snprintf(buf, len, "-");
		else
			snprintf(buf, len, "%.1f%%", 100 * x->d);
		break;
	case RPT_BOOL:
		snprintf(buf, len, "%s", x->u ? "yes" : "no");
		break;
	default:
		break;
	}
	return buf;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

uint64_t rpt_bars__scale(const uint64_t *tot, size_t n)
{
	uint64_t *v = malloc(n * sizeof(*v)), p90, max = 0;

	for (size_t i = 0; i < n; i++)
		max = tot[i] > max ? tot[i] : max;
	if (!v || !n) {
		free(v);
		return max;
	}
	memcpy(v, tot, n * sizeof(*v));
	qsort(v, n, sizeof(*v), cmp_u64);
	p90 = v[(n * 9) / 10];
	free(v);
	return p90 && max > 2 * p90 ? 2 * p90 : max;
}
