// SPDX-License-Identifier: MIT
/*
 * unit_cap_tables — the header's attach layers (cap_layers.h) and the drop
 * counters (cap_drops.h), each declared once: the words they produce are
 * the ones the outputs printed when each listed them by hand (the format
 * strings below are those outputs' own), with a different count in every
 * counter so that none can stand in for another; a capture from before a
 * layer or a counter shows what it always did.
 */
#include <stdio.h>
#include <string.h>
#include "capture/capture.h"
#include "capture/cap_drops.h"
#include "capture/cap_layers.h"
#include "bpf/trace/cuda_spec.h"
#include "unit.h"

static void layers(void)
{
	const struct gpuio_cap_layer *ly;
	struct gpuio_cap_header h;
	char text[256], want[256];
	unsigned shown = 0;
	size_t n;

	memset(&h, 0, sizeof(h));
	gpuio_cap_layer__set(&gpuio_cap_layers[GPUIO_LAYER_VFS], &h, "sys:tp_btf");
	gpuio_cap_layer__set(&gpuio_cap_layers[GPUIO_LAYER_BLOCK], &h, "tp_btf");
	gpuio_cap_layer__set(&gpuio_cap_layers[GPUIO_LAYER_PROC], &h, "raw_tp");
	gpuio_cap_layer__set(&gpuio_cap_layers[GPUIO_LAYER_PAGECACHE], &h, "off");
	gpuio_cap_layer__set(&gpuio_cap_layers[GPUIO_LAYER_IOURING], &h, "tp_btf:v0");
	CHECK(!strcmp(h.vfs_mode, "sys:tp_btf") && !strcmp(h.iouring_mode, "tp_btf:v0"),
	      "set writes the layer's own field: %s %s", h.vfs_mode, h.iouring_mode);

	/* a capture from before the sched and fault layers */
	gpuio_cap_layers__text(&h, text, sizeof(text));
	snprintf(want, sizeof(want), "vfs=%.16s block=%.16s proc=%.16s pagecache=%.16s "
		 "io_uring=%.16s sched=%.16s", h.vfs_mode, h.block_mode, h.proc_mode,
		 h.pagecache_mode, h.iouring_mode, h.sched_mode[0] ? h.sched_mode : "none");
	CHECK(!strcmp(text, want), "older capture: '%s', was '%s'", text, want);
	gpuio_cap_layer__for_each(ly)
		shown += gpuio_cap_layer__shown(ly, &h);
	CHECK(shown == GPUIO_NLAYERS - 3, "JSON lists %u layers, all but fault, stacks, samples",
	      shown);

	/* today's: every layer, a mode that fills its field */
	gpuio_cap_layer__set(&gpuio_cap_layers[GPUIO_LAYER_SCHED], &h, "raw_tp");
	memcpy(h.fault_mode, "0123456789abcdef", sizeof(h.fault_mode));
	gpuio_cap_layers__text(&h, text, sizeof(text));
	snprintf(want, sizeof(want), "vfs=%.16s block=%.16s proc=%.16s pagecache=%.16s "
		 "io_uring=%.16s sched=%.16s fault=%.16s", h.vfs_mode, h.block_mode, h.proc_mode,
		 h.pagecache_mode, h.iouring_mode, h.sched_mode, h.fault_mode);
	CHECK(!strcmp(text, want), "every layer: '%s', was '%s'", text, want);
	CHECK(gpuio_cap_layer__mode(&gpuio_cap_layers[GPUIO_LAYER_FAULT], &h, &n) == h.fault_mode &&
	      n == sizeof(h.fault_mode), "a full field is read to its end: %zu", n);
	gpuio_cap_layers__terminate(&h);
	gpuio_cap_layer__mode(&gpuio_cap_layers[GPUIO_LAYER_FAULT], &h, &n);
	CHECK(n == sizeof(h.fault_mode) - 1 && !strcmp(h.vfs_mode, "sys:tp_btf"),
	      "terminate cuts the full one only: %zu", n);
	CHECK(!strcmp(gpuio_cap_layers[GPUIO_LAYER_IOURING].name, "io_uring") &&
	      !strcmp(gpuio_cap_layers[GPUIO_LAYER_IOURING].field, "iouring_mode"),
	      "io_uring's words: %s %s", gpuio_cap_layers[GPUIO_LAYER_IOURING].name,
	      gpuio_cap_layers[GPUIO_LAYER_IOURING].field);
}

/* Counter i is 100 + i, write errors 7. */
static void stats(struct gpuio_stats_event *s, unsigned nbpf)
{
	__u64 all[GPUIO_STAT_MAX];

	memset(s, 0, sizeof(*s));
	for (unsigned i = 0; i < GPUIO_STAT_MAX; i++)
		all[i] = i < nbpf ? 100 + i : 0;
	gpuio_stats__set_bpf(s, all);
	s->nbpf = nbpf;
	s->user[GPUIO_USTAT_WRITE_ERRORS] = 7;
}

#define B(i) (unsigned long long)gpuio_stats__bpf(&s, GPUIO_STAT_##i)

/* `gpuio info`'s text and JSON. */
static void info(void)
{
	struct gpuio_cap_header h;
	struct gpuio_stats_event s;
	char text[512], want[512], lines[1024] = "", *l = lines;
	unsigned long long sum = 7;

	stats(&s, GPUIO_STAT_MAX);
	for (unsigned i = 0; i < GPUIO_STAT_MAX; i++)
		if (i != GPUIO_STAT_PATH_TRUNC && i != GPUIO_STAT_EVENTS_VFS &&
		    i != GPUIO_STAT_EVENTS_BLOCK && i != GPUIO_STAT_PY_NO_TSTATE &&
		    i != GPUIO_STAT_PY_CUT && i != GPUIO_STAT_LEDGER_FULL)
			sum += 100 + i;
	CHECK(gpuio_stats__dropped(&s) == sum, "dropped %llu, want %llu",
	      (unsigned long long)gpuio_stats__dropped(&s), sum);

	gpuio_drops__total(GPUIO_DROPS_INFO, &s, text, sizeof(text));
	snprintf(want, sizeof(want), "ring buffer full: vfs %llu, block %llu, path %llu, proc %llu; "
		 "maps full: pid %llu, request %llu, task %llu, AIO iocbs past 1024 a call %llu, "
		 "thread time %llu; cuda calls: ring buffer %llu, too deep %llu; capture write "
		 "errors %llu",
		 B(RB_DROP_VFS), B(RB_DROP_BLOCK), B(RB_DROP_PATH), B(RB_DROP_PROC), B(MAP_FULL_PID),
		 B(MAP_FULL_RQ), B(MAP_FULL_TASK), B(AIO_UNTRACKED), B(MAP_FULL_TTIME), B(RB_DROP_CUDA),
		 B(CUDA_DEPTH), 7ull);
	CHECK(!strcmp(text, want), "info total:\n  '%s'\nwas\n  '%s'", text, want);

	/* the lines of their own: sockets, and page faults where the header has the layer */
	memset(&h, 0, sizeof(h));
	snprintf(h.fault_mode, sizeof(h.fault_mode), "tp_btf");
	for (size_t i = 0; i < gpuio_ndrop_groups; i++)
		if (gpuio_drop_group__line(&gpuio_drop_groups[i], GPUIO_DROPS_INFO, &h, &s, text,
					   sizeof(text)))
			l += snprintf(l, sizeof(lines) - (size_t)(l - lines), "%s\n", text);
	snprintf(want, sizeof(want), "socket peer records lost %llu\npage faults: ring buffer %llu, "
		 "count map full %llu, mapping not looked up %llu\nPython stack records lost %llu\n"
		 "shed, the ring over 3/4 full: scheduler %llu, Python stacks %llu\n",
		 B(RB_DROP_SOCK), B(RB_DROP_FAULT), B(MAP_FULL_FAULT), B(FAULT_NO_VMA),
		 B(RB_DROP_STACK), B(SHED_SCHED), B(SHED_STACK));
	CHECK(!strcmp(lines, want), "info lines:\n'%s'was\n'%s'", lines, want);

	/* a capture from before sockets and faults: neither line, nor their JSON keys */
	stats(&s, GPUIO_STAT_RB_DROP_SOCK);
	h.fault_mode[0] = 0;
	for (size_t i = 0; i < gpuio_ndrop_groups; i++)
		CHECK(!gpuio_drop_group__line(&gpuio_drop_groups[i], GPUIO_DROPS_INFO, &h, &s, text,
					      sizeof(text)), "older capture: '%s'", text);
	for (size_t i = 0; i < gpuio_ndrop_counters; i++) {
		const struct gpuio_drop_counter *c = &gpuio_drop_counters[i];

		CHECK(gpuio_drop_counter__listed(c, &s) ==
		      (c->user || c->idx < GPUIO_STAT_RB_DROP_SOCK), "%s listed", c->name);
	}
	CHECK(!strcmp(gpuio_drop_counters[gpuio_ndrop_counters - 1].name, "capture_write_errors"),
	      "JSON ends with capture_write_errors");
}

/* The trace's warnings at its end. */
static void warn(void)
{
	struct gpuio_stats_event s;
	char text[512], want[1024], lines[2048] = "", *l = lines;

	stats(&s, GPUIO_STAT_MAX);
	gpuio_drops__total(GPUIO_DROPS_WARN, &s, text, sizeof(text));
	snprintf(want, sizeof(want), "ring buffer full: vfs %llu, block %llu, path %llu, "
		 "proc %llu; maps full: pid %llu, request %llu, task %llu, AIO iocbs past 1024 a "
		 "call %llu, thread time %llu", B(RB_DROP_VFS), B(RB_DROP_BLOCK), B(RB_DROP_PATH),
		 B(RB_DROP_PROC), B(MAP_FULL_PID), B(MAP_FULL_RQ), B(MAP_FULL_TASK), B(AIO_UNTRACKED),
		 B(MAP_FULL_TTIME));
	CHECK(!strcmp(text, want), "warning's total:\n  '%s'\nwas\n  '%s'", text, want);

	for (size_t i = 0; i < gpuio_ndrop_groups; i++)
		if (gpuio_drop_group__line(&gpuio_drop_groups[i], GPUIO_DROPS_WARN, NULL, &s, text,
					   sizeof(text)))
			l += snprintf(l, sizeof(lines) - (size_t)(l - lines), "%s\n", text);
	snprintf(want, sizeof(want),
		 "CUDA API calls lost: %llu (ring buffer full), %llu (nested deeper than %d)\n"
		 "%llu context switches or wake-ups lost (ring buffer full): thread states "
		 "around them are approximate; try a larger --ringbuf, or --no-sched\n"
		 "%llu socket peer records lost (ring buffer full): their sockets' calls "
		 "show no peer unless a later call named it; try a larger --ringbuf\n"
		 "page faults on file mappings lost: %llu (ring buffer full), %llu (count map "
		 "full), %llu (mapping not looked up: its mmap lock was busy)\n"
		 "%llu Python stack records lost (ring buffer full): some calls and sleeps show "
		 "no line; try a larger --ringbuf\n"
		 "shed while the ring buffer was over 3/4 full (the rest kept for file, disk and "
		 "process records; try a larger --ringbuf): %llu context switches, wake-ups or "
		 "sleeps' calls, %llu Python stack uses\n",
		 B(RB_DROP_CUDA), B(CUDA_DEPTH), CUDA_DEPTH, B(RB_DROP_SCHED), B(RB_DROP_SOCK),
		 B(RB_DROP_FAULT), B(MAP_FULL_FAULT), B(FAULT_NO_VMA), B(RB_DROP_STACK),
		 B(SHED_SCHED), B(SHED_STACK));
	CHECK(!strcmp(lines, want), "warnings:\n'%s'was\n'%s'", lines, want);

	/* only the groups that lost something are warned of */
	stats(&s, 0);
	for (size_t i = 0; i < gpuio_ndrop_groups; i++)
		CHECK(!gpuio_drop_group__line(&gpuio_drop_groups[i], GPUIO_DROPS_WARN, NULL, &s, text,
					      sizeof(text)), "nothing lost, yet '%s'", text);
}

int main(void)
{
	layers();
	info();
	warn();
	return unit_done("unit_cap_tables");
}
