// SPDX-License-Identifier: MIT
/*
 * unit_mapped_paths — trace/mapped_paths.c on this process's own mappings:
 * a file mapped before the first lookup is named; one mapped after the last
 * read is named too (a read taken too early is taken again); a file the
 * process no longer maps, used before the last read began, is answered
 * without reading the maps again, however many of them come in a burst
 * (each one read them again before: ~1,000 reads a second under a PyTorch
 * DataLoader, its tensors' shared memory unmapped by then).
 */
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include "lib/clock.h"
#include "trace/mapped_paths.h"
#include "unit.h"

struct mf {
	char path[PATH_MAX];
	__u32 dev;              /* as /proc/PID/maps gives it: major << 20 | minor */
	__u64 ino;
	void *at;
};

static int map_new(struct mf *f, const char *dir, const char *name)
{
	struct stat st;
	int fd;

	snprintf(f->path, sizeof(f->path), "%s/%s", dir, name);
	fd = open(f->path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || ftruncate(fd, 4096) < 0 || fstat(fd, &st) < 0)
		return -1;
	f->at = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	f->dev = major(st.st_dev) << 20 | minor(st.st_dev);
	f->ino = st.st_ino;
	return f->at == MAP_FAILED ? -1 : 0;
}

int main(void)
{
	char dir[] = "/tmp/unit_mapped_paths.XXXXXX";
	struct mapped_paths *mp = mapped_paths__new();
	struct mf a, b, c;
	const char *p;
	unsigned long r;
	__u64 t;
	pid_t me = getpid();

	CHECK(mp && mkdtemp(dir), "setup");
	CHECK(map_new(&a, dir, "a") == 0, "map a");

	/* mapped before the first lookup: one read names it */
	p = mapped_paths__find(mp, me, a.dev, a.ino, clock_mono_ns());
	CHECK(p && !strcmp(p, a.path), "a named '%s', want %s", p ? p : "(none)", a.path);
	CHECK(mapped_paths__reads(mp) == 1, "%lu reads for the first name", mapped_paths__reads(mp));
	p = mapped_paths__find(mp, me, a.dev, a.ino, clock_mono_ns());
	CHECK(p && mapped_paths__reads(mp) == 1, "a again: %lu reads", mapped_paths__reads(mp));

	/* mapped after that read, used after it: read again, named */
	CHECK(map_new(&b, dir, "b") == 0, "map b");
	p = mapped_paths__find(mp, me, b.dev, b.ino, clock_mono_ns());
	CHECK(p && !strcmp(p, b.path), "b (mapped since) named '%s', want %s", p ? p : "(none)", b.path);
	CHECK(mapped_paths__reads(mp) == 2, "%lu reads after b", mapped_paths__reads(mp));

	/* used, then unmapped before the next read: that read does not have it */
	CHECK(map_new(&c, dir, "c") == 0, "map c");
	t = clock_mono_ns();
	munmap(c.at, 4096);
	p = mapped_paths__find(mp, me, c.dev, c.ino, t);
	CHECK(!p && mapped_paths__reads(mp) == 3, "c (gone) named '%s', %lu reads", p ? p : "-",
	      mapped_paths__reads(mp));
	/* a burst of files gone, all used before that read: no read more */
	r = mapped_paths__reads(mp);
	for (int i = 0; i < 1000; i++) {
		p = mapped_paths__find(mp, me, c.dev, c.ino + 1000 + (__u64)i, t);
		CHECK(!p, "a file never mapped named '%s'", p);
	}
	CHECK(mapped_paths__reads(mp) == r, "1000 files gone before the last read: %lu reads more, want 0",
	      mapped_paths__reads(mp) - r);
	/* ... and one used after it is looked for again */
	p = mapped_paths__find(mp, me, c.dev, c.ino + 5000, clock_mono_ns());
	CHECK(!p && mapped_paths__reads(mp) == r + 1, "used after the read: %lu reads more, want 1",
	      mapped_paths__reads(mp) - r);
	/* a mapped file still answers from the maps just read */
	p = mapped_paths__find(mp, me, b.dev, b.ino, t);
	CHECK(p && !strcmp(p, b.path) && mapped_paths__reads(mp) == r + 1, "b after the burst '%s'",
	      p ? p : "(none)");

	munmap(a.at, 4096);
	munmap(b.at, 4096);
	unlink(a.path);
	unlink(b.path);
	unlink(c.path);
	rmdir(dir);
	mapped_paths__free(mp);
	return unit_done("unit_mapped_paths");
}
