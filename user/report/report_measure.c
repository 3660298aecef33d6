// SPDX-License-Identifier: MIT
/*
 * report_measure.c — the report's measures: latency histograms and
 * percentiles, ratios, access patterns, and how times, sizes and durations
 * are printed.
 */
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include "capture/cap_drops.h"
#include "model/calls.h"
#include "report/report_model.h"
#include "report/report_priv.h"
#include "lib/units.h"

/* ---- small helpers ---- */

uint64_t rpt_end_of(uint64_t ts, uint64_t dur)
{
	return dur > UINT64_MAX - ts ? UINT64_MAX : ts + dur;
}

static unsigned lat_idx(uint64_t v)
{
	unsigned k;

	if (v < RPT_LAT_SUB)
		return (unsigned)v;
	k = 63 - (unsigned)__builtin_clzll(v);         /* >= 2 */
	if (k > 40)
		return RPT_LAT_BUCKETS - 1;
	return RPT_LAT_SUB + (k - 2) * RPT_LAT_SUB + (unsigned)((v >> (k - 2)) & 3);
}

/* [lo, hi) of a lat bucket */
static void lat_bounds(unsigned i, uint64_t *lo, uint64_t *hi)
{
	unsigned k, sub;

	if (i < RPT_LAT_SUB) {
		*lo = i;
		*hi = i + 1;
		return;
	}
	k = (i - RPT_LAT_SUB) / RPT_LAT_SUB + 2;
	sub = (i - RPT_LAT_SUB) % RPT_LAT_SUB;
	*lo = (1ull << k) + (uint64_t)sub * (1ull << (k - 2));
	*hi = *lo + (1ull << (k - 2));
}

unsigned rpt_log2_idx(uint64_t v)
{
	unsigned k;

	if (!v)
		return 0;
	k = 64 - (unsigned)__builtin_clzll(v);   /* 1 -> 1, 2..3 -> 2, 4..7 -> 3 */
	return k < RPT_LOG2_BUCKETS ? k : RPT_LOG2_BUCKETS - 1;
}

int rpt_hist_add(struct rpt_hist *h, uint64_t v)
{
	if (!h->n) {
		h->min = h->max = h->first = v;
	} else {
		if (!h->b) {
			h->b = calloc(RPT_LAT_BUCKETS, sizeof(*h->b));
			if (!h->b)
				return -ENOMEM;
			h->b[lat_idx(h->first)]++;
		}
		h->b[lat_idx(v)]++;
		if (v < h->min)
			h->min = v;
		if (v > h->max)
			h->max = v;
	}
	h->n++;
	h->sum += v;
	return 0;
}

uint64_t rpt_hist__pct(const struct rpt_hist *h, double q)
{
	uint64_t want, seen = 0, lo, hi;

	if (!h->n)
		return 0;
	if (!h->b)
		return h->first;
	want = (uint64_t)(q * (double)h->n + 0.999999);
	if (want < 1)
		want = 1;
	for (unsigned i = 0; i < RPT_LAT_BUCKETS; i++) {
		seen += h->b[i];
		if (seen >= want) {
			uint64_t mid;

			lat_bounds(i, &lo, &hi);
			mid = lo + (hi - lo) / 2;
			/* never outside what was seen */
			return mid < h->min ? h->min : mid > h->max ? h->max : mid;
		}
	}
	return h->max;
}

double rpt_ratio(uint64_t hit, uint64_t all)
{
	return all ? (double)hit / (double)all : -1.0;
}

const char *rpt_pattern_name(enum rpt_pattern p)
{
	static const char *const n[] = { "sequential", "strided", "random" };

	return p < RPT_PAT_N ? n[p] : "?";
}

/* Sequential when >= 80% of a thread's successive calls continue where the
 * previous ended; strided when most of the rest repeat one stride. */
enum rpt_pattern rpt_file__pattern(const struct rpt_file *f, uint64_t *single)
{
	uint64_t all = f->pat[0] + f->pat[1] + f->pat[2];

	*single = !all;
	if (!all)
		return RPT_PAT_SEQ;
	if (f->pat[RPT_PAT_SEQ] * 10 >= all * 8)
		return RPT_PAT_SEQ;
	if ((f->pat[RPT_PAT_SEQ] + f->pat[RPT_PAT_STRIDED]) * 10 >= all * 8)
		return RPT_PAT_STRIDED;
	return RPT_PAT_RANDOM;
}

int64_t rpt_ts_rel_ns(const struct rpt_model *m, uint64_t t)
{
	return (int64_t)(t - m->hdr->monotonic_ns);
}

void rpt_fmt_wall(const struct rpt_model *m, uint64_t t, char *buf, size_t len)
{
	uint64_t ns = m->hdr->realtime_ns + (uint64_t)rpt_ts_rel_ns(m, t);
	time_t secs = (time_t)(ns / NSEC_PER_SEC);
	struct tm tm;
	char d[40];

	if (!m->hdr->realtime_ns || !gmtime_r(&secs, &tm)) {
		snprintf(buf, len, "?");
		return;
	}
	strftime(d, sizeof(d), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%06lluZ", d, (unsigned long long)(ns % NSEC_PER_SEC / 1000));
}

void rpt_fmt_bytes(uint64_t b, char *buf, size_t len)
{
	const char *const u[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	double v = (double)b;
	int i = 0;

	while (v >= 1024 && i < 5) {
		v /= 1024;
		i++;
	}
	if (!i)
		snprintf(buf, len, "%llu B", (unsigned long long)b);
	else
		snprintf(buf, len, "%.*f %s", v < 10 ? 2 : v < 100 ? 1 : 0, v, u[i]);
}

void rpt_fmt_dur(uint64_t ns, char *buf, size_t len)
{
	if (ns < 1000)
		snprintf(buf, len, "%llu ns", (unsigned long long)ns);
	else if (ns < 1000000)
		snprintf(buf, len, "%.1f us", (double)ns / 1e3);
	else if (ns < 10 * NSEC_PER_SEC)
		snprintf(buf, len, "%.*f ms", ns < 100000000 ? 2 : 1, (double)ns / 1e6);
	else
		snprintf(buf, len, "%.2f s", (double)ns / NS_PER_SEC_F);
}

uint64_t rpt_model__duration(const struct rpt_model *m)
{
	return m->last_ts > m->first_ts ? m->last_ts - m->first_ts : 0;
}

bool rpt_model__dropped(const struct rpt_model *m, uint64_t *n)
{
	const struct gpuio_stats_event *s = &m->f->stats;
	uint64_t d = m->cupti_dropped + m->gpu_write_errors;

	if (m->f->have_stats)
		d += gpuio_stats__dropped(s);
	*n = d;
	return m->f->have_stats;
}

/* Scheduler records the ring lost or shed (switches, wake-ups, what a sleep
 * was in); false when the capture has no final counts. */
bool rpt_model__sched_lost(const struct rpt_model *m, uint64_t *n)
{
	const struct gpuio_stats_event *s = &m->f->stats;

	*n = gpuio_stats__bpf(s, GPUIO_STAT_RB_DROP_SCHED) + gpuio_stats__bpf(s, GPUIO_STAT_RB_DROP_WAIT) +
	     gpuio_stats__bpf(s, GPUIO_STAT_SHED_SCHED);
	return m->f->have_stats;
}

/* A thread's wall time: first record .. last record (its process's exit for
 * the main thread, when known). */
uint64_t rpt_thread__wall(const struct rpt_model *m, const struct rpt_thread *t)
{
	uint64_t end = t->last_ts;
	uint64_t *v = kmap__get(&m->proc_map, t->pid, 0);

	if (v && t->tid == t->pid && m->procs[*v].exited && m->procs[*v].exit_ts > end)
		end = m->procs[*v].exit_ts;
	return end > t->first_ts ? end - t->first_ts : 0;
}

const char *rpt_proc_comm(const struct rpt_model *m, uint32_t pid)
{
	uint64_t *v = kmap__get(&m->proc_map, pid, 0);

	return v && m->procs[*v].comm[0] ? m->procs[*v].comm : "?";
}
