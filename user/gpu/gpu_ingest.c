// SPDX-License-Identifier: MIT
/*
 * gpu_ingest.c — tail the CUPTI collectors' side files into the capture
 * (see gpu_ingest.h for why the files exist and what is trusted).
 *
 * DIR is writable by anyone, so every name in it may be a plant: a FIFO or
 * device (never opened: looked at first, then opened O_NONBLOCK|O_NOCTTY and
 * checked again), a symlink (O_NOFOLLOW), a hard link to some other file
 * (nlink must be 1), a file swapped under a known name (inode pinned at first
 * sight), thousands of names (no fd is kept between polls: the tracer's own
 * fds cannot be exhausted), or a writer that never stops (each poll reads at
 * most a bounded amount, up to the size seen when it started).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "gpu/gpu_ingest.h"
#include "lib/log.h"

#define INGEST_MAX_FILES 4096
#define INGEST_BUF (256 * 1024)
/* per poll (1 s): far above what CUPTI produces, low enough to never stall the trace */
#define INGEST_FILE_POLL_MAX (64ull << 20)
#define INGEST_POLL_MAX (256ull << 20)

struct side_file {
	char name[64];
	dev_t dev;              /* the inode first seen under name (ino 0: not yet) */
	ino_t ino;
	__u32 pid;              /* the collector's pid, from the file's header */
	__u32 header_size;      /* 0 until the header has been read */
	__u64 off;              /* next unread byte */
	bool bad;               /* rejected: reported once, no longer read */
	bool said_state;        /* UNAVAILABLE reason printed */
	__u32 state;            /* the last collector state told to the hook */
};

struct gpu_ingest {
	char dir[4096];
	int dirfd;
	struct side_file *files;
	unsigned nfiles;
	unsigned next;          /* first file read by the next poll (fair under the cap) */
	bool said_full;
	unsigned long long records;
	unsigned char *buf;
	gpu_ingest_state_fn on_state;
	void *on_state_ctx;
};

void gpu_ingest__on_state(struct gpu_ingest *g, gpu_ingest_state_fn fn, void *ctx)
{
	g->on_state = fn;
	g->on_state_ctx = ctx;
}

static bool is_gpu_type(__u16 t)
{
	return t >= GPUIO_REC_GPU_INFO && t <= GPUIO_REC_GPU_SYM;
}

static bool is_side_name(const char *name)
{
	size_t len = strlen(name);

	return !strncmp(name, "cupti.", 6) && len >= 12 && !strcmp(name + len - 6, ".gpuio");
}

/*
 * A directory we own that already exists is left from an earlier trace with
 * the same capture name (killed, or with rejected files kept): its side files
 * are not this trace's, and a collector still writing one takes the unlink
 * as its stop signal.
 */
static void clear_stale(struct gpu_ingest *g)
{
	struct dirent *de;
	unsigned n = 0;
	DIR *d;
	int fd;

	fd = openat(g->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	while ((de = readdir(d)))
		if (is_side_name(de->d_name) && !unlinkat(g->dirfd, de->d_name, 0))
			n++;
	closedir(d);
	if (n)
		pr_warn("removed %u GPU side file(s) an earlier trace left in %s", n, g->dir);
}

int gpu_ingest__open(const char *dir, struct gpu_ingest **out)
{
	struct gpu_ingest *g;
	struct stat st;
	bool existed = false;
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
	if (mkdir(dir, 01733)) {
		if (errno != EEXIST) {
			err = -errno;
			goto fail;
		}
		existed = true;
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
	if (existed)
		clear_stale(g);
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

static void find_or_add(struct gpu_ingest *g, const char *name)
{
	unsigned i;

	for (i = 0; i < g->nfiles; i++)
		if (!strcmp(g->files[i].name, name))
			return;
	if (strlen(name) >= sizeof(g->files[0].name))
		return;
	if (g->nfiles == INGEST_MAX_FILES) {
		if (!g->said_full)
			pr_warn("more than %d GPU side files in %s: new ones are ignored",
				INGEST_MAX_FILES, g->dir);
		g->said_full = true;
		return;
	}
	snprintf(g->files[g->nfiles++].name, sizeof(g->files[0].name), "%s", name);
}

static void reject(struct side_file *f, const char *why)
{
	if (!f->bad)
		pr_warn("GPU side file %s ignored from here on: %s", f->name, why);
	f->bad = true;
}

/*
 * Open f for this poll: the regular, singly linked file first seen under its
 * name, never anything else. fd (and *st), or -errno (-ENOENT: not there now).
 */
static int open_side(struct gpu_ingest *g, struct side_file *f, struct stat *st)
{
	struct stat pre;
	int fd;

	/* look first: a FIFO or device is never opened (open has side effects) */
	if (fstatat(g->dirfd, f->name, &pre, AT_SYMLINK_NOFOLLOW))
		return -errno;
	if (!S_ISREG(pre.st_mode)) {
		reject(f, "not a regular file");
		return -EINVAL;
	}
	fd = openat(g->dirfd, f->name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, st) || !S_ISREG(st->st_mode) || st->st_dev != pre.st_dev ||
	    st->st_ino != pre.st_ino) {
		reject(f, "replaced while being opened");
		goto bad;
	}
	/* a hard link would make us read (and later unlink a name of) someone else's file */
	if (st->st_nlink != 1) {
		reject(f, "hard-linked");
		goto bad;
	}
	if (f->ino && (f->dev != st->st_dev || f->ino != st->st_ino)) {
		reject(f, "replaced by another file");
		goto bad;
	}
	f->dev = st->st_dev;
	f->ino = st->st_ino;
	return fd;
bad:
	close(fd);
	return -EINVAL;
}

static unsigned long pidns_of(const char *pid_dir)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "%s/ns/pid", pid_dir);
	return stat(path, &st) ? 0 : (unsigned long)st.st_ino;
}

/* Does uid own process pid_dir (real, effective, saved or fs uid)? */
static bool proc_has_uid(const char *pid_dir, uid_t uid)
{
	char path[64], line[256];
	bool yes = false;
	FILE *fp;

	snprintf(path, sizeof(path), "%s/status", pid_dir);
	fp = fopen(path, "re");
	if (!fp)
		return false;
	while (fgets(line, sizeof(line), fp)) {
		unsigned long u[4];

		if (sscanf(line, "Uid: %lu %lu %lu %lu", &u[0], &u[1], &u[2], &u[3]) == 4) {
			yes = u[0] == uid || u[1] == uid || u[2] == uid || u[3] == uid;
			break;
		}
	}
	fclose(fp);
	return yes;
}

/* The innermost pid of /proc/PID (its NSpid line's last field), 0 unknown. */
static unsigned long inner_pid(const char *pid_dir)
{
	char path[64], line[256];
	unsigned long pid = 0;
	FILE *fp;

	snprintf(path, sizeof(path), "%s/status", pid_dir);
	fp = fopen(path, "re");
	if (!fp)
		return 0;
	while (fgets(line, sizeof(line), fp)) {
		if (!strncmp(line, "NSpid:", 6)) {
			char *last = strrchr(line, '\t');

			pid = strtoul(last ? last + 1 : line + 6, NULL, 10);
			break;
		}
	}
	fclose(fp);
	return pid;
}

/*
 * The pid, in gpuio's namespace, of the collector that wrote a side file
 * claiming pid `claimed` of pid namespace `ns` (0: not said). A container's
 * collector knows only its own namespace's pid: find the process in that
 * namespace with that pid. The file's owner must be one of the process's
 * uids (root's files are trusted), so no user can put records on another
 * user's process. Returns the pid, or 0 with a reason.
 */
static __u32 resolve_pid(__u32 claimed, unsigned long ns, uid_t owner, const char **why)
{
	unsigned long mine = pidns_of("/proc/self");
	char dir[64];
	DIR *d;
	struct dirent *de;

	if (!ns || ns == mine) {
		snprintf(dir, sizeof(dir), "/proc/%u", claimed);
		if (access(dir, F_OK)) {
			/* exited already (a launched command): nothing left to check */
			return claimed;
		}
		if (owner && !proc_has_uid(dir, owner)) {
			*why = "its pid belongs to another user";
			return 0;
		}
		return claimed;
	}
	d = opendir("/proc");
	if (!d) {
		*why = "/proc unreadable";
		return 0;
	}
	while ((de = readdir(d))) {
		unsigned long pid = strtoul(de->d_name, NULL, 10);

		if (!pid || pid > 0x7fffffff)
			continue;
		snprintf(dir, sizeof(dir), "/proc/%lu", pid);
		if (pidns_of(dir) != ns || inner_pid(dir) != claimed)
			continue;
		closedir(d);
		if (owner && !proc_has_uid(dir, owner)) {
			*why = "its pid belongs to another user";
			return 0;
		}
		return (__u32)pid;
	}
	closedir(d);
	*why = "a process of another pid namespace that is gone: its pid cannot be mapped";
	return 0;
}

static int read_header(struct side_file *f, int fd, const struct stat *st)
{
	struct gpuio_cap_header h;
	const char *why = NULL, *p;
	unsigned long ns = 0;
	ssize_t n;

	n = pread(fd, &h, sizeof(h), 0);
	if (n < (ssize_t)sizeof(h))
		return 0;       /* not written yet (the collector writes it whole) */
	if (memcmp(h.magic, GPUIO_CAP_MAGIC, sizeof(h.magic)) ||
	    h.header_size < offsetof(struct gpuio_cap_header, flags) ||
	    h.header_size > 65536 || (h.header_size & 7)) {
		reject(f, "bad header");
		return -1;
	}
	h.target[sizeof(h.target) - 1] = 0;
	p = strstr(h.target, " pidns ");
	if (p)
		ns = strtoul(p + 7, NULL, 10);
	f->pid = resolve_pid(h.tracer_pid, ns, st->st_uid, &why);
	if (!f->pid) {
		reject(f, why);
		return -1;
	}
	if (f->pid != h.tracer_pid)
		pr_info("GPU collector of pid %u in another pid namespace is pid %u here",
			h.tracer_pid, f->pid);
	f->header_size = h.header_size;
	f->off = h.header_size;
	return 1;
}

static void note_info(struct gpu_ingest *g, struct side_file *f, const struct gpuio_gpu_info *in)
{
	char reason[sizeof(in->reason) + 1];

	if (in->state != f->state && in->state != GPUIO_GPU_FINAL) {
		f->state = in->state;
		if (g->on_state)
			g->on_state(g->on_state_ctx, (pid_t)f->pid, in);
	}
	if (in->state != GPUIO_GPU_UNAVAILABLE || f->said_state)
		return;
	f->said_state = true;
	if (in->cupti_error == GPUIO_CUPTI_HELD) {
		pr_warn("pid %u: another profiler holds CUPTI (the PyTorch profiler, Nsight Systems "
			"or DCGM profiling?): gpuio records no GPU activity there; its CUDA API calls "
			"come from uprobes", f->pid);
		return;
	}
	memcpy(reason, in->reason, sizeof(in->reason));
	reason[sizeof(in->reason)] = '\0';
	/* the collector's words, but printed by us: keep them printable */
	for (char *p = reason; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
			*p = '?';
	pr_warn("GPU collector off in pid %u: %s", f->pid, reason);
}

/*
 * Append f's whole new records up to end (the size when this poll opened
 * it, capped by the budget: a writer that never stops cannot hold us here).
 * Returns records appended or -errno.
 */
static long drain(struct gpu_ingest *g, struct side_file *f, int fd, __u64 end,
		  struct gpuio_cap_writer *w)
{
	long appended = 0;

	while (f->off < end) {
		size_t want = end - f->off < INGEST_BUF ? (size_t)(end - f->off) : INGEST_BUF;
		ssize_t n = pread(fd, g->buf, want, (off_t)f->off);
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
				break;  /* partial record: the writer is mid-write (or the cap) */
			if (is_gpu_type(h->type)) {
				h->pid = f->pid;
				if (h->type == GPUIO_REC_GPU_INFO && h->size >= sizeof(struct gpuio_gpu_info))
					note_info(g, f, (void *)h);
				err = gpuio_cap_writer__append(w, h, h->size);
				if (err)
					return err;
				appended++;
				g->records++;
			}
			pos += h->size;
		}
		f->off += pos;
		if (pos == 0 || (size_t)n < want)
			return appended;
	}
	return appended;
}

long gpu_ingest__poll(struct gpu_ingest *g, struct gpuio_cap_writer *w)
{
	__u64 budget = INGEST_POLL_MAX;
	struct dirent *de;
	long total = 0;
	unsigned first;
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
	while ((de = readdir(d)))
		if (is_side_name(de->d_name))
			find_or_add(g, de->d_name);
	closedir(d);
	first = g->nfiles ? g->next % g->nfiles : 0;
	for (unsigned k = 0; k < g->nfiles && budget; k++) {
		struct side_file *f = &g->files[(first + k) % g->nfiles];
		struct stat st;
		__u64 end, before;
		long n = 0;

		if (f->bad)
			continue;
		fd = open_side(g, f, &st);
		if (fd < 0)
			continue;
		if (f->header_size || read_header(f, fd, &st) > 0) {
			before = f->off;
			end = (__u64)st.st_size;
			if (end > f->off + INGEST_FILE_POLL_MAX)
				end = f->off + INGEST_FILE_POLL_MAX;
			if (end > f->off + budget)
				end = f->off + budget;
			n = drain(g, f, fd, end, w);
			budget -= f->off - before;
		}
		close(fd);
		if (n < 0)
			return n;
		total += n;
		g->next = (first + k + 1) % g->nfiles;
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
		bool same = !fstatat(g->dirfd, f->name, &st, AT_SYMLINK_NOFOLLOW) &&
			    f->ino && st.st_dev == f->dev && st.st_ino == f->ino;

		/* bytes a live collector wrote after the last poll are not in the capture */
		if (!f->bad && same && f->header_size && (__u64)st.st_size > f->off)
			late += (__u64)st.st_size - f->off;
		/* unlinking is also the stop signal for a live injected collector */
		if (remove_files && !f->bad)
			unlinkat(g->dirfd, f->name, 0);
		else
			kept = true;
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
