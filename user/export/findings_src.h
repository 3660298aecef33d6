/* SPDX-License-Identifier: MIT */
/*
 * findings_src.h — the report's findings for an export (findings_src.c).
 */
#ifndef GPUIO_EXPORT_FINDINGS_SRC_H
#define GPUIO_EXPORT_FINDINGS_SRC_H

#include "timeline/timeline.h"

struct export_findings;

/* Run the report on capture_path and hand m its findings; NULL when there
 * are none (nothing to find, or the report failed: warned), or, unless
 * always, when the capture has more than FINDINGS_AUTO_MAX scheduler
 * records (said): the report's pass would hold their thread states beside
 * the export's model. Free after the walk. */
#define FINDINGS_AUTO_MAX 4000000ull
struct export_findings *export_findings__attach(struct tl_model *m, const char *capture_path,
					       bool always);
void export_findings__free(struct export_findings *x);

#endif
