// SPDX-License-Identifier: MIT
/*
 * gpu_cache.c — GPU records read back by file offset through a small block
 * cache, in the time order the writers need (the model keeps offsets, never
 * the records).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "model/model.h"
#include "model/model_priv.h"
#include "lib/file_io.h"

struct gcache;
void gcache__free(struct gcache *c);

/* ---- GPU: reading records back ---- */

#define GC_SLOTS 16
#define GC_BLOCK (256u << 10)

/*
 * GPU records are written in time order, not capture order: a few windows
 * of the file, least recently used replaced, follow the few places (CUPTI
 * buffers) that time order jumps between.
 */
struct gcache {
	int fd;
	uint64_t tick;
	struct {
		unsigned char *buf;
		uint64_t base, used;
		size_t len;
	} s[GC_SLOTS];
	union {
		struct gpuio_hdr h;
		unsigned char b[GPUIO_REC_SIZE_MAX + 16];
	} rec;
};

void gcache__free(struct gcache *c)
{
	if (!c)
		return;
	for (int i = 0; i < GC_SLOTS; i++)
		free(c->s[i].buf);
	if (c->fd >= 0)
		close(c->fd);
	free(c);
}

/* The record at off, checked against what pass 1 saw (type; 0: any GPU record). */
int gread(struct exp_model *x, uint64_t off, unsigned type, const struct gpuio_hdr **out)
{
	struct gcache *c = x->gpu.cache;
	struct gpuio_hdr h;
	int slot = -1;
	size_t size;

	if (!c) {
		c = calloc(1, sizeof(*c));
		if (!c)
			return -ENOMEM;
		c->fd = open(x->path, O_RDONLY | O_CLOEXEC);
		if (c->fd < 0) {
			snprintf(x->p2_err, sizeof(x->p2_err), "cannot open it again: %s",
				 strerror(errno));
			free(c);
			return -EBADMSG;
		}
		x->gpu.cache = c;
	}
	for (int i = 0; i < GC_SLOTS; i++) {
		if (c->s[i].buf && off >= c->s[i].base &&
		    off + sizeof(h) <= c->s[i].base + c->s[i].len) {
			slot = i;
			break;
		}
	}
	if (slot < 0) {
		ssize_t k;

		slot = 0;
		for (int i = 1; i < GC_SLOTS; i++)
			if (c->s[i].used < c->s[slot].used)
				slot = i;
		if (!c->s[slot].buf) {
			c->s[slot].buf = malloc(GC_BLOCK);
			if (!c->s[slot].buf)
				return -ENOMEM;
		}
		c->s[slot].base = off & ~4095ull;
		k = pread_full(c->fd, c->s[slot].buf, GC_BLOCK, c->s[slot].base);
		c->s[slot].len = k > 0 ? (size_t)k : 0;
		if (k < 0 || off + sizeof(h) > c->s[slot].base + c->s[slot].len)
			goto changed;
	}
	c->s[slot].used = ++c->tick;
	memcpy(&h, c->s[slot].buf + (off - c->s[slot].base), sizeof(h));
	size = h.size;
	if ((type ? h.type != type : h.type < GPUIO_REC_GPU_INFO || h.type > GPUIO_REC_GPU_SYM) ||
	    size < sizeof(h) || size > GPUIO_REC_SIZE_MAX ||
	    size < gpuio_rec_min_size(h.type))
		goto changed;
	if (off + size <= c->s[slot].base + c->s[slot].len)
		memcpy(c->rec.b, c->s[slot].buf + (off - c->s[slot].base), size);
	else if (pread_full(c->fd, c->rec.b, size, off) != (ssize_t)size)
		goto changed;
	memset(c->rec.b + size, 0, 16);
	*out = &c->rec.h;
	return 0;
changed:
	snprintf(x->p2_err, sizeof(x->p2_err), "the GPU record at offset %llu is no longer what "
		 "it was", (unsigned long long)off);
	return -EBADMSG;
}
