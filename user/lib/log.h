/* SPDX-License-Identifier: MIT */
/* log.h — the one logging hook: every message gpuio prints goes through here. */
#ifndef GPUIO_LOG_H
#define GPUIO_LOG_H

enum gpuio_log_level { GPUIO_LOG_ERROR, GPUIO_LOG_WARN, GPUIO_LOG_INFO, GPUIO_LOG_DEBUG };

extern int gpuio_log_verbosity;   /* messages above this level are dropped */

void gpuio_log(enum gpuio_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define pr_err(...)   gpuio_log(GPUIO_LOG_ERROR, __VA_ARGS__)
#define pr_warn(...)  gpuio_log(GPUIO_LOG_WARN, __VA_ARGS__)
#define pr_info(...)  gpuio_log(GPUIO_LOG_INFO, __VA_ARGS__)
#define pr_debug(...) gpuio_log(GPUIO_LOG_DEBUG, __VA_ARGS__)

#endif
