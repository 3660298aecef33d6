// SPDX-License-Identifier: MIT
/*
 * findings_src.c — where an export's findings tracks come from: the report
 * model of the same capture (report.h), its steps and GPU idle gaps handed
 * to the timeline model to draw. A capture without thread states or GPU
 * activity has no findings: the report is not run. The report reads the
 * capture on its own (its own pass); a failure there costs the findings,
 * not the export.
 */
#include <stdlib.h>
#include <string.h>
#include "export/findings_src.h"
#include "lib/log.h"
#include "model/findings.h"
#include "report/report.h"

#define GAP_MIN_NS (1000 * 1000)        /* GPU idle gaps drawn: 1 ms or more... */
#define GAP_TOP    10                   /* ...and the report's largest, whatever their length */

struct export_findings {
	struct rpt_model *r;
	struct findings f;
};

struct export_findings *export_findings__attach(struct tl_model *m, const char *capture_path,
					       bool always)
{
	struct rpt_opts opt = { .top = 10 };
	struct export_findings *x;
	char err[256];

	if (!tl_model__has_findings_input(m))
		return NULL;
	if (!always && tl_model__sched_records(m) > FINDINGS_AUTO_MAX) {
		pr_info("%s: the report's findings (steps, GPU idle gaps) left out: %llu scheduler "
			"records, whose thread states the report would hold beside the export "
			"(~48 bytes each); `gpuio report` answers, or `gpuio convert --findings` draws them",
			capture_path, (unsigned long long)tl_model__sched_records(m));
		return NULL;
	}
	x = calloc(1, sizeof(*x));
	if (!x)
		return NULL;
	x->r = rpt_model__open(capture_path, &opt, err, sizeof(err));
	if (!x->r) {
		pr_warn("%s: the report's findings left out of the export: %s", capture_path, err);
		free(x);
		return NULL;
	}
	x->f.gap_min_ns = GAP_MIN_NS;
	x->f.gap_top = GAP_TOP;
	if (rpt_findings__build(x->r, &x->f)) {
		pr_warn("%s: the report's findings left out of the export: out of memory", capture_path);
		export_findings__free(x);
		return NULL;
	}
	tl_model__set_findings(m, &x->f);
	return x;
}

void export_findings__free(struct export_findings *x)
{
	if (!x)
		return;
	findings__free(&x->f);
	rpt_model__close(x->r);
	free(x);
}
