// SPDX-License-Identifier: MIT
/* mapped_paths.c — a few processes' file mappings, for a burst of lookups (mapped_paths.h). */
#include <stdlib.h>
#include <string.h>
#include "lib/kmap.h"
#include "lib/proc_maps.h"
#include "trace/mapped_paths.h"

#define MAPPED_PATHS_PIDS     4

struct mfile {
	__u64 ino;
	__u32 dev;
	char *path;
};

struct pid_maps {
	pid_t pid;              /* 0: empty */
	struct mfile *f;
	size_t n, cap;
};

struct mapped_paths {
	struct pid_maps p[MAPPED_PATHS_PIDS];
	unsigned next;
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

const char *mapped_paths__find(struct mapped_paths *mp, pid_t pid, __u32 dev, __u64 ino)
{
	struct pid_maps *p = NULL;
	const char *path;

	for (unsigned i = 0; i < MAPPED_PATHS_PIDS && !p; i++)
		if (mp->p[i].pid == pid)
			p = &mp->p[i];
	if (p && (path = in(p, dev, ino)))
		return path;
	if (!p) {
		p = &mp->p[mp->next];
		mp->next = (mp->next + 1) % MAPPED_PATHS_PIDS;
	}
	if (read_maps(p, pid))
		return NULL;
	return in(p, dev, ino);
}
