/* SPDX-License-Identifier: MIT */
/*
 * output.h — an export's output file: OUT.tmp created (never through a
 * symlink, never over a capture being read), chowned per opts (sudo's
 * caller), renamed into place by exp_output__commit() when whole, so a
 * failed export never leaves half a file under the real name.
 */
#ifndef GPUIO_EXPORT_OUTPUT_H
#define GPUIO_EXPORT_OUTPUT_H

#include "export/export.h"

struct exp_output {
	const char *path;
	char *tmp;
	int fd;
};

int exp_output__open(struct exp_output *o, const char *out_path, const char *const *captures,
		     int ncaptures, const struct gpuio_export_opts *opts);
int exp_output__commit(struct exp_output *o);
void exp_output__abort(struct exp_output *o);
/* What to do about a failed write, to append to its message ("" when nothing helps). */
const char *exp_write_hint(int err);

#endif /* GPUIO_EXPORT_OUTPUT_H */
