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

/* Chrome trace JSON, array form (json_sink.c); ".gz" gzipped. */
int json_sink__export(struct tl_model *const *models, int n, const char *out_path,
		      const struct gpuio_export_opts *opts, uint64_t *events, uint64_t *bytes);
/* Perfetto TracePackets (pftrace_sink.c); ".gz" gzipped. */
int pftrace_sink__export(struct tl_model *const *models, int n, const char *out_path,
			 const struct gpuio_export_opts *opts, uint64_t *events, uint64_t *bytes);
/* Capture header h's host as Perfetto machine host (SystemInfo); clocks c on a change. */
struct pftrace;
struct pftrace_clocks;
int pftrace_sink__machine(struct pftrace *p, const struct gpuio_cap_header *h, uint32_t host,
			  const struct pftrace_clocks *c);

#endif /* GPUIO_EXPORT_FORMATS_H */
