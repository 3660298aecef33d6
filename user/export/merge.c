// SPDX-License-Identifier: MIT
/*
 * merge.c — several hosts' captures on one timeline (gpuio_merge, export.h).
 *
 * Clocks: every capture's events are CLOCK_MONOTONIC of its own host, and
 * its header holds a (REALTIME, MONOTONIC) pair read together, so
 * boot_i = real_i - mono_i is when host i booted by its wall clock. The
 * MONOTONIC clock of the host that booted first (boot_r, the smallest) is
 * the output's clock; capture i is moved by
 *     offset_i = boot_i - boot_r  (>= 0)
 * so that events meet where the hosts' wall clocks say they happened (as good
 * as the hosts' NTP sync) and no timestamp falls before that clock's 0,
 * whatever the hosts' uptimes or clock skews (hours, days, years). JSON ts 0
 * is the earliest origin of all captures (tl_model__origin).
 *
 * Hosts in a .pftrace are Perfetto machines (pftrace_sink.c): every host's
 * pids, tids and names stay as they were. JSON has no machines, so there each
 * host is a group of processes: pids and tids are moved by (i + 1) *
 * 10,000,000 (readable: host 2's pid 4242 is 20004242) and process, disk and
 * info names are prefixed "HOST: " (HOST#i when two captures name the same
 * host). The offsets are printed and written into each host's "gpuio trace
 * info" (host_index, pid_offset or machine_id, clock_offset_ns).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "export/export.h"
#include "export/findings_src.h"
#include "export/kineto.h"
#include "lib/log.h"
#include "lib/units.h"

#define PID_STRIDE      10000000u

static char *host_prefix(struct tl_model *const *m, int n, int i, const char *name)
{
	bool dup = false;
	char *p;

	for (int k = 0; k < n; k++)
		if (k != i && !strcmp(name, tl_model__header(m[k])->hostname))
			dup = true;
	if (asprintf(&p, dup ? "%s#%d: " : "%s: ", name[0] ? name : "host", i + 1) < 0)
		return NULL;
	return p;
}

/* When the capture's host booted, by its wall clock (REALTIME - MONOTONIC at the anchor). */
static int boot_wall(const char *path, int64_t *out)
{
	const struct gpuio_cap_header *h;
	struct gpuio_cap_reader *r;
	char errbuf[320];
	int err = gpuio_cap_reader__open(path, &r, errbuf, sizeof(errbuf));

	if (err) {
		pr_err("%s%s", errbuf, gpuio_cap__open_hint(err));
		return err;
	}
	h = gpuio_cap_reader__header(r);
	*out = (int64_t)(h->realtime_ns - h->monotonic_ns);
	gpuio_cap_reader__close(r);
	return 0;
}

/* The capture trace t goes with: the one that traced its process (absolute
 * traces name it), else the first. */
static int capture_of(const struct kin_trace *t, struct tl_model *const *m, int n)
{
	char buf[TL_PROC_NAME_BUF];

	for (size_t i = 0; t->absolute && i < t->n; i++) {
		const struct kin_event *e = &t->ev[i];

		if (e->kind != KIN_CPU || e->pid_str || e->pid <= 0 || e->pid >= UINT32_MAX)
			continue;
		for (int k = 0; k < n; k++)
			if (tl_model__proc_name_of(m[k], (uint32_t)e->pid, buf, sizeof(buf)))
				return k;
		break;
	}
	return 0;
}

int gpuio_merge(char *const *caps, int n, const char *output, const struct gpuio_export_opts *eo,
		uint64_t *events)
{
	return gpuio_merge_pytorch(caps, n, NULL, 0, output, eo, events, NULL);
}

/* One merge: the captures' models and how each is moved, the profiler's traces. */
struct merge {
	char *const *caps;
	int n;
	bool machines;          /* a .pftrace: one Perfetto machine per host */
	const struct gpuio_export_opts *eo;
	struct tl_model *m[GPUIO_MERGE_MAX];
	struct tl_remap *rm[GPUIO_MERGE_MAX];
	char *prefix[GPUIO_MERGE_MAX];
	struct export_findings *fx[GPUIO_MERGE_MAX];
	int64_t boot[GPUIO_MERGE_MAX], d0;
	struct kin_overlay ov[GPUIO_MERGE_PYTORCH_MAX];
	struct gpuio_export_extra extra;
};

/* The profiler's traces first: a bad one fails before the long part. */
static int load_traces(struct merge *g, char *const *traces, int ntraces)
{
	for (int k = 0; k < ntraces; k++) {
		int err = kin_trace__load(traces[k], &g->ov[k].t);

		if (err)
			return err;
		g->ov[k].index = (uint32_t)k;
		g->extra.n++;
	}
	return 0;
}

/* The reference clock: the host that booted first (by its wall clock),
 * so every host's events land at or after its MONOTONIC 0. */
static int reference_clock(struct merge *g)
{
	for (int i = 0; i < g->n; i++) {
		int err = boot_wall(g->caps[i], &g->boot[i]);

		if (err)
			return err;
		if (i == 0 || g->boot[i] < g->d0)
			g->d0 = g->boot[i];
	}
	return 0;
}

/* Each capture's model, moved past the disks, lanes and GPUs of those before it. */
static int load_hosts(struct merge *g)
{
	uint32_t disks = 0, lanes = 0, gpus = 0, gtids = 0, glanes = 0;
	const struct gpuio_export_opts *eo = g->eo;

	for (int i = 0; i < g->n; i++) {
		struct tl_remap map = { 0 };
		struct tl_extent ext;
		int err;

		map.ts_shift = g->boot[i] - g->d0;
		map.pid_offset = g->machines ? 0 : (uint32_t)(i + 1) * PID_STRIDE;
		map.merged = true;
		map.disk_base = disks;
		map.uring_base = lanes;
		map.gpu_base = gpus;
		map.gtid_base = gtids;
		map.ghost_base = glanes;
		map.host = (uint32_t)i;
		map.prefix = "?";       /* set by name_hosts, once every host name is known */
		err = tl_model__load(g->caps[i], &map, &g->m[i]);
		if (err)
			return err;
		if (!(eo && eo->no_findings))
			g->fx[i] = export_findings__attach(g->m[i], g->caps[i],
							   eo && eo->findings_always);
		tl_model__extent(g->m[i], &ext);
		disks += ext.disks;
		lanes += ext.uring_lanes;
		gpus += ext.gpus;
		gtids += ext.gpu_lane_tids;
		glanes += ext.ghost_lanes;
		g->rm[i] = tl_model__remap(g->m[i]);
	}
	return 0;
}

/* One timeline origin for all, each host's name prefix; how each host was moved, said. */
static int name_hosts(struct merge *g)
{
	struct tl_remap **rm = g->rm;

	/* the earliest origin of theirs (never a negative ts) */
	for (int i = 1; i < g->n; i++)
		if (rm[i]->ts_base < rm[0]->ts_base)
			rm[0]->ts_base = rm[i]->ts_base;
	for (int i = 1; i < g->n; i++)
		rm[i]->ts_base = rm[0]->ts_base;
	if (!g->machines)
		pr_info("JSON has no machines: each host's pids are moved by a multiple of %u and its "
			"names prefixed with the host (a .pftrace output keeps them, one machine per host)",
			PID_STRIDE);
	for (int i = 0; i < g->n; i++) {
		char *p = host_prefix(g->m, g->n, i, tl_model__header(g->m[i])->hostname);

		if (!p) {
			pr_err("out of memory");
			return -ENOMEM;
		}
		g->prefix[i] = p;
		rm[i]->prefix = g->machines ? "" : p;
		if (g->machines)
			pr_info("%s: host %.*s, machine %d, clock offset %+.6f s (%+lld ns)%s", g->caps[i],
				(int)strlen(p) - 2, p, i, (double)rm[i]->ts_shift / NS_PER_SEC_F,
				(long long)rm[i]->ts_shift,
				rm[i]->ts_shift == 0 ? " (the reference clock)" : "");
		else
			pr_info("%s: host %.*s, pids + %u, clock offset %+.6f s (%+lld ns)%s", g->caps[i],
				(int)strlen(p) - 2, p, rm[i]->pid_offset,
				(double)rm[i]->ts_shift / NS_PER_SEC_F, (long long)rm[i]->ts_shift,
				rm[i]->ts_shift == 0 ? " (the reference clock)" : "");
	}
	return 0;
}

/* Each profiler trace on its capture's clock; JSON ts 0 before its first event. */
static int align_traces(struct merge *g)
{
	for (size_t k = 0; k < g->extra.n; k++) {
		struct kin_overlay *ov = &g->ov[k];
		int c = capture_of(ov->t, g->m, g->n);
		int err;

		ov->m = g->m[c];
		err = kin_align(ov->t, g->caps[c], &ov->a, &ov->th);
		if (err)
			return err;
		if (kin_overlay__first(ov) < g->rm[0]->ts_base)
			for (int i = 0; i < g->n; i++)
				g->rm[i]->ts_base = kin_overlay__first(ov);
	}
	return 0;
}

int gpuio_merge_pytorch(char *const *caps, int n, char *const *traces, int ntraces,
			const char *output, const struct gpuio_export_opts *eo, uint64_t *events,
			uint64_t *pt_events)
{
	struct merge g = { .caps = caps, .n = n, .eo = eo };
	uint64_t bytes = 0;
	int err;

	if (n < 1 || n > GPUIO_MERGE_MAX || ntraces < 0 || ntraces > GPUIO_MERGE_PYTORCH_MAX)
		return -EINVAL;
	g.machines = gpuio_export__is_pftrace_name(output);
	g.extra.ov = g.ov;
	err = load_traces(&g, traces, ntraces);
	if (!err)
		err = reference_clock(&g);
	if (!err)
		err = load_hosts(&g);
	if (!err)
		err = name_hosts(&g);
	if (!err)
		err = align_traces(&g);
	if (!err)
		err = gpuio_export_models_ex(g.m, n, output, eo, g.extra.n ? &g.extra : NULL, events,
					     &bytes);
	if (!err && pt_events)
		*pt_events = g.extra.events;
	for (int k = 0; k < ntraces; k++) {
		kin_trace__free(g.ov[k].t);
		free(g.ov[k].th.ids);
	}
	for (int i = 0; i < n; i++) {
		tl_model__free(g.m[i]);
		export_findings__free(g.fx[i]);
		free(g.prefix[i]);
	}
	return err;
}
