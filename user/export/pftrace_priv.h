/* SPDX-License-Identifier: MIT */
/*
 * pftrace_priv.h — what pftrace.c (TracePackets, interning, tracks, slices)
 * lends the other packet writers of the same trace, pftrace_sched.c (ftrace
 * sched events) and pftrace_prof.c (CPU samples), and no exporter may use.
 */
#ifndef GPUIO_EXPORT_PFTRACE_PRIV_H
#define GPUIO_EXPORT_PFTRACE_PRIV_H

#include "export/pftrace.h"
#include "lib/pb_writer.h"

struct pftrace_ftrace;
struct pftrace_prof;

/* A whole TracePacket on the current sequence/machine holding body as field. */
void pftrace__raw_packet(struct pftrace *p, uint32_t field, const struct pb_buf *body);
/* s as valid UTF-8 (s itself, or a repaired copy valid until the next call). */
const char *pftrace__utf8(struct pftrace *p, const char *s, size_t n, size_t *out_len);
/* BOOTTIME - MONOTONIC of the current clock snapshot. */
int64_t pftrace__boot_minus_mono(const struct pftrace *p);
/* The writer's slot for its sched-event state (created by pftrace_sched.c). */
struct pftrace_ftrace **pftrace__ftrace(struct pftrace *p);
/* A whole TracePacket whose fields are pkt (any sequence: the caller's). */
void pftrace__put_packet(struct pftrace *p, const struct pb_buf *pkt);
/* TracePacket.machine_id of what follows (0: the first host, no id). */
uint32_t pftrace__machine_id(const struct pftrace *p);
/* The writer's slot for its CPU samples' state (created by pftrace_prof.c). */
struct pftrace_prof **pftrace__prof(struct pftrace *p);
void pftrace_prof__free(struct pftrace_prof *f);
/* Record an error (the first one sticks). */
void pftrace__fail(struct pftrace *p, int err);
void pftrace_ftrace__free(struct pftrace_ftrace *f);

#endif /* GPUIO_EXPORT_PFTRACE_PRIV_H */
