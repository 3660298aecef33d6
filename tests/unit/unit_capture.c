// SPDX-License-Identifier: MIT
/*
 * unit_capture — the capture writer and reader (capture/capture.c, and the
 * version 2 encoding of capture/compact.c) round trip: every record written
 * comes back byte for byte and in order, whatever its values (random, edge
 * cases, more threads and files than the encoding's tables hold); a file cut
 * at any byte reads up to the last whole record before the cut and reports
 * the cut; a damaged byte gives a valid decode or -EBADMSG, never a crash; a
 * record whose frame makes no sense is reported with its offset; version 1
 * captures (records verbatim) still read; a file that is not a capture is
 * refused with a reason; a capture followed while it grows gives every
 * record once, a record not yet whole waiting, never an error. Also: bytes per VFS record of realistic streams
 * (must be <= 32) and the encode/decode cost (printed, not checked).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include "capture/capture.h"
#include "capture/compact.h"
#include "unit.h"

/* ---- records ---- */

struct recs {
	unsigned char *buf;     /* records back to back, each at a multiple of 8 */
	size_t len, cap;
	size_t n, *off;
};

static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void *rec_add(struct recs *r, size_t size)
{
	if (r->len + size > r->cap) {
		r->cap = (r->len + size) * 2;
		r->buf = realloc(r->buf, r->cap);
	}
	if (!(r->n & 1023))
		r->off = realloc(r->off, (r->n + 1024) * sizeof(*r->off));
	r->off[r->n++] = r->len;
	memset(r->buf + r->len, 0, size);
	r->len += size;
	return r->buf + r->len - size;
}

static const struct gpuio_hdr *rec_at(const struct recs *r, size_t i)
{
	return (const void *)(r->buf + r->off[i]);
}

static void recs_free(struct recs *r)
{
	free(r->buf);
	free(r->off);
	memset(r, 0, sizeof(*r));
}

static struct gpuio_vfs_event *vfs_add(struct recs *r, uint32_t pid, uint32_t tid, uint64_t ts)
{
	struct gpuio_vfs_event *v = rec_add(r, sizeof(*v));

	v->hdr = (struct gpuio_hdr){ .type = GPUIO_REC_VFS, .size = sizeof(*v), .pid = pid,
				     .tid = tid, .ts = ts };
	v->fd2 = -1;
	v->offset2 = -1;
	return v;
}

/* A 128 KiB read() of a regular file at off, as the loaders below make them. */
static struct gpuio_vfs_event *read_add(struct recs *r, uint32_t pid, uint32_t tid, uint64_t ts,
					uint32_t cpu, int fd, uint32_t dev, uint64_t ino, int64_t off)
{
	struct gpuio_vfs_event *v = vfs_add(r, pid, tid, ts);

	v->hdr.cpu = cpu;
	v->call = GPUIO_CALL_READ;
	v->fd = fd;
	v->dev = dev;
	v->ino = ino;
	v->ftype = GPUIO_FT_REG;
	v->offset = off;
	v->requested = 131072;
	return v;
}

/* Any bytes at all, as a record of type t. */
static void random_add(struct recs *r, uint16_t type, size_t size)
{
	unsigned char *p = rec_add(r, size);
	struct gpuio_hdr *h = (void *)p;

	for (size_t i = 0; i < size; i++)
		p[i] = (unsigned char)rnd();
	h->type = type;
	h->size = (uint16_t)size;
}

static const int64_t edge64[] = { 0, 1, -1, 2, -2, 127, 128, -128, 4096, INT64_MAX, INT64_MIN,
				  INT64_MAX - 1, INT64_MIN + 1, 1ll << 32, -(1ll << 32) };
static int64_t pick64(void)
{
	switch (rnd() % 4) {
	case 0:  return edge64[rnd() % (sizeof(edge64) / sizeof(edge64[0]))];
	case 1:  return (int64_t)rnd();
	case 2:  return (int64_t)(rnd() % 1000);
	default: return (int64_t)(rnd() >> (rnd() % 64));
	}
}

/* A switch or wake-up among a few threads, comms with or without stale tails. */
static void add_sched(struct recs *r, uint64_t ts)
{
	static const char *names[] = { "python3", "pt_data_worker", "kworker/0:1", "" };
	struct gpuio_sched_event *s = rec_add(r, sizeof(*s));
	int t = (int)(rnd() % 6), o = (int)(rnd() % 7);

	s->hdr = (struct gpuio_hdr){ .type = GPUIO_REC_SCHED, .size = sizeof(*s), .pid = 50,
				     .tid = 50 + (uint32_t)t, .cpu = (uint32_t)(rnd() % 2), .ts = ts };
	s->kind = 1 + (uint32_t)(rnd() % 3);
	s->flags = (uint32_t)(rnd() % 16);
	if (o < 6) {
		s->other_pid = 50;
		s->other_tid = 50 + (uint32_t)o;
	}
	s->prev_state = rnd() % 2 ? 0 : (uint32_t)pick64();
	s->target_cpu = rnd() % 3 == 0 ? s->hdr.cpu : rnd() % 2 ? 0 : (uint32_t)pick64();
	s->waker_seq = rnd() % 2 ? 0 : (uint32_t)pick64();
	s->prio = rnd() % 2 ? 120 : (int32_t)pick64();
	strcpy(s->comm, names[o % 4]);
	if (rnd() % 4 == 0)     /* what the ring buffer held before */
		for (size_t i = strlen(s->comm) + 1; i < sizeof(s->comm); i++)
			s->comm[i] = (char)rnd();
}

/* Every kind of record and value the encoder has a case for, and more. */
static void make_mixed(struct recs *r, size_t n)
{
	uint64_t ts = 1000000;
	int64_t pos[8] = { 0 };

	for (size_t i = 0; i < n; i++) {
		unsigned k = (unsigned)(rnd() % 16);
		struct gpuio_vfs_event *v;

		/* time goes forward, mostly; sometimes back, sometimes anywhere */
		ts += rnd() % 20000;
		if (rnd() % 50 == 0)
			ts -= rnd() % 1000000;
		if (rnd() % 500 == 0)
			ts = rnd();
		if (k == 0) {           /* a whole random VFS record */
			unsigned char *p;

			v = vfs_add(r, 0, 0, 0);
			p = (unsigned char *)v;
			for (size_t j = sizeof(v->hdr); j < sizeof(*v); j++)
				p[j] = (unsigned char)rnd();
			v->hdr.pid = (uint32_t)rnd();
			v->hdr.tid = (uint32_t)rnd();
			v->hdr.cpu = (uint32_t)rnd();
			v->hdr.ts = rnd();
		} else if (k <= 6) {    /* sequential reads by 4 threads on 8 files */
			int t = (int)(rnd() % 4), f = t * 2 + (int)(rnd() % 2);

			v = read_add(r, 100, 200 + (uint32_t)t, ts, (uint32_t)(rnd() % 2), 3 + f,
				     8 << 20 | 1, 5000 + (uint64_t)f, pos[f]);
			v->ret = rnd() % 20 ? 131072 : (int64_t)(rnd() % 131072);
			if (rnd() % 30 == 0)
				v->ret = -5;
			pos[f] += v->ret > 0 ? v->ret : 0;
			v->dur_ns = 1000 + rnd() % 100000;
			v->seq = (uint32_t)i;
			v->cache_miss_pages = rnd() % 4 ? 0 : 32;
		} else if (k <= 9) {    /* edge values everywhere */
			v = vfs_add(r, (uint32_t)(rnd() % 3), (uint32_t)(rnd() % 5), ts);
			v->hdr.cpu = rnd() % 2 ? UINT32_MAX : (uint32_t)(rnd() % 4);
			v->dur_ns = (uint64_t)pick64();
			v->ret = pick64();
			v->requested = rnd() % 2 ? (uint64_t)v->ret : (uint64_t)pick64();
			v->offset = pick64();
			v->ino = (uint64_t)pick64();
			v->dev = (uint32_t)pick64();
			v->fd = (int32_t)pick64();
			v->ftype = (uint8_t)rnd();
			v->seq = (uint32_t)pick64();
			v->cache_miss_pages = (uint32_t)pick64();
			v->flags = (uint32_t)pick64();
			v->call = (uint16_t)rnd();
			if (rnd() % 2) {        /* two-file call, or a partial second file */
				v->fd2 = (int32_t)pick64();
				v->ino2 = rnd() % 2 ? 0 : (uint64_t)pick64();
				v->dev2 = rnd() % 2 ? 0 : (uint32_t)pick64();
				v->ftype2 = rnd() % 2 ? 0 : (uint8_t)rnd();
				v->offset2 = rnd() % 2 ? -1 : pick64();
			}
		} else if (k == 10) {   /* threads and files beyond the tables' caps */
			v = vfs_add(r, 7, 10000 + (uint32_t)(rnd() % 6000), ts);
			v->fd = (int32_t)(rnd() % 30000);
			v->ino = rnd() % 30000;
			v->offset = -1;
			v->ret = -9;
			v->requested = 1;
			v->call = GPUIO_CALL_FSYNC;
		} else if (k == 11) {
			struct gpuio_path_event *p;
			size_t len = rnd() % 300, size = (offsetof(struct gpuio_path_event, data) + len + 7) & ~7ul;

			random_add(r, GPUIO_REC_PATH, size);
			p = (void *)(r->buf + r->off[r->n - 1]);
			p->len = (uint16_t)len;
		} else if (k == 12) {
			random_add(r, GPUIO_REC_BLOCK, sizeof(struct gpuio_block_event));
		} else if (k == 13) {
			if (rnd() % 4) {
				add_sched(r, ts);
			} else {
				random_add(r, GPUIO_REC_SCHED, sizeof(struct gpuio_sched_event));
			}
		} else if (k == 14) {
			random_add(r, GPUIO_REC_CUDA_API, sizeof(struct gpuio_cuda_api));
		} else {
			random_add(r, GPUIO_REC_MAX + 3, 8 * (3 + rnd() % 20)); /* unknown type */
		}
	}
}

/* Random 4 KiB preads on one fd by one thread. */
static void make_random_preads(struct recs *r, size_t n)
{
	uint64_t ts = 5000000000ull;

	for (size_t i = 0; i < n; i++) {
		struct gpuio_vfs_event *v = vfs_add(r, 4242, 4242, ts);

		v->hdr.cpu = rnd() % 10 ? 1 : 0;
		v->call = GPUIO_CALL_PREAD64;
		v->fd = 3;
		v->dev = 259 << 20 | 2;
		v->ino = 1234567;
		v->ftype = GPUIO_FT_REG;
		v->offset = (int64_t)(rnd() % 16384) * 4096;    /* 64 MiB file */
		v->requested = 4096;
		v->ret = 4096;
		v->dur_ns = 800 + rnd() % 3000;
		v->seq = (uint32_t)i + 1;
		ts += v->dur_ns + 300 + rnd() % 700;
	}
}

/* Sequential 128 KiB reads by 4 threads, each on 2 of 8 files in turn. */
static void make_seq_reads(struct recs *r, size_t n)
{
	uint64_t ts = 7000000000ull;
	int64_t pos[8] = { 0 };
	uint32_t seq[4] = { 0 };

	for (size_t i = 0; i < n; i++) {
		int t = (int)(i % 4), f = t * 2 + (int)(i / 4 / 16 % 2);
		struct gpuio_vfs_event *v = read_add(r, 777, 780 + (uint32_t)t, ts, (uint32_t)(t % 2),
						     10 + f, 259 << 20 | 2, 9000 + (uint64_t)f, pos[f]);

		v->ret = 131072;
		pos[f] += v->ret;
		v->dur_ns = 20000 + rnd() % 200000;
		v->seq = ++seq[t];
		v->cache_miss_pages = rnd() % 3 ? 0 : 32;
		ts += 5000 + rnd() % 50000;
	}
}

/* 4 threads that sleep on I/O and wake each other; the CPUs' idle and a kworker. */
static void make_sched_stream(struct recs *r, size_t n)
{
	uint64_t ts = 9000000000ull;

	for (size_t i = 0; i < n; i++) {
		struct gpuio_sched_event *s = rec_add(r, sizeof(*s));
		uint32_t t = 300 + (uint32_t)(rnd() % 4), cpu = (uint32_t)(rnd() % 2);

		s->hdr = (struct gpuio_hdr){ .type = GPUIO_REC_SCHED, .size = sizeof(*s), .pid = 300,
					     .tid = t, .cpu = cpu, .ts = ts };
		s->prio = 120;
		if (i % 2 == 0) {       /* t leaves the CPU, to the idle task or a kworker */
			s->kind = GPUIO_SCHED_SWITCH;
			s->flags = GPUIO_SF_PREV_TRACED;
			s->prev_state = rnd() % 5 ? 1 : 0;
			if (rnd() % 4 == 0) {
				s->other_pid = s->other_tid = 40 + cpu;
				strcpy(s->comm, cpu ? "kworker/1:2" : "kworker/0:1");
			} else {
				snprintf(s->comm, sizeof(s->comm), "swapper/%u", cpu);
			}
		} else {                /* the waker: another of the 4, or an interrupt */
			s->kind = GPUIO_SCHED_WAKE;
			s->target_cpu = rnd() % 3 ? cpu : !cpu;
			if (rnd() % 3) {
				s->other_pid = 300;
				s->other_tid = 300 + (uint32_t)(rnd() % 4);
				s->flags = GPUIO_SF_WAKER_TRACED;
				s->waker_seq = (uint32_t)(rnd() % 100000);
				strcpy(s->comm, "python3");
			}
		}
		ts += 2000 + rnd() % 40000;
	}
}

/* ---- files ---- */

static char dir[] = "/tmp/gpuio-unit-XXXXXX";

static int write_v2(const char *path, const struct recs *r)
{
	struct gpuio_cap_writer *w;
	struct gpuio_cap_header hdr;
	struct stat st;
	int bad = 0;

	gpuio_cap_header__init(&hdr, 2, 0);
	if (gpuio_cap_writer__create(path, &hdr, (uid_t)-1, (gid_t)-1, &w))
		return -1;
	for (size_t i = 0; i < r->n; i++)
		bad |= gpuio_cap_writer__append(w, rec_at(r, i), rec_at(r, i)->size) != 0;
	CHECK(gpuio_cap_writer__records(w) == r->n, "writer counts %llu records, %zu appended",
	      (unsigned long long)gpuio_cap_writer__records(w), r->n);
	{
		unsigned long long b = gpuio_cap_writer__bytes(w);

		bad |= gpuio_cap_writer__close(w) != 0;
		CHECK(stat(path, &st) == 0 && (unsigned long long)st.st_size == b,
		      "writer says %llu bytes, the file has %lld", b, (long long)st.st_size);
	}
	return bad ? -1 : 0;
}

/* A version 1 capture, as every gpuio before version 2 wrote it. */
static int write_v1(const char *path, const struct recs *r)
{
	struct gpuio_cap_header hdr;
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	gpuio_cap_header__init(&hdr, 2, 0);
	hdr.version = GPUIO_CAP_VERSION_RAW;
	fwrite(&hdr, sizeof(hdr), 1, f);
	fwrite(r->buf, 1, r->len, f);
	return fclose(f) ? -1 : 0;
}

static unsigned char *slurp(const char *path, size_t *n)
{
	struct stat st;
	unsigned char *p;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &st))
		return NULL;
	p = malloc((size_t)st.st_size + 1);
	*n = (size_t)read(fd, p, (size_t)st.st_size);
	close(fd);
	return p;
}

static void spit(const char *path, const unsigned char *p, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0 || write(fd, p, n) != (ssize_t)n)
		perror(path);
	close(fd);
}

/*
 * Read path, comparing with r: returns the reader's last rc; *nrec whole
 * records that matched in order, *trunc the cut, ends (if given) the reader's
 * offset after each record, mismatches counted in *diff.
 */
static int read_all(const char *path, const struct recs *r, size_t *nrec, uint64_t *trunc,
		    uint64_t *ends, size_t *diff, char *err, size_t errlen)
{
	struct gpuio_cap_reader *rd;
	const struct gpuio_hdr *h;
	int rc;

	*nrec = 0;
	*diff = 0;
	*trunc = 0;
	err[0] = 0;
	rc = gpuio_cap_reader__open(path, &rd, err, errlen);
	if (rc)
		return rc;
	while ((rc = gpuio_cap_reader__next(rd, &h)) > 0) {
		if (*nrec >= r->n || h->size != rec_at(r, *nrec)->size ||
		    memcmp(h, rec_at(r, *nrec), h->size))
			(*diff)++;
		if (ends && *nrec < r->n)
			ends[*nrec] = gpuio_cap_reader__offset(rd);
		(*nrec)++;
	}
	*trunc = gpuio_cap_reader__truncated(rd);
	if (rc < 0)
		snprintf(err, errlen, "%s", gpuio_cap_reader__error(rd));
	gpuio_cap_reader__close(rd);
	return rc;
}

/* ---- tests ---- */

static void test_round_trip(void)
{
	struct recs r = { 0 };
	char path[128], err[320];
	uint64_t trunc;
	size_t n, diff;
	int rc;

	make_mixed(&r, 60000);
	snprintf(path, sizeof(path), "%s/mixed.gpuio", dir);
	CHECK(write_v2(path, &r) == 0, "write");
	rc = read_all(path, &r, &n, &trunc, NULL, &diff, err, sizeof(err));
	CHECK(rc == 0 && n == r.n && !diff && !trunc, "round trip: rc %d, %zu of %zu records, "
	      "%zu differ, %llu cut (%s)", rc, n, r.n, diff, (unsigned long long)trunc, err);
	/* a second pass after rewind decodes the same (the state starts over) */
	{
		struct gpuio_cap_reader *rd;
		const struct gpuio_hdr *h;
		size_t k = 0, bad = 0;

		CHECK(gpuio_cap_reader__open(path, &rd, err, sizeof(err)) == 0, "open");
		for (int i = 0; i < 5000 && gpuio_cap_reader__next(rd, &h) > 0; i++)
			;
		CHECK(gpuio_cap_reader__rewind(rd) == 0, "rewind");
		while (gpuio_cap_reader__next(rd, &h) > 0) {
			bad += k >= r.n || memcmp(h, rec_at(&r, k), h->size);
			k++;
		}
		CHECK(k == r.n && !bad, "after rewind: %zu records, %zu differ", k, bad);
		gpuio_cap_reader__close(rd);
	}
	/* version 1: the same records verbatim */
	snprintf(path, sizeof(path), "%s/v1.gpuio", dir);
	CHECK(write_v1(path, &r) == 0, "write v1");
	rc = read_all(path, &r, &n, &trunc, NULL, &diff, err, sizeof(err));
	CHECK(rc == 0 && n == r.n && !diff && !trunc, "v1: rc %d, %zu of %zu records, %zu differ",
	      rc, n, r.n, diff);
	recs_free(&r);
}

/* Cut at every byte; flip every byte. */
static void test_cut_and_damage(void)
{
	struct recs r = { 0 };
	char path[128], cut[128], err[320];
	unsigned char *file;
	size_t flen, n, diff, nbad = 0, nok = 0, badcut = 0;
	uint64_t trunc, *ends;
	int rc;

	make_mixed(&r, 250);
	snprintf(path, sizeof(path), "%s/small.gpuio", dir);
	snprintf(cut, sizeof(cut), "%s/cut.gpuio", dir);
	CHECK(write_v2(path, &r) == 0, "write");
	ends = calloc(r.n, sizeof(*ends));
	rc = read_all(path, &r, &n, &trunc, ends, &diff, err, sizeof(err));
	CHECK(rc == 0 && n == r.n && !diff, "small: rc %d, %zu records, %zu differ", rc, n, diff);
	file = slurp(path, &flen);
	for (size_t c = sizeof(struct gpuio_cap_header); c < flen; c++) {
		size_t whole = 0;

		while (whole < r.n && ends[whole] <= c)
			whole++;
		spit(cut, file, c);
		rc = read_all(cut, &r, &n, &trunc, NULL, &diff, err, sizeof(err));
		/* a cut right after a record is a clean end; anywhere else, a cut */
		if (rc != 0 || n != whole || diff ||
		    (whole && ends[whole - 1] == c ? trunc != 0 : trunc != c - (whole ? ends[whole - 1] :
		     sizeof(struct gpuio_cap_header)))) {
			if (badcut++ < 5)
				CHECK(0, "cut at %zu: rc %d, %zu records (want %zu), %zu differ, %llu cut "
				      "(%s)", c, rc, n, whole, diff, (unsigned long long)trunc, err);
		}
	}
	CHECK(!badcut, "%zu cuts read wrong", badcut);
	/* any damaged byte: a valid decode or -EBADMSG with a reason */
	for (size_t i = sizeof(struct gpuio_cap_header); i < flen; i++) {
		for (int m = 0; m < 3; m += 2) {
			unsigned char save = file[i];

			file[i] ^= m == 0 ? 0x01 : m == 1 ? 0x80 : 0xff;
			spit(cut, file, flen);
			file[i] = save;
			rc = read_all(cut, &r, &n, &trunc, NULL, &diff, err, sizeof(err));
			if (rc == -EBADMSG && strstr(err, "offset"))
				nbad++;
			else if (rc == 0)
				nok++;
			else
				CHECK(0, "byte %zu ^ %d: rc %d (%s)", i, m, rc, err);
		}
	}
	printf("unit_capture: %zu damaged files: %zu reported corrupt, %zu decoded\n",
	       2 * (flen - sizeof(struct gpuio_cap_header)), nbad, nok);
	/* an unknown frame kind: corruption, named with the frame's offset */
	{
		char off[32];

		file[ends[99]] = 0x01;          /* length 1 ... */
		file[ends[99] + 1] = 0x77;      /* ... of kind 0x77 */
		spit(cut, file, flen);
		rc = read_all(cut, &r, &n, &trunc, NULL, &diff, err, sizeof(err));
		snprintf(off, sizeof(off), "offset %llu", (unsigned long long)ends[99]);
		CHECK(rc == -EBADMSG && n == 100 && strstr(err, off), "kind: rc %d after %zu records, "
		      "'%s' should name %s", rc, n, err, off);
	}
	free(file);
	free(ends);
	recs_free(&r);
}

/* Version 1 files: a cut and a bad size as before. */
static void test_v1(void)
{
	struct recs r = { 0 };
	char path[128], err[320];
	size_t n, diff;
	uint64_t trunc;
	off_t at;
	int rc, fd;

	make_mixed(&r, 1000);
	snprintf(path, sizeof(path), "%s/v1.gpuio", dir);
	CHECK(write_v1(path, &r) == 0, "write v1");
	at = (off_t)(sizeof(struct gpuio_cap_header) + r.off[600]);
	CHECK(truncate(path, at + 5) == 0, "truncate");
	rc = read_all(path, &r, &n, &trunc, NULL, &diff, err, sizeof(err));
	CHECK(rc == 0 && n == 600 && !diff && trunc == 5, "v1 cut: rc %d, %zu records, %llu cut",
	      rc, n, (unsigned long long)trunc);
	at = (off_t)(sizeof(struct gpuio_cap_header) + r.off[100]);
	fd = open(path, O_WRONLY);
	{
		uint16_t bad = 3;

		CHECK(pwrite(fd, &bad, 2, at + (off_t)offsetof(struct gpuio_hdr, size)) == 2, "pwrite");
	}
	close(fd);
	rc = read_all(path, &r, &n, &trunc, NULL, &diff, err, sizeof(err));
	CHECK(rc == -EBADMSG && n == 100, "v1 corrupt: rc %d after %zu records", rc, n);
	{
		char off[32];

		snprintf(off, sizeof(off), "%lld", (long long)at);
		CHECK(strstr(err, off) != NULL, "the reason '%s' does not name offset %s", err, off);
	}
	/* not a capture */
	fd = open(path, O_WRONLY | O_TRUNC);
	CHECK(write(fd, "[{\"name\":\"x\"}]\n", 15) == 15, "write");
	close(fd);
	rc = read_all(path, &r, &n, &trunc, NULL, &diff, err, sizeof(err));
	CHECK(rc < 0 && err[0], "a JSON file read as a capture (rc %d)", rc);
	recs_free(&r);
}

/*
 * A capture read while it is written: the file grows by chunks of any size
 * (records cut anywhere), each pass reads with a budget of any size; every
 * record comes back once, whole and in order, a cut record is "not yet"
 * and never an error, and the last pass over the whole file ends clean.
 */
static void follow_one(const char *src, const char *path, const struct recs *r)
{
	struct gpuio_cap_reader *rd;
	const struct gpuio_hdr *h;
	unsigned char *file;
	size_t flen, at = sizeof(struct gpuio_cap_header), k = 0, bad = 0, passes = 0;
	char err[320];
	int rc = 0;

	file = slurp(src, &flen);
	spit(path, file, at);
	CHECK(gpuio_cap_reader__open_follow(path, &rd, err, sizeof(err)) == 0, "open: %s", err);
	gpuio_cap_reader__set_budget(rd, 1 << 20);
	CHECK(gpuio_cap_reader__next(rd, &h) == 0, "a header alone has no record yet");
	while (rc >= 0 && (at < flen || passes++ < 1000)) {
		size_t add = rnd() % 5 ? rnd() % 3000 : rnd() % 100;
		int fd = open(path, O_WRONLY | O_APPEND);

		if (add > flen - at)
			add = flen - at;
		CHECK(fd >= 0 && write(fd, file + at, add) == (ssize_t)add, "append");
		close(fd);
		at += add;
		gpuio_cap_reader__set_budget(rd, rnd() % 4 ? 1 + rnd() % 5000 : 1 << 20);
		while ((rc = gpuio_cap_reader__next(rd, &h)) > 0) {
			bad += k >= r->n || h->size != rec_at(r, k)->size ||
			       memcmp(h, rec_at(r, k), h->size);
			k++;
		}
		if (at == flen && !gpuio_cap_reader__budget_spent(rd))
			break;
	}
	CHECK(rc == 0 && k == r->n && !bad && !gpuio_cap_reader__truncated(rd),
	      "%s followed: rc %d (%s), %zu of %zu records, %zu differ, %llu cut", src, rc,
	      gpuio_cap_reader__error(rd), k, r->n, bad,
	      (unsigned long long)gpuio_cap_reader__truncated(rd));
	gpuio_cap_reader__close(rd);
	free(file);
}

static void test_follow(void)
{
	struct recs r = { 0 };
	char src[128], path[128];

	make_mixed(&r, 3000);
	snprintf(src, sizeof(src), "%s/whole.gpuio", dir);
	snprintf(path, sizeof(path), "%s/growing.gpuio", dir);
	CHECK(write_v2(src, &r) == 0, "write");
	follow_one(src, path, &r);
	CHECK(write_v1(src, &r) == 0, "write v1");
	follow_one(src, path, &r);
	recs_free(&r);
}

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

/* Bytes per record of a realistic stream (<= 32), and what coding costs. */
static void size_of(const char *name, void (*make)(struct recs *, size_t))
{
	struct recs r = { 0 };
	char path[128], err[320];
	size_t n, diff, flen;
	uint64_t trunc;
	double per, t0, enc_ns, dec_ns;
	int rc;

	make(&r, 100000);
	snprintf(path, sizeof(path), "%s/%s.gpuio", dir, name);
	CHECK(write_v2(path, &r) == 0, "write");
	free(slurp(path, &flen));
	per = (double)(flen - sizeof(struct gpuio_cap_header)) / (double)r.n;
	rc = read_all(path, &r, &n, &trunc, NULL, &diff, err, sizeof(err));
	CHECK(rc == 0 && n == r.n && !diff, "%s: rc %d, %zu records, %zu differ", name, rc, n, diff);
	CHECK(per <= 32.0, "%s: %.1f bytes per record, want <= 32", name, per);
	/* the coder alone, in memory */
	{
		struct gpuio_cenc *e = gpuio_cenc__new();
		struct gpuio_cdec *d = gpuio_cdec__new();
		unsigned char *out = malloc(r.n * 40 + GPUIO_CENC_OUT_MAX), rec[GPUIO_REC_SIZE_MAX];
		size_t len = 0, pos = 0, used, k = 0;
		char why[120];

		t0 = now_ns();
		for (size_t i = 0; i < r.n; i++)
			len += gpuio_cenc__encode(e, rec_at(&r, i), rec_at(&r, i)->size, out + len);
		enc_ns = (now_ns() - t0) / (double)r.n;
		t0 = now_ns();
		while (pos < len && (rc = gpuio_cdec__decode(d, out + pos, len - pos, rec, &used, why,
							       sizeof(why))) > 0) {
			pos += used;
			k += rc == GPUIO_CDEC_REC;
		}
		dec_ns = (now_ns() - t0) / (double)r.n;
		CHECK(k == r.n && pos == len, "%s: in memory, %zu records decoded", name, k);
		free(out);
		gpuio_cenc__free(e);
		gpuio_cdec__free(d);
	}
	printf("unit_capture: %s: %.2f bytes per record (version 1: %u); "
	       "encode %.0f ns, decode %.0f ns per record\n", name, per,
	       rec_at(&r, 0)->size, enc_ns, dec_ns);
	unlink(path);
	recs_free(&r);
}

int main(void)
{
	char cmd[64];

	if (!mkdtemp(dir))
		return perror("mkdtemp"), 1;
	test_round_trip();
	test_cut_and_damage();
	test_v1();
	test_follow();
	size_of("random_preads", make_random_preads);
	size_of("seq_reads_4x8", make_seq_reads);
	size_of("sched_4_threads", make_sched_stream);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", dir);
	return unit_done("unit_capture");
}
