// SPDX-License-Identifier: MIT
/*
 * cmd_info.c — `gpuio info CAPTURE [--json]`: what a capture holds — header,
 * record counts per type, the last drop counters, and whether it is whole;
 * with GPU records, their counts per type, each collector's last status
 * (state, reason, clock) and CUPTI's drops.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include "capture/capture.h"
#include "capture/capture_info.h"
#include "cmd/commands.h"
#include "lib/log.h"

static void usage(FILE *f)
{
	fprintf(f,
"usage: gpuio info CAPTURE [--json]\n\n"
"Print a capture's header (host, kernel, attach modes, target, clock anchor),\n"
"its record counts, the last drop counters and whether it ended cleanly.\n\n"
"options:\n"
"  -j, --json   one JSON object on stdout, for scripts\n"
"  -h, --help   this text\n");
}

int cmd_info(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct gpuio_cap_reader *r = NULL;
	struct capture_info in;
	struct stat sb;
	bool json = false;
	char err[320];
	int c, rc;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "jh", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'h':
			usage(stdout);
			return GPUIO_EXIT_OK;
		default:
			pr_err("info: unknown option '%s' (try `gpuio info --help`)", argv[optind - 1]);
			return GPUIO_EXIT_USAGE;
		}
	}
	if (argc - optind != 1) {
		pr_err("info: %s (usage: gpuio info CAPTURE [--json])",
		       optind >= argc ? "which capture?" : "one capture at a time");
		return GPUIO_EXIT_USAGE;
	}
	rc = gpuio_cap_reader__open(argv[optind], &r, err, sizeof(err));
	if (rc) {
		pr_err("%s", err);
		return GPUIO_EXIT_ERROR;
	}
	memset(&in, 0, sizeof(in));
	in.hdr = gpuio_cap_reader__header(r);
	if (stat(argv[optind], &sb) == 0)
		in.file_size = (uint64_t)sb.st_size;
	rc = capture_info__scan(r, &in);
	if (json) {
		if (rpt_info__print_json(argv[optind], &in)) {
			pr_err("cannot write to stdout");
			rc = -EIO;
		}
	} else {
		rpt_info__print_text(argv[optind], &in);
		fflush(stdout);
	}
	if (in.corrupt[0])
		pr_err("%s: %s; the capture is damaged from there on: record it again",
		       argv[optind], in.corrupt);
	gpuio_cap_reader__close(r);
	capture_info__free(&in);
	return rc ? GPUIO_EXIT_ERROR : GPUIO_EXIT_OK;
}
