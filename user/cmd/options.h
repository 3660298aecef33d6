/* SPDX-License-Identifier: MIT */
/*
 * options.h — what several commands share on their command lines: default
 * output names. Numbers with units are in lib/parse.h.
 */
#ifndef GPUIO_CMD_OPTIONS_H
#define GPUIO_CMD_OPTIONS_H

#include <stddef.h>

/* run.json / run.json.gz / run.pftrace[.gz] -> run.gpuio (the capture beside an output) */
void cmd_opt__capture_for_output(const char *out, char *buf, size_t len);
/* run.gpuio -> run.json; anything else -> NAME.json (malloc'd, NULL when out of memory) */
char *cmd_opt__output_for_capture(const char *capture);

#endif /* GPUIO_CMD_OPTIONS_H */
