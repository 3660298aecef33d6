/* SPDX-License-Identifier: MIT */
/*
 * mode_probe.h — can this kernel load and attach fentry/fexit, or
 * kprobe/kretprobe, programs? Asked with empty programs on vfs_read before
 * the whole VFS set is loaded in that mode (bpf/trace/mode_probe.bpf.c).
 */
#ifndef GPUIO_MODE_PROBE_H
#define GPUIO_MODE_PROBE_H

#include <stddef.h>

enum mode_probe_kind { MODE_PROBE_FENTRY, MODE_PROBE_KPROBE };

/* 0 when both of the kind's programs load and attach; else -errno, and
 * why (as the ladder would say it: "PROGRAM: REASON"). */
int mode_probe(enum mode_probe_kind kind, char *why, size_t len);

#endif
