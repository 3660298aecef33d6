// SPDX-License-Identifier: MIT
/*
 * gpu_ingest.c — tail the CUPTI collectors' side files into the capture
 * (see gpu_ingest.h for why the files exist and what is trusted).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "gpu_ingest.h"
#include "log.h"

#define INGEST_MAX_FILES 4096
#define INGEST_BUF (256 * 1024)

struct side_file {
	char name[64];
	int fd;
	__u32 pid;              /* the collector's pid, from the file's header */
	__u32 header_size;      /* 0 until the header has been read */
	__u64 off;              /* next unread byte */
	bool bad;               /* rejected: reported once, no longer read */
	bool said_state;        /* UNAVAILABLE reason printed */
};

struct gpu_ingest {
	char dir[4096];
	int dirfd;
	struct side_file *files;
	unsigned nfiles;
	unsigned long long records;
	unsigned char *buf;
};

static bool is_gpu_type(__u16 t)
{
	return t >= GPUIO_REC_GPU_INFO && t <= GPUIO_REC_GPU_SYM;
}

int gpu_ingest__open(const char *dir, struct gpu_ingest **out)
{
	struct gpu_ingest *g;
	struct stat st;
	int err;

	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->dirfd = -1;
	snprintf(g->dir, sizeof(g->dir), "%s", dir);
	g->files = calloc(INGEST_MAX_FILES, sizeof(*g->files));
	g->buf = malloc(INGEST_BUF);
	if (!g->files || !g->buf) {
		err = -ENOMEM;
		goto fail;
	}
	if (mkdir(dir, 01733) && errno != EEXIST) {
		err = -errno;
		goto fail;
	}
	g->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (g->dirfd < 0) {
		err = -errno;
		goto fail;
	}
	/* mkdir applies the umask; a pre-existing dir must be ours, not a plant */
	if (fstat(g->dirfd, &st) || st.st_uid != geteuid()) {
		err = -EPERM;
		goto fail;
	}
	if (fchmod(g->dirfd, 01733)) {
		err = -errno;
		goto fail;
	}
	*out = g;
	return 0;
fail:
	if (g->dirfd >= 0)
		close(g->dirfd);
	free(g->files);
	free(g->buf);
	free(g);
	return err;
}

const char *gpu_ingest__dir(const struct gpu_ingest *g) { return g->dir; }
unsigned long long gpu_ingest__records(const struct gpu_ingest *g) { return g->records; }
unsigned gpu_ingest__files(const struct gpu_ingest *g) { return g->nfiles; }

static struct side_file *find_or_add(struct gpu_ingest *g, const char *name)
{
	struct side_file *f;
	unsigned i;

	for (i = 0; i < g->nfiles; i++)
		if (!strcmp(g->files[i].name, name))
			return &g->files[i];
	if (g->nfiles == INGEST_MAX_FILES || strlen(name) >= sizeof(f->name))
		return NULL;
	f = &g->files[g->nfiles];
	f->fd = openat(g->dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (f->fd < 0)
		return NULL;
	snprintf(f->name, sizeof(f->name), "%s", name);
	g->nfiles++;
	return f;
}

static void reject(struct side_file *f, const char *why)
{
	if (!f->bad)
		pr_warn("GPU side file %s ignored from here on: %s", f->name, why);
	f->bad = true;
}

static int read_header(struct side_file *f)
{
	struct gpuio_cap_header h;
	struct stat st;
	ssize_t n;

	if (fstat(f->fd, &st) || !S_ISREG(st.st_mode)) {
		reject(f, "not a regular file");
		return -1;
	}
	n = pread(f->fd, &h, sizeof(h), 0);
	if (n < (ssize_t)offsetof(struct gpuio_cap_header, tracer_pid) + 4)
		return 0;       /* not written yet */
	if (memcmp(h.magic, GPUIO_CAP_MAGIC, sizeof(h.magic)) ||
	    h.header_size < offsetof(struct gpuio_cap_header, flags) ||
	    h.header_size > 65536 || (h.header_size & 7)) {
		reject(f, "bad header");
		return -1;
	}
	f->pid = h.tracer_pid;
	f->header_size = h.header_size;
	f->off = h.header_size;
	return 1;
}

static void note_info(struct side_file *f, const struct gpuio_gpu_info *in)
{
	char reason[sizeof(in->reason) + 1];

	if (in->state != GPUIO_GPU_UNAVAILABLE || f->said_state)
		return;
	memcpy(reason, in->reason, sizeof(in->reason));
	reason[sizeof(in->reason)] = '\0';
	/* the collector's words, but printed by us: keep them printable */
	for (char *p = reason; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	pr_warn("GPU collector off in pid %u: %s", f->pid, reason);
	f->said_state = true;
}

/* Append f's whole new records; returns records appended or -errno. */
static long drain(struct gpu_ingest *g, struct side_file *f, struct gpuio_cap_writer *w)
{
	long appended = 0;

	for (;;) {
		ssize_t n = pread(f->fd, g->buf, INGEST_BUF, (off_t)f->off);
		size_t pos = 0;

		if (n <= 0)
			return appended;
		while ((size_t)n - pos >= sizeof(struct gpuio_hdr)) {
			struct gpuio_hdr *h = (void *)(g->buf + pos);
			size_t min = gpuio_rec_min_size(h->type);
			int err;

			if (h->size < sizeof(*h) || h->size > GPUIO_REC_SIZE_MAX || (h->size & 7) ||
			    (min && h->size < min)) {
				reject(f, "corrupt record");
				return appended;
			}
			if ((size_t)n - pos < h->size)
				break;  /* partial record: the writer is mid-write */
			if (is_gpu_type(h->type)) {
				h->pid = f->pid;
				if (h->type == GPUIO_REC_GPU_INFO && h->size >= sizeof(struct gpuio_gpu_info))
					note_info(f, (void *)h);
				err = gpuio_cap_writer__append(w, h, h->size);
				if (err)
					return err;
				appended++;
				g->records++;
			}
			pos += h->size;
		}
		f->off += pos;
		if (pos == 0 || (size_t)n < INGEST_BUF)
			return appended;
	}
}

long gpu_ingest__poll(struct gpu_ingest *g, struct gpuio_cap_writer *w)
{
	struct dirent *de;
	long total = 0;
	DIR *d;
	int fd;

	fd = openat(g->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return 0;
	}
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);

		if (strncmp(de->d_name, "cupti.", 6) || len < 12 ||
		    strcmp(de->d_name + len - 6, ".gpuio"))
			continue;
		if (!find_or_add(g, de->d_name))
			continue;
	}
	closedir(d);
	for (unsigned i = 0; i < g->nfiles; i++) {
		struct side_file *f = &g->files[i];
		long n;

		if (f->bad || (!f->header_size && read_header(f) <= 0))
			continue;
		n = drain(g, f, w);
		if (n < 0)
			return n;
		total += n;
	}
	return total;
}

void gpu_ingest__close(struct gpu_ingest *g, bool remove_files)
{
	unsigned long long late = 0;
	struct stat st;
	bool kept = false;

	if (!g)
		return;
	for (unsigned i = 0; i < g->nfiles; i++) {
		struct side_file *f = &g->files[i];

		/* bytes a live collector wrote after the last poll are not in the capture */
		if (!f->bad && f->header_size && !fstat(f->fd, &st) && (__u64)st.st_size > f->off)
			late += (__u64)st.st_size - f->off;
		/* unlinking is also the stop signal for a live injected collector */
		if (remove_files && !f->bad)
			unlinkat(g->dirfd, f->name, 0);
		else
			kept = true;
		close(f->fd);
	}
	if (late)
		pr_warn("%llu bytes of GPU records arrived after the trace ended "
			"and are not in the capture", late);
	if (remove_files && !kept && unlinkat(AT_FDCWD, g->dir, AT_REMOVEDIR) && errno != ENOENT)
		pr_debug("kept %s: %s", g->dir, strerror(errno));
	if (kept && g->nfiles)
		pr_info("GPU side files kept in %s", g->dir);
	close(g->dirfd);
	free(g->files);
	free(g->buf);
	free(g);
}
