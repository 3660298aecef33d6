/* SPDX-License-Identifier: MIT */
/*
 * info.h — what a capture holds, from one read of it by its session
 * (model/session.h): the header, record counts per type, time span, the
 * last drop counters, each GPU collector's last status, and whether it ended
 * cleanly, was cut short or is corrupt. `gpuio info` prints it (info_text.c,
 * info_json.c).
 */
#ifndef GPUIO_REPORT_INFO_H
#define GPUIO_REPORT_INFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "capture/capture.h"

struct model_session;

struct capture_info {
	const struct gpuio_cap_header *hdr;
	uint64_t file_size;
	uint64_t records;
	uint64_t counts[GPUIO_REC_LAST + 1];     /* [0]: unknown types */
	uint64_t gpu_records;
	struct gpuio_gpu_info *colls;             /* latest status per collector (pid) */
	size_t ncolls;
	uint64_t first_ts, last_ts;               /* over records with a ts */
	struct gpuio_stats_event stats;
	uint64_t nstats;
	bool sockets;                             /* socket I/O traced (flag or peer records) */
	uint64_t truncated, trunc_offset;
	char corrupt[200];
	struct model_session *s;                  /* the capture read */
};

/*
 * Read path once (its session) into in. 0; -EBADMSG with in->corrupt
 * saying where (the counts cover what precedes it); or -errno with the
 * reason in err (the capture cannot be opened: nothing is in in).
 */
int capture_info__read(const char *path, struct capture_info *in, char *err, size_t errlen);
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

#endif /* GPUIO_REPORT_INFO_H */
