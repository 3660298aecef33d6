// SPDX-License-Identifier: MIT
/*
 * cmd_doctor.c — `gpuio doctor`: what this node gives gpuio (user/doctor/),
 * as text or --json.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "cmd/commands.h"
#include "doctor/doctor.h"
#include "lib/json_writer.h"
#include "lib/log.h"
#include "lib/opts.h"

static bool doctor_json;

static const struct opt doctor_opts[] = {
	OPT_GROUP("options:"),
	OPT_BOOL(0, "json", &doctor_json,
		 "one JSON object: {\"version\", \"can_trace\", \"trace_mode\" (full,\n"
		 "gpu_only: no BPF, CUPTI alone; none), and per section (kernel,\n"
		 "attach, gpu, permissions, trace) per key {\"status\": ok|warn|\n"
		 "no|info, \"value\", \"detail\"}}"),
	OPT_END(),
};

static const struct opt_cmd doctor_page = {
	.name = "doctor",
	.usage = "usage: gpuio doctor [--json]",
	.about =
"Run this first on a new node: it finds, by trying, what gpuio gets here -\n"
"the kernel and its BTF, the attach mode each layer loads with (and why a\n"
"better one was refused), tracefs, the BPF ring buffer, uprobe.multi, the\n"
"CUDA driver, the GPUs, which libcupti the GPU collector would use, NVML,\n"
"and the permissions gpuio needs. Nothing is traced; the BPF programs are\n"
"loaded, attached to nothing traced, and removed.\n",
	.opts = doctor_opts,
	.after =
"exit status: 0 when gpuio can trace files and disks here, 1 when it cannot\n"
"(not root, no BTF, the programs do not load; trace_mode says whether the\n"
"GPU alone can be), 2 on a bad option.\n",
};

static void print_text(const struct doctor *d)
{
	const char *section = "";

	for (int i = 0; i < d->n; i++) {
		const struct doctor_finding *f = &d->f[i];

		if (strcmp(section, f->section)) {
			section = f->section;
			printf("%s%s\n", i ? "\n" : "", section);
		}
		printf("  %-4s %-26s %s\n", f->status == DOCTOR_INFO ? "" :
		       f->status == DOCTOR_OK ? "OK" : f->status == DOCTOR_WARN ? "WARN" : "NO",
		       f->key, f->value);
		if (f->detail[0])
			printf("       %-26s %s\n", "", f->detail);
	}
	printf("\n%s\n", d->mode == DOCTOR_MODE_FULL ? "gpuio can trace here." :
	       d->mode == DOCTOR_MODE_GPU_ONLY ? "gpuio traces the GPU alone here (no BPF): see "
	       "trace mode above." : "gpuio cannot trace here: see the NO lines above.");
}

static int print_json(const struct doctor *d)
{
	struct json_writer *w;
	const char *section = NULL;

	if (json_writer__new(STDOUT_FILENO, false, false, &w))
		return -1;
	json_writer__printf(w, "{\"version\":");
	json_writer__cstr(w, GPUIO_VERSION);
	json_writer__printf(w, ",\"can_trace\":");
	json_writer__bool(w, d->can_trace);
	json_writer__printf(w, ",\"trace_mode\":");
	json_writer__cstr(w, d->mode == DOCTOR_MODE_FULL ? "full" :
			  d->mode == DOCTOR_MODE_GPU_ONLY ? "gpu_only" : "none");
	for (int i = 0; i < d->n; i++) {
		const struct doctor_finding *f = &d->f[i];

		if (!section || strcmp(section, f->section)) {
			json_writer__puts(w, section ? "}," : ",");
			json_writer__cstr(w, f->section);
			json_writer__puts(w, ":{");
			section = f->section;
		} else {
			json_writer__putc(w, ',');
		}
		json_writer__cstr(w, f->key);
		json_writer__puts(w, ":{\"status\":");
		json_writer__cstr(w, doctor__status_name(f->status));
		json_writer__puts(w, ",\"value\":");
		json_writer__cstr(w, f->value);
		json_writer__puts(w, ",\"detail\":");
		json_writer__cstr(w, f->detail);
		json_writer__putc(w, '}');
	}
	json_writer__puts(w, section ? "}}\n" : "}\n");
	return json_writer__close(w);
}

int cmd_doctor(int argc, char **argv)
{
	static struct doctor d;
	bool json;
	int optind;

	doctor_json = false;
	optind = opt_parse(&doctor_page, argc, argv, NULL);
	if (optind == OPT_HELP)
		return GPUIO_EXIT_OK;
	if (optind == OPT_BAD)
		return GPUIO_EXIT_USAGE;
	json = doctor_json;
	if (optind < argc) {
		pr_err("doctor: unexpected argument '%s'", argv[optind]);
		return GPUIO_EXIT_USAGE;
	}
	memset(&d, 0, sizeof(d));
	d.root = geteuid() == 0;
	doctor__kernel(&d);
	doctor__attach(&d);
	doctor__gpu(&d);
	doctor__permissions(&d);
	doctor__mode(&d);
	if (json ? print_json(&d) : (print_text(&d), 0))
		return GPUIO_EXIT_ERROR;
	return d.can_trace ? GPUIO_EXIT_OK : GPUIO_EXIT_ERROR;
}
