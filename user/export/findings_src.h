/* SPDX-License-Identifier: MIT */
/*
 * findings_src.h — the report's findings for an export (findings_src.c).
 */
#ifndef GPUIO_EXPORT_FINDINGS_SRC_H
#define GPUIO_EXPORT_FINDINGS_SRC_H

#include "timeline/timeline.h"

struct export_findings;

/* Run the report on capture_path and hand m its findings; NULL when there
 * are none (nothing to find, or the report failed: warned). Free after the
 * walk. */
struct export_findings *export_findings__attach(struct tl_model *m, const char *capture_path);
void export_findings__free(struct export_findings *x);

#endif
