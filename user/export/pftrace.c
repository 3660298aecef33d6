// SPDX-License-Identifier: MIT
/* pftrace.c — Perfetto TracePacket writer. See pftrace.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "lib/pb_writer.h"
#include "export/pftrace.h"
#include "export/pftrace_priv.h"
#include "lib/utf8.h"

/* Field numbers, from Perfetto's protos/perfetto/trace/ (trace.proto etc). */
enum {
	TRACE_PACKET = 1,                       /* Trace.packet */

	TP_CLOCK_SNAPSHOT = 6,                  /* TracePacket */
	TP_TIMESTAMP = 8,
	TP_SEQUENCE_ID = 10,                    /* trusted_packet_sequence_id */
	TP_TRACK_EVENT = 11,
	TP_INTERNED_DATA = 12,
	TP_SEQUENCE_FLAGS = 13,
	TP_TIMESTAMP_CLOCK_ID = 58,
	TP_DEFAULTS = 59,                       /* trace_packet_defaults */
	TP_TRACK_DESCRIPTOR = 60,
	TP_SYSTEM_INFO = 45,
	TP_MACHINE_ID = 98,                     /* multi-machine traces: absent = the host */

	SI_UTSNAME = 1, SI_NUM_CPUS = 8, SI_MACHINE_NAME = 17,  /* SystemInfo */
	UTS_SYSNAME = 1, UTS_VERSION = 2, UTS_RELEASE = 3, UTS_MACHINE = 4,  /* Utsname */

	SEQ_INCREMENTAL_STATE_CLEARED = 1,
	SEQ_NEEDS_INCREMENTAL_STATE = 2,

	DEFAULTS_TIMESTAMP_CLOCK_ID = 58,       /* TracePacketDefaults */

	CS_CLOCKS = 1, CS_PRIMARY_TRACE_CLOCK = 2,      /* ClockSnapshot */
	CLOCK_ID = 1, CLOCK_TIMESTAMP = 2,              /* ClockSnapshot.Clock */
	BUILTIN_CLOCK_REALTIME = 1, BUILTIN_CLOCK_MONOTONIC = 3, BUILTIN_CLOCK_BOOTTIME = 6,

	TD_UUID = 1, TD_NAME = 2, TD_PROCESS = 3, TD_THREAD = 4,   /* TrackDescriptor */
	TD_PARENT_UUID = 5, TD_COUNTER = 8, TD_CHILD_ORDERING = 11, TD_SIBLING_ORDER_RANK = 12,
	TD_CHILD_ORDERING_EXPLICIT = 3,
	PD_PID = 1, PD_PROCESS_NAME = 6, PD_PROCESS_LABELS = 8, /* ProcessDescriptor */
	THD_PID = 1, THD_TID = 2, THD_THREAD_NAME = 5,          /* ThreadDescriptor */
	CD_UNIT_NAME = 6,                                       /* CounterDescriptor */

	TE_CATEGORY_IIDS = 3, TE_DEBUG_ANNOTATIONS = 4,         /* TrackEvent */
	TE_TYPE = 9, TE_NAME_IID = 10, TE_TRACK_UUID = 11, TE_DOUBLE_COUNTER_VALUE = 44,
	TE_FLOW_IDS = 47, TE_TERMINATING_FLOW_IDS = 48,
	TYPE_SLICE_BEGIN = 1, TYPE_SLICE_END = 2, TYPE_INSTANT = 3, TYPE_COUNTER = 4,

	DA_NAME_IID = 1, DA_BOOL = 2, DA_UINT = 3, DA_INT = 4,  /* DebugAnnotation */
	DA_DOUBLE = 5, DA_STRING = 6, DA_NAME = 10, DA_DICT_ENTRIES = 11, DA_STRING_IID = 17,

	ID_EVENT_CATEGORIES = 1, ID_EVENT_NAMES = 2,            /* InternedData */
	ID_DEBUG_ANNOTATION_NAMES = 3, ID_DEBUG_ANNOTATION_STRING_VALUES = 29,
	IE_IID = 1, IE_NAME = 2,        /* EventCategory, EventName, DebugAnnotationName,
					   InternedString (str = 2) */
};

#define SEQUENCE_ID     1               /* + machine: one sequence per machine */
#define OUT_FLUSH_AT    (1u << 20)      /* hand whole packets over past 1 MiB */
#define INTERN_MAX      (1u << 20)      /* entries before the table is dropped */
#define ARENA_MAX       (64u << 20)
#define PCACHE_SIZE     4096            /* direct-mapped, by string address */

enum { IK_CATEGORY, IK_NAME, IK_ANNOTATION, IK_STRING, IK_MAX };
static const uint32_t intern_field[IK_MAX] = {
	[IK_CATEGORY] = ID_EVENT_CATEGORIES, [IK_NAME] = ID_EVENT_NAMES,
	[IK_ANNOTATION] = ID_DEBUG_ANNOTATION_NAMES,
	[IK_STRING] = ID_DEBUG_ANNOTATION_STRING_VALUES,
};

struct islot {
	uint64_t hash;
	uint64_t iid;
	uint64_t off;           /* key bytes in the arena */
	uint32_t len;
	uint8_t kind, used;
};

struct pcache_ent {
	const void *ptr;
	uint64_t iid;
	uint32_t len, gen;
	uint8_t kind;
};

struct pftrace {
	struct out_file *o;
	struct pb_buf out;      /* whole packets, framed as Trace.packet */
	struct pb_buf intern;   /* InternedData body of the packet being built */
	int err;
	uint64_t packets, bytes;
	uint32_t generation;
	bool in_slice;          /* a BEGIN was written, its END not yet */
	uint32_t machine;       /* TracePacket.machine_id of what follows (0: none) */
	uint8_t seq;            /* trusted_packet_sequence_id of what follows */

	struct islot *slots;
	size_t cap, n;
	char *arena;
	size_t arena_len, arena_cap;
	uint64_t next_iid[IK_MAX];      /* never reused within a writer */
	struct pcache_ent pcache[PCACHE_SIZE];
	uint32_t pgen;                  /* pcache entries of older gens are void */
	char *fix;                      /* UTF-8 repair buffer */
	size_t fix_cap;

	struct pftrace_ftrace *ft;      /* sched events not yet written (pftrace_sched.c) */
	struct pftrace_prof *prof;      /* the CPU samples' sequences (pftrace_prof.c) */
	int64_t boot_minus_mono;        /* ftrace timestamps are BOOTTIME */
};

int pftrace__new(struct pftrace **out)
{
	struct pftrace *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	pb_buf__init(&p->out);
	pb_buf__init(&p->intern);
	for (int k = 0; k < IK_MAX; k++)
		p->next_iid[k] = 1;
	p->pgen = 1;
	p->seq = SEQUENCE_ID;
	*out = p;
	return 0;
}

void pftrace__free(struct pftrace *p)
{
	if (!p)
		return;
	pb_buf__free(&p->out);
	pb_buf__free(&p->intern);
	free(p->slots);
	free(p->arena);
	free(p->fix);
	pftrace_ftrace__free(p->ft);
	pftrace_prof__free(p->prof);
	free(p);
}

int pftrace__error(const struct pftrace *p)
{
	return p->err ? p->err : p->out.err ? p->out.err : p->intern.err;
}

uint64_t pftrace__packets(const struct pftrace *p) { return p->packets; }
uint64_t pftrace__bytes(const struct pftrace *p) { return p->bytes + p->out.len; }
uint32_t pftrace__generation(const struct pftrace *p) { return p->generation; }

/* ---- strings ---- */

/* s as valid UTF-8: s itself, or a repaired copy in p->fix */
const char *pftrace__utf8(struct pftrace *p, const char *s, size_t n, size_t *out_len)
{
	if (utf8_valid(s, n)) {
		*out_len = n;
		return s;
	}
	if (p->fix_cap < 3 * n + 1) {
		char *f = realloc(p->fix, 3 * n + 1);

		if (!f) {
			p->err = -ENOMEM;
			*out_len = 0;
			return "";
		}
		p->fix = f;
		p->fix_cap = 3 * n + 1;
	}
	*out_len = utf8_repair(s, n, p->fix);
	return p->fix;
}

static void put_str(struct pftrace *p, struct pb_buf *b, uint32_t field, const char *s, size_t n)
{
	size_t len;
	const char *v = pftrace__utf8(p, s, n, &len);

	pb_buf__bytes(b, field, v, len);
}

/* ---- interning ---- */

static uint64_t hash_bytes(unsigned kind, const void *sv, size_t n)
{
	const unsigned char *s = sv;
	uint64_t h = 0xcbf29ce484222325ull ^ (kind * 0x9e3779b97f4a7c15ull) ^ n;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t w;

		memcpy(&w, s + i, 8);
		h = (h ^ w) * 0x100000001b3ull;
		h ^= h >> 29;
	}
	for (; i < n; i++)
		h = (h ^ s[i]) * 0x100000001b3ull;
	return hash_mix64(h);
}

static void intern_clear(struct pftrace *p)
{
	if (p->slots)
		memset(p->slots, 0, p->cap * sizeof(*p->slots));
	p->n = 0;
	p->arena_len = 0;
	p->pgen++;
}

static struct islot *islot_find(struct pftrace *p, uint64_t h, unsigned kind, const void *s,
				size_t n)
{
	size_t i = h & (p->cap - 1);

	while (p->slots[i].used) {
		struct islot *e = &p->slots[i];

		if (e->hash == h && e->kind == kind && e->len == n &&
		    !memcmp(p->arena + e->off, s, n))
			return e;
		i = (i + 1) & (p->cap - 1);
	}
	return &p->slots[i];
}

static int intern_grow(struct pftrace *p)
{
	size_t ncap = p->cap ? p->cap * 2 : 1024;
	struct islot *ns = calloc(ncap, sizeof(*ns)), *old = p->slots;

	if (!ns)
		return -ENOMEM;
	for (size_t i = 0; i < p->cap; i++) {
		if (old[i].used) {
			size_t k = old[i].hash & (ncap - 1);

			while (ns[k].used)
				k = (k + 1) & (ncap - 1);
			ns[k] = old[i];
		}
	}
	free(old);
	p->slots = ns;
	p->cap = ncap;
	return 0;
}

/* The iid of s in table kind; a new entry goes into this packet's InternedData. */
static uint64_t intern(struct pftrace *p, unsigned kind, const char *s, size_t n, bool stable)
{
	struct pcache_ent *c = NULL;
	struct islot *e;
	uint64_t h, iid;

	if (stable) {
		c = &p->pcache[((uintptr_t)s >> 3 ^ (uintptr_t)s >> 15 ^ kind) & (PCACHE_SIZE - 1)];
		if (c->ptr == s && c->len == n && c->kind == kind && c->gen == p->pgen)
			return c->iid;
	}
	if ((p->n + 1) * 2 > p->cap && intern_grow(p)) {
		p->err = -ENOMEM;
		return 0;
	}
	h = hash_bytes(kind, s, n);
	e = islot_find(p, h, kind, s, n);
	if (e->used) {
		iid = e->iid;
	} else {
		size_t len;
		const char *v;

		if (p->arena_len + n > p->arena_cap) {
			size_t ncap = p->arena_cap ? p->arena_cap * 2 : 1u << 16;
			char *a;

			while (ncap < p->arena_len + n)
				ncap *= 2;
			a = realloc(p->arena, ncap);
			if (!a) {
				p->err = -ENOMEM;
				return 0;
			}
			p->arena = a;
			p->arena_cap = ncap;
		}
		memcpy(p->arena + p->arena_len, s, n);
		iid = p->next_iid[kind]++;
		*e = (struct islot){ .hash = h, .iid = iid, .off = p->arena_len, .len = (uint32_t)n,
				     .kind = (uint8_t)kind, .used = 1 };
		p->arena_len += n;
		p->n++;
		pb_buf__begin(&p->intern, intern_field[kind]);
		pb_buf__varint(&p->intern, IE_IID, iid);
		v = pftrace__utf8(p, s, n, &len);
		pb_buf__bytes(&p->intern, IE_NAME, v, len);
		pb_buf__end(&p->intern);
	}
	if (c) {
		c->ptr = s;
		c->len = (uint32_t)n;
		c->kind = (uint8_t)kind;
		c->gen = p->pgen;
		c->iid = iid;
	}
	return iid;
}

/* A string literal: its address is its identity, no strlen on a hit. */
static inline uint64_t intern_static(struct pftrace *p, unsigned kind, const char *s)
{
	struct pcache_ent *c = &p->pcache[((uintptr_t)s >> 3 ^ (uintptr_t)s >> 15 ^ kind) &
					  (PCACHE_SIZE - 1)];

	if (c->ptr == s && c->kind == kind && c->gen == p->pgen)
		return c->iid;
	return intern(p, kind, s, strlen(s), true);
}

/* ---- packets ---- */

static void packet_begin(struct pftrace *p, uint32_t flags)
{
	pb_buf__begin(&p->out, TRACE_PACKET);
	pb_buf__varint(&p->out, TP_SEQUENCE_ID, p->seq);
	if (p->machine)
		pb_buf__varint(&p->out, TP_MACHINE_ID, p->machine);
	pb_buf__varint(&p->out, TP_SEQUENCE_FLAGS, flags);
	pb_buf__reset(&p->intern);
}

static void packet_end(struct pftrace *p)
{
	if (p->intern.len)
		pb_buf__append_msg(&p->out, TP_INTERNED_DATA, &p->intern);
	pb_buf__end(&p->out);
	p->packets++;
	/* not between a slice's BEGIN and END: a cut file has whole slices */
	if (p->out.len >= OUT_FLUSH_AT && !p->in_slice)
		pftrace__flush(p, false);
}

static void snapshot_clock(struct pftrace *p, unsigned id, uint64_t ts)
{
	pb_buf__begin(&p->out, CS_CLOCKS);
	pb_buf__varint(&p->out, CLOCK_ID, id);
	pb_buf__varint(&p->out, CLOCK_TIMESTAMP, ts);
	pb_buf__end(&p->out);
}

/* The first packet of a trace (and after a reset of the interning tables). */
static void clear_packet(struct pftrace *p, const struct pftrace_clocks *c, bool snapshot)
{
	p->boot_minus_mono = (int64_t)(c->boot - c->mono);
	packet_begin(p, SEQ_INCREMENTAL_STATE_CLEARED);
	pb_buf__varint(&p->out, TP_TIMESTAMP, c->mono);
	pb_buf__varint(&p->out, TP_TIMESTAMP_CLOCK_ID, BUILTIN_CLOCK_MONOTONIC);
	pb_buf__begin(&p->out, TP_DEFAULTS);
	pb_buf__varint(&p->out, DEFAULTS_TIMESTAMP_CLOCK_ID, BUILTIN_CLOCK_MONOTONIC);
	pb_buf__end(&p->out);
	if (snapshot) {
		pb_buf__begin(&p->out, TP_CLOCK_SNAPSHOT);
		snapshot_clock(p, BUILTIN_CLOCK_MONOTONIC, c->mono);
		snapshot_clock(p, BUILTIN_CLOCK_REALTIME, c->real);
		snapshot_clock(p, BUILTIN_CLOCK_BOOTTIME, c->boot);
		pb_buf__varint(&p->out, CS_PRIMARY_TRACE_CLOCK, BUILTIN_CLOCK_MONOTONIC);
		pb_buf__end(&p->out);
	}
	packet_end(p);
}

int pftrace__start(struct pftrace *p, struct out_file *o, const struct pftrace_clocks *c)
{
	p->o = o;
	p->generation++;
	intern_clear(p);
	pftrace_prof__free(p->prof);    /* a new file: the samples' sequences begin again */
	p->prof = NULL;
	clear_packet(p, c, true);
	return pftrace__error(p);
}

static void put_opt(struct pftrace *p, uint32_t field, const char *s)
{
	if (s && s[0])
		put_str(p, &p->out, field, s, strlen(s));
}

int pftrace__machine(struct pftrace *p, uint32_t machine, const struct pftrace_clocks *c,
		     const struct pftrace_sysinfo *si)
{
	if (machine != p->machine) {
		/* a machine's packets are their own sequence: its own interning, defaults, clocks */
		if (p->in_slice || machine + SEQUENCE_ID > 127)
			return -EINVAL;
		pftrace__sched_flush(p);        /* the last host's events go as its own */
		p->machine = machine;
		p->seq = (uint8_t)(SEQUENCE_ID + machine);
		intern_clear(p);
		clear_packet(p, c, true);
	}
	packet_begin(p, SEQ_NEEDS_INCREMENTAL_STATE);   /* as every packet after the first */
	pb_buf__begin(&p->out, TP_SYSTEM_INFO);
	pb_buf__begin(&p->out, SI_UTSNAME);
	put_opt(p, UTS_SYSNAME, si->sysname);
	put_opt(p, UTS_VERSION, si->version);
	put_opt(p, UTS_RELEASE, si->release);
	put_opt(p, UTS_MACHINE, si->arch);
	pb_buf__end(&p->out);
	if (si->ncpus)
		pb_buf__varint(&p->out, SI_NUM_CPUS, si->ncpus);
	put_opt(p, SI_MACHINE_NAME, si->name);
	pb_buf__end(&p->out);
	packet_end(p);
	return pftrace__error(p);
}

int pftrace__flush(struct pftrace *p, bool sync)
{
	int err = pftrace__error(p);

	if (err)
		return err;
	if (p->o && p->out.len) {
		p->err = out_file__write(p->o, p->out.p, p->out.len);
		p->bytes += p->out.len;
		pb_buf__reset(&p->out);
	}
	if (!p->err && p->o && sync)
		p->err = out_file__sync(p->o);
	return p->err;
}

int pftrace__detach(struct pftrace *p)
{
	int err;

	pftrace__sched_flush(p);
	err = pftrace__flush(p, false);

	p->o = NULL;
	return err;
}

/* ---- descriptors ---- */

void pftrace__process(struct pftrace *p, uint64_t uuid, uint32_t pid, const char *name,
		      size_t len, const char *labels)
{
	packet_begin(p, SEQ_NEEDS_INCREMENTAL_STATE);
	pb_buf__begin(&p->out, TP_TRACK_DESCRIPTOR);
	pb_buf__varint(&p->out, TD_UUID, uuid);
	pb_buf__begin(&p->out, TD_PROCESS);
	pb_buf__varint(&p->out, PD_PID, pid);
	put_str(p, &p->out, PD_PROCESS_NAME, name, len);
	/* one process_labels string per "k=v" (trace_processor: process args chrome.process_label[i]) */
	for (const char *l = labels; l && *l;) {
		const char *e = strstr(l, ", ");
		size_t n = e ? (size_t)(e - l) : strlen(l);

		put_str(p, &p->out, PD_PROCESS_LABELS, l, n);
		l = e ? e + 2 : NULL;
	}
	pb_buf__end(&p->out);
	pb_buf__end(&p->out);
	packet_end(p);
}

void pftrace__thread(struct pftrace *p, uint64_t uuid, uint32_t pid, uint32_t tid,
		     const char *name, size_t len)
{
	packet_begin(p, SEQ_NEEDS_INCREMENTAL_STATE);
	pb_buf__begin(&p->out, TP_TRACK_DESCRIPTOR);
	pb_buf__varint(&p->out, TD_UUID, uuid);
	pb_buf__begin(&p->out, TD_THREAD);
	pb_buf__varint(&p->out, THD_PID, pid);
	pb_buf__varint(&p->out, THD_TID, tid);
	put_str(p, &p->out, THD_THREAD_NAME, name, len);
	pb_buf__end(&p->out);
	pb_buf__end(&p->out);
	packet_end(p);
}

void pftrace__track(struct pftrace *p, uint64_t uuid, uint64_t parent, const char *name,
		    size_t len, bool explicit_children, int64_t rank)
{
	packet_begin(p, SEQ_NEEDS_INCREMENTAL_STATE);
	pb_buf__begin(&p->out, TP_TRACK_DESCRIPTOR);
	pb_buf__varint(&p->out, TD_UUID, uuid);
	if (parent)
		pb_buf__varint(&p->out, TD_PARENT_UUID, parent);
	put_str(p, &p->out, TD_NAME, name, len);
	if (explicit_children)
		pb_buf__varint(&p->out, TD_CHILD_ORDERING, TD_CHILD_ORDERING_EXPLICIT);
	if (rank >= 0)
		pb_buf__varint(&p->out, TD_SIBLING_ORDER_RANK, (uint64_t)rank);
	pb_buf__end(&p->out);
	packet_end(p);
}

void pftrace__counter_track(struct pftrace *p, uint64_t uuid, uint64_t parent,
			    const char *name, const char *unit)
{
	packet_begin(p, SEQ_NEEDS_INCREMENTAL_STATE);
	pb_buf__begin(&p->out, TP_TRACK_DESCRIPTOR);
	pb_buf__varint(&p->out, TD_UUID, uuid);
	if (parent)
		pb_buf__varint(&p->out, TD_PARENT_UUID, parent);
	put_str(p, &p->out, TD_NAME, name, strlen(name));
	pb_buf__begin(&p->out, TD_COUNTER);
	pb_buf__cstr(&p->out, CD_UNIT_NAME, unit);
	pb_buf__end(&p->out);
	pb_buf__end(&p->out);
	packet_end(p);
}

/* ---- events ---- */

/* A DebugAnnotation of one number (the common case): written in one go. */
static inline void put_num(struct pb_buf *b, uint32_t field, uint64_t name_iid, unsigned vfield,
			   uint64_t v)
{
	uint8_t *o, *len;

	if (!pb_buf__reserve(b, 32))
		return;
	o = b->p + b->len;
	o += pb_put_varint(o, (uint64_t)field << 3 | PB_LEN);
	len = o++;
	o += pb_put_varint(o, DA_NAME_IID << 3 | PB_VARINT);
	o += pb_put_varint(o, name_iid);
	o += pb_put_varint(o, (uint64_t)vfield << 3 | PB_VARINT);
	o += pb_put_varint(o, v);
	*len = (uint8_t)(o - len - 1);          /* < 32: one length byte */
	b->len = (size_t)(o - b->p);
}

/* args[i..i+n) as DebugAnnotations (field) or dict entries; returns args consumed */
static unsigned put_args(struct pftrace *p, uint32_t field, const struct tl_args *a,
			 unsigned i, unsigned n, bool in_dict)
{
	struct pb_buf *b = &p->out;
	unsigned start = i, level = 0;

	while (i < a->n && level < n) {
		const struct tl_arg *g = &a->a[i++];

		level++;
		if (g->type == TLA_NULL)
			continue;       /* protobuf has no null: the key is left out */
		if (!in_dict) {
			uint64_t kid = intern_static(p, IK_ANNOTATION, g->key);

			switch (g->type) {
			case TLA_U64:
				put_num(b, field, kid, DA_UINT, g->v.u);
				continue;
			case TLA_S64:
				put_num(b, field, kid, DA_INT, (uint64_t)g->v.s);
				continue;
			case TLA_BOOL:
				put_num(b, field, kid, DA_BOOL, g->v.b);
				continue;
			case TLA_STR:
				if (g->intern) {
					put_num(b, field, kid, DA_STRING_IID,
						intern(p, IK_STRING, g->v.str, g->len, g->stable));
					continue;
				}
				break;
			}
			pb_buf__begin(b, field);
			pb_buf__varint(b, DA_NAME_IID, kid);
		} else {
			pb_buf__begin(b, field);
			pb_buf__cstr(b, DA_NAME, g->key);
		}
		switch (g->type) {
		case TLA_U64:
			pb_buf__varint(b, DA_UINT, g->v.u);
			break;
		case TLA_S64:
			pb_buf__varint(b, DA_INT, (uint64_t)g->v.s);
			break;
		case TLA_BOOL:
			pb_buf__varint(b, DA_BOOL, g->v.b);
			break;
		case TLA_STR:
			put_str(p, b, DA_STRING, g->v.str, g->len);
			break;
		case TLA_US:
			pb_buf__double(b, DA_DOUBLE, (double)g->v.s / 1000.0);
			break;
		case TLA_F3:
			pb_buf__double(b, DA_DOUBLE, g->v.d);
			break;
		case TLA_DICT:
			i += put_args(p, DA_DICT_ENTRIES, a, i, g->len, true);
			break;
		}
		pb_buf__end(b);
	}
	return i - start;
}

/*
 * The head of every event packet in one go: TracePacket {sequence id, flags
 * NEEDS_INCREMENTAL_STATE, timestamp, track_event {type, track_uuid ...
 * Both messages are left open (lengths fixed by pb_buf__end()).
 */
static void event_head(struct pftrace *p, uint64_t ts, uint64_t track, unsigned type)
{
	struct pb_buf *b = &p->out;
	uint8_t *o;

	/* events need the incremental state; a full table is dropped first */
	if (p->n >= INTERN_MAX || p->arena_len >= ARENA_MAX) {
		struct pftrace_clocks c = { .mono = ts };

		intern_clear(p);
		clear_packet(p, &c, false);
	}
	pb_buf__reset(&p->intern);
	if (!pb_buf__reserve(b, 48) || b->depth + 2 > PB_MAX_DEPTH) {
		b->err = b->err ? b->err : -ENOMEM;
		return;
	}
	o = b->p + b->len;
	*o++ = TRACE_PACKET << 3 | PB_LEN;
	b->open[b->depth++] = (size_t)(o - b->p);
	*o++ = 0;
	*o++ = TP_SEQUENCE_ID << 3 | PB_VARINT;
	*o++ = p->seq;
	if (p->machine) {
		o += pb_put_varint(o, TP_MACHINE_ID << 3 | PB_VARINT);
		o += pb_put_varint(o, p->machine);
	}
	*o++ = TP_SEQUENCE_FLAGS << 3 | PB_VARINT;
	*o++ = SEQ_NEEDS_INCREMENTAL_STATE;
	*o++ = TP_TIMESTAMP << 3 | PB_VARINT;
	o += pb_put_varint(o, ts);
	*o++ = TP_TRACK_EVENT << 3 | PB_LEN;
	b->open[b->depth++] = (size_t)(o - b->p);
	*o++ = 0;
	*o++ = TE_TYPE << 3 | PB_VARINT;
	*o++ = (uint8_t)type;
	*o++ = TE_TRACK_UUID << 3 | PB_VARINT;
	o += pb_put_varint(o, track);
	b->len = (size_t)(o - b->p);
}

static void event_names(struct pftrace *p, const char *cat, const char *name, bool name_static)
{
	pb_buf__varint(&p->out, TE_CATEGORY_IIDS, intern_static(p, IK_CATEGORY, cat));
	pb_buf__varint(&p->out, TE_NAME_IID, name_static ? intern_static(p, IK_NAME, name) :
				       intern(p, IK_NAME, name, strlen(name), false));
}

static void event_tail(struct pftrace *p)
{
	pb_buf__end(&p->out);
	packet_end(p);
}

void pftrace__slice_begin(struct pftrace *p, uint64_t ts, uint64_t track, const char *cat,
			  const char *name, bool name_static, const struct tl_args *a,
			  const struct pftrace_flows *f)
{
	p->in_slice = true;
	event_head(p, ts, track, TYPE_SLICE_BEGIN);
	event_names(p, cat, name, name_static);
	if (a)
		put_args(p, TE_DEBUG_ANNOTATIONS, a, 0, a->n, false);
	if (f) {
		for (size_t i = 0; i < f->nout; i++)
			pb_buf__fixed64(&p->out, TE_FLOW_IDS, f->out[i]);
		for (size_t i = 0; i < f->nin; i++)
			pb_buf__fixed64(&p->out, TE_TERMINATING_FLOW_IDS, f->in[i]);
	}
	event_tail(p);
}

void pftrace__slice_end(struct pftrace *p, uint64_t ts, uint64_t track)
{
	p->in_slice = false;
	event_head(p, ts, track, TYPE_SLICE_END);
	event_tail(p);
}

void pftrace__instant(struct pftrace *p, uint64_t ts, uint64_t track, const char *cat,
		      const char *name, const struct tl_args *a)
{
	event_head(p, ts, track, TYPE_INSTANT);
	event_names(p, cat, name, true);
	if (a)
		put_args(p, TE_DEBUG_ANNOTATIONS, a, 0, a->n, false);
	event_tail(p);
}

void pftrace__counter(struct pftrace *p, uint64_t ts, uint64_t track, double v)
{
	event_head(p, ts, track, TYPE_COUNTER);
	pb_buf__double(&p->out, TE_DOUBLE_COUNTER_VALUE, v);
	event_tail(p);
}

/* ---- for the other writers of packets (pftrace_priv.h) ---- */

void pftrace__raw_packet(struct pftrace *p, uint32_t field, const struct pb_buf *body)
{
	pb_buf__begin(&p->out, TRACE_PACKET);
	pb_buf__varint(&p->out, TP_SEQUENCE_ID, p->seq);
	if (p->machine)
		pb_buf__varint(&p->out, TP_MACHINE_ID, p->machine);
	pb_buf__append_msg(&p->out, field, body);
	pb_buf__end(&p->out);
	p->packets++;
	if (!p->err && pb_buf__error(body))
		p->err = pb_buf__error(body);
	if (p->out.len >= OUT_FLUSH_AT && !p->in_slice)
		pftrace__flush(p, false);
}

void pftrace__put_packet(struct pftrace *p, const struct pb_buf *pkt)
{
	pb_buf__append_msg(&p->out, TRACE_PACKET, pkt);
	p->packets++;
	if (!p->err && pb_buf__error(pkt))
		p->err = pb_buf__error(pkt);
	if (p->out.len >= OUT_FLUSH_AT && !p->in_slice)
		pftrace__flush(p, false);
}

int64_t pftrace__boot_minus_mono(const struct pftrace *p) { return p->boot_minus_mono; }
uint32_t pftrace__machine_id(const struct pftrace *p) { return p->machine; }
struct pftrace_prof **pftrace__prof(struct pftrace *p) { return &p->prof; }
struct pftrace_ftrace **pftrace__ftrace(struct pftrace *p) { return &p->ft; }
void pftrace__fail(struct pftrace *p, int err) { if (!p->err) p->err = err; }
