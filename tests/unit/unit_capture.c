// SPDX-License-Identifier: MIT
/*
 * unit_capture — the capture writer and reader (capture/capture.c) round
 * trip: every record written comes back byte for byte and in order; a file
 * cut inside a record reads up to the last whole one and reports the cut
 * bytes; a record whose size makes no sense is reported as corruption at
 * its offset; a file that is not a capture is refused with a reason.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "capture/capture.h"
#include "unit.h"

#define NREC 1000

static size_t make_rec(unsigned char *buf, int i)
{
	if (i % 3 == 2) {
		struct gpuio_path_event *p = (void *)buf;
		int len = 1 + i % 200;
		size_t size = (offsetof(struct gpuio_path_event, data) + (size_t)len + 7) & ~(size_t)7;

		memset(buf, 0, size);
		p->hdr = (struct gpuio_hdr){ .type = GPUIO_REC_PATH, .size = (uint16_t)size,
					     .pid = 10, .tid = 11, .ts = 1000 + (uint64_t)i };
		p->ino = (uint64_t)i;
		p->dev = 7;
		p->len = (uint16_t)len;
		memset(p->data, 'a' + i % 26, (size_t)len);
		return size;
	} else {
		struct gpuio_vfs_event *v = (void *)buf;

		memset(buf, 0, sizeof(*v));
		v->hdr = (struct gpuio_hdr){ .type = GPUIO_REC_VFS, .size = sizeof(*v), .pid = 10,
					     .tid = (uint32_t)(11 + i % 4), .ts = 1000 + (uint64_t)i };
		v->ret = i;
		v->ino = (uint64_t)i * 3;
		return sizeof(*v);
	}
}

static int read_all(const char *path, int *nrec, uint64_t *trunc, char *err, size_t errlen)
{
	unsigned char want[GPUIO_REC_SIZE_MAX];
	struct gpuio_cap_reader *r;
	const struct gpuio_hdr *h;
	int rc;

	*nrec = 0;
	rc = gpuio_cap_reader__open(path, &r, err, errlen);
	if (rc)
		return rc;
	while ((rc = gpuio_cap_reader__next(r, &h)) > 0) {
		size_t n = make_rec(want, *nrec);

		CHECK(h->size == n && !memcmp(h, want, n), "record %d differs", *nrec);
		(*nrec)++;
	}
	*trunc = gpuio_cap_reader__truncated(r);
	if (rc < 0)
		snprintf(err, errlen, "%s", gpuio_cap_reader__error(r));
	gpuio_cap_reader__close(r);
	return rc;
}

int main(void)
{
	char dir[] = "/tmp/gpuio-unit-XXXXXX", path[128], err[320];
	struct gpuio_cap_writer *w;
	struct gpuio_cap_header hdr;
	unsigned char rec[GPUIO_REC_SIZE_MAX];
	off_t offs[NREC + 1];
	uint64_t trunc;
	struct stat st;
	int n, rc, fd;

	if (!mkdtemp(dir))
		return perror("mkdtemp"), 1;
	snprintf(path, sizeof(path), "%s/c.gpuio", dir);
	gpuio_cap_header__init(&hdr, 2, 0);
	CHECK(gpuio_cap_writer__create(path, &hdr, (uid_t)-1, (gid_t)-1, &w) == 0, "create");
	offs[0] = sizeof(hdr);
	for (int i = 0; i < NREC; i++) {
		size_t len = make_rec(rec, i);

		CHECK(gpuio_cap_writer__append(w, rec, len) == 0, "append %d", i);
		offs[i + 1] = offs[i] + (off_t)len;
	}
	CHECK(gpuio_cap_writer__records(w) == NREC, "writer records");
	CHECK(gpuio_cap_writer__close(w) == 0, "close");
	CHECK(stat(path, &st) == 0 && st.st_size == offs[NREC], "size %lld, want %lld",
	      (long long)st.st_size, (long long)offs[NREC]);

	rc = read_all(path, &n, &trunc, err, sizeof(err));
	CHECK(rc == 0 && n == NREC && trunc == 0, "whole: rc %d, %d records, %llu cut", rc, n,
	      (unsigned long long)trunc);

	/* cut 5 bytes into record 600: 600 whole records, 5 bytes reported */
	CHECK(truncate(path, offs[600] + 5) == 0, "truncate");
	rc = read_all(path, &n, &trunc, err, sizeof(err));
	CHECK(rc == 0 && n == 600 && trunc == 5, "cut: rc %d, %d records, %llu cut", rc, n,
	      (unsigned long long)trunc);

	/* record 100 claims a size of 3 bytes: corruption, after 100 good records */
	fd = open(path, O_WRONLY);
	{
		uint16_t bad = 3;

		CHECK(pwrite(fd, &bad, 2, offs[100] + offsetof(struct gpuio_hdr, size)) == 2, "pwrite");
	}
	close(fd);
	rc = read_all(path, &n, &trunc, err, sizeof(err));
	CHECK(rc == -EBADMSG && n == 100, "corrupt: rc %d after %d records", rc, n);
	{
		char off[32];

		snprintf(off, sizeof(off), "%lld", (long long)offs[100]);
		CHECK(strstr(err, off) != NULL, "the reason '%s' does not name offset %s", err, off);
	}

	/* not a capture */
	fd = open(path, O_WRONLY | O_TRUNC);
	CHECK(write(fd, "[{\"name\":\"x\"}]\n", 15) == 15, "write");
	close(fd);
	rc = read_all(path, &n, &trunc, err, sizeof(err));
	CHECK(rc < 0 && err[0], "a JSON file read as a capture (rc %d)", rc);
	unlink(path);
	rmdir(dir);
	return unit_done("unit_capture");
}
