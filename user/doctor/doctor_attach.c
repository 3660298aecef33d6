// SPDX-License-Identifier: MIT
/*
 * doctor_attach.c — the attach mode each layer gets here, found the way
 * `gpuio trace` and `gpuio monitor` find it: by loading and attaching their
 * BPF programs (best mode first), tracing nothing, then detaching.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "doctor/doctor.h"
#include "lib/log.h"
#include "monitor/monitor_bpf.h"
#include "trace/loader.h"

/* The refusals the loader recorded that name this layer ("vfs fentry refused: ..."). */
static void refusals_of(const char *detail, const char *layer, char *out, size_t len)
{
	char copy[512], *save = NULL, *part;
	size_t used = 0, n = strlen(layer);

	out[0] = 0;
	snprintf(copy, sizeof(copy), "%s", detail);
	for (part = strtok_r(copy, ";", &save); part; part = strtok_r(NULL, ";", &save)) {
		while (*part == ' ')
			part++;
		if (strncmp(part, layer, n) || part[n] != ' ')
			continue;
		used += (size_t)snprintf(out + used, used < len ? len - used : 0, "%s%s",
					 used ? "; " : "", part);
	}
}

static void layer(struct doctor *d, const char *key, const char *mode, const char *best,
		  const char *detail)
{
	struct doctor_finding *f;
	char why[512];

	refusals_of(detail, key, why, sizeof(why));
	f = doctor__add(d, "attach", key, !mode[0] || !strcmp(mode, "off") ? DOCTOR_NO :
			strcmp(mode, best) ? DOCTOR_WARN : DOCTOR_OK, "%s", mode[0] ? mode : "none");
	if (why[0])
		doctor__detail(f, "%s", why);
}

void doctor__attach(struct doctor *d)
{
	/* the programs `gpuio trace` loads by default: socket hooks included */
	struct gpuio_loader_opts lo = { .self_tgid = (__u32)getpid(), .ringbuf_bytes = 1 << 20,
					.sockets = true };
	struct monitor_loader_opts mo = { .max_cgroups = 64, .max_procs = 64, .max_devs = 16,
					  .max_rqs = 64 };
	struct monitor_loader *ml = NULL;
	struct gpuio_loader *l = NULL;
	const struct gpuio_cap_layer *ly;
	struct doctor_finding *f;
	int verbosity = gpuio_log_verbosity;

	if (!d->root) {
		f = doctor__add(d, "attach", "trace", DOCTOR_NO, "not tried");
		doctor__detail(f, "loading BPF programs needs root (or CAP_BPF and CAP_PERFMON): "
			       "run sudo gpuio doctor");
		return;
	}
	gpuio_log_verbosity = GPUIO_LOG_ERROR;   /* the loaders' own progress lines are not findings */
	if (gpuio_loader__open(&lo, &l) != 0) {
		gpuio_log_verbosity = verbosity;
		f = doctor__add(d, "attach", "trace", DOCTOR_NO, "the trace programs do not load");
		doctor__detail(f, "see the error above; gpuio trace cannot run here");
		return;
	}
	gpuio_log_verbosity = verbosity;
	d->can_trace = strcmp(l->modes[GPUIO_LAYER_VFS], "off") && l->modes[GPUIO_LAYER_VFS][0] &&
		       l->modes[GPUIO_LAYER_BLOCK][0];
	/* each against the best mode, the one the loader's ladder tries first */
	gpuio_cap_layer__for_each(ly)
		layer(d, ly->name, l->modes[ly - gpuio_cap_layers],
		      gpuio_loader__best_mode(ly - gpuio_cap_layers), l->detail);
	f = doctor__add(d, "attach", "cuda", !strcmp(l->cuda_mode, "uprobe.multi") ? DOCTOR_OK :
			!strcmp(l->cuda_mode, "off") ? DOCTOR_NO : DOCTOR_WARN, "%s", l->cuda_mode);
	if (strcmp(l->cuda_mode, "uprobe.multi"))
		doctor__detail(f, "uprobe.multi (Linux 6.6+) attaches a library in one link; "
			       "classic uprobes take one per function");
	gpuio_loader__destroy(l);

	gpuio_log_verbosity = GPUIO_LOG_ERROR;
	if (monitor_loader__open(&mo, &ml) == 0) {
		gpuio_log_verbosity = verbosity;
		f = doctor__add(d, "attach", "monitor", strcmp(ml->mode, "tp_btf") ? DOCTOR_WARN : DOCTOR_OK,
				"%s", ml->mode);
		if (ml->detail[0])
			doctor__detail(f, "%s", ml->detail);
		monitor_loader__destroy(ml);
	} else {
		gpuio_log_verbosity = verbosity;
		doctor__add(d, "attach", "monitor", DOCTOR_NO, "the monitor's programs do not load");
	}
}
