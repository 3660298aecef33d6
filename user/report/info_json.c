// SPDX-License-Identifier: MIT
/* info_json.c — `gpuio info CAPTURE --json`: the same as info_text.c, one JSON object. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "capture/cap_drops.h"
#include "capture/cap_layers.h"
#include "report/info.h"
#include "lib/json_writer.h"

static void jkey(struct json_writer *w, bool *first, const char *k)
{
	json_writer__puts(w, *first ? "\"" : ",\"");
	json_writer__puts(w, k);
	json_writer__puts(w, "\":");
	*first = false;
}

static void jstr(struct json_writer *w, bool *first, const char *k, const char *s, size_t max)
{
	jkey(w, first, k);
	json_writer__strn(w, s, max);
}

static void ju64(struct json_writer *w, bool *first, const char *k, uint64_t v)
{
	jkey(w, first, k);
	json_writer__u64(w, v);
}

static void jbool(struct json_writer *w, bool *first, const char *k, bool v)
{
	jkey(w, first, k);
	json_writer__bool(w, v);
}

/* The header: host, kernel, target, attach modes, clock anchor. */
static void json_header(struct json_writer *w, bool *pfirst, const char *path,
		       const struct capture_info *in)
{
	const struct gpuio_cap_header *h = in->hdr;
	const struct gpuio_cap_layer *ly;
	bool f2;
	char rt[64];

	jstr(w, pfirst, "capture", path, strlen(path));
	ju64(w, pfirst, "size_bytes", in->file_size);
	ju64(w, pfirst, "version", h->version);
	ju64(w, pfirst, "abi_version", h->abi_version);
	ju64(w, pfirst, "header_size", h->header_size);
	jstr(w, pfirst, "hostname", h->hostname, sizeof(h->hostname));
	jstr(w, pfirst, "kernel", h->kernel, sizeof(h->kernel));
	jstr(w, pfirst, "boot_id", h->boot_id, sizeof(h->boot_id));
	jstr(w, pfirst, "target", h->target, sizeof(h->target));
	jstr(w, pfirst, "cmdline", h->cmdline, sizeof(h->cmdline));
	ju64(w, pfirst, "tracer_pid", h->tracer_pid);
	ju64(w, pfirst, "ncpus", h->ncpus);
	jkey(w, pfirst, "flags");
	f2 = true;
	json_writer__putc(w, '{');
	jbool(w, &f2, "all", h->flags & GPUIO_CAPF_ALL);
	jbool(w, &f2, "all_fds", h->flags & GPUIO_CAPF_ALL_FDS);
	jbool(w, &f2, "launch", h->flags & GPUIO_CAPF_LAUNCH);
	jbool(w, &f2, "no_bpf", h->flags & GPUIO_CAPF_NO_BPF);
	json_writer__putc(w, '}');
	jkey(w, pfirst, "modes");
	f2 = true;
	json_writer__putc(w, '{');
	gpuio_cap_layer__for_each(ly) {
		size_t n;
		const char *mode = gpuio_cap_layer__mode(ly, h, &n);

		if (gpuio_cap_layer__shown(ly, h))
			jstr(w, &f2, ly->name, mode, n);
	}
	json_writer__putc(w, '}');
	jstr(w, pfirst, "modes_detail", h->modes_detail, sizeof(h->modes_detail));
	ju64(w, pfirst, "realtime_ns", h->realtime_ns);
	ju64(w, pfirst, "monotonic_ns", h->monotonic_ns);
	capture_info__utc(h->realtime_ns, rt, sizeof(rt));
	jstr(w, pfirst, "realtime_utc", rt, sizeof(rt));
}

/* Records per type. */
static void json_counts(struct json_writer *w, bool *pfirst, const struct capture_info *in)
{
	bool f2;

	ju64(w, pfirst, "records", in->records);
	jkey(w, pfirst, "record_counts");
	f2 = true;
	json_writer__putc(w, '{');
	for (int t = 1; t <= GPUIO_REC_DEVNAME; t++)
		ju64(w, &f2, capture_info__type_name(t), in->counts[t]);
	ju64(w, &f2, "sched", in->counts[GPUIO_REC_SCHED]);
	for (int t = GPUIO_REC_SCHED + 1; t <= GPUIO_REC_LAST; t++)
		if (in->counts[t])      /* kinds after sched, when present */
			ju64(w, &f2, capture_info__type_name(t), in->counts[t]);
	ju64(w, &f2, "unknown", in->counts[0]);
	if (in->gpu_records) {
		static const char *const gk[] = {
			"gpu_info", "gpu_kernel", "gpu_memcpy", "gpu_memset", "cuda_api", "gpu_sync",
			"nvtx", "gpu_overhead", "gpu_sym",
		};

		for (int t = GPUIO_REC_GPU_INFO; t <= GPUIO_REC_GPU_SYM; t++)
			ju64(w, &f2, gk[t - GPUIO_REC_GPU_INFO], in->counts[t]);
	}
	json_writer__putc(w, '}');
}

/* GPU records and each collector's last status. */
static void json_gpu(struct json_writer *w, bool *pfirst, const struct capture_info *in)
{
	bool f2;

	if (in->gpu_records) {
		uint64_t cupti, werr;

		capture_info__gpu_drops(in, &cupti, &werr);
		jkey(w, pfirst, "gpu");
		f2 = true;
		json_writer__putc(w, '{');
		ju64(w, &f2, "records", in->gpu_records);
		ju64(w, &f2, "cupti_dropped", cupti);
		ju64(w, &f2, "write_errors", werr);
		jkey(w, &f2, "collectors");
		json_writer__putc(w, '[');
		for (size_t i = 0; i < in->ncolls; i++) {
			const struct gpuio_gpu_info *g = &in->colls[i];
			bool f3 = true;

			json_writer__puts(w, i ? ",{" : "{");
			ju64(w, &f3, "pid", g->hdr.pid);
			jstr(w, &f3, "state", capture_info__gpu_state(g->state), 16);
			jkey(w, &f3, "reason");
			if (g->reason[0])
				json_writer__strn(w, g->reason, sizeof(g->reason));
			else
				json_writer__puts(w, "null");
			jstr(w, &f3, "how", capture_info__gpu_how(g->how), 16);
			jstr(w, &f3, "clock", capture_info__gpu_clock(g->clock), 32);
			jkey(w, &f3, "offset_ns");
			json_writer__s64(w, g->offset_ns);
			ju64(w, &f3, "uncertainty_ns", g->uncertainty_ns);
			ju64(w, &f3, "cupti_dropped", g->cupti_dropped);
			ju64(w, &f3, "records", g->records);
			ju64(w, &f3, "write_errors", g->write_errors);
			ju64(w, &f3, "cupti_version", g->cupti_version);
			jkey(w, &f3, "cupti_error");
			json_writer__s64(w, g->cupti_error);
			json_writer__putc(w, '}');
		}
		json_writer__puts(w, "]}");
	}
}

/* Time span, drop counters, how the capture ended. */
static void json_end(struct json_writer *w, bool *pfirst, const struct capture_info *in)
{
	const struct gpuio_stats_event *s = &in->stats;
	bool f2;

	jkey(w, pfirst, "first_ts_ns");
	if (in->first_ts)
		json_writer__u64(w, in->first_ts);
	else
		json_writer__puts(w, "null");
	jkey(w, pfirst, "last_ts_ns");
	if (in->first_ts)
		json_writer__u64(w, in->last_ts);
	else
		json_writer__puts(w, "null");
	jkey(w, pfirst, "stats");
	if (in->nstats) {
		f2 = true;
		json_writer__putc(w, '{');
		jbool(w, &f2, "final", s->final);
		ju64(w, &f2, "dropped", gpuio_stats__dropped(s));
		jkey(w, &f2, "drops");
		{
			bool f3 = true;

			json_writer__putc(w, '{');
			for (size_t i = 0; i < gpuio_ndrop_counters; i++) {
				const struct gpuio_drop_counter *c = &gpuio_drop_counters[i];

				if (gpuio_drop_counter__listed(c, s))
					ju64(w, &f3, c->name, gpuio_drop_counter__value(c, s));
			}
			json_writer__putc(w, '}');
		}
		ju64(w, &f2, "path_truncated", s->bpf[GPUIO_STAT_PATH_TRUNC]);
		ju64(w, &f2, "py_stacks_cut", gpuio_stats__bpf(s, GPUIO_STAT_PY_CUT));
		ju64(w, &f2, "py_no_thread_state", gpuio_stats__bpf(s, GPUIO_STAT_PY_NO_TSTATE));
		ju64(w, &f2, "events_block", s->bpf[GPUIO_STAT_EVENTS_BLOCK]);
		ju64(w, &f2, "path_unresolved", s->user[GPUIO_USTAT_PATH_UNRESOLVED]);
		ju64(w, &f2, "records", s->records);
		ju64(w, &f2, "snapshots", in->nstats);
		json_writer__putc(w, '}');
	} else {
		json_writer__puts(w, "null");
	}
	jbool(w, pfirst, "drops_known", in->nstats > 0);
	ju64(w, pfirst, "truncated_bytes", in->truncated);
	jkey(w, pfirst, "truncated_at");
	if (in->truncated)
		json_writer__u64(w, in->trunc_offset);
	else
		json_writer__puts(w, "null");
	jkey(w, pfirst, "corrupt");
	if (in->corrupt[0])
		json_writer__cstr(w, in->corrupt);
	else
		json_writer__puts(w, "null");
	jbool(w, pfirst, "complete", !in->corrupt[0] && !in->truncated && in->nstats && s->final);
}

int rpt_info__print_json(const char *path, const struct capture_info *in)
{
	struct json_writer *w;
	bool first = true;
	int err;

	fflush(stdout);
	err = json_writer__new(STDOUT_FILENO, false, false, &w);
	if (err)
		return err;
	json_writer__putc(w, '{');
	json_header(w, &first, path, in);
	json_counts(w, &first, in);
	json_gpu(w, &first, in);
	json_end(w, &first, in);
	json_writer__puts(w, "}\n");
	return json_writer__close(w);
}
