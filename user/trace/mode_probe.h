/* SPDX-License-Identifier: MIT */
/*
 * mode_probe.h — can this kernel load and attach fentry/fexit, or
 * kprobe/kretprobe, programs? Asked with empty programs on vfs_read before
 * the whole VFS set is loaded in that mode (bpf/trace/mode_probe.bpf.c).
 */
#ifndef GPUIO_MODE_PROBE_H
#define GPUIO_MODE_PROBE_H

#include <stddef.h>

enum mode_probe_kind { MODE_PROBE_FENTRY, MODE_PROBE_KPROBE, MODE_PROBE_UPROBE_MULTI };

/* 0 when both of the kind's programs load and attach (uprobe.multi: loads,
 * and its links are per process: cuda_uprobe_multi_probe); else -errno,
 * and why (as the ladder would say it: "PROGRAM: REASON"). */
int mode_probe(enum mode_probe_kind kind, char *why, size_t len);

#endif
