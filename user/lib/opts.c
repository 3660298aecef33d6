// SPDX-License-Identifier: MIT
/* opts.c — option tables: getopt_long and --help from one table (opts.h). */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include "lib/log.h"
#include "lib/opts.h"
#include "lib/parse.h"

#define OPT_MAX 64
#define HELP_COL 25             /* where the help text starts in --help */

static bool takes_value(const struct opt *o)
{
	return o->argh != NULL;
}

/* An alias stands for the option before it. */
static const struct opt *resolve(const struct opt *o)
{
	while (o->type == OPT_T_CALL && !o->fn && !o->help)
		o--;
	return o;
}

const char *opt_name(const struct opt *o, char buf[8])
{
	if (o->long_name)
		return o->long_name;
	buf[0] = '-';
	buf[1] = (char)o->short_name;
	buf[2] = 0;
	return buf;
}

/* "--name" or "-n" for messages */
static void say_name(const struct opt *o, char *out, size_t len)
{
	char b[8];

	snprintf(out, len, "%s%s", o->long_name ? "--" : "", opt_name(o, b));
}

static bool in_choices(const char *choices, const char *v)
{
	size_t n = strlen(v);

	for (const char *p = choices; p && *p;) {
		const char *bar = strchr(p, '|');
		size_t k = bar ? (size_t)(bar - p) : strlen(p);

		if (k == n && !strncmp(p, v, n))
			return true;
		p = bar ? bar + 1 : NULL;
	}
	return false;
}

static int set_value(const struct opt *o, const char *arg, void *ctx)
{
	char nm[64];
	uint64_t v;
	unsigned long u;

	say_name(o, nm, sizeof(nm));
	switch (o->type) {
	case OPT_T_BOOL:
		*(bool *)o->value = true;
		return 0;
	case OPT_T_INCR:
		(*(int *)o->value)++;
		return 0;
	case OPT_T_STRING:
		*(const char **)o->value = arg;
		return 0;
	case OPT_T_DURATION:
		if (parse_duration_ns(arg, !o->min, &v)) {
			pr_err("%s: bad duration '%s' (examples: 500ms, 30s, 5m, 1h%s)", nm, arg,
			       o->min ? "" : ", 0");
			return -1;
		}
		*(uint64_t *)o->value = v;
		return 0;
	case OPT_T_SIZE:
		if (parse_bytes(arg, &v) || v < o->min || (o->max && v > o->max)) {
			pr_err("%s: bad size '%s' (examples: 16M, 1G%s)", nm, arg,
			       o->min > 1 ? "; at least that much" : "");
			return -1;
		}
		*(uint64_t *)o->value = v;
		return 0;
	case OPT_T_UINT:
		if (parse_ulong(arg, (unsigned long)o->min,
				o->max ? (unsigned long)o->max : 0xffffffffu, &u)) {
			pr_err("%s: '%s' is not a number from %llu to %llu", nm, arg,
			       (unsigned long long)o->min,
			       (unsigned long long)(o->max ? o->max : 0xffffffffu));
			return -1;
		}
		*(unsigned *)o->value = (unsigned)u;
		return 0;
	case OPT_T_CHOICE:
		if (!in_choices(o->choices, arg)) {
			char list[128];
			size_t k = 0;

			for (const char *p = o->choices; *p && k < sizeof(list) - 3; p++)
				k += (size_t)snprintf(list + k, sizeof(list) - k, *p == '|' ? ", " : "%c",
						      *p);
			pr_err("%s: '%s' is not one of %s", nm, arg, list);
			return -1;
		}
		*(const char **)o->value = arg;
		return 0;
	case OPT_T_CALL:
		return o->fn(o, arg, ctx);
	default:
		return 0;
	}
}

int opt_parse(const struct opt_cmd *c, int argc, char **argv, void *ctx)
{
	struct option lo[OPT_MAX + 2];
	const struct opt *by_index[OPT_MAX + 2];
	char shorts[2 * OPT_MAX + 8] = "", *sp = shorts;
	int nlo = 0, ch, idx;

	if (c->stop_at_nonopt)
		*sp++ = '+';
	*sp++ = ':';
	for (const struct opt *o = c->opts; o->type != OPT_T_END && nlo < OPT_MAX; o++) {
		const struct opt *r = resolve(o);

		if (o->type == OPT_T_GROUP)
			continue;
		if (o->long_name) {
			lo[nlo] = (struct option){ o->long_name, takes_value(r) ? required_argument :
						   no_argument, NULL, 1000 + nlo };
			by_index[nlo++] = r;
		}
		if (o->short_name) {
			*sp++ = (char)o->short_name;
			if (takes_value(r))
				*sp++ = ':';
		}
	}
	lo[nlo] = (struct option){ "help", no_argument, NULL, 'h' };
	lo[nlo + 1] = (struct option){ 0 };
	*sp++ = 'h';
	*sp = 0;
	optind = 1;
	opterr = 0;     /* our own one-line messages below */
	while ((ch = getopt_long(argc, argv, shorts, lo, &idx)) != -1) {
		const struct opt *o = NULL;

		if (ch == 'h') {
			opt_usage(c, stdout);
			return OPT_HELP;
		}
		if (ch == ':') {
			pr_err("option %s needs a value (see `gpuio %s --help`)", argv[optind - 1],
			       c->name);
			return OPT_BAD;
		}
		if (ch == '?') {
			pr_err("unknown option '%s' (see `gpuio %s --help`)", argv[optind - 1],
			       c->name);
			return OPT_BAD;
		}
		if (ch >= 1000)
			o = by_index[ch - 1000];
		else
			for (const struct opt *p = c->opts; p->type != OPT_T_END; p++)
				if (p->short_name == ch) {
					o = resolve(p);
					break;
				}
		if (o && set_value(o, optarg, ctx) < 0)
			return OPT_BAD;
	}
	return optind;
}

/* "  -o, --output FILE" */
static int opt_column(const struct opt *o, char *buf, size_t len)
{
	int n;

	if (o->short_name && o->long_name)
		n = snprintf(buf, len, "  -%c, --%s", o->short_name, o->long_name);
	else if (o->short_name)
		n = snprintf(buf, len, "  -%c", o->short_name);
	else
		n = snprintf(buf, len, "      --%s", o->long_name);
	if (o->argh && n > 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, " %s", o->argh);
	return n;
}

void opt_usage(const struct opt_cmd *c, FILE *f)
{
	fprintf(f, "%s\n", c->usage);
	if (c->about)
		fprintf(f, "\n%s", c->about);
	for (const struct opt *o = c->opts; o->type != OPT_T_END; o++) {
		char col[96];
		const char *h = o->help;
		int n;

		if (o->type == OPT_T_GROUP) {
			fprintf(f, "\n%s\n", h);
			continue;
		}
		if (!h)
			continue;       /* an alias: its option's help says so */
		n = opt_column(o, col, sizeof(col));
		if (n < HELP_COL - 1)
			fprintf(f, "%-*s", HELP_COL, col);
		else
			fprintf(f, "%s  ", col);
		for (;;) {
			const char *nl = strchr(h, '\n');

			if (!nl) {
				fprintf(f, "%s\n", h);
				break;
			}
			fprintf(f, "%.*s\n%*s", (int)(nl - h), h, HELP_COL, "");
			h = nl + 1;
		}
	}
	fprintf(f, "%-*s%s\n", HELP_COL, "  -h, --help", "this help");
	if (c->after)
		fprintf(f, "\n%s", c->after);
}
