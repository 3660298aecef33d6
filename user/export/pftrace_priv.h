/* SPDX-License-Identifier: MIT */
/*
 * pftrace_priv.h — what pftrace.c (TracePackets, interning, tracks, slices)
 * lends the other packet writer of the same trace, pftrace_sched.c (ftrace
 * sched events), and no exporter may use.
 */
#ifndef GPUIO_EXPORT_PFTRACE_PRIV_H
#define GPUIO_EXPORT_PFTRACE_PRIV_H

#include "export/pftrace.h"
#include "lib/pb_writer.h"

struct pftrace_ftrace;

/* A whole TracePacket on the current sequence/machine holding body as field. */
void pftrace__raw_packet(struct pftrace *p, uint32_t field, const struct pb_buf *body);
/* s as valid UTF-8 (s itself, or a repaired copy valid until the next call). */
const char *pftrace__utf8(struct pftrace *p, const char *s, size_t n, size_t *out_len);
/* BOOTTIME - MONOTONIC of the current clock snapshot. */
int64_t pftrace__boot_minus_mono(const struct pftrace *p);
/* The writer's slot for its sched-event state (created by pftrace_sched.c). */
struct pftrace_ftrace **pftrace__ftrace(struct pftrace *p);
/* Record an error (the first one sticks). */
void pftrace__fail(struct pftrace *p, int err);
void pftrace_ftrace__free(struct pftrace_ftrace *f);

#endif /* GPUIO_EXPORT_PFTRACE_PRIV_H */
