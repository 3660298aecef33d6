/* SPDX-License-Identifier: MIT */
/*
 * stream.h — `gpuio trace --stream`: the Perfetto protobuf export written
 * while tracing, with optional rotation.
 *
 * The stream follows the capture file as the collector appends to it (the
 * collector flushes whole records every poll period): every pump reads the
 * new whole records and turns them into TracePackets, flushed whole (gzip:
 * sync-flushed) so that the output is readable at every packet boundary and a
 * killed trace keeps everything up to its last pump. Memory stays flat: names
 * and paths (bounded like the capture's own tables), the calls of the last
 * pump (a call is held one pump so that the file name and the block requests
 * that follow it in the capture can join it), the open lanes and a window of
 * throughput buckets.
 *
 * Differences from `gpuio convert` of the same capture, which sees it whole:
 * lanes are assigned as requests complete (a request takes the lowest lane
 * free at its start, never overlapping), throughput buckets are a fixed
 * 100 ms, a request completing more than one pump after its call gets no
 * arrow, and the "gpuio trace info" instant closes each file.
 *
 * Rotation (--rotate 1h / 1GiB): OUT.pftrace[.gz] becomes OUT.0001.pftrace[.gz],
 * OUT.0002..., each self-contained (clock snapshot, descriptors, interned
 * strings again); --keep N deletes the oldest beyond N. By time, each file
 * holds a window of the trace's own time (from the capture's start), not of
 * when the stream got to it; by size, it ends at the pump that filled it.
 */
#ifndef GPUIO_STREAM_H
#define GPUIO_STREAM_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct gpuio_stream_opts {
	uint64_t rotate_bytes;  /* 0: no size limit (bytes in the file) */
	uint64_t rotate_ns;     /* 0: no time limit */
	unsigned keep;          /* 0: keep every rotated file */
	uid_t owner_uid;        /* chown outputs when != (uid_t)-1 */
	gid_t owner_gid;
};

/* "1GiB", "500M", "1h", "30m", "10s": into rotate_bytes or rotate_ns. 0 or -EINVAL. */
int gpuio_stream_opts__parse_rotate(struct gpuio_stream_opts *o, const char *s);

struct gpuio_stream_stats {
	uint64_t records, vfs, block, flows, packets, files, deleted;
	uint64_t sched;         /* context switches and wake-ups written */
	uint64_t lag_max_ns;    /* the most the stream was behind the capture (trace time) */
};

struct gpuio_stream;

/* capture_path must already hold its header. Returns 0 or -errno (pr_err'd). */
int gpuio_stream__open(const char *capture_path, const char *out_path,
		       const struct gpuio_stream_opts *o, struct gpuio_stream **out);
/* Turn the records appended since the last pump into packets; rotate when due. */
int gpuio_stream__pump(struct gpuio_stream *s, uint64_t now_mono_ns);
/* The last pump stopped at its budget: more records wait in the capture. */
bool gpuio_stream__behind(const struct gpuio_stream *s);
/* How far the export is behind the capture's newest record (0: caught up). */
uint64_t gpuio_stream__lag_ns(const struct gpuio_stream *s, uint64_t now_mono_ns);
/* Last pump, every held call, final counters and the info instant; close. */
int gpuio_stream__close(struct gpuio_stream *s, struct gpuio_stream_stats *st);

#endif /* GPUIO_STREAM_H */
