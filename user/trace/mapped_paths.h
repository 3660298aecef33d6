/* SPDX-License-Identifier: MIT */
/*
 * mapped_paths.h — the files a process maps, from /proc/PID/maps, kept for
 * a burst of lookups: a file known only by its page faults is named from
 * its mapping (procfs_emit_mapped_path), and a Python process importing
 * torch maps ~1,700 regions, its maps ~1 ms to read. Read once for each
 * file, that was a third of gpuio's CPU under a PyTorch DataLoader.
 */
#ifndef GPUIO_MAPPED_PATHS_H
#define GPUIO_MAPPED_PATHS_H

#include <sys/types.h>
#include <linux/types.h>

struct mapped_paths;

struct mapped_paths *mapped_paths__new(void);
void mapped_paths__free(struct mapped_paths *mp);

/*
 * The path pid maps (dev, ino) from, NULL when none; ts (CLOCK_MONOTONIC)
 * is when pid used the mapping (its fault, its block I/O). The maps last
 * read for pid answer; a file not in them reads them again when that read
 * began before ts (a new image, a file mapped since), so a burst of new
 * files costs one read, and a name is never lost to a read taken too
 * early; when it began after ts the file was unmapped before it, and the
 * answer is NULL without a read (each such file read them again before:
 * a thousand reads a second under a DataLoader, its tensors' shared
 * memory gone by then). The string lives until the next call.
 */
const char *mapped_paths__find(struct mapped_paths *mp, pid_t pid, __u32 dev, __u64 ino, __u64 ts);

/* How many times the maps were read (tests/unit/unit_mapped_paths.c). */
unsigned long mapped_paths__reads(const struct mapped_paths *mp);

#endif
