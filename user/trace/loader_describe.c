// SPDX-License-Identifier: MIT
/*
 * loader_describe.c — what the loader says about itself: each layer's mode
 * as the capture header and `gpuio info` name it, and whether bpf() is
 * there at all (loader.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "capture/capture.h"
#include "capture/cap_layers.h"
#include "trace/loader.h"

void gpuio_loader__describe(const struct gpuio_loader *l, struct gpuio_cap_header *h)
{
	const struct gpuio_cap_layer *ly;

	gpuio_cap_layer__for_each(ly)
		gpuio_cap_layer__set(ly, h, l->modes[ly - gpuio_cap_layers]);
	snprintf(h->modes_detail, sizeof(h->modes_detail), "%s", l->detail);
}

void gpuio_loader__describe_off(const char *why, struct gpuio_cap_header *h)
{
	const struct gpuio_cap_layer *ly;

	gpuio_cap_layer__for_each(ly)
		gpuio_cap_layer__set(ly, h, "off");
	snprintf(h->modes_detail, sizeof(h->modes_detail), "no BPF: %s; GPU from CUPTI only",
		 why && *why ? why : "--no-bpf");
}

void gpuio_loader__modes_text(const struct gpuio_loader *l, char *buf, size_t len)
{
	struct gpuio_cap_header h;

	/* as a capture of this trace names them, so that both read the same */
	memset(&h, 0, sizeof(h));
	gpuio_loader__describe(l, &h);
	gpuio_cap_layers__text(&h, buf, len);
}

int gpuio_loader__probe(char *why, size_t len)
{
	int fd, err;

	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "gpuio_probe", sizeof(__u32), sizeof(__u32), 1,
			    NULL);
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	err = -errno;
	if (err == -ENOSYS)
		snprintf(why, len, "this kernel has no bpf() system call (a sandbox kernel such as "
			 "gVisor)");
	else if (err == -EPERM || err == -EACCES)
		snprintf(why, len, "bpf() is not permitted here (%s: no CAP_BPF, a seccomp filter "
			 "or an unprivileged container)", strerror(-err));
	else
		snprintf(why, len, "bpf() failed: %s", strerror(-err));
	return err;
}
