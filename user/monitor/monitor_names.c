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
#include "lib/job_identity.h"
#include "lib/units.h"

#define CG_SLOTS 8192           /* cgroups remembered (power of two) */
#define DEV_SLOTS 256

struct mon_cg_ent { __u64 id; char *path; struct job_identity *job; /* NULL: none */ };
struct mon_dev_ent {
	__u32 dev;
	bool pseudo;            /* proc, sysfs, cgroup...: no user data */
	char name[48];
	char mnt[160];          /* where it is mounted ("" unknown) */
	char fstype[32];
	__u64 fs_ns;            /* when mnt was looked up */
};

struct monitor_names {
	char root[256];
	struct mon_cg_ent cg[CG_SLOTS];
	struct mon_dev_ent devs[DEV_SLOTS];
	__u64 last_scan_ns;
	char unknown[48];
};

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

/* Does a comma-separated option list hold word? */
static bool has_opt(const char *opts, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = opts; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
		if (!strncmp(p, word, n) && (p[n] == ',' || p[n] == 0 || p[n] == '\n' || p[n] == ' '))
			return true;
	return false;
}

/*
 * The mount point of the cgroup2 hierarchy (controller NULL) or of the v1
 * hierarchy holding controller, from mountinfo (field 5 = mount point;
 * after " - ": type, source, super options, which name v1 controllers).
 */
static void find_hierarchy(const char *controller, char *out, size_t len)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[1024];

	out[0] = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char mnt[256], type[16], opts[512], *dash = strstr(line, " - ");

		if (!dash || sscanf(dash + 3, "%15s %*s %511s", type, opts) != 2)
			continue;
		if (controller ? strcmp(type, "cgroup") || !has_opt(opts, controller)
			       : strcmp(type, "cgroup2"))
			continue;
		if (sscanf(line, "%*s %*s %*s %*s %255s", mnt) == 1) {
			snprintf(out, len, "%s", mnt);
			break;
		}
	}
	fclose(f);
}

int monitor_names__v1_ssid(const char *controller)
{
	/* /proc/cgroups lists the controllers in subsystem id order */
	FILE *f = fopen("/proc/cgroups", "re");
	char line[256], name[64];
	int ssid = 0, found = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '#' || sscanf(line, "%63s", name) != 1)
			continue;
		if (!strcmp(name, controller)) {
			found = ssid;
			break;
		}
		ssid++;
	}
	fclose(f);
	return found;
}

static struct mon_cg_ent *cg_slot(struct monitor_names *n, __u64 id)
{
	/* direct-mapped: a colliding cgroup replaces the older one (bounded) */
	return &n->cg[(id * 0x9E3779B97F4A7C15ull) >> 51 & (CG_SLOTS - 1)];
}

static void cg_put(struct monitor_names *n, __u64 id, const char *rel)
{
	struct mon_cg_ent *e = cg_slot(n, id);
	char *p = strdup(rel[0] ? rel : "/");
	struct job_identity job;

	if (!p)
		return;
	if (e->id == id && e->path && !strcmp(e->path, p)) {
		free(p);                /* known: keep its parsed identity */
		return;
	}
	free(e->path);
	free(e->job);
	e->id = id;
	e->path = p;
	e->job = NULL;
	if (job_identity__parse(p, &job)) {
		e->job = malloc(sizeof(job));
		if (e->job)
			*e->job = job;
	}
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

int monitor_names__new(const char *controller, struct monitor_names **out)
{
	struct monitor_names *n = calloc(1, sizeof(*n));

	if (!n)
		return -ENOMEM;
	find_hierarchy(controller, n->root, sizeof(n->root));
	scan(n);
	*out = n;
	return 0;
}

void monitor_names__free(struct monitor_names *n)
{
	if (!n)
		return;
	for (int i = 0; i < CG_SLOTS; i++) {
		free(n->cg[i].path);
		free(n->cg[i].job);
	}
	free(n);
}

const char *monitor_names__cgroot(const struct monitor_names *n)
{
	return n->root;
}

const char *monitor_names__cgroup(struct monitor_names *n, __u64 cgid)
{
	struct mon_cg_ent *e = cg_slot(n, cgid);

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

const struct job_identity *monitor_names__job(struct monitor_names *n, __u64 cgid)
{
	struct mon_cg_ent *e = cg_slot(n, cgid);

	monitor_names__cgroup(n, cgid);         /* resolves (and rescans) */
	return e->id == cgid ? e->job : NULL;
}

/* Filesystems that hold no user data: left out of the VFS series by default. */
static bool pseudo_fs(const char *type)
{
	static const char *const list[] = {
		"proc", "sysfs", "cgroup", "cgroup2", "debugfs", "tracefs", "securityfs",
		"bpf", "pstore", "configfs", "fusectl", "efivarfs", "selinuxfs", "devpts",
		"mqueue", "binfmt_misc", "autofs", "rpc_pipefs", "nsfs", "pipefs", "sockfs",
		"anon_inodefs", "hugetlbfs", "nfsd",
	};

	for (size_t i = 0; i < ARRAY_SIZE(list); i++)
		if (!strcmp(type, list[i]))
			return true;
	return false;
}

/* mountinfo escapes space, tab, newline and backslash as \ooo */
static void unescape(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*o++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = 0;
}

/*
 * Mount point and type of device maj:min, from the host's mount table
 * (/proc/1/mountinfo: in a container with hostPID that is the node's; else
 * our own). Of several mounts of one filesystem (bind mounts), the one of
 * its root, then the shortest path.
 */
static void fs_of(struct mon_dev_ent *e, unsigned maj, unsigned min)
{
	FILE *f = fopen("/proc/1/mountinfo", "re");
	char line[2048], want[32];
	size_t best = 0;
	bool best_root = false;

	if (!f)
		f = fopen("/proc/self/mountinfo", "re");
	e->mnt[0] = 0;
	e->fs_ns = now_ns();
	if (!f)
		return;
	snprintf(want, sizeof(want), "%u:%u", maj, min);
	while (fgets(line, sizeof(line), f)) {
		char dev[32], root[1024], mnt[1024], type[32], *dash = strstr(line, " - ");
		bool is_root;

		if (!dash || sscanf(line, "%*s %*s %31s %1023s %1023s", dev, root, mnt) != 3 ||
		    strcmp(dev, want) || sscanf(dash + 3, "%31s", type) != 1)
			continue;
		unescape(mnt);
		is_root = !strcmp(root, "/");
		if (best && (best_root > is_root || (best_root == is_root && strlen(mnt) >= best)))
			continue;
		snprintf(e->mnt, sizeof(e->mnt), "%s", mnt);
		snprintf(e->fstype, sizeof(e->fstype), "%s", type);
		best = strlen(mnt) + 1;
		best_root = is_root;
	}
	fclose(f);
	e->pseudo = e->fstype[0] && pseudo_fs(e->fstype);
}

const char *monitor_names__dev(struct monitor_names *n, __u32 kdev)
{
	struct mon_dev_ent *e = &n->devs[(kdev ^ (kdev >> 11)) & (DEV_SLOTS - 1)];
	unsigned maj = kdev >> 20, min = kdev & 0xfffff;
	char path[96], line[128];
	FILE *f;

	if (e->name[0] && e->dev == kdev)
		return e->name;
	memset(e, 0, sizeof(*e));
	e->dev = kdev;
	fs_of(e, maj, min);
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
	/* a filesystem with no block device: "fstype:MAJ:MIN" */
	if (!e->name[0]) {
		char type[sizeof(e->fstype)];

		memcpy(type, e->fstype, sizeof(type));
		snprintf(e->name, sizeof(e->name), "%s%s%u:%u", type, type[0] ? ":" : "", maj, min);
	}
	return e->name;
}

static struct mon_dev_ent *mon_dev_ent(struct monitor_names *n, __u32 kdev)
{
	struct mon_dev_ent *e = &n->devs[(kdev ^ (kdev >> 11)) & (DEV_SLOTS - 1)];

	monitor_names__dev(n, kdev);
	/* mounted after we first looked: look again, at most every 10 s */
	if (!e->mnt[0] && now_ns() - e->fs_ns > 10 * NSEC_PER_SEC)
		fs_of(e, kdev >> 20, kdev & 0xfffff);
	return e;
}

const char *monitor_names__mountpoint(struct monitor_names *n, __u32 kdev)
{
	return mon_dev_ent(n, kdev)->mnt;
}

const char *monitor_names__fstype(struct monitor_names *n, __u32 kdev)
{
	return mon_dev_ent(n, kdev)->fstype;
}

bool monitor_names__pseudo_fs(struct monitor_names *n, __u32 kdev)
{
	return mon_dev_ent(n, kdev)->pseudo;
}
