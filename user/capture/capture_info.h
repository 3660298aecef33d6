/* SPDX-License-Identifier: MIT */
/*
 * capture_info.h — what a capture holds, from one read of it: the header,
 * record counts per type, time span, the last drop counters, each GPU
 * collector's last status, and whether it ended cleanly, was cut short or
 * is corrupt. `gpuio info` prints it (report/info_text.c, info_json.c).
 */
#ifndef GPUIO_CAPTURE_INFO_H
#define GPUIO_CAPTURE_INFO_H

#include <stddef.h>
#include <stdint.h>
#include "capture/capture.h"

struct capture_info {
	const struct gpuio_cap_header *hdr;
	uint64_t file_size;
	uint64_t records;
	uint64_t counts[GPUIO_REC_SCHED + 1];     /* [0]: unknown types */
	uint64_t gpu_records;
	struct gpuio_gpu_info *colls;             /* latest status per collector (pid) */
	size_t ncolls;
	uint64_t first_ts, last_ts;               /* over records with a ts */
	struct gpuio_stats_event stats;
	uint64_t nstats;
	uint64_t truncated, trunc_offset;
	char corrupt[200];
};


/* Read every record of r once into in (zeroed first; in->hdr set). 0, or
 * -EBADMSG with in->corrupt saying where (the counts cover what precedes it). */
int capture_info__scan(struct gpuio_cap_reader *r, struct capture_info *in);
void capture_info__free(struct capture_info *in);
/* CUPTI drops and collector write errors over all collectors. */
void capture_info__gpu_drops(const struct capture_info *in, uint64_t *cupti, uint64_t *werr);
/* "vfs", "block", ... "sym"; "unknown" for 0 */
const char *capture_info__type_name(int type);
/* REALTIME ns as "2026-11-24T04:02:51.256405123Z" ("unknown" for 0) */
void capture_info__utc(uint64_t ns, char *buf, size_t len);
const char *capture_info__gpu_state(uint32_t state);
const char *capture_info__gpu_clock(uint32_t clock);
const char *capture_info__gpu_how(uint32_t how);

/* `gpuio info` as text (report/info_text.c) or one JSON object (info_json.c), on stdout. */
void rpt_info__print_text(const char *path, const struct capture_info *in);
int rpt_info__print_json(const char *path, const struct capture_info *in);

#endif /* GPUIO_CAPTURE_INFO_H */
