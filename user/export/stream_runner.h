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
 * rather than records being lost.
 */
#ifndef GPUIO_STREAM_RUNNER_H
#define GPUIO_STREAM_RUNNER_H
#include <stdint.h>

struct gpuio_stream;
struct stream_runner;

/* Pump s on a new thread. 0 or -errno. */
int stream_runner__start(struct gpuio_stream *s, struct stream_runner **out);
/* Wake it: the capture has new records (optional; it also wakes every 100 ms). */
void stream_runner__kick(struct stream_runner *r);
/* The pump's error since start (0: none); the thread has then stopped. */
int stream_runner__error(struct stream_runner *r);
/* Stop and join; the stream is the caller's again (to close). NULL is fine. */
void stream_runner__stop(struct stream_runner *r);

#endif
