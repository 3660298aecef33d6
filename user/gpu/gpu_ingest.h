/* SPDX-License-Identifier: MIT */
/*
 * gpu_ingest.h — bring the CUPTI collectors' side files into the capture.
 *
 * Each traced process that runs the collector (cupti/, launched through
 * CUDA_INJECTION64_PATH or injected by ptrace) writes its GPU records to
 * DIR/cupti.PID*.gpuio, a small capture of its own. The tracer owns DIR
 * (created beside the capture), tails every file there on each tick and at
 * the end, and appends whole GPU records to the main capture, so exporters,
 * `--stream` and `report` see one file. The files come from untrusted
 * processes: only GPU record types are taken, sizes are checked, and pid is
 * forced to the file's writer.
 */
#ifndef GPUIO_GPU_INGEST_H
#define GPUIO_GPU_INGEST_H

#include <stdbool.h>
#include <sys/types.h>
#include "capture/capture.h"

struct gpu_ingest;

/*
 * Create DIR (mode 01733: collectors running as any user may create their
 * file there, none may list or replace another's) and the ingester.
 * Returns 0 or -errno.
 */
int gpu_ingest__open(const char *dir, struct gpu_ingest **out);
const char *gpu_ingest__dir(const struct gpu_ingest *g);
/*
 * Append the GPU records written since the last call. Returns the number of
 * records appended or -errno (capture write error).
 */
long gpu_ingest__poll(struct gpu_ingest *g, struct gpuio_cap_writer *w);
/*
 * Called when a collector's state changes (GPUIO_GPU_ON, GPUIO_GPU_UNAVAILABLE;
 * not FINAL), from inside gpu_ingest__poll.
 */
typedef void (*gpu_ingest_state_fn)(void *ctx, pid_t pid, const struct gpuio_gpu_info *info);
void gpu_ingest__on_state(struct gpu_ingest *g, gpu_ingest_state_fn fn, void *ctx);
/* Totals for the end-of-trace summary. */
unsigned long long gpu_ingest__records(const struct gpu_ingest *g);
unsigned gpu_ingest__files(const struct gpu_ingest *g);
/*
 * The last poll has been made. With remove_files, unlink the side files
 * (their records are in the capture; a live injected collector takes the
 * unlink as its signal to stop) and DIR; files rejected as corrupt are kept.
 * Warns about bytes written after the last poll. Frees g.
 */
void gpu_ingest__close(struct gpu_ingest *g, bool remove_files);

#endif /* GPUIO_GPU_INGEST_H */
