// SPDX-License-Identifier: MIT
/*
 * cap_layers.c — the header's attach layers (cap_layers.h): one row each.
 */
#include <stdio.h>
#include <string.h>
#include "capture/capture.h"
#include "capture/cap_layers.h"

#define FIELD(f) #f, offsetof(struct gpuio_cap_header, f), \
		 sizeof(((struct gpuio_cap_header *)0)->f)

const struct gpuio_cap_layer gpuio_cap_layers[GPUIO_NLAYERS] = {
	[GPUIO_LAYER_VFS]       = { "vfs", FIELD(vfs_mode) },
	[GPUIO_LAYER_BLOCK]     = { "block", FIELD(block_mode) },
	[GPUIO_LAYER_PROC]      = { "proc", FIELD(proc_mode) },
	[GPUIO_LAYER_PAGECACHE] = { "pagecache", FIELD(pagecache_mode) },
	[GPUIO_LAYER_IOURING]   = { "io_uring", FIELD(iouring_mode) },
	/* captures from before the layer name none: the text says so */
	[GPUIO_LAYER_SCHED]     = { "sched", FIELD(sched_mode), .unset = "none" },
	/* ...and these show what they showed before it */
	[GPUIO_LAYER_FAULT]     = { "fault", FIELD(fault_mode), .hide_unset = true },
	[GPUIO_LAYER_STACK]     = { "stacks", FIELD(stack_mode), .hide_unset = true },
	[GPUIO_LAYER_SAMPLE]    = { "samples", FIELD(sample_mode), .hide_unset = true },
};

#undef FIELD

const char *gpuio_cap_layer__mode(const struct gpuio_cap_layer *ly,
				  const struct gpuio_cap_header *h, size_t *len)
{
	const char *s = (const char *)h + ly->off;

	*len = strnlen(s, ly->size);
	return s;
}

bool gpuio_cap_layer__shown(const struct gpuio_cap_layer *ly, const struct gpuio_cap_header *h)
{
	return !ly->hide_unset || ((const char *)h)[ly->off];
}

void gpuio_cap_layer__set(const struct gpuio_cap_layer *ly, struct gpuio_cap_header *h,
			  const char *mode)
{
	snprintf((char *)h + ly->off, ly->size, "%s", mode);
}

void gpuio_cap_layers__terminate(struct gpuio_cap_header *h)
{
	const struct gpuio_cap_layer *ly;

	gpuio_cap_layer__for_each(ly)
		((char *)h)[ly->off + ly->size - 1] = 0;
}

void gpuio_cap_layers__text(const struct gpuio_cap_header *h, char *buf, size_t len)
{
	const struct gpuio_cap_layer *ly;
	size_t used = 0;

	buf[0] = 0;
	gpuio_cap_layer__for_each(ly) {
		size_t n;
		const char *mode = gpuio_cap_layer__mode(ly, h, &n);

		if (!gpuio_cap_layer__shown(ly, h) || used >= len)
			continue;
		if (!n && ly->unset)
			mode = ly->unset, n = strlen(ly->unset);
		used += (size_t)snprintf(buf + used, len - used, "%s%s=%.*s", used ? " " : "",
					 ly->name, (int)n, mode);
	}
}
