// SPDX-License-Identifier: MIT
/*
 * capture.c — write and read the append-only capture file: buffering, the
 * header, the cut at the end, validation. Records are encoded and decoded by
 * compact.c (version 2); version 1 files are read verbatim.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "capture/capture.h"
#include "capture/cap_layers.h"
#include "capture/compact.h"
#include "lib/file_io.h"
#include "lib/units.h"

#define WBUF_SIZE (1u << 20)
#define RBUF_SIZE (1u << 20)

struct gpuio_cap_writer {
	int fd;
	int err;
	size_t used;
	__u64 records;
	__u64 bytes;
	struct gpuio_cenc *enc;
	unsigned char buf[WBUF_SIZE];
};

struct gpuio_cap_reader {
	int fd;
	struct gpuio_cap_header hdr;
	__u64 data_start;        /* file offset of the first record */
	__u64 buf_off;           /* file offset of buf[0] */
	size_t pos, len;         /* consumed / filled bytes of buf */
	__u64 truncated;
	bool eof;
	bool follow;             /* the file is still being appended to */
	__u64 budget;            /* following: bytes it may still read */
	struct gpuio_cdec *dec;  /* version 2 */
	__u64 def_bytes;         /* definitions read since the last record */
	char error[160];
	/* a record is copied here so that it stays aligned and whole */
	union { struct gpuio_hdr h; unsigned char b[GPUIO_REC_SIZE_MAX]; } rec;
	size_t cap;              /* of buf: RBUF_SIZE, less for a small file */
	unsigned char buf[];
};

int gpuio_cap_writer__create(const char *path, const struct gpuio_cap_header *hdr,
			     uid_t owner_uid, gid_t owner_gid,
			     struct gpuio_cap_writer **out)
{
	struct gpuio_cap_writer *w;
	struct stat st;
	int fd, err;

	/* O_NOFOLLOW: an attacker's symlink in a shared directory is refused. */
	fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	if (ftruncate(fd, 0) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	if (owner_uid != (uid_t)-1 && fchown(fd, owner_uid, owner_gid) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	w = calloc(1, sizeof(*w));
	if (!w) {
		close(fd);
		return -ENOMEM;
	}
	w->fd = fd;
	w->enc = gpuio_cenc__new();
	if (!w->enc) {
		close(fd);
		free(w);
		return -ENOMEM;
	}
	{
		struct gpuio_cap_header h = *hdr;

		h.version = GPUIO_CAP_VERSION;  /* whatever the caller copied: we encode */
		h.header_size = sizeof(h);
		err = file_write_all(fd, &h, sizeof(h), NULL);
	}
	if (err) {
		close(fd);
		gpuio_cenc__free(w->enc);
		free(w);
		return err;
	}
	w->bytes = sizeof(*hdr);
	*out = w;
	return 0;
}

int gpuio_cap_writer__flush(struct gpuio_cap_writer *w)
{
	int err;

	if (!w->used)
		return w->err;
	err = file_write_all(w->fd, w->buf, w->used, NULL);
	if (err && !w->err)
		w->err = err;
	w->used = 0;
	return w->err;
}

int gpuio_cap_writer__append(struct gpuio_cap_writer *w, const void *rec, size_t len)
{
	size_t n;

	if (w->err)
		return w->err;
	if (len > GPUIO_REC_SIZE_MAX)
		return -E2BIG;
	if (len < sizeof(struct gpuio_hdr))
		return -EINVAL;
	/* a record and its definitions go out in the same write */
	if (WBUF_SIZE - w->used < GPUIO_CENC_OUT_MAX && gpuio_cap_writer__flush(w))
		return w->err;
	n = gpuio_cenc__encode(w->enc, rec, len, w->buf + w->used);
	w->used += n;
	w->records++;
	w->bytes += n;
	return 0;
}

__u64 gpuio_cap_writer__records(const struct gpuio_cap_writer *w) { return w->records; }
__u64 gpuio_cap_writer__bytes(const struct gpuio_cap_writer *w) { return w->bytes; }

int gpuio_cap_writer__close(struct gpuio_cap_writer *w)
{
	int err;

	if (!w)
		return 0;
	err = gpuio_cap_writer__flush(w);
	if (fsync(w->fd) < 0 && !err && errno != EINVAL)
		err = -errno;
	if (close(w->fd) < 0 && !err)
		err = -errno;
	gpuio_cenc__free(w->enc);
	free(w);
	return err;
}

__u64 gpuio_stats__bpf(const struct gpuio_stats_event *s, unsigned idx)
{
	if (idx < GPUIO_STATS_BPF_FIXED)
		return s->bpf[idx];
	return idx < GPUIO_STAT_MAX ? s->bpf_more[idx - GPUIO_STATS_BPF_FIXED] : 0;
}

void gpuio_stats__set_bpf(struct gpuio_stats_event *s, const __u64 *v)
{
	memcpy(s->bpf, v, sizeof(s->bpf));
	memcpy(s->bpf_more, v + GPUIO_STATS_BPF_FIXED, sizeof(s->bpf_more));
}

void gpuio_stats__from_record(const struct gpuio_hdr *h, struct gpuio_stats_event *out)
{
	size_t nbpf, tail = GPUIO_STATS_FIXED_SIZE - offsetof(struct gpuio_stats_event, user);

	memset(out, 0, sizeof(*out));
	/* the fixed part, and the counters added since that the record holds */
	if (h->size >= GPUIO_STATS_FIXED_SIZE) {
		size_t n = h->size < sizeof(*out) ? h->size : sizeof(*out);

		memcpy(out, h, n);
		out->hdr.size = sizeof(*out);
		/* set when a reader expanded it already; else what its size holds */
		if (!out->nbpf || out->nbpf > GPUIO_STAT_MAX)
			out->nbpf = (__u32)(GPUIO_STATS_BPF_FIXED +
					    (n - GPUIO_STATS_FIXED_SIZE) / sizeof(__u64));
		return;
	}
	if (h->size < GPUIO_STATS_V1_SIZE)
		return;
	/* fewer fixed BPF counters: user[] and the rest follow them */
	nbpf = (h->size - (GPUIO_STATS_FIXED_SIZE - sizeof(out->bpf))) / sizeof(__u64);
	memcpy(out, h, offsetof(struct gpuio_stats_event, bpf) + nbpf * sizeof(__u64));
	memcpy(&out->user, (const unsigned char *)h + offsetof(struct gpuio_stats_event, bpf) +
	       nbpf * sizeof(__u64), tail);
	out->hdr.size = sizeof(*out);
	out->nbpf = (__u32)nbpf;        /* the counters after these: unknown, not 0 */
}

/* The first (leaf) name of a components record, and its length. */
static const char *leaf_name(const struct gpuio_path_event *p, size_t *n)
{
	*n = strnlen(p->data, p->len);
	return p->data;
}

/* Pseudo files, named as /proc/PID/fd names them (fs/d_path.c). */
static size_t pseudo_name(const struct gpuio_path_event *p, char *s)
{
	const char *name;
	size_t n;

	if (p->flags & (GPUIO_PATH_PIPE | GPUIO_PATH_SOCKET))
		return (size_t)sprintf(s, "%s:[%llu]", p->flags & GPUIO_PATH_PIPE ? "pipe" : "socket",
				       (unsigned long long)p->ino);
	name = leaf_name(p, &n);
	if (p->flags & GPUIO_PATH_ANON)
		return (size_t)sprintf(s, "anon_inode:%.*s", (int)n, name);
	return (size_t)sprintf(s, "/%.*s (deleted)", (int)n, name);
}

#define PATH_PSEUDO_FLAGS (GPUIO_PATH_PSEUDO | GPUIO_PATH_PIPE | GPUIO_PATH_SOCKET | GPUIO_PATH_ANON)

char *gpuio_path__string(const struct gpuio_path_event *p, size_t *len_out)
{
	static const char ellipsis[] = "/\xe2\x80\xa6";   /* U+2026: cut at the top */
	static const char deleted[] = " (deleted)";
	size_t len = p->len, out_len = 0;
	char *s = malloc(len + sizeof(ellipsis) + sizeof(deleted) + 48);

	if (!s)
		return NULL;
	if (!(p->flags & GPUIO_PATH_COMPONENTS)) {
		memcpy(s, p->data, len);
		out_len = len;
		goto out;
	}
	if (p->flags & PATH_PSEUDO_FLAGS) {
		out_len = pseudo_name(p, s);
		goto out;
	}
	/* "leaf\0parent\0...top\0": reverse into "/top/.../parent/leaf" */
	if (p->flags & GPUIO_PATH_TRUNCATED) {
		memcpy(s, ellipsis, sizeof(ellipsis) - 1);
		out_len = sizeof(ellipsis) - 1;
	}
	for (size_t end = len; end > 0;) {
		size_t start = end;

		/* a trailing NUL ends the last (top) name; skip empty names */
		if (p->data[end - 1] == 0) {
			end--;
			continue;
		}
		while (start > 0 && p->data[start - 1] != 0)
			start--;
		s[out_len++] = '/';
		memcpy(s + out_len, p->data + start, end - start);
		out_len += end - start;
		end = start;
	}
	if (!out_len)
		s[out_len++] = '/';
	if (p->flags & GPUIO_PATH_DELETED) {
		memcpy(s + out_len, deleted, sizeof(deleted) - 1);
		out_len += sizeof(deleted) - 1;
	}
out:
	s[out_len] = 0;
	*len_out = out_len;
	return s;
}

static const char *const rec_names[] = {
	[0] = "unknown", [GPUIO_REC_VFS] = "vfs", [GPUIO_REC_BLOCK] = "block",
	[GPUIO_REC_PATH] = "path", [GPUIO_REC_PROC] = "proc", [GPUIO_REC_STATS] = "stats",
	[GPUIO_REC_DEVNAME] = "devname",
	[GPUIO_REC_GPU_INFO] = "info", [GPUIO_REC_GPU_KERNEL] = "kernel",
	[GPUIO_REC_GPU_MEMCPY] = "memcpy", [GPUIO_REC_GPU_MEMSET] = "memset",
	[GPUIO_REC_CUDA_API] = "cuda_api", [GPUIO_REC_GPU_SYNC] = "sync", [GPUIO_REC_NVTX] = "nvtx",
	[GPUIO_REC_GPU_OVERHEAD] = "overhead", [GPUIO_REC_GPU_SYM] = "sym",
	[GPUIO_REC_SCHED] = "sched", [GPUIO_REC_WAIT] = "wait", [GPUIO_REC_FAULT_COUNT] = "fault_count",
	[GPUIO_REC_SOCK_PEER] = "sock_peer", [GPUIO_REC_PY_STACK] = "py_stack",
	[GPUIO_REC_PY_CODE] = "py_code", [GPUIO_REC_STACK_AT] = "stack_at",
	[GPUIO_REC_PY_PROC] = "py_proc", [GPUIO_REC_LOST_CALLS] = "lost_calls",
	[GPUIO_REC_THREAD_TIME] = "thread_time",
};
_Static_assert(ARRAY_SIZE(rec_names) == GPUIO_REC_LAST + 1, "a record kind without a name");

const char *gpuio_rec__name(unsigned type)
{
	return type < ARRAY_SIZE(rec_names) && rec_names[type] ? rec_names[type] : "unknown";
}

size_t gpuio_rec_min_size(__u16 type)
{
	switch (type) {
	case GPUIO_REC_VFS:     return sizeof(struct gpuio_vfs_event);
	case GPUIO_REC_BLOCK:   return sizeof(struct gpuio_block_event);
	case GPUIO_REC_PATH:    return offsetof(struct gpuio_path_event, data);
	case GPUIO_REC_PROC:    return offsetof(struct gpuio_proc_event, args);
	/* captures from before the CUDA counters hold 10 BPF counters: see expand_stats */
	case GPUIO_REC_STATS:   return GPUIO_STATS_V1_SIZE;
	case GPUIO_REC_DEVNAME: return sizeof(struct gpuio_devname_event);
	case GPUIO_REC_GPU_INFO:     return sizeof(struct gpuio_gpu_info);
	case GPUIO_REC_GPU_KERNEL:   return offsetof(struct gpuio_gpu_kernel, name);
	case GPUIO_REC_GPU_MEMCPY:   return sizeof(struct gpuio_gpu_memcpy);
	case GPUIO_REC_GPU_MEMSET:   return sizeof(struct gpuio_gpu_memset);
	case GPUIO_REC_CUDA_API:     return sizeof(struct gpuio_cuda_api);
	case GPUIO_REC_GPU_SYNC:     return sizeof(struct gpuio_gpu_sync);
	case GPUIO_REC_NVTX:         return offsetof(struct gpuio_nvtx_range, name);
	case GPUIO_REC_GPU_OVERHEAD: return sizeof(struct gpuio_gpu_overhead);
	case GPUIO_REC_GPU_SYM:      return offsetof(struct gpuio_gpu_sym, name);
	case GPUIO_REC_SCHED:        return sizeof(struct gpuio_sched_event);
	case GPUIO_REC_WAIT:         return sizeof(struct gpuio_wait_event);
	case GPUIO_REC_SOCK_PEER:    return sizeof(struct gpuio_sock_peer);
	case GPUIO_REC_PY_STACK:     return sizeof(struct gpuio_py_stack);
	case GPUIO_REC_PY_CODE:      return sizeof(struct gpuio_py_code);
	case GPUIO_REC_STACK_AT:     return sizeof(struct gpuio_stack_at);
	case GPUIO_REC_PY_PROC:      return sizeof(struct gpuio_py_proc);
	case GPUIO_REC_FAULT_COUNT:  return sizeof(struct gpuio_fault_count);
	case GPUIO_REC_LOST_CALLS:   return sizeof(struct gpuio_lost_calls);
	case GPUIO_REC_THREAD_TIME:  return sizeof(struct gpuio_thread_time);
	default:                return 0;
	}
}

static ssize_t read_full(int fd, void *p, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t k = read(fd, (char *)p + got, n - got);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (k == 0)
			break;
		got += (size_t)k;
	}
	return (ssize_t)got;
}

static int reader_open(const char *path, bool follow, struct gpuio_cap_reader **out,
		       char *err, size_t errlen)
{
	struct gpuio_cap_reader *r;
	struct stat st;
	size_t cap;
	ssize_t n;
	int fd, e;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		e = -errno;
		snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
		return e;
	}
	if (fstat(fd, &st) < 0)
		st.st_mode = 0;         /* size unknown: the full buffer */
	if (S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s is a directory, not a gpuio capture", path);
		close(fd);
		return -EISDIR;
	}
	/* a small capture gets a small buffer (room for two of the largest
	 * records at least): opening it stays cheap; one that grows, the whole */
	cap = RBUF_SIZE;
	if (!follow && S_ISREG(st.st_mode) && st.st_size >= 0 && (uint64_t)st.st_size < RBUF_SIZE)
		cap = (size_t)st.st_size > 2 * GPUIO_REC_SIZE_MAX ? (size_t)st.st_size :
		      2 * GPUIO_REC_SIZE_MAX;
	/* the buffer is filled before it is read: only the struct needs zeroing */
	r = malloc(sizeof(*r) + cap);
	if (r)
		memset(r, 0, sizeof(*r));
	if (!r) {
		close(fd);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	r->fd = fd;
	r->cap = cap;
	r->follow = follow;
	n = read_full(fd, &r->hdr, sizeof(r->hdr));
	if (n < 0) {
		snprintf(err, errlen, "cannot read %s: %s", path, strerror((int)-n));
		e = (int)n;
		goto fail;
	}
	if (n < (ssize_t)offsetof(struct gpuio_cap_header, hostname) ||
	    memcmp(r->hdr.magic, GPUIO_CAP_MAGIC, 8) != 0) {
		snprintf(err, errlen, "%s is not a gpuio capture (bad magic or too short)", path);
		e = -EBADMSG;
		goto fail;
	}
	if (r->hdr.version != GPUIO_CAP_VERSION && r->hdr.version != GPUIO_CAP_VERSION_RAW) {
		snprintf(err, errlen, "%s: capture format version %u, this gpuio reads versions %u and %u",
			 path, r->hdr.version, GPUIO_CAP_VERSION_RAW, GPUIO_CAP_VERSION);
		e = -EPROTO;
		goto fail;
	}
	if (r->hdr.version == GPUIO_CAP_VERSION && !(r->dec = gpuio_cdec__new())) {
		snprintf(err, errlen, "out of memory");
		e = -ENOMEM;
		goto fail;
	}
	if (r->hdr.header_size < GPUIO_CAP_HEADER_V1_SIZE || r->hdr.header_size > (1u << 20) ||
	    n < (ssize_t)GPUIO_CAP_HEADER_V1_SIZE) {
		snprintf(err, errlen, "%s: corrupt capture header (size %u)", path,
			 r->hdr.header_size);
		e = -EBADMSG;
		goto fail;
	}
	/* fields a shorter (older) header does not have are empty */
	if (r->hdr.header_size < sizeof(r->hdr))
		memset((char *)&r->hdr + r->hdr.header_size, 0, sizeof(r->hdr) - r->hdr.header_size);
	/* strings in the header are used as C strings: force termination */
	r->hdr.hostname[sizeof(r->hdr.hostname) - 1] = 0;
	r->hdr.kernel[sizeof(r->hdr.kernel) - 1] = 0;
	r->hdr.boot_id[sizeof(r->hdr.boot_id) - 1] = 0;
	gpuio_cap_layers__terminate(&r->hdr);
	r->hdr.modes_detail[sizeof(r->hdr.modes_detail) - 1] = 0;
	r->hdr.target[sizeof(r->hdr.target) - 1] = 0;
	r->hdr.cmdline[sizeof(r->hdr.cmdline) - 1] = 0;
	r->data_start = r->hdr.header_size;
	if (gpuio_cap_reader__rewind(r) < 0) {
		snprintf(err, errlen, "%s: cannot seek: %s", path, strerror(errno));
		e = -errno;
		goto fail;
	}
	*out = r;
	return 0;
fail:
	close(fd);
	gpuio_cdec__free(r->dec);
	free(r);
	return e;
}

int gpuio_cap_reader__open(const char *path, struct gpuio_cap_reader **out,
			   char *err, size_t errlen)
{
	return reader_open(path, false, out, err, errlen);
}

int gpuio_cap_reader__open_follow(const char *path, struct gpuio_cap_reader **out,
				  char *err, size_t errlen)
{
	return reader_open(path, true, out, err, errlen);
}

void gpuio_cap_reader__set_budget(struct gpuio_cap_reader *r, __u64 bytes)
{
	r->budget = bytes;
}

bool gpuio_cap_reader__budget_spent(const struct gpuio_cap_reader *r)
{
	return r->follow && !r->budget;
}

const struct gpuio_cap_header *gpuio_cap_reader__header(const struct gpuio_cap_reader *r)
{
	return &r->hdr;
}

int gpuio_cap_reader__rewind(struct gpuio_cap_reader *r)
{
	if (lseek(r->fd, (off_t)r->data_start, SEEK_SET) < 0)
		return -errno;
	r->buf_off = r->data_start;
	r->pos = r->len = 0;
	r->eof = false;
	r->truncated = 0;
	r->def_bytes = 0;
	r->error[0] = 0;
	if (r->dec)
		gpuio_cdec__reset(r->dec);
	return 0;
}

/*
 * Make at least want bytes available at buf[pos]; false at end of file.
 * Following, the end is only where the file ends now (or the budget): the
 * next call reads on from there.
 */
static int fill(struct gpuio_cap_reader *r, size_t want)
{
	size_t room;
	ssize_t n;

	if (r->len - r->pos >= want)
		return 1;
	if (r->eof)
		return 0;
	memmove(r->buf, r->buf + r->pos, r->len - r->pos);
	r->buf_off += r->pos;
	r->len -= r->pos;
	r->pos = 0;
	room = r->cap - r->len;
	if (r->follow && room > r->budget)
		room = (size_t)r->budget;
	if (!room)
		return 0;
	n = read_full(r->fd, r->buf + r->len, room);
	if (n < 0)
		return (int)n;
	if (r->follow)
		r->budget -= (__u64)n;
	else if ((size_t)n < room)
		r->eof = true;
	r->len += (size_t)n;
	return r->len - r->pos >= want;
}

int gpuio_rec__sanitize(unsigned char *rec)
{
	struct gpuio_hdr *h = (void *)rec;

	switch (h->type) {
	case GPUIO_REC_PATH: {
		struct gpuio_path_event *p = (void *)rec;

		if (p->len > h->size - offsetof(struct gpuio_path_event, data))
			return -EBADMSG;
		break;
	}
	case GPUIO_REC_PROC: {
		struct gpuio_proc_event *p = (void *)rec;
		size_t room = h->size - offsetof(struct gpuio_proc_event, args);

		/* a record larger than its struct: never past the declared array */
		if (room > sizeof(p->args))
			room = sizeof(p->args);
		if (p->args_len > room)
			p->args_len = (__u32)room;
		break;
	}
	case GPUIO_REC_STATS: {
		/* this build's layout, and nbpf: the counters its tracer had */
		struct gpuio_stats_event st;

		gpuio_stats__from_record(h, &st);
		memcpy(rec, &st, sizeof(st));
		break;
	}
	case GPUIO_REC_GPU_KERNEL: {
		struct gpuio_gpu_kernel *k = (void *)rec;
		size_t room = h->size - offsetof(struct gpuio_gpu_kernel, name);

		if (room > sizeof(k->name))
			room = sizeof(k->name);
		if (k->name_len > room)
			k->name_len = (__u16)room;
		break;
	}
	case GPUIO_REC_NVTX: {
		struct gpuio_nvtx_range *n = (void *)rec;
		size_t room = h->size - offsetof(struct gpuio_nvtx_range, name);

		if (room > sizeof(n->name))
			room = sizeof(n->name);
		if (n->name_len > room)
			n->name_len = (__u16)room;
		break;
	}
	case GPUIO_REC_SOCK_PEER: {
		struct gpuio_sock_peer *p = (void *)rec;

		if (p->lpath_len > GPUIO_SOCK_PATH_MAX)
			p->lpath_len = GPUIO_SOCK_PATH_MAX;
		if (p->rpath_len > GPUIO_SOCK_PATH_MAX)
			p->rpath_len = GPUIO_SOCK_PATH_MAX;
		break;
	}
	case GPUIO_REC_GPU_SYM: {
		struct gpuio_gpu_sym *y = (void *)rec;
		size_t room = h->size - offsetof(struct gpuio_gpu_sym, name);

		if (room > sizeof(y->name))
			room = sizeof(y->name);
		if (y->name_len > room)
			y->name_len = (__u16)room;
		break;
	}
	}
	return 0;
}

/* fill, said: 1 n bytes there, 0 the end (what is left counted as cut), -EBADMSG. */
static int fill_or_end(struct gpuio_cap_reader *r, size_t n)
{
	int ok = fill(r, n);

	if (ok < 0) {
		snprintf(r->error, sizeof(r->error), "read error: %s", strerror(-ok));
		return -EBADMSG;
	}
	if (!ok) {
		/* definitions whose record was cut belong to the cut */
		r->truncated = r->len - r->pos + r->def_bytes;
		return 0;
	}
	return 1;
}

/* The record in r->rec, read from offset at, made safe to use; -EBADMSG if it cannot be. */
static int rec_sanitize(struct gpuio_cap_reader *r, __u64 at)
{
	if (gpuio_rec__sanitize(r->rec.b) >= 0)
		return 0;
	snprintf(r->error, sizeof(r->error), "corrupt path record at offset %llu (len %u > size %u)",
		 (unsigned long long)at, ((struct gpuio_path_event *)r->rec.b)->len, r->rec.h.size);
	return -EBADMSG;
}

/* Version 2: frames through the decoder; definitions are not handed on. */
static int next_v2(struct gpuio_cap_reader *r, const struct gpuio_hdr **rec)
{
	char why[120];

	for (;;) {
		size_t used;
		int rc = gpuio_cdec__decode(r->dec, r->buf + r->pos, r->len - r->pos, r->rec.b,
					    &used, why, sizeof(why));

		if (rc == GPUIO_CDEC_MORE) {
			int ok = fill_or_end(r, r->len - r->pos + 1);

			if (ok <= 0)
				return ok;
			continue;
		}
		if (rc < 0) {
			snprintf(r->error, sizeof(r->error), "corrupt record at offset %llu (%s)",
				 (unsigned long long)(r->buf_off + r->pos), why);
			return -EBADMSG;
		}
		r->pos += used;
		if (rc == GPUIO_CDEC_DEF) {
			r->def_bytes += used;
			continue;
		}
		r->def_bytes = 0;
		if (rec_sanitize(r, r->buf_off + r->pos - used))
			return -EBADMSG;
		*rec = &r->rec.h;
		return 1;
	}
}

int gpuio_cap_reader__next(struct gpuio_cap_reader *r, const struct gpuio_hdr **rec)
{
	struct gpuio_hdr h;
	size_t min;
	int ok;

	if (r->error[0])
		return -EBADMSG;
	if (r->dec)
		return next_v2(r, rec);
	ok = fill_or_end(r, sizeof(h));
	if (ok <= 0)
		return ok;
	memcpy(&h, r->buf + r->pos, sizeof(h));
	min = gpuio_rec_min_size(h.type);
	if (h.type == 0 || h.size < sizeof(h) || h.size > GPUIO_REC_SIZE_MAX ||
	    (min && h.size < min) || (h.size & 7) != 0) {
		snprintf(r->error, sizeof(r->error),
			 "corrupt record at offset %llu (type %u, size %u)",
			 (unsigned long long)(r->buf_off + r->pos), h.type, h.size);
		return -EBADMSG;
	}
	ok = fill_or_end(r, h.size);
	if (ok <= 0)
		return ok;
	memcpy(r->rec.b, r->buf + r->pos, h.size);
	memset(r->rec.b + h.size, 0, 16 < sizeof(r->rec) - h.size ? 16 : sizeof(r->rec) - h.size);
	r->pos += h.size;
	if (rec_sanitize(r, r->buf_off + r->pos - h.size))
		return -EBADMSG;
	*rec = &r->rec.h;
	return 1;
}

__u64 gpuio_cap_reader__truncated(const struct gpuio_cap_reader *r) { return r->truncated; }
__u64 gpuio_cap_reader__offset(const struct gpuio_cap_reader *r) { return r->buf_off + r->pos; }
const char *gpuio_cap_reader__error(const struct gpuio_cap_reader *r) { return r->error; }

void gpuio_cap_reader__close(struct gpuio_cap_reader *r)
{
	if (!r)
		return;
	close(r->fd);
	gpuio_cdec__free(r->dec);
	free(r);
}

const char *gpuio_cap__open_hint(int err)
{
	switch (err) {
	case -ENOENT:
		return " (check the path: captures are the .gpuio files `gpuio trace` writes)";
	case -EACCES:
	case -EPERM:
		return " (no permission: run as the capture's owner, or with sudo)";
	case -EBADMSG:
		return " (give the .gpuio capture, not an exported .json)";
	case -EPROTO:
		return " (convert it with the gpuio version that recorded it)";
	default:
		return "";
	}
}
