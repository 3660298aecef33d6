// SPDX-License-Identifier: MIT
/* mapped_paths.c — a few processes' file mappings, for a burst of lookups (mapped_paths.h). */
#include <stdlib.h>
#include <string.h>
#include "lib/clock.h"
#include "lib/kmap.h"
#include "lib/proc_maps.h"
#include "trace/mapped_paths.h"

/* a DataLoader's main process and its workers, each kept: with fewer
 * slots than processes a burst of names reads every process's maps again */
#define MAPPED_PATHS_PIDS     16

struct mfile {
	__u64 ino;
	__u32 dev;
	char *path;
};

struct pid_maps {
	pid_t pid;              /* 0: empty */
	__u64 read_ns;          /* CLOCK_MONOTONIC as the read began */
	struct mfile *f;
	size_t n, cap;
};

struct mapped_paths {
	struct pid_maps p[MAPPED_PATHS_PIDS];
	unsigned next;
	unsigned long reads;
};

struct mapped_paths *mapped_paths__new(void)
{
	return calloc(1, sizeof(struct mapped_paths));
}

static void clear(struct pid_maps *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->f[i].path);
	p->n = 0;
	p->pid = 0;
}

void mapped_paths__free(struct mapped_paths *mp)
{
	if (!mp)
		return;
	for (unsigned i = 0; i < MAPPED_PATHS_PIDS; i++) {
		clear(&mp->p[i]);
		free(mp->p[i].f);
	}
	free(mp);
}

/* pid's file mappings into p, one per (dev, ino) run of regions */
static int read_maps(struct pid_maps *p, pid_t pid)
{
	struct proc_maps it;
	struct proc_map m;
	int err;

	clear(p);
	p->read_ns = clock_mono_ns();
	err = proc_maps__open(&it, pid);
	if (err)
		return err;
	while (proc_maps__next(&it, &m) > 0) {
		if (!proc_map__is_file(&m) ||
		    (p->n && p->f[p->n - 1].ino == m.ino && p->f[p->n - 1].dev == m.dev))
			continue;
		if (array_grow((void **)&p->f, &p->cap, p->n + 1, sizeof(*p->f)) ||
		    !(p->f[p->n].path = strdup(m.path))) {
			proc_maps__close(&it);
			return -1;
		}
		p->f[p->n].ino = m.ino;
		p->f[p->n].dev = m.dev;
		p->n++;
	}
	proc_maps__close(&it);
	p->pid = pid;
	return 0;
}

static const char *in(const struct pid_maps *p, __u32 dev, __u64 ino)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->f[i].ino == ino && p->f[i].dev == dev)
			return p->f[i].path;
	return NULL;
}

const char *mapped_paths__find(struct mapped_paths *mp, pid_t pid, __u32 dev, __u64 ino, __u64 ts)
{
	struct pid_maps *p = NULL;
	const char *path;

	for (unsigned i = 0; i < MAPPED_PATHS_PIDS && !p; i++)
		if (mp->p[i].pid == pid)
			p = &mp->p[i];
	if (p && (path = in(p, dev, ino)))
		return path;
	/* maps read after the event would have the mapping, were it still
	 * there: the file is gone (a DataLoader's shared-memory tensors, a
	 * hundred a second), and reading again would find it no more */
	if (p && ts && p->read_ns >= ts)
		return NULL;
	if (!p) {
		p = &mp->p[mp->next];
		mp->next = (mp->next + 1) % MAPPED_PATHS_PIDS;
	}
	mp->reads++;
	if (read_maps(p, pid))
		return NULL;
	return in(p, dev, ino);
}

unsigned long mapped_paths__reads(const struct mapped_paths *mp)
{
	return mp->reads;
}
