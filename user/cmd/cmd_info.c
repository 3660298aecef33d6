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
#include "report/info.h"
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
	struct capture_info in;
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
	rc = capture_info__read(argv[optind], &in, err, sizeof(err));
	if (!in.hdr || (rc && rc != -EBADMSG)) {
		/* not opened (the reason in err), or out of memory */
		if (in.hdr)
			pr_err("%s: %s", argv[optind], strerror(-rc));
		else
			pr_err("%s", err);
		capture_info__free(&in);
		return GPUIO_EXIT_ERROR;
	}
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
	capture_info__free(&in);
	return rc ? GPUIO_EXIT_ERROR : GPUIO_EXIT_OK;
}
