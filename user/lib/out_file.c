// SPDX-License-Identifier: MIT
/* out_file.c — plain or gzip byte sink. See out_file.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include "lib/file_io.h"
#include "lib/out_file.h"

#define ZBUF_SIZE (256u << 10)

struct out_file {
	int fd;
	bool own_fd, gz;
	int err;
	uint64_t in_bytes, file_bytes;
	z_stream zs;
	unsigned char zbuf[];           /* only when gz */
};

/* Whole writes, counting what reached the file. */
static int put(struct out_file *o, const void *p, size_t n)
{
	size_t done = 0;
	int err = file_write_all(o->fd, p, n, &done);

	o->file_bytes += done;
	return err;
}

int out_file__new(int fd, bool gz, bool own_fd, struct out_file **out)
{
	struct out_file *o = calloc(1, sizeof(*o) + (gz ? ZBUF_SIZE : 0));

	if (!o)
		return -ENOMEM;
	o->fd = fd;
	o->own_fd = own_fd;
	o->gz = gz;
	/* windowBits 15 + 16: a gzip wrapper, which Perfetto detects by magic */
	if (gz && deflateInit2(&o->zs, 3, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		free(o);
		return -ENOMEM;
	}
	*out = o;
	return 0;
}

/* Run deflate over the pending input with flush mode fl, writing what comes out. */
static int deflate_out(struct out_file *o, int fl)
{
	int zr;

	do {
		o->zs.next_out = o->zbuf;
		o->zs.avail_out = ZBUF_SIZE;
		zr = deflate(&o->zs, fl);
		if (zr == Z_STREAM_ERROR)
			return -EIO;
		if (ZBUF_SIZE - o->zs.avail_out) {
			int err = put(o, o->zbuf, ZBUF_SIZE - o->zs.avail_out);

			if (err)
				return err;
		}
	} while (o->zs.avail_out == 0 || (fl == Z_FINISH && zr != Z_STREAM_END));
	return 0;
}

int out_file__write(struct out_file *o, const void *p, size_t n)
{
	if (o->err)
		return o->err;
	o->in_bytes += n;
	if (!o->gz) {
		o->err = put(o, p, n);
		return o->err;
	}
	while (n) {
		/* avail_in is an unsigned int */
		unsigned chunk = n > (1u << 30) ? 1u << 30 : (unsigned)n;

		o->zs.next_in = (unsigned char *)(uintptr_t)p;
		o->zs.avail_in = chunk;
		o->err = deflate_out(o, Z_NO_FLUSH);
		if (o->err)
			return o->err;
		p = (const char *)p + chunk;
		n -= chunk;
	}
	return 0;
}

int out_file__sync(struct out_file *o)
{
	if (!o->err && o->gz)
		o->err = deflate_out(o, Z_SYNC_FLUSH);
	return o->err;
}

uint64_t out_file__in_bytes(const struct out_file *o) { return o->in_bytes; }
uint64_t out_file__file_bytes(const struct out_file *o) { return o->file_bytes; }

int out_file__close(struct out_file *o)
{
	int err;

	if (!o)
		return 0;
	if (o->gz) {
		if (!o->err)
			o->err = deflate_out(o, Z_FINISH);
		deflateEnd(&o->zs);
	}
	if (o->own_fd) {
		/* the caller renames the file into place next: make it durable first */
		if (fsync(o->fd) < 0 && !o->err && errno != EINVAL && errno != EROFS)
			o->err = -errno;
		if (close(o->fd) < 0 && !o->err)
			o->err = -errno;
	}
	err = o->err;
	free(o);
	return err;
}
