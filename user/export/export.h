/* SPDX-License-Identifier: MIT */
/*
 * export.h — capture (run.gpuio) -> Chrome trace JSON or Perfetto protobuf.
 *
 * JSON is the array form, one event per line (schema at the top of
 * json_sink.c); Perfetto's native format is a stream of TracePackets
 * (pftrace_sink.c). Both render the same timeline model (timeline/timeline.h)
 * through the same walk (timeline/sink.h); `.gz` gzipped (decided by the output name), written to
 * OUT.tmp and renamed into place (output.h) so a failed export never leaves
 * half a file under the real name.
 */
#ifndef GPUIO_EXPORT_H
#define GPUIO_EXPORT_H

#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>
#include "timeline/timeline.h"

struct gpuio_export_opts {
	/* chown the output to these when owner_uid != (uid_t)-1 (sudo's caller) */
	uid_t owner_uid;
	gid_t owner_gid;
	/* leave out the report's findings (steps, GPU idle gaps: export/findings_src.c) */
	bool no_findings;
	/* draw them even past the size where the report's pass would hold more
	 * memory than the export (FINDINGS_AUTO_MAX scheduler records) */
	bool findings_always;
};

/* What an export wrote: what the walk counted, and the bytes. */
struct gpuio_export_stats {
	struct tl_stats walk;
	__u64 output_bytes;     /* uncompressed output bytes */
};

/*
 * Export capture_path to out_path: ".pftrace[.gz]" -> Perfetto protobuf,
 * anything else (".json", ".json.gz"; "-" = stdout, plain) -> Chrome JSON.
 * Returns 0 or -errno; every failure is reported by one pr_err line. A
 * capture cut short is exported up to its last whole record (with a
 * warning); a corrupt one is refused. opts and st may be NULL.
 */
int gpuio_export(const char *capture_path, const char *out_path,
		 const struct gpuio_export_opts *opts, struct gpuio_export_stats *st);
/*
 * Loaded models (gpuio merge: several captures on one timeline) to out_path,
 * the format chosen by its name as above. *events: events written (JSON) or
 * TracePackets (protobuf); *bytes: uncompressed output bytes. Either may be NULL.
 */
int gpuio_export_models(struct tl_model *const *models, int n, const char *out_path,
			const struct gpuio_export_opts *opts, uint64_t *events, uint64_t *bytes);
/* PyTorch profiler traces placed on the captures' timeline (export/kineto.h). */
struct kin_overlay;
struct gpuio_export_extra {
	struct kin_overlay *ov;
	size_t n;
	uint64_t events;        /* the profiler's events written (set by the export) */
	uint32_t next_pid, next_tid;    /* the export's, between pieces */
};
/* The same, with extra (may be NULL) after the captures. */
int gpuio_export_models_ex(struct tl_model *const *models, int n, const char *out_path,
			   const struct gpuio_export_opts *opts, struct gpuio_export_extra *extra,
			   uint64_t *events, uint64_t *bytes);

/* At most this many captures in a merge (pid offsets stay below the synthetic ranges). */
#define GPUIO_MERGE_MAX 50
/*
 * Several hosts' captures on one timeline in output (export/merge.c: the
 * earliest-booted host's clock, pids moved by (i + 1) * 10,000,000, names
 * prefixed by host). *events: what gpuio_export_models() wrote. 0 or -errno (said).
 */
int gpuio_merge(char *const *caps, int n, const char *output, const struct gpuio_export_opts *eo,
		uint64_t *events);
/* At most this many PyTorch profiler traces in a merge. */
#define GPUIO_MERGE_PYTORCH_MAX 16
/*
 * The same, with PyTorch profiler traces (Kineto's Chrome JSON) on the
 * captures' timeline (export/kineto.h: each goes with the capture that ran
 * its process, its clock aligned and the error printed). *pt_events: the
 * profiler's events written.
 */
int gpuio_merge_pytorch(char *const *caps, int n, char *const *traces, int ntraces,
			const char *output, const struct gpuio_export_opts *eo, uint64_t *events,
			uint64_t *pt_events);

/* true when name ends in ".gz" (gzip output) */
bool gpuio_export__is_gz(const char *name);
/* true when name ends in ".json" or ".json.gz" */
bool gpuio_export__is_json_name(const char *name);
/* true when name ends in ".pftrace" or ".pftrace.gz" */
bool gpuio_export__is_pftrace_name(const char *name);
/* either of the two */
bool gpuio_export__is_output_name(const char *name);

#endif /* GPUIO_EXPORT_H */
