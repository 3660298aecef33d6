// SPDX-License-Identifier: MIT
/* gpu_watch.c — periodic scan of the traced processes for CUDA libraries. See gpu_watch.h. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "gpuio.skel.h"
#include "gpu/cuda_probes.h"
#include "gpu/gpu_watch.h"
#include "lib/keyset.h"
#include "trace/loader.h"
#include "lib/log.h"

struct gpu_watch {
	struct cuda_probes *probes;
	int traced_fd;
	struct gpu_watch_opts o;
	struct keyset *cuda_pids;  /* pids the hook was told about */
	__u64 last;
};

int gpu_watch__new(struct gpuio_loader *l, struct cuda_probes *probes,
		   const struct gpu_watch_opts *opts, struct gpu_watch **out)
{
	struct gpu_watch *gw = calloc(1, sizeof(*gw));

	if (!gw)
		return -ENOMEM;
	gw->probes = probes;
	gw->traced_fd = bpf_map__fd(l->skel->maps.traced);
	if (opts)
		gw->o = *opts;
	if (!gw->o.period_ns)
		gw->o.period_ns = 1000000000ull;
	gw->cuda_pids = keyset__new(12);
	if (!gw->cuda_pids) {
		free(gw);
		return -ENOMEM;
	}
	*out = gw;
	return 0;
}

static void look_at(struct gpu_watch *gw, pid_t pid)
{
	int libs;

	if (!gw->probes && !gw->o.on_new_cuda_process)
		return;
	libs = cuda_probes__scan_pid(gw->probes, pid);   /* probes NULL: look only */
	if (libs > 0 && (libs & CUDA_LIB_DRV) && gw->o.on_new_cuda_process &&
	    !keyset__test_and_add(gw->cuda_pids, (__u64)pid, 0))
		gw->o.on_new_cuda_process(gw->o.ctx, pid);
}

void gpu_watch__scan(struct gpu_watch *gw)
{
	if (!gw)
		return;
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
	keyset__free(gw->cuda_pids);
	free(gw);
}
