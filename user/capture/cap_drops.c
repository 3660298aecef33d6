// SPDX-License-Identifier: MIT
/*
 * cap_drops.c — the drop counters and their groups (cap_drops.h): one row each.
 */
#include <stdarg.h>
#include <stdio.h>
#include "capture/capture.h"
#include "capture/cap_drops.h"
#include "capture/cap_layers.h"
#include "bpf/trace/cuda_spec.h"
#include "lib/units.h"

#define STR_(x) #x
#define STR(x) STR_(x)

/* The groups, in the order the texts list them. */
enum { G_RING, G_MAPS, G_CUDA, G_SCHED, G_SOCK, G_WAIT, G_FAULT, G_STACK, G_SHED, G_WRITE, G_COUNT };

const struct gpuio_drop_group gpuio_drop_groups[G_COUNT] = {
	[G_RING]  = { "ring buffer full", GPUIO_DROP_TOTAL, -1, NULL, GPUIO_DROP_TOTAL },
	[G_MAPS]  = { "maps full", GPUIO_DROP_TOTAL, -1, NULL, GPUIO_DROP_TOTAL },
	[G_CUDA]  = { "cuda calls", GPUIO_DROP_TOTAL, -1, "CUDA API calls lost", GPUIO_DROP_OWN },
	[G_SCHED] = { NULL, GPUIO_DROP_UNSAID, -1, NULL, GPUIO_DROP_OWN },
	[G_SOCK]  = { NULL, GPUIO_DROP_OWN, -1, NULL, GPUIO_DROP_OWN },
	[G_WAIT]  = { NULL, GPUIO_DROP_UNSAID, -1, NULL, GPUIO_DROP_UNSAID },
	/* counters of the fault layer's builds: info shows them with the layer */
	[G_FAULT] = { "page faults", GPUIO_DROP_OWN, GPUIO_LAYER_FAULT,
		      "page faults on file mappings lost", GPUIO_DROP_OWN },
	[G_STACK] = { NULL, GPUIO_DROP_OWN, -1, NULL, GPUIO_DROP_OWN },
	/* left out on purpose: the ring over 3/4 full (bpf/trace/common.bpf.h rb_shed) */
	[G_SHED]  = { "shed, the ring over 3/4 full", GPUIO_DROP_OWN, -1,
		      "shed while the ring buffer was over 3/4 full (the rest kept for file, disk and "
		      "process records; try a larger --ringbuf)", GPUIO_DROP_OWN },
	[G_WRITE] = { NULL, GPUIO_DROP_TOTAL, -1, NULL, GPUIO_DROP_UNSAID },
};
const size_t gpuio_ndrop_groups = G_COUNT;

#define BPF(i, key) .idx = GPUIO_STAT_##i, .name = key
#define G(g) .group = &gpuio_drop_groups[G_##g]

/* In the order of the JSON lists. */
const struct gpuio_drop_counter gpuio_drop_counters[] = {
	{ BPF(RB_DROP_VFS, "rb_drop_vfs"), G(RING), .label = "vfs" },
	{ BPF(RB_DROP_BLOCK, "rb_drop_block"), G(RING), .label = "block" },
	{ BPF(RB_DROP_PATH, "rb_drop_path"), G(RING), .label = "path" },
	{ BPF(RB_DROP_PROC, "rb_drop_proc"), G(RING), .label = "proc" },
	{ BPF(MAP_FULL_PID, "map_full_pid"), G(MAPS), .label = "pid" },
	{ BPF(MAP_FULL_RQ, "map_full_rq"), G(MAPS), .label = "request" },
	{ BPF(MAP_FULL_TASK, "map_full_task"), G(MAPS), .label = "task" },
	{ BPF(RB_DROP_CUDA, "rb_drop_cuda"), G(CUDA), .label = "ring buffer",
	  .warn = "(ring buffer full)" },
	{ BPF(CUDA_DEPTH, "cuda_too_deep"), G(CUDA), .label = "too deep",
	  .warn = "(nested deeper than " STR(CUDA_DEPTH) ")" },
	{ BPF(RB_DROP_SCHED, "rb_drop_sched"), G(SCHED),
	  .warn = "context switches or wake-ups lost (ring buffer full): thread states around "
		  "them are approximate; try a larger --ringbuf, or --no-sched" },
	{ BPF(RB_DROP_SOCK, "rb_drop_sock"), G(SOCK), .label = "socket peer records lost",
	  .warn = "socket peer records lost (ring buffer full): their sockets' calls show no "
		  "peer unless a later call named it; try a larger --ringbuf" },
	{ BPF(RB_DROP_WAIT, "rb_drop_wait"), G(WAIT) },
	{ BPF(RB_DROP_FAULT, "rb_drop_fault"), G(FAULT), .label = "ring buffer",
	  .warn = "(ring buffer full)" },
	{ BPF(MAP_FULL_FAULT, "map_full_fault"), G(FAULT), .label = "count map full",
	  .warn = "(count map full)" },
	{ BPF(FAULT_NO_VMA, "fault_no_vma"), G(FAULT), .label = "mapping not looked up",
	  .warn = "(mapping not looked up: its mmap lock was busy)" },
	{ BPF(RB_DROP_STACK, "rb_drop_stack"), G(STACK), .label = "Python stack records lost",
	  .warn = "Python stack records lost (ring buffer full): some calls and sleeps show no "
		  "line; try a larger --ringbuf" },
	{ BPF(AIO_UNTRACKED, "aio_untracked"), G(MAPS), .label = "AIO iocbs past 1024 a call" },
	{ BPF(SHED_SCHED, "shed_sched"), G(SHED), .label = "scheduler",
	  .warn = "context switches, wake-ups or sleeps' calls" },
	{ BPF(SHED_STACK, "shed_stack"), G(SHED), .label = "Python stacks", .warn = "Python stack uses" },
	{ BPF(MAP_FULL_TTIME, "map_full_thread_time"), G(MAPS), .label = "thread time" },
	{ .user = true, .idx = GPUIO_USTAT_WRITE_ERRORS, .name = "capture_write_errors", G(WRITE),
	  .label = "capture write errors" },
};
const size_t gpuio_ndrop_counters = ARRAY_SIZE(gpuio_drop_counters);

#undef BPF
#undef G

__u64 gpuio_drop_counter__value(const struct gpuio_drop_counter *c,
				const struct gpuio_stats_event *s)
{
	return c->user ? s->user[c->idx] : gpuio_stats__bpf(s, (unsigned)c->idx);
}

bool gpuio_drop_counter__listed(const struct gpuio_drop_counter *c,
				const struct gpuio_stats_event *s)
{
	return c->user || (unsigned)c->idx < s->nbpf || gpuio_stats__bpf(s, (unsigned)c->idx);
}

__u64 gpuio_stats__dropped(const struct gpuio_stats_event *s)
{
	__u64 n = 0;

	for (size_t i = 0; i < gpuio_ndrop_counters; i++)
		n += gpuio_drop_counter__value(&gpuio_drop_counters[i], s);
	return n;
}

/* Text appended to a buffer, cut at its end. */
struct text {
	char *buf;
	size_t len, used;
};

static void put(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->used >= t->len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(t->buf + t->used, t->len - t->used, fmt, ap);
	va_end(ap);
	if (n > 0)
		t->used += (size_t)n;
}

/* Group g's counters: "HEAD: LABEL N, LABEL N" in lists, "HEAD: N WARN, ..." in a warning. */
static void put_group(struct text *t, const struct gpuio_drop_group *g, bool warning,
		      const struct gpuio_stats_event *s)
{
	const char *head = warning ? g->warn_head : g->head;
	bool first = true;

	if (head)
		put(t, "%s: ", head);
	for (size_t i = 0; i < gpuio_ndrop_counters; i++) {
		const struct gpuio_drop_counter *c = &gpuio_drop_counters[i];
		unsigned long long v = gpuio_drop_counter__value(c, s);
		const char *words = warning ? c->warn : c->label;

		/* a counter newer than the capture's tracer is unknown, not 0 */
		if (c->group != g || !words || !gpuio_drop_counter__listed(c, s))
			continue;
		if (warning)
			put(t, "%s%llu %s", first ? "" : ", ", v, words);
		else
			put(t, "%s%s %llu", first ? "" : ", ", words, v);
		first = false;
	}
}

static enum gpuio_drop_place place(const struct gpuio_drop_group *g, enum gpuio_drop_text who)
{
	return who == GPUIO_DROPS_WARN ? g->warn : g->info;
}

void gpuio_drops__total(enum gpuio_drop_text who, const struct gpuio_stats_event *s,
			char *buf, size_t len)
{
	struct text t = { buf, len, 0 };
	bool first = true;

	buf[0] = 0;
	for (size_t i = 0; i < gpuio_ndrop_groups; i++) {
		if (place(&gpuio_drop_groups[i], who) != GPUIO_DROP_TOTAL)
			continue;
		if (!first)
			put(&t, "; ");
		put_group(&t, &gpuio_drop_groups[i], false, s);
		first = false;
	}
}

/* Whether `who` shows group g on its own line for this capture (see the header). */
static bool line_shown(const struct gpuio_drop_group *g, enum gpuio_drop_text who,
		       const struct gpuio_cap_header *h, const struct gpuio_stats_event *s)
{
	size_t n;

	if (who == GPUIO_DROPS_INFO && g->layer >= 0) {
		gpuio_cap_layer__mode(&gpuio_cap_layers[g->layer], h, &n);
		return n > 0;
	}
	for (size_t i = 0; i < gpuio_ndrop_counters; i++) {
		const struct gpuio_drop_counter *c = &gpuio_drop_counters[i];

		if (c->group == g && (who == GPUIO_DROPS_WARN ? gpuio_drop_counter__value(c, s) != 0 :
				      gpuio_drop_counter__listed(c, s)))
			return true;
	}
	return false;
}

bool gpuio_drop_group__line(const struct gpuio_drop_group *g, enum gpuio_drop_text who,
			    const struct gpuio_cap_header *h, const struct gpuio_stats_event *s,
			    char *buf, size_t len)
{
	struct text t = { buf, len, 0 };

	buf[0] = 0;
	if (place(g, who) != GPUIO_DROP_OWN || !line_shown(g, who, h, s))
		return false;
	put_group(&t, g, who == GPUIO_DROPS_WARN, s);
	return true;
}
