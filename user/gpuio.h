/* SPDX-License-Identifier: MIT */
/*
 * gpuio.h — what every layer may say to the user: the version and the exit
 * codes (the commands return them; the trace session and the monitor daemon,
 * which run whole commands, do too).
 */
#ifndef GPUIO_H
#define GPUIO_H

#ifndef GPUIO_VERSION
#define GPUIO_VERSION "0.1.0"
#endif

#define GPUIO_EXIT_OK     0
#define GPUIO_EXIT_ERROR  1   /* runtime failure: message printed */
#define GPUIO_EXIT_USAGE  2   /* bad option or argument */

#endif /* GPUIO_H */
