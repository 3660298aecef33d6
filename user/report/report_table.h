/* SPDX-License-Identifier: MIT */
/*
 * report_table.h — the report's tables, declared once and rendered three
 * ways. A table is a list of columns, each with its JSON key, its header and
 * an entry function that fills one cell of one row (perf's struct
 * perf_hpp_fmt is the model: stdio, TUI and GTK render the same array).
 * The text, JSON and HTML renderers (report_text.c, report_json.c,
 * report_html.c) are sinks: they get the rows' cells and lay them out, and
 * know nothing of the report model. A column added to a table shows in all
 * three unless its flags say otherwise.
 *
 * The document (report_doc.c) is the list of tables in the order the report
 * shows them; the tables themselves are declared by subject in
 * report_tab_*.c, over the model (report_model.h).
 */
#ifndef GPUIO_REPORT_TABLE_H
#define GPUIO_REPORT_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rpt_model;
struct rpt_opts;
struct rpt_table;

/* What a cell holds; how each sink writes it is in each sink. */
enum rpt_kind {
	RPT_SKIP,       /* nothing for this row: no JSON member, an empty cell */
	RPT_NULL,       /* unknown: JSON null, "-" */
	RPT_GROUP,      /* a JSON object whose members are the next columns keyed "KEY.x" */
	RPT_U64,        /* u */
	RPT_BYTES,      /* u bytes: JSON an integer; "1.50 MiB" */
	RPT_NS,         /* i ns, a duration: JSON µs with 3 decimals; "12.3 ms" */
	RPT_TS,         /* i ns after the capture's anchor: JSON µs; "ts=12.000us" */
	RPT_AT,         /* u a CLOCK_MONOTONIC instant: JSON KEY_ts_us and KEY_utc */
	RPT_F,          /* d with prec decimals (JSON: 3) */
	RPT_PCT,        /* d a share in percent: "12.3%" (JSON: 3 decimals) */
	RPT_RATIO,      /* d 0..1, < 0 undefined: JSON 6 decimals or null; "12.3%" or "-" */
	RPT_STR,        /* s, n bytes (any: each sink escapes them) */
	RPT_BOOL,       /* u */
	RPT_NSMAP,      /* ns[n] named name(k): JSON {name: µs}; "name 1.2 s (40%), ..." */
	RPT_U32S,       /* u32s[n]: JSON [..]; "1 2 3" */
	RPT_HIST,       /* hist[RPT_HIST_N], log2 buckets of unit: JSON [{lo, hi, count}] */
	RPT_SERIES,     /* series[RPT_SERIES_N] / div over the capture's timeline: JSON [..] */
	RPT_TABLE,      /* table: rows of this row's own (a loop's steps) */
	RPT_PAIRS,      /* n "key\0value\0" pairs in buf: JSON {key: "value"}; "key=value ..." */
};

#define RPT_HIST_N   40         /* = RPT_LOG2_BUCKETS */
#define RPT_SERIES_N 120        /* = RPT_TL_BUCKETS */

struct rpt_cell {
	enum rpt_kind kind;
	uint64_t u;
	int64_t i;
	double d;
	int prec;                       /* RPT_F: decimals in text and HTML */
	const char *s;                  /* RPT_STR */
	size_t n;                       /* RPT_STR bytes; RPT_NSMAP, RPT_U32S entries */
	const uint64_t *ns;             /* RPT_NSMAP */
	const char *(*name)(int k);     /* RPT_NSMAP: the k-th name */
	uint64_t total;                 /* RPT_NSMAP: text shows shares of it (0: none) */
	bool nonzero;                   /* RPT_NSMAP: members that are 0 are left out */
	const uint32_t *u32s;           /* RPT_U32S; RPT_HIST */
	const char *unit;               /* RPT_HIST: "us", "bytes" */
	const double *series;           /* RPT_SERIES */
	double div;                     /* RPT_SERIES: each value / div (0: 0) */
	const struct rpt_table *table;  /* RPT_TABLE: its rows come from this row */
	char *buf;                      /* the column's own RPT_CELL_BUF bytes (rpt_cell_printf) */
	bool head;                      /* heads a group ("a" of "a.b"): JSON only */
};
#define RPT_CELL_BUF 1024

/* A row: what the table's rows() chose (an element of a model array, an
 * index), and the row of the table it is inside (NULL at the top). */
struct rpt_row {
	const void *p;
	size_t i;
	const struct rpt_row *up;
};

struct rpt_rows {
	struct rpt_row *a;
	size_t n, cap;
	size_t shown;                   /* text and HTML show the first `shown` (JSON: all) */
	const char *more;               /* what the rest are called: "... 3 more threads" */
};

/* What the entry functions read: the model and the options. */
struct rpt_hosts;
struct rpt_ctx {
	const struct rpt_model *m;
	const struct rpt_opts *opt;
	const struct rpt_hosts *hosts;  /* the job view of several captures, or NULL */
};

typedef void rpt_get_fn(const struct rpt_ctx *c, const struct rpt_row *r, struct rpt_cell *out);

/* Column flags: where it shows (everywhere unless one says not), and how text lays it out. */
#define RPT_C_NOTEXT  0x01      /* JSON and HTML only */
#define RPT_C_NOHTML  0x02
#define RPT_C_NOJSON  0x04      /* text and HTML only (a bar, a label) */
#define RPT_C_TAIL    0x08      /* text: last on its line, unpadded (a path) */
#define RPT_C_LEAD    0x10      /* the row's title (blocks: its own line; HTML a heading) */
#define RPT_C_JOIN    0x20      /* text records: on the line of the column before, after ", " */
#define RPT_C_BAR     0x40      /* an RPT_NS drawn as a bar: text "WWW###", HTML a bar chart */
#define RPT_C_FIGURE  0x80      /* an RPT_HIST or a GROUP of RPT_SERIES: a chart in text/HTML */
#define RPT_C_STACK   0x100     /* a FIGURE group: its series stacked, not lines */
#define RPT_C_PARA    0x200     /* a sentence: text on a line of its own, HTML a paragraph */
#define RPT_C_NOZERO  0x400     /* text and HTML leave it out when 0, empty or unknown */

struct rpt_col {
	const char *key;        /* JSON member; "a.b" is member b of the RPT_GROUP column "a" */
	const char *head;       /* text and HTML header (NULL: the key); in a record "line|item":
				 * the line's label, then this value's */
	int width;              /* text: columns (negative: left aligned; 0: as wide as it is) */
	unsigned flags;
	rpt_get_fn *get;
};

/* How a table is laid out (JSON: an array of objects, or one object). */
enum rpt_layout {
	RPT_ROWS,       /* a row per line under a header */
	RPT_BLOCKS,     /* a block per row: its lead, then "head value" pairs, then sub-tables */
	RPT_RECORD,     /* one row: a line per column ("head  value"); JSON one object */
	RPT_LIST,       /* one column of strings: bullets; JSON an array of strings */
};

/* Table flags */
#define RPT_T_NOTEXT  0x01
#define RPT_T_NOHTML  0x02
#define RPT_T_NOJSON  0x04
#define RPT_T_INLINE  0x08      /* JSON: a record's members go into the enclosing object */
#define RPT_T_WARN    0x10      /* a list of warnings ("!! ", HTML a warning box) */
#define RPT_T_NOHEAD  0x20      /* text: no title line (the enclosing block says it) */
#define RPT_T_BYKEY   0x40      /* JSON: an object of rows keyed by their lead, not an array */
#define RPT_T_NULL    0x80      /* JSON: a record without its row is null, not left out */

struct rpt_table {
	const char *key;        /* JSON member holding it (NULL: an element of an array) */
	const char *title;      /* text heading / HTML heading (NULL: none) */
	const char *about;      /* a line under the title in text and HTML (NULL: none) */
	const char *none;       /* text and HTML without rows: this (NULL: nothing, no title) */
	enum rpt_layout layout;
	unsigned flags;
	const struct rpt_col *cols;
	size_t ncols;
	/* the rows inside row up (NULL at the top level); 0 or -ENOMEM */
	int (*rows)(const struct rpt_ctx *c, const struct rpt_row *up, struct rpt_rows *out);
	/* a subtitle computed from the rows (text and HTML), NULL: about */
	void (*describe)(const struct rpt_ctx *c, const struct rpt_rows *rows, char *buf, size_t len);
};

#define RPT_COLS(a) .cols = (a), .ncols = sizeof(a) / sizeof((a)[0])

/* Where a sink shows things */
enum rpt_format { RPT_FMT_TEXT, RPT_FMT_JSON, RPT_FMT_HTML };

struct rpt_sink;
struct rpt_sink_ops {
	/* rows: what the table will show; its title is the sink's */
	void (*begin)(struct rpt_sink *s, const struct rpt_table *t, const struct rpt_rows *rows);
	/* cells[k] for t->cols[k] (RPT_SKIP where the column does not show in this format) */
	void (*row)(struct rpt_sink *s, const struct rpt_table *t, const struct rpt_rows *rows,
		    size_t i, const struct rpt_cell *cells);
	void (*end)(struct rpt_sink *s, const struct rpt_table *t, const struct rpt_rows *rows);
};

struct rpt_sink {
	const struct rpt_sink_ops *ops;
	enum rpt_format fmt;
	struct rpt_ctx c;
	int depth;                      /* tables open around the current one */
	int err;                        /* the first error (-ENOMEM) */
};

/* Render table t (its rows inside up) into s: begin, the rows, end. */
void rpt_table__render(struct rpt_sink *s, const struct rpt_table *t, const struct rpt_row *up);
/* Does column col show in s's format (and cell c is there)? */
bool rpt_col__shows(const struct rpt_sink *s, const struct rpt_col *col, const struct rpt_cell *c);
bool rpt_table__shows(const struct rpt_sink *s, const struct rpt_table *t);
/* 0, empty or unknown (RPT_C_NOZERO) */
bool rpt_cell__empty(const struct rpt_cell *c);
/* Is column k a group (the column after it is keyed "its key.x")? */
bool rpt_col__is_group(const struct rpt_table *t, size_t k);

/* Rows: add one; a single row (a record). 0 or -ENOMEM. */
int rpt_rows__add(struct rpt_rows *out, const void *p, size_t i, const struct rpt_row *up);
int rpt_rows__one(const struct rpt_ctx *c, const struct rpt_row *up, struct rpt_rows *out);
/* Show the first max rows in text and HTML (0: all), the rest called what. */
void rpt_rows__limit(struct rpt_rows *out, size_t max, const char *what);

/* Cell makers for entry functions */
void rpt_cell_u64(struct rpt_cell *o, uint64_t v);
void rpt_cell_bytes(struct rpt_cell *o, uint64_t v);
void rpt_cell_ns(struct rpt_cell *o, uint64_t ns);
void rpt_cell_ts(struct rpt_cell *o, int64_t rel_ns);
void rpt_cell_at(struct rpt_cell *o, uint64_t mono_ns);
void rpt_cell_f(struct rpt_cell *o, double v, int prec);
void rpt_cell_pct(struct rpt_cell *o, uint64_t part, uint64_t whole);
void rpt_cell_ratio(struct rpt_cell *o, double v);
void rpt_cell_str(struct rpt_cell *o, const char *s, size_t n);
void rpt_cell_cstr(struct rpt_cell *o, const char *s);       /* NULL: RPT_NULL */
void rpt_cell_strn(struct rpt_cell *o, const char *s, size_t max);  /* a fixed char[] */
void rpt_cell_bool(struct rpt_cell *o, bool v);
void rpt_cell_null(struct rpt_cell *o);
void rpt_cell_group(struct rpt_cell *o);
void rpt_cell_nsmap(struct rpt_cell *o, const uint64_t *ns, size_t n, const char *(*name)(int),
		    uint64_t total, bool nonzero);
void rpt_cell_u32s(struct rpt_cell *o, const uint32_t *v, size_t n);
void rpt_cell_hist(struct rpt_cell *o, const uint32_t *h, const char *unit);
void rpt_cell_series(struct rpt_cell *o, const double *v, double div);
void rpt_cell_table(struct rpt_cell *o, const struct rpt_table *t);
/* Pairs of strings, kept in the cell's own buffer: begin, then add each */
void rpt_cell_pairs(struct rpt_cell *o);
void rpt_cell_pair_add(struct rpt_cell *o, const char *key, const char *val, size_t max);
/* A string made now, kept in the cell's own buffer */
void rpt_cell_printf(struct rpt_cell *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The text of a scalar cell as text and HTML show it ("1.50 MiB", "12.3%");
 * buf holds at least 64 bytes. Strings are returned as they are (s, n). */
const char *rpt_cell__text(const struct rpt_ctx *c, const struct rpt_cell *x, char *buf, size_t len);
/* The scale of a table's bars: most rows' height, not the tallest's (one slow
 * first step must not flatten the rest: taller bars are cut, and marked) */
uint64_t rpt_bars__scale(const uint64_t *tot, size_t n);
/* Durations and sizes as the report prints them ("8.43 ms", "1.50 MiB") */
void rpt_fmt_dur(uint64_t ns, char *buf, size_t len);
void rpt_fmt_bytes(uint64_t b, char *buf, size_t len);
/* The wall-clock of a CLOCK_MONOTONIC instant, for RPT_AT cells */
void rpt_ctx__wall(const struct rpt_ctx *c, uint64_t t, char *buf, size_t len);
int64_t rpt_ctx__rel(const struct rpt_ctx *c, uint64_t t);
/* The timeline the series cells are over: first bucket (ns after the anchor) and width */
void rpt_ctx__timeline(const struct rpt_ctx *c, int64_t *t0_rel, uint64_t *width);

#endif /* GPUIO_REPORT_TABLE_H */
