// SPDX-License-Identifier: MIT
/*
 * report_timeline.c — time series for the report's charts: a fixed number of
 * points over the run, spans spread over the points they cover.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include "model/calls.h"
#include "report/report_model.h"
#include "report/report_priv.h"

/* ---- timelines ---- */

int rpt_series_new(struct rpt_model *m, struct rpt_series **out)
{
	struct rpt_series *s = calloc(1, sizeof(*s));

	if (!s || array_grow((void **)&m->series, &m->cseries, m->nseries + 1,
			   sizeof(*m->series))) {
		free(s);
		return -ENOMEM;
	}
	m->series[m->nseries++] = s;
	*out = s;
	return 0;
}

/* Make t fit the timeline, halving the resolution as often as needed. */
void rpt_tl_fit(struct rpt_model *m, uint64_t t)
{
	while (t > m->tl_t0 && (t - m->tl_t0) / m->tl_width >= RPT_TL_BUCKETS &&
	       m->tl_width < (1ull << 58)) {
		for (size_t k = 0; k < m->nseries; k++) {
			double *v = m->series[k]->v;

			for (unsigned i = 0; i < RPT_TL_BUCKETS / 2; i++)
				v[i] = v[2 * i] + v[2 * i + 1];
			for (unsigned i = RPT_TL_BUCKETS / 2; i < RPT_TL_BUCKETS; i++)
				v[i] = 0;
		}
		m->tl_width *= 2;
	}
}

static unsigned tl_idx(const struct rpt_model *m, uint64_t t)
{
	uint64_t i = t > m->tl_t0 ? (t - m->tl_t0) / m->tl_width : 0;

	return i < RPT_TL_BUCKETS ? (unsigned)i : RPT_TL_BUCKETS - 1;
}

void rpt_tl_point(struct rpt_model *m, struct rpt_series *s, uint64_t t, double v)
{
	rpt_tl_fit(m, t);
	s->v[tl_idx(m, t)] += v;
}

/* Add w per ns of [a, b) to the buckets it covers. */
void rpt_tl_span(struct rpt_model *m, struct rpt_series *s, uint64_t a, uint64_t b, double w)
{
	unsigned i, j;

	if (b <= a)
		return;
	rpt_tl_fit(m, b);
	if (a < m->tl_t0)
		a = m->tl_t0;
	if (b <= a)
		return;
	i = tl_idx(m, a);
	j = tl_idx(m, b - 1);
	for (unsigned k = i; k <= j; k++) {
		uint64_t lo = m->tl_t0 + (uint64_t)k * m->tl_width, hi = lo + m->tl_width;
		uint64_t x = a > lo ? a : lo, y = b < hi ? b : hi;

		if (k == RPT_TL_BUCKETS - 1)
			y = b;
		if (y > x)
			s->v[k] += w * (double)(y - x);
	}
}
