/* SPDX-License-Identifier: MIT */
/*
 * doctor.h — `gpuio doctor`: what this node gives gpuio, found by trying.
 *
 * Each probe (kernel, attach modes, GPU, permissions) adds findings: a
 * section, a stable key, a status, a value and why. cmd_doctor renders them
 * as text or JSON. Probes never stop at the first problem: a user runs this
 * on a new node to see everything that is missing at once.
 */
#ifndef GPUIO_DOCTOR_H
#define GPUIO_DOCTOR_H
#include <stdbool.h>

enum doctor_status {
	DOCTOR_INFO,   /* a fact */
	DOCTOR_OK,     /* works */
	DOCTOR_WARN,   /* works, worse than it could */
	DOCTOR_NO,     /* does not work here */
};

struct doctor_finding {
	const char *section;      /* "kernel", "attach", "gpu", "permissions" */
	const char *key;          /* stable: the JSON key */
	enum doctor_status status;
	char value[256];
	char detail[512];         /* why, or what to do */
};

#define DOCTOR_MAX 64

/* Which `gpuio trace` this user gets here (doctor__mode). */
enum doctor_mode {
	DOCTOR_MODE_NONE,      /* nothing can be traced */
	DOCTOR_MODE_GPU_ONLY,  /* no BPF: the CUPTI collector alone */
	DOCTOR_MODE_FULL,      /* BPF layers, and the GPU where there is one */
};

struct doctor {
	struct doctor_finding f[DOCTOR_MAX];
	int n;
	bool root;
	bool can_trace;           /* the file and block layers load here */
	enum doctor_mode mode;    /* set by doctor__mode, after the other probes */
};

/* Add a finding; value and detail are printf formats (detail may be NULL). */
struct doctor_finding *doctor__add(struct doctor *d, const char *section, const char *key,
				   enum doctor_status st, const char *value, ...)
	__attribute__((format(printf, 5, 6)));
void doctor__detail(struct doctor_finding *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
const char *doctor__status_name(enum doctor_status st);

void doctor__kernel(struct doctor *d);       /* doctor_kernel.c */
void doctor__attach(struct doctor *d);       /* doctor_attach.c: loads the BPF programs */
void doctor__gpu(struct doctor *d);          /* doctor_gpu.c */
void doctor__permissions(struct doctor *d);  /* doctor_perm.c */
void doctor__mode(struct doctor *d);         /* doctor_mode.c: the conclusion, last */

#endif
