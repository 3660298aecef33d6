// SPDX-License-Identifier: MIT
/*
 * unit_sched_tab — the switch and wake-up table (model/sched_tab.c): records
 * added out of time order come back sorted by time, ties in capture order
 * (the index sort and its in-place permutation), with every field intact;
 * the chain's breaks land in the side table at the entries they belong to;
 * threads are named by number, once each.
 */
#include <stdlib.h>
#include <string.h>
#include "model/sched_tab.h"
#include "unit.h"

#define N 50000

static void rec(struct gpuio_sched_event *e, unsigned kind, unsigned cpu, unsigned tid,
		unsigned otid, unsigned long long ts, unsigned flags)
{
	memset(e, 0, sizeof(*e));
	e->hdr.type = GPUIO_REC_SCHED;
	e->hdr.size = sizeof(*e);
	e->hdr.pid = tid;
	e->hdr.tid = tid;
	e->hdr.cpu = cpu;
	e->hdr.ts = ts;
	e->kind = kind;
	e->flags = flags;
	e->other_pid = otid;
	e->other_tid = otid;
	e->prev_state = kind == GPUIO_SCHED_SWITCH ? 1 : 0;
	e->waker_seq = kind == GPUIO_SCHED_SWITCH ? 0 : tid + 7;
	e->target_cpu = cpu;
	e->prio = 120;
	memcpy(e->comm, "x", 1);
}

int main(void)
{
	struct sched_tab t = { 0 };
	struct gpuio_sched_event e;
	const struct sched_gap *g;
	size_t bad = 0;

	CHECK(sizeof(struct sched_ent) == 32, "sched_ent is %zu bytes", sizeof(struct sched_ent));
	/* out of order, many ties: ts = (i * 7919) % 1000; tid = i (capture order) */
	srand(3);
	for (unsigned i = 0; i < N; i++) {
		rec(&e, GPUIO_SCHED_WAKE, i % 8, i + 1, 0, 1000 + (i * 7919ull) % 1000, 0);
		CHECK(sched_tab__add(&t, &e) == 0, "add %u", i);
	}
	CHECK(sched_tab__sort(&t) == 0, "sort");
	for (size_t i = 1; i < t.n; i++) {
		const struct sched_ent *a = &t.ev[i - 1], *b = &t.ev[i];

		if (a->ts > b->ts || (a->ts == b->ts && sched_tid(&t, a) >= sched_tid(&t, b)))
			bad++;
	}
	CHECK(bad == 0, "%zu entries out of (time, capture) order", bad);
	bad = 0;
	for (size_t i = 0; i < t.n; i++) {
		const struct sched_ent *a = &t.ev[i];
		uint32_t tid = sched_tid(&t, a);

		if (a->ts != 1000 + ((tid - 1) * 7919ull) % 1000 || a->waker_seq != tid + 7 ||
		    sched_pid(&t, a) != tid || a->cpu != (tid - 1) % 8 || a->prio != 120 || a->kind != GPUIO_SCHED_WAKE ||
		    strcmp(sched_tab__comm(&t, a->comm), "x"))
			bad++;
	}
	CHECK(bad == 0, "%zu entries changed by the sort", bad);
	CHECK(t.nkeys == N + 1, "%zu thread keys for %d threads and the interrupt", t.nkeys, N);
	CHECK(t.ngap == 0 && t.gaps == 0, "wake-ups make no break: %zu", t.ngap);
	sched_tab__free(&t);

	/* CPU 0: 10 on, 10 off, then 11 leaves without being seen coming on: a bridge
	 * at entry 2; 12 comes on CPU 1 while the chain has it on CPU 0 (left). */
	rec(&e, GPUIO_SCHED_SWITCH, 0, 0, 10, 100, GPUIO_SF_NEXT_TRACED);
	sched_tab__add(&t, &e);
	rec(&e, GPUIO_SCHED_SWITCH, 0, 10, 0, 200, GPUIO_SF_PREV_TRACED);
	sched_tab__add(&t, &e);
	rec(&e, GPUIO_SCHED_SWITCH, 0, 11, 12, 300, GPUIO_SF_PREV_TRACED | GPUIO_SF_NEXT_TRACED);
	sched_tab__add(&t, &e);
	rec(&e, GPUIO_SCHED_SWITCH, 1, 0, 12, 400, GPUIO_SF_NEXT_TRACED);
	sched_tab__add(&t, &e);
	CHECK(sched_tab__sort(&t) == 0, "sort");
	CHECK(t.ngap == 2 && t.gaps == 2, "breaks %zu, gaps %llu", t.ngap, (unsigned long long)t.gaps);
	CHECK(!sched_tab__gap(&t, 0) && !sched_tab__gap(&t, 1), "no break at 0, 1");
	g = sched_tab__gap(&t, 2);
	CHECK(g && g->bridge_at == 201 && g->bridge_from == 0 && !g->left_at, "bridge at 2");
	g = sched_tab__gap(&t, 3);
	CHECK(g && !g->bridge_at && g->left_at == 399 && g->left_cpu == 0, "left at 3");
	sched_tab__free(&t);
	return unit_done("unit_sched_tab");
}
