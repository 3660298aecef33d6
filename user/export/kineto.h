/* SPDX-License-Identifier: MIT */
/*
 * kineto.h — a PyTorch profiler trace (Kineto's Chrome trace JSON, or the
 * legacy autograd profiler's export of Debian's torch 1.13) read for
 * `gpuio merge --pytorch` (kineto.c), aligned to a capture's clock
 * (kineto_align.c) and laid out on the merged timeline beside gpuio's own
 * tracks (kineto_emit.c).
 *
 * What the two formats hold:
 *  - PyTorch 2.x (Kineto): {"schemaVersion", "deviceProperties",
 *    "baseTimeNanoseconds", "traceEvents": [...], "traceName", ...}. ts and
 *    dur in µs (3 decimals), ts relative to baseTimeNanoseconds, which is
 *    CLOCK_REALTIME ns (Kineto's clock is the system clock); older 2.x
 *    releases wrote no base and absolute µs since the epoch. CPU events
 *    (cat cpu_op, user_annotation, python_function, cuda_runtime,
 *    cuda_driver, ...) have the process's pid and the Linux tid of the
 *    thread; GPU events (kernel, gpu_memcpy, gpu_memset,
 *    gpu_user_annotation) have the device as pid and the stream as tid.
 *  - torch 1.13's legacy export (what Debian's CPU-only build writes): a
 *    bare array of {"name", "ph": "X", "ts", "dur", "tid", "pid": "CPU
 *    functions", "args": {}}, integer µs since the profile started (no
 *    base), tid the profiler's own thread number (1, 2, ...), no
 *    categories. Its clock must be found from events gpuio saw too.
 */
#ifndef GPUIO_EXPORT_KINETO_H
#define GPUIO_EXPORT_KINETO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "capture/capture.h"
#include "lib/json_read.h"
#include "timeline/timeline.h"

enum kin_kind { KIN_CPU, KIN_GPU };

struct kin_event {
	int64_t ts;             /* ns on the trace's clock (see struct kin_trace) */
	uint64_t dur;           /* ns */
	const char *name;       /* NUL-terminated (decoded JSON) */
	const char *cat;        /* the trace's category ("" none) */
	const struct json_node *args;   /* the event's "args" object, or NULL */
	int64_t pid, tid;       /* as written; a string pid/tid: pid_str/tid_str */
	const char *pid_str, *tid_str;  /* NULL: a number */
	uint8_t kind;           /* enum kin_kind */
	bool instant;           /* ph "i"/"I" (dur 0) */
	uint32_t order;         /* in the file */
};

/* A process_name / thread_name metadata event of the trace. */
struct kin_name {
	int64_t pid, tid;       /* tid -1: a process name */
	const char *pid_str;
	const char *name;
};

struct kin_trace {
	char *path;
	char *text;             /* the file, decompressed */
	size_t text_len;
	struct json_doc *doc;
	struct kin_event *ev;
	size_t n, cap;
	struct kin_name *names;
	size_t nnames, cnames;
	bool legacy;            /* torch's autograd profiler export (bare array, "CPU functions") */
	/* clock: absolute: realtime ns = base_ns + ts; else ts is ns since an
	 * unknown start (the profile's) */
	bool absolute;
	int64_t base_ns;
	int64_t quantum_ns;     /* the resolution the times were written in (1000: whole µs) */
	int64_t t_min, t_max;   /* the earliest start and latest end of the events */
	uint64_t ncpu, ngpu;
	size_t skipped;         /* events that are neither slices nor instants (flows, counters, ...) */
};

/*
 * Read path (plain or gzip JSON). 0, or -errno with one pr_err line that
 * names the file and what is wrong: unreadable, not JSON (where), not a
 * PyTorch profiler trace, no events.
 */
int kin_trace__load(const char *path, struct kin_trace **out);
void kin_trace__free(struct kin_trace *t);

/* How a trace's clock maps onto a capture's MONOTONIC clock: mono = ts + offset. */
struct kin_align {
	int64_t offset;
	int64_t err_ns;         /* ± bound of the offset */
	const char *how;        /* "absolute" (the trace's base through the capture's
				   REALTIME/MONOTONIC anchor) or "events" (matched) */
	/* the capture's thread the trace's CPU events were matched to (events),
	 * or that their pid/tid name (absolute); 0: none */
	uint32_t pid, tid;
	int64_t trace_tid;      /* the trace's tid that was matched (events) */
	uint64_t used;          /* events of gpuio's that fixed the offset */
	uint64_t misfit;        /* of them, those the chosen offset contradicts */
};

/*
 * Find t's clock on the capture's: absolute traces through the header's
 * anchor; the others through the intervals in which gpuio saw the trace's
 * thread off its CPU or in a system call (an op's start and end are
 * written by the thread while it runs in user space: none can fall inside
 * one). Prints what it chose and its error bound; 0, or -EINVAL (said)
 * when it cannot align, or the events fall outside the capture. *th: the
 * capture's threads (the caller frees th->ids).
 */
/* The threads of a capture (pid << 32 | tid) seen in its records, sorted. */
struct kin_threads {
	uint64_t *ids;
	size_t n;
};
int kin_align(const struct kin_trace *t, const char *capture_path, struct kin_align *a,
	      struct kin_threads *th);
bool kin_threads__has(const struct kin_threads *th, uint32_t pid, uint32_t tid);
bool kin_threads__has_pid(const struct kin_threads *th, uint32_t pid);

/* One trace placed on one capture of a merge. */
struct kin_overlay {
	struct kin_trace *t;
	struct kin_align a;
	struct tl_model *m;     /* the capture it goes with */
	struct kin_threads th;  /* that capture's threads */
	uint32_t index;         /* among the merge's traces */
};

/* The earliest timestamp o writes, on m's output clock (tl_ts). */
uint64_t kin_overlay__first(const struct kin_overlay *o);

struct tl_sink;
/*
 * Lay o out into s (s->m is set to o->m): CPU events on tracks "PyTorch ·
 * tid T" of their process, GPU events on "PyTorch profiler: GPU D" with a
 * track per stream. ids: where o's synthetic pids and lane tids start
 * (advanced past what it used: several traces stay apart). *events: the
 * profiler's events written. 0 or -errno.
 */
struct kin_ids {
	uint32_t pid, tid;
};
int kin_overlay__emit(struct kin_overlay *o, struct tl_sink *s, struct kin_ids *ids,
		      uint64_t *events);

/* Synthetic ids of the profiler's tracks (beside timeline.h's ranges). */
#define KIN_PID_BASE 0x68000000u
#define KIN_TID_BASE 0x78000000u

#endif /* GPUIO_EXPORT_KINETO_H */
