// SPDX-License-Identifier: MIT
/*
 * gen_capture — synthetic captures with known content, written with the real
 * capture writer (user/capture.c), for the exporter's tests, the fuzzer's
 * seed corpus and speed measurements.
 *
 *   gen_capture MODE OUT.gpuio [N]
 *   gen_capture shift OUT.gpuio IN.gpuio MONO_NS REAL_NS
 *
 * Modes:
 *   basic     a small whole capture: every record type, final stats
 *   hostile   file/process/thread/disk/header names with '"', '\', newline,
 *             tab, control bytes, NUL, invalid UTF-8 (0xff, lone 0xc3, ...)
 *   flows     VFS calls and block requests that name them by (tid, seq):
 *             fan-out, overlapping requests needing several lanes, dangling
 *             references, two disks, calls of every shape
 *   truncate  a capture cut in the middle of its last record
 *   corrupt   a capture with a record whose size field is impossible
 *   big N [K] N VFS calls (4 threads, 64 files) and a block request per K
 *             calls (default 16; 0: none)
 *   shift IN MONO_NS REAL_NS
 *             a copy of capture IN as if recorded on a host whose clocks
 *             differ: MONO_NS is added to the header's monotonic anchor and
 *             to every timestamp (another boot time), REAL_NS to the header's
 *             realtime anchor (a wall clock off by that much); for gpuio
 *             merge's tests
 *
 * On stdout: a JSON manifest of what was written (the ground truth the tests
 * compare the export against). Byte strings are given as hex ("..._hex") so
 * that any byte survives; tests decode them themselves.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "capture.h"

#define BASE_NS   1000000000000ull     /* header monotonic anchor: 1000 s */
#define REAL_NS   1700000000123456789ull
#define DEV_DATA  ((8u << 20) | 1)      /* 8:1, the data file system */
#define DEV_SDA   ((8u << 20) | 0)      /* disk 8:0 "sda" */
#define DEV_NVME  ((259u << 20) | 0)    /* disk 259:0, no DEVNAME record */

static struct gpuio_cap_writer *W;
static const char *out_path;

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("gen_capture: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

static void append(const void *rec, size_t len)
{
	int err = gpuio_cap_writer__append(W, rec, len);

	if (err)
		die("append: %s", strerror(-err));
}

static void fill_hdr(struct gpuio_hdr *h, unsigned type, size_t size, unsigned pid,
		     unsigned tid, unsigned long long ts)
{
	h->type = (__u16)type;
	h->size = (__u16)size;
	h->pid = pid;
	h->tid = tid;
	h->cpu = 0;
	h->ts = ts;
}

static void open_capture(const char *path, void (*tweak)(struct gpuio_cap_header *))
{
	struct gpuio_cap_header h;
	int err;

	memset(&h, 0, sizeof(h));
	memcpy(h.magic, GPUIO_CAP_MAGIC, 8);
	h.version = GPUIO_CAP_VERSION;
	h.header_size = sizeof(h);
	h.realtime_ns = REAL_NS;
	h.monotonic_ns = BASE_NS;
	h.tracer_pid = 4242;
	h.flags = GPUIO_CAPF_LAUNCH;
	h.abi_version = GPUIO_ABI_VERSION;
	h.ncpus = 2;
	snprintf(h.hostname, sizeof(h.hostname), "genhost");
	snprintf(h.kernel, sizeof(h.kernel), "6.18.0-gen #1 SMP");
	snprintf(h.boot_id, sizeof(h.boot_id), "00000000-1111-2222-3333-444444444444");
	snprintf(h.vfs_mode, sizeof(h.vfs_mode), "tp_btf");
	snprintf(h.block_mode, sizeof(h.block_mode), "tp_btf");
	snprintf(h.proc_mode, sizeof(h.proc_mode), "tp_btf");
	snprintf(h.pagecache_mode, sizeof(h.pagecache_mode), "tp_btf");
	snprintf(h.iouring_mode, sizeof(h.iouring_mode), "tp_btf");
	snprintf(h.modes_detail, sizeof(h.modes_detail), "synthetic capture (gen_capture)");
	snprintf(h.target, sizeof(h.target), "launch gen");
	snprintf(h.cmdline, sizeof(h.cmdline), "gpuio trace -o gen.json -- gen");
	if (tweak)
		tweak(&h);
	err = gpuio_cap_writer__create(path, &h, (uid_t)-1, (gid_t)-1, &W);
	if (err)
		die("cannot create %s: %s", path, strerror(-err));
}

static void close_capture(void)
{
	int err = gpuio_cap_writer__close(W);

	W = NULL;
	if (err)
		die("close: %s", strerror(-err));
}

struct vfs_spec {
	unsigned pid, tid, call, seq, ftype, ftype2, misses, flags;
	unsigned long long ts, dur, requested, ino, ino2;
	long long ret, offset, offset2;
	unsigned dev, dev2;
	int fd, fd2;
};

static void add_vfs(const struct vfs_spec *s)
{
	struct gpuio_vfs_event e;

	memset(&e, 0, sizeof(e));
	fill_hdr(&e.hdr, GPUIO_REC_VFS, sizeof(e), s->pid, s->tid, s->ts);
	e.dur_ns = s->dur;
	e.ret = s->ret;
	e.requested = s->requested;
	e.offset = s->offset;
	e.offset2 = s->offset2;
	e.ino = s->ino;
	e.ino2 = s->ino2;
	e.dev = s->dev;
	e.dev2 = s->dev2;
	e.fd = s->fd;
	e.fd2 = s->fd2;
	e.seq = s->seq;
	e.cache_miss_pages = s->misses;
	e.flags = s->flags;
	e.call = (__u16)s->call;
	e.ftype = (__u8)s->ftype;
	e.ftype2 = (__u8)s->ftype2;
	append(&e, sizeof(e));
}

/* A pread64 of fd on (dev, ino): the common case. */
static void add_pread(unsigned pid, unsigned tid, unsigned long long ts, unsigned long long dur,
		      int fd, unsigned dev, unsigned long long ino, unsigned ftype, unsigned seq,
		      long long ret, long long off)
{
	struct vfs_spec s = {
		.pid = pid, .tid = tid, .call = GPUIO_CALL_PREAD64, .seq = seq, .ftype = ftype,
		.ts = ts, .dur = dur, .requested = 4096, .ino = ino, .ret = ret, .offset = off,
		.offset2 = -1, .dev = dev, .fd = fd, .fd2 = -1,
	};

	add_vfs(&s);
}

static void add_path(unsigned dev, unsigned long long ino, unsigned flags, const void *data,
		     size_t len)
{
	struct gpuio_path_event p;
	size_t size = (offsetof(struct gpuio_path_event, data) + len + 7) & ~(size_t)7;

	if (len > GPUIO_PATH_MAX)
		die("path too long");
	memset(&p, 0, sizeof(p));
	fill_hdr(&p.hdr, GPUIO_REC_PATH, size > sizeof(p) ? sizeof(p) : size, 1, 1, BASE_NS);
	p.ino = ino;
	p.dev = dev;
	p.len = (__u16)len;
	p.flags = (__u16)flags;
	memcpy(p.data, data, len);
	append(&p, p.hdr.size);
}

static void add_proc(unsigned kind, unsigned pid, unsigned tid, unsigned long long ts,
		     const void *comm, size_t comm_len, const void *args, size_t args_len)
{
	struct gpuio_proc_event p;
	size_t size = (offsetof(struct gpuio_proc_event, args) + args_len + 7) & ~(size_t)7;

	memset(&p, 0, sizeof(p));
	fill_hdr(&p.hdr, GPUIO_REC_PROC, size, pid, tid, ts);
	p.kind = kind;
	p.ppid = 1;
	memcpy(p.comm, comm, comm_len > 16 ? 16 : comm_len);
	p.args_len = (__u32)args_len;
	memcpy(p.args, args, args_len);
	append(&p, size);
}

struct blk_spec {
	unsigned pid, tid, seq, dev, file_dev, bytes, op, rq_flags, attr;
	int error;
	unsigned long long ts, issue, complete, sector, ino;
};

static void add_block(const struct blk_spec *s)
{
	struct gpuio_block_event b;

	memset(&b, 0, sizeof(b));
	fill_hdr(&b.hdr, GPUIO_REC_BLOCK, sizeof(b), s->pid, s->tid, s->ts);
	b.issue_ns = s->issue;
	b.complete_ns = s->complete;
	b.sector = s->sector;
	b.ino = s->ino;
	b.bytes = s->bytes;
	b.dev = s->dev;
	b.file_dev = s->file_dev;
	b.vfs_seq = s->seq;
	b.error = s->error;
	b.op = (__u8)s->op;
	b.rq_flags = (__u8)s->rq_flags;
	b.attr = (__u8)s->attr;
	append(&b, sizeof(b));
}

static void add_devname(unsigned dev, const void *name, size_t len)
{
	struct gpuio_devname_event d;

	memset(&d, 0, sizeof(d));
	fill_hdr(&d.hdr, GPUIO_REC_DEVNAME, sizeof(d), 0, 0, BASE_NS);
	d.dev = dev;
	memcpy(d.name, name, len > sizeof(d.name) ? sizeof(d.name) : len);
	append(&d, sizeof(d));
}

static void add_stats(unsigned long long ts, int final, const unsigned long long *bpf)
{
	struct gpuio_stats_event s;

	memset(&s, 0, sizeof(s));
	fill_hdr(&s.hdr, GPUIO_REC_STATS, sizeof(s), 0, 0, ts);
	if (bpf)
		memcpy(s.bpf, bpf, sizeof(s.bpf));
	s.records = gpuio_cap_writer__records(W) + 1;
	s.final = (__u32)final;
	append(&s, sizeof(s));
}

/* ---- manifest output ---- */

static bool m_first = true;

static void m_sep(void)
{
	if (!m_first)
		putchar(',');
	m_first = false;
}

static void put_hex(const void *p, size_t n)
{
	const unsigned char *c = p;

	putchar('"');
	for (size_t i = 0; i < n; i++)
		printf("%02x", c[i]);
	putchar('"');
}

/* ---- basic ---- */

static void gen_basic(void)
{
	static const char args[] = "app\0--epochs\0" "3";
	unsigned long long bpf[GPUIO_STAT_MAX] = { 0 }, n;
	struct vfs_spec open = {
		.pid = 10, .tid = 10, .call = GPUIO_CALL_OPENAT, .ftype = GPUIO_FT_REG,
		.ts = BASE_NS + 1000, .dur = 500, .ret = 3, .offset = -1, .offset2 = -1,
		.dev = DEV_DATA, .ino = 500, .fd = 3, .fd2 = -1, .seq = 1, .flags = 0,
	};
	struct blk_spec b = {
		.pid = 10, .tid = 11, .seq = 2, .dev = DEV_SDA, .file_dev = DEV_DATA,
		.bytes = 4096, .op = GPUIO_BLK_READ, .rq_flags = GPUIO_RQ_SYNC,
		.ts = BASE_NS + 21000, .issue = BASE_NS + 22000, .complete = BASE_NS + 30000,
		.sector = 2048, .ino = 500,
	};

	add_proc(GPUIO_PROC_EXEC, 10, 10, BASE_NS + 10, "app", 3, args, sizeof(args) - 1);
	add_proc(GPUIO_PROC_THREAD, 10, 11, BASE_NS + 20, "app-worker", 10, NULL, 0);
	add_devname(DEV_SDA, "sda", 3);
	add_path(DEV_DATA, 500, GPUIO_PATH_COMPONENTS, "data.bin\0ds\0srv", 15);
	add_vfs(&open);
	add_block(&b);
	add_pread(10, 11, BASE_NS + 20000, 15000, 3, DEV_DATA, 500, GPUIO_FT_REG, 2, 4096, 0);
	add_pread(10, 10, BASE_NS + 40000, 1000, 3, DEV_DATA, 500, GPUIO_FT_REG, 2, 4096, 4096);
	bpf[GPUIO_STAT_EVENTS_VFS] = 3;
	bpf[GPUIO_STAT_EVENTS_BLOCK] = 1;
	add_stats(BASE_NS + 50000, 1, bpf);
	n = gpuio_cap_writer__records(W);
	close_capture();
	printf("{\"mode\":\"basic\",\"records\":%llu,\"vfs\":3,\"block\":1,"
	       "\"path\":\"/srv/ds/data.bin\"}\n", n);
}

/* ---- hostile ---- */

static void hostile_header(struct gpuio_cap_header *h)
{
	static const char host[] = "h\"o\\s\nt\t\xff\xc3(";
	static const char cmd[] = "gpuio trace -o \"x y\".json -- sh -c 'echo \\\x01\x7f\xe2\x82'";

	memset(h->hostname, 0, sizeof(h->hostname));
	memcpy(h->hostname, host, sizeof(host) - 1);
	memset(h->cmdline, 0, sizeof(h->cmdline));
	memcpy(h->cmdline, cmd, sizeof(cmd) - 1);
	memset(h->target, 0, sizeof(h->target));
	memcpy(h->target, "launch \xed\xa0\x80\"", 11);
}

struct raw { const char *s; size_t n; };
#define RAW(lit) { lit, sizeof(lit) - 1 }

static void gen_hostile(void)
{
	static const struct raw abs[] = {
		RAW("/data/quote\"name.bin"),
		RAW("/data/back\\slash\\\\x"),
		RAW("/data/new\nline\ttab\rcr\bbs\fff"),
		RAW("/data/ctl\x01\x02\x1b\x1f\x7f"),
		RAW("/data/bad\xff\xfe"),
		RAW("/data/lone\xc3"),
		RAW("/data/lone\xc3x"),
		RAW("/data/overlong\xc0\xaf"),
		RAW("/data/surrogate\xed\xa0\x80"),
		RAW("/data/toobig\xf4\x90\x80\x80"),
		RAW("/data/f5\xf5\x80"),
		RAW("/data/cut3\xe2\x82"),
		RAW("/data/cut4\xf0\x9f\x98"),
		RAW("/data/valid \xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80 \xe2\x80\xa8"),
		RAW("/data/nul\0byte"),
		RAW("/data/</script><!--\u2028"),
	};
	/* components, leaf first, NUL separated (as the BPF path walk writes them) */
	static const char comp1[] = "leaf\xff\"\0mid\\dir\0top\n";
	static const char comp1_exp[] = "/top\n/mid\\dir/leaf\xff\"";
	static const char comp2[] = "leaf\0a\0";
	static const char comp2_exp[] = "/\xe2\x80\xa6/a/leaf";
	static const char comm[16] = "we\"ird\n\xff\\name\x01" "AB"; /* 16 bytes, no NUL */
	static const char args[] = "prog\0--name=\xc3\x28\0a\"b\\c\0\0";
	static const char tcomm[] = "t\tab\x01\x7f\xc3";
	static const char disk[] = "dis\"k\n\xff";
	unsigned long long ts = BASE_NS + 1000, bpf[GPUIO_STAT_MAX] = { 0 };
	char longp[GPUIO_PATH_MAX];
	int fd = 10;
	unsigned long long ino = 1000;
	struct blk_spec b = {
		.pid = 100, .tid = 100, .dev = DEV_SDA, .file_dev = DEV_DATA, .bytes = 512,
		.op = GPUIO_BLK_WRITE, .ts = BASE_NS + 500, .issue = BASE_NS + 600,
		.complete = BASE_NS + 900, .sector = 8, .ino = 1000,
	};

	add_proc(GPUIO_PROC_EXEC, 100, 100, BASE_NS + 1, comm, 16, args, sizeof(args) - 1);
	add_proc(GPUIO_PROC_NAME, 100, 101, BASE_NS + 2, tcomm, sizeof(tcomm) - 1, NULL, 0);
	add_devname(DEV_SDA, disk, sizeof(disk) - 1);
	add_block(&b);

	printf("{\"mode\":\"hostile\",\"paths\":[");
	for (size_t i = 0; i < sizeof(abs) / sizeof(abs[0]); i++, fd++, ino++) {
		add_path(DEV_DATA, ino, GPUIO_PATH_PROCFS, abs[i].s, abs[i].n);
		add_pread(100, 100, ts, 100, fd, DEV_DATA, ino, GPUIO_FT_REG, 0, 10, 0);
		ts += 1000;
		m_sep();
		printf("{\"fd\":%d,\"expect_hex\":", fd);
		put_hex(abs[i].s, abs[i].n);
		putchar('}');
	}
	/* component form, and one cut short at the top */
	add_path(DEV_DATA, ino, GPUIO_PATH_COMPONENTS, comp1, sizeof(comp1) - 1);
	add_pread(100, 101, ts, 100, fd, DEV_DATA, ino, GPUIO_FT_REG, 0, 10, 0);
	m_sep();
	printf("{\"fd\":%d,\"expect_hex\":", fd);
	put_hex(comp1_exp, sizeof(comp1_exp) - 1);
	putchar('}');
	ts += 1000, fd++, ino++;
	add_path(DEV_DATA, ino, GPUIO_PATH_COMPONENTS | GPUIO_PATH_TRUNCATED, comp2,
		 sizeof(comp2) - 1);
	add_pread(100, 101, ts, 100, fd, DEV_DATA, ino, GPUIO_FT_REG, 0, 10, 0);
	m_sep();
	printf("{\"fd\":%d,\"expect_hex\":", fd);
	put_hex(comp2_exp, sizeof(comp2_exp) - 1);
	putchar('}');
	ts += 1000, fd++, ino++;
	/* the longest path a record holds, hostile bytes spread through it */
	for (size_t i = 0; i < sizeof(longp); i++)
		longp[i] = i == 0 || i % 64 == 0 ? '/' : i % 97 == 0 ? '\xff' : i % 89 == 0 ? '"' :
			   i % 83 == 0 ? '\n' : (char)('a' + i % 26);
	add_path(DEV_DATA, ino, GPUIO_PATH_PROCFS, longp, sizeof(longp));
	add_pread(100, 100, ts, 100, fd, DEV_DATA, ino, GPUIO_FT_REG, 0, 10, 0);
	m_sep();
	printf("{\"fd\":%d,\"expect_hex\":", fd);
	put_hex(longp, sizeof(longp));
	putchar('}');
	ts += 1000, fd++, ino++;
	/* a later PATH record for the same file wins */
	add_path(DEV_DATA, ino, GPUIO_PATH_PROCFS, "/old/name", 9);
	add_path(DEV_DATA, ino, GPUIO_PATH_PROCFS, "/new/na\"me", 10);
	add_pread(100, 100, ts, 100, fd, DEV_DATA, ino, GPUIO_FT_REG, 0, 10, 0);
	m_sep();
	printf("{\"fd\":%d,\"expect_hex\":", fd);
	put_hex("/new/na\"me", 10);
	putchar('}');
	ts += 1000, fd++, ino++;
	/* no PATH record: unresolved regular file; pipe and socket get kind names */
	add_pread(100, 100, ts, 100, fd, (259u << 20) | 3, 777, GPUIO_FT_REG, 0, 10, 0);
	m_sep();
	printf("{\"fd\":%d,\"expect_hex\":", fd);
	put_hex("?dev=259:3,ino=777", 18);
	printf(",\"unresolved\":true}");
	ts += 1000, fd++;
	add_pread(100, 100, ts, 100, fd, (0u << 20) | 13, 4242, GPUIO_FT_FIFO, 0, 10, 0);
	m_sep();
	printf("{\"fd\":%d,\"expect_hex\":", fd);
	put_hex("pipe:[4242]", 11);
	printf(",\"ftype\":\"pipe\"}");
	ts += 1000, fd++;
	add_pread(100, 100, ts, 100, fd, (0u << 20) | 9, 4343, GPUIO_FT_SOCK, 0, 10, 0);
	m_sep();
	printf("{\"fd\":%d,\"expect_hex\":", fd);
	put_hex("socket:[4343]", 13);
	printf(",\"ftype\":\"socket\"}");
	ts += 1000, fd++;
	/* a thread with no name of its own is named after its process */
	add_pread(100, 102, ts, 100, 10, DEV_DATA, 1000, GPUIO_FT_REG, 0, 10, 0);

	bpf[GPUIO_STAT_RB_DROP_VFS] = 3;
	bpf[GPUIO_STAT_MAP_FULL_RQ] = 2;
	add_stats(ts + 1000, 1, bpf);
	close_capture();

	{
		/* process_name = comm + ": " + argv joined by spaces */
		char pname[512];
		size_t n = 0, a = sizeof(args) - 1;

		n = strnlen(comm, 16);
		memcpy(pname, comm, n);
		memcpy(pname + n, ": ", 2);
		n += 2;
		while (a && args[a - 1] == 0)
			a--;
		for (size_t i = 0; i < a; i++)
			pname[n++] = args[i] ? args[i] : ' ';
		printf("],\"process\":{\"pid\":100,\"name_hex\":");
		put_hex(pname, n);
		printf("},\"threads\":[{\"tid\":100,\"name_hex\":");
		put_hex(comm, strnlen(comm, 16));
		printf("},{\"tid\":101,\"name_hex\":");
		put_hex(tcomm, sizeof(tcomm) - 1);
		printf("},{\"tid\":102,\"name_hex\":");
		put_hex(comm, strnlen(comm, 16));
		printf("}],\"disk_hex\":");
		put_hex(disk, sizeof(disk) - 1);
		printf(",\"block_path_hex\":");
		put_hex(abs[0].s, abs[0].n);
	}
	{
		struct gpuio_cap_header h;

		memset(&h, 0, sizeof(h));
		hostile_header(&h);
		printf(",\"hostname_hex\":");
		put_hex(h.hostname, strnlen(h.hostname, sizeof(h.hostname)));
		printf(",\"cmdline_hex\":");
		put_hex(h.cmdline, strnlen(h.cmdline, sizeof(h.cmdline)));
		printf(",\"target_hex\":");
		put_hex(h.target, strnlen(h.target, sizeof(h.target)));
	}
	printf(",\"dropped\":5,\"unresolved_paths\":1}\n");
}

/* ---- flows ---- */

struct blk_plan {
	struct blk_spec b;
	const char *disk;
	bool flow;               /* the generator's verdict: an arrow must bind it */
};

static int max_overlap(const struct blk_plan *p, size_t n, const char *disk)
{
	int best = 0;

	/* at each start, count requests covering it (half-open [ts, complete)) */
	for (size_t i = 0; i < n; i++) {
		int c = 0;

		if (strcmp(p[i].disk, disk))
			continue;
		for (size_t j = 0; j < n; j++)
			if (!strcmp(p[j].disk, disk) && p[j].b.ts <= p[i].b.ts &&
			    p[i].b.ts < p[j].b.complete)
				c++;
		if (c > best)
			best = c;
	}
	return best;
}

static void gen_flows(void)
{
	const unsigned P = 200, T1 = 200, T2 = 201;
	const unsigned long long t = BASE_NS + 1000000;   /* 1 ms after the anchor */
	unsigned long long bpf[GPUIO_STAT_MAX] = { 0 };
	struct vfs_spec v[12], u[3];
	struct blk_plan bp[20];
	size_t nv = 0, nb = 0;

	memset(v, 0, sizeof(v));
	memset(bp, 0, sizeof(bp));
	add_proc(GPUIO_PROC_EXEC, P, T1, BASE_NS, "trainer", 7, "python3\0train.py", 16);
	add_proc(GPUIO_PROC_THREAD, P, T2, BASE_NS + 10, "loader", 6, NULL, 0);
	add_devname(DEV_SDA, "sda", 3);
	add_path(DEV_DATA, 10, GPUIO_PATH_PROCFS, "/data/a.bin", 11);
	add_path(DEV_DATA, 11, GPUIO_PATH_PROCFS, "/data/b.bin", 11);
	add_path(DEV_DATA, 12, GPUIO_PATH_PROCFS, "/data/out.bin", 13);

	/* VFS calls. seq numbers repeat across threads: the key is (tid, seq). */
#define VFS(...) (v[nv++] = (struct vfs_spec){ .offset = -1, .offset2 = -1, .fd2 = -1, __VA_ARGS__ })
	/* 0: tid 200 seq 1 pread, one block read */
	VFS(.pid = P, .tid = T1, .seq = 1, .call = GPUIO_CALL_PREAD64, .ts = t, .dur = 200000,
	    .ret = 4096, .requested = 4096, .offset = 0, .dev = DEV_DATA, .ino = 10, .fd = 5,
	    .ftype = GPUIO_FT_REG, .misses = 1);
	/* 1: tid 200 seq 2 read, fan-out to three overlapping block reads */
	VFS(.pid = P, .tid = T1, .seq = 2, .call = GPUIO_CALL_READ, .ts = t + 300000,
	    .dur = 500000, .ret = 12288, .requested = 16384, .offset = 4096, .dev = DEV_DATA,
	    .ino = 10, .fd = 5, .ftype = GPUIO_FT_REG, .misses = 3);
	/* 2: tid 200 seq 3 pwrite: no block request names it */
	VFS(.pid = P, .tid = T1, .seq = 3, .call = GPUIO_CALL_PWRITE64, .ts = t + 900000,
	    .dur = 50000, .ret = 100, .requested = 100, .offset = 0, .dev = DEV_DATA, .ino = 12,
	    .fd = 6, .ftype = GPUIO_FT_REG);
	/* 3: tid 201 seq 1 pread on the second disk */
	VFS(.pid = P, .tid = T2, .seq = 1, .call = GPUIO_CALL_PREAD64, .ts = t + 100000,
	    .dur = 300000, .ret = 8192, .requested = 8192, .offset = 65536, .dev = DEV_DATA,
	    .ino = 11, .fd = 7, .ftype = GPUIO_FT_REG, .misses = 2);
	/* 4: tid 201 seq 2 failed openat: no file, errno only */
	VFS(.pid = P, .tid = T2, .seq = 2, .call = GPUIO_CALL_OPENAT, .ts = t + 500000,
	    .dur = 10000, .ret = -2, .fd = -1, .flags = 0);
	/* 5: tid 201 seq 3 openat ok: O_RDONLY|O_DIRECT|O_CLOEXEC (kernel values) */
	VFS(.pid = P, .tid = T2, .seq = 3, .call = GPUIO_CALL_OPENAT, .ts = t + 600000,
	    .dur = 20000, .ret = 9, .fd = 9, .dev = DEV_DATA, .ino = 11, .ftype = GPUIO_FT_REG,
	    .flags = 040000 | 02000000);
	/* 6: tid 201 seq 4 sendfile b.bin -> out.bin */
	VFS(.pid = P, .tid = T2, .seq = 4, .call = GPUIO_CALL_SENDFILE, .ts = t + 700000,
	    .dur = 30000, .ret = 1000, .requested = 2000, .offset = 10, .dev = DEV_DATA, .ino = 11,
	    .fd = 9, .fd2 = 6, .dev2 = DEV_DATA, .ino2 = 12, .offset2 = 500,
	    .ftype = GPUIO_FT_REG, .ftype2 = GPUIO_FT_REG);
	/* 7: tid 201 seq 5 ftruncate */
	VFS(.pid = P, .tid = T2, .seq = 5, .call = GPUIO_CALL_FTRUNCATE, .ts = t + 800000,
	    .dur = 5000, .ret = 0, .requested = 1048576, .dev = DEV_DATA, .ino = 12, .fd = 6,
	    .ftype = GPUIO_FT_REG);
	/* 8: tid 201 seq 6 fsync: failed with EIO */
	VFS(.pid = P, .tid = T2, .seq = 6, .call = GPUIO_CALL_FSYNC, .ts = t + 850000,
	    .dur = 5000, .ret = -5, .dev = DEV_DATA, .ino = 12, .fd = 6, .ftype = GPUIO_FT_REG);
	/* 9: tid 201 seq 8 pread while its io_uring reads (below) are in flight */
	VFS(.pid = P, .tid = T2, .seq = 8, .call = GPUIO_CALL_PREAD64, .ts = t + 3250000,
	    .dur = 10000, .ret = 4096, .requested = 4096, .offset = 0, .dev = DEV_DATA, .ino = 10,
	    .fd = 5, .ftype = GPUIO_FT_REG);
#undef VFS
	/* io_uring reads submitted by tid 201: three in flight at once -> 3 lanes */
	for (int i = 0; i < 3; i++) {
		static const unsigned long long start[3] = { 3000000, 3100000, 3200000 };
		static const unsigned long long dur[3] = { 400000, 400000, 100000 };

		u[i] = (struct vfs_spec){ .pid = P, .tid = T2, .call = GPUIO_CALL_URING_READ,
			.ts = t + start[i], .dur = dur[i], .ret = 4096, .requested = 4096,
			.offset = 8192 * i, .offset2 = -1, .dev = DEV_DATA, .ino = 10, .fd = 5,
			.fd2 = -1, .ftype = GPUIO_FT_REG };
	}

	/* Block requests. ts = insert, issue, complete; bytes; who; (tid, seq). */
#define BLK(disk_, flow_, ...) (bp[nb++] = (struct blk_plan){ .disk = disk_, .flow = flow_, \
	.b = { .pid = P, .file_dev = DEV_DATA, .bytes = 4096, .op = GPUIO_BLK_READ, __VA_ARGS__ } })
	/* for VFS 0 */
	BLK("sda", true, .tid = T1, .seq = 1, .dev = DEV_SDA, .ts = t + 10000, .issue = t + 20000,
	    .complete = t + 150000, .sector = 100, .ino = 10, .rq_flags = GPUIO_RQ_SYNC);
	/* for VFS 1: three at once -> three lanes */
	BLK("sda", true, .tid = T1, .seq = 2, .dev = DEV_SDA, .ts = t + 310000, .issue = t + 320000,
	    .complete = t + 700000, .sector = 200, .ino = 10);
	BLK("sda", true, .tid = T1, .seq = 2, .dev = DEV_SDA, .ts = t + 311000, .issue = t + 330000,
	    .complete = t + 720000, .sector = 208, .ino = 10, .rq_flags = GPUIO_RQ_RAHEAD);
	BLK("sda", true, .tid = T1, .seq = 2, .dev = DEV_SDA, .ts = t + 312000, .issue = t + 340000,
	    .complete = t + 760000, .sector = 216, .ino = 10, .bytes = 8192);
	/* for VFS 3, on the disk without a DEVNAME record */
	BLK("259:0", true, .tid = T2, .seq = 1, .dev = DEV_NVME, .ts = t + 110000,
	    .issue = t + 110000, .complete = t + 390000, .sector = 300, .ino = 11, .bytes = 8192,
	    .attr = GPUIO_BA_NO_INSERT | GPUIO_BA_SUBMITTER);
	/* dangling: tid 200 never made call 99 */
	BLK("sda", false, .tid = T1, .seq = 99, .dev = DEV_SDA, .ts = t + 1000000,
	    .issue = t + 1010000, .complete = t + 1100000, .sector = 400, .ino = 10);
	/* dangling: thread 201 made no call 7 (the key is (tid, seq), not seq alone) */
	BLK("sda", false, .tid = T2, .seq = 7, .dev = DEV_SDA, .ts = t + 1200000,
	    .issue = t + 1210000, .complete = t + 1300000, .sector = 500, .ino = 12,
	    .op = GPUIO_BLK_WRITE, .rq_flags = GPUIO_RQ_SYNC | GPUIO_RQ_FUA);
	/* writeback of out.bin for pid 200: no call, no flow */
	BLK("sda", false, .tid = 0, .seq = 0, .dev = DEV_SDA, .ts = t + 1400000,
	    .issue = t + 1400500, .complete = t + 1600000, .sector = 600, .ino = 12,
	    .op = GPUIO_BLK_WRITE, .attr = GPUIO_BA_WRITEBACK, .bytes = 65536);
	/* flush and discard, no file, one failed */
	BLK("sda", false, .pid = 0, .tid = 0, .dev = DEV_SDA, .ts = t + 1700000,
	    .issue = t + 1700000, .complete = t + 1750000, .sector = 0, .op = GPUIO_BLK_FLUSH,
	    .bytes = 0, .rq_flags = GPUIO_RQ_PREFLUSH);
	BLK("sda", false, .pid = 0, .tid = 0, .dev = DEV_SDA, .ts = t + 1800000,
	    .issue = t + 1800000, .complete = t + 1900000, .sector = 700, .op = GPUIO_BLK_DISCARD,
	    .bytes = 1 << 20, .error = 10);
	/* inserted before the trace's anchor: a negative ts (-1.500 us) */
	BLK("259:0", false, .tid = 0, .seq = 0, .dev = DEV_NVME, .ts = BASE_NS - 1500,
	    .issue = BASE_NS - 1000, .complete = BASE_NS + 2500, .sector = 900, .bytes = 512);
	/* a burst: 6 writes, each overlapping the next two -> 3 lanes on sda */
	for (int i = 0; i < 6; i++)
		BLK("sda", false, .pid = 0, .tid = 0, .dev = DEV_SDA,
		    .ts = t + 2000000 + i * 100000ull, .issue = t + 2000000 + i * 100000ull + 1000,
		    .complete = t + 2000000 + i * 100000ull + 250000, .sector = 1000 + 8 * i,
		    .op = GPUIO_BLK_WRITE, .bytes = 131072);
#undef BLK

	/* capture order: some block records before the call they name (completion
	 * order in the ring buffer), others after */
	add_block(&bp[4].b);
	for (size_t i = 0; i < nv; i++) {
		add_vfs(&v[i]);
		if (i == 0)
			add_block(&bp[0].b);
	}
	for (size_t i = 1; i < nb; i++)
		if (i != 4)
			add_block(&bp[i].b);
	/* io_uring completions, in completion order */
	add_vfs(&u[2]);
	add_vfs(&u[0]);
	add_vfs(&u[1]);
	bpf[GPUIO_STAT_EVENTS_VFS] = nv;
	bpf[GPUIO_STAT_EVENTS_BLOCK] = nb;
	add_stats(t + 5000000, 1, bpf);
	close_capture();

	/* the manifest */
	printf("{\"mode\":\"flows\",\"monotonic_ns\":%llu,\"pid\":%u,\"vfs\":[", BASE_NS, P);
	for (size_t i = 0; i < nv; i++) {
		bool referenced = false;

		for (size_t k = 0; k < nb; k++)
			if (bp[k].flow && bp[k].b.tid == v[i].tid && bp[k].b.seq == v[i].seq)
				referenced = true;
		printf("%s{\"tid\":%u,\"seq\":%u,\"ts_ns\":%llu,\"dur_ns\":%llu,\"call\":%u,"
		       "\"flow\":%s}", i ? "," : "", v[i].tid, v[i].seq, v[i].ts, v[i].dur, v[i].call,
		       referenced ? "true" : "false");
	}
	printf("],\"block\":[");
	for (size_t i = 0; i < nb; i++) {
		const struct blk_spec *b = &bp[i].b;

		printf("%s{\"disk\":\"%s\",\"sector\":%llu,\"ts_ns\":%llu,\"issue_ns\":%llu,"
		       "\"complete_ns\":%llu,\"bytes\":%u,\"op\":%u,\"tid\":%u,\"seq\":%u,"
		       "\"flow\":%s,\"bind_id\":\"0x%llx\"}",
		       i ? "," : "", bp[i].disk, b->sector, b->ts, b->issue, b->complete, b->bytes,
		       b->op, b->tid, b->seq, bp[i].flow ? "true" : "false",
		       ((unsigned long long)b->tid << 32) | b->seq);
	}
	printf("],\"uring\":[");
	for (size_t i = 0; i < 3; i++)
		printf("%s{\"tid\":%u,\"ts_ns\":%llu,\"dur_ns\":%llu,\"offset\":%lld}", i ? "," : "",
		       u[i].tid, u[i].ts, u[i].dur, u[i].offset);
	printf("],\"uring_lanes\":3,\"lanes\":{\"sda\":%d,\"259:0\":%d}}\n",
	       max_overlap(bp, nb, "sda"), max_overlap(bp, nb, "259:0"));
}

/* ---- truncate / corrupt ---- */

static unsigned long long file_size(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0)
		die("stat %s: %s", path, strerror(errno));
	return (unsigned long long)st.st_size;
}

static void gen_truncate(void)
{
	unsigned long long bpf[GPUIO_STAT_MAX] = { 0 };
	unsigned long long size, cut_at;
	const size_t vsz = sizeof(struct gpuio_vfs_event), keep = 40;
	int nwhole_vfs = 10;

	add_proc(GPUIO_PROC_EXEC, 10, 10, BASE_NS + 10, "app", 3, "app", 3);
	add_path(DEV_DATA, 500, GPUIO_PATH_PROCFS, "/srv/data.bin", 13);
	for (int i = 0; i < nwhole_vfs; i++)
		add_pread(10, 10, BASE_NS + 1000 + i * 1000ull, 500, 3, DEV_DATA, 500,
			  GPUIO_FT_REG, i + 1, 4096, i * 4096ll);
	/* a periodic snapshot, not the final one: the tracer was killed later */
	bpf[GPUIO_STAT_RB_DROP_VFS] = 7;
	add_stats(BASE_NS + 20000, 0, bpf);
	add_pread(10, 10, BASE_NS + 30000, 500, 3, DEV_DATA, 500, GPUIO_FT_REG, 99, 4096, 0);
	close_capture();
	size = file_size(out_path);
	cut_at = size - vsz + keep;
	if (truncate(out_path, (off_t)cut_at) < 0)
		die("truncate: %s", strerror(errno));
	printf("{\"mode\":\"truncate\",\"whole_records\":%d,\"vfs_whole\":%d,\"cut_offset\":%llu,"
	       "\"partial_bytes\":%zu,\"dropped\":7}\n", nwhole_vfs + 3, nwhole_vfs,
	       size - vsz, keep);
}

static void gen_corrupt(void)
{
	struct gpuio_vfs_event bad;
	unsigned long long off;

	add_proc(GPUIO_PROC_EXEC, 10, 10, BASE_NS + 10, "app", 3, "app", 3);
	for (int i = 0; i < 5; i++)
		add_pread(10, 10, BASE_NS + 1000 + i * 1000ull, 500, 3, DEV_DATA, 500,
			  GPUIO_FT_REG, i + 1, 4096, 0);
	off = gpuio_cap_writer__bytes(W);
	memset(&bad, 0, sizeof(bad));
	fill_hdr(&bad.hdr, GPUIO_REC_VFS, 3, 10, 10, BASE_NS + 9000);   /* size 3: impossible */
	append(&bad, sizeof(bad));
	for (int i = 0; i < 5; i++)
		add_pread(10, 10, BASE_NS + 10000 + i * 1000ull, 500, 3, DEV_DATA, 500,
			  GPUIO_FT_REG, i + 10, 4096, 0);
	add_stats(BASE_NS + 20000, 1, NULL);
	close_capture();
	printf("{\"mode\":\"corrupt\",\"corrupt_offset\":%llu,\"records_before\":6}\n", off);
}

/* ---- big ---- */

static void gen_big(unsigned long long n, unsigned long long every)
{
	unsigned long long bpf[GPUIO_STAT_MAX] = { 0 }, ts = BASE_NS + 1000, nblk = 0;
	unsigned seqs[4] = { 0 };
	char path[64];

	add_proc(GPUIO_PROC_EXEC, 300, 300, BASE_NS, "bigjob", 6, "bigjob\0--n", 10);
	for (unsigned t = 1; t < 4; t++)
		add_proc(GPUIO_PROC_THREAD, 300, 300 + t, BASE_NS, "worker", 6, NULL, 0);
	add_devname(DEV_SDA, "sda", 3);
	for (unsigned f = 0; f < 64; f++) {
		int len = snprintf(path, sizeof(path), "/data/shard-%05u.bin", f);
		add_path(DEV_DATA, 10000 + f, GPUIO_PATH_PROCFS, path, (size_t)len);
	}
	for (unsigned long long i = 0; i < n; i++) {
		unsigned t = (unsigned)(i & 3), f = (unsigned)((i * 7) & 63);
		unsigned seq = ++seqs[t];

		add_pread(300, 300 + t, ts, 2000, 3 + (int)f, DEV_DATA, 10000 + f, GPUIO_FT_REG,
			  seq, 4096, (long long)((i >> 2) * 4096));
		if (every && i % every == 0) {
			struct blk_spec b = {
				.pid = 300, .tid = 300 + t, .seq = seq, .dev = DEV_SDA,
				.file_dev = DEV_DATA, .bytes = 4096, .op = GPUIO_BLK_READ,
				.ts = ts + 100, .issue = ts + 200, .complete = ts + 1500,
				.sector = i * 8, .ino = 10000 + f,
			};
			add_block(&b);
			nblk++;
		}
		ts += 2500;
	}
	bpf[GPUIO_STAT_EVENTS_VFS] = n;
	bpf[GPUIO_STAT_EVENTS_BLOCK] = nblk;
	add_stats(ts, 1, bpf);
	close_capture();
	printf("{\"mode\":\"big\",\"vfs\":%llu,\"block\":%llu,\"read_bytes\":%llu}\n", n, nblk,
	       n * 4096);
}

/* ---- shift ---- */

static int gen_shift(const char *in, long long mono, long long real)
{
	struct gpuio_cap_reader *r;
	struct gpuio_cap_header h;
	const struct gpuio_hdr *rec;
	unsigned long long n = 0;
	char err[320];
	int rc;

	if (gpuio_cap_reader__open(in, &r, err, sizeof(err)))
		die("%s", err);
	h = *gpuio_cap_reader__header(r);
	h.header_size = sizeof(h);
	h.monotonic_ns += (unsigned long long)mono;
	h.realtime_ns += (unsigned long long)real;
	if (gpuio_cap_writer__create(out_path, &h, (uid_t)-1, (gid_t)-1, &W))
		die("cannot create %s", out_path);
	while ((rc = gpuio_cap_reader__next(r, &rec)) > 0) {
		union { struct gpuio_hdr h; unsigned char b[GPUIO_REC_SIZE_MAX]; } c;

		memcpy(c.b, rec, rec->size);
		if (c.h.ts)
			c.h.ts += (unsigned long long)mono;
		if (c.h.type == GPUIO_REC_BLOCK) {
			struct gpuio_block_event *b = (void *)c.b;

			b->issue_ns += (unsigned long long)mono;
			b->complete_ns += (unsigned long long)mono;
		}
		append(c.b, c.h.size);
		n++;
	}
	if (rc < 0)
		die("%s: %s", in, gpuio_cap_reader__error(r));
	gpuio_cap_reader__close(r);
	close_capture();
	printf("{\"mode\":\"shift\",\"records\":%llu,\"mono_delta\":%lld,\"real_delta\":%lld}\n",
	       n, mono, real);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode;

	if (argc < 3) {
		fprintf(stderr, "usage: gen_capture basic|hostile|flows|truncate|corrupt|big OUT.gpuio [N]\n"
				"       gen_capture shift OUT.gpuio IN.gpuio MONO_NS REAL_NS\n");
		return 2;
	}
	mode = argv[1];
	out_path = argv[2];
	if (!strcmp(mode, "shift")) {
		if (argc != 6) {
			fprintf(stderr, "usage: gen_capture shift OUT.gpuio IN.gpuio MONO_NS REAL_NS\n");
			return 2;
		}
		return gen_shift(argv[3], strtoll(argv[4], NULL, 0), strtoll(argv[5], NULL, 0));
	}
	if (!strcmp(mode, "big") && argc < 4) {
		fprintf(stderr, "gen_capture: big needs N\n");
		return 2;
	}
	open_capture(out_path, !strcmp(mode, "hostile") ? hostile_header : NULL);
	if (!strcmp(mode, "basic"))
		gen_basic();
	else if (!strcmp(mode, "hostile"))
		gen_hostile();
	else if (!strcmp(mode, "flows"))
		gen_flows();
	else if (!strcmp(mode, "truncate"))
		gen_truncate();
	else if (!strcmp(mode, "corrupt"))
		gen_corrupt();
	else if (!strcmp(mode, "big"))
		gen_big(strtoull(argv[3], NULL, 0), argc > 4 ? strtoull(argv[4], NULL, 0) : 16);
	else {
		unlink(out_path);
		fprintf(stderr, "gen_capture: unknown mode '%s'\n", mode);
		return 2;
	}
	return 0;
}
