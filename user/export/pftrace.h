/* SPDX-License-Identifier: MIT */
/*
 * pftrace.h — Perfetto's native trace format: a stream of TracePackets.
 *
 * The writer owns one packet sequence (trusted_packet_sequence_id 1). A
 * trace starts (pftrace__start) with a packet that has
 * SEQ_INCREMENTAL_STATE_CLEARED, trace_packet_defaults {timestamp_clock_id:
 * MONOTONIC} and a ClockSnapshot declaring MONOTONIC with the REALTIME and
 * BOOTTIME of the same instant, MONOTONIC as the primary trace clock:
 * without it Perfetto drops every event, and without BOOTTIME (its default
 * clock, which every file is bridged from) the importer reports the file's
 * clock domain unrelatable (clock_sync_unrelatable_clock_domains). Every later packet carries SEQ_NEEDS_INCREMENTAL_STATE.
 * Event names, categories, debug-annotation names and repeated string values
 * are interned: an entry rides the packet that first uses it; iids only grow
 * (Perfetto forbids reusing an iid for another string in one trace), and a
 * table that grows too big is dropped by clearing the incremental state.
 *
 * Packets are built whole in memory and handed to the out_file whole, so the
 * file is valid at every packet boundary. Field numbers are those of
 * Perfetto's public protos (protos/perfetto/trace/...); user/export/proto/
 * gpuio_trace.proto is our trimmed copy, used by the tests to decode.
 */
#ifndef GPUIO_PFTRACE_H
#define GPUIO_PFTRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "timeline/timeline.h"
#include "lib/out_file.h"

/*
 * Track uuids: (output id << 3 | kind), from the ids the JSON export uses
 * (so both exports and the streamed one name a track alike).
 */
#define PFT_UUID(id, kind) (((uint64_t)(id) << 3) | (kind))
enum {
	PFT_PROCESS = 1,        /* pid */
	PFT_THREAD,             /* tid */
	PFT_URING,              /* io_uring lane tid */
	PFT_DISK,               /* disk pid */
	PFT_LANE,               /* disk lane tid */
	PFT_COUNTER,            /* disk pid << 1 | 0 read, 1 write */
	PFT_INFO,               /* info pid */
};

struct pftrace;

int pftrace__new(struct pftrace **out);
void pftrace__free(struct pftrace *p);

/* One instant on the three clocks the snapshot declares. */
struct pftrace_clocks {
	uint64_t mono, real, boot;
};

/*
 * Begin a self-contained trace on o (which the caller keeps and closes):
 * the clock snapshot packet, fresh interning.
 */
int pftrace__start(struct pftrace *p, struct out_file *o, const struct pftrace_clocks *c);
/* What Perfetto's `machine` table shows of a host (SystemInfo, utsname). */
struct pftrace_sysinfo {
	const char *name;       /* the host name */
	const char *sysname, *release, *version, *arch;
	uint32_t ncpus;
};
/*
 * What follows is machine's (TracePacket.machine_id; 0 = the first host, no
 * id): on a change, a new sequence with its own clock snapshot c; then its
 * SystemInfo. Between slices only. 0 or -errno.
 */
int pftrace__machine(struct pftrace *p, uint32_t machine, const struct pftrace_clocks *c,
		     const struct pftrace_sysinfo *si);
/* Hand buffered packets to the out_file; with sync, make them readable now. */
int pftrace__flush(struct pftrace *p, bool sync);
/* Flush and forget the out_file (before the caller closes it). */
int pftrace__detach(struct pftrace *p);
int pftrace__error(const struct pftrace *p);
uint64_t pftrace__packets(const struct pftrace *p);
uint64_t pftrace__bytes(const struct pftrace *p);       /* uncompressed */
/* Incremented by every pftrace__start(): descriptors are due again. */
uint32_t pftrace__generation(const struct pftrace *p);

/* Track descriptors. Names are any bytes (made valid UTF-8). */
/* labels: "k=v" pairs joined by ", " (ProcessDescriptor.process_labels), or NULL */
void pftrace__process(struct pftrace *p, uint64_t uuid, uint32_t pid, const char *name,
		      size_t len, const char *labels);
void pftrace__thread(struct pftrace *p, uint64_t uuid, uint32_t pid, uint32_t tid,
		     const char *name, size_t len);
/* A plain track; parent 0: top level; explicit: children ordered by rank; rank < 0: none */
void pftrace__track(struct pftrace *p, uint64_t uuid, uint64_t parent, const char *name,
		    size_t len, bool explicit_children, int64_t rank);
void pftrace__counter_track(struct pftrace *p, uint64_t uuid, uint64_t parent,
			    const char *name, const char *unit);

/* Track events. cat and name are interned (static strings are cached by address). */
struct pftrace_flows {
	const uint64_t *out;    /* flow_ids: flows that start here */
	size_t nout;
	const uint64_t *in;     /* terminating_flow_ids: flows that end here */
	size_t nin;
};
void pftrace__slice_begin(struct pftrace *p, uint64_t ts, uint64_t track, const char *cat,
			  const char *name, bool name_static, const struct tl_args *a,
			  const struct pftrace_flows *f);
void pftrace__slice_end(struct pftrace *p, uint64_t ts, uint64_t track);
void pftrace__instant(struct pftrace *p, uint64_t ts, uint64_t track, const char *cat,
		      const char *name, const struct tl_args *a);
void pftrace__counter(struct pftrace *p, uint64_t ts, uint64_t track, double v);

/*
 * Scheduler events as Perfetto's own ftrace sched_switch / sched_waking /
 * sched_wakeup_new, so its thread_state table, wake-up arrows and standard
 * library work on them. ts is MONOTONIC (written as BOOTTIME through the
 * clock snapshot); events are buffered per CPU (in time order per CPU) and
 * written as FtraceEventBundles of up to 1024, and all at pftrace__sched_flush
 * (done by pftrace__detach and on a machine change).
 */
void pftrace__sched_switch(struct pftrace *p, uint32_t cpu, uint64_t ts, const char *prev_comm,
			   uint32_t prev_tid, int prev_prio, int64_t prev_state,
			   const char *next_comm, uint32_t next_tid, int next_prio);
void pftrace__sched_waking(struct pftrace *p, uint32_t cpu, uint64_t ts, uint32_t waker_tid,
			   const char *comm, uint32_t tid, int prio, uint32_t target_cpu,
			   bool new_task);
void pftrace__sched_flush(struct pftrace *p);
/* An exporter's switch or wake-up, as the above (untraced sides as the idle task). */
void pftrace__sched(struct pftrace *p, const struct tl_sched *o);

/*
 * An on-CPU sample with its Python stack (ts: MONOTONIC) as Perfetto's own
 * CPU sample (pftrace_prof.c): a packet sequence per thread, its frames and
 * callstacks interned there, a StreamingProfilePacket per sample; the
 * importer's cpu_profile_stack_sample table. Between slices only.
 */
void pftrace__sample(struct pftrace *p, uint64_t ts, const struct tl_sample *o);

#endif /* GPUIO_PFTRACE_H */
