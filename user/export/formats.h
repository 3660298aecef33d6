/* SPDX-License-Identifier: MIT */
/*
 * formats.h — the output formats export.c dispatches to: each renders
 * loaded models, one after the other on one timeline, through the one walk
 * (sink.h) into its own writer. *events: events (JSON) or TracePackets
 * (protobuf) written; *bytes: uncompressed output bytes.
 */
#ifndef GPUIO_EXPORT_FORMATS_H
#define GPUIO_EXPORT_FORMATS_H

#include "export/export.h"

/* Chrome trace JSON, array form (json_sink.c); ".gz" gzipped. extra: NULL, or
 * what goes on the timeline after the captures (gpuio_export_extra__walk). */
int json_sink__export(struct tl_model *const *models, int n, const char *out_path,
		      const struct gpuio_export_opts *opts, const struct gpuio_export_extra *extra,
		      uint64_t *events, uint64_t *bytes);
/* Perfetto TracePackets (pftrace_sink.c); ".gz" gzipped. */
int pftrace_sink__export(struct tl_model *const *models, int n, const char *out_path,
			 const struct gpuio_export_opts *opts,
			 const struct gpuio_export_extra *extra, uint64_t *events,
			 uint64_t *bytes);
struct tl_sink;
/*
 * The extra's k-th piece into s (s->m becomes its capture's model). 0,
 * -errno; 1: no k-th piece. The caller switches Perfetto machines between
 * pieces (gpuio_export_extra__model).
 */
int gpuio_export_extra__walk(const struct gpuio_export_extra *x, size_t k, struct tl_sink *s);
struct tl_model *gpuio_export_extra__model(const struct gpuio_export_extra *x, size_t k);
/* Capture header h's host as Perfetto machine host (SystemInfo); clocks c on a change. */
struct pftrace;
struct pftrace_clocks;
int pftrace_sink__machine(struct pftrace *p, const struct gpuio_cap_header *h, uint32_t host,
			  const struct pftrace_clocks *c);

#endif /* GPUIO_EXPORT_FORMATS_H */
