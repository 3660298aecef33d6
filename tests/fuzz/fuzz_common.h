/* SPDX-License-Identifier: MIT */
/*
 * fuzz_common.h — what the fuzz targets share: the input as a capture in a
 * memfd (/proc/self/fd/N, no file system), a valid header put in front of
 * inputs without the capture magic, and optionally a few valid GPU records
 * after it, so that mutations spend their time on records.
 */
#ifndef GPUIO_FUZZ_COMMON_H
#define GPUIO_FUZZ_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

extern char fuzz_in_path[64];

/* Once, from LLVMFuzzerInitialize: quiet logs, stdout to /dev/null, the memfd. */
void fuzz_init(void);
/*
 * The input as the capture file. Without the capture magic it gets a made-up
 * header: version 1 (records verbatim, after GPU records when gpu_prefix), or
 * version 2 when the input starts with FUZZ_V2_MARK (frames follow it).
 */
#define FUZZ_V2_MARK 0xF2
void fuzz_input(const uint8_t *data, size_t size, bool gpu_prefix);
/* Where outputs that must be files go: $TMPDIR, else /dev/shm (tmpfs: memory), else /tmp. */
const char *fuzz_out_dir(void);

#endif /* GPUIO_FUZZ_COMMON_H */
