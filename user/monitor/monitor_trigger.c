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

int monitor_triggers__add(struct monitor_triggers *ts, const char *expr)
{
	static const struct { const char *name; enum mon_trigger_kind kind; } names[] = {
		{ "vfs_latency", MON_TRIG_VFS_LATENCY },
		{ "block_latency", MON_TRIG_BLOCK_LATENCY },
		{ "gpu_idle", MON_TRIG_GPU_IDLE },
	};
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
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		if (strlen(names[i].name) == nlen && !strncmp(expr, names[i].name, nlen)) {
			t->kind = names[i].kind;
			t->threshold_ns = parse_dur(gt + 1 + strspn(gt + 1, " "));
			if (!t->threshold_ns)
				goto bad;
			snprintf(t->expr, sizeof(t->expr), "%s", expr);
			ts->n++;
			return 0;
		}
	}
bad:
	pr_err("--trigger '%s': expected NAME>DURATION with NAME one of vfs_latency, "
	       "block_latency, gpu_idle (e.g. 'vfs_latency>200ms', 'gpu_idle>5s')", expr);
	return -EINVAL;
}

void monitor_triggers__arm(struct monitor_triggers *ts, bool have_gpu)
{
	ts->pending = -1;
	for (int i = 0; i < ts->n; i++) {
		struct mon_trigger *t = &ts->t[i];

		t->armed = t->kind != MON_TRIG_GPU_IDLE || have_gpu;
		if (!t->armed)
			pr_warn("trigger '%s' needs GPU data and there is none on this host "
				"(no NVML; CUDA uprobe counts are pending): it will never fire", t->expr);
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
