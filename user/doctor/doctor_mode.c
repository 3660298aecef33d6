// SPDX-License-Identifier: MIT
/*
 * doctor_mode.c — the conclusion: which `gpuio trace` this user gets here
 * (see doctor.h). Full where the BPF programs load; the GPU alone (CUPTI)
 * where they cannot but the collector and a libcupti are there; else none.
 */
#include <stdio.h>
#include <string.h>
#include "doctor/doctor.h"
#include "trace/loader.h"

static const struct doctor_finding *find(const struct doctor *d, const char *section,
					 const char *key)
{
	for (int i = 0; i < d->n; i++)
		if (!strcmp(d->f[i].section, section) && !strcmp(d->f[i].key, key))
			return &d->f[i];
	return NULL;
}

static bool ok(const struct doctor *d, const char *section, const char *key)
{
	const struct doctor_finding *f = find(d, section, key);

	return f && (f->status == DOCTOR_OK || f->status == DOCTOR_WARN);
}

void doctor__mode(struct doctor *d)
{
	struct doctor_finding *f;
	char why[256] = "";
	bool gpu = ok(d, "gpu", "collector") && ok(d, "gpu", "cupti");

	if (d->can_trace) {
		d->mode = DOCTOR_MODE_FULL;
		doctor__add(d, "trace", "mode", DOCTOR_OK, "full: files, disks, thread states, CUDA "
			    "calls%s%s", gpu ? " and GPU activity (CUPTI)" : " (no GPU activity: see gpu)",
			    gpu && !ok(d, "gpu", "devices") ? " where there is a GPU (none here)" : "");
		return;
	}
	if (!d->root)
		snprintf(why, sizeof(why), "not root and no CAP_BPF + CAP_PERFMON");
	else if (gpuio_loader__probe(why, sizeof(why)) == 0)
		snprintf(why, sizeof(why), "the BPF programs do not load (see attach)");
	if (gpu) {
		d->mode = DOCTOR_MODE_GPU_ONLY;
		f = doctor__add(d, "trace", "mode", DOCTOR_WARN, "GPU only: kernels, copies, memsets, "
				"CUDA API calls and NVTX from CUPTI (gpuio trace -- CMD, or -p PID)");
		doctor__detail(f, "no BPF: %s; files, disks and thread states need root (sudo)", why);
		return;
	}
	d->mode = DOCTOR_MODE_NONE;
	f = doctor__add(d, "trace", "mode", DOCTOR_NO, "nothing: no BPF and no GPU collector");
	doctor__detail(f, "no BPF: %s; the GPU side needs libgpuio-cupti.so and a libcupti "
		       "(see gpu)", why);
}
