/* SPDX-License-Identifier: MIT */
/*
 * drain_prio.h — the collector's loop at a real-time priority while it
 * drains.
 *
 * On a node whose CPUs are all busy (hundreds of runnable tasks), a drain at
 * the default priority got its turn too late and the kernel dropped most
 * records (88% on 2 cores). SCHED_FIFO at a low priority puts the drain
 * before every ordinary task whenever it has records to take, as perf's
 * --realtime does; it sleeps on the ring buffer otherwise (woken once per
 * 256 KiB). SCHED_RESET_ON_FORK: nothing it starts inherits the priority, and
 * the export after the trace runs at the usual one again. Only for -a by
 * default: tracing one PyTorch DataLoader on 2 busy cores, the real-time drain
 * slowed it more (median of 7 paired rounds 20% against 9%), its wake-ups
 * taking the CPU from the loader's processes at once.
 */
#ifndef GPUIO_DRAIN_PRIO_H
#define GPUIO_DRAIN_PRIO_H
#include <stddef.h>

#define DRAIN_PRIO_DEFAULT 1        /* with -a (gpuio trace); a process tree: 0 */
#define DRAIN_PRIO_UNSET   1000u

/* The calling thread at SCHED_FIFO prio (1-99). 0 or -errno (why says). */
int drain_prio__raise(int prio, char *why, size_t len);
/* Back to SCHED_OTHER. */
void drain_prio__restore(void);

#endif
