/* SPDX-License-Identifier: MIT */
/*
 * opts.h — a command's options, each declared once, in one table that
 * feeds getopt_long, the --help text and (through help2man) the man page:
 * the shape of perf's OPT_STRING(...) tables.
 *
 *	static const struct opt opts[] = {
 *		OPT_GROUP("targets (one of):"),
 *		OPT_CALL('p', "pid", "PID[,PID]", "attach to running processes", on_pid),
 *		OPT_GROUP("options:"),
 *		OPT_DURATION('d', "duration", &o.duration_ns, "stop after DUR"),
 *		OPT_INCR('v', "verbose", &verbosity, "say more (-vv: more)"),
 *		OPT_END(),
 *	};
 *
 * Values are parsed by type (durations, sizes, counts, choices) with one
 * error message per type ("--duration: bad duration 'abc' (examples: ...)");
 * OPT_CALL options parse themselves. Help strings may hold '\n': the next
 * line is indented under the first. -h/--help is always there.
 */
#ifndef GPUIO_LIB_OPTS_H
#define GPUIO_LIB_OPTS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum opt_type {
	OPT_T_END, OPT_T_GROUP, OPT_T_BOOL, OPT_T_INCR, OPT_T_STRING, OPT_T_DURATION,
	OPT_T_SIZE, OPT_T_UINT, OPT_T_CHOICE, OPT_T_CALL,
};

struct opt;
/* An OPT_CALL option's parser: 0, or -1 after saying why (pr_err). */
typedef int (*opt_fn)(const struct opt *o, const char *arg, void *ctx);

struct opt {
	enum opt_type type;
	int short_name;         /* 0: none */
	const char *long_name;  /* NULL: none */
	const char *argh;       /* the value's name in --help ("FILE"); NULL: no value */
	const char *help;       /* NULL: not listed in --help (an alias) */
	void *value;            /* bool *, int *, const char **, uint64_t *, unsigned * */
	uint64_t min, max;      /* SIZE, UINT: bounds (max 0: none); DURATION: min 1 = not 0 */
	const char *choices;    /* CHOICE: "a|b|c" */
	opt_fn fn;              /* CALL */
};

#define OPT_END()                           { .type = OPT_T_END }
#define OPT_GROUP(h)                        { .type = OPT_T_GROUP, .help = (h) }
#define OPT_BOOL(s, l, v, h)                { .type = OPT_T_BOOL, .short_name = (s), .long_name = (l), \
					      .value = (v), .help = (h) }
#define OPT_INCR(s, l, v, h)                { .type = OPT_T_INCR, .short_name = (s), .long_name = (l), \
					      .value = (v), .help = (h) }
#define OPT_STRING(s, l, v, a, h)           { .type = OPT_T_STRING, .short_name = (s), .long_name = (l), \
					      .value = (v), .argh = (a), .help = (h) }
/* ns; nonzero: 0 is refused */
#define OPT_DURATION(s, l, v, a, nonzero, h) { .type = OPT_T_DURATION, .short_name = (s), \
					      .long_name = (l), .value = (v), .argh = (a), \
					      .min = (nonzero), .help = (h) }
/* bytes ("64M", "1G"), at least lo */
#define OPT_SIZE(s, l, v, a, lo, h)         { .type = OPT_T_SIZE, .short_name = (s), .long_name = (l), \
					      .value = (v), .argh = (a), .min = (lo), .help = (h) }
/* an unsigned count in [lo, hi] */
#define OPT_UINT(s, l, v, a, lo, hi, h)     { .type = OPT_T_UINT, .short_name = (s), .long_name = (l), \
					      .value = (v), .argh = (a), .min = (lo), .max = (hi), \
					      .help = (h) }
#define OPT_CHOICE(s, l, v, a, c, h)        { .type = OPT_T_CHOICE, .short_name = (s), .long_name = (l), \
					      .value = (v), .argh = (a), .choices = (c), .help = (h) }
/* a = NULL: a flag whose fn gets arg NULL */
#define OPT_CALL(s, l, a, h, f)             { .type = OPT_T_CALL, .short_name = (s), .long_name = (l), \
					      .argh = (a), .help = (h), .fn = (f) }
/* another name of the option before it (not listed; say so in its help) */
#define OPT_ALIAS(l)                        { .type = OPT_T_CALL, .long_name = (l), .help = NULL }

/* A command's page: usage lines, what it does, the table, what follows. */
struct opt_cmd {
	const char *name;       /* "trace": messages say "gpuio trace" */
	const char *usage;      /* "usage: ..." lines, without the final newline */
	const char *about;      /* paragraphs after the usage, or NULL */
	const struct opt *opts;
	const char *after;      /* after the options (examples), or NULL */
	bool stop_at_nonopt;    /* the first non-option ends the options (a command follows) */
};

/*
 * Parse argv (argv[0]: the command's name). Returns the index of the first
 * argument that is not an option (argc when none), OPT_HELP after printing
 * --help on stdout, or OPT_BAD after a one-line error that points to --help.
 */
#define OPT_HELP (-1)
#define OPT_BAD  (-2)
int opt_parse(const struct opt_cmd *c, int argc, char **argv, void *ctx);
void opt_usage(const struct opt_cmd *c, FILE *f);
/* The option's name as messages show it: "--long", else "-s". */
const char *opt_name(const struct opt *o, char buf[8]);

#endif /* GPUIO_LIB_OPTS_H */
