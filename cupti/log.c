// SPDX-License-Identifier: MIT
/* log.c — verbose-only diagnostics on stderr (see log.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "log.h"

static int verbose = -1;

void cupti_log__init(void)
{
	const char *v = getenv("GPUIO_CUPTI_VERBOSE");

	verbose = v && strcmp(v, "1") == 0;
}

void cupti_log(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	if (verbose < 0)
		cupti_log__init();
	if (!verbose)
		return;
	n = snprintf(buf, sizeof(buf), "gpuio-cupti[%d]: ", (int)getpid());
	va_start(ap, fmt);
	vsnprintf(buf + n, sizeof(buf) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	n = (int)strlen(buf);
	buf[n++] = '\n';
	/* one write(): lines from several threads do not interleave */
	if (write(STDERR_FILENO, buf, (size_t)n) < 0)
		return;
}
