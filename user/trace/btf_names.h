/* SPDX-License-Identifier: MIT */
/*
 * btf_names.h — is a name in the kernel's BTF string table? A few
 * milliseconds, where parsing the whole BTF with libbpf takes ~80: enough
 * to tell whether a tracepoint exists (its btf_trace_NAME typedef) before
 * loading the programs that attach to it.
 */
#ifndef GPUIO_BTF_NAMES_H
#define GPUIO_BTF_NAMES_H

#include <stdbool.h>

/* 1 when name is one of /sys/kernel/btf/vmlinux's strings, 0 when not,
 * -1 when that file cannot be read (the caller cannot tell). */
int btf_names__has(const char *name);

#endif
