// SPDX-License-Identifier: MIT
/*
 * cmd_merge.c — `gpuio merge A.gpuio B.gpuio ... -o job.pftrace|job.json`:
 * several hosts' captures on one timeline.
 *
 * Clocks, pids and names: see export/merge.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmd/commands.h"
#include "export/export.h"
#include "timeline/timeline.h"
#include "trace/launch.h"
#include "lib/log.h"
#include "lib/opts.h"


static const char *merge_output;
static char *merge_pytorch[GPUIO_MERGE_PYTORCH_MAX];
static int merge_npytorch;

static int on_pytorch(const struct opt *opt, const char *arg, void *ctx)
{
	if (merge_npytorch >= GPUIO_MERGE_PYTORCH_MAX) {
		pr_err("merge: at most %d --pytorch traces", GPUIO_MERGE_PYTORCH_MAX);
		return -1;
	}
	merge_pytorch[merge_npytorch++] = (char *)arg;
	return 0;
}

static int on_quiet(const struct opt *opt, const char *arg, void *ctx)
{
	if (gpuio_log_verbosity > GPUIO_LOG_ERROR)
		gpuio_log_verbosity = GPUIO_LOG_ERROR;
	return 0;
}

static const struct opt merge_opts[] = {
	OPT_GROUP("options:"),
	OPT_STRING('o', "output", &merge_output, "FILE", ".pftrace or .json, + .gz for gzip (required)"),
	OPT_CALL(0, "pytorch", "TRACE",
		 "a PyTorch profiler trace (.json[.gz]) of the same run, on the "
		 "timeline (repeatable; below)", on_pytorch),
	OPT_CALL('q', "quiet", NULL, "print errors only", on_quiet),
	OPT_END(),
};

static const struct opt_cmd merge_page = {
	.name = "merge",
	.usage = "usage: gpuio merge CAPTURE... [--pytorch TRACE]... -o OUTPUT",
	.about =
"Put several hosts' captures (.gpuio) on one timeline, clocks aligned through\n"
"each capture's REALTIME/MONOTONIC pair. In a .pftrace each host is a machine\n"
"of its own (its pids as they were); a JSON has no machines, so there each\n"
"host is a group of processes (pids + N x 10,000,000, names prefixed with the\n"
"host name).\n",
	.opts = merge_opts,
	.after =
"Start the traces together with `gpuio trace --start-at HH:MM:SS` on every host.\n\n"
"--pytorch puts a PyTorch profiler trace (prof.export_chrome_trace(), or the\n"
"file Kineto's tensorboard handler writes) on the timeline of the capture that\n"
"traced its process. CPU ops, python functions and user annotations\n"
"(record_function) of a thread gpuio traced go on a track \"PyTorch · tid T\" in\n"
"that process, beside the thread's own; GPU kernels, copies and memsets on a\n"
"process \"PyTorch profiler: GPU D\" with a track per stream; everything else in\n"
"\"PyTorch profiler: pid P\". Category \"pytorch\", the profiler's args kept\n"
"(category, shapes, ...). Clocks: PyTorch 2.x writes REALTIME times\n"
"(baseTimeNanoseconds): converted through the capture's REALTIME/MONOTONIC\n"
"anchor. torch 1.13 writes µs since the profile began: aligned through\n"
"events both saw (no op starts or ends while gpuio saw the thread off its CPU\n"
"or in a system call), the offset and its error bound printed; the merge is\n"
"refused when no offset fits clearly (trace without --no-sched).\n\n"
"examples:\n"
"  gpuio merge node1.gpuio node2.gpuio -o job.pftrace\n"
"  gpuio merge run.gpuio --pytorch prof.json -o run.pftrace\n",
};

/* "host: " for capture i; "host#i: " when another capture names the same host */
int cmd_merge(int argc, char **argv)
{
	struct gpuio_export_opts eo = { .owner_uid = (uid_t)-1, .owner_gid = (gid_t)-1 };
	const char *output;
	int optind, n, err;
	uint64_t events = 0, pt_events = 0;

	merge_output = NULL;
	merge_npytorch = 0;
	optind = opt_parse(&merge_page, argc, argv, NULL);
	if (optind == OPT_HELP)
		return GPUIO_EXIT_OK;
	if (optind == OPT_BAD)
		return GPUIO_EXIT_USAGE;
	output = merge_output;
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

	if (!merge_npytorch) {
		err = gpuio_merge(&argv[optind], n, output, &eo, &events);
		if (err)
			return GPUIO_EXIT_ERROR;
		pr_info("wrote %s: %d captures, %llu %s", output, n, (unsigned long long)events,
			gpuio_export__is_pftrace_name(output) ? "packets" : "events");
		return GPUIO_EXIT_OK;
	}
	err = gpuio_merge_pytorch(&argv[optind], n, merge_pytorch, merge_npytorch, output, &eo,
				  &events, &pt_events);
	if (err)
		return GPUIO_EXIT_ERROR;
	pr_info("wrote %s: %d capture%s and %d PyTorch profiler trace%s (%llu profiler events), "
		"%llu %s", output, n, n == 1 ? "" : "s", merge_npytorch,
		merge_npytorch == 1 ? "" : "s", (unsigned long long)pt_events,
		(unsigned long long)events,
		gpuio_export__is_pftrace_name(output) ? "packets" : "events");
	return GPUIO_EXIT_OK;
}
