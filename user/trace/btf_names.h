/* SPDX-License-Identifier: MIT */
/*
 * btf_names.h — is a name in the kernel's BTF string table? A bisection
 * over the tracepoints' names, a scan for the rest: enough to tell whether
 * a tracepoint exists (its btf_trace_NAME typedef) before loading the
 * programs that attach to it. Its strings come from the one parse of the
 * kernel's BTF that gpuio's checks share (btf_names__vmlinux).
 */
#ifndef GPUIO_BTF_NAMES_H
#define GPUIO_BTF_NAMES_H

#include <stdbool.h>

struct btf;

/* 1 when name is one of /sys/kernel/btf/vmlinux's strings, 0 when not,
 * -1 when that file cannot be read (the caller cannot tell). */
int btf_names__has(const char *name);

/* The kernel's BTF, parsed once for the whole process and shared by its
 * users (the loader's checks, the mode probe); NULL when there is none. */
struct btf *btf_names__vmlinux(void);

#endif
