/* SPDX-License-Identifier: MIT */
/*
 * stream_runner.h — `gpuio trace --stream` pumped on a thread of its own.
 *
 * The export reads what the collector has flushed to the capture; on the
 * collector's own loop it took CPU from the drain whenever the node was busy
 * (records lost in the kernel) and could pump only one budget a tick (the
 * stream fell behind and caught up only after the end). Here it pumps until
 * it has caught up, then waits for the next flush; the drain never waits for
 * it. The thread runs at nice +5 against the drain: when the CPUs are short,
 * the drain comes first and the stream falls behind (its lag is counted),
 * rather than records being lost. When the drain runs at a real-time
 * priority (--drain-priority, the default with -a) and the stream falls more
 * than 2 s behind, or the trace has ended with a tail left, the thread takes
 * that priority until it has caught up: on a saturated node, nice +5 got
 * nothing, and the stream wrote its end 20.8 s after the trace's.
 */
#ifndef GPUIO_STREAM_RUNNER_H
#define GPUIO_STREAM_RUNNER_H
#include <stdint.h>

struct gpuio_stream;
struct stream_runner;

struct stream_runner_stats {
	uint64_t rt_ns;         /* time spent at the real-time priority */
	uint64_t rt_times;      /* how often it took it */
};

/* Pump s on a new thread; rt_prio: the drain's SCHED_FIFO priority, 0 none. */
int stream_runner__start(struct gpuio_stream *s, int rt_prio, struct stream_runner **out);
/* Wake it: the capture has new records (optional; it also wakes every 100 ms). */
void stream_runner__kick(struct stream_runner *r);
/* The pump's error since start (0: none); the thread has then stopped. */
int stream_runner__error(struct stream_runner *r);
/* Stop and join; the stream is the caller's again (to close). NULL is fine. */
void stream_runner__stop(struct stream_runner *r);
/* The trace is over: catch up with the capture, then stop as above. */
void stream_runner__finish(struct stream_runner *r, struct stream_runner_stats *st);

#endif
