/* SPDX-License-Identifier: MIT */
/*
 * monitor_names.h — labels for `gpuio monitor`: cgroup id -> cgroup path
 * (a walk of the cgroup v2 mount: /sys/fs/cgroup, or /sys/fs/cgroup/unified
 * on hybrid hosts; or of one v1 controller's hierarchy) and the job identity
 * its path names (lib/job_identity.h); kernel dev_t -> device name ("vda",
 * "loop3", or "tmpfs:0:45" for filesystems without a disk). Both caches are
 * bounded.
 */
#ifndef GPUIO_MONITOR_NAMES_H
#define GPUIO_MONITOR_NAMES_H
#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct monitor_names;

struct job_identity;

/* controller NULL: the cgroup v2 hierarchy; else that v1 controller's. */
int monitor_names__new(const char *controller, struct monitor_names **out);
/* The subsystem id of a v1 controller ("memory"), or -ENOENT. */
int monitor_names__v1_ssid(const char *controller);
void monitor_names__free(struct monitor_names *n);
/* The hierarchy's mount point ("" when there is none). */
const char *monitor_names__cgroot(const struct monitor_names *n);
/* Path of cgroup id relative to the mount ("/" root, "/job1"); unknown ids
 * rescan the tree at most every 2 s, then read "cgroup:ID". */
const char *monitor_names__cgroup(struct monitor_names *n, __u64 cgid);
/* The Slurm / Kubernetes / systemd identity of cgroup id (NULL: none). */
const struct job_identity *monitor_names__job(struct monitor_names *n, __u64 cgid);
/* Name of a kernel dev_t (major << 20 | minor). */
const char *monitor_names__dev(struct monitor_names *n, __u32 kdev);
/* Where that filesystem is mounted on the node, and its type ("" unknown). */
const char *monitor_names__mountpoint(struct monitor_names *n, __u32 kdev);
const char *monitor_names__fstype(struct monitor_names *n, __u32 kdev);
/* A filesystem with no user data (proc, sysfs, cgroup, debugfs...)? */
bool monitor_names__pseudo_fs(struct monitor_names *n, __u32 kdev);

#endif
