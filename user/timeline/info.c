// SPDX-License-Identifier: MIT
/*
 * info.c — the "gpuio trace info" instant: the capture header, attach modes,
 * record counts, drops, GPU collector status.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "capture/cap_drops.h"
#include "capture/cap_layers.h"
#include "model/calls.h"
#include "timeline/timeline.h"
#include "timeline/timeline_priv.h"

/* Events lost, as the tracer counts them (collector totals): BPF drops + failed writes. */
static uint64_t total_dropped(const struct gpuio_stats_event *s)
{
	return gpuio_stats__dropped(s);
}


static const char *gpu_state_name(uint32_t s)
{
	return s == GPUIO_GPU_ON ? "on" : s == GPUIO_GPU_UNAVAILABLE ? "unavailable" :
	       s == GPUIO_GPU_FINAL ? "final" : "unknown";
}

static const char *gpu_clock_name(uint32_t c)
{
	return c == GPUIO_GPU_CLOCK_MONOTONIC_CB ? "monotonic_callback" :
	       c == GPUIO_GPU_CLOCK_OFFSET ? "offset" : "none";
}

#define GPU_INFO_PROCS 8        /* collectors listed one by one in the info */

/* GPU drops: CUPTI's own and the collectors' failed writes (latest counts). */
static void gpu_drops(const struct model_session *s, uint64_t *cupti, uint64_t *werr)
{
	const struct model_collector *c;

	*cupti = *werr = 0;
	for (size_t i = 0; (c = model_session__collector(s, i)) != NULL; i++) {
		*cupti += c->info.cupti_dropped;
		*werr += c->info.write_errors;
	}
}

/* "PID" of each collector: the keys of the info's processes dict (stable while written). */
static void collector_keys(struct tl_model *x, size_t ncolls)
{
	struct tl_gpu *g = &x->gpu;
	char (*k)[16];

	if (g->ncoll_keys >= ncolls)
		return;
	k = realloc(g->coll_keys, ncolls * sizeof(*k));
	if (!k)
		return;         /* listed as "?" */
	g->coll_keys = k;
	for (; g->ncoll_keys < ncolls; g->ncoll_keys++)
		snprintf(k[g->ncoll_keys], sizeof(k[0]), "%u",
			 model_session__collector(x->s, g->ncoll_keys)->info.hdr.pid);
}

static void gpu_info_args(struct tl_model *x, struct tl_args *a)
{
	const struct tl_gpu *g = &x->gpu;
	const uint64_t *n = x->f->counts;
	const struct model_collector *c;
	struct tl_arg *d, *p;
	uint64_t cupti, werr, st[4] = { 0 };
	size_t ncolls = 0, listed;

	gpu_drops(x->s, &cupti, &werr);
	for (; (c = model_session__collector(x->s, ncolls)) != NULL; ncolls++)
		st[c->info.state < 4 ? c->info.state : 0]++;
	listed = ncolls < GPU_INFO_PROCS ? ncolls : GPU_INFO_PROCS;
	collector_keys(x, listed);
	d = tl_arg_add(a, "gpu", TLA_DICT);
	d->len = 0;
#define GARG(call) (call, d->len++)
	GARG(tl_arg_u64(a, "collectors", ncolls));
	GARG(tl_arg_u64(a, "collectors_on", st[GPUIO_GPU_ON]));
	GARG(tl_arg_u64(a, "collectors_unavailable", st[GPUIO_GPU_UNAVAILABLE]));
	GARG(tl_arg_u64(a, "collectors_final", st[GPUIO_GPU_FINAL]));
	GARG(tl_arg_u64(a, "cupti_dropped", cupti));
	GARG(tl_arg_u64(a, "collector_write_errors", werr));
	/* no collector (CUDA calls from uprobes alone): no empty dict, which the
	 * protobuf cannot carry and the JSON would */
	if (listed) {
		p = tl_arg_add(a, "processes", TLA_DICT);
		d->len++;
		p->len = (uint32_t)listed;
	}
	for (size_t i = 0; i < listed; i++) {
		struct tl_arg *e;

		c = model_session__collector(x->s, i);
		e = tl_arg_add(a, i < g->ncoll_keys ? g->coll_keys[i] : "?", TLA_DICT);
		e->len = 0;
#define CARG(call) (call, e->len++)
		CARG(tl_arg_cstr(a, "state", gpu_state_name(c->info.state)));
		if (c->reason[0])
			CARG(tl_arg_str(a, "reason", c->reason, strlen(c->reason), false));
		CARG(tl_arg_cstr(a, "how", c->info.how == GPUIO_GPU_HOW_LAUNCH ? "launch" :
				  c->info.how == GPUIO_GPU_HOW_ATTACH ? "attach" : "unknown"));
		CARG(tl_arg_cstr(a, "clock", gpu_clock_name(c->info.clock)));
		CARG(tl_arg_s64(a, "offset_ns", c->info.offset_ns));
		CARG(tl_arg_u64(a, "uncertainty_ns", c->info.uncertainty_ns));
		CARG(tl_arg_u64(a, "cupti_dropped", c->info.cupti_dropped));
		CARG(tl_arg_u64(a, "records", c->info.records));
		CARG(tl_arg_u64(a, "write_errors", c->info.write_errors));
		CARG(tl_arg_u64(a, "cupti_version", c->info.cupti_version));
		CARG(tl_arg_s64(a, "cupti_error", c->info.cupti_error));
#undef CARG
	}
	GARG(tl_arg_u64(a, "processes_not_listed", ncolls - listed));
	GARG(tl_arg_u64(a, "devices", g->ndevs));
	GARG(tl_arg_u64(a, "kernels", n[GPUIO_REC_GPU_KERNEL]));
	GARG(tl_arg_u64(a, "memcpys", n[GPUIO_REC_GPU_MEMCPY]));
	GARG(tl_arg_u64(a, "memsets", n[GPUIO_REC_GPU_MEMSET]));
	GARG(tl_arg_u64(a, "api_calls", n[GPUIO_REC_CUDA_API]));
	GARG(tl_arg_u64(a, "api_calls_merged", g->merged));
	GARG(tl_arg_u64(a, "nvtx_ranges", n[GPUIO_REC_NVTX]));
	GARG(tl_arg_u64(a, "syncs", n[GPUIO_REC_GPU_SYNC]));
	GARG(tl_arg_u64(a, "overheads", n[GPUIO_REC_GPU_OVERHEAD]));
	GARG(tl_arg_u64(a, "flows", g->flows));
	GARG(tl_arg_u64(a, "dangling_correlations", g->dangling_corr));
	GARG(tl_arg_u64(a, "overlap_slices", g->overlap_slices));
	GARG(tl_arg_us(a, "busy_bucket_us", (int64_t)g->bucket_ns));
#undef GARG
}

static void hdr_str(struct tl_args *a, const char *k, const char *s, size_t max)
{
	tl_arg_str(a, k, s, strnlen(s, max), false);
}

/* What was lost, and what could not be named, as the tracer counts them. */
static void info_drops(struct tl_model *x, const struct model_facts *f, struct tl_args *a,
		       uint64_t gcupti, uint64_t gwerr)
{
	const struct gpuio_stats_event *s = &f->stats;

	if (f->have_stats)
		tl_arg_u64(a, "dropped", x->st.dropped);
	else
		tl_arg_null(a, "dropped");
	tl_arg_bool(a, "drops_known", f->have_stats);
	/* switches the kernel made that the trace misses (a thread left a CPU
	 * it was not seen to take): its states around them are approximate */
	if (f->counts[GPUIO_REC_SCHED])
		tl_arg_u64(a, "sched_gaps", model_session__sched(x->s)->gaps);
	/* a snapshot that is not the final one counts drops only up to its time */
	tl_arg_bool(a, "drops_final", f->have_stats && s->final);
	if (f->have_stats) {
		struct tl_arg *d = tl_arg_add(a, "drops", TLA_DICT);

		d->len = 0;
		for (size_t i = 0; i < gpuio_ndrop_counters; i++) {
			const struct gpuio_drop_counter *c = &gpuio_drop_counters[i];

			if (!gpuio_drop_counter__listed(c, s))
				continue;
			tl_arg_u64(a, c->name, gpuio_drop_counter__value(c, s));
			d->len++;
		}
		if (tl_model__gpu_any(x)) {
			tl_arg_u64(a, "cupti_dropped", gcupti);
			tl_arg_u64(a, "gpu_write_errors", gwerr);
			d->len += 2;
		}
	} else {
		tl_arg_null(a, "drops");
	}
	tl_arg_u64(a, "unresolved_paths", x->st.unresolved_paths);
	tl_arg_u64(a, "unresolved_block_paths", x->st.unresolved_block_paths);
	if (f->have_stats)
		tl_arg_u64(a, "collector_unresolved_paths", s->user[GPUIO_USTAT_PATH_UNRESOLVED]);
	else
		tl_arg_null(a, "collector_unresolved_paths");
	if (f->have_stats)
		tl_arg_u64(a, "path_walks_truncated", s->bpf[GPUIO_STAT_PATH_TRUNC]);
	else
		tl_arg_null(a, "path_walks_truncated");
}

/* How the capture was taken, from its header. */
static void info_header(const struct gpuio_cap_header *h, struct tl_args *a)
{
	const struct gpuio_cap_layer *ly;

	gpuio_cap_layer__for_each(ly) {
		size_t n;
		const char *mode = gpuio_cap_layer__mode(ly, h, &n);

		if (gpuio_cap_layer__shown(ly, h))
			hdr_str(a, ly->field, mode, n);
	}
	hdr_str(a, "modes_detail", h->modes_detail, sizeof(h->modes_detail));
	hdr_str(a, "hostname", h->hostname, sizeof(h->hostname));
	hdr_str(a, "kernel", h->kernel, sizeof(h->kernel));
	hdr_str(a, "boot_id", h->boot_id, sizeof(h->boot_id));
	hdr_str(a, "target", h->target, sizeof(h->target));
	hdr_str(a, "cmdline", h->cmdline, sizeof(h->cmdline));
	tl_arg_u64(a, "tracer_pid", h->tracer_pid);
	tl_arg_u64(a, "ncpus", h->ncpus);
	tl_arg_bool(a, "trace_all", h->flags & GPUIO_CAPF_ALL);
	tl_arg_bool(a, "all_fds", h->flags & GPUIO_CAPF_ALL_FDS);
	/* only where set: older captures' info stays the same */
	if (h->flags & GPUIO_CAPF_SOCKETS)
		tl_arg_bool(a, "sockets", true);
	tl_arg_bool(a, "launched", h->flags & GPUIO_CAPF_LAUNCH);
	tl_arg_u64(a, "capture_version", h->version);
	tl_arg_u64(a, "abi_version", h->abi_version);
	tl_arg_u64(a, "monotonic_base_ns", h->monotonic_ns);
	tl_arg_u64(a, "realtime_base_ns", h->realtime_ns);
}

/* How many records of each kind the capture holds; GPU kinds only when it has any. */
static void info_counts(struct tl_model *x, const struct model_facts *f, struct tl_args *a)
{
	struct tl_arg *d = tl_arg_add(a, "record_counts", TLA_DICT);

	tl_arg_u64(a, "vfs", f->counts[GPUIO_REC_VFS]);
	tl_arg_u64(a, "block", f->counts[GPUIO_REC_BLOCK]);
	tl_arg_u64(a, "path", f->counts[GPUIO_REC_PATH]);
	tl_arg_u64(a, "proc", f->counts[GPUIO_REC_PROC]);
	tl_arg_u64(a, "stats", f->counts[GPUIO_REC_STATS]);
	tl_arg_u64(a, "devname", f->counts[GPUIO_REC_DEVNAME]);
	tl_arg_u64(a, "unknown", f->counts[0]);
	d->len = 7;
	if (f->counts[GPUIO_REC_SCHED]) {
		tl_arg_u64(a, "sched", f->counts[GPUIO_REC_SCHED]);
		d->len++;
	}
	for (unsigned t = GPUIO_REC_SCHED + 1; t <= GPUIO_REC_LAST; t++)
		if (f->counts[t]) {     /* kinds after sched, when present */
			tl_arg_u64(a, gpuio_rec__name(t), f->counts[t]);
			d->len++;
		}
	if (tl_model__gpu_any(x)) {
		static const char *const gnames[] = {
			"gpu_info", "gpu_kernel", "gpu_memcpy", "gpu_memset", "cuda_api",
			"gpu_sync", "nvtx", "gpu_overhead", "gpu_sym",
		};

		for (unsigned t = GPUIO_REC_GPU_INFO; t <= GPUIO_REC_GPU_SYM; t++)
			tl_arg_u64(a, gnames[t - GPUIO_REC_GPU_INFO], f->counts[t]);
		d->len += GPUIO_REC_GPU_SYM - GPUIO_REC_GPU_INFO + 1;
	}
}

void tl_model__info(struct tl_model *x, struct tl_args *a)
{
	const struct model_facts *f = x->f;
	const struct gpuio_stats_event *s = &f->stats;
	uint64_t gcupti = 0, gwerr = 0;
	bool complete;

	tl_args_reset(a);
	complete = f->have_stats && s->final && !f->truncated;
	x->st.capture_complete = complete;
	x->st.drops_known = f->have_stats;
	x->st.dropped = f->have_stats ? total_dropped(s) : 0;
	if (tl_model__gpu_any(x))
		gpu_drops(x->s, &gcupti, &gwerr);
	/* what the GPU collectors lost counts as dropped like the rest */
	if (f->have_stats)
		x->st.dropped += gcupti + gwerr;

	info_drops(x, f, a, gcupti, gwerr);
	info_header(x->hdr, a);
	/* JSON ts 0 on this capture's own MONOTONIC clock (tl_model__origin) */
	tl_arg_u64(a, "timeline_origin_ns", x->map.ts_base - (uint64_t)x->map.ts_shift);
	tl_arg_bool(a, "capture_complete", complete);
	tl_arg_u64(a, "capture_truncated_bytes", f->truncated);
	tl_arg_u64(a, "records", f->records);
	info_counts(x, f, a);
	tl_arg_u64(a, "vfs_events", x->st.vfs);
	tl_arg_u64(a, "block_requests", x->st.block);
	tl_arg_u64(a, "flows", x->st.flows);
	tl_arg_u64(a, "dangling_block_refs", x->st.dangling_flows);
	tl_arg_us(a, "throughput_bucket_us", (int64_t)x->bucket_ns);
	/* only captures with fault counts (older ones: as they were) */
	tl_model__fault_info(x, a);
	tl_stacks__info(x, a);          /* only captures with Python stacks */
	if (tl_model__gpu_any(x))
		gpu_info_args(x, a);
	/* merged outputs: where this capture sits on the shared timeline */
	if (x->map.merged) {
		tl_arg_u64(a, "host_index", x->map.host);
		if (x->map.pid_offset)          /* JSON: hosts apart by pid offsets */
			tl_arg_u64(a, "pid_offset", x->map.pid_offset);
		else                            /* .pftrace: hosts are machines */
			tl_arg_u64(a, "machine_id", x->map.host);
		tl_arg_s64(a, "clock_offset_ns", x->map.ts_shift);
	}
}
