/* SPDX-License-Identifier: MIT */
/* procfs.h — what /proc and /sys say about processes, files and disks. */
#ifndef GPUIO_PROCFS_H
#define GPUIO_PROCFS_H
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>
#include "capture/capture.h"

struct keyset;

/* Kernel dev_t (major << 20 | minor) from a userspace st_dev. */
__u32 procfs_kdev(dev_t dev);

/* TGID of a pid or tid; -ESRCH when it does not exist. */
int procfs_tgid(pid_t pid);

/* The process exists and is not a zombie. */
bool procfs_alive(pid_t pid);

/* When the process started (clock ticks after boot) and its address
 * space's size (bytes), from /proc/PID/stat; -ESRCH when it is gone. */
int procfs_vsize(pid_t pid, __u64 *start, __u64 *vsize);

/* Live descendant processes (not threads, not zombies) of tgid; returns the
 * count stored in out. */
size_t procfs_descendants(pid_t tgid, pid_t *out, size_t max);

/*
 * Records describing an existing process at attach: ATTACH (comm, cmdline),
 * NAME per thread, PATH per open regular file / block device (and, with
 * all_fds, every fd). Files named are added to named (may be NULL), so the
 * collector does not look for them again. Returns records written or -errno.
 */
int procfs_emit_process(struct gpuio_cap_writer *w, pid_t tgid, bool all_fds, __u64 ts,
			struct keyset *named);
/* Only the ATTACH record (comm, cmdline as /proc has them now): a later one
 * renames the process (model/proc_names.h). 0, -ESRCH or -errno. */
int procfs_emit_attach(struct gpuio_cap_writer *w, pid_t tgid, __u64 ts);

/* PATH records for the open files of tgid (all fds with all_fds; without
 * close-on-exec ones when skip_cloexec). Returns records written or -errno. */
int procfs_emit_fds(struct gpuio_cap_writer *w, pid_t tgid, bool all_fds, bool skip_cloexec,
		    __u64 ts, struct keyset *named);

/* PATH record for the file behind /proc/pid/fd/fd if it is (dev, ino). */
int procfs_emit_fd_path(struct gpuio_cap_writer *w, pid_t pid, pid_t tid, int fd,
			__u32 dev, __u64 ino, __u64 ts);

/* PATH record for (dev, ino) if pid has it mapped (executables, libraries,
 * mmap-read data: their page faults cause block reads with no open traced);
 * mp keeps the maps read for a burst of these (mapped_paths.h). */
struct mapped_paths;
int procfs_emit_mapped_path(struct mapped_paths *mp, struct gpuio_cap_writer *w, pid_t pid,
			    __u32 dev, __u64 ino, __u64 ts);

/* NAME record from /proc/pid/task/tid/comm. */
/* A GPUIO_PROC_CGROUP record: the cgroup of pid that names its job. 0 or -errno. */
int procfs_emit_cgroup(struct gpuio_cap_writer *w, pid_t pid, __u64 ts);
int procfs_emit_thread_name(struct gpuio_cap_writer *w, pid_t pid, pid_t tid, __u64 ts);

/* DEVNAME record for a disk from /sys/dev/block/MAJ:MIN/uevent. */
int procfs_emit_devname(struct gpuio_cap_writer *w, __u32 kdev, __u64 ts);

#endif
