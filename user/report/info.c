// SPDX-License-Identifier: MIT
/* info.c — what a capture holds (info.h), from its session. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include "model/session.h"
#include "report/info.h"
#include "lib/units.h"

static const char *const type_names[] = {
	[0] = "unknown", [GPUIO_REC_VFS] = "vfs", [GPUIO_REC_BLOCK] = "block",
	[GPUIO_REC_PATH] = "path", [GPUIO_REC_PROC] = "proc", [GPUIO_REC_STATS] = "stats",
	[GPUIO_REC_DEVNAME] = "devname",
	[GPUIO_REC_GPU_INFO] = "info", [GPUIO_REC_GPU_KERNEL] = "kernel",
	[GPUIO_REC_GPU_MEMCPY] = "memcpy", [GPUIO_REC_GPU_MEMSET] = "memset",
	[GPUIO_REC_CUDA_API] = "cuda_api", [GPUIO_REC_GPU_SYNC] = "sync", [GPUIO_REC_NVTX] = "nvtx",
	[GPUIO_REC_GPU_OVERHEAD] = "overhead", [GPUIO_REC_GPU_SYM] = "sym",
	[GPUIO_REC_SCHED] = "sched", [GPUIO_REC_FAULT_COUNT] = "fault_count",
};
_Static_assert(ARRAY_SIZE(type_names) == GPUIO_REC_LAST + 1, "a record kind without a name");
const char *capture_info__type_name(int type)
{
	return type > 0 && type < (int)ARRAY_SIZE(type_names) &&
	       type_names[type] ? type_names[type] : "unknown";
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

/* Read every record once (the session); a corrupt record stops the count (message kept). */
int capture_info__read(const char *path, struct capture_info *in, char *err, size_t errlen)
{
	const struct model_collector *c;
	const struct model_facts *f;
	struct stat sb;
	int rc;

	memset(in, 0, sizeof(*in));
	rc = model_session__open(path, &in->s, err, errlen);
	if (rc)
		return rc;
	f = model_session__facts(in->s);
	in->hdr = f->hdr;
	if (stat(path, &sb) == 0)
		in->file_size = (uint64_t)sb.st_size;
	rc = model_session__run(in->s, NULL, 0);
	if (rc == -EBADMSG)
		snprintf(in->corrupt, sizeof(in->corrupt), "%s", model_session__error(in->s));
	else if (rc)
		return rc;
	in->records = f->records;
	memcpy(in->counts, f->counts, sizeof(in->counts));
	for (unsigned t = GPUIO_REC_GPU_INFO; t <= GPUIO_REC_GPU_SYM; t++)
		in->gpu_records += f->counts[t];
	in->first_ts = f->first_ts;
	in->last_ts = f->last_ts;
	in->stats = f->stats;
	in->nstats = f->counts[GPUIO_REC_STATS];
	in->truncated = f->truncated;
	in->trunc_offset = f->trunc_offset;
	while ((c = model_session__collector(in->s, in->ncolls)) != NULL) {
		struct gpuio_gpu_info *g = realloc(in->colls, (in->ncolls + 1) * sizeof(*g));

		if (!g)
			return -ENOMEM;
		in->colls = g;
		g[in->ncolls] = c->info;
		/* an UNAVAILABLE record's reason stays when a FINAL one follows */
		memcpy(g[in->ncolls].reason, c->reason, sizeof(g->reason));
		in->ncolls++;
	}
	return rc;
}

void capture_info__utc(uint64_t ns, char *buf, size_t len)
{
	time_t secs = (time_t)(ns / NSEC_PER_SEC);
	struct tm tm;
	char d[40];

	if (!ns || !gmtime_r(&secs, &tm)) {
		snprintf(buf, len, "unknown");
		return;
	}
	strftime(d, sizeof(d), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%09lluZ", d, (unsigned long long)(ns % NSEC_PER_SEC));
}

void capture_info__free(struct capture_info *in)
{
	free(in->colls);
	in->colls = NULL;
	model_session__free(in->s);
	in->s = NULL;
}
