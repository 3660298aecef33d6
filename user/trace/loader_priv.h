/* SPDX-License-Identifier: MIT */
/*
 * loader_priv.h — the attach-mode ladder's table, shared by loader.c (which
 * climbs it) and loader_layers.c (which holds it). Private to user/trace.
 */
#ifndef GPUIO_LOADER_PRIV_H
#define GPUIO_LOADER_PRIV_H

#include <stdbool.h>

#define MAX_PROGS 96
/* VFS records per ring-buffer reservation (VFS_BATCH_CAP of bpf/trace/batch.bpf.h) */
#define VFS_BATCH_RECORDS 16

/* A program name prefixed "?func:" loads only where the kernel has func;
 * "@tracepoint:" attaches it to syscalls:tracepoint, where that exists. */
struct variant {
	const char *mode;              /* as reported, e.g. "sys:tp_btf" */
	const char *family;            /* as forced by --vfs-mode */
	bool needs_tracefs;
	const char *progs[MAX_PROGS];
	unsigned int expected_attach;  /* set on its programs before load (0: libbpf's) */
};

struct layer {
	const char *name;
	int hdr;                       /* its layer in the capture header (enum gpuio_layer), -1: none */
	bool optional;                 /* the trace goes on without it */
	struct variant v[8];
	bool manual;                   /* loaded here, attached by its module (per library) */
};

enum { L_PROC, L_VFS, L_BLOCK, L_PAGECACHE, L_IOURING, L_SCHED, L_FAULT, L_CUDA, L_SAMPLE,
       L_COUNT };

extern const struct layer layers[L_COUNT];

#endif
