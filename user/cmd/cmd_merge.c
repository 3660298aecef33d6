// SPDX-License-Identifier: MIT
/*
 * cmd_merge.c — `gpuio merge A.gpuio B.gpuio ... -o job.pftrace|job.json`:
 * several hosts' captures on one timeline.
 *
 * Clocks, pids and names: see export/merge.c.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmd/commands.h"
#include "export/export.h"
#include "timeline/timeline.h"
#include "trace/launch.h"
#include "lib/log.h"


static void usage(FILE *f)
{
	fprintf(f,
"usage: gpuio merge CAPTURE CAPTURE... -o OUTPUT\n\n"
"Put several hosts' captures (.gpuio) on one timeline: clocks aligned through\n"
"each capture's REALTIME/MONOTONIC pair, each host a group of processes\n"
"(pids + N x 10,000,000, names prefixed with the host name).\n\n"
"options:\n"
"  -o, --output FILE   .pftrace or .json, + .gz for gzip (required)\n"
"  -q, --quiet         print errors only\n"
"  -h, --help          this text\n\n"
"Start the traces together with `gpuio trace --start-at HH:MM:SS` on every host.\n\n"
"example:\n"
"  gpuio merge node1.gpuio node2.gpuio -o job.pftrace\n");
}

/* "host: " for capture i; "host#i: " when another capture names the same host */
int cmd_merge(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct gpuio_export_opts eo = { .owner_uid = (uid_t)-1, .owner_gid = (gid_t)-1 };
	const char *output = NULL;
	int c, n, err;
	uint64_t events = 0;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			output = optarg;
			break;
		case 'q':
			if (gpuio_log_verbosity > GPUIO_LOG_ERROR)
				gpuio_log_verbosity = GPUIO_LOG_ERROR;
			break;
		case 'h':
			usage(stdout);
			return GPUIO_EXIT_OK;
		case ':':
			pr_err("merge: option %s needs an argument (e.g. -o job.pftrace)",
			       argv[optind - 1]);
			return GPUIO_EXIT_USAGE;
		default:
			pr_err("merge: unknown option '%s' (try `gpuio merge --help`)",
			       argv[optind - 1]);
			return GPUIO_EXIT_USAGE;
		}
	}
	n = argc - optind;
	if (n < 1) {
		pr_err("merge: which captures? usage: gpuio merge A.gpuio B.gpuio ... -o OUT.pftrace");
		return GPUIO_EXIT_USAGE;
	}
	if (n > GPUIO_MERGE_MAX) {
		pr_err("merge: at most %d captures at once (got %d)", GPUIO_MERGE_MAX, n);
		return GPUIO_EXIT_USAGE;
	}
	if (!output || !strcmp(output, "-") || !gpuio_export__is_output_name(output)) {
		pr_err("merge: give -o NAME.pftrace or NAME.json (+ .gz)");
		return GPUIO_EXIT_USAGE;
	}
	gpuio_sudo_ids(&eo.owner_uid, &eo.owner_gid);

	err = gpuio_merge(&argv[optind], n, output, &eo, &events);
	if (err)
		return GPUIO_EXIT_ERROR;
	pr_info("wrote %s: %d captures, %llu %s", output, n, (unsigned long long)events,
		gpuio_export__is_pftrace_name(output) ? "packets" : "events");
	return GPUIO_EXIT_OK;
}
