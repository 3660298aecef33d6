// SPDX-License-Identifier: MIT
/*
 * unit_stats — the STATS record across builds (capture.h): a snapshot of
 * this build, of a build with the first 13 counters only, of a 10-counter
 * ABI 1 build and of a build with more counters than this one, each read
 * back with every counter, user counter, records and final where it was;
 * and a reader built before the counters that follow the fixed part finds
 * its own fields in this build's record.
 */
#include <stddef.h>
#include <string.h>
#include "capture/capture.h"
#include "capture/cap_drops.h"
#include "lib/units.h"
#include "unit.h"

/* A record as laid out by a build with nbpf counters (nbpf <= GPUIO_STATS_BPF_FIXED:
 * all before user[]; more: the first GPUIO_STATS_BPF_FIXED, then user[].., then the
 * rest), counter i = 100 + i, user = 7, 8, records 9, final 1. */
static size_t make(unsigned char *buf, unsigned nbpf)
{
	unsigned fixed = nbpf < GPUIO_STATS_BPF_FIXED ? nbpf : GPUIO_STATS_BPF_FIXED, i;
	struct gpuio_hdr *h = (void *)buf;
	__u64 *w = (__u64 *)(buf + sizeof(*h)), tail[3] = { 7, 8, 9 };
	__u32 fin[2] = { 1, 0 };
	size_t size;

	memset(buf, 0, GPUIO_REC_SIZE_MAX);
	for (i = 0; i < fixed; i++)
		*w++ = 100 + i;
	memcpy(w, tail, sizeof(tail));
	w += 3;
	memcpy(w, fin, sizeof(fin));
	w++;
	for (; i < nbpf; i++)
		*w++ = 100 + i;
	size = (size_t)((unsigned char *)w - buf);
	h->type = GPUIO_REC_STATS;
	h->size = (__u16)size;
	h->ts = 42;
	return size;
}

static void read_back(unsigned nbpf, const char *what)
{
	static unsigned char buf[GPUIO_REC_SIZE_MAX];
	struct gpuio_stats_event s;
	unsigned bad = 0;

	make(buf, nbpf);
	gpuio_stats__from_record((void *)buf, &s);
	for (unsigned i = 0; i < GPUIO_STAT_MAX; i++)
		bad += gpuio_stats__bpf(&s, i) != (i < nbpf ? 100 + i : 0);
	CHECK(!bad, "%s: %u counters read wrong", what, bad);
	CHECK(s.user[0] == 7 && s.user[1] == 8 && s.records == 9 && s.final == 1 && s.hdr.ts == 42,
	      "%s: user %llu %llu, records %llu, final %u", what, (unsigned long long)s.user[0],
	      (unsigned long long)s.user[1], (unsigned long long)s.records, s.final);
	CHECK(s.hdr.size == sizeof(s), "%s: expanded to this build's size (%u)", what, s.hdr.size);
	/* the reader sanitizes in place: the same */
	CHECK(gpuio_rec__sanitize(buf) == 0 && !memcmp(buf, &s, sizeof(s)),
	      "%s: sanitized in place differs", what);
}

/* The record before counters followed the fixed part, as its readers see it. */
struct stats_v2 {
	struct gpuio_hdr hdr;
	__u64 bpf[GPUIO_STATS_BPF_FIXED];
	__u64 user[GPUIO_USTAT_MAX];
	__u64 records;
	__u32 final;
	__u32 pad;
};

int main(void)
{
	struct gpuio_stats_event s;
	struct stats_v2 old;
	__u64 all[GPUIO_STAT_MAX];

	CHECK(GPUIO_STATS_V1_SIZE == make((unsigned char[GPUIO_REC_SIZE_MAX]){ 0 }, 10),
	      "a 10-counter record is GPUIO_STATS_V1_SIZE");
	read_back(GPUIO_STAT_MAX, "this build");
	read_back(GPUIO_STATS_BPF_FIXED, "13 counters");
	read_back(10, "ABI 1, 10 counters");
	read_back(GPUIO_STAT_MAX + 2 < 40 ? GPUIO_STAT_MAX + 2 : 40, "a newer build");

	/* written by this build, read by one that knows the fixed part only */
	memset(&s, 0, sizeof(s));
	for (unsigned i = 0; i < GPUIO_STAT_MAX; i++)
		all[i] = 1000 + i;
	gpuio_stats__set_bpf(&s, all);
	s.user[GPUIO_USTAT_WRITE_ERRORS] = 5;
	s.records = 77;
	s.final = 1;
	memcpy(&old, &s, sizeof(old));
	CHECK(old.bpf[GPUIO_STAT_RB_DROP_SCHED] == 1000 + GPUIO_STAT_RB_DROP_SCHED &&
	      old.user[GPUIO_USTAT_WRITE_ERRORS] == 5 && old.records == 77 && old.final == 1,
	      "an older reader: sched drops %llu, write errors %llu, records %llu, final %u",
	      (unsigned long long)old.bpf[GPUIO_STAT_RB_DROP_SCHED],
	      (unsigned long long)old.user[GPUIO_USTAT_WRITE_ERRORS],
	      (unsigned long long)old.records, old.final);
	CHECK(gpuio_stats__bpf(&s, GPUIO_STAT_MAX - 1) == 1000 + GPUIO_STAT_MAX - 1 &&
	      gpuio_stats__bpf(&s, GPUIO_STAT_MAX) == 0, "the last counter, and one past it");
	CHECK(gpuio_stats__dropped(&s) > 5, "dropped counts the counters after the fixed part");
	return unit_done("unit_stats");
}
