/* SPDX-License-Identifier: MIT */
/*
 * collector.h — the CUPTI collector's lifecycle (one per process).
 *
 * start: open the side file, load CUPTI, register the MONOTONIC clock first,
 * subscribe, enable the activity kinds, write a GPU_INFO record (ON, or
 * UNAVAILABLE with the reason and stop). Buffers completed by CUPTI are
 * converted and written from CUPTI's thread; a forced flush runs on context
 * destroy and at exit, where a FINAL info record closes the file. A fork
 * child never flushes the parent's data or writes the parent's file; if it
 * produces GPU activity of its own it gets its own file. When the tracer
 * unlinks the side file (its trace is over) the collector disables its
 * activity kinds and unsubscribes; a later attach starts a new session.
 *
 * entry.c calls this from InitializeInjection / gpuio_cupti_attach; tests
 * call it with a substituted cupti_api table and fake clocks.
 */
#ifndef GPUIO_CUPTI_COLLECTOR_H
#define GPUIO_CUPTI_COLLECTOR_H

#include <stdint.h>
#include "cupti_api.h"

struct collector_opts {
	const struct cupti_api *api;  /* NULL: dlopen libcupti */
	const char *dir;              /* side file: dir/cupti.PID.gpuio */
	const char *path;             /* or exactly this file (tests); overrides dir */
	int how;                      /* GPUIO_GPU_HOW_* */
	uint64_t (*mono_now)(void);   /* NULL: CLOCK_MONOTONIC (tests: a fake clock) */
	unsigned flush_ms;            /* 0: $GPUIO_GPU_FLUSH_MS, else 1000 */
	int no_atexit;                /* the caller runs collector__stop itself */
};

/*
 * Returns 0 when collecting; -EALREADY when started before; -ENOENT when
 * there is no output dir (off, silently); -ENODEV when CUPTI is unavailable
 * (the UNAVAILABLE record is written); other -errno when the side file
 * cannot be created. Never exits, never prints unless GPUIO_CUPTI_VERBOSE=1.
 */
int collector__start(const struct collector_opts *o);
/* The exit path: forced flush, then the FINAL record. Idempotent. */
void collector__stop(void);
/*
 * Is a session running (or, in launch mode, has start run)? Attach mode
 * clears it when a session ends: UNAVAILABLE, or the tracer went away.
 */
int collector__started(void);
/*
 * Attach mode: start, or when a session is running whose side file the
 * tracer has unlinked (an idle collector has not noticed), go on in the same
 * CUPTI subscription with a new side file in o->dir. Returns as start.
 */
int collector__attach(const struct collector_opts *o);
/* Running, but its side file is unlinked (lock-free peek; see collector__attach). */
int collector__stale(void);
/* Path of the side file ("" when none). */
const char *collector__path(void);

#endif /* GPUIO_CUPTI_COLLECTOR_H */
