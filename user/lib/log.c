// SPDX-License-Identifier: MIT
/* log.c — messages to stderr, prefixed "gpuio: ", filtered by verbosity. */
#include <stdarg.h>
#include <stdio.h>
#include "lib/log.h"

int gpuio_log_verbosity = GPUIO_LOG_INFO;

void gpuio_log(enum gpuio_log_level level, const char *fmt, ...)
{
	va_list ap;

	if ((int)level > gpuio_log_verbosity)
		return;
	fputs(level == GPUIO_LOG_ERROR ? "gpuio: error: " :
	      level == GPUIO_LOG_WARN ? "gpuio: warning: " : "gpuio: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
