// SPDX-License-Identifier: MIT
/* capture_info.c — what a capture holds (capture_info.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "capture/capture_info.h"

static const char *const type_names[] = {
	[0] = "unknown", [GPUIO_REC_VFS] = "vfs", [GPUIO_REC_BLOCK] = "block",
	[GPUIO_REC_PATH] = "path", [GPUIO_REC_PROC] = "proc", [GPUIO_REC_STATS] = "stats",
	[GPUIO_REC_DEVNAME] = "devname",
	[GPUIO_REC_GPU_INFO] = "info", [GPUIO_REC_GPU_KERNEL] = "kernel",
	[GPUIO_REC_GPU_MEMCPY] = "memcpy", [GPUIO_REC_GPU_MEMSET] = "memset",
	[GPUIO_REC_CUDA_API] = "cuda_api", [GPUIO_REC_GPU_SYNC] = "sync", [GPUIO_REC_NVTX] = "nvtx",
	[GPUIO_REC_GPU_OVERHEAD] = "overhead", [GPUIO_REC_GPU_SYM] = "sym",
	[GPUIO_REC_SCHED] = "sched",
};
#define MAX_COLLECTORS 4096     /* collectors listed (one per process) */

const char *capture_info__type_name(int type)
{
	return type > 0 && type < (int)(sizeof(type_names) / sizeof(type_names[0])) &&
	       type_names[type] ? type_names[type] : "unknown";
}

/* The latest status record of each collector: its counters are cumulative. */
static void note_collector(struct capture_info *in, const struct gpuio_gpu_info *g)
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

const char *capture_info__gpu_state(uint32_t s)
{
	return s == GPUIO_GPU_ON ? "on" : s == GPUIO_GPU_UNAVAILABLE ? "unavailable" :
	       s == GPUIO_GPU_FINAL ? "final" : "unknown";
}

const char *capture_info__gpu_clock(uint32_t c)
{
	return c == GPUIO_GPU_CLOCK_MONOTONIC_CB ? "monotonic_callback" :
	       c == GPUIO_GPU_CLOCK_OFFSET ? "offset" : "none";
}

const char *capture_info__gpu_how(uint32_t h)
{
	return h == GPUIO_GPU_HOW_LAUNCH ? "launch" : h == GPUIO_GPU_HOW_ATTACH ? "attach" :
	       "unknown";
}

void capture_info__gpu_drops(const struct capture_info *in, uint64_t *cupti, uint64_t *werr)
{
	*cupti = *werr = 0;
	for (size_t i = 0; i < in->ncolls; i++) {
		*cupti += in->colls[i].cupti_dropped;
		*werr += in->colls[i].write_errors;
	}
}

/* Read every record once; a corrupt record stops the count (message kept). */
int capture_info__scan(struct gpuio_cap_reader *r, struct capture_info *in)
{
	const struct gpuio_hdr *h;
	int rc;

	while ((rc = gpuio_cap_reader__next(r, &h)) > 0) {
		in->records++;
		in->counts[h->type <= GPUIO_REC_SCHED ? h->type : 0]++;
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

void capture_info__utc(uint64_t ns, char *buf, size_t len)
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

void capture_info__free(struct capture_info *in)
{
	free(in->colls);
	in->colls = NULL;
}
