// SPDX-License-Identifier: MIT
/*
 * pftrace_prof.c — on-CPU samples with their Python stacks as Perfetto's own
 * CPU samples (pftrace.h: pftrace__sample), so that trace_processor fills
 * cpu_profile_stack_sample (callsite_id through stack_profile_callsite and
 * stack_profile_frame) and the UI draws flame graphs.
 *
 * Perfetto takes a sample's thread and time from its packet sequence (its
 * ThreadDescriptor), so each sampled thread gets a sequence of its own
 * (trusted_packet_sequence_id PROF_SEQ_BASE + n, on the machine of the
 * capture): a first packet clears the sequence's incremental state and
 * carries the ThreadDescriptor {pid, tid, reference_timestamp_us}; then a
 * packet per sample, StreamingProfilePacket {callstack_iid,
 * timestamp_delta_us} (µs from the thread's previous sample: Perfetto's
 * resolution for these), with the InternedData its stack adds to the
 * sequence. A Python frame is a Frame {function_name: the function,
 * mapping: a Mapping named by the frame's file, rel_pc: its line}; a
 * Callstack lists frame iids outermost first. Field numbers are those of
 * protos/perfetto/trace/ (trace_packet.proto, interned_data.proto,
 * profiling/profile_common.proto, profile_packet.proto,
 * track_event/thread_descriptor.proto).
 *
 * Memory: per sampled thread, the iids of the stacks, frames, functions and
 * files it has used (the distinct ones, never the samples).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "lib/kmap.h"
#include "lib/pb_writer.h"
#include "export/pftrace.h"
#include "export/pftrace_priv.h"

enum {
	TP_TIMESTAMP = 8, TP_SEQUENCE_ID = 10, TP_INTERNED_DATA = 12,   /* TracePacket */
	TP_SEQUENCE_FLAGS = 13, TP_THREAD_DESCRIPTOR = 44, TP_STREAMING_PROFILE = 54,
	TP_TIMESTAMP_CLOCK_ID = 58, TP_DEFAULTS = 59, TP_MACHINE_ID = 98,
	DEFAULTS_TIMESTAMP_CLOCK_ID = 58,
	SEQ_INCREMENTAL_STATE_CLEARED = 1, SEQ_NEEDS_INCREMENTAL_STATE = 2,
	CLOCK_MONOTONIC_ID = 3,
	THD_PID = 1, THD_TID = 2, THD_REFERENCE_TIMESTAMP_US = 6,      /* ThreadDescriptor */
	ID_FUNCTION_NAMES = 5, ID_FRAMES = 6, ID_CALLSTACKS = 7,        /* InternedData */
	ID_MAPPING_PATHS = 17, ID_MAPPINGS = 19,
	IS_IID = 1, IS_STR = 2,                                         /* InternedString */
	MAP_IID = 1, MAP_PATH_STRING_IDS = 7,                           /* Mapping */
	FR_IID = 1, FR_FUNCTION_NAME_ID = 2, FR_MAPPING_ID = 3, FR_REL_PC = 4,  /* Frame */
	CS_IID = 1, CS_FRAME_IDS = 2,                                   /* Callstack */
	SPP_CALLSTACK_IID = 1, SPP_TIMESTAMP_DELTA_US = 2,              /* StreamingProfilePacket */
};

#define PROF_SEQ_BASE 1024      /* above the machines' own sequences (1 + machine) */

/* iid_map kinds */
enum { K_STACK = 1, K_FRAME, K_FUNC, K_FILE };

struct prof_seq {
	uint32_t id;            /* trusted_packet_sequence_id */
	int64_t last_us;        /* the sequence's time: its last sample's */
};

struct pftrace_prof {
	struct kmap seq_map;    /* (machine << 32 | pid, tid) -> seqs[] + 1 */
	struct prof_seq *seqs;
	size_t nseqs, cseqs;
	struct kmap iid_map;    /* (sequence << 3 | kind, key) -> iid */
	uint64_t next_iid;      /* one counter for every table: an iid is never reused */
	struct pb_buf pkt, intern;
};

void pftrace_prof__free(struct pftrace_prof *f)
{
	if (!f)
		return;
	kmap__free(&f->seq_map);
	kmap__free(&f->iid_map);
	free(f->seqs);
	pb_buf__free(&f->pkt);
	pb_buf__free(&f->intern);
	free(f);
}

static struct pftrace_prof *prof_of(struct pftrace *p)
{
	struct pftrace_prof **slot = pftrace__prof(p);

	if (!*slot && (*slot = calloc(1, sizeof(**slot)))) {
		pb_buf__init(&(*slot)->pkt);
		pb_buf__init(&(*slot)->intern);
		(*slot)->next_iid = 1;
	}
	return *slot;
}

static uint64_t text_hash(const char *s, uint64_t h)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return hash_mix64(h);
}

/* The iid of (seq, kind, key): *fresh when it is new here (its entry is due) */
static uint64_t iid_of(struct pftrace *p, struct pftrace_prof *f, size_t seq, unsigned kind,
		       uint64_t key, bool *fresh)
{
	uint64_t *v;

	*fresh = false;
	if (kmap__upsert(&f->iid_map, (uint64_t)seq << 3 | kind, key, &v) < 0) {
		pftrace__fail(p, -ENOMEM);
		return 0;
	}
	if (!*v) {
		*v = f->next_iid++;
		*fresh = true;
	}
	return *v;
}

static void interned_string(struct pftrace *p, struct pb_buf *b, uint32_t field, uint64_t iid,
			    const char *s)
{
	size_t n;
	const char *v = pftrace__utf8(p, s, strlen(s), &n);

	pb_buf__begin(b, field);
	pb_buf__varint(b, IS_IID, iid);
	pb_buf__bytes(b, IS_STR, v, n);
	pb_buf__end(b);
}

/* A frame's iid on sequence seq; its function, file and itself interned when new */
static uint64_t frame_iid(struct pftrace *p, struct pftrace_prof *f, size_t seq,
			  const struct tl_frame *fr)
{
	const char *file = fr->file[0] ? fr->file : "?";
	uint64_t fh = text_hash(file, 0xcbf29ce484222325ull), nh = text_hash(fr->func, fh);
	uint64_t key = hash_mix64(nh ^ (uint64_t)(uint32_t)fr->line * 0x9e3779b97f4a7c15ull);
	uint64_t id, fn, map;
	bool fresh;

	id = iid_of(p, f, seq, K_FRAME, key, &fresh);
	if (!fresh)
		return id;
	fn = iid_of(p, f, seq, K_FUNC, text_hash(fr->func, 0x84222325cbf29ce4ull), &fresh);
	if (fresh)
		interned_string(p, &f->intern, ID_FUNCTION_NAMES, fn, fr->func);
	map = iid_of(p, f, seq, K_FILE, fh, &fresh);
	if (fresh) {    /* the file: a mapping path, and the mapping named by it */
		interned_string(p, &f->intern, ID_MAPPING_PATHS, map, file);
		pb_buf__begin(&f->intern, ID_MAPPINGS);
		pb_buf__varint(&f->intern, MAP_IID, map);
		pb_buf__varint(&f->intern, MAP_PATH_STRING_IDS, map);
		pb_buf__end(&f->intern);
	}
	pb_buf__begin(&f->intern, ID_FRAMES);
	pb_buf__varint(&f->intern, FR_IID, id);
	pb_buf__varint(&f->intern, FR_FUNCTION_NAME_ID, fn);
	pb_buf__varint(&f->intern, FR_MAPPING_ID, map);
	pb_buf__varint(&f->intern, FR_REL_PC, fr->line > 0 ? (uint64_t)fr->line : 0);
	pb_buf__end(&f->intern);
	return id;
}

/* The sample's callstack iid on sequence seq, interned (with its frames) when new */
static uint64_t stack_iid(struct pftrace *p, struct pftrace_prof *f, size_t seq,
			  const struct tl_sample *o)
{
	uint64_t id, fr[GPUIO_PY_FRAMES_MAX];
	unsigned n = o->nframes < GPUIO_PY_FRAMES_MAX ? o->nframes : GPUIO_PY_FRAMES_MAX;
	bool fresh;

	id = iid_of(p, f, seq, K_STACK, o->key, &fresh);
	if (!fresh)
		return id;
	for (unsigned i = 0; i < n; i++)        /* outermost first */
		fr[i] = frame_iid(p, f, seq, &o->frames[n - 1 - i]);
	pb_buf__begin(&f->intern, ID_CALLSTACKS);
	pb_buf__varint(&f->intern, CS_IID, id);
	for (unsigned i = 0; i < n; i++)
		pb_buf__varint(&f->intern, CS_FRAME_IDS, fr[i]);
	pb_buf__end(&f->intern);
	return id;
}

static void packet_head(struct pftrace *p, struct pb_buf *b, uint32_t seq, unsigned flags,
			uint64_t ts)
{
	pb_buf__reset(b);
	pb_buf__varint(b, TP_TIMESTAMP, ts);
	pb_buf__varint(b, TP_SEQUENCE_ID, seq);
	if (pftrace__machine_id(p))
		pb_buf__varint(b, TP_MACHINE_ID, pftrace__machine_id(p));
	pb_buf__varint(b, TP_SEQUENCE_FLAGS, flags);
}

/* The thread's sequence: made, with its first packet, at its first sample */
static struct prof_seq *seq_of(struct pftrace *p, struct pftrace_prof *f, uint64_t ts,
			       const struct tl_sample *o)
{
	uint64_t *v;
	struct prof_seq *s;

	if (kmap__upsert(&f->seq_map, (uint64_t)pftrace__machine_id(p) << 32 | o->pid, o->tid,
			 &v) < 0)
		return NULL;
	if (*v)
		return &f->seqs[*v - 1];
	if (array_grow((void **)&f->seqs, &f->cseqs, f->nseqs + 1, sizeof(*f->seqs)))
		return NULL;
	s = &f->seqs[f->nseqs];
	*s = (struct prof_seq){ .id = PROF_SEQ_BASE + (uint32_t)f->nseqs,
				.last_us = (int64_t)(ts / 1000) };
	*v = ++f->nseqs;
	packet_head(p, &f->pkt, s->id, SEQ_INCREMENTAL_STATE_CLEARED, ts);
	pb_buf__varint(&f->pkt, TP_TIMESTAMP_CLOCK_ID, CLOCK_MONOTONIC_ID);
	pb_buf__begin(&f->pkt, TP_DEFAULTS);
	pb_buf__varint(&f->pkt, DEFAULTS_TIMESTAMP_CLOCK_ID, CLOCK_MONOTONIC_ID);
	pb_buf__end(&f->pkt);
	pb_buf__begin(&f->pkt, TP_THREAD_DESCRIPTOR);
	pb_buf__varint(&f->pkt, THD_PID, o->pid);
	pb_buf__varint(&f->pkt, THD_TID, o->tid);
	pb_buf__varint(&f->pkt, THD_REFERENCE_TIMESTAMP_US, (uint64_t)s->last_us);
	pb_buf__end(&f->pkt);
	pftrace__put_packet(p, &f->pkt);
	return s;
}

void pftrace__sample(struct pftrace *p, uint64_t ts, const struct tl_sample *o)
{
	struct pftrace_prof *f = prof_of(p);
	struct prof_seq *s;
	uint64_t iid;
	int64_t us = (int64_t)(ts / 1000);

	if (!o->nframes)
		return;
	if (!f || !(s = seq_of(p, f, ts, o))) {
		pftrace__fail(p, -ENOMEM);
		return;
	}
	pb_buf__reset(&f->intern);
	iid = stack_iid(p, f, (size_t)(s - f->seqs), o);
	packet_head(p, &f->pkt, s->id, SEQ_NEEDS_INCREMENTAL_STATE, ts);
	if (f->intern.len)
		pb_buf__append_msg(&f->pkt, TP_INTERNED_DATA, &f->intern);
	pb_buf__begin(&f->pkt, TP_STREAMING_PROFILE);
	pb_buf__varint(&f->pkt, SPP_CALLSTACK_IID, iid);
	pb_buf__varint(&f->pkt, SPP_TIMESTAMP_DELTA_US, (uint64_t)(us - s->last_us));
	pb_buf__end(&f->pkt);
	s->last_us = us;
	if (pb_buf__error(&f->intern))
		pftrace__fail(p, pb_buf__error(&f->intern));
	pftrace__put_packet(p, &f->pkt);
}
