// SPDX-License-Identifier: MIT
/*
 * cmd_info.c — `gpuio info CAPTURE [--json]`: what a capture holds — header,
 * record counts per type, the last drop counters, and whether it is whole;
 * with GPU records, their counts per type, each collector's last status
 * (state, reason, clock) and CUPTI's drops.
 */
#include <errno.h>
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
#include "lib/opts.h"

static bool info_json;

static const struct opt info_opts[] = {
	OPT_GROUP("options:"),
	OPT_BOOL('j', "json", &info_json, "one JSON object on stdout, for scripts"),
	OPT_END(),
};

static const struct opt_cmd info_page = {
	.name = "info",
	.usage = "usage: gpuio info CAPTURE [--json]",
	.about =
"Print a capture's header (host, kernel, attach modes, target, clock anchor),\n"
"its record counts, the last drop counters and whether it ended cleanly.\n",
	.opts = info_opts,
};

int cmd_info(int argc, char **argv)
{
	struct gpuio_cap_reader *r = NULL;
	struct capture_info in;
	struct stat sb;
	bool json;
	char err[320];
	int optind, rc;

	info_json = false;
	optind = opt_parse(&info_page, argc, argv, NULL);
	if (optind == OPT_HELP)
		return GPUIO_EXIT_OK;
	if (optind == OPT_BAD)
		return GPUIO_EXIT_USAGE;
	json = info_json;
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
