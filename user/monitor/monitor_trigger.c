// SPDX-License-Identifier: MIT
/* monitor_trigger.c — trigger expressions and their rate limit. See monitor_trigger.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model/calls.h"
#include "lib/log.h"
#include "monitor/monitor_agg.h"
#include "monitor/monitor_trigger.h"
#include "lib/units.h"

/* "200ms", "5s", "1.5s", "100us", "2m" -> ns; 0 on error. */
static __u64 parse_dur(const char *s)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || v <= 0)
		return 0;
	if (!strcmp(end, "ns")) return (__u64)v;
	if (!strcmp(end, "us")) return (__u64)(v * 1e3);
	if (!strcmp(end, "ms")) return (__u64)(v * 1e6);
	if (!strcmp(end, "s") || !*end) return (__u64)(v * NS_PER_SEC_F);
	if (!strcmp(end, "m")) return (__u64)(v * 60e9);
	return 0;
}

static const struct { const char *name; enum mon_trigger_kind kind; } kinds[] = {
	{ "vfs_latency", MON_TRIG_VFS_LATENCY },
	{ "block_latency", MON_TRIG_BLOCK_LATENCY },
	{ "gpu_idle", MON_TRIG_GPU_IDLE },
	{ "loop_data_wait", MON_TRIG_LOOP_DATA_WAIT },
};

const char *monitor_trigger__kind_name(enum mon_trigger_kind kind)
{
	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++)
		if (kinds[i].kind == kind)
			return kinds[i].name;
	return "?";
}

/* "0.5:2m" or "50%:2m" (the share, then how long it held); false on error. */
static bool parse_share(const char *s, struct mon_trigger *t)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s)
		return false;
	if (*end == '%') {
		v /= 100;
		end++;
	}
	if (v <= 0 || v >= 1 || *end != ':')
		return false;
	t->ratio = v;
	t->threshold_ns = parse_dur(end + 1);
	return t->threshold_ns != 0;
}

int monitor_triggers__add(struct monitor_triggers *ts, const char *expr)
{
	const char *gt = strchr(expr, '>');
	struct mon_trigger *t;
	size_t nlen;

	if (ts->n == MON_TRIGGERS_MAX) {
		pr_err("--trigger: at most %d triggers", MON_TRIGGERS_MAX);
		return -EINVAL;
	}
	t = &ts->t[ts->n];
	memset(t, 0, sizeof(*t));
	if (!gt)
		goto bad;
	nlen = (size_t)(gt - expr);
	while (nlen && expr[nlen - 1] == ' ')
		nlen--;
	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++) {
		if (strlen(kinds[i].name) == nlen && !strncmp(expr, kinds[i].name, nlen)) {
			const char *v = gt + 1 + strspn(gt + 1, " ");

			t->kind = kinds[i].kind;
			if (t->kind == MON_TRIG_LOOP_DATA_WAIT ? !parse_share(v, t) :
			    !(t->threshold_ns = parse_dur(v)))
				goto bad;
			snprintf(t->expr, sizeof(t->expr), "%s", expr);
			ts->n++;
			return 0;
		}
	}
bad:
	pr_err("--trigger '%s': expected NAME>DURATION with NAME one of vfs_latency, "
	       "block_latency, gpu_idle (e.g. 'vfs_latency>200ms', 'gpu_idle>5s'), or "
	       "loop_data_wait>SHARE:DURATION (e.g. 'loop_data_wait>0.5:2m', SHARE in 0..1 "
	       "or 1%%..99%%)", expr);
	return -EINVAL;
}

void monitor_triggers__arm(struct monitor_triggers *ts, bool have_gpu, bool have_loops)
{
	ts->pending = -1;
	for (int i = 0; i < ts->n; i++) {
		struct mon_trigger *t = &ts->t[i];

		t->armed = (t->kind != MON_TRIG_GPU_IDLE || have_gpu) &&
			   (t->kind != MON_TRIG_LOOP_DATA_WAIT || have_loops);
		if (!t->armed && t->kind == MON_TRIG_GPU_IDLE)
			pr_warn("trigger '%s' needs GPU data and there is none on this host "
				"(no NVML; CUDA uprobe counts are pending): it will never fire", t->expr);
		else if (!t->armed)
			pr_warn("trigger '%s' needs the loops' wait, and thread time is off "
				"(--no-thread-time, or the kernel lacks it): it will never fire", t->expr);
		else
			pr_info("trigger armed: %s (at most one dump per %.0fs)", t->expr,
				ts->interval_ns / NS_PER_SEC_F);
	}
}

static void match(struct monitor_triggers *ts, int i, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void match(struct monitor_triggers *ts, int i, const char *fmt, ...)
{
	va_list ap;

	ts->t[i].matched++;
	if (ts->pending >= 0)
		return;
	ts->pending = i;
	va_start(ap, fmt);
	vsnprintf(ts->why, sizeof(ts->why), fmt, ap);
	va_end(ap);
}

void monitor_triggers__event(void *ctx, const struct gpuio_hdr *h)
{
	struct monitor_triggers *ts = ctx;

	for (int i = 0; i < ts->n; i++) {
		const struct mon_trigger *t = &ts->t[i];

		if (!t->armed)
			continue;
		if (t->kind == MON_TRIG_VFS_LATENCY && h->type == GPUIO_REC_VFS) {
			const struct gpuio_vfs_event *e = (const void *)h;

			if (e->dur_ns > t->threshold_ns)
				match(ts, i, "%s by pid %u tid %u took %.1f ms", gpuio_call__name(e->call),
				      h->pid, h->tid, e->dur_ns / 1e6);
		} else if (t->kind == MON_TRIG_BLOCK_LATENCY && h->type == GPUIO_REC_BLOCK) {
			const struct gpuio_block_event *b = (const void *)h;
			__u64 lat = b->complete_ns - h->ts;

			if (lat > t->threshold_ns)
				match(ts, i, "block request of %u bytes on dev %u:%u took %.1f ms", b->bytes,
				      b->dev >> 20, b->dev & 0xfffff, lat / 1e6);
		}
	}
}

void monitor_triggers__gpu(struct monitor_triggers *ts, bool busy, __u64 now)
{
	if (busy) {
		ts->gpu_idle_since = 0;
		return;
	}
	if (!ts->gpu_idle_since)
		ts->gpu_idle_since = now;
	for (int i = 0; i < ts->n; i++)
		if (ts->t[i].armed && ts->t[i].kind == MON_TRIG_GPU_IDLE &&
		    now - ts->gpu_idle_since > ts->t[i].threshold_ns)
			match(ts, i, "every GPU idle for %.1f s", (now - ts->gpu_idle_since) / NS_PER_SEC_F);
}

/* One period of a cgroup's loops against each loop_data_wait trigger. */
static void loop_period(struct monitor_triggers *ts, struct mon_loop_watch *w, __u64 now,
			double ratio)
{
	for (int i = 0; i < ts->n; i++) {
		struct mon_trigger *t = &ts->t[i];

		if (!t->armed || t->kind != MON_TRIG_LOOP_DATA_WAIT)
			continue;
		if (ratio <= t->ratio) {
			w->above_since = 0;
			continue;
		}
		if (!w->above_since)
			w->above_since = w->t0;
		if (now - w->above_since >= t->threshold_ns) {
			if (ts->pending < 0)
				ts->match_cgid = w->cgid;
			match(ts, i, "the loops of cgroup id %llu waited for data %.0f%% of their time "
			      "for %.0f s", (unsigned long long)w->cgid, ratio * 100,
			      (now - w->above_since) / NS_PER_SEC_F);
			w->above_since = now;    /* the next match after another DUR */
		}
	}
}

struct loop_tick { struct monitor_triggers *ts; __u64 now, period; };

static void loop_seen(void *ctx, __u64 cgid, __u64 loop_ns, __u64 data_ns)
{
	struct loop_tick *lt = ctx;
	struct monitor_triggers *ts = lt->ts;
	struct mon_loop_watch *w = NULL, *oldest = &ts->loops[0];

	for (int i = 0; i < MON_LOOP_WATCH_MAX && !w; i++) {
		if (ts->loops[i].t0 && ts->loops[i].cgid == cgid)
			w = &ts->loops[i];
		else if (ts->loops[i].t0 < oldest->t0)
			oldest = &ts->loops[i];
	}
	if (!w) {                        /* new (or the stalest slot given up) */
		*oldest = (struct mon_loop_watch){ .cgid = cgid, .loop0 = loop_ns, .data0 = data_ns,
						   .t0 = lt->now };
		return;
	}
	if (lt->now - w->t0 < lt->period)
		return;
	w->last_ratio = loop_ns > w->loop0 ? (double)(data_ns - w->data0) / (double)(loop_ns - w->loop0) : 0;
	loop_period(ts, w, lt->now, w->last_ratio);
	w->loop0 = loop_ns;
	w->data0 = data_ns;
	w->t0 = lt->now;
}

void monitor_triggers__loops(struct monitor_triggers *ts, struct monitor_agg *agg, __u64 now)
{
	struct loop_tick lt = { .ts = ts, .now = now, .period = 5 * NSEC_PER_SEC };
	bool any = false;

	for (int i = 0; i < ts->n; i++) {
		if (!ts->t[i].armed || ts->t[i].kind != MON_TRIG_LOOP_DATA_WAIT)
			continue;
		any = true;
		/* a share held for DUR: periods of 5 s, or DUR/4 when it is short */
		if (ts->t[i].threshold_ns / 4 < lt.period)
			lt.period = ts->t[i].threshold_ns / 4 > NSEC_PER_SEC ? ts->t[i].threshold_ns / 4 :
				    NSEC_PER_SEC;
	}
	if (any)
		monitor_agg__each_loop(agg, loop_seen, &lt);
}

int monitor_triggers__take(struct monitor_triggers *ts, __u64 now)
{
	int i = ts->pending;

	if (i < 0)
		return -1;
	ts->pending = -1;
	if (ts->last_fire_ns && now - ts->last_fire_ns < ts->interval_ns) {
		/* one line per interval: the first suppression says it, the rest count */
		ts->t[i].suppressed++;
		if (!ts->told)
			pr_info("trigger %s matched again (%s): no dump, at most one per %.0fs "
				"(--trigger-interval)", ts->t[i].expr, ts->why, ts->interval_ns / NS_PER_SEC_F);
		ts->told = true;
		return -1;
	}
	ts->told = false;
	ts->last_fire_ns = now;
	ts->t[i].fired++;
	return i;
}

void monitor_triggers__metrics(struct mon_buf *b, void *ctx)
{
	struct monitor_triggers *ts = ctx;

	if (!ts->n)
		return;
	mon_buf__printf(b, "# HELP gpuio_trigger_matches_total Events that matched a trigger.\n"
			"# TYPE gpuio_trigger_matches_total counter\n");
	for (int i = 0; i < ts->n; i++) {
		mon_buf__printf(b, "gpuio_trigger_matches_total{trigger=\"");
		mon_buf__label(b, ts->t[i].expr);
		mon_buf__printf(b, "\"} %llu\n", (unsigned long long)ts->t[i].matched);
	}
	mon_buf__printf(b, "# HELP gpuio_trigger_dumps_total Dumps a trigger caused.\n"
			"# TYPE gpuio_trigger_dumps_total counter\n");
	for (int i = 0; i < ts->n; i++) {
		mon_buf__printf(b, "gpuio_trigger_dumps_total{trigger=\"");
		mon_buf__label(b, ts->t[i].expr);
		mon_buf__printf(b, "\"} %llu\n", (unsigned long long)ts->t[i].fired);
	}
	mon_buf__printf(b, "# HELP gpuio_trigger_suppressed_total Trigger matches not dumped (rate limit).\n"
			"# TYPE gpuio_trigger_suppressed_total counter\n");
	for (int i = 0; i < ts->n; i++) {
		mon_buf__printf(b, "gpuio_trigger_suppressed_total{trigger=\"");
		mon_buf__label(b, ts->t[i].expr);
		mon_buf__printf(b, "\"} %llu\n", (unsigned long long)ts->t[i].suppressed);
	}
}
