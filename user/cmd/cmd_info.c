// SPDX-License-Identifier: MIT
/*
 * cmd_info.c — `gpuio info CAPTURE [--json]`: what a capture holds — header,
 * record counts per type, the last drop counters, and whether it is whole;
 * with GPU records, their counts per type, each collector's last status
 * (state, reason, clock) and CUPTI's drops.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include "capture/capture.h"
#include "cmd/commands.h"
#include "lib/json_writer.h"
#include "lib/log.h"

struct info {
	const struct gpuio_cap_header *hdr;
	uint64_t file_size;
	uint64_t records;
	uint64_t counts[GPUIO_REC_GPU_SYM + 1];   /* [0]: unknown types */
	uint64_t gpu_records;
	struct gpuio_gpu_info *colls;             /* latest status per collector (pid) */
	size_t ncolls;
	uint64_t first_ts, last_ts;               /* over records with a ts */
	struct gpuio_stats_event stats;
	uint64_t nstats;
	uint64_t truncated, trunc_offset;
	char corrupt[200];
};

static const char *const type_names[] = {
	[0] = "unknown", [GPUIO_REC_VFS] = "vfs", [GPUIO_REC_BLOCK] = "block",
	[GPUIO_REC_PATH] = "path", [GPUIO_REC_PROC] = "proc", [GPUIO_REC_STATS] = "stats",
	[GPUIO_REC_DEVNAME] = "devname",
	[GPUIO_REC_GPU_INFO] = "info", [GPUIO_REC_GPU_KERNEL] = "kernel",
	[GPUIO_REC_GPU_MEMCPY] = "memcpy", [GPUIO_REC_GPU_MEMSET] = "memset",
	[GPUIO_REC_CUDA_API] = "cuda_api", [GPUIO_REC_GPU_SYNC] = "sync", [GPUIO_REC_NVTX] = "nvtx",
	[GPUIO_REC_GPU_OVERHEAD] = "overhead", [GPUIO_REC_GPU_SYM] = "sym",
};
#define MAX_COLLECTORS 4096     /* collectors listed (one per process) */

static void usage(FILE *f)
{
	fprintf(f,
"usage: gpuio info CAPTURE [--json]\n\n"
"Print a capture's header (host, kernel, attach modes, target, clock anchor),\n"
"its record counts, the last drop counters and whether it ended cleanly.\n\n"
"options:\n"
"  -j, --json   one JSON object on stdout, for scripts\n"
"  -h, --help   this text\n");
}

static uint64_t dropped(const struct gpuio_stats_event *s)
{
	return gpuio_stats__dropped(s);
}

/* The latest status record of each collector: its counters are cumulative. */
static void note_collector(struct info *in, const struct gpuio_gpu_info *g)
{
	size_t i;

	for (i = 0; i < in->ncolls; i++)
		if (in->colls[i].hdr.pid == g->hdr.pid)
			break;
	if (i == in->ncolls) {
		struct gpuio_gpu_info *c;

		if (in->ncolls >= MAX_COLLECTORS)
			return;
		c = realloc(in->colls, (in->ncolls + 1) * sizeof(*c));
		if (!c)
			return;
		in->colls = c;
		in->ncolls++;
		memset(&in->colls[i], 0, sizeof(in->colls[i]));
	} else if (!g->reason[0] && in->colls[i].reason[0]) {
		/* an UNAVAILABLE record's reason stays when a FINAL one follows */
		char reason[sizeof(g->reason)];

		memcpy(reason, in->colls[i].reason, sizeof(reason));
		in->colls[i] = *g;
		memcpy(in->colls[i].reason, reason, sizeof(reason));
		return;
	}
	in->colls[i] = *g;
}

static const char *gstate(uint32_t s)
{
	return s == GPUIO_GPU_ON ? "on" : s == GPUIO_GPU_UNAVAILABLE ? "unavailable" :
	       s == GPUIO_GPU_FINAL ? "final" : "unknown";
}

static const char *gclock(uint32_t c)
{
	return c == GPUIO_GPU_CLOCK_MONOTONIC_CB ? "monotonic_callback" :
	       c == GPUIO_GPU_CLOCK_OFFSET ? "offset" : "none";
}

static const char *ghow(uint32_t h)
{
	return h == GPUIO_GPU_HOW_LAUNCH ? "launch" : h == GPUIO_GPU_HOW_ATTACH ? "attach" :
	       "unknown";
}

static void gpu_drops(const struct info *in, uint64_t *cupti, uint64_t *werr)
{
	*cupti = *werr = 0;
	for (size_t i = 0; i < in->ncolls; i++) {
		*cupti += in->colls[i].cupti_dropped;
		*werr += in->colls[i].write_errors;
	}
}

/* Read every record once; a corrupt record stops the count (message kept). */
static int scan(struct gpuio_cap_reader *r, struct info *in)
{
	const struct gpuio_hdr *h;
	int rc;

	while ((rc = gpuio_cap_reader__next(r, &h)) > 0) {
		in->records++;
		in->counts[h->type <= GPUIO_REC_GPU_SYM ? h->type : 0]++;
		if (h->type >= GPUIO_REC_GPU_INFO && h->type <= GPUIO_REC_GPU_SYM)
			in->gpu_records++;
		if (h->type == GPUIO_REC_GPU_INFO)
			note_collector(in, (const void *)h);
		/* collector records (stats, devnames) carry a ts too; 0 means none */
		if (h->ts) {
			if (!in->first_ts || h->ts < in->first_ts)
				in->first_ts = h->ts;
			if (h->ts > in->last_ts)
				in->last_ts = h->ts;
		}
		if (h->type == GPUIO_REC_STATS) {
			gpuio_stats__from_record(h, &in->stats);
			in->nstats++;
		}
	}
	if (rc < 0) {
		snprintf(in->corrupt, sizeof(in->corrupt), "%s", gpuio_cap_reader__error(r));
		return -EBADMSG;
	}
	in->truncated = gpuio_cap_reader__truncated(r);
	in->trunc_offset = gpuio_cap_reader__offset(r);
	return 0;
}

static void fmt_realtime(uint64_t ns, char *buf, size_t len)
{
	time_t secs = (time_t)(ns / 1000000000ull);
	struct tm tm;
	char d[40];

	if (!ns || !gmtime_r(&secs, &tm)) {
		snprintf(buf, len, "unknown");
		return;
	}
	strftime(d, sizeof(d), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%09lluZ", d, (unsigned long long)(ns % 1000000000ull));
}

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

static void print_text(const char *path, const struct info *in)
{
	const struct gpuio_cap_header *h = in->hdr;
	const struct gpuio_stats_event *s = &in->stats;
	char rt[64];

	printf("%-13s%s (%llu bytes)\n", "capture", path, (unsigned long long)in->file_size);
	printf("%-13scapture format %u, record ABI %u, header %u bytes\n", "version", h->version,
	       h->abi_version, h->header_size);
	field("host", h->hostname, sizeof(h->hostname));
	field("kernel", h->kernel, sizeof(h->kernel));
	field("boot id", h->boot_id, sizeof(h->boot_id));
	field("target", h->target, sizeof(h->target));
	field("cmdline", h->cmdline, sizeof(h->cmdline));
	printf("%-13s%u (%u cpus)%s%s%s\n", "tracer pid", h->tracer_pid, h->ncpus,
	       h->flags & GPUIO_CAPF_ALL ? ", whole node (-a)" : "",
	       h->flags & GPUIO_CAPF_ALL_FDS ? ", all fd types" : "",
	       h->flags & GPUIO_CAPF_LAUNCH ? ", command launched by gpuio" : "");
	printf("%-13svfs=%.16s block=%.16s proc=%.16s pagecache=%.16s io_uring=%.16s\n",
	       "attach modes", h->vfs_mode, h->block_mode, h->proc_mode, h->pagecache_mode,
	       h->iouring_mode);
	field("mode detail", h->modes_detail, sizeof(h->modes_detail));
	fmt_realtime(h->realtime_ns, rt, sizeof(rt));
	printf("%-13sREALTIME %s (%llu ns) = MONOTONIC %llu ns\n", "clock anchor", rt,
	       (unsigned long long)h->realtime_ns, (unsigned long long)h->monotonic_ns);
	if (in->first_ts)
		printf("%-13s%+.6f s .. %+.6f s after the anchor (%.6f s)\n", "time span",
		       ((double)(int64_t)(in->first_ts - h->monotonic_ns)) / 1e9,
		       ((double)(int64_t)(in->last_ts - h->monotonic_ns)) / 1e9,
		       (double)(in->last_ts - in->first_ts) / 1e9);
	printf("%-13s%llu:", "records", (unsigned long long)in->records);
	for (int t = 1; t <= GPUIO_REC_DEVNAME; t++)
		printf(" %s %llu%s", type_names[t], (unsigned long long)in->counts[t],
		       t < GPUIO_REC_DEVNAME || in->counts[0] ? "," : "");
	if (in->counts[0])
		printf(" unknown types %llu", (unsigned long long)in->counts[0]);
	putchar('\n');
	if (in->gpu_records) {
		uint64_t cupti, werr;

		printf("%-13s", "gpu records");
		for (int t = GPUIO_REC_GPU_INFO; t <= GPUIO_REC_GPU_SYM; t++)
			printf("%s%s %llu", t > GPUIO_REC_GPU_INFO ? ", " : "", type_names[t],
			       (unsigned long long)in->counts[t]);
		putchar('\n');
		if (!in->ncolls)
			printf("%-13sno collector status record\n", "gpu");
		for (size_t i = 0; i < in->ncolls; i++) {
			const struct gpuio_gpu_info *g = &in->colls[i];

			printf("%-13spid %u: %s", i ? "" : "gpu", g->hdr.pid, gstate(g->state));
			if (g->reason[0]) {
				printf(": ");
				put_clean(g->reason, sizeof(g->reason));
			}
			printf(" (%s, clock %s, offset %lld ns, uncertainty %llu ns, CUPTI %u",
			       ghow(g->how), gclock(g->clock), (long long)g->offset_ns,
			       (unsigned long long)g->uncertainty_ns, g->cupti_version);
			if (g->cupti_error)
				printf(", CUPTI error %d", g->cupti_error);
			printf("), %llu records, cupti dropped %llu, write errors %llu\n",
			       (unsigned long long)g->records, (unsigned long long)g->cupti_dropped,
			       (unsigned long long)g->write_errors);
		}
		gpu_drops(in, &cupti, &werr);
		printf("%-13s%llu (cupti dropped %llu, collector write errors %llu)\n", "gpu drops",
		       (unsigned long long)(cupti + werr), (unsigned long long)cupti,
		       (unsigned long long)werr);
	}
	if (!in->nstats) {
		printf("%-13sunknown: no stats record in the capture\n", "drops");
	} else {
		printf("%-13s%llu (ring buffer full: vfs %llu, block %llu, path %llu, proc %llu; "
		       "maps full: pid %llu, request %llu, task %llu; cuda calls: ring buffer %llu, "
		       "too deep %llu; capture write errors %llu)\n",
		       "drops", (unsigned long long)dropped(s),
		       (unsigned long long)s->bpf[GPUIO_STAT_RB_DROP_VFS],
		       (unsigned long long)s->bpf[GPUIO_STAT_RB_DROP_BLOCK],
		       (unsigned long long)s->bpf[GPUIO_STAT_RB_DROP_PATH],
		       (unsigned long long)s->bpf[GPUIO_STAT_RB_DROP_PROC],
		       (unsigned long long)s->bpf[GPUIO_STAT_MAP_FULL_PID],
		       (unsigned long long)s->bpf[GPUIO_STAT_MAP_FULL_RQ],
		       (unsigned long long)s->bpf[GPUIO_STAT_MAP_FULL_TASK],
		       (unsigned long long)s->bpf[GPUIO_STAT_RB_DROP_CUDA],
		       (unsigned long long)s->bpf[GPUIO_STAT_CUDA_DEPTH],
		       (unsigned long long)s->user[GPUIO_USTAT_WRITE_ERRORS]);
		if (!s->final)
			printf("%-13s(no final stats: capture cut short)\n", "");
		printf("%-13sblock requests emitted %llu; unresolved paths %llu; "
		       "truncated path walks %llu\n", "counters",
		       (unsigned long long)s->bpf[GPUIO_STAT_EVENTS_BLOCK],
		       (unsigned long long)s->user[GPUIO_USTAT_PATH_UNRESOLVED],
		       (unsigned long long)s->bpf[GPUIO_STAT_PATH_TRUNC]);
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

static int print_json(const char *path, const struct info *in)
{
	const struct gpuio_cap_header *h = in->hdr;
	const struct gpuio_stats_event *s = &in->stats;
	struct json_writer *w;
	bool first = true, f2;
	char rt[64];
	int err;

	fflush(stdout);
	err = json_writer__new(STDOUT_FILENO, false, false, &w);
	if (err)
		return err;
	json_writer__putc(w, '{');
	jstr(w, &first, "capture", path, strlen(path));
	ju64(w, &first, "size_bytes", in->file_size);
	ju64(w, &first, "version", h->version);
	ju64(w, &first, "abi_version", h->abi_version);
	ju64(w, &first, "header_size", h->header_size);
	jstr(w, &first, "hostname", h->hostname, sizeof(h->hostname));
	jstr(w, &first, "kernel", h->kernel, sizeof(h->kernel));
	jstr(w, &first, "boot_id", h->boot_id, sizeof(h->boot_id));
	jstr(w, &first, "target", h->target, sizeof(h->target));
	jstr(w, &first, "cmdline", h->cmdline, sizeof(h->cmdline));
	ju64(w, &first, "tracer_pid", h->tracer_pid);
	ju64(w, &first, "ncpus", h->ncpus);
	jkey(w, &first, "flags");
	f2 = true;
	json_writer__putc(w, '{');
	jbool(w, &f2, "all", h->flags & GPUIO_CAPF_ALL);
	jbool(w, &f2, "all_fds", h->flags & GPUIO_CAPF_ALL_FDS);
	jbool(w, &f2, "launch", h->flags & GPUIO_CAPF_LAUNCH);
	json_writer__putc(w, '}');
	jkey(w, &first, "modes");
	f2 = true;
	json_writer__putc(w, '{');
	jstr(w, &f2, "vfs", h->vfs_mode, sizeof(h->vfs_mode));
	jstr(w, &f2, "block", h->block_mode, sizeof(h->block_mode));
	jstr(w, &f2, "proc", h->proc_mode, sizeof(h->proc_mode));
	jstr(w, &f2, "pagecache", h->pagecache_mode, sizeof(h->pagecache_mode));
	jstr(w, &f2, "io_uring", h->iouring_mode, sizeof(h->iouring_mode));
	json_writer__putc(w, '}');
	jstr(w, &first, "modes_detail", h->modes_detail, sizeof(h->modes_detail));
	ju64(w, &first, "realtime_ns", h->realtime_ns);
	ju64(w, &first, "monotonic_ns", h->monotonic_ns);
	fmt_realtime(h->realtime_ns, rt, sizeof(rt));
	jstr(w, &first, "realtime_utc", rt, sizeof(rt));
	ju64(w, &first, "records", in->records);
	jkey(w, &first, "record_counts");
	f2 = true;
	json_writer__putc(w, '{');
	for (int t = 1; t <= GPUIO_REC_DEVNAME; t++)
		ju64(w, &f2, type_names[t], in->counts[t]);
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
	if (in->gpu_records) {
		uint64_t cupti, werr;

		gpu_drops(in, &cupti, &werr);
		jkey(w, &first, "gpu");
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
			jstr(w, &f3, "state", gstate(g->state), 16);
			jkey(w, &f3, "reason");
			if (g->reason[0])
				json_writer__strn(w, g->reason, sizeof(g->reason));
			else
				json_writer__puts(w, "null");
			jstr(w, &f3, "how", ghow(g->how), 16);
			jstr(w, &f3, "clock", gclock(g->clock), 32);
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
	jkey(w, &first, "first_ts_ns");
	if (in->first_ts)
		json_writer__u64(w, in->first_ts);
	else
		json_writer__puts(w, "null");
	jkey(w, &first, "last_ts_ns");
	if (in->first_ts)
		json_writer__u64(w, in->last_ts);
	else
		json_writer__puts(w, "null");
	jkey(w, &first, "stats");
	if (in->nstats) {
		f2 = true;
		json_writer__putc(w, '{');
		jbool(w, &f2, "final", s->final);
		ju64(w, &f2, "dropped", dropped(s));
		jkey(w, &f2, "drops");
		{
			bool f3 = true;

			json_writer__putc(w, '{');
			for (size_t i = 0; i < gpuio_ndrop_counters; i++)
				ju64(w, &f3, gpuio_drop_counters[i].name,
				     s->bpf[gpuio_drop_counters[i].idx]);
			ju64(w, &f3, "capture_write_errors", s->user[GPUIO_USTAT_WRITE_ERRORS]);
			json_writer__putc(w, '}');
		}
		ju64(w, &f2, "path_truncated", s->bpf[GPUIO_STAT_PATH_TRUNC]);
		ju64(w, &f2, "events_block", s->bpf[GPUIO_STAT_EVENTS_BLOCK]);
		ju64(w, &f2, "path_unresolved", s->user[GPUIO_USTAT_PATH_UNRESOLVED]);
		ju64(w, &f2, "records", s->records);
		ju64(w, &f2, "snapshots", in->nstats);
		json_writer__putc(w, '}');
	} else {
		json_writer__puts(w, "null");
	}
	jbool(w, &first, "drops_known", in->nstats > 0);
	ju64(w, &first, "truncated_bytes", in->truncated);
	jkey(w, &first, "truncated_at");
	if (in->truncated)
		json_writer__u64(w, in->trunc_offset);
	else
		json_writer__puts(w, "null");
	jkey(w, &first, "corrupt");
	if (in->corrupt[0])
		json_writer__cstr(w, in->corrupt);
	else
		json_writer__puts(w, "null");
	jbool(w, &first, "complete", !in->corrupt[0] && !in->truncated && in->nstats && s->final);
	json_writer__puts(w, "}\n");
	return json_writer__close(w);
}

int cmd_info(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct gpuio_cap_reader *r = NULL;
	struct info in;
	struct stat sb;
	bool json = false;
	char err[320];
	int c, rc;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "jh", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'h':
			usage(stdout);
			return GPUIO_EXIT_OK;
		default:
			pr_err("info: unknown option '%s' (try `gpuio info --help`)", argv[optind - 1]);
			return GPUIO_EXIT_USAGE;
		}
	}
	if (argc - optind != 1) {
		pr_err("info: %s (usage: gpuio info CAPTURE [--json])",
		       optind >= argc ? "which capture?" : "one capture at a time");
		return GPUIO_EXIT_USAGE;
	}
	rc = gpuio_cap_reader__open(argv[optind], &r, err, sizeof(err));
	if (rc) {
		pr_err("%s", err);
		return GPUIO_EXIT_ERROR;
	}
	memset(&in, 0, sizeof(in));
	in.hdr = gpuio_cap_reader__header(r);
	if (stat(argv[optind], &sb) == 0)
		in.file_size = (uint64_t)sb.st_size;
	rc = scan(r, &in);
	if (json) {
		if (print_json(argv[optind], &in)) {
			pr_err("cannot write to stdout");
			rc = -EIO;
		}
	} else {
		print_text(argv[optind], &in);
		fflush(stdout);
	}
	if (in.corrupt[0])
		pr_err("%s: %s; the capture is damaged from there on: record it again",
		       argv[optind], in.corrupt);
	gpuio_cap_reader__close(r);
	free(in.colls);
	return rc ? GPUIO_EXIT_ERROR : GPUIO_EXIT_OK;
}
