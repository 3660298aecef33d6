// SPDX-License-Identifier: MIT
/* options.c — see options.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmd/options.h"
#include "lib/parse.h"
#include "lib/units.h"

void cmd_opt__capture_for_output(const char *out, char *buf, size_t len)
{
	static const char *const exts[] = { ".json.gz", ".json", ".pftrace.gz", ".pftrace" };
	size_t n = strlen(out);

	for (size_t i = 0; i < ARRAY_SIZE(exts); i++)
		if (parse_str_ends_with(out, exts[i])) {
			n -= strlen(exts[i]);
			break;
		}
	snprintf(buf, len, "%.*s.gpuio", (int)n, out);
}

char *cmd_opt__output_for_capture(const char *capture)
{
	size_t n = strlen(capture);
	char *out;

	if (parse_str_ends_with(capture, ".gpuio"))
		n -= 6;
	out = malloc(n + 6);
	if (out) {
		memcpy(out, capture, n);
		memcpy(out + n, ".json", 6);
	}
	return out;
}
