// SPDX-License-Identifier: MIT
/* side_file.c — write the collector's capture file (see side_file.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include "capture/capture.h"
#include "lib/file_io.h"
#include "side_file.h"

static void fill_header(struct gpuio_cap_header *h, const char *target)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	struct stat ns;

	gpuio_cap_header__init(h, ncpu > 0 ? (__u32)ncpu : 0, 0);
	h->version = GPUIO_CAP_VERSION_RAW;     /* records verbatim, as gpu_ingest.c tails them */
	snprintf(h->target, sizeof(h->target), "%s", target);
	/* our pid is the one of our pid namespace: say which, so a tracer in
	 * another namespace (the host, for a container) can map it to its own */
	if (stat("/proc/self/ns/pid", &ns) == 0) {
		size_t l = strlen(h->target);

		snprintf(h->target + l, sizeof(h->target) - l, " pidns %lu", (unsigned long)ns.st_ino);
	}
	snprintf(h->cmdline, sizeof(h->cmdline), "libgpuio-cupti");
}

static int open_and_head(struct side_file *f, const char *target)
{
	struct gpuio_cap_header h;
	size_t done;
	int fd, err;

	/* 0600: the app's data; the tracer reading it is root. */
	fd = open(f->path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	fill_header(&h, target);
	err = file_write_all(fd, &h, sizeof(h), &done);
	if (err) {
		close(fd);
		unlink(f->path);
		return err;
	}
	f->fd = fd;
	f->pid = getpid();
	f->good_off = sizeof(h);
	f->len = f->staged = 0;
	f->records = f->write_errors = 0;
	f->broken = 0;
	return 0;
}

int side_file__create_path(struct side_file *f, const char *path, const char *target)
{
	if (snprintf(f->path, sizeof(f->path), "%s", path) >= (int)sizeof(f->path))
		return -ENAMETOOLONG;
	return open_and_head(f, target);
}

int side_file__create(struct side_file *f, const char *dir, const char *target)
{
	pid_t pid = getpid();
	int i, err = -EEXIST;

	for (i = 0; i < 100 && err == -EEXIST; i++) {
		int n = i ? snprintf(f->path, sizeof(f->path), "%s/cupti.%d.%d.gpuio", dir, (int)pid, i)
			  : snprintf(f->path, sizeof(f->path), "%s/cupti.%d.gpuio", dir, (int)pid);

		if (n >= (int)sizeof(f->path))
			return -ENAMETOOLONG;
		err = open_and_head(f, target);
	}
	return err;
}

int side_file__flush(struct side_file *f)
{
	size_t done = 0;
	int err;

	if (!f->len)
		return 0;
	if (f->broken) {
		err = -EIO;
		goto lost;
	}
	err = file_write_all(f->fd, f->buf, f->len, &done);
	if (!err) {
		f->good_off += (off_t)f->len;
		f->records += f->staged;
		f->len = f->staged = 0;
		return 0;
	}
	/* Cut a partial record off so the file stays whole records. */
	if (done && (ftruncate(f->fd, f->good_off) || lseek(f->fd, f->good_off, SEEK_SET) < 0))
		f->broken = 1;
lost:
	f->write_errors += f->staged;
	f->len = f->staged = 0;
	return err;
}

int side_file__append(struct side_file *f, const void *rec, size_t len)
{
	int err = 0;

	if (len > sizeof(f->buf))
		return -E2BIG;
	if (f->len + len > sizeof(f->buf))
		err = side_file__flush(f);
	memcpy(f->buf + f->len, rec, len);
	f->len += len;
	f->staged++;
	return err;
}

void side_file__discard(struct side_file *f)
{
	f->len = f->staged = 0;
}

void side_file__close(struct side_file *f)
{
	if (f->fd < 0)
		return;
	side_file__flush(f);
	close(f->fd);
	f->fd = -1;
}
