// SPDX-License-Identifier: MIT
/* monitor_cuda.c — CUDA API call counts for `gpuio monitor`. See monitor_cuda.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "bpf/monitor/monitor.h"
#include "monitor_cuda.skel.h"
#include "monitor/monitor_cuda.h"
#include "monitor/monitor_agg.h"
#include "cuda/cuda_lib.h"
#include "lib/keyset.h"
#include "lib/log.h"
#include "lib/proc_maps.h"
#include "lib/units.h"

#define MC_MAX_LIBS       64            /* library files probed (bounded) */
#define MC_SCAN_NS        10 * NSEC_PER_SEC   /* processes new since the last scan */
#define MC_RESCAN_MAX_NS  320000000000ull  /* a known process: again after 10, 20, … 320 s */

struct mc_proc {
	int pid;
	__u64 ino;               /* /proc/PID's inode: a reused pid is a new process */
	__u64 next_ns, interval_ns;
};

struct monitor_cuda {
	struct monitor_cuda_bpf *skel;
	bool multi;
	char mode[16];
	__u32 max_entries;
	struct { __u64 dev, ino; } files[MC_MAX_LIBS];   /* attached (or tried) */
	int nfiles;
	int nlibs, nfuncs, nfailed;
	int link_fds[MC_MAX_LIBS];
	int nlink_fds;
	struct bpf_link **links;
	int nlinks, cap_links;
	struct keyset *mapkeys;          /* (maps dev, ino) already looked at */
	struct mc_proc *procs;           /* sorted by pid */
	size_t nprocs;
	__u64 last_scan, scans, maps_read;
	bool full_warned;
};

/* BPF_TRACE_UPROBE_MULTI (libbpf 1.1's headers predate it) */
#define ATTACH_UPROBE_MULTI 48

static int load(struct monitor_cuda *mc, int stats_fd, int cg_ssid, bool multi)
{
	struct bpf_program *p;
	int err;

	mc->skel = monitor_cuda_bpf__open();
	if (!mc->skel)
		return -errno;
	mc->skel->rodata->mon_cg_ssid = cg_ssid;
	bpf_map__set_max_entries(mc->skel->maps.mon_cuda, mc->max_entries);
	if (stats_fd >= 0 && (err = bpf_map__reuse_fd(mc->skel->maps.mon_stats, stats_fd)))
		return err;
	p = multi ? mc->skel->progs.mon_cuda_multi : mc->skel->progs.mon_cuda_entry;
	bpf_program__set_autoload(p, true);
	if (multi)
		bpf_program__set_expected_attach_type(p, ATTACH_UPROBE_MULTI);
	err = monitor_cuda_bpf__load(mc->skel);
	if (err)
		return err;
	if (multi) {
		/* the kernel knows uprobe.multi when a link on a directory says EBADF */
		unsigned long off = 0;
		int fd = cuda_uprobe_multi_link(bpf_program__fd(p), "/", &off, NULL, 1, false, 0);

		if (fd >= 0)
			close(fd);
		if (fd != -EBADF)
			return fd >= 0 ? -EINVAL : fd;
	}
	mc->multi = multi;
	snprintf(mc->mode, sizeof(mc->mode), "%s", multi ? "uprobe.multi" : "uprobe");
	return 0;
}

int monitor_cuda__open(int stats_fd, __u32 max_entries, int cg_ssid, struct monitor_cuda **out)
{
	struct monitor_cuda *mc = calloc(1, sizeof(*mc));
	const char *force = getenv("GPUIO_MONITOR_CUDA_MODE");   /* "uprobe": the classic path */
	int err = -EINVAL;

	if (!mc)
		return -ENOMEM;
	mc->max_entries = max_entries;
	mc->mapkeys = keyset__new(12);
	if (!mc->mapkeys) {
		free(mc);
		return -ENOMEM;
	}
	for (int multi = !(force && !strcmp(force, "uprobe")); multi >= 0; multi--) {
		err = load(mc, stats_fd, cg_ssid, multi);
		if (!err)
			break;
		pr_debug("monitor: cuda uprobes (%s): %s", multi ? "uprobe.multi" : "uprobe", strerror(-err));
		monitor_cuda_bpf__destroy(mc->skel);
		mc->skel = NULL;
	}
	if (err) {
		pr_warn("monitor: CUDA API call counts off: the uprobe program was refused (%s)",
			strerror(-err));
		monitor_cuda__free(mc);
		return err;
	}
	*out = mc;
	return 0;
}

/*
 * A stub that only jumps to another probed function (libcudart 13's
 * __cudaLaunchKernel -> cudaLaunchKernel): counted where it lands, not
 * twice. Accepted before the jmp: endbr64, push %rbp, mov %rsp,%rbp, pop %rbp.
 */
static bool tail_stub(int fd, const struct cuda_lib_func *f, const struct cuda_lib_func *all, int n)
{
	unsigned char b[16];
	size_t i = 0;
	__s32 rel;

	if (pread(fd, b, sizeof(b), (off_t)f->off) != (ssize_t)sizeof(b))
		return false;
	for (;;) {
		if (i + 4 <= sizeof(b) && !memcmp(b + i, "\xf3\x0f\x1e\xfa", 4))
			i += 4;
		else if (b[i] == 0x55 || b[i] == 0x5d)
			i += 1;
		else if (i + 3 <= sizeof(b) && !memcmp(b + i, "\x48\x89\xe5", 3))
			i += 3;
		else
			break;
		if (i >= sizeof(b) - 5)
			return false;
	}
	if (b[i] != 0xe9)
		return false;
	memcpy(&rel, b + i + 1, 4);
	for (int j = 0; j < n; j++)
		if (&all[j] != f && all[j].off == f->off + i + 5 + (__s64)rel)
			return true;
	return false;
}

static int add_link(struct monitor_cuda *mc, struct bpf_link *l)
{
	if (mc->nlinks == mc->cap_links) {
		int cap = mc->cap_links ? mc->cap_links * 2 : 64;
		struct bpf_link **n = realloc(mc->links, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		mc->links = n;
		mc->cap_links = cap;
	}
	mc->links[mc->nlinks++] = l;
	return 0;
}

/* Attach the counter to the CUDA functions of one library file (once). */
static void attach_lib(struct monitor_cuda *mc, const char *path, int kind)
{
	struct cuda_lib_func *funcs = NULL;
	unsigned long *offs = NULL;
	__u64 *cookies = NULL;
	struct stat st;
	int fd, nf, n = 0, attached = 0, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		pr_debug("monitor: cuda: %s: %s", path, strerror(errno));
		goto out;
	}
	for (int i = 0; i < mc->nfiles; i++)
		if (mc->files[i].dev == st.st_dev && mc->files[i].ino == st.st_ino)
			goto out;
	if (mc->nfiles >= MC_MAX_LIBS) {
		if (!mc->full_warned)
			pr_warn("monitor: %d CUDA library files probed already: %s and later ones are not",
				MC_MAX_LIBS, path);
		mc->full_warned = true;
		goto out;
	}
	mc->files[mc->nfiles].dev = st.st_dev;
	mc->files[mc->nfiles++].ino = st.st_ino;
	funcs = calloc(CUDA_LIB_FUNCS_MAX, sizeof(*funcs));
	offs = calloc(CUDA_LIB_FUNCS_MAX, sizeof(*offs));
	cookies = calloc(CUDA_LIB_FUNCS_MAX, sizeof(*cookies));
	if (!funcs || !offs || !cookies)
		goto out;
	nf = cuda_lib_funcs(fd, kind, funcs, CUDA_LIB_FUNCS_MAX);
	if (nf < 0) {
		pr_warn("monitor: cuda: %s: %s", path, strerror(-nf));
		goto out;
	}
	for (int i = 0; i < nf; i++) {
		const struct cuda_lib_func *f = &funcs[i];
		__u64 below = f->off - f->seg_lo, above = f->seg_hi - f->off;

		if (tail_stub(fd, f, funcs, nf))
			continue;
		offs[n] = f->off;
		cookies[n++] = MON_CUDA_COOKIE(f->kind, kind == CUDA_LIB_DRV ? MON_CUDA_DRIVER : MON_CUDA_RUNTIME,
					       below < MON_CUDA_SPAN_MAX ? below : MON_CUDA_SPAN_MAX,
					       above < MON_CUDA_SPAN_MAX ? above : MON_CUDA_SPAN_MAX);
	}
	if (!n)
		goto out;
	if (mc->multi) {
		int lfd = cuda_uprobe_multi_link(bpf_program__fd(mc->skel->progs.mon_cuda_multi), path,
						 offs, cookies, n, false, -1);

		if (lfd >= 0 && mc->nlink_fds < MC_MAX_LIBS) {
			mc->link_fds[mc->nlink_fds++] = lfd;
			attached = n;
		} else {
			err = lfd < 0 ? lfd : -ENOSPC;
			if (lfd >= 0)
				close(lfd);
		}
	} else {
		for (int i = 0; i < n; i++) {
			LIBBPF_OPTS(bpf_uprobe_opts, uo, .bpf_cookie = cookies[i]);
			struct bpf_link *l = bpf_program__attach_uprobe_opts(mc->skel->progs.mon_cuda_entry, -1,
									     path, offs[i], &uo);

			if (!l || add_link(mc, l)) {
				err = l ? -ENOMEM : -errno;
				bpf_link__destroy(l);
				continue;
			}
			attached++;
		}
	}
	if (attached) {
		mc->nlibs++;
		mc->nfuncs += attached;
	}
	mc->nfailed += n - attached;
	if (attached < n)
		pr_warn("monitor: cuda uprobes: %d of %d functions of %s not probed (%s)", n - attached, n,
			path, strerror(-err));
	pr_info("monitor: cuda uprobes: %s: %d functions", path, attached);
out:
	free(funcs);
	free(offs);
	free(cookies);
	if (fd >= 0)
		close(fd);
}

/* The CUDA libraries pid maps: attach the ones not seen before. */
static void scan_pid(struct monitor_cuda *mc, int pid)
{
	char full[PATH_MAX + 32];
	struct proc_maps it;
	struct proc_map m;
	int kind;

	if (proc_maps__open(&it, pid))
		return;
	mc->maps_read++;
	while (proc_maps__next(&it, &m) > 0) {
		/* executable file mappings */
		if (!proc_map__is_file(&m) || m.perms[2] != 'x')
			continue;
		kind = cuda_lib_kind(m.path);
		if (!kind || strstr(m.path, " (deleted)"))
			continue;
		if (keyset__test_and_add(mc->mapkeys, makedev(m.maj, m.min), m.ino))
			continue;
		/* the path is the process's view: go through its root (containers) */
		snprintf(full, sizeof(full), "/proc/%d/root%s", pid, m.path);
		attach_lib(mc, full, kind);
	}
	proc_maps__close(&it);
}

static int proc_cmp(const void *a, const void *b)
{
	const struct mc_proc *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

void monitor_cuda__scan(struct monitor_cuda *mc, __u64 now)
{
	struct mc_proc *cur = NULL, *old;
	size_t n = 0, cap = 0, j = 0, nold;
	struct dirent *de;
	DIR *d;

	if (!mc || (mc->scans && now - mc->last_scan < MC_SCAN_NS))
		return;
	old = mc->procs;
	nold = mc->nprocs;
	mc->last_scan = now;
	mc->scans++;
	d = opendir("/proc");
	if (!d)
		return;
	while ((de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end || pid <= 0)
			continue;
		if (n == cap) {
			struct mc_proc *p = realloc(cur, (cap = cap ? cap * 2 : 1024) * sizeof(*p));

			if (!p)
				break;
			cur = p;
		}
		cur[n++] = (struct mc_proc){ .pid = (int)pid, .ino = de->d_ino };
	}
	closedir(d);
	qsort(cur, n, sizeof(*cur), proc_cmp);
	for (size_t i = 0; i < n; i++) {
		struct mc_proc *p = &cur[i];

		while (j < nold && old[j].pid < p->pid)
			j++;
		if (j < nold && old[j].pid == p->pid && old[j].ino == p->ino) {
			p->next_ns = old[j].next_ns;
			p->interval_ns = old[j].interval_ns;
			if (now < p->next_ns)
				continue;
			/* a known process: libraries it dlopened since (growing interval) */
			p->interval_ns = p->interval_ns * 2 < MC_RESCAN_MAX_NS ? p->interval_ns * 2 : MC_RESCAN_MAX_NS;
		} else {
			p->interval_ns = MC_SCAN_NS;
		}
		p->next_ns = now + p->interval_ns;
		if (p->pid != getpid())
			scan_pid(mc, p->pid);
	}
	free(old);
	mc->procs = cur;
	mc->nprocs = n;
}

int monitor_cuda__map_fd(const struct monitor_cuda *mc)
{
	return bpf_map__fd(mc->skel->maps.mon_cuda);
}

__u32 monitor_cuda__max_entries(const struct monitor_cuda *mc)
{
	return mc->max_entries;
}

const char *monitor_cuda__mode(const struct monitor_cuda *mc)
{
	return mc ? mc->mode : "off";
}

void monitor_cuda__metrics(struct mon_buf *b, void *ctx)
{
	struct monitor_cuda *mc = ctx;

	mon_buf__printf(b, "# HELP gpuio_gpu_cuda_uprobes_available 1 when per-process CUDA API call counts are exported (uprobes loaded).\n"
			"# TYPE gpuio_gpu_cuda_uprobes_available gauge\ngpuio_gpu_cuda_uprobes_available %d\n", mc != NULL);
	if (!mc)
		return;
	mon_buf__printf(b, "# HELP gpuio_gpu_cuda_libraries_probed CUDA library files (libcudart, libcuda) whose API functions are counted.\n"
			"# TYPE gpuio_gpu_cuda_libraries_probed gauge\ngpuio_gpu_cuda_libraries_probed %d\n", mc->nlibs);
	mon_buf__printf(b, "# HELP gpuio_gpu_cuda_functions_probed CUDA API functions with a counting uprobe (all libraries).\n"
			"# TYPE gpuio_gpu_cuda_functions_probed gauge\ngpuio_gpu_cuda_functions_probed %d\n", mc->nfuncs);
	mon_buf__printf(b, "# HELP gpuio_gpu_cuda_functions_failed_total CUDA API functions that could not be probed.\n"
			"# TYPE gpuio_gpu_cuda_functions_failed_total counter\ngpuio_gpu_cuda_functions_failed_total %d\n", mc->nfailed);
	mon_buf__printf(b, "# HELP gpuio_monitor_cuda_scans_total Scans of /proc for CUDA libraries (every 10 s).\n"
			"# TYPE gpuio_monitor_cuda_scans_total counter\ngpuio_monitor_cuda_scans_total %llu\n",
			(unsigned long long)mc->scans);
	mon_buf__printf(b, "# HELP gpuio_monitor_cuda_maps_read_total /proc/PID/maps files read by those scans.\n"
			"# TYPE gpuio_monitor_cuda_maps_read_total counter\ngpuio_monitor_cuda_maps_read_total %llu\n",
			(unsigned long long)mc->maps_read);
}

void monitor_cuda__free(struct monitor_cuda *mc)
{
	if (!mc)
		return;
	for (int i = 0; i < mc->nlinks; i++)
		bpf_link__destroy(mc->links[i]);
	free(mc->links);
	for (int i = 0; i < mc->nlink_fds; i++)
		close(mc->link_fds[i]);
	monitor_cuda_bpf__destroy(mc->skel);
	keyset__free(mc->mapkeys);
	free(mc->procs);
	free(mc);
}
