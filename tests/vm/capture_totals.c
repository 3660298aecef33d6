// SPDX-License-Identifier: MIT
/*
 * capture_totals — per-file and per-device totals of a gpuio capture, as plain
 * text lines that busybox sh (grep/sed) can compare.  Built statically for the
 * VM guest (tests/vm/vm.mk), linked with user/capture/capture.c only: the call
 * classification below is this file's own, so it checks gpuio's records
 * rather than reusing gpuio's helpers.
 *
 *   capture_totals [--dump] CAPTURE.gpuio
 *
 * --dump first prints every VFS and BLOCK record, one line each ("vfs ..." /
 * "blk ..."), for reading a guest log by eye.
 *
 * Output (one record per line, fields "key=value", paths with bytes outside
 * 0x21-0x7e written as \xHH so a line always splits on spaces):
 *
 *   capture PATH records=N truncated=BYTES
 *   header vfs_mode=M block_mode=M proc_mode=M pagecache_mode=M iouring_mode=M
 *          fault_mode=M
 *   detail TEXT                                   (why better modes were refused)
 *   stats final=0|1 rb_drop_vfs=N ... drops=N path_unresolved=N   (last STATS)
 *   file PATH read_ops=N read_bytes=N write_ops=N write_bytes=N opens=N
 *        closes=N fsyncs=N errors=N miss_pages=N read_miss_pages=N
 *        write_miss_pages=N blk_read_ops=N blk_read_bytes=N blk_ra_read_ops=N
 *        blk_ra_read_bytes=N blk_write_ops=N blk_write_bytes=N
 *   call PATH CALL ops=N bytes=N errors=N        (CALL as in enum gpuio_call;
 *                                                  "CALL:out" for the
 *                                                  destination of two-file calls)
 *   block MAJ:MIN read_ops=N read_bytes=N write_ops=N write_bytes=N flush_ops=N
 *         other_ops=N nofile_read_ops=N nofile_read_bytes=N
 *         nofile_write_ops=N nofile_write_bytes=N bdev_page_ops=N
 *         bdev_page_bytes=N
 *   sock CALL ops=N bytes=N errors=N             (calls on sockets, any socket)
 *   sockpeers records=N connected=N inet=N unix=N   (SOCK_PEER records; inet and
 *                                                  unix count connected ones)
 *   end files=N devices=N
 *
 * "read" = read, pread64, readv, preadv, preadv2, io_uring_read; "write" = the
 * write counterparts; ops count every event, bytes only successful returns.
 * miss_pages: pages added to the page cache during the file's calls (any
 * page: an open that reads a directory or inode-table block counts it too);
 * read_/write_miss_pages: during its read / write calls only (a write that
 * extends a file adds its pages).
 * PATH is "dev=MAJ:MIN,ino=N" when the capture never named the file.
 * blk_* on a file line: block requests on that file (its pages, or an
 * O_DIRECT call on it); blk_ra_read_*: the reads among them flagged
 * readahead (REQ_RAHEAD), so blk_read - blk_ra_read are the O_DIRECT reads;
 * bdev_page_* on a block line: requests flagged GPUIO_BA_BDEV_PAGE (pages of
 * the device itself: filesystem metadata, journal, raw device I/O);
 * nofile_*: the other requests whose pages name no file (O_DIRECT user
 * buffers).  Files and devices are sorted, so two captures of the same
 * workload give identical lines.  Exit 0, 1 on an unreadable or corrupt
 * capture (the reason on stderr), 2 on usage.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "capture/capture.h"

#define NCALL GPUIO_CALL_MAX

struct ctot { uint64_t ops, bytes, errors; };

/* socket calls by call, and the peer records */
static struct ctot sock_calls[GPUIO_CALL_MAX];
static uint64_t peer_recs, peer_conn, peer_inet, peer_unix;

struct file {
	uint32_t dev;
	uint64_t ino;
	char *path;             /* NULL until a PATH record names it */
	struct ctot c[NCALL];   /* as the event's first file */
	struct ctot c2[NCALL];  /* as the second file (two-file calls) */
	uint64_t miss_pages, read_miss_pages, write_miss_pages;
	uint64_t blk_read_ops, blk_read_bytes, blk_write_ops, blk_write_bytes;
	uint64_t blk_ra_ops, blk_ra_bytes;  /* reads flagged REQ_RAHEAD */
	int seen;               /* an event or block request refers to it */
};

struct dev {
	uint32_t dev;
	uint64_t read_ops, read_bytes, write_ops, write_bytes, flush_ops, other_ops;
	uint64_t nf_read_ops, nf_read_bytes, nf_write_ops, nf_write_bytes;
	uint64_t bdev_ops, bdev_bytes;  /* requests on the device's own pages */
};

#ifndef GPUIO_BA_BDEV_PAGE
#define GPUIO_BA_BDEV_PAGE 0x08
#endif

static struct file *files;
static size_t nfiles, capfiles;
static struct dev *devs;
static size_t ndevs, capdevs;

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (!p) {
		fprintf(stderr, "capture_totals: out of memory\n");
		exit(1);
	}
	return p;
}

/* Linear search: guest workloads touch a handful of files. */
static struct file *file_get(uint32_t dev, uint64_t ino)
{
	for (size_t i = 0; i < nfiles; i++)
		if (files[i].dev == dev && files[i].ino == ino)
			return &files[i];
	if (nfiles == capfiles) {
		capfiles = capfiles ? capfiles * 2 : 64;
		files = xrealloc(files, capfiles * sizeof(*files));
	}
	memset(&files[nfiles], 0, sizeof(files[0]));
	files[nfiles].dev = dev;
	files[nfiles].ino = ino;
	return &files[nfiles++];
}

static struct dev *dev_get(uint32_t d)
{
	for (size_t i = 0; i < ndevs; i++)
		if (devs[i].dev == d)
			return &devs[i];
	if (ndevs == capdevs) {
		capdevs = capdevs ? capdevs * 2 : 16;
		devs = xrealloc(devs, capdevs * sizeof(*devs));
	}
	memset(&devs[ndevs], 0, sizeof(devs[0]));
	devs[ndevs].dev = d;
	return &devs[ndevs++];
}

static const char *const call_name[NCALL] = {
	[GPUIO_CALL_READ] = "read", [GPUIO_CALL_WRITE] = "write",
	[GPUIO_CALL_PREAD64] = "pread64", [GPUIO_CALL_PWRITE64] = "pwrite64",
	[GPUIO_CALL_READV] = "readv", [GPUIO_CALL_WRITEV] = "writev",
	[GPUIO_CALL_PREADV] = "preadv", [GPUIO_CALL_PWRITEV] = "pwritev",
	[GPUIO_CALL_PREADV2] = "preadv2", [GPUIO_CALL_PWRITEV2] = "pwritev2",
	[GPUIO_CALL_OPEN] = "open", [GPUIO_CALL_OPENAT] = "openat",
	[GPUIO_CALL_OPENAT2] = "openat2", [GPUIO_CALL_CREAT] = "creat",
	[GPUIO_CALL_CLOSE] = "close", [GPUIO_CALL_FSYNC] = "fsync",
	[GPUIO_CALL_FDATASYNC] = "fdatasync",
	[GPUIO_CALL_SYNC_FILE_RANGE] = "sync_file_range",
	[GPUIO_CALL_FALLOCATE] = "fallocate", [GPUIO_CALL_FTRUNCATE] = "ftruncate",
	[GPUIO_CALL_SENDFILE] = "sendfile",
	[GPUIO_CALL_COPY_FILE_RANGE] = "copy_file_range",
	[GPUIO_CALL_SPLICE] = "splice",
	[GPUIO_CALL_URING_READ] = "io_uring_read",
	[GPUIO_CALL_URING_WRITE] = "io_uring_write",
	[GPUIO_CALL_RECVFROM] = "recvfrom", [GPUIO_CALL_SENDTO] = "sendto",
	[GPUIO_CALL_RECVMSG] = "recvmsg", [GPUIO_CALL_SENDMSG] = "sendmsg",
	[GPUIO_CALL_RECVMMSG] = "recvmmsg", [GPUIO_CALL_SENDMMSG] = "sendmmsg",
	[GPUIO_CALL_PAGE_FAULT] = "page_fault",
	[GPUIO_CALL_AIO_READ] = "aio_read", [GPUIO_CALL_AIO_WRITE] = "aio_write",
	[GPUIO_CALL_AIO_FSYNC] = "aio_fsync", [GPUIO_CALL_AIO_FDSYNC] = "aio_fdsync",
	[GPUIO_CALL_AIO_POLL] = "aio_poll", [GPUIO_CALL_IO_SUBMIT] = "io_submit",
	[GPUIO_CALL_IO_GETEVENTS] = "io_getevents",
	[GPUIO_CALL_CONNECT] = "connect", [GPUIO_CALL_ACCEPT] = "accept",
	[GPUIO_CALL_FADVISE] = "fadvise64", [GPUIO_CALL_READAHEAD] = "readahead",
	[GPUIO_CALL_MADVISE] = "madvise",
	[GPUIO_CALL_URING_RECV] = "io_uring_recv", [GPUIO_CALL_URING_SEND] = "io_uring_send",
	[GPUIO_CALL_URING_RECVMSG] = "io_uring_recvmsg",
	[GPUIO_CALL_URING_SENDMSG] = "io_uring_sendmsg",
	[GPUIO_CALL_URING_ACCEPT] = "io_uring_accept",
	[GPUIO_CALL_URING_CONNECT] = "io_uring_connect",
};

static int is_read(unsigned c)
{
	return c == GPUIO_CALL_READ || c == GPUIO_CALL_PREAD64 || c == GPUIO_CALL_READV ||
	       c == GPUIO_CALL_PREADV || c == GPUIO_CALL_PREADV2 || c == GPUIO_CALL_URING_READ ||
	       c == GPUIO_CALL_AIO_READ;
}

static int is_write(unsigned c)
{
	return c == GPUIO_CALL_WRITE || c == GPUIO_CALL_PWRITE64 || c == GPUIO_CALL_WRITEV ||
	       c == GPUIO_CALL_PWRITEV || c == GPUIO_CALL_PWRITEV2 || c == GPUIO_CALL_URING_WRITE ||
	       c == GPUIO_CALL_AIO_WRITE;
}

static int is_open(unsigned c)
{
	return c == GPUIO_CALL_OPEN || c == GPUIO_CALL_OPENAT || c == GPUIO_CALL_OPENAT2 ||
	       c == GPUIO_CALL_CREAT;
}

static int two_files(unsigned c)
{
	return c == GPUIO_CALL_SENDFILE || c == GPUIO_CALL_COPY_FILE_RANGE ||
	       c == GPUIO_CALL_SPLICE;
}

/* "/" + the components (leaf first, NUL separated) in reverse order. */
static char *path_from_record(const struct gpuio_path_event *p)
{
	size_t len = p->len, n = 0;
	char *out = xrealloc(NULL, len + 16);
	const char *d = p->data;

	while (len && d[len - 1] == 0)
		len--;
	if (!(p->flags & GPUIO_PATH_COMPONENTS)) {
		memcpy(out, d, len);
		out[len] = 0;
		return out;
	}
	if (p->flags & GPUIO_PATH_TRUNCATED)
		n += (size_t)sprintf(out, "...");
	/* walk the components from the last (the root-most) to the first */
	for (size_t end = len; end > 0;) {
		size_t start = end;

		while (start > 0 && d[start - 1] != 0)
			start--;
		out[n++] = '/';
		memcpy(out + n, d + start, end - start);
		n += end - start;
		end = start ? start - 1 : 0;
	}
	if (n == 0)
		out[n++] = '/';
	out[n] = 0;
	return out;
}

static void print_escaped(const char *s)
{
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if (*c > 0x20 && *c < 0x7f && *c != '\\')
			putchar(*c);
		else
			printf("\\x%02x", *c);
	}
}

static void print_path(const struct file *f)
{
	if (f->path)
		print_escaped(f->path);
	else
		printf("dev=%u:%u,ino=%llu", f->dev >> 20, f->dev & 0xfffff,
		       (unsigned long long)f->ino);
}

static int cmp_file(const void *a, const void *b)
{
	const struct file *x = a, *y = b;

	if (x->path && y->path) {
		int c = strcmp(x->path, y->path);
		if (c)
			return c;
	} else if (x->path != y->path) {
		return x->path ? -1 : 1;
	}
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

static int cmp_dev(const void *a, const void *b)
{
	const struct dev *x = a, *y = b;

	return x->dev < y->dev ? -1 : x->dev > y->dev;
}

static void add_call(struct ctot *t, int64_t ret)
{
	t->ops++;
	if (ret < 0)
		t->errors++;
	else
		t->bytes += (uint64_t)ret;
}

static void on_vfs(const struct gpuio_vfs_event *e)
{
	unsigned c = e->call;
	struct file *f;

	if (c == GPUIO_CALL_NONE || c >= NCALL)
		return;
	if (e->ftype == GPUIO_FT_SOCK)
		add_call(&sock_calls[c], e->ret);
	if (!e->dev && !e->ino)
		return;         /* io_getevents: no file of its own */
	f = file_get(e->dev, e->ino);
	f->seen = 1;
	add_call(&f->c[c], is_open(c) ? (e->ret < 0 ? e->ret : 0) : e->ret);
	f->miss_pages += e->cache_miss_pages;
	if (is_read(c))
		f->read_miss_pages += e->cache_miss_pages;
	else if (is_write(c))
		f->write_miss_pages += e->cache_miss_pages;
	if (two_files(c) && (e->dev2 || e->ino2)) {
		struct file *g = file_get(e->dev2, e->ino2);

		g->seen = 1;
		add_call(&g->c2[c], e->ret);
	}
}

static void on_block(const struct gpuio_block_event *b)
{
	struct dev *d = dev_get(b->dev);
	struct file *f = b->ino ? file_get(b->file_dev, b->ino) : NULL;

	if (b->attr & GPUIO_BA_BDEV_PAGE) {
		d->bdev_ops++;
		d->bdev_bytes += b->bytes;
	}
	switch (b->op) {
	case GPUIO_BLK_READ:
		d->read_ops++;
		d->read_bytes += b->bytes;
		if (f) {
			f->seen = 1;
			f->blk_read_ops++;
			f->blk_read_bytes += b->bytes;
			if (b->rq_flags & GPUIO_RQ_RAHEAD) {
				f->blk_ra_ops++;
				f->blk_ra_bytes += b->bytes;
			}
		} else if (!(b->attr & GPUIO_BA_BDEV_PAGE)) {
			d->nf_read_ops++;
			d->nf_read_bytes += b->bytes;
		}
		break;
	case GPUIO_BLK_WRITE:
		d->write_ops++;
		d->write_bytes += b->bytes;
		if (f) {
			f->seen = 1;
			f->blk_write_ops++;
			f->blk_write_bytes += b->bytes;
		} else if (!(b->attr & GPUIO_BA_BDEV_PAGE)) {
			d->nf_write_ops++;
			d->nf_write_bytes += b->bytes;
		}
		break;
	case GPUIO_BLK_FLUSH:
		d->flush_ops++;
		break;
	default:
		d->other_ops++;
		break;
	}
}

static void dump_record(const struct gpuio_hdr *h)
{
	if (h->type == GPUIO_REC_VFS) {
		const struct gpuio_vfs_event *e = (const void *)h;

		printf("vfs pid=%u tid=%u call=%s fd=%d dev=%u:%u ino=%llu ret=%lld req=%llu off=%lld"
		       " miss=%u seq=%u ftype=%u fd2=%d ino2=%llu ts=%llu dur=%llu\n", h->pid, h->tid,
		       e->call < NCALL && call_name[e->call] ? call_name[e->call] : "?", e->fd,
		       e->dev >> 20, e->dev & 0xfffff, (unsigned long long)e->ino,
		       (long long)e->ret, (unsigned long long)e->requested, (long long)e->offset,
		       e->cache_miss_pages, e->seq, e->ftype, e->fd2, (unsigned long long)e->ino2,
		       (unsigned long long)h->ts, (unsigned long long)e->dur_ns);
	} else if (h->type == GPUIO_REC_BLOCK) {
		const struct gpuio_block_event *b = (const void *)h;

		printf("blk pid=%u tid=%u dev=%u:%u op=%u flags=0x%x attr=0x%x sector=%llu bytes=%u"
		       " file=%u:%u/%llu vfs_seq=%u error=%d\n", h->pid, h->tid, b->dev >> 20,
		       b->dev & 0xfffff, b->op, b->rq_flags, b->attr, (unsigned long long)b->sector,
		       b->bytes, b->file_dev >> 20, b->file_dev & 0xfffff,
		       (unsigned long long)b->ino, b->vfs_seq, b->error);
	} else if (h->type == GPUIO_REC_PROC) {
		const struct gpuio_proc_event *p = (const void *)h;

		printf("proc pid=%u tid=%u kind=%u ppid=%u comm=%.16s\n", h->pid, h->tid, p->kind,
		       p->ppid, p->comm);
	}
}

int main(int argc, char **argv)
{
	struct gpuio_cap_reader *r = NULL;
	const struct gpuio_cap_header *h;
	const struct gpuio_hdr *rec;
	struct gpuio_stats_event last = { 0 };
	int have_stats = 0, rc, dump = 0;
	uint64_t records = 0;
	char err[256];

	if (argc == 3 && !strcmp(argv[1], "--dump"))
		dump = 1, argv++, argc--;
	if (argc != 2 || argv[1][0] == '-') {
		fprintf(stderr, "usage: capture_totals [--dump] CAPTURE.gpuio\n");
		return 2;
	}
	rc = gpuio_cap_reader__open(argv[1], &r, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "capture_totals: %s\n", err);
		return 1;
	}
	h = gpuio_cap_reader__header(r);
	while ((rc = gpuio_cap_reader__next(r, &rec)) == 1) {
		records++;
		if (dump)
			dump_record(rec);
		switch (rec->type) {
		case GPUIO_REC_VFS:
			on_vfs((const void *)rec);
			break;
		case GPUIO_REC_BLOCK:
			on_block((const void *)rec);
			break;
		case GPUIO_REC_PATH: {
			const struct gpuio_path_event *p = (const void *)rec;
			struct file *f = file_get(p->dev, p->ino);

			/* the first name wins; a full one replaces a truncated one */
			if (!f->path || strncmp(f->path, "...", 3) == 0) {
				free(f->path);
				f->path = path_from_record(p);
			}
			break;
		}
		case GPUIO_REC_STATS:
			memcpy(&last, rec, sizeof(last));
			have_stats = 1;
			break;
		case GPUIO_REC_SOCK_PEER: {
			const struct gpuio_sock_peer *p = (const void *)rec;
			int conn = p->flags & GPUIO_SP_PEER;

			peer_recs++;
			peer_conn += conn;
			peer_inet += conn && (p->family == 2 || p->family == 10);
			peer_unix += conn && p->family == 1;
			break;
		}
		}
	}
	if (rc < 0) {
		fprintf(stderr, "capture_totals: %s: %s\n", argv[1], gpuio_cap_reader__error(r));
		gpuio_cap_reader__close(r);
		return 1;
	}

	printf("capture ");
	print_escaped(argv[1]);
	printf(" records=%llu truncated=%llu\n", (unsigned long long)records,
	       (unsigned long long)gpuio_cap_reader__truncated(r));
	printf("header vfs_mode=%s block_mode=%s proc_mode=%s pagecache_mode=%s iouring_mode=%s"
	       " fault_mode=%s\n",
	       h->vfs_mode[0] ? h->vfs_mode : "-", h->block_mode[0] ? h->block_mode : "-",
	       h->proc_mode[0] ? h->proc_mode : "-",
	       h->pagecache_mode[0] ? h->pagecache_mode : "-",
	       h->iouring_mode[0] ? h->iouring_mode : "-",
	       h->fault_mode[0] ? h->fault_mode : "-");
	printf("detail %s\n", h->modes_detail);
	if (have_stats) {
		static const char *const names[GPUIO_STAT_MAX] = {
			"rb_drop_vfs", "rb_drop_block", "rb_drop_path", "rb_drop_proc",
			"map_full_pid", "map_full_rq", "map_full_task", "path_trunc",
			"events_vfs", "events_block", "rb_drop_cuda", "cuda_too_deep",
			"rb_drop_sched", "rb_drop_sock", "rb_drop_wait", "rb_drop_fault", "map_full_fault",
			"fault_no_vma",
		};
		uint64_t drops = 0;

		printf("stats final=%u", last.final);
		/* counters past the record's fixed part: gpuio_stats__get */
		for (int i = 0; i < GPUIO_STAT_MAX; i++)
			printf(" %s=%llu", names[i] ? names[i] : "?",
			       (unsigned long long)gpuio_stats__bpf(&last, (unsigned)i));
		for (int i = GPUIO_STAT_RB_DROP_VFS; i <= GPUIO_STAT_MAP_FULL_TASK; i++)
			drops += last.bpf[i];
		drops += last.user[GPUIO_USTAT_WRITE_ERRORS];
		printf(" write_errors=%llu path_unresolved=%llu drops=%llu\n",
		       (unsigned long long)last.user[GPUIO_USTAT_WRITE_ERRORS],
		       (unsigned long long)last.user[GPUIO_USTAT_PATH_UNRESOLVED],
		       (unsigned long long)drops);
	} else {
		printf("stats none\n");
	}

	qsort(files, nfiles, sizeof(*files), cmp_file);
	{
		size_t shown = 0;

		for (size_t i = 0; i < nfiles; i++) {
			const struct file *f = &files[i];
			uint64_t ro = 0, rb = 0, wo = 0, wb = 0, op = 0, cl = 0, fs = 0, er = 0;

			if (!f->seen)
				continue;          /* named but never used (e.g. fds at attach) */
			shown++;
			for (unsigned c = 1; c < NCALL; c++) {
				const struct ctot *t = &f->c[c];

				er += t->errors + f->c2[c].errors;
				if (is_read(c))
					ro += t->ops, rb += t->bytes;
				else if (is_write(c))
					wo += t->ops, wb += t->bytes;
				else if (is_open(c))
					op += t->ops;
				else if (c == GPUIO_CALL_CLOSE)
					cl += t->ops;
				else if (c == GPUIO_CALL_FSYNC || c == GPUIO_CALL_FDATASYNC)
					fs += t->ops;
			}
			printf("file ");
			print_path(f);
			printf(" read_ops=%llu read_bytes=%llu write_ops=%llu write_bytes=%llu"
			       " opens=%llu closes=%llu fsyncs=%llu errors=%llu miss_pages=%llu"
			       " read_miss_pages=%llu write_miss_pages=%llu blk_read_ops=%llu blk_read_bytes=%llu"
			       " blk_ra_read_ops=%llu blk_ra_read_bytes=%llu blk_write_ops=%llu"
			       " blk_write_bytes=%llu\n",
			       (unsigned long long)ro, (unsigned long long)rb,
			       (unsigned long long)wo, (unsigned long long)wb,
			       (unsigned long long)op, (unsigned long long)cl,
			       (unsigned long long)fs, (unsigned long long)er,
			       (unsigned long long)f->miss_pages,
			       (unsigned long long)f->read_miss_pages,
			       (unsigned long long)f->write_miss_pages,
			       (unsigned long long)f->blk_read_ops, (unsigned long long)f->blk_read_bytes,
			       (unsigned long long)f->blk_ra_ops, (unsigned long long)f->blk_ra_bytes,
			       (unsigned long long)f->blk_write_ops,
			       (unsigned long long)f->blk_write_bytes);
			for (unsigned c = 1; c < NCALL; c++) {
				for (int side = 0; side < 2; side++) {
					const struct ctot *t = side ? &f->c2[c] : &f->c[c];

					if (!t->ops)
						continue;
					printf("call ");
					print_path(f);
					printf(" %s%s ops=%llu bytes=%llu errors=%llu\n", call_name[c],
					       side ? ":out" : "", (unsigned long long)t->ops,
					       (unsigned long long)t->bytes,
					       (unsigned long long)t->errors);
				}
			}
		}
		qsort(devs, ndevs, sizeof(*devs), cmp_dev);
		for (size_t i = 0; i < ndevs; i++) {
			const struct dev *d = &devs[i];

			printf("block %u:%u read_ops=%llu read_bytes=%llu write_ops=%llu"
			       " write_bytes=%llu flush_ops=%llu other_ops=%llu nofile_read_ops=%llu"
			       " nofile_read_bytes=%llu nofile_write_ops=%llu nofile_write_bytes=%llu"
			       " bdev_page_ops=%llu bdev_page_bytes=%llu\n",
			       d->dev >> 20, d->dev & 0xfffff,
			       (unsigned long long)d->read_ops, (unsigned long long)d->read_bytes,
			       (unsigned long long)d->write_ops, (unsigned long long)d->write_bytes,
			       (unsigned long long)d->flush_ops, (unsigned long long)d->other_ops,
			       (unsigned long long)d->nf_read_ops, (unsigned long long)d->nf_read_bytes,
			       (unsigned long long)d->nf_write_ops,
			       (unsigned long long)d->nf_write_bytes,
			       (unsigned long long)d->bdev_ops, (unsigned long long)d->bdev_bytes);
		}
		for (unsigned c = 1; c < NCALL; c++)
			if (sock_calls[c].ops)
				printf("sock %s ops=%llu bytes=%llu errors=%llu\n",
				       call_name[c] ? call_name[c] : "?",
				       (unsigned long long)sock_calls[c].ops,
				       (unsigned long long)sock_calls[c].bytes,
				       (unsigned long long)sock_calls[c].errors);
		printf("sockpeers records=%llu connected=%llu inet=%llu unix=%llu\n",
		       (unsigned long long)peer_recs, (unsigned long long)peer_conn,
		       (unsigned long long)peer_inet, (unsigned long long)peer_unix);
		printf("end files=%zu devices=%zu\n", shown, ndevs);
	}
	gpuio_cap_reader__close(r);
	return 0;
}
