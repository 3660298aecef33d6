/* SPDX-License-Identifier: MIT */
/*
 * proc_maps.h — read /proc/PID/maps one mapping at a time.
 *
 *   struct proc_maps it;
 *   struct proc_map m;
 *   if (proc_maps__open(&it, pid) == 0) {
 *           while (proc_maps__next(&it, &m) > 0)
 *                   ... m.lo, m.hi, m.perms, m.dev, m.ino, m.path ...
 *           proc_maps__close(&it);
 *   }
 */
#ifndef GPUIO_LIB_PROC_MAPS_H
#define GPUIO_LIB_PROC_MAPS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <limits.h>
#include <sys/types.h>

struct proc_map {
	uint64_t lo, hi;        /* [lo, hi) */
	uint64_t offset;        /* in the file */
	char perms[5];          /* "r-xp" */
	unsigned int maj, min;  /* the device */
	uint32_t dev;           /* the same in the kernel's encoding: major << 20 | minor */
	uint64_t ino;
	const char *path;       /* "" for anonymous; "[heap]", "/lib/x.so (deleted)"... */
};

struct proc_maps {
	FILE *f;
	char line[PATH_MAX + 256];
};

/* 0, or -errno (-ENOENT/-ESRCH: no such process, -EACCES...). */
int proc_maps__open(struct proc_maps *it, pid_t pid);
/* 1 and *m (valid until the next call), 0 at the end. Lines that do not parse are skipped. */
int proc_maps__next(struct proc_maps *it, struct proc_map *m);
void proc_maps__close(struct proc_maps *it);
/* Parse one maps line (its newline, if any, is cut); false if it is not one. */
bool proc_maps__parse_line(char *line, struct proc_map *m);
/* A file mapping: its path is absolute. */
static inline bool proc_map__is_file(const struct proc_map *m)
{
	return m->path[0] == '/';
}

#endif /* GPUIO_LIB_PROC_MAPS_H */
