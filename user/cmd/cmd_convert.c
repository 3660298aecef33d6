// SPDX-License-Identifier: MIT
/*
 * cmd_convert.c — `gpuio convert CAPTURE -o OUT.{json,pftrace}[.gz]`:
 * re-export a capture as Chrome JSON or Perfetto protobuf.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmd/commands.h"
#include "cmd/options.h"
#include "export/export.h"
#include "trace/launch.h"
#include "lib/log.h"
#include "lib/opts.h"

static const char *conv_output;
static bool conv_quiet;
static bool conv_no_findings;
static bool conv_findings;

static const struct opt convert_opts[] = {
	OPT_GROUP("options:"),
	OPT_STRING('o', "output", &conv_output, "FILE",
		   ".json or .pftrace, + .gz for gzip (default: CAPTURE with\n"
		   ".gpuio replaced by .json); - writes plain JSON to stdout"),
	OPT_BOOL(0, "no-findings", &conv_no_findings,
		 "leave out the report's findings (the loops' steps and the GPU\n"
		 "idle gaps as tracks): the export skips the report's pass"),
	OPT_BOOL(0, "findings", &conv_findings,
		 "draw them whatever the capture's size (past 4 M scheduler\n"
		 "records they are left out: the report's pass would hold the\n"
		 "thread states beside the export's model)"),
	OPT_BOOL('q', "quiet", &conv_quiet, "print errors only"),
	OPT_END(),
};

static const struct opt_cmd convert_page = {
	.name = "convert",
	.usage = "usage: gpuio convert CAPTURE [-o OUTPUT]",
	.about =
"Export a capture (.gpuio, written by `gpuio trace`) to Chrome trace JSON, for\n"
"ui.perfetto.dev or chrome://tracing, or to Perfetto's native protobuf format\n"
"(about half the size, no 512 MB JSON limit, faster to load).\n",
	.opts = convert_opts,
	.after =
"A capture cut short (killed tracer, full disk) is exported up to its last whole\n"
"record, with a warning. Under sudo the output belongs to the invoking user.\n\n"
"examples:\n"
"  gpuio convert run.gpuio -o run.json.gz\n"
"  gpuio convert run.gpuio -o run.pftrace\n"
"  gpuio convert run.gpuio -o - | jq length\n",
};

int cmd_convert(int argc, char **argv)
{
	struct gpuio_export_opts eo = { .owner_uid = (uid_t)-1, .owner_gid = (gid_t)-1 };
	struct gpuio_export_stats st;
	const char *output, *capture;
	char *derived = NULL;
	bool quiet;
	int optind, err;

	conv_output = NULL;
	conv_quiet = false;
	conv_no_findings = false;
	conv_findings = false;
	optind = opt_parse(&convert_page, argc, argv, NULL);
	if (optind == OPT_HELP)
		return GPUIO_EXIT_OK;
	if (optind == OPT_BAD)
		return GPUIO_EXIT_USAGE;
	output = conv_output;
	quiet = conv_quiet;
	if (optind >= argc) {
		pr_err("convert: which capture? usage: gpuio convert CAPTURE [-o OUTPUT.json]");
		return GPUIO_EXIT_USAGE;
	}
	if (argc - optind > 1) {
		pr_err("convert: one capture at a time (got '%s' and '%s'); the output goes after -o",
		       argv[optind], argv[optind + 1]);
		return GPUIO_EXIT_USAGE;
	}
	capture = argv[optind];
	if (!output) {
		derived = cmd_opt__output_for_capture(capture);
		if (!derived) {
			pr_err("out of memory");
			return GPUIO_EXIT_ERROR;
		}
		output = derived;
	}
	if (strcmp(output, "-") && !gpuio_export__is_output_name(output)) {
		pr_err("convert: -o %s: the output name must end in .json or .json.gz (Chrome "
		       "JSON), or .pftrace or .pftrace.gz (Perfetto protobuf)", output);
		free(derived);
		return GPUIO_EXIT_USAGE;
	}
	if (quiet && gpuio_log_verbosity > GPUIO_LOG_ERROR)
		gpuio_log_verbosity = GPUIO_LOG_ERROR;

	/* root under sudo: the file belongs to whoever ran sudo */
	gpuio_sudo_ids(&eo.owner_uid, &eo.owner_gid);
	eo.no_findings = conv_no_findings;
	eo.findings_always = conv_findings;
	err = gpuio_export(capture, output, &eo, &st);
	if (err) {
		free(derived);
		return GPUIO_EXIT_ERROR;
	}
	if (strcmp(output, "-")) {
		char drops[64];

		if (st.walk.drops_known)
			snprintf(drops, sizeof(drops), "%llu dropped", (unsigned long long)st.walk.dropped);
		else
			snprintf(drops, sizeof(drops), "drops unknown (no stats record)");
		char found[96] = "";

		if (st.walk.steps || st.walk.gaps)
			snprintf(found, sizeof(found), ", %llu loop steps, %llu GPU idle gaps",
				 (unsigned long long)st.walk.steps, (unsigned long long)st.walk.gaps);
		pr_info("wrote %s: %llu %s (%llu vfs, %llu block, %llu flows%s), "
			"%llu unresolved paths, %s%s", output, (unsigned long long)st.walk.events,
			gpuio_export__is_pftrace_name(output) ? "packets" : "events",
			(unsigned long long)st.walk.vfs, (unsigned long long)st.walk.block,
			(unsigned long long)st.walk.flows, found,
			(unsigned long long)st.walk.unresolved_paths,
			drops, st.walk.capture_complete ? "" : "; the capture is incomplete");
	}
	free(derived);
	return GPUIO_EXIT_OK;
}
