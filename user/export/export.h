/* SPDX-License-Identifier: MIT */
/*
 * export.h — capture (run.gpuio) -> Chrome trace JSON or Perfetto protobuf.
 *
 * JSON is the array form, one event per line (schema at the top of
 * export_json.c); Perfetto's native format is a stream of TracePackets
 * (export_pftrace.c). Both render the same model (export_model.h), `.gz`
 * gzipped (decided by the output name), written to OUT.tmp and renamed into
 * place so a failed export never leaves half a file under the real name.
 */
#ifndef GPUIO_EXPORT_H
#define GPUIO_EXPORT_H

#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>

struct gpuio_export_opts {
	/* chown the output to these when owner_uid != (uid_t)-1 (sudo's caller) */
	uid_t owner_uid;
	gid_t owner_gid;
};

struct gpuio_export_stats {
	__u64 records;          /* whole records read from the capture */
	__u64 events;           /* JSON events written (metadata included); for
				   protobuf: TracePackets */
	__u64 vfs;              /* VFS slices */
	__u64 block;            /* block request slices */
	__u64 flows;            /* VFS -> block arrows (block slices bound) */
	__u64 dangling_flows;   /* block requests naming a VFS call not in the capture */
	__u64 unresolved_paths; /* VFS calls whose file had no PATH record */
	__u64 unresolved_block_paths; /* block requests naming an unnamed inode */
	__u64 processes, threads, disks, lanes;
	__u64 truncated_bytes;  /* bytes of a partial record at the end (cut short) */
	__u64 output_bytes;     /* uncompressed output bytes */
	bool capture_complete;  /* final STATS record present and nothing cut */
	bool drops_known;       /* a STATS record was present */
	__u64 dropped;          /* valid when drops_known */
};

/*
 * Export capture_path to out_path (".json" or ".json.gz"; "-" = stdout,
 * plain). Returns 0 or -errno; every failure is reported by one pr_err line.
 * A capture cut short is exported up to its last whole record (with a
 * warning); a corrupt one is refused. opts and st may be NULL.
 */
int gpuio_export_json(const char *capture_path, const char *out_path,
		      const struct gpuio_export_opts *opts, struct gpuio_export_stats *st);

/* The same capture as Perfetto protobuf (".pftrace" or ".pftrace.gz"). */
int gpuio_export_pftrace(const char *capture_path, const char *out_path,
			 const struct gpuio_export_opts *opts, struct gpuio_export_stats *st);
/* By the output name: .pftrace[.gz] -> protobuf, anything else -> JSON. */
int gpuio_export(const char *capture_path, const char *out_path,
		 const struct gpuio_export_opts *opts, struct gpuio_export_stats *st);

/* true when name ends in ".gz" (gzip output) */
bool gpuio_export__is_gz(const char *name);
/* true when name ends in ".json" or ".json.gz" */
bool gpuio_export__is_json_name(const char *name);
/* true when name ends in ".pftrace" or ".pftrace.gz" */
bool gpuio_export__is_pftrace_name(const char *name);
/* either of the two */
bool gpuio_export__is_output_name(const char *name);

#endif /* GPUIO_EXPORT_H */
