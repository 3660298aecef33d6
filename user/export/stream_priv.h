/* SPDX-License-Identifier: MIT */
/*
 * stream_priv.h — the live stream's state, shared by stream.c (the loop:
 * read new records, emit in time order, rotate) and stream_emit.c (what
 * each record becomes) and stream_files.c (output files, rotation).
 */
#ifndef GPUIO_EXPORT_STREAM_PRIV_H
#define GPUIO_EXPORT_STREAM_PRIV_H

#include "export/stream.h"
#include "export/pftrace.h"
#include "timeline/timeline.h"

#define BUCKET_NS       100000000ull    /* throughput buckets: 100 ms */
#define RING            64              /* buckets kept open: 6.4 s */
#define FLOW_ROUNDS     2               /* a call binds requests this many pumps */

/* Greedy lanes, online: a slice takes the lowest lane whose slices all ended
 * by its start (so lanes never overlap whatever the arrival order). */
struct stream_olanes {
	uint64_t *end;
	uint32_t *tid;          /* output tid of each lane (io_uring lanes) */
	uint32_t n, cap;
};

struct stream_disk {
	uint32_t dev;
	uint32_t index;
	struct stream_olanes lanes;
	double ring[RING][2];   /* bytes: read, write */
	uint64_t base;          /* absolute bucket index of the oldest open bucket */
	bool started, emitted;
	double last_r, last_w;
};

struct stream_pend {
	uint8_t type;
	uint32_t disk, lane, flow_k;
	union {
		struct gpuio_hdr h;
		struct gpuio_vfs_event v;
		struct gpuio_block_event b;
		struct gpuio_sched_event sc;
	} r;
};

struct stream_pendq {
	struct stream_pend *a;
	size_t n, cap;
};

struct gpuio_stream {
	struct gpuio_stream_opts o;
	char *out_path;
	char *base, *ext;       /* rotated names: BASE.NNNN.EXT */
	bool gz;
	const struct gpuio_cap_header *hdr;     /* the capture's (the session's copy) */

	struct model_session *sess;     /* follows the capture: names, paths, counts */
	struct tl_model *m;     /* what the stream shows of them (online) */
	struct model_tool tool; /* the stream's own handlers, after the model's */
	struct tl_args args;
	struct pftrace *p;
	struct out_file *of;
	uint64_t file_no, file_start_ns;
	int err;

	struct kmap desc;       /* (kind, id) -> generation << 32 | name hash */
	struct kmap flows;      /* (tid, seq) -> round << 32 | requests bound */
	struct kmap written;    /* (tid, 0) -> the highest call seq emitted */
	struct kmap uring;      /* pid -> uring_lanes[] + 1 */
	struct stream_olanes *uring_lanes;
	size_t nuring, curing;
	uint32_t next_uring_tid;
	struct stream_disk *disks;
	size_t ndisks, cdisks;
	struct kmap disk_map;   /* dev -> disks[] + 1 */
	struct stream_pendq prev, next;
	uint64_t round, latest_ns;
	bool behind;            /* the last pump left records for the next */
	uint32_t names_ver;     /* PROC records seen: names may have changed */
	uint64_t *fids;
	size_t cfids;
	struct gpuio_stream_stats st;
	struct sched_chain chain;       /* switches the trace missed (model/sched_tab.h) */
	struct sched_tab sched_keys;    /* only names the threads of the entries */
};

/* Hold a record (len bytes: a VFS, block or sched record) for the next round. */
int stream_pendq__push(struct stream_pendq *q, const struct gpuio_hdr *h, size_t len,
		       struct stream_pend **out);

void stream_counter_emit(struct gpuio_stream *s, struct stream_disk *d, uint64_t k, double rb, double wb, bool force);

void stream_buckets_close(struct gpuio_stream *s, struct stream_disk *d, uint64_t upto);

int stream_on_block(struct gpuio_stream *s, const struct gpuio_block_event *b);

void stream_emit_block(struct gpuio_stream *s, const struct stream_pend *e);

void stream_emit_vfs(struct gpuio_stream *s, const struct gpuio_vfs_event *e);
void stream_emit_sched(struct gpuio_stream *s, const struct gpuio_sched_event *r);

int stream_flows_sweep(struct gpuio_stream *s);

void stream_emit_info(struct gpuio_stream *s);

bool stream_rotating(const struct gpuio_stream *s);

int stream_file_open(struct gpuio_stream *s, uint64_t now);

int stream_file_close(struct gpuio_stream *s);

#endif /* GPUIO_EXPORT_STREAM_PRIV_H */
