/* SPDX-License-Identifier: MIT */
/*
 * monitor_names.h — labels for `gpuio monitor`: cgroup id -> cgroup path
 * (a walk of the cgroup v2 mount: /sys/fs/cgroup, or /sys/fs/cgroup/unified
 * on hybrid hosts) and kernel dev_t -> device name ("vda", "loop3", or
 * "tmpfs:0:45" for filesystems without a disk). Both caches are bounded.
 */
#ifndef GPUIO_MONITOR_NAMES_H
#define GPUIO_MONITOR_NAMES_H
#include <stddef.h>
#include <linux/types.h>

struct monitor_names;

int monitor_names__new(struct monitor_names **out);
void monitor_names__free(struct monitor_names *n);
/* The cgroup v2 mount point ("" when there is none). */
const char *monitor_names__cgroot(const struct monitor_names *n);
/* Path of cgroup id relative to the mount ("/" root, "/job1"); unknown ids
 * rescan the tree at most every 2 s, then read "cgroup:ID". */
const char *monitor_names__cgroup(struct monitor_names *n, __u64 cgid);
/* Name of a kernel dev_t (major << 20 | minor). */
const char *monitor_names__dev(struct monitor_names *n, __u32 kdev);

#endif
