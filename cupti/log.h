/* SPDX-License-Identifier: MIT */
/*
 * log.h — the collector lives inside someone else's program: it never
 * writes to stdout, and to stderr only when GPUIO_CUPTI_VERBOSE=1.
 */
#ifndef GPUIO_CUPTI_LOG_H
#define GPUIO_CUPTI_LOG_H

void cupti_log__init(void);
void cupti_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* GPUIO_CUPTI_LOG_H */
