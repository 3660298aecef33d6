// SPDX-License-Identifier: MIT
/*
 * info_text.c — `gpuio info CAPTURE`: a capture's header, record counts,
 * GPU collectors, drops and how it ended, one labelled line each.
 */
#include <stdio.h>
#include <string.h>
#include "capture/cap_drops.h"
#include "capture/cap_layers.h"
#include "report/info.h"
#include "lib/units.h"

/* Header strings may hold anything: print control bytes as '?' on a terminal. */
static void put_clean(const char *s, size_t max)
{
	for (size_t i = 0; i < max && s[i]; i++)
		putchar((unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i]);
}

static void field(const char *label, const char *s, size_t max)
{
	printf("%-13s", label);
	put_clean(s, max);
	putchar('\n');
}

/* The header: host, kernel, target, attach modes, clock anchor, time span. */
static void text_header(const char *path, const struct capture_info *in)
{
	const struct gpuio_cap_header *h = in->hdr;
	char rt[64], modes[256];

	printf("%-13s%s (%llu bytes)\n", "capture", path, (unsigned long long)in->file_size);
	printf("%-13scapture format %u, record ABI %u, header %u bytes\n", "version", h->version,
	       h->abi_version, h->header_size);
	field("host", h->hostname, sizeof(h->hostname));
	field("kernel", h->kernel, sizeof(h->kernel));
	field("boot id", h->boot_id, sizeof(h->boot_id));
	field("target", h->target, sizeof(h->target));
	field("cmdline", h->cmdline, sizeof(h->cmdline));
	printf("%-13s%u (%u cpus)%s%s%s%s\n", "tracer pid", h->tracer_pid, h->ncpus,
	       h->flags & GPUIO_CAPF_ALL ? ", whole node (-a)" : "",
	       h->flags & GPUIO_CAPF_ALL_FDS ? ", all fd types" : "",
	       h->flags & GPUIO_CAPF_LAUNCH ? ", command launched by gpuio" : "",
	       h->flags & GPUIO_CAPF_NO_BPF ? ", without BPF (GPU side only)" : "");
	gpuio_cap_layers__text(h, modes, sizeof(modes));
	printf("%-13s%s\n", "attach modes", modes);
	field("mode detail", h->modes_detail, sizeof(h->modes_detail));
	capture_info__utc(h->realtime_ns, rt, sizeof(rt));
	printf("%-13sREALTIME %s (%llu ns) = MONOTONIC %llu ns\n", "clock anchor", rt,
	       (unsigned long long)h->realtime_ns, (unsigned long long)h->monotonic_ns);
	if (in->first_ts)
		printf("%-13s%+.6f s .. %+.6f s after the anchor (%.6f s)\n", "time span",
		       ((double)(int64_t)(in->first_ts - h->monotonic_ns)) / NS_PER_SEC_F,
		       ((double)(int64_t)(in->last_ts - h->monotonic_ns)) / NS_PER_SEC_F,
		       (double)(in->last_ts - in->first_ts) / NS_PER_SEC_F);
}

/* Does the capture hold records of a kind from `from` (≥ sched) on? */
static bool later_kinds(const struct capture_info *in, int from)
{
	for (int t = from; t <= GPUIO_REC_LAST; t++)
		if (in->counts[t])
			return true;
	return false;
}

/* Records per type. */
static void text_records(const struct capture_info *in)
{
	printf("%-13s%llu:", "records", (unsigned long long)in->records);
	for (int t = 1; t <= GPUIO_REC_DEVNAME; t++)
		printf(" %s %llu%s", capture_info__type_name(t), (unsigned long long)in->counts[t],
		       t < GPUIO_REC_DEVNAME || later_kinds(in, GPUIO_REC_SCHED) || in->counts[0] ?
		       "," : "");
	if (in->counts[GPUIO_REC_SCHED])
		printf(" sched %llu%s", (unsigned long long)in->counts[GPUIO_REC_SCHED],
		       in->counts[0] || later_kinds(in, GPUIO_REC_SCHED + 1) ? "," : "");
	/* kinds after sched, when the capture holds any */
	for (int t = GPUIO_REC_SCHED + 1; t <= GPUIO_REC_LAST; t++)
		if (in->counts[t])
			printf(" %s %llu%s", capture_info__type_name(t), (unsigned long long)in->counts[t],
			       in->counts[0] || later_kinds(in, t + 1) ? "," : "");
	if (in->counts[0])
		printf(" unknown types %llu", (unsigned long long)in->counts[0]);
	putchar('\n');
}

/* GPU records, each collector's last status, GPU drops. */
static void text_gpu(const struct capture_info *in)
{
	if (in->gpu_records) {
		uint64_t cupti, werr;

		printf("%-13s", "gpu records");
		for (int t = GPUIO_REC_GPU_INFO; t <= GPUIO_REC_GPU_SYM; t++)
			printf("%s%s %llu", t > GPUIO_REC_GPU_INFO ? ", " : "", capture_info__type_name(t),
			       (unsigned long long)in->counts[t]);
		putchar('\n');
		if (!in->ncolls)
			printf("%-13sno collector status record\n", "gpu");
		for (size_t i = 0; i < in->ncolls; i++) {
			const struct gpuio_gpu_info *g = &in->colls[i];

			printf("%-13spid %u: %s", i ? "" : "gpu", g->hdr.pid, capture_info__gpu_state(g->state));
			if (g->reason[0]) {
				printf(": ");
				put_clean(g->reason, sizeof(g->reason));
			}
			printf(" (%s, clock %s, offset %lld ns, uncertainty %llu ns, CUPTI %u",
			       capture_info__gpu_how(g->how), capture_info__gpu_clock(g->clock), (long long)g->offset_ns,
			       (unsigned long long)g->uncertainty_ns, g->cupti_version);
			if (g->cupti_error == GPUIO_CUPTI_HELD)
				printf(", held by another profiler: no GPU activity, CUDA calls from uprobes");
			else if (g->cupti_error)
				printf(", CUPTI error %d", g->cupti_error);
			printf("), %llu records, cupti dropped %llu, write errors %llu\n",
			       (unsigned long long)g->records, (unsigned long long)g->cupti_dropped,
			       (unsigned long long)g->write_errors);
		}
		capture_info__gpu_drops(in, &cupti, &werr);
		printf("%-13s%llu (cupti dropped %llu, collector write errors %llu)\n", "gpu drops",
		       (unsigned long long)(cupti + werr), (unsigned long long)cupti,
		       (unsigned long long)werr);
	}
}

/* Drop counters and how the capture ended. */
static void text_end(const struct capture_info *in)
{
	const struct gpuio_stats_event *s = &in->stats;
	char list[512];

	if (!in->nstats) {
		printf("%-13sunknown: no stats record in the capture\n", "drops");
	} else {
		gpuio_drops__total(GPUIO_DROPS_INFO, s, list, sizeof(list));
		printf("%-13s%llu (%s)\n", "drops", (unsigned long long)gpuio_stats__dropped(s), list);
		for (size_t i = 0; i < gpuio_ndrop_groups; i++)
			if (gpuio_drop_group__line(&gpuio_drop_groups[i], GPUIO_DROPS_INFO, in->hdr, s,
						   list, sizeof(list)))
				printf("%-13s%s\n", "", list);
		if (!s->final)
			printf("%-13s(no final stats: capture cut short)\n", "");
		printf("%-13sblock requests emitted %llu; unresolved paths %llu; "
		       "truncated path walks %llu\n", "counters",
		       (unsigned long long)s->bpf[GPUIO_STAT_EVENTS_BLOCK],
		       (unsigned long long)s->user[GPUIO_USTAT_PATH_UNRESOLVED],
		       (unsigned long long)s->bpf[GPUIO_STAT_PATH_TRUNC]);
		if (in->hdr->stack_mode[0] && strcmp(in->hdr->stack_mode, "off"))
			printf("%-13sPython stacks cut short %llu (a frame unreadable, or deeper than "
			       "64); thread states not found %llu\n", "",
			       (unsigned long long)gpuio_stats__bpf(s, GPUIO_STAT_PY_CUT),
			       (unsigned long long)gpuio_stats__bpf(s, GPUIO_STAT_PY_NO_TSTATE));
	}
	if (in->corrupt[0])
		printf("%-13scorrupt: %s (records after it are unreadable)\n", "end", in->corrupt);
	else if (in->truncated)
		printf("%-13scut short at offset %llu: %llu bytes of a partial record ignored\n",
		       "end", (unsigned long long)in->trunc_offset, (unsigned long long)in->truncated);
	else if (in->nstats && s->final)
		printf("%-13scomplete (final stats record present)\n", "end");
	else
		printf("%-13sno final stats record: the tracer did not end cleanly\n", "end");
}

void rpt_info__print_text(const char *path, const struct capture_info *in)
{
	text_header(path, in);
	text_records(in);
	text_gpu(in);
	text_end(in);
}
