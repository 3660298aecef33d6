// SPDX-License-Identifier: MIT
/*
 * fuzz_export — libFuzzer target for the model and both exporters: arbitrary
 * bytes as a capture (a memfd), exported to Chrome JSON (plain or gzip, by
 * the input's parity) and to Perfetto protobuf, then `gpuio info` in text
 * and JSON. Inputs without the capture magic get a valid header and a few
 * valid GPU records in front, so every input goes through the GPU layout
 * (dedup, correlation, nesting) with whatever the mutations add. Outputs go
 * to a tmpfs directory (/dev/shm: memory, never a disk), stdout to /dev/null.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "cmd/commands.h"
#include "export/export.h"
#include "fuzz_common.h"

static char out_json[256], out_gz[256], out_pb[256];

static void cleanup(void)
{
	unlink(out_json);
	unlink(out_gz);
	unlink(out_pb);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = fuzz_out_dir();

	fuzz_init();
	snprintf(out_json, sizeof(out_json), "%s/gpuio-fuzz-%d.json", dir, (int)getpid());
	snprintf(out_gz, sizeof(out_gz), "%s/gpuio-fuzz-%d.json.gz", dir, (int)getpid());
	snprintf(out_pb, sizeof(out_pb), "%s/gpuio-fuzz-%d.pftrace", dir, (int)getpid());
	atexit(cleanup);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *info_argv[] = { "info", fuzz_in_path, NULL };
	char *info_json_argv[] = { "info", "--json", fuzz_in_path, NULL };
	struct gpuio_export_stats st;

	fuzz_input(data, size, true);
	gpuio_export(fuzz_in_path, size & 1 ? out_gz : out_json, NULL, &st);
	gpuio_export(fuzz_in_path, out_pb, NULL, &st);
	cmd_info(2, info_argv);
	cmd_info(3, info_json_argv);
	return 0;
}
