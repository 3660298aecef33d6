// SPDX-License-Identifier: MIT
/*
 * fuzz_report — libFuzzer target for `gpuio report`: arbitrary bytes as a
 * capture (a memfd, with a valid header and GPU records in front of inputs
 * without the magic), reported as text and JSON (to /dev/null) and as an
 * HTML page (to /dev/shm: memory).
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "cmd/commands.h"
#include "fuzz_common.h"

static char out_html[256];

static void cleanup(void)
{
	unlink(out_html);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_init();
	snprintf(out_html, sizeof(out_html), "%s/gpuio-fuzz-%d.html", fuzz_out_dir(), (int)getpid());
	atexit(cleanup);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text_argv[] = { "report", fuzz_in_path, NULL };
	char *json_argv[] = { "report", "--json", fuzz_in_path, NULL };
	char *html_argv[] = { "report", "--html", out_html, fuzz_in_path, NULL };

	fuzz_input(data, size, true);
	cmd_report(2, text_argv);
	cmd_report(3, json_argv);
	cmd_report(4, html_argv);
	return 0;
}
