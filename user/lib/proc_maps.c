// SPDX-License-Identifier: MIT
/* proc_maps.c — see proc_maps.h. */
#include <errno.h>
#include <string.h>
#include "lib/proc_maps.h"

bool proc_maps__parse_line(char *line, struct proc_map *m)
{
	unsigned long long lo, hi, off, ino;
	unsigned int maj, min;
	int pos = 0;

	/* "start-end perms offset MAJ:MIN INODE   PATH" (hex but the inode) */
	if (sscanf(line, "%llx-%llx %4s %llx %x:%x %llu %n", &lo, &hi, m->perms, &off, &maj, &min,
		   &ino, &pos) < 7 || !pos)
		return false;
	line[strcspn(line, "\n")] = 0;
	m->lo = lo;
	m->hi = hi;
	m->offset = off;
	m->maj = maj;
	m->min = min;
	m->dev = (maj << 20) | min;
	m->ino = ino;
	m->path = line + pos;
	return true;
}

int proc_maps__open(struct proc_maps *it, pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	it->f = fopen(path, "re");
	return it->f ? 0 : -errno;
}

int proc_maps__next(struct proc_maps *it, struct proc_map *m)
{
	while (it->f && fgets(it->line, sizeof(it->line), it->f))
		if (proc_maps__parse_line(it->line, m))
			return 1;
	return 0;
}

void proc_maps__close(struct proc_maps *it)
{
	if (it->f)
		fclose(it->f);
	it->f = NULL;
}
