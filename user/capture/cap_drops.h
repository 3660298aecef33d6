/* SPDX-License-Identifier: MIT */
/*
 * cap_drops.h — the counters that mean an event was lost, declared once (as
 * cap_layers.h declares the attach layers): a row per counter with its JSON
 * key, the stats array it is in and its words, in groups that the texts list
 * together. `gpuio info` (text and JSON), the timeline's info and the trace's
 * end warnings walk it; a new counter is one row.
 *
 * A JSON renderer lists every counter the capture's tracer had:
 *
 *	for (size_t i = 0; i < gpuio_ndrop_counters; i++) {
 *		const struct gpuio_drop_counter *c = &gpuio_drop_counters[i];
 *
 *		if (gpuio_drop_counter__listed(c, s))
 *			put(c->name, gpuio_drop_counter__value(c, s));
 *	}
 *
 * a text one takes its words whole: gpuio_drops__total() beside the total
 * (gpuio_stats__dropped), then each gpuio_drop_group__line() on a line.
 */
#ifndef GPUIO_CAP_DROPS_H
#define GPUIO_CAP_DROPS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct gpuio_cap_header;
struct gpuio_stats_event;

/* Which text lists drops: `gpuio info`, or the trace's warnings at its end. */
enum gpuio_drop_text {
	GPUIO_DROPS_INFO,
	GPUIO_DROPS_WARN,
};

/* Where a text lists a group of counters. */
enum gpuio_drop_place {
	GPUIO_DROP_UNSAID,      /* in the total only */
	GPUIO_DROP_TOTAL,       /* beside the total, groups separated by "; " */
	GPUIO_DROP_OWN,         /* on a line (a warning) of its own */
};

struct gpuio_drop_group {
	const char *head;               /* words before its counters ("ring buffer full"); NULL: none */
	enum gpuio_drop_place info;     /* where `gpuio info` lists it */
	int layer;                      /* info's own line only where the header names a mode
					 * for this layer (enum gpuio_layer); -1: where the
					 * capture's tracer had one of its counters */
	const char *warn_head;          /* words before its counters in its own warning; NULL: none */
	enum gpuio_drop_place warn;     /* where the trace's end warnings list it */
};
extern const struct gpuio_drop_group gpuio_drop_groups[];
extern const size_t gpuio_ndrop_groups;

struct gpuio_drop_counter {
	bool user;                      /* a userspace counter, in the stats' user[] */
	int idx;                        /* enum gpuio_ustat when user, else enum gpuio_stat */
	const char *name;               /* JSON key: `gpuio info --json`, the timeline's info */
	const struct gpuio_drop_group *group;
	const char *label;              /* words before its count in a list ("vfs 3"); NULL: not listed */
	const char *warn;               /* words after its count in its own warning; NULL: not said */
};
extern const struct gpuio_drop_counter gpuio_drop_counters[];
extern const size_t gpuio_ndrop_counters;

/* Counter c of a stats snapshot (0 where the snapshot's build had none). */
__u64 gpuio_drop_counter__value(const struct gpuio_drop_counter *c,
				const struct gpuio_stats_event *s);
/*
 * Whether a listing of drops shows c: when the capture's tracer had the
 * counter (the stats record's nbpf: older tracers have fewer), so that older
 * captures list what they always did and a counter not kept is not a 0.
 */
bool gpuio_drop_counter__listed(const struct gpuio_drop_counter *c,
				const struct gpuio_stats_event *s);
/* Events lost: the sum of the drop counters. */
__u64 gpuio_stats__dropped(const struct gpuio_stats_event *s);

/*
 * The groups `who` lists beside the total, into buf:
 * "ring buffer full: vfs 0, block 0, ...; capture write errors 0".
 */
void gpuio_drops__total(enum gpuio_drop_text who, const struct gpuio_stats_event *s,
			char *buf, size_t len);
/*
 * Group g as a line of its own of `who`, into buf: "HEAD: LABEL N, ..."
 * (info), "WARN_HEAD: N WARN, ..." (warn). Returns whether `who` shows that
 * line: info where its layer's mode is named in h (where it has none, where
 * the tracer had one of its counters), warn where one of them is not 0.
 */
bool gpuio_drop_group__line(const struct gpuio_drop_group *g, enum gpuio_drop_text who,
			    const struct gpuio_cap_header *h, const struct gpuio_stats_event *s,
			    char *buf, size_t len);

#endif /* GPUIO_CAP_DROPS_H */
