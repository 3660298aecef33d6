// SPDX-License-Identifier: MIT
/*
 * report_json.c — `gpuio report --json`: the report's tables
 * (report_table.h) as JSON, one object per capture (an array of them for
 * several captures), every row of every table.
 *
 * Times: *_ts_us members are µs after the capture's monotonic anchor (the
 * exports' ts, 3 decimals = exact ns); *_utc the same instant as wall-clock;
 * durations *_us. Byte counts are exact integers. A column keyed "a.b" is
 * member b of object a.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/json_writer.h"
#include "report/report.h"
#include "report/report_doc.h"
#include "report/report_table.h"

#define JSON_DEPTH 32

struct json_sink {
	struct rpt_sink s;
	struct json_writer *w;
	bool first[JSON_DEPTH];         /* no member written yet at this nesting */
	int depth;
	bool keyed;                     /* the member's key is written: the next value is its */
};

static struct json_sink *js(struct rpt_sink *s)
{
	return (struct json_sink *)s;
}

/* a member's key (NULL: an array element), after a comma where one is due */
static void key(struct json_sink *j, const char *k, size_t n)
{
	if (j->keyed) {                 /* written by the enclosing row */
		j->keyed = false;
		return;
	}
	if (!j->first[j->depth])
		json_writer__putc(j->w, ',');
	j->first[j->depth] = false;
	if (k) {
		json_writer__putc(j->w, '"');
		json_writer__raw(j->w, k, n);
		json_writer__puts(j->w, "\":");
	}
}

static void open_(struct json_sink *j, const char *k, size_t n, char c)
{
	key(j, k, n);
	json_writer__putc(j->w, c);
	if (j->depth + 1 < JSON_DEPTH)
		j->first[++j->depth] = true;
}

static void close_(struct json_sink *j, char c)
{
	json_writer__putc(j->w, c);
	j->depth--;
}

static void member_k(struct json_sink *j, const char *name, const char *suffix)
{
	char k[96];

	snprintf(k, sizeof(k), "%s%s", name, suffix);
	key(j, k, strlen(k));
}

static void nsmap(struct json_sink *j, const struct rpt_cell *c)
{
	json_writer__putc(j->w, '{');
	for (size_t k = 0, first = 1; k < c->n; k++) {
		const char *nm = c->name((int)k);

		if (c->nonzero && !c->ns[k])
			continue;
		if (!first)
			json_writer__putc(j->w, ',');
		first = 0;
		json_writer__putc(j->w, '"');
		json_writer__puts(j->w, nm);
		json_writer__puts(j->w, "\":");
		json_writer__us(j->w, c->ns[k] > INT64_MAX ? INT64_MAX : (int64_t)c->ns[k]);
	}
	json_writer__putc(j->w, '}');
}

static void hist(struct json_sink *j, const struct rpt_cell *c)
{
	bool first = true;

	json_writer__putc(j->w, '[');
	for (int i = 0; i < RPT_HIST_N; i++) {
		if (!c->u32s[i])
			continue;
		json_writer__printf(j->w, "%s{\"lo\":%llu,\"hi\":%llu,\"count\":%u}", first ? "" : ",",
				    i ? 1ull << (i - 1) : 0ull, i ? (1ull << i) - 1 : 0ull,
				    c->u32s[i]);
		first = false;
	}
	json_writer__putc(j->w, ']');
}

/* One cell's value (its key is written). */
static void value(struct json_sink *j, const struct rpt_row *r, const struct rpt_cell *c)
{
	switch (c->kind) {
	case RPT_U64: case RPT_BYTES:
		json_writer__u64(j->w, c->u);
		break;
	case RPT_NS: case RPT_TS:
		json_writer__us(j->w, c->i);
		break;
	case RPT_F: case RPT_PCT:
		json_writer__f3(j->w, c->d);
		break;
	case RPT_RATIO:
		if (c->d < 0)
			json_writer__puts(j->w, "null");
		else
			json_writer__printf(j->w, "%.6f", c->d);
		break;
	case RPT_STR:
		json_writer__str(j->w, c->s, c->n);
		break;
	case RPT_BOOL:
		json_writer__bool(j->w, c->u);
		break;
	case RPT_NSMAP:
		nsmap(j, c);
		break;
	case RPT_U32S:
		json_writer__putc(j->w, '[');
		for (size_t k = 0; k < c->n; k++) {
			if (k)
				json_writer__putc(j->w, ',');
			json_writer__u64(j->w, c->u32s[k]);
		}
		json_writer__putc(j->w, ']');
		break;
	case RPT_HIST:
		hist(j, c);
		break;
	case RPT_SERIES:
		json_writer__putc(j->w, '[');
		for (int k = 0; k < RPT_SERIES_N; k++) {
			if (k)
				json_writer__putc(j->w, ',');
			json_writer__f3(j->w, c->div > 0 ? c->series[k] / c->div : 0);
		}
		json_writer__putc(j->w, ']');
		break;
	case RPT_PAIRS: {
		const char *p = c->s;

		json_writer__putc(j->w, '{');
		for (size_t k = 0; k < c->n; k++) {
			size_t kl = strlen(p);

			if (k)
				json_writer__putc(j->w, ',');
			json_writer__str(j->w, p, kl);
			json_writer__putc(j->w, ':');
			p += kl + 1;
			json_writer__str(j->w, p, strlen(p));
			p += strlen(p) + 1;
		}
		json_writer__putc(j->w, '}');
		break;
	}
	case RPT_TABLE:
		j->keyed = true;
		rpt_table__render(&j->s, c->table, r);
		j->keyed = false;
		break;
	default:
		json_writer__puts(j->w, "null");
	}
}

/* The groups ("a" of "a.b") open around the current member */
struct groups {
	const char *k[8];
	size_t len[8];
	int n;
};

static bool inside(const struct groups *g, int i, const char *key)
{
	return !strncmp(g->k[i], key, g->len[i]) && key[g->len[i]] == '.';
}

/* Close the groups key is not in; open those it is in that are not open. */
static void enter(struct json_sink *j, struct groups *g, const char *key)
{
	const char *dot;

	while (g->n && !inside(g, g->n - 1, key)) {
		close_(j, '}');
		g->n--;
	}
	for (const char *p = g->n ? key + g->len[g->n - 1] + 1 : key; (dot = strchr(p, '.'));
	     p = dot + 1) {
		if (g->n == 8)
			break;
		open_(j, p, (size_t)(dot - p), '{');
		g->k[g->n] = key;
		g->len[g->n++] = (size_t)(dot - key);
	}
}

/* The members of one row, into the object open now. */
static void members(struct json_sink *j, const struct rpt_table *t, const struct rpt_row *r,
		    const struct rpt_cell *cells)
{
	struct groups g = { .n = 0 };

	for (size_t k = 0; k < t->ncols; k++) {
		const struct rpt_col *col = &t->cols[k];
		const struct rpt_cell *c = &cells[k];
		const char *name;

		if (t->flags & RPT_T_BYKEY && col->flags & RPT_C_LEAD)
			continue;               /* the row's key */
		if (!rpt_col__shows(&j->s, col, c))
			continue;
		enter(j, &g, col->key);
		name = strrchr(col->key, '.');
		name = name ? name + 1 : col->key;
		if (c->kind == RPT_GROUP) {
			open_(j, name, strlen(name), '{');
			g.k[g.n] = col->key;
			g.len[g.n++] = strlen(col->key);
			continue;
		}
		if (c->kind == RPT_AT) {
			char wall[48];

			member_k(j, name, "_ts_us");
			json_writer__us(j->w, rpt_ctx__rel(&j->s.c, c->u));
			member_k(j, name, "_utc");
			rpt_ctx__wall(&j->s.c, c->u, wall, sizeof(wall));
			json_writer__cstr(j->w, wall);
			continue;
		}
		key(j, name, strlen(name));
		value(j, r, c);
	}
	while (g.n--)
		close_(j, '}');
}

static void begin(struct rpt_sink *s, const struct rpt_table *t, const struct rpt_rows *rows)
{
	struct json_sink *j = js(s);
	const char *k = s->depth ? NULL : t->key;      /* nested: the row wrote the key */

	if (t->layout == RPT_RECORD) {
		if (!rows->n) {
			if (j->keyed) {         /* a member whose record is not there */
				j->keyed = false;
				json_writer__puts(j->w, "null");
			} else if (t->flags & RPT_T_NULL) {
				key(j, k, k ? strlen(k) : 0);
				json_writer__puts(j->w, "null");
			}
			return;
		}
		if (!(t->flags & RPT_T_INLINE))
			open_(j, k, k ? strlen(k) : 0, '{');
		else
			j->keyed = false;
		return;
	}
	open_(j, k, k ? strlen(k) : 0, t->flags & RPT_T_BYKEY ? '{' : '[');
}

/* A BYKEY row's key: its lead cell */
static void lead_key(struct json_sink *j, const struct rpt_table *t, const struct rpt_cell *cells)
{
	for (size_t k = 0; k < t->ncols; k++)
		if (t->cols[k].flags & RPT_C_LEAD && cells[k].kind == RPT_STR) {
			key(j, cells[k].s, cells[k].n);
			return;
		}
	key(j, "?", 1);
}

static void row(struct rpt_sink *s, const struct rpt_table *t, const struct rpt_rows *rows,
		size_t i, const struct rpt_cell *cells)
{
	struct json_sink *j = js(s);

	if (t->layout == RPT_LIST) {
		key(j, NULL, 0);
		value(j, &rows->a[i], &cells[0]);
		return;
	}
	if (t->flags & RPT_T_BYKEY) {
		lead_key(j, t, cells);
		j->keyed = true;
	}
	if (t->layout != RPT_RECORD)
		open_(j, NULL, 0, '{');
	members(j, t, &rows->a[i], cells);
	if (t->layout != RPT_RECORD)
		close_(j, '}');
}

static void end(struct rpt_sink *s, const struct rpt_table *t, const struct rpt_rows *rows)
{
	struct json_sink *j = js(s);

	if (t->layout == RPT_RECORD) {
		if (rows->n && !(t->flags & RPT_T_INLINE))
			close_(j, '}');
		return;
	}
	close_(j, t->flags & RPT_T_BYKEY ? '}' : ']');
}

static const struct rpt_sink_ops json_ops = { .begin = begin, .row = row, .end = end };

/* The JSON writer on stdout (after what stdio holds). */
static int sink_open(struct json_sink *j, const struct rpt_opts *opt)
{
	*j = (struct json_sink){ .s = { .ops = &json_ops, .fmt = RPT_FMT_JSON, .c = { .opt = opt } },
				 .first = { true } };
	fflush(stdout);
	return json_writer__new(STDOUT_FILENO, false, false, &j->w);
}

static int sink_close(struct json_sink *j)
{
	int err;

	json_writer__putc(j->w, '\n');
	err = json_writer__close(j->w);
	return j->s.err ? j->s.err : err;
}

/* One capture's report: an object of its tables. */
static void one(struct json_sink *j, const struct rpt_model *m)
{
	j->s.c.m = m;
	open_(j, NULL, 0, '{');
	rpt_doc__render(&j->s);
	close_(j, '}');
}

int rpt_json__write(struct rpt_model *const *models, int n, const struct rpt_opts *opt)
{
	struct json_sink j;
	int err = sink_open(&j, opt);

	if (err)
		return err;
	if (n != 1)
		open_(&j, NULL, 0, '[');
	for (int i = 0; i < n; i++)
		one(&j, models[i]);
	if (n != 1)
		close_(&j, ']');
	return sink_close(&j);
}

/* {"across_hosts": {...}, "reports": [each capture's report]} */
int rpt_json__write_hosts(const struct rpt_hosts *h, const struct rpt_opts *opt)
{
	struct json_sink j;
	int err = sink_open(&j, opt);

	if (err)
		return err;
	open_(&j, NULL, 0, '{');
	rpt_doc__hosts(&j.s, h);
	open_(&j, "reports", 7, '[');
	for (int i = 0; i < rpt_doc__hosts_n(h); i++)
		one(&j, rpt_doc__hosts_model(h, i));
	close_(&j, ']');
	close_(&j, '}');
	return sink_close(&j);
}
