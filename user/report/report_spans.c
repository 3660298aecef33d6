// SPDX-License-Identifier: MIT
/* report_spans.c — sets of time spans: add, sort and merge, overlap, difference. */
#include <errno.h>
#include <stdlib.h>
#include "report/report_priv.h"

int rpt_spans_add(struct rpt_spans *v, uint64_t s, uint64_t e)
{
	if (e <= s)
		return 0;
	if (array_grow((void **)&v->a, &v->cap, v->n + 1, sizeof(*v->a)))
		return -ENOMEM;
	v->a[v->n++] = (struct rpt_span){ s, e };
	return 0;
}

static int by_start(const void *a, const void *b)
{
	const struct rpt_span *x = a, *y = b;

	return x->s < y->s ? -1 : x->s > y->s;
}

/* Sort and merge overlapping spans. */
void rpt_spans_norm(struct rpt_spans *v)
{
	size_t k = 0;

	if (v->n < 2)           /* nothing to merge; and qsort must not see a NULL array */
		return;
	qsort(v->a, v->n, sizeof(*v->a), by_start);
	for (size_t i = 0; i < v->n; i++) {
		if (k && v->a[i].s <= v->a[k - 1].e) {
			if (v->a[i].e > v->a[k - 1].e)
				v->a[k - 1].e = v->a[i].e;
		} else {
			v->a[k++] = v->a[i];
		}
	}
	v->n = k;
}

/* The first of the (normalised) spans v that ends after s: a binary search,
 * so that a pass over a thread's intervals stays O(n log n). */
static size_t first_after(const struct rpt_spans *v, uint64_t s)
{
	size_t lo = 0, hi = v->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (v->a[mid].e <= s)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* ns of [s, e) inside the (normalised) spans v */
uint64_t rpt_spans_overlap(const struct rpt_spans *v, uint64_t s, uint64_t e)
{
	uint64_t t = 0;

	for (size_t i = first_after(v, s); i < v->n && v->a[i].s < e; i++) {
		uint64_t a = v->a[i].s > s ? v->a[i].s : s, b = v->a[i].e < e ? v->a[i].e : e;

		if (b > a)
			t += b - a;
	}
	return t;
}

/* [s, e) minus the (normalised) spans v, as spans appended to out */
int rpt_spans_minus(const struct rpt_spans *v, uint64_t s, uint64_t e, struct rpt_spans *out)
{
	uint64_t at = s;

	for (size_t i = first_after(v, s); i < v->n && v->a[i].s < e && at < e; i++) {
		if (v->a[i].s > at && rpt_spans_add(out, at, v->a[i].s))
			return -ENOMEM;
		if (v->a[i].e > at)
			at = v->a[i].e;
	}
	return at < e ? rpt_spans_add(out, at, e) : 0;
}
