// SPDX-License-Identifier: MIT
/* gpu_watch.c — periodic scan of the traced processes for CUDA libraries. See gpu_watch.h. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "trace/cuda_probes.h"
#include "trace/gpu_watch.h"
#include "lib/keyset.h"
#include "lib/kmap.h"
#include "lib/log.h"
#include "trace/procfs.h"
#include "lib/units.h"

#define MAX_ROOTS 64
#define MAX_DESCENDANTS 4096

struct gpu_watch {
	struct cuda_probes *probes;
	int traced_fd;
	struct gpu_watch_opts o;
	struct keyset *cuda_pids;  /* pids the hook was told about */
	struct keyset *seen_pids;  /* without BPF: pids on_new_process was told about */
	pid_t roots[MAX_ROOTS];    /* without BPF: the targets */
	int nroots;
	__u64 last;
	unsigned long scanned, skipped;   /* maps read, and not */
	/* (pid, start) -> its address space's size at the last scan, and this
	 * scan's: a process whose size did not change mapped no library since,
	 * and its maps (~2.5 ms for a torch process, every second) are not read
	 * again. Two generations: the processes gone leave with the older. */
	struct kmap size_prev, size_cur;
};

int gpu_watch__new(struct cuda_probes *probes, const struct gpu_watch_opts *opts,
		   struct gpu_watch **out)
{
	struct gpu_watch *gw = calloc(1, sizeof(*gw));

	if (!gw)
		return -ENOMEM;
	gw->probes = probes;
	gw->traced_fd = -1;
	if (opts) {
		gw->o = *opts;
		gw->traced_fd = opts->traced_fd;
	}
	if (!gw->o.period_ns)
		gw->o.period_ns = NSEC_PER_SEC;
	gw->cuda_pids = keyset__new(12);
	gw->seen_pids = gw->traced_fd < 0 ? keyset__new(12) : NULL;
	if (!gw->cuda_pids || (gw->traced_fd < 0 && !gw->seen_pids)) {
		gpu_watch__free(gw);
		return -ENOMEM;
	}
	*out = gw;
	return 0;
}

/* The process's address space has not changed size since the last scan. */
static bool same_size(struct gpu_watch *gw, pid_t pid)
{
	__u64 start, vsize;
	uint64_t *was, *now;

	if (procfs_vsize(pid, &start, &vsize) < 0)
		return false;           /* gone, or unreadable: the scan says which */
	was = kmap__get(&gw->size_prev, (__u64)pid, start);
	if (kmap__upsert(&gw->size_cur, (__u64)pid, start, &now) >= 0)
		*now = vsize;
	return was && *was == vsize;
}

static void look_at(struct gpu_watch *gw, pid_t pid)
{
	int libs;

	if (gw->seen_pids && gw->o.on_new_process &&
	    !keyset__test_and_add(gw->seen_pids, (__u64)pid, 0))
		gw->o.on_new_process(gw->o.ctx, pid);
	if (!gw->probes && !gw->o.on_new_cuda_process)
		return;
	if (same_size(gw, pid)) {
		gw->skipped++;
		return;
	}
	gw->scanned++;
	libs = cuda_probes__scan_pid(gw->probes, pid);   /* probes NULL: look only */
	if (libs > 0 && (libs & CUDA_LIB_DRV) && gw->o.on_new_cuda_process &&
	    !keyset__test_and_add(gw->cuda_pids, (__u64)pid, 0))
		gw->o.on_new_cuda_process(gw->o.ctx, pid);
}

int gpu_watch__add_root(struct gpu_watch *gw, pid_t tgid)
{
	if (!gw)
		return -ENOMEM;
	if (gw->nroots == MAX_ROOTS)
		return -ENOSPC;
	gw->roots[gw->nroots++] = tgid;
	return 0;
}

bool gpu_watch__roots_gone(struct gpu_watch *gw)
{
	if (!gw || !gw->nroots)
		return false;
	for (int i = 0; i < gw->nroots; i++)
		if (procfs_alive(gw->roots[i]))
			return false;
	return true;
}

/* Without BPF nothing keeps the traced set: the roots and what /proc shows under them. */
static void scan_roots(struct gpu_watch *gw)
{
	pid_t *desc = calloc(MAX_DESCENDANTS, sizeof(*desc));

	for (int i = 0; i < gw->nroots; i++) {
		size_t nd = desc ? procfs_descendants(gw->roots[i], desc, MAX_DESCENDANTS) : 0;

		look_at(gw, gw->roots[i]);
		for (size_t k = 0; k < nd; k++)
			look_at(gw, desc[k]);
	}
	free(desc);
}

static void scan_all(struct gpu_watch *gw);

void gpu_watch__scan(struct gpu_watch *gw)
{
	if (!gw)
		return;
	scan_all(gw);
	/* the older generation goes: what this scan saw is the next one's past */
	kmap__free(&gw->size_prev);
	gw->size_prev = gw->size_cur;
	memset(&gw->size_cur, 0, sizeof(gw->size_cur));
}

static void scan_all(struct gpu_watch *gw)
{
	if (gw->o.trace_all) {
		DIR *d = opendir("/proc");
		struct dirent *de;
		pid_t self = getpid();

		while (d && (de = readdir(d))) {
			char *end;
			long pid = strtol(de->d_name, &end, 10);

			if (*end || pid <= 0 || pid == self)
				continue;
			look_at(gw, (pid_t)pid);
		}
		if (d)
			closedir(d);
		return;
	}
	if (gw->traced_fd < 0) {
		scan_roots(gw);
		return;
	}
	/* the traced set, as the BPF side keeps it (children join at fork) */
	{
		__u32 key, next;
		int err = bpf_map_get_next_key(gw->traced_fd, NULL, &next);

		while (!err) {
			key = next;
			look_at(gw, (pid_t)key);
			err = bpf_map_get_next_key(gw->traced_fd, &key, &next);
		}
	}
}

void gpu_watch__tick(struct gpu_watch *gw, __u64 now)
{
	if (!gw || now - gw->last < gw->o.period_ns)
		return;
	gw->last = now;
	cuda_probes__reap(gw->probes);
	gpu_watch__scan(gw);
}

void gpu_watch__free(struct gpu_watch *gw)
{
	if (!gw)
		return;
	if (gw->scanned || gw->skipped)
		pr_debug("CUDA library scans: %lu processes' maps read, %lu not (address space unchanged)",
			 gw->scanned, gw->skipped);
	keyset__free(gw->cuda_pids);
	keyset__free(gw->seen_pids);
	kmap__free(&gw->size_prev);
	kmap__free(&gw->size_cur);
	free(gw);
}
