// SPDX-License-Identifier: MIT
/* procfs.c — records built from /proc and /sys (attach-time state, names). */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include "lib/job_identity.h"
#include "lib/keyset.h"
#include "trace/mapped_paths.h"
#include "trace/procfs.h"
#include "lib/proc_maps.h"

__u32 procfs_kdev(dev_t dev)
{
	return (major(dev) << 20) | (minor(dev) & 0xfffff);
}

static ssize_t read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0)
		n = -errno;
	close(fd);
	if (n >= 0)
		buf[n] = 0;
	return n;
}

int procfs_tgid(pid_t pid)
{
	char path[64], buf[4096], *p;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (read_small(path, buf, sizeof(buf)) < 0)
		return -ESRCH;
	p = strstr(buf, "\nTgid:");
	if (!p)
		return -ESRCH;
	return atoi(p + 6);
}

/* Parent of a process, and whether it is a zombie (exited, not reaped). */
static pid_t stat_ppid_state(const char *pidstr, char *state)
{
	char path[64], buf[1024], *p;

	snprintf(path, sizeof(path), "/proc/%s/stat", pidstr);
	if (read_small(path, buf, sizeof(buf)) < 0)
		return -1;
	/* comm may hold spaces and parentheses: parse after the last ')' */
	p = strrchr(buf, ')');
	if (!p || !p[1] || !p[2])
		return -1;
	if (state)
		*state = p[2];
	return (pid_t)strtol(p + 4, NULL, 10);   /* ") S PPID" */
}

static pid_t stat_ppid(const char *pidstr)
{
	return stat_ppid_state(pidstr, NULL);
}

int procfs_vsize(pid_t pid, __u64 *start, __u64 *vsize)
{
	char path[64], buf[1024], *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (read_small(path, buf, sizeof(buf)) < 0)
		return -ESRCH;
	/* after comm (which may hold spaces and parentheses): fields 3..21, then 22 and 23 */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d "
			 "%*d %*d %llu %llu", (unsigned long long *)start, (unsigned long long *)vsize) != 2)
		return -ESRCH;
	return 0;
}

bool procfs_alive(pid_t pid)
{
	char s[16], state = 0;

	snprintf(s, sizeof(s), "%d", pid);
	return stat_ppid_state(s, &state) >= 0 && state != 'Z' && state != 'X';
}

size_t procfs_descendants(pid_t tgid, pid_t *out, size_t max)
{
	size_t n = 0, cap = 4096, cnt = 0;
	pid_t (*pairs)[2] = malloc(cap * sizeof(*pairs));
	struct dirent *de;
	DIR *d = opendir("/proc");

	if (!d || !pairs) {
		if (d)
			closedir(d);
		free(pairs);
		return 0;
	}
	while ((de = readdir(d)) != NULL) {
		pid_t pp;
		char state = 0;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pp = stat_ppid_state(de->d_name, &state);
		/* a zombie will never exit again: tracing it would never end */
		if (pp <= 0 || state == 'Z' || state == 'X')
			continue;
		if (cnt == cap) {
			void *np = realloc(pairs, 2 * cap * sizeof(*pairs));
			if (!np)
				break;
			pairs = np;
			cap *= 2;
		}
		pairs[cnt][0] = atoi(de->d_name);
		pairs[cnt][1] = pp;
		cnt++;
	}
	closedir(d);
	/* breadth first from tgid over the parent relation */
	if (max)
		out[n++] = tgid;
	for (size_t head = 0; head < n; head++)
		for (size_t i = 0; i < cnt && n < max; i++)
			if (pairs[i][1] == out[head])
				out[n++] = pairs[i][0];
	free(pairs);
	/* the first entry is tgid itself: callers want only descendants */
	memmove(out, out + 1, (n ? n - 1 : 0) * sizeof(*out));
	return n ? n - 1 : 0;
}

static void fill_hdr(struct gpuio_hdr *h, __u16 type, __u16 size, pid_t pid, pid_t tid, __u64 ts)
{
	memset(h, 0, sizeof(*h));
	h->type = type;
	h->size = size;
	h->pid = (__u32)pid;
	h->tid = (__u32)tid;
	h->ts = ts;
}

static int emit_path(struct gpuio_cap_writer *w, pid_t pid, pid_t tid, __u32 dev, __u64 ino,
		     const char *path, __u64 ts, struct keyset *named)
{
	struct gpuio_path_event ev;
	size_t len = strlen(path), size;

	if (len > GPUIO_PATH_MAX)
		len = GPUIO_PATH_MAX;
	memset(&ev, 0, offsetof(struct gpuio_path_event, data));
	memcpy(ev.data, path, len);
	size = (offsetof(struct gpuio_path_event, data) + len + 7) & ~(size_t)7;
	memset(ev.data + len, 0, size - offsetof(struct gpuio_path_event, data) - len);
	fill_hdr(&ev.hdr, GPUIO_REC_PATH, (__u16)size, pid, tid, ts);
	ev.ino = ino;
	ev.dev = dev;
	ev.len = (__u16)len;
	ev.flags = GPUIO_PATH_PROCFS;
	if (named)
		keyset__test_and_add(named, dev, ino);
	return gpuio_cap_writer__append(w, &ev, size);
}

int procfs_emit_fd_path(struct gpuio_cap_writer *w, pid_t pid, pid_t tid, int fd,
			__u32 dev, __u64 ino, __u64 ts)
{
	char link[64], target[GPUIO_PATH_MAX + 1];
	struct stat st;
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/fd/%d", pid, fd);
	if (stat(link, &st) < 0 || st.st_ino != ino || procfs_kdev(st.st_dev) != dev)
		return -ENOENT;     /* fd closed or reused: do not guess */
	n = readlink(link, target, sizeof(target) - 1);
	if (n <= 0)
		return -errno;
	target[n] = 0;
	return emit_path(w, pid, tid, dev, ino, target, ts, NULL);
}

int procfs_emit_mapped_path(struct mapped_paths *mp, struct gpuio_cap_writer *w, pid_t pid,
			    __u32 dev, __u64 ino, __u64 ts)
{
	const char *path = mapped_paths__find(mp, pid, dev, ino, ts);

	return path ? emit_path(w, pid, pid, dev, ino, path, ts, NULL) : -ENOENT;
}

int procfs_emit_cgroup(struct gpuio_cap_writer *w, pid_t pid, __u64 ts)
{
	struct gpuio_proc_event ev;
	char path[64], text[4096];
	size_t size;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", pid);
	if (read_small(path, text, sizeof(text)) <= 0)
		return -ESRCH;
	memset(&ev, 0, sizeof(ev));
	ev.kind = GPUIO_PROC_CGROUP;
	if (!job_identity__pick(text, ev.args, sizeof(ev.args)))
		return -ENOENT;
	ev.args_len = (__u32)strlen(ev.args);
	size = (offsetof(struct gpuio_proc_event, args) + ev.args_len + 7) & ~(size_t)7;
	fill_hdr(&ev.hdr, GPUIO_REC_PROC, (__u16)size, pid, pid, ts);
	return gpuio_cap_writer__append(w, &ev, size);
}

int procfs_emit_thread_name(struct gpuio_cap_writer *w, pid_t pid, pid_t tid, __u64 ts)
{
	struct gpuio_proc_event ev;
	char path[96], comm[32];
	size_t size = offsetof(struct gpuio_proc_event, args);
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", pid, tid);
	n = read_small(path, comm, sizeof(comm));
	if (n <= 0)
		return -ESRCH;
	comm[strcspn(comm, "\n")] = 0;
	memset(&ev, 0, sizeof(ev));
	fill_hdr(&ev.hdr, GPUIO_REC_PROC, (__u16)size, pid, tid, ts);
	ev.kind = GPUIO_PROC_NAME;
	snprintf(ev.comm, sizeof(ev.comm), "%s", comm);
	return gpuio_cap_writer__append(w, &ev, size);
}

int procfs_emit_attach(struct gpuio_cap_writer *w, pid_t tgid, __u64 ts)
{
	struct gpuio_proc_event ev;
	char path[96], buf[GPUIO_ARGS_MAX + 1];
	ssize_t n;
	size_t size;

	memset(&ev, 0, sizeof(ev));
	ev.kind = GPUIO_PROC_ATTACH;
	snprintf(path, sizeof(path), "/proc/%d/comm", tgid);
	n = read_small(path, buf, sizeof(buf));
	if (n < 0)
		return -ESRCH;
	buf[strcspn(buf, "\n")] = 0;
	snprintf(ev.comm, sizeof(ev.comm), "%s", buf);
	snprintf(path, sizeof(path), "/proc/%d/stat", tgid);
	{
		char pid_s[16];
		snprintf(pid_s, sizeof(pid_s), "%d", tgid);
		ev.ppid = (__u32)stat_ppid(pid_s);
	}
	snprintf(path, sizeof(path), "/proc/%d/cmdline", tgid);
	n = read_small(path, ev.args, sizeof(ev.args) + 1 > sizeof(buf) ? sizeof(buf) : sizeof(ev.args));
	ev.args_len = n > 0 ? (__u32)n : 0;
	size = (offsetof(struct gpuio_proc_event, args) + ev.args_len + 7) & ~(size_t)7;
	fill_hdr(&ev.hdr, GPUIO_REC_PROC, (__u16)size, tgid, tgid, ts);
	return gpuio_cap_writer__append(w, &ev, size);
}

int procfs_emit_process(struct gpuio_cap_writer *w, pid_t tgid, bool all_fds, __u64 ts,
			struct keyset *named)
{
	char path[96];
	struct dirent *de;
	DIR *d;
	int count = 0, err;

	err = procfs_emit_attach(w, tgid, ts);
	if (err)
		return err;
	count++;
	if (procfs_emit_cgroup(w, tgid, ts) == 0)
		count++;

	snprintf(path, sizeof(path), "/proc/%d/task", tgid);
	d = opendir(path);
	while (d && (de = readdir(d)) != NULL) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		if (procfs_emit_thread_name(w, tgid, atoi(de->d_name), ts) == 0)
			count++;
	}
	if (d)
		closedir(d);

	err = procfs_emit_fds(w, tgid, all_fds, false, ts, named);
	return err < 0 ? count : count + err;
}

/* O_CLOEXEC in /proc/PID/fdinfo/FD's octal "flags:" line. */
static bool fd_cloexec(pid_t pid, const char *fd)
{
	char path[96], buf[512], *p;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%s", pid, fd);
	if (read_small(path, buf, sizeof(buf)) <= 0 || !(p = strstr(buf, "flags:")))
		return false;
	return strtoul(p + 6, NULL, 8) & 02000000;
}

int procfs_emit_fds(struct gpuio_cap_writer *w, pid_t tgid, bool all_fds, bool skip_cloexec,
		    __u64 ts, struct keyset *named)
{
	char path[96];
	struct dirent *de;
	int count = 0;
	ssize_t n;
	DIR *d;

	/* files opened before the trace: named now, by what /proc says */
	snprintf(path, sizeof(path), "/proc/%d/fd", tgid);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d)) != NULL) {
		char link[96], target[GPUIO_PATH_MAX + 1];
		struct stat st;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		snprintf(link, sizeof(link), "/proc/%d/fd/%s", tgid, de->d_name);
		if (stat(link, &st) < 0)
			continue;
		if (!all_fds && !S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode))
			continue;
		if (skip_cloexec && fd_cloexec(tgid, de->d_name))
			continue;
		n = readlink(link, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = 0;
		if (emit_path(w, tgid, tgid, procfs_kdev(st.st_dev), st.st_ino, target, ts, named) == 0)
			count++;
	}
	closedir(d);
	return count;
}

int procfs_emit_devname(struct gpuio_cap_writer *w, __u32 kdev, __u64 ts)
{
	struct gpuio_devname_event ev;
	char path[96], buf[1024], *p;

	memset(&ev, 0, sizeof(ev));
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/uevent", kdev >> 20, kdev & 0xfffff);
	if (read_small(path, buf, sizeof(buf)) > 0 && (p = strstr(buf, "DEVNAME=")) != NULL) {
		p += 8;
		p[strcspn(p, "\n")] = 0;
		snprintf(ev.name, sizeof(ev.name), "%s", p);
	} else {
		snprintf(ev.name, sizeof(ev.name), "%u:%u", kdev >> 20, kdev & 0xfffff);
	}
	fill_hdr(&ev.hdr, GPUIO_REC_DEVNAME, sizeof(ev), 0, 0, ts);
	ev.dev = kdev;
	return gpuio_cap_writer__append(w, &ev, sizeof(ev));
}
