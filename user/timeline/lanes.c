// SPDX-License-Identifier: MIT
/*
 * lanes.c — lanes: overlapping block requests and io_uring calls placed on
 * the first free lane of their disk or process, and the disks' throughput
 * buckets.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "lib/sort.h"
#include "timeline/timeline.h"
#include "timeline/timeline_priv.h"

/* ---- layout: lanes, buckets, sort order ---- */

static int cmp_blk(const void *pa, const void *pb, void *ctx)
{
	const struct tl_blk *a = pa, *b = pb;

	(void)ctx;
	if (a->disk != b->disk)
		return a->disk < b->disk ? -1 : 1;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	if (a->complete != b->complete)
		return a->complete < b->complete ? -1 : 1;
	return a->sector < b->sector ? -1 : a->sector > b->sector;
}

uint64_t tl_blk_end(const struct tl_blk *b)
{
	return b->complete > b->ts ? b->complete : b->ts;
}

/*
 * Greedy lanes: a slice takes the lowest-numbered lane whose last slice ended
 * by its start, else a new lane. Busy lanes sit in a min-heap by end time,
 * free ones in a min-heap by number, so deep queues cost O(log lanes).
 */
struct tl_lane_busy {
	uint64_t end;
	uint32_t lane;
};

void tl_lanes__reset(struct tl_lanes *l)
{
	l->nbusy = l->nfree = 0;
	l->nlanes = 0;
}

void tl_lanes__free(struct tl_lanes *l)
{
	free(l->busy);
	free(l->free);
}

static void busy_down(struct tl_lane_busy *h, size_t n, size_t i)
{
	for (;;) {
		size_t c = 2 * i + 1;
		struct tl_lane_busy t;

		if (c >= n)
			return;
		if (c + 1 < n && h[c + 1].end < h[c].end)
			c++;
		if (h[i].end <= h[c].end)
			return;
		t = h[i], h[i] = h[c], h[c] = t;
		i = c;
	}
}

static void free_down(uint32_t *h, size_t n, size_t i)
{
	for (;;) {
		size_t c = 2 * i + 1;
		uint32_t t;

		if (c >= n)
			return;
		if (c + 1 < n && h[c + 1] < h[c])
			c++;
		if (h[i] <= h[c])
			return;
		t = h[i], h[i] = h[c], h[c] = t;
		i = c;
	}
}

int tl_lanes__assign(struct tl_lanes *l, uint64_t start, uint64_t end, uint32_t *lane)
{
	size_t i;

	/* lanes that finished by start become free */
	while (l->nbusy && l->busy[0].end <= start) {
		if (array_grow((void **)&l->free, &l->cfree, l->nfree + 1, sizeof(*l->free)))
			return -ENOMEM;
		i = l->nfree++;
		l->free[i] = l->busy[0].lane;
		for (; i && l->free[(i - 1) / 2] > l->free[i]; i = (i - 1) / 2) {
			uint32_t t = l->free[i];

			l->free[i] = l->free[(i - 1) / 2];
			l->free[(i - 1) / 2] = t;
		}
		l->busy[0] = l->busy[--l->nbusy];
		busy_down(l->busy, l->nbusy, 0);
	}
	if (array_grow((void **)&l->busy, &l->cbusy, l->nbusy + 1, sizeof(*l->busy)))
		return -ENOMEM;
	if (l->nfree) {
		*lane = l->free[0];
		l->free[0] = l->free[--l->nfree];
		free_down(l->free, l->nfree, 0);
	} else {
		*lane = ++l->nlanes;
	}
	i = l->nbusy++;
	l->busy[i] = (struct tl_lane_busy){ .end = end, .lane = *lane };
	for (; i && l->busy[(i - 1) / 2].end > l->busy[i].end; i = (i - 1) / 2) {
		struct tl_lane_busy t = l->busy[i];

		l->busy[i] = l->busy[(i - 1) / 2];
		l->busy[(i - 1) / 2] = t;
	}
	return 0;
}

static int cmp_dev_idx(const void *pa, const void *pb, void *arg)
{
	const struct tl_disk *devs = arg;
	uint32_t a = devs[*(const uint32_t *)pa].dev, b = devs[*(const uint32_t *)pb].dev;

	return a < b ? -1 : a > b;
}

int tl_layout_block(struct tl_model *x)
{
	uint64_t tmin = UINT64_MAX, tmax = 0, span;
	struct tl_lanes lanes = { 0 };
	int err = 0;

	/* disks with requests, numbered in dev_t order */
	x->disk_order = calloc(x->ndevs ? x->ndevs : 1, sizeof(*x->disk_order));
	if (!x->disk_order)
		return -ENOMEM;
	for (size_t i = 0; i < x->ndevs; i++)
		if (x->devs[i].nreq)
			x->disk_order[x->ndisks++] = (uint32_t)i;
	if (x->ndisks > 1)
		qsort_r(x->disk_order, x->ndisks, sizeof(*x->disk_order), cmp_dev_idx, x->devs);
	for (size_t i = 0; i < x->ndisks; i++)
		x->devs[x->disk_order[i]].index = (uint32_t)i;

	for (size_t i = 0; i < x->nblks; i++)
		x->blks[i].disk = x->devs[x->blks[i].dev_idx].index;
	/* stable, as qsort's merge sort was, without its copy of every request */
	err = sort_stable(x->blks, x->nblks, sizeof(*x->blks), cmp_blk, NULL);
	if (err)
		goto out;
	for (size_t i = 0; i < x->nblks; i++) {
		struct tl_blk *b = &x->blks[i];

		if (i == 0 || b->disk != x->blks[i - 1].disk)
			tl_lanes__reset(&lanes);
		err = tl_lanes__assign(&lanes, b->ts, tl_blk_end(b), &b->lane);
		if (err)
			goto out;
		if (b->lane > x->devs[b->dev_idx].nlanes)
			x->devs[b->dev_idx].nlanes = b->lane;
		if (b->ts < tmin)
			tmin = b->ts;
		if (tl_blk_end(b) > tmax)
			tmax = tl_blk_end(b);
	}
	if (!x->nblks)
		goto out;

	/* throughput buckets: <= MAX_BUCKETS of >= 1 ms over all requests */
	span = tmax - tmin;
	x->t0 = tmin;
	x->bucket_ns = span / MAX_BUCKETS + (span % MAX_BUCKETS != 0);
	if (x->bucket_ns < MIN_BUCKET_NS)
		x->bucket_ns = MIN_BUCKET_NS;
	x->nbuckets = (size_t)(span / x->bucket_ns) + 1;
	if (x->nbuckets > MAX_BUCKETS)
		x->nbuckets = MAX_BUCKETS;
	for (size_t i = 0; i < x->ndisks; i++) {
		struct tl_disk *d = &x->devs[x->disk_order[i]];

		d->bucket_bytes = calloc(x->nbuckets * 2, sizeof(double));
		if (!d->bucket_bytes) {
			err = -ENOMEM;
			goto out;
		}
	}
	for (size_t i = 0; i < x->nblks; i++) {
		const struct tl_blk *b = &x->blks[i];
		double *bb = x->devs[b->dev_idx].bucket_bytes;
		uint64_t s = b->issue >= b->ts && b->issue <= tl_blk_end(b) ? b->issue : b->ts;
		uint64_t e = tl_blk_end(b);
		size_t k0, k1;
		int col;

		if (b->op == GPUIO_BLK_READ)
			col = 0;
		else if (b->op == GPUIO_BLK_WRITE)
			col = 1;
		else
			continue;
		k0 = (size_t)((s - x->t0) / x->bucket_ns);
		k1 = (size_t)((e - x->t0) / x->bucket_ns);
		if (k1 >= x->nbuckets)
			k1 = x->nbuckets - 1;
		if (k0 > k1)
			k0 = k1;
		if (k0 == k1 || e == s) {
			bb[k1 * 2 + col] += b->bytes;
			continue;
		}
		/* spread over the service time, in proportion to the overlap */
		for (size_t k = k0; k <= k1; k++) {
			uint64_t bs = x->t0 + k * x->bucket_ns, be = bs + x->bucket_ns;
			uint64_t os = s > bs ? s : bs, oe = e < be ? e : be;

			if (k == k1)
				oe = e;
			if (oe > os)
				bb[k * 2 + col] += (double)b->bytes * (double)(oe - os) / (double)(e - s);
		}
	}
out:
	tl_lanes__free(&lanes);
	return err;
}

static int cmp_async(const void *pa, const void *pb, void *arg)
{
	const struct tl_async *as = arg;
	const struct tl_async *a = &as[*(const uint32_t *)pa], *b = &as[*(const uint32_t *)pb];

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->end < b->end ? -1 : a->end > b->end;
}

/* io_uring requests overlap on their thread: give them lanes per process. */
int tl_layout_async(struct tl_model *x)
{
	struct tl_lanes lanes = { 0 };
	uint32_t *idx;
	int err = 0;

	if (!x->nasyncs)
		return 0;
	idx = malloc(x->nasyncs * sizeof(*idx));
	if (!idx)
		return -ENOMEM;
	for (size_t i = 0; i < x->nasyncs; i++)
		idx[i] = (uint32_t)i;
	qsort_r(idx, x->nasyncs, sizeof(*idx), cmp_async, x->asyncs);
	for (size_t i = 0; i < x->nasyncs; i++) {
		struct tl_async *a = &x->asyncs[idx[i]];
		uint32_t before, lane;

		if (i == 0 || a->pid != x->asyncs[idx[i - 1]].pid)
			tl_lanes__reset(&lanes);
		before = lanes.nlanes;
		err = tl_lanes__assign(&lanes, a->start, a->end, &lane);
		if (err)
			break;
		if (lanes.nlanes > before) {
			struct tl_ulane *l;

			if (array_grow((void **)&x->ulanes, &x->culanes, x->nulanes + 1,
				     sizeof(*x->ulanes))) {
				err = -ENOMEM;
				break;
			}
			l = &x->ulanes[x->nulanes];
			l->pid = a->pid;
			l->n = lane;
			l->tid = TL_URING_TID_BASE + x->map.uring_base + (uint32_t)x->nulanes;
			x->nulanes++;
		}
		/* lanes of one process are contiguous in ulanes[], numbered from 1 */
		a->lane_tid = x->ulanes[x->nulanes - lanes.nlanes + lane - 1].tid;
	}
	free(idx);
	tl_lanes__free(&lanes);
	return err;
}
