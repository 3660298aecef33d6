// SPDX-License-Identifier: MIT
/* monitor_names.c — cgroup and device names. See monitor_names.h. */
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include "monitor/monitor_names.h"

#define CG_SLOTS 8192           /* cgroups remembered (power of two) */
#define DEV_SLOTS 256

struct cg_ent { __u64 id; char *path; };
struct dev_ent { __u32 dev; char name[48]; };

struct monitor_names {
	char root[256];
	struct cg_ent cg[CG_SLOTS];
	struct dev_ent devs[DEV_SLOTS];
	__u64 last_scan_ns;
	char unknown[48];
};

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* The cgroup2 mount from mountinfo (field 5 = mount point, after " - " the type). */
static void find_cgroup2(char *out, size_t len)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[1024];

	out[0] = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char mnt[256], *dash = strstr(line, " - ");

		if (!dash || strncmp(dash + 3, "cgroup2 ", 8))
			continue;
		if (sscanf(line, "%*s %*s %*s %*s %255s", mnt) == 1) {
			snprintf(out, len, "%s", mnt);
			break;
		}
	}
	fclose(f);
}

static struct cg_ent *cg_slot(struct monitor_names *n, __u64 id)
{
	/* direct-mapped: a colliding cgroup replaces the older one (bounded) */
	return &n->cg[(id * 0x9E3779B97F4A7C15ull) >> 51 & (CG_SLOTS - 1)];
}

static void cg_put(struct monitor_names *n, __u64 id, const char *rel)
{
	struct cg_ent *e = cg_slot(n, id);
	char *p = strdup(rel[0] ? rel : "/");

	if (!p)
		return;
	free(e->path);
	e->id = id;
	e->path = p;
}

static struct monitor_names *walking;

static int walk_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	if (type != FTW_D)
		return 0;
	/* kernfs: a cgroup's id is the inode number of its directory */
	cg_put(walking, (__u64)st->st_ino, path + strlen(walking->root));
	return 0;
}

static void scan(struct monitor_names *n)
{
	n->last_scan_ns = now_ns();
	if (!n->root[0])
		return;
	walking = n;
	nftw(n->root, walk_one, 16, FTW_PHYS | FTW_MOUNT);
	walking = NULL;
}

int monitor_names__new(struct monitor_names **out)
{
	struct monitor_names *n = calloc(1, sizeof(*n));

	if (!n)
		return -ENOMEM;
	find_cgroup2(n->root, sizeof(n->root));
	scan(n);
	*out = n;
	return 0;
}

void monitor_names__free(struct monitor_names *n)
{
	if (!n)
		return;
	for (int i = 0; i < CG_SLOTS; i++)
		free(n->cg[i].path);
	free(n);
}

const char *monitor_names__cgroot(const struct monitor_names *n)
{
	return n->root;
}

const char *monitor_names__cgroup(struct monitor_names *n, __u64 cgid)
{
	struct cg_ent *e = cg_slot(n, cgid);

	if (e->path && e->id == cgid)
		return e->path;
	if (now_ns() - n->last_scan_ns > 2000000000ull) {
		scan(n);
		if (e->path && e->id == cgid)
			return e->path;
	}
	if (cgid == 0)
		return "kernel";
	snprintf(n->unknown, sizeof(n->unknown), "cgroup:%llu", (unsigned long long)cgid);
	return n->unknown;
}

/* "fstype:MAJ:MIN" from mountinfo for a filesystem with no block device. */
static void fs_name(unsigned maj, unsigned min, char *out, size_t len)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[1024], want[32];

	snprintf(out, len, "%u:%u", maj, min);
	if (!f)
		return;
	snprintf(want, sizeof(want), " %u:%u ", maj, min);
	while (fgets(line, sizeof(line), f)) {
		char type[32], *dash = strstr(line, " - ");

		if (!dash || !strstr(line, want) || strstr(line, want) > dash)
			continue;
		if (sscanf(dash + 3, "%31s", type) == 1)
			snprintf(out, len, "%s:%u:%u", type, maj, min);
		break;
	}
	fclose(f);
}

const char *monitor_names__dev(struct monitor_names *n, __u32 kdev)
{
	struct dev_ent *e = &n->devs[(kdev ^ (kdev >> 11)) & (DEV_SLOTS - 1)];
	unsigned maj = kdev >> 20, min = kdev & 0xfffff;
	char path[96], line[128];
	FILE *f;

	if (e->name[0] && e->dev == kdev)
		return e->name;
	e->dev = kdev;
	e->name[0] = 0;
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/uevent", maj, min);
	f = fopen(path, "re");
	if (f) {
		while (fgets(line, sizeof(line), f))
			if (!strncmp(line, "DEVNAME=", 8)) {
				line[strcspn(line, "\n")] = 0;
				snprintf(e->name, sizeof(e->name), "%s", line + 8);
				break;
			}
		fclose(f);
	}
	if (!e->name[0])
		fs_name(maj, min, e->name, sizeof(e->name));
	return e->name;
}
