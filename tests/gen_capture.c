// SPDX-License-Identifier: MIT
/*
 * gen_capture — synthetic captures with known content, written with the real
 * capture writer (user/capture/capture.c), for the exporter's tests, the fuzzer's
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
 *   gpu       GPU records of every type (7..15): kernels, copies of each kind and
 *             memsets on 2 GPUs x 2 streams (overlapping kernels on one stream),
 *             runtime + driver API calls with correlation ids, uprobe records
 *             duplicating CUPTI calls, a launch only uprobes saw (named by a
 *             GPU_SYM), NVTX ranges (one that does not nest), syncs with and
 *             without a thread, CUPTI overhead, collector status with drops
 *             and an UNAVAILABLE collector; records out of time order. The
 *             manifest lists every GPU-side slice the export must show.
 *   gpuwait [nosched|stacks|collective]
 *             a trainer's GPU idle gaps while its launching thread waited
 *             for data, ran, was runnable, read a file, synced (and no
 *             state), NVTX step ranges: the manifest has each gap's split;
 *             stacks: its Python stacks at two sleeps (gap_sites: where the
 *             launcher was in each gap)
 *   states [N] one thread's N cycles of 1..3 ns long thread states at every ns
 *             residue of a µs (the JSON export's rounding at its finest)
 *   faults    page faults on file mappings: page_fault records of every
 *             kind (major and slept, slept only, readahead without a
 *             sleep, a write fault, one cut at the end) on two files, the
 *             block requests of two of them, FAULT_COUNT records of two
 *             processes updated over time (cumulative), and of the
 *             program's own executable (GPUIO_FC_EXEC): the manifest has
 *             every slice's args and each file's counts, bytes and role
 *   big N [K] N VFS calls (4 threads, 64 files) and a block request per K
 *             calls (default 16; 0: none)
 *   gpubig N  N kernel launches (API call + kernel by correlation, 2 GPUs x 4
 *             streams, kernels in late, reversed buffers) and N VFS reads
 *   scale N   a whole-node capture (-a) of about N records shaped like a
 *             real one: a PyTorch-like job (loop + 6 workers), 2 fio jobs, 12
 *             daemons (71 threads) on 16 simulated CPUs; a third of the
 *             records switches, wake-ups and WAIT records (states per thread
 *             never overlap), VFS calls on ~3,000 files, block requests with
 *             flows, sleeping page faults, GPU kernels with idle gaps; a
 *             wake-up in 500 written after the next scheduler record (as
 *             the ring buffer does): for `make bench` (tests/bench/scale.sh)
 *   sockets   socket calls of every kind with their SOCK_PEER records: TCP
 *             over IPv4 (3 requests), IPv6, unix by path, abstract, a
 *             socketpair, an unconnected UDP socket, a unix path with
 *             hostile bytes, recvmmsg with 3 messages, an error, and a
 *             socket without a peer record (stays a file): the manifest
 *             lists every socket slice and each peer's totals
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
#include "capture/capture.h"
#include "lib/units.h"

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

static void add_proc_pp(unsigned kind, unsigned pid, unsigned tid, unsigned long long ts,
			const void *comm, size_t comm_len, const void *args, size_t args_len,
			unsigned ppid)
{
	struct gpuio_proc_event p;
	size_t size = (offsetof(struct gpuio_proc_event, args) + args_len + 7) & ~(size_t)7;

	memset(&p, 0, sizeof(p));
	fill_hdr(&p.hdr, GPUIO_REC_PROC, size, pid, tid, ts);
	p.kind = kind;
	p.ppid = ppid;
	memcpy(p.comm, comm, comm_len > 16 ? 16 : comm_len);
	p.args_len = (__u32)args_len;
	memcpy(p.args, args, args_len);
	append(&p, size);
}

static void add_proc(unsigned kind, unsigned pid, unsigned tid, unsigned long long ts,
		     const void *comm, size_t comm_len, const void *args, size_t args_len)
{
	add_proc_pp(kind, pid, tid, ts, comm, comm_len, args, args_len, 1);
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
	if (bpf) {
		__u64 all[GPUIO_STAT_MAX];

		for (int i = 0; i < GPUIO_STAT_MAX; i++)
			all[i] = bpf[i];
		gpuio_stats__set_bpf(&s, all);
	}
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

/* ---- states ---- */

/* switch: pid/tid = prev, opid/otid = next; wake: pid/tid = woken, opid/otid = waker */
static void add_sched_ev(unsigned kind, unsigned flags, unsigned cpu, unsigned pid, unsigned tid,
			 unsigned long long ts, unsigned opid, unsigned otid, unsigned prev_state)
{
	struct gpuio_sched_event e;

	memset(&e, 0, sizeof(e));
	fill_hdr(&e.hdr, GPUIO_REC_SCHED, sizeof(e), pid, tid, ts);
	e.hdr.cpu = cpu;
	e.kind = kind;
	e.flags = flags;
	e.other_pid = opid;
	e.other_tid = otid;
	e.prev_state = prev_state;
	e.target_cpu = cpu;
	e.prio = 120;
	memcpy(e.comm, "stateful", 8);
	append(&e, sizeof(e));
}

static void m_state(const char *name, unsigned tid, unsigned long long ts, unsigned long long end)
{
	m_sep();
	printf("[\"%s\",%u,%llu,%llu]", name, tid, ts - BASE_NS, end - BASE_NS);
}

/*
 * Thread 10 cycles Sleeping -> Runnable -> Running -> Runnable (Preempted)
 * -> Running with states 1, 2 and 3 ns long, starting at every ns residue
 * of a µs: a JSON export writes µs with 3 decimals that the importer
 * truncates to ns, so this is where neighbours would overlap. Then thread
 * 11 runs on CPU 1 and shows up running on CPU 0 (its switch-out from CPU 1
 * was missed) before thread 12 leaves CPU 1: the chain's bridge names 11 as
 * the one leaving CPU 1, long after 11 moved. Thread 13 stops (T) and
 * parks (P): Sleeping in the JSON. Threads 14 and 15 leave their CPU to
 * sleep in the very nanosecond another CPU records their wake-up (a busy
 * DataLoader does that a few times a second): the switch comes first, as
 * in Perfetto, whatever the capture's order and the CPUs: both are
 * Runnable at once (14: switch on CPU 0, wake-up on CPU 1, the wake-up
 * captured first; 15: switch on CPU 3, wake-up on CPU 2). The manifest lists every
 * closed state (name, tid, start, end; ns from BASE_NS).
 */
static void gen_states(size_t cycles)
{
	const unsigned P = 10, SW = GPUIO_SCHED_SWITCH, PT = GPUIO_SF_PREV_TRACED,
		       NT = GPUIO_SF_NEXT_TRACED;
	unsigned long long t = BASE_NS + 1000, n;
	size_t recs = 0;

	add_proc(GPUIO_PROC_EXEC, P, P, BASE_NS + 10, "stateful", 8, "stateful", 8);
	printf("{\"mode\":\"states\",\"states\":[");
	for (size_t i = 0; i < cycles; i++) {
		unsigned a = 1 + i % 3, b = 1 + (i / 3) % 3, c = 1 + (i / 9) % 3;
		unsigned long long w = t + a, in = w + b, pre = in + c, in2 = pre + a;
		unsigned long long next = in2 + 1 + (i % 7) * 1001;

		add_sched_ev(SW, PT, 0, P, P, t, 0, 0, 1);
		add_sched_ev(GPUIO_SCHED_WAKE, 0, 0, P, P, w, 0, 0, 0);
		add_sched_ev(SW, NT, 0, P, 0, in, P, P, 0);
		add_sched_ev(SW, PT | GPUIO_SF_PREEMPT, 0, P, P, pre, 0, 0, 0);
		add_sched_ev(SW, NT, 0, P, 0, in2, P, P, 0);
		m_state("Sleeping", P, t, w);
		m_state("Runnable", P, w, in);
		m_state("Running", P, in, pre);
		m_state("Runnable (Preempted)", P, pre, in2);
		m_state("Running", P, in2, next);
		recs += 5;
		if (i + 1 == cycles) {  /* and to sleep: CPU 0 is free for the next scene */
			add_sched_ev(SW, PT, 0, P, P, next, 0, 0, 1);
			recs++;
		}
		t = next;
	}
	/* the missed switch-out */
	t += 10000;
	add_proc(GPUIO_PROC_THREAD, P, 11, t, "mover", 5, NULL, 0);
	add_proc(GPUIO_PROC_THREAD, P, 12, t, "stayer", 6, NULL, 0);
	add_sched_ev(GPUIO_SCHED_WAKE, 0, 1, P, 12, t + 10, 0, 0, 0);
	add_sched_ev(SW, NT, 1, P, 0, t + 20, P, 12, 0);           /* 12 on CPU 1 */
	add_sched_ev(SW, PT | GPUIO_SF_PREEMPT, 1, P, 12, t + 1000, 0, 0, 0); /* 12 preempted */
	add_sched_ev(SW, NT, 1, P, 0, t + 2000, P, 11, 0);         /* 11 on CPU 1 */
	add_sched_ev(SW, NT, 0, P, 0, t + 3000, P, 11, 0);         /* 11 on CPU 0 (off CPU 1 unseen) */
	add_sched_ev(SW, PT, 1, P, 12, t + 5000, 0, 0, 1);         /* 12 leaves CPU 1: a break */
	add_sched_ev(SW, PT, 0, P, 11, t + 6000, 0, 0, 1);         /* 11 off CPU 0 */
	recs += 7;
	/* thread 13 on CPU 2: stopped (T), then parked (P): both drawn as Sleeping */
	add_proc(GPUIO_PROC_THREAD, P, 13, t, "stopper", 7, NULL, 0);
	add_sched_ev(SW, NT, 2, P, 0, t + 100, P, 13, 0);
	add_sched_ev(SW, PT, 2, P, 13, t + 200, 0, 0, 0x4);      /* __TASK_STOPPED */
	add_sched_ev(GPUIO_SCHED_WAKE, 0, 2, P, 13, t + 300, 0, 0, 0);
	add_sched_ev(SW, NT, 2, P, 0, t + 400, P, 13, 0);
	add_sched_ev(SW, PT, 2, P, 13, t + 500, 0, 0, 0x40);     /* TASK_PARKED */
	add_sched_ev(GPUIO_SCHED_WAKE, 0, 2, P, 13, t + 600, 0, 0, 0);
	add_sched_ev(SW, NT, 2, P, 0, t + 700, P, 13, 0);
	add_sched_ev(SW, PT, 2, P, 13, t + 800, 0, 0, 1);
	recs += 8;
	m_state("Running", 13, t + 100, t + 200);
	m_state("Sleeping", 13, t + 200, t + 300);
	m_state("Runnable", 13, t + 300, t + 400);
	m_state("Running", 13, t + 400, t + 500);
	m_state("Sleeping", 13, t + 500, t + 600);
	m_state("Runnable", 13, t + 600, t + 700);
	m_state("Running", 13, t + 700, t + 800);
	m_state("Runnable", 12, t + 10, t + 20);
	m_state("Running", 12, t + 20, t + 1000);
	/* 11 left CPU 1 unseen: assumed 1 ns before it came on CPU 0; 12 came
	 * on CPU 1 unseen just after that (model/sched_tab.h, sched_chain) */
	m_state("Runnable (Preempted)", 12, t + 1000, t + 3000);
	m_state("Running", 12, t + 3000, t + 5000);
	m_state("Running", 11, t + 2000, t + 2999);
	m_state("Runnable", 11, t + 2999, t + 3000);
	m_state("Running", 11, t + 3000, t + 6000);
	/* a wake-up and a switch-out in one nanosecond, on two CPUs */
	add_proc(GPUIO_PROC_THREAD, P, 14, t, "tie-low", 7, NULL, 0);
	add_proc(GPUIO_PROC_THREAD, P, 15, t, "tie-high", 8, NULL, 0);
	add_sched_ev(SW, NT, 0, P, 0, t + 7000, P, 14, 0);         /* 14 on CPU 0 */
	add_sched_ev(GPUIO_SCHED_WAKE, 0, 1, P, 14, t + 8000, 0, 0, 0);   /* captured first */
	add_sched_ev(SW, PT, 0, P, 14, t + 8000, 0, 0, 1);         /* 14 to sleep, CPU 0 */
	add_sched_ev(SW, NT, 0, P, 0, t + 8500, P, 14, 0);
	add_sched_ev(SW, PT, 0, P, 14, t + 9000, 0, 0, 1);
	add_sched_ev(SW, NT, 3, P, 0, t + 10000, P, 15, 0);        /* 15 on CPU 3 */
	add_sched_ev(SW, PT, 3, P, 15, t + 11000, 0, 0, 1);        /* captured first */
	add_sched_ev(GPUIO_SCHED_WAKE, 0, 2, P, 15, t + 11000, 0, 0, 0);  /* on CPU 2 */
	add_sched_ev(SW, NT, 3, P, 0, t + 11500, P, 15, 0);
	add_sched_ev(SW, PT, 3, P, 15, t + 12000, 0, 0, 1);
	recs += 10;
	m_state("Running", 14, t + 7000, t + 8000);
	m_state("Runnable", 14, t + 8000, t + 8500);
	m_state("Running", 14, t + 8500, t + 9000);
	m_state("Running", 15, t + 10000, t + 11000);
	m_state("Runnable", 15, t + 11000, t + 11500);
	m_state("Running", 15, t + 11500, t + 12000);
	n = gpuio_cap_writer__records(W);
	close_capture();
	printf("],\"records\":%llu,\"sched\":%zu,\"cycles\":%zu}\n", n, recs, cycles);
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

/* ---- gpu ---- */

/* What the export must show for one GPU-side slice (the manifest). */
static void m_slice(const char *cat, const char *name, const char *track, unsigned long long ts,
		    unsigned long long end, const char *flow, unsigned nflow)
{
	m_sep();
	printf("{\"cat\":\"%s\",\"name_hex\":", cat);
	put_hex(name, strlen(name));
	printf(",\"track\":\"%s\",\"ts_ns\":%llu,\"dur_ns\":%llu,\"flow\":\"%s\",\"nflow\":%u}",
	       track, ts - BASE_NS, end - ts, flow, nflow);
}

static void add_kernel(unsigned pid, unsigned long long ts, unsigned long long end, unsigned dev,
		       unsigned long long stream, unsigned corr, const char *name)
{
	struct gpuio_gpu_kernel k;
	size_t n = strlen(name), size = (offsetof(struct gpuio_gpu_kernel, name) + n + 7) & ~(size_t)7;

	memset(&k, 0, sizeof(k));
	fill_hdr(&k.hdr, GPUIO_REC_GPU_KERNEL, size, pid, 0, ts);
	k.end_ns = end;
	k.context = 0xc0 + dev;
	k.stream = stream;
	k.correlation = corr;
	k.device = dev;
	k.grid[0] = 128, k.grid[1] = 2, k.grid[2] = 1;
	k.block[0] = 256, k.block[1] = 1, k.block[2] = 1;
	k.static_smem = 1024;
	k.dynamic_smem = 4096;
	k.registers = 32;
	k.name_len = (__u16)n;
	memcpy(k.name, name, n);
	append(&k, size);
}

static void add_memcpy(unsigned pid, unsigned long long ts, unsigned long long end, unsigned dev,
		       unsigned dst, unsigned long long stream, unsigned corr, unsigned kind,
		       unsigned long long bytes, unsigned src_kind, unsigned dst_kind, unsigned flags)
{
	struct gpuio_gpu_memcpy c;

	memset(&c, 0, sizeof(c));
	fill_hdr(&c.hdr, GPUIO_REC_GPU_MEMCPY, sizeof(c), pid, 0, ts);
	c.end_ns = end;
	c.bytes = bytes;
	c.context = 0xc0 + dev;
	c.stream = stream;
	c.correlation = corr;
	c.device = dev;
	c.dst_device = dst;
	c.kind = (__u8)kind;
	c.src_kind = (__u8)src_kind;
	c.dst_kind = (__u8)dst_kind;
	c.flags = (__u8)flags;
	append(&c, sizeof(c));
}

static void add_memset(unsigned pid, unsigned long long ts, unsigned long long end, unsigned dev,
		       unsigned long long stream, unsigned corr, unsigned long long bytes,
		       unsigned value)
{
	struct gpuio_gpu_memset s;

	memset(&s, 0, sizeof(s));
	fill_hdr(&s.hdr, GPUIO_REC_GPU_MEMSET, sizeof(s), pid, 0, ts);
	s.end_ns = end;
	s.bytes = bytes;
	s.context = 0xc0 + dev;
	s.stream = stream;
	s.correlation = corr;
	s.device = dev;
	s.value = value;
	s.mem_kind = 3;
	s.flags = GPUIO_GM_ASYNC;
	append(&s, sizeof(s));
}

static bool is_uprobe_src(unsigned s)
{
	return s == GPUIO_API_UPROBE_RT || s == GPUIO_API_UPROBE_DRV;
}

struct api_spec {
	unsigned pid, tid, corr, source, kind, mk;
	unsigned long long ts, end, bytes, stream, func;
	long long ret;
	const char *name;
};

static void add_api(const struct api_spec *a)
{
	struct gpuio_cuda_api c;

	memset(&c, 0, sizeof(c));
	fill_hdr(&c.hdr, GPUIO_REC_CUDA_API, sizeof(c), a->pid, a->tid, a->ts);
	c.end_ns = a->end;
	c.ret = a->ret;
	c.bytes = a->bytes;
	c.stream = a->stream;
	c.func = a->func;
	c.correlation = a->corr;
	c.cbid = is_uprobe_src(a->source) ? 0 : 200 + a->kind;
	c.source = (__u8)a->source;
	c.kind = (__u8)a->kind;
	c.memcpy_kind = (__u8)a->mk;
	snprintf(c.name, sizeof(c.name), "%s", a->name);
	append(&c, sizeof(c));
}

static void add_gsync(unsigned pid, unsigned tid, unsigned long long ts, unsigned long long end,
		      unsigned dev, unsigned long long stream, unsigned corr, unsigned type)
{
	struct gpuio_gpu_sync s;

	memset(&s, 0, sizeof(s));
	fill_hdr(&s.hdr, GPUIO_REC_GPU_SYNC, sizeof(s), pid, tid, ts);
	s.end_ns = end;
	s.context = 0xc0 + dev;
	s.stream = stream;
	s.correlation = corr;
	s.type = type;
	append(&s, sizeof(s));
}

static void add_nvtx(unsigned pid, unsigned tid, unsigned long long ts, unsigned long long end,
		     unsigned depth, const char *name)
{
	struct gpuio_nvtx_range r;
	size_t n = strlen(name), size = (offsetof(struct gpuio_nvtx_range, name) + n + 7) & ~(size_t)7;

	memset(&r, 0, sizeof(r));
	fill_hdr(&r.hdr, GPUIO_REC_NVTX, size, pid, tid, ts);
	r.end_ns = end;
	r.depth = depth;
	r.name_len = (__u16)n;
	memcpy(r.name, name, n);
	append(&r, size);
}

static void add_overhead(unsigned pid, unsigned tid, unsigned long long ts, unsigned long long end,
			 unsigned kind, unsigned object_kind, unsigned long long object_id)
{
	struct gpuio_gpu_overhead o;

	memset(&o, 0, sizeof(o));
	fill_hdr(&o.hdr, GPUIO_REC_GPU_OVERHEAD, sizeof(o), pid, tid, ts);
	o.end_ns = end;
	o.kind = kind;
	o.object_kind = object_kind;
	o.object_id = object_id;
	append(&o, sizeof(o));
}

static void add_sym(unsigned pid, unsigned long long addr, const char *name)
{
	struct gpuio_gpu_sym y;
	size_t n = strlen(name), size = (offsetof(struct gpuio_gpu_sym, name) + n + 7) & ~(size_t)7;

	memset(&y, 0, sizeof(y));
	fill_hdr(&y.hdr, GPUIO_REC_GPU_SYM, size, pid, pid, BASE_NS);
	y.addr = addr;
	y.name_len = (__u16)n;
	memcpy(y.name, name, n);
	append(&y, size);
}

static void add_ginfo(unsigned pid, unsigned long long ts, unsigned state, unsigned long long dropped,
		      unsigned long long records, int cupti_error, const char *reason)
{
	struct gpuio_gpu_info i;

	memset(&i, 0, sizeof(i));
	fill_hdr(&i.hdr, GPUIO_REC_GPU_INFO, sizeof(i), pid, 0, ts);
	i.uncertainty_ns = 500;
	i.cupti_dropped = dropped;
	i.records = records;
	i.state = state;
	i.clock = state == GPUIO_GPU_UNAVAILABLE ? GPUIO_GPU_CLOCK_NONE : GPUIO_GPU_CLOCK_MONOTONIC_CB;
	i.how = GPUIO_GPU_HOW_LAUNCH;
	i.cupti_version = 130000;
	i.cupti_error = cupti_error;
	snprintf(i.reason, sizeof(i.reason), "%s", reason);
	append(&i, sizeof(i));
}

/* ---- Python stacks (3.10 line tables: (2, line - first) puts lasti 0 on line) ---- */

static void add_py_proc(unsigned pid, unsigned long long ts)
{
	struct gpuio_py_proc r;

	memset(&r, 0, sizeof(r));
	fill_hdr(&r.hdr, GPUIO_REC_PY_PROC, sizeof(r), pid, pid, ts);
	r.status = GPUIO_PYP_OK;
	r.minor = 10;
	snprintf(r.what, sizeof(r.what), "Python 3.10 (generated)");
	append(&r, sizeof(r));
}

/* A code object at addr: file, name, first line; lasti 0 is on line */
static void add_py_code(unsigned pid, unsigned long long ts, unsigned long long addr, const char *file,
			const char *name, int first, int line)
{
	unsigned char buf[sizeof(struct gpuio_py_code) + 256] __attribute__((aligned(8)));
	struct gpuio_py_code *c = (void *)buf;
	size_t fl = strlen(file), nl = strlen(name), size = (sizeof(*c) + fl + nl + 2 + 7) & ~7ul;

	memset(buf, 0, sizeof(buf));
	fill_hdr(&c->hdr, GPUIO_REC_PY_CODE, (unsigned)size, pid, pid, ts);
	c->code = addr;
	c->firstlineno = first;
	c->minor = 10;
	c->file_len = (unsigned short)fl;
	c->name_len = (unsigned short)nl;
	c->lines_len = 2;
	memcpy(c->data, file, fl);
	memcpy(c->data + fl, name, nl);
	c->data[fl + nl] = 2;
	c->data[fl + nl + 1] = (unsigned char)(signed char)(line - first);
	append(buf, size);
}

/* A stack of codes (innermost first, each at lasti 0), named id */
static void add_py_stack(unsigned pid, unsigned tid, unsigned long long ts, unsigned long long id,
			 const unsigned long long *codes, unsigned n)
{
	unsigned char buf[sizeof(struct gpuio_py_stack) + 8 * sizeof(struct gpuio_py_frame)]
		__attribute__((aligned(8)));
	struct gpuio_py_stack *s = (void *)buf;
	size_t size = sizeof(*s) + n * sizeof(s->frames[0]);

	memset(buf, 0, sizeof(buf));
	fill_hdr(&s->hdr, GPUIO_REC_PY_STACK, (unsigned)size, pid, tid, ts);
	s->id = id;
	s->nframes = (unsigned short)n;
	for (unsigned i = 0; i < n; i++)
		s->frames[i].code = codes[i];
	append(buf, size);
}

static void add_stack_at(unsigned pid, unsigned tid, unsigned long long ts, unsigned long long id,
			 unsigned what)
{
	struct gpuio_stack_at a;

	memset(&a, 0, sizeof(a));
	fill_hdr(&a.hdr, GPUIO_REC_STACK_AT, sizeof(a), pid, tid, ts);
	a.id = id;
	a.what = (unsigned char)what;
	append(&a, sizeof(a));
}

/*
 * One process (pid 500, threads 500 and 501) on two GPUs, two streams each;
 * a second process whose collector could not start (pid 600). Records are
 * written as CUPTI delivers them: in buffers, late, out of time order and
 * interleaved with VFS records. Times are ns after t = anchor + 1 ms.
 */
static void gen_gpu(void)
{
	const unsigned P = 500, T1 = 500, T2 = 501;
	const unsigned long long t = BASE_NS + 1000000;
	const char *K4 = "void graph_k<\"q\">(float*)";
	unsigned long long bpf[GPUIO_STAT_MAX] = { 0 };
#define RT(tid_, c_, k_, s_, e_, n_, ...) add_api(&(struct api_spec){ .pid = P, .tid = tid_, \
	.corr = c_, .source = GPUIO_API_RUNTIME, .kind = k_, .ts = t + (s_), .end = t + (e_), \
	.name = n_, __VA_ARGS__ })
#define DRV(tid_, c_, k_, s_, e_, n_, ...) add_api(&(struct api_spec){ .pid = P, .tid = tid_, \
	.corr = c_, .source = GPUIO_API_DRIVER, .kind = k_, .ts = t + (s_), .end = t + (e_), \
	.name = n_, __VA_ARGS__ })
#define UP(tid_, src_, k_, s_, e_, n_, ...) add_api(&(struct api_spec){ .pid = P, .tid = tid_, \
	.source = src_, .kind = k_, .ts = t + (s_), .end = t + (e_), .name = n_, __VA_ARGS__ })

	add_proc(GPUIO_PROC_EXEC, P, T1, BASE_NS, "trainer", 7, "python3\0train.py", 16);
	add_proc(GPUIO_PROC_THREAD, P, T2, BASE_NS + 10, "launcher", 8, NULL, 0);
	add_proc(GPUIO_PROC_EXEC, 600, 600, BASE_NS + 20, "other", 5, "other", 5);
	add_path(DEV_DATA, 10, GPUIO_PATH_PROCFS, "/data/a.bin", 11);
	add_ginfo(P, BASE_NS + 100, GPUIO_GPU_ON, 0, 0, 0, "");
	add_ginfo(600, BASE_NS + 200, GPUIO_GPU_UNAVAILABLE, 0, 0, 39,
		  "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED: another profiler holds CUPTI");
	add_sym(P, 0x402000, "my_uprobe_kernel(float*)");
	/* a read inside the NVTX range "epoch 0", another after everything */
	add_pread(P, T1, t + 20000, 5000, 3, DEV_DATA, 10, GPUIO_FT_REG, 1, 4096, 0);

	/* buffer 1 (GPU 1 first: buffers are per context, completed out of order) */
	add_kernel(P, t + 200000, t + 1200000, 1, 7, 21, "gemm_kernel");
	add_memcpy(P, t + 1300000, t + 1400000, 1, 1, 7, 22, GPUIO_MEMCPY_DTOD, 1 << 20, 3, 3,
		   GPUIO_GM_ASYNC);
	add_memcpy(P, t + 1500000, t + 1600000, 1, 0, 21, 23, GPUIO_MEMCPY_PTOP, 8 << 20, 3, 3,
		   GPUIO_GM_ASYNC | GPUIO_GM_PEER);
	add_kernel(P, t + 1800000, t + 1900000, 1, 21, 24, K4);
	add_kernel(P, t + 1700000, t + 1800000, 1, 21, 24, K4);
	/* buffer 2: GPU 0 */
	add_memset(P, t + 600000, t + 650000, 0, 13, 13, 1 << 20, 0);
	add_kernel(P, t + 300000, t + 500000, 0, 7, 12, "relu_kernel");
	add_kernel(P, t + 100000, t + 400000, 0, 7, 11, "gemm_kernel");
	add_memcpy(P, t + 50000, t + 90000, 0, 0, 7, 10, GPUIO_MEMCPY_HTOD, 4 << 20, 1, 3,
		   GPUIO_GM_ASYNC);
	add_memcpy(P, t + 700000, t + 800000, 0, 0, 13, 14, GPUIO_MEMCPY_DTOH, 2 << 20, 3, 2, 0);
	add_memcpy(P, t + 960000, t + 970000, 0, 0, 13, 16, GPUIO_MEMCPY_HTOH, 4096, 1, 2, 0);
	add_kernel(P, t + 900000, t + 950000, 0, 13, 99, "orphan_kernel");   /* no API call */
	add_pread(P, T1, t + 2800000, 50000, 3, DEV_DATA, 10, GPUIO_FT_REG, 2, 4096, 4096);

	/* runtime/driver API records (CUPTI), thread 500 */
	RT(T1, 10, GPUIO_API_MEMCPY, 40000, 60000, "cudaMemcpyAsync_v3020");
	DRV(T1, 10, GPUIO_API_MEMCPY, 45000, 55000, "cuMemcpyHtoDAsync_v2");
	RT(T1, 11, GPUIO_API_LAUNCH, 95000, 99000, "cudaLaunchKernel_v7000");
	DRV(T1, 1011, GPUIO_API_LAUNCH, 96000, 98000, "cuLaunchKernel");
	RT(T1, 12, GPUIO_API_LAUNCH, 99500, 99900, "cudaLaunchKernel_v7000");
	RT(T1, 13, GPUIO_API_MEMSET, 590000, 595000, "cudaMemsetAsync_v3020", .bytes = 1 << 20);
	RT(T1, 14, GPUIO_API_MEMCPY, 650000, 660000, "cudaMemcpyAsync_v3020");
	RT(T1, 16, GPUIO_API_MEMCPY, 955000, 975000, "cudaMemcpy_v3020", .ret = 2);
	RT(T1, 15, GPUIO_API_SYNC, 799000, 851000, "cudaStreamSynchronize_v3020");
	/* thread 501 */
	RT(T2, 21, GPUIO_API_LAUNCH, 150000, 160000, "cudaLaunchKernel_v7000");
	RT(T2, 22, GPUIO_API_MEMCPY, 1250000, 1260000, "cudaMemcpyAsync_v3020");
	RT(T2, 23, GPUIO_API_MEMCPY, 1450000, 1460000, "cudaMemcpyPeerAsync_v4000");
	RT(T2, 24, GPUIO_API_GRAPH_LAUNCH, 1650000, 1660000, "cudaGraphLaunch_v10000");
	RT(T2, 25, GPUIO_API_SYNC, 1950000, 1990000, "cudaDeviceSynchronize_v3020");
	/* uprobes: two calls CUPTI saw too, one launch only they saw */
	UP(T1, GPUIO_API_UPROBE_RT, GPUIO_API_LAUNCH, 94000, 99200, "cudaLaunchKernel",
	   .func = 0x401000);
	UP(T1, GPUIO_API_UPROBE_RT, GPUIO_API_MEMCPY, 39000, 61000, "cudaMemcpyAsync",
	   .bytes = 4 << 20, .mk = GPUIO_MEMCPY_HTOD, .stream = 0x7f0000001000ull);
	UP(T2, GPUIO_API_UPROBE_DRV, GPUIO_API_LAUNCH, 2000000, 2010000, "cuLaunchKernel",
	   .func = 0x402000, .stream = 0x7f0000002000ull);
	/* NVTX, syncs, overhead */
	add_nvtx(P, T1, t + 10000, t + 2500000, 0, "epoch 0");
	add_nvtx(P, T1, t + 30000, t + 700000, 1, "step 1");
	add_nvtx(P, T2, t + 1400000, t + 1700000, 0, "load");
	add_nvtx(P, T2, t + 1455000, t + 1500000, 1, "prefetch");   /* does not nest */
	add_gsync(P, T1, t + 800000, t + 850000, 0, 13, 15, GPUIO_SYNC_STREAM);
	add_gsync(P, 0, t + 1960000, t + 1980000, 1, 0, 25, GPUIO_SYNC_CONTEXT);
	add_gsync(P, 0, t + 2300000, t + 2400000, 1, 7, 77, GPUIO_SYNC_EVENT);
	add_overhead(P, T1, t + 2600000, t + 2650000, 1u << 16, 2, T1);
	add_overhead(P, 0, t + 2700000, t + 2750000, 2u << 16, 3, 0);
	add_ginfo(P, t + 3000000, GPUIO_GPU_FINAL, 7, 40, 0, "");
	add_stats(t + 3000000, 1, bpf);
	close_capture();

	printf("{\"mode\":\"gpu\",\"monotonic_ns\":%llu,\"pid\":%u,\"cupti_dropped\":7,"
	       "\"slices\":[", BASE_NS, P);
#define E(cat, name, track, s, e, flow, n) m_slice(cat, name, track, t + (s), t + (e), flow, n)
	/* GPU 0 */
	E("gpu", "memcpy HtoD", "GPU 0 \xc2\xb7 stream 7", 50000, 90000, "in", 0);
	E("gpu", "gemm_kernel", "GPU 0 \xc2\xb7 stream 7", 100000, 400000, "in", 0);
	E("gpu", "relu_kernel", "GPU 0 \xc2\xb7 stream 7 \xc2\xb7 lane 2", 300000, 500000, "in", 0);
	E("gpu", "memset", "GPU 0 \xc2\xb7 stream 13", 600000, 650000, "in", 0);
	E("gpu", "memcpy DtoH", "GPU 0 \xc2\xb7 stream 13", 700000, 800000, "in", 0);
	E("gpu", "orphan_kernel", "GPU 0 \xc2\xb7 stream 13", 900000, 950000, "", 0);
	E("gpu", "memcpy HtoH", "GPU 0 \xc2\xb7 stream 13", 960000, 970000, "in", 0);
	E("cupti_overhead", "CUPTI overhead: instrumentation", "GPU 0 \xc2\xb7 CUPTI overhead",
	  2700000, 2750000, "", 0);
	/* GPU 1 */
	E("gpu", "gemm_kernel", "GPU 1 \xc2\xb7 stream 7", 200000, 1200000, "in", 0);
	E("gpu", "memcpy DtoD", "GPU 1 \xc2\xb7 stream 7", 1300000, 1400000, "in", 0);
	E("gpu", "memcpy PtoP", "GPU 1 \xc2\xb7 stream 21", 1500000, 1600000, "in", 0);
	E("gpu", K4, "GPU 1 \xc2\xb7 stream 21", 1700000, 1800000, "in", 0);
	E("gpu", K4, "GPU 1 \xc2\xb7 stream 21", 1800000, 1900000, "in", 0);
	E("cuda_sync", "event synchronize", "GPU 1 \xc2\xb7 sync", 2300000, 2400000, "", 0);
	/* thread 500 */
	E("nvtx", "epoch 0", "thread 500", 10000, 2500000, "", 0);
	E("nvtx", "step 1", "thread 500", 30000, 700000, "", 0);
	E("cuda_api", "cudaMemcpyAsync_v3020", "thread 500", 40000, 60000, "out", 1);
	E("cuda_api", "cuMemcpyHtoDAsync_v2", "thread 500", 45000, 55000, "", 0);
	E("cuda_api", "cudaLaunchKernel_v7000", "thread 500", 95000, 99000, "out", 1);
	E("cuda_api", "cuLaunchKernel", "thread 500", 96000, 98000, "", 0);
	E("cuda_api", "cudaLaunchKernel_v7000", "thread 500", 99500, 99900, "out", 1);
	E("cuda_api", "cudaMemsetAsync_v3020", "thread 500", 590000, 595000, "out", 1);
	E("cuda_api", "cudaMemcpyAsync_v3020", "thread 500", 650000, 660000, "out", 1);
	E("cuda_api", "cudaStreamSynchronize_v3020", "thread 500", 799000, 851000, "", 0);
	E("cuda_sync", "stream synchronize", "thread 500", 800000, 850000, "", 0);
	E("cuda_api", "cudaMemcpy_v3020", "thread 500", 955000, 975000, "out", 1);
	E("cupti_overhead", "CUPTI overhead: buffer flush", "thread 500", 2600000, 2650000, "", 0);
	/* thread 501 */
	E("cuda_api", "cudaLaunchKernel_v7000", "thread 501", 150000, 160000, "out", 1);
	E("cuda_api", "cudaMemcpyAsync_v3020", "thread 501", 1250000, 1260000, "out", 1);
	E("nvtx", "load", "thread 501", 1400000, 1700000, "", 0);
	E("cuda_api", "cudaMemcpyPeerAsync_v4000", "thread 501", 1450000, 1460000, "out", 1);
	E("nvtx", "prefetch", "tid 501 \xc2\xb7 CUDA overlap 1", 1455000, 1500000, "", 0);
	E("cuda_api", "cudaGraphLaunch_v10000", "thread 501", 1650000, 1660000, "out", 2);
	E("cuda_api", "cudaDeviceSynchronize_v3020", "thread 501", 1950000, 1990000, "", 0);
	E("cuda_sync", "context synchronize", "thread 501", 1960000, 1980000, "", 0);
	E("cuda_api", "cuLaunchKernel", "thread 501", 2000000, 2010000, "", 0);
#undef E
	/* busy: buckets of 1 ms from the first activity (t + 50 us) */
	printf("],\"busy\":{\"GPU 0\":[[%llu,0.65],[%llu,0],[%llu,0]],"
	       "\"GPU 1\":[[%llu,0.85],[%llu,0.55],[%llu,0]]},",
	       t + 50000 - BASE_NS, t + 1050000 - BASE_NS, t + 2050000 - BASE_NS,
	       t + 50000 - BASE_NS, t + 1050000 - BASE_NS, t + 2050000 - BASE_NS);
	printf("\"merged\":[{\"name\":\"cudaLaunchKernel_v7000\",\"ts_ns\":%llu,\"func\":\"0x401000\","
	       "\"kernel\":\"gemm_kernel\"},{\"name\":\"cudaMemcpyAsync_v3020\",\"ts_ns\":%llu,"
	       "\"bytes\":%u,\"memcpy_kind\":\"HtoD\"}],",
	       t + 95000 - BASE_NS, t + 40000 - BASE_NS, 4u << 20);
	printf("\"uprobe_only\":{\"name\":\"cuLaunchKernel\",\"kernel\":\"my_uprobe_kernel(float*)\"},"
	       "\"flows\":11,\"dangling\":1,\"overlap_slices\":1,\"merged_count\":2}\n");
#undef RT
#undef DRV
#undef UP
}


/* ---- gpubig ---- */

/*
 * N launches (runtime API call + kernel, same correlation) on 2 GPUs x 4
 * streams, a VFS read per launch; kernels arrive in buffers of 1000, one
 * buffer late and in reverse order (as CUPTI delivers them). For speed and
 * memory measurements of the GPU export.
 */
static void gen_gpubig(unsigned long long n)
{
	unsigned long long bpf[GPUIO_STAT_MAX] = { 0 }, t = BASE_NS + 1000;
	const unsigned long long B = 1000;

	add_proc(GPUIO_PROC_EXEC, 700, 700, BASE_NS, "gpujob", 6, "gpujob", 6);
	add_path(DEV_DATA, 10, GPUIO_PATH_PROCFS, "/data/shard.bin", 15);
	add_ginfo(700, BASE_NS + 1, GPUIO_GPU_ON, 0, 0, 0, "");
	for (unsigned long long b0 = 0; b0 < n + B; b0 += B) {
		/* this buffer's API calls and reads, the previous buffer's kernels */
		for (unsigned long long i = b0; i < b0 + B && i < n; i++) {
			unsigned long long ts = t + i * 10000;

			add_pread(700, 700, ts, 2000, 3, DEV_DATA, 10, GPUIO_FT_REG, (unsigned)i + 1, 4096,
				  (long long)i * 4096);
			add_api(&(struct api_spec){ .pid = 700, .tid = 700, .corr = (unsigned)i + 1,
				.source = GPUIO_API_RUNTIME, .kind = GPUIO_API_LAUNCH, .ts = ts + 3000,
				.end = ts + 5000, .name = "cudaLaunchKernel_v7000" });
		}
		if (b0 >= B)
			for (unsigned long long i = b0 - 1; i + 1 > b0 - B; i--) {
				unsigned long long ts = t + i * 10000 + 6000;

				add_kernel(700, ts, ts + 30000, (unsigned)(i & 1), 7 + (i >> 1 & 3),
					   (unsigned)i + 1, i % 3 ? "gemm_kernel" : "relu_kernel");
			}
	}
	add_ginfo(700, t + n * 10000, GPUIO_GPU_FINAL, 0, 2 * n, 0, "");
	add_stats(t + n * 10000, 1, bpf);
	close_capture();
	printf("{\"mode\":\"gpubig\",\"launches\":%llu}\n", n);
}

/* ---- gpuwait ---- */

/*
 * Why the GPU waited, by its launching thread's state: a trainer (pid 300)
 * whose thread 300 launches the kernels (thread 301 launches once) and a
 * DataLoader-like worker (pid 310, its child). Kernels leave five 20 ms idle
 * gaps: before thread 300's first state (no state); while it sleeps until
 * the worker hands over data (waiting for data, and runnable once woken);
 * on CPU then preempted (runnable); asleep inside its own pread (file I/O);
 * asleep inside a CUDA sync. The worker exits 3 ms after its last hand-over
 * (having slept since: still data); a helper child's exit wakes the loop
 * later (a join: other sleep). NVTX "train_step" ranges (depth 0) with
 * nested "forward" ones mark four steps; thread 301 has "io_step" ranges.
 * Thread 302 (PyTorch's autograd thread) launches more kernels than 300,
 * each inside a busy period: it is the most launching thread, but the launch
 * that ends every gap is 300's, so each gap is 300's state.
 * nosched: the same without scheduler records. The manifest: every gap's
 * split in ns and every step's wait and rest.
 */
/* The trainer's Python stacks (gen_gpuwait stacks): where its loop thread
 * slept: in the DataLoader's __next__ (called at train.py:50) while the GPU
 * idled from 10 ms, in train_step's sync (train.py:33) from 100 ms */
static void gpuwait_stacks(unsigned pid, unsigned tid, unsigned long long t0)
{
	const unsigned long long MS = 1000000ull, MAIN = 0x1000, NEXT = 0x2000, STEP = 0x3000;
	const unsigned long long data[] = { NEXT, MAIN }, sync[] = { STEP, MAIN };

	add_py_proc(pid, BASE_NS + 1000);
	add_py_code(pid, BASE_NS + 1000, MAIN, "/job/train.py", "main", 45, 50);
	add_py_code(pid, BASE_NS + 1000, NEXT,
		    "/usr/lib/python3/dist-packages/torch/utils/data/dataloader.py",
		    "_BaseDataLoaderIter.__next__", 620, 630);
	add_py_code(pid, BASE_NS + 1000, STEP, "/job/train.py", "train_step", 30, 33);
	add_py_stack(pid, tid, t0 + 12 * MS, 0xd1, data, 2);
	add_stack_at(pid, tid, t0 + 12 * MS, 0xd1, GPUIO_SA_SLEEP);
	add_py_stack(pid, tid, t0 + 102 * MS, 0xd2, sync, 2);
	add_stack_at(pid, tid, t0 + 102 * MS, 0xd2, GPUIO_SA_SLEEP);
}

static void gen_gpuwait(bool nosched, bool stacks, bool coll)
{
	const unsigned P = 300, T1 = 300, T2 = 301, T3 = 302, WK = 310, JN = 320;
	const unsigned SW = GPUIO_SCHED_SWITCH;
	const unsigned long long MS = 1000000ull, t0 = BASE_NS + 50 * MS, US = 1000ull;
	static const long long kern[][2] = { { -30, -20 }, { 0, 10 }, { 30, 40 }, { 60, 70 },
					     { 90, 100 }, { 120, 130 } };
	unsigned long long n;

	add_proc(GPUIO_PROC_EXEC, P, T1, BASE_NS, "trainer", 7, "python3\0train.py", 16);
	add_proc(GPUIO_PROC_THREAD, P, T2, BASE_NS + 10, "pin_memory", 10, NULL, 0);
	add_proc(GPUIO_PROC_THREAD, P, T3, BASE_NS + 15, "autograd", 8, NULL, 0);
	add_proc_pp(GPUIO_PROC_EXEC, WK, WK, BASE_NS + 20, "loader", 6, "python3\0train.py", 16, P);
	add_proc_pp(GPUIO_PROC_EXEC, JN, JN, BASE_NS + 30, "helper", 6, "helper", 6, P);
	add_path(DEV_DATA, 40, GPUIO_PATH_PROCFS, "/data/shard-0.tar", 17);
	add_path(DEV_DATA, 41, GPUIO_PATH_PROCFS, "/data/labels.csv", 16);
	add_ginfo(P, BASE_NS + 100, GPUIO_GPU_ON, 0, 0, 0, "");
	for (unsigned i = 0; i < 6; i++) {
		unsigned long long ks = t0 + (unsigned long long)(kern[i][0] * (long long)MS);

		add_api(&(struct api_spec){ .pid = P, .tid = T1, .corr = 100 + i,
			.source = GPUIO_API_RUNTIME, .kind = GPUIO_API_LAUNCH, .ts = ks - 500 * US,
			.end = ks - 490 * US, .name = "cudaLaunchKernel_v7000" });
		add_kernel(P, ks, t0 + (unsigned long long)(kern[i][1] * (long long)MS), 0, 7, 100 + i,
			   "train_kernel");
		/* the backward pass: launched and run inside the busy period */
		for (unsigned b = 0; b < (i < 2 ? 2u : 1u); b++) {
			unsigned corr = 300 + 2 * i + b;
			unsigned long long ls = ks + (1 + 3 * b) * MS;

			add_api(&(struct api_spec){ .pid = P, .tid = T3, .corr = corr,
				.source = GPUIO_API_RUNTIME, .kind = GPUIO_API_LAUNCH, .ts = ls,
				.end = ls + 10 * US, .name = "cudaLaunchKernel_v7000" });
			add_kernel(P, ls + 1 * MS, ls + 3 * MS, 0, 7, corr, "backward_kernel");
		}
	}
	add_api(&(struct api_spec){ .pid = P, .tid = T2, .corr = 99, .source = GPUIO_API_RUNTIME,
		.kind = GPUIO_API_LAUNCH, .ts = t0 - 40 * MS, .end = t0 - 40 * MS + 10 * US,
		.name = "cudaLaunchKernel_v7000" });
	/* the worker reads while the loop waits for it */
	add_pread(WK, WK, t0 + 13 * MS, 13 * MS, 5, DEV_DATA, 40, GPUIO_FT_REG, 1, 1 << 20, 0);
	/* the loop reads a file itself, then syncs */
	add_pread(P, T1, t0 + 72 * MS, 13 * MS, 6, DEV_DATA, 41, GPUIO_FT_REG, 2, 65536, 0);
	add_api(&(struct api_spec){ .pid = P, .tid = T1, .corr = 200, .source = GPUIO_API_RUNTIME,
		.kind = GPUIO_API_SYNC, .ts = t0 + 101 * MS, .end = t0 + 118 * MS,
		.name = "cudaStreamSynchronize_v3020" });
	/* collective: an all-reduce runs on NCCL's stream from the step's last
	 * kernel to 112 ms: the sync's sleep until then waits for the other
	 * ranks, the rest (112-117.5 ms) for the GPU */
	if (coll)
		add_kernel(P, t0 + 100 * MS, t0 + 112 * MS, 0, 9, 500,
			   "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
	for (unsigned i = 0; i < 4; i++) {
		unsigned long long s = t0 + (10 + 30 * i) * MS;

		add_nvtx(P, T1, s, s + 30 * MS, 0, "train_step");
		/* nested, and never across the loop's own pread (72-85 ms) or sync:
		 * a range cannot end inside a call of its own thread */
		add_nvtx(P, T1, s + 20 * MS, s + 22 * MS, 1, "forward");
		add_nvtx(P, T1, s + 24 * MS, s + 26 * MS, 1, "forward");
		if (i < 3)
			add_nvtx(P, T2, s + 2 * MS, s + 4 * MS, 0, "io_step");
	}
	if (stacks)
		gpuwait_stacks(P, T1, t0);
	if (!nosched) {
		add_sched_ev(SW, GPUIO_SF_NEXT_TRACED, 0, P, 0, t0, P, T1, 0);
		add_sched_ev(SW, GPUIO_SF_PREV_TRACED, 0, P, T1, t0 + 12 * MS, 0, 0, 1);       /* S */
		add_sched_ev(SW, GPUIO_SF_NEXT_TRACED, 1, WK, 0, t0 + 12500 * US, WK, WK, 0);
		/* the worker wakes the loop: data */
		add_sched_ev(GPUIO_SCHED_WAKE, GPUIO_SF_WAKER_TRACED, 1, P, T1, t0 + 27 * MS, WK, WK, 0);
		add_sched_ev(SW, GPUIO_SF_PREV_TRACED, 1, WK, WK, t0 + 27200 * US, 0, 0, 1);
		add_sched_ev(SW, GPUIO_SF_NEXT_TRACED, 0, P, 0, t0 + 27500 * US, P, T1, 0);
		add_sched_ev(SW, GPUIO_SF_PREV_TRACED | GPUIO_SF_PREEMPT, 0, P, T1, t0 + 58 * MS, 0, 0, 0);
		add_sched_ev(SW, GPUIO_SF_NEXT_TRACED, 0, P, 0, t0 + 61 * MS, P, T1, 0);
		add_sched_ev(SW, GPUIO_SF_PREV_TRACED, 0, P, T1, t0 + 73 * MS, 0, 0, 2);       /* D */
		add_sched_ev(GPUIO_SCHED_WAKE, 0, 0, P, T1, t0 + 84500 * US, 0, 0, 0);
		add_sched_ev(SW, GPUIO_SF_NEXT_TRACED, 0, P, 0, t0 + 84600 * US, P, T1, 0);
		add_sched_ev(SW, GPUIO_SF_PREV_TRACED, 0, P, T1, t0 + 102 * MS, 0, 0, 1);
		add_sched_ev(GPUIO_SCHED_WAKE, 0, 0, P, T1, t0 + 117500 * US, 0, 0, 0);
		add_sched_ev(SW, GPUIO_SF_NEXT_TRACED, 0, P, 0, t0 + 117600 * US, P, T1, 0);
		add_sched_ev(SW, GPUIO_SF_PREV_TRACED, 0, P, T1, t0 + 131 * MS, 0, 0, 1);
		/* the worker exits 3 ms after its last hand-over, having slept since: data */
		add_sched_ev(SW, GPUIO_SF_NEXT_TRACED, 1, WK, 0, t0 + 29 * MS, WK, WK, 0);
		add_sched_ev(SW, GPUIO_SF_PREV_TRACED, 1, WK, WK, t0 + 30 * MS, 0, 0, 0x80);
		/* a child whose exit wakes the loop (a join, not data): other sleep */
		add_sched_ev(SW, GPUIO_SF_NEXT_TRACED, 1, JN, 0, t0 + 139 * MS, JN, JN, 0);
		add_sched_ev(GPUIO_SCHED_WAKE, GPUIO_SF_WAKER_TRACED, 1, P, T1, t0 + 140 * MS, JN, JN, 0);
		add_sched_ev(SW, GPUIO_SF_PREV_TRACED, 1, JN, JN, t0 + 140010 * US, 0, 0, 0x80);
		add_sched_ev(SW, GPUIO_SF_NEXT_TRACED, 0, P, 0, t0 + 140100 * US, P, T1, 0);
		add_sched_ev(SW, GPUIO_SF_PREV_TRACED, 0, P, T1, t0 + 141 * MS, 0, 0, 1);
	}
	n = gpuio_cap_writer__records(W);
	close_capture();
	/* gap starts (ns from t0) and the launcher's split: on_cpu, runnable, file_io,
	 * gpu_sync, waiting_for_data, other_sleep, no_state (µs) */
	printf("{\"mode\":\"gpuwait\",\"records\":%llu,\"pid\":%u,\"launcher\":%u,\"t0_ns\":%llu,"
	       "\"launches\":8,\"gap_launcher\":%u,\"sched\":%s,\"gaps\":[", n, P, T3,
	       t0 - BASE_NS, T1, nosched ? "false" : "true");
	printf("{\"start_ms\":-20,\"us\":{\"no_state\":20000}},"
	       "{\"start_ms\":10,\"us\":{\"on_cpu\":4500,\"waiting_for_data\":15500}},"
	       "{\"start_ms\":40,\"us\":{\"on_cpu\":18000,\"runnable\":2000}},"
	       "{\"start_ms\":70,\"us\":{\"on_cpu\":8400,\"file_io\":11500,\"runnable\":100}},");
	/* collective: the last gap starts when the all-reduce ends (112 ms) */
	printf(coll ? "{\"start_ms\":112,\"us\":{\"on_cpu\":2400,\"gpu_sync\":5500,\"runnable\":100}}],"
		    : "{\"start_ms\":100,\"us\":{\"on_cpu\":4400,\"gpu_sync\":15500,\"runnable\":100}}],");
	/* the loop's whole time: its sleep until the helper's exit is other sleep */
	printf("\"loop_us\":{\"on_cpu\":86200,\"runnable\":3300,\"file_io\":11500,%s"
	       "\"waiting_for_data\":15500,\"other_sleep\":9000},"
	       "\"wakers\":[%u],", coll ? "\"gpu_sync\":5500,\"waiting_for_ranks\":10000," :
	       "\"gpu_sync\":15500,", WK);
	/* what its waits for data cost the GPU: 15.5 ms of 100 (88 with the all-reduce) */
	printf("\"data_evidence\":\"its GPU(s) sat idle 15.50 ms while it waited for data (%s of "
	       "their idle time)\",", coll ? "18%" : "16%");
	/* stacks: where the launcher was in each gap (none seen: null) */
	if (stacks)
		printf("\"gap_sites\":{\"-20\":null,\"10\":\"/job/train.py:50 main\",\"40\":null,"
		       "\"70\":null,\"100\":\"/job/train.py:33 train_step\"},");
	printf("\"step_range\":\"train_step\",\"steps\":[{\"start_ms\":10,\"wait_us\":15500,"
	       "\"rest_us\":14500},{\"start_ms\":40,\"wait_us\":0,\"rest_us\":30000},"
	       "{\"start_ms\":70,\"wait_us\":0,\"rest_us\":30000},{\"start_ms\":100,\"wait_us\":0,"
	       "\"rest_us\":30000}]}\n");
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
	unsigned long long size, cut_at, before;
	size_t keep;
	int nwhole_vfs = 10;

	add_proc(GPUIO_PROC_EXEC, 10, 10, BASE_NS + 10, "app", 3, "app", 3);
	add_path(DEV_DATA, 500, GPUIO_PATH_PROCFS, "/srv/data.bin", 13);
	for (int i = 0; i < nwhole_vfs; i++)
		add_pread(10, 10, BASE_NS + 1000 + i * 1000ull, 500, 3, DEV_DATA, 500,
			  GPUIO_FT_REG, i + 1, 4096, i * 4096ll);
	/* a periodic snapshot, not the final one: the tracer was killed later */
	bpf[GPUIO_STAT_RB_DROP_VFS] = 7;
	add_stats(BASE_NS + 20000, 0, bpf);
	/* the last record's bytes, however the writer encodes it: cut in the middle */
	before = gpuio_cap_writer__bytes(W);
	add_pread(10, 10, BASE_NS + 30000, 500, 3, DEV_DATA, 500, GPUIO_FT_REG, 99, 4096, 0);
	close_capture();
	size = file_size(out_path);
	keep = (size_t)(size - before) / 2;
	cut_at = before + keep;
	if (truncate(out_path, (off_t)cut_at) < 0)
		die("truncate: %s", strerror(errno));
	printf("{\"mode\":\"truncate\",\"whole_records\":%d,\"vfs_whole\":%d,\"cut_offset\":%llu,"
	       "\"partial_bytes\":%zu,\"dropped\":7}\n", nwhole_vfs + 3, nwhole_vfs,
	       before, keep);
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

/* ---- sockets ---- */

#define DEV_SOCKFS ((0u << 20) | 8)     /* sockfs */

struct sock_spec {
	unsigned long long ino;
	unsigned family, type, protocol, flags;
	const char *laddr, *raddr;      /* 4 or 16 bytes */
	unsigned lport, rport;
	const char *lpath, *rpath;
	size_t lpath_len, rpath_len;
	const char *peer;               /* the name gpuio must show */
	size_t peer_len;
};

static void add_sock_peer(unsigned pid, unsigned tid, unsigned long long ts,
			  const struct sock_spec *k)
{
	struct gpuio_sock_peer r;
	size_t alen = k->family == 10 ? 16 : 4;

	memset(&r, 0, sizeof(r));
	fill_hdr(&r.hdr, GPUIO_REC_SOCK_PEER, sizeof(r), pid, tid, ts);
	r.ino = k->ino;
	r.dev = DEV_SOCKFS;
	r.family = (__u16)k->family;
	r.type = (__u16)k->type;
	r.protocol = (__u16)k->protocol;
	r.flags = (__u16)k->flags;
	r.lport = (__u16)k->lport;
	r.rport = (__u16)k->rport;
	if (k->laddr)
		memcpy(r.laddr, k->laddr, alen);
	if (k->raddr)
		memcpy(r.raddr, k->raddr, alen);
	r.lpath_len = (__u16)k->lpath_len;
	r.rpath_len = (__u16)k->rpath_len;
	memcpy(r.lpath, k->lpath ? k->lpath : "", k->lpath_len);
	memcpy(r.rpath, k->rpath ? k->rpath : "", k->rpath_len);
	append(&r, sizeof(r));
	/* the pseudo file's name, as the kernel side sends it at the first call */
	add_path(DEV_SOCKFS, k->ino, GPUIO_PATH_COMPONENTS | GPUIO_PATH_SOCKET, "socket:", 7);
}

static unsigned sock_seq[64];

/* One socket call on k (fd 5 + index); its manifest line. */
static void sock_call(unsigned pid, unsigned tid, unsigned call, const struct sock_spec *k,
		      unsigned long long ts, unsigned long long dur, unsigned long long req,
		      long long ret, long long msgs, unsigned flags)
{
	struct vfs_spec s = {
		.pid = pid, .tid = tid, .call = call, .seq = ++sock_seq[tid & 63],
		.ftype = GPUIO_FT_SOCK, .ts = ts, .dur = dur, .requested = req, .ino = k->ino,
		.ret = ret, .offset = -1, .offset2 = msgs, .dev = DEV_SOCKFS,
		.fd = 5 + (int)(k->ino % 100), .fd2 = -1, .flags = flags,
	};

	add_vfs(&s);
	m_sep();
	printf("{\"call\":\"%s\",\"tid\":%u,\"ts\":%llu,\"dur\":%llu,\"requested\":%llu,"
	       "\"ret\":%lld,\"messages\":%lld,\"flags\":%u,\"ino\":%llu,\"peer_hex\":",
	       call == GPUIO_CALL_READ ? "read" : call == GPUIO_CALL_WRITE ? "write" :
	       call == GPUIO_CALL_SENDTO ? "sendto" : call == GPUIO_CALL_RECVFROM ? "recvfrom" :
	       call == GPUIO_CALL_SENDMSG ? "sendmsg" : call == GPUIO_CALL_RECVMSG ? "recvmsg" :
	       call == GPUIO_CALL_RECVMMSG ? "recvmmsg" : "sendmmsg", tid, ts - BASE_NS, dur,
	       req, ret, msgs, flags, k->ino);
	if (k->peer)
		put_hex(k->peer, k->peer_len);
	else
		printf("null");
	putchar('}');
}

/*
 * pid 20 "fetcher": thread 20 asks 10.0.0.5:9000 three times (sendto, then
 * two recvfrom), talks to unix:/run/app.sock (write, read), a socketpair
 * (sendto), a hostile unix path (sendmsg), an unconnected UDP socket
 * (recvfrom: EAGAIN) and a socket without a peer record (read: a file);
 * thread 21 asks [::1]:80 once (sendmsg, recvmsg) and receives 3 messages
 * from the abstract unix:@gpuio-test (recvmmsg).
 */
static void gen_sockets(void)
{
	static const char v4_l[4] = { 10, 0, 0, 1 }, v4_r[4] = { 10, 0, 0, 5 };
	static const char v6_lo[16] = { [15] = 1 }, any4[4] = { 0 };
	static const char bad[] = "/tmp/\"q\\\n\xff.sock";
	static const char bad_peer[] = "unix:/tmp/\"q\\\n\xff.sock";
	static const struct sock_spec tcp = {
		7001, 2, 1, 6, GPUIO_SP_PEER, v4_l, v4_r, 40000, 9000, NULL, NULL, 0, 0,
		"10.0.0.5:9000", 13 };
	static const struct sock_spec tcp6 = {
		7002, 10, 1, 6, GPUIO_SP_PEER, v6_lo, v6_lo, 50000, 80, NULL, NULL, 0, 0,
		"[::1]:80", 8 };
	static const struct sock_spec ux = {
		7003, 1, 1, 0, GPUIO_SP_PEER, NULL, NULL, 0, 0, NULL, "/run/app.sock", 0, 14,
		"unix:/run/app.sock", 18 };
	static const struct sock_spec abst = {
		7004, 1, 2, 0, GPUIO_SP_PEER, NULL, NULL, 0, 0, NULL, "\0gpuio-test", 0, 11,
		"unix:@gpuio-test", 16 };
	static const struct sock_spec pair = {
		7005, 1, 1, 0, GPUIO_SP_PEER, NULL, NULL, 0, 0, NULL, NULL, 0, 0,
		"unix:socketpair", 15 };
	static const struct sock_spec udp = {
		7006, 2, 2, 17, 0, any4, NULL, 5353, 0, NULL, NULL, 0, 0,
		"unconnected:0.0.0.0:5353", 24 };
	static const struct sock_spec hostile = {
		7007, 1, 1, 0, GPUIO_SP_PEER, NULL, NULL, 0, 0, NULL, bad, 0, sizeof(bad),
		bad_peer, sizeof(bad_peer) - 1 };
	static const struct sock_spec nopeer = { .ino = 7008 };
	static const char args[] = "fetcher\0--objects\0" "3";
	unsigned long long t = BASE_NS + 100000, n;
	unsigned long long req_lat[3];

	add_proc(GPUIO_PROC_EXEC, 20, 20, BASE_NS + 10, "fetcher", 7, args, sizeof(args) - 1);
	add_proc(GPUIO_PROC_THREAD, 20, 21, BASE_NS + 20, "fetch-v6", 8, NULL, 0);
	printf("{\"mode\":\"sockets\",\"calls\":[");
	add_sock_peer(20, 20, t, &tcp);
	for (int i = 0; i < 3; i++) {
		unsigned long long s0 = t + i * 10000000ull;

		sock_call(20, 20, GPUIO_CALL_SENDTO, &tcp, s0, 20000, 100, 100, -1, 0);
		sock_call(20, 20, GPUIO_CALL_RECVFROM, &tcp, s0 + 50000, 5000000, 65536, 1000, -1, 0);
		sock_call(20, 20, GPUIO_CALL_RECVFROM, &tcp, s0 + 5100000, 100000, 65536, 500, -1, 0);
		req_lat[i] = 5100000 + 100000;
	}
	t += 40000000;
	add_sock_peer(20, 21, t, &tcp6);
	sock_call(20, 21, GPUIO_CALL_SENDMSG, &tcp6, t, 10000, 64, 64, -1, 0);
	sock_call(20, 21, GPUIO_CALL_RECVMSG, &tcp6, t + 20000, 2000000, 8192, 4096, -1, 0);
	add_sock_peer(20, 20, t + 1000, &ux);
	sock_call(20, 20, GPUIO_CALL_WRITE, &ux, t + 1000, 3000, 10, 10, -1, 0);
	sock_call(20, 20, GPUIO_CALL_READ, &ux, t + 5000, 7000, 4096, 20, -1, 0);
	t += 5000000;
	add_sock_peer(20, 21, t, &abst);
	sock_call(20, 21, GPUIO_CALL_RECVMMSG, &abst, t, 30000, 3000, 1500, 3, 0x40);
	add_sock_peer(20, 20, t + 1000, &pair);
	sock_call(20, 20, GPUIO_CALL_SENDTO, &pair, t + 1000, 2000, 8, 8, -1, 0x4000);
	add_sock_peer(20, 20, t + 4000, &udp);
	sock_call(20, 20, GPUIO_CALL_RECVFROM, &udp, t + 4000, 1000, 512, -11, -1, 0x40);
	add_sock_peer(20, 20, t + 6000, &hostile);
	sock_call(20, 20, GPUIO_CALL_SENDMSG, &hostile, t + 6000, 1500, 32, 32, -1, 0);
	add_path(DEV_SOCKFS, 7008, GPUIO_PATH_COMPONENTS | GPUIO_PATH_SOCKET, "socket:", 7);
	sock_call(20, 20, GPUIO_CALL_READ, &nopeer, t + 9000, 800, 64, 5, -1, 0);
	add_stats(t + 20000, 1, NULL);
	n = gpuio_cap_writer__records(W);
	close_capture();
	printf("],\"records\":%llu,\"tcp_request_latency\":[%llu,%llu,%llu]}\n", n,
	       req_lat[0], req_lat[1], req_lat[2]);
}

/* ---- faults ---- */

static void faults_header(struct gpuio_cap_header *h)
{
	snprintf(h->fault_mode, sizeof(h->fault_mode), "tp_btf");
	snprintf(h->sched_mode, sizeof(h->sched_mode), "tp_btf");
}

static void add_fault_count(unsigned pid, unsigned long long ts, unsigned dev,
			    unsigned long long ino, unsigned long long minor, unsigned long long major,
			    unsigned flags)
{
	struct gpuio_fault_count c;

	memset(&c, 0, sizeof(c));
	fill_hdr(&c.hdr, GPUIO_REC_FAULT_COUNT, sizeof(c), pid, 0, ts);
	c.dev = dev;
	c.ino = ino;
	c.minor = minor;
	c.major = major;
	c.flags = flags;
	append(&c, sizeof(c));
}

struct fault_plan {
	unsigned tid, seq, flags;
	unsigned long long ts, dur, ino;
	long long off, bytes, ra;       /* ra: offset2, -1 none */
	unsigned nblk;                  /* block requests (bytes split evenly) */
};

static void gen_faults(void)
{
	static const char args[] = "mapper\0--shards\0" "2";
	/* thread 30's calls 1, 2 are its opens */
	static const struct fault_plan fp[] = {
		/* cold: read around the first page, the thread waits for it */
		{ 30, 3, GPUIO_PF_MAJOR | GPUIO_PF_SLEPT, 1000, 5000, 700, 0, 131072, 0, 2 },
		/* the second thread waits for a page the first one's readahead reads */
		{ 31, 1, GPUIO_PF_SLEPT, 2000, 3000, 700, 65536, 0, -1, 0 },
		/* a minor fault on a readahead mark starts the next window */
		{ 30, 4, 0, 10000, 200, 700, 131072, 262144, 131072, 1 },
		/* a write fault on the index */
		{ 30, 5, GPUIO_PF_MAJOR | GPUIO_PF_SLEPT | GPUIO_PF_WRITE, 20000, 900, 701, 4096, 4096,
		  4096, 1 },
		/* still waiting when the trace ended */
		{ 31, 2, GPUIO_PF_SLEPT | GPUIO_PF_CUT, 30000, 1000, 701, 8192, 0, -1, 0 },
	};
	unsigned long long bpf[GPUIO_STAT_MAX] = { 0 }, n;

	add_proc(GPUIO_PROC_EXEC, 30, 30, BASE_NS + 10, "mapper", 6, args, sizeof(args) - 1);
	add_proc(GPUIO_PROC_THREAD, 30, 31, BASE_NS + 20, "mapper-w", 8, NULL, 0);
	add_proc(GPUIO_PROC_EXEC, 40, 40, BASE_NS + 30, "reader", 6, NULL, 0);
	add_devname(DEV_SDA, "sda", 3);
	add_path(DEV_DATA, 700, GPUIO_PATH_COMPONENTS, "shard.bin\0data", 14);
	add_path(DEV_DATA, 701, GPUIO_PATH_COMPONENTS, "idx.bin\0data", 12);
	add_path(DEV_DATA, 702, GPUIO_PATH_COMPONENTS, "mapper\0bin\0opt", 15);
	/* opened, then read only through their mappings */
	for (unsigned i = 0; i < 2; i++) {
		struct vfs_spec o = {
			.pid = 30, .tid = 30, .call = GPUIO_CALL_OPENAT, .seq = i + 1,
			.ftype = GPUIO_FT_REG, .ts = BASE_NS + 100 + i * 100, .dur = 50, .ret = 3 + i,
			.offset = -1, .offset2 = -1, .dev = DEV_DATA, .ino = 700 + i, .fd = 3 + i,
			.fd2 = -1,
		};

		add_vfs(&o);
	}
	printf("{\"mode\":\"faults\",\"pid\":30,\"faults\":[");
	for (size_t i = 0; i < ARRAY_SIZE(fp); i++) {
		const struct fault_plan *f = &fp[i];
		struct vfs_spec s = {
			.pid = 30, .tid = f->tid, .call = GPUIO_CALL_PAGE_FAULT, .seq = f->seq,
			.ftype = GPUIO_FT_REG, .misses = (unsigned)(f->bytes / 4096), .flags = f->flags,
			.ts = BASE_NS + f->ts, .dur = f->dur, .requested = (unsigned long long)f->bytes,
			.ino = f->ino, .ret = f->bytes, .offset = f->off, .offset2 = f->ra,
			.dev = DEV_DATA, .fd = -1, .fd2 = -1,
		};

		for (unsigned k = 0; k < f->nblk; k++) {
			unsigned long long t = BASE_NS + f->ts + 100 + k * 50;
			struct blk_spec b = {
				.pid = 30, .tid = f->tid, .seq = f->seq, .dev = DEV_SDA,
				.file_dev = DEV_DATA, .bytes = (unsigned)(f->bytes / f->nblk),
				.op = GPUIO_BLK_READ, .ts = t, .issue = t + 10,
				.complete = t + 10 + f->dur / 2, .sector = 8192 + i * 1024 + k * 256,
				.ino = f->ino, .attr = GPUIO_BA_SUBMITTER,
			};

			add_block(&b);
		}
		add_vfs(&s);
		printf("%s{\"tid\":%u,\"ts_ns\":%llu,\"dur_ns\":%llu,\"path\":\"/data/%s\","
		       "\"offset\":%lld,\"bytes\":%lld,\"pages\":%lld,\"readahead_offset\":%lld,"
		       "\"major\":%s,\"slept\":%s,\"write\":%s,\"cut\":%s,\"requests\":%u}",
		       i ? "," : "", f->tid, BASE_NS + f->ts, f->dur,
		       f->ino == 700 ? "shard.bin" : "idx.bin", f->off, f->bytes, f->bytes / 4096,
		       f->ra, f->flags & GPUIO_PF_MAJOR ? "true" : "false",
		       f->flags & GPUIO_PF_SLEPT ? "true" : "false",
		       f->flags & GPUIO_PF_WRITE ? "true" : "false",
		       f->flags & GPUIO_PF_CUT ? "true" : "false", f->nblk);
	}
	/* cumulative per process: the later record of (pid, file) wins */
	add_fault_count(30, BASE_NS + 25000, DEV_DATA, 700, 10, 1, 0);
	add_fault_count(30, BASE_NS + 25000, DEV_DATA, 701, 3, 1, 0);
	add_fault_count(40, BASE_NS + 25000, DEV_DATA, 700, 7, 0, 0);
	add_fault_count(30, BASE_NS + 40000, DEV_DATA, 700, 25, 1, 0);
	/* the program itself: executed, so code whatever its path */
	add_fault_count(30, BASE_NS + 40000, DEV_DATA, 702, 5, 0, GPUIO_FC_EXEC);
	bpf[GPUIO_STAT_EVENTS_BLOCK] = 4;
	add_stats(BASE_NS + 50000, 1, bpf);
	n = gpuio_cap_writer__records(W);
	close_capture();
	printf("],\"records\":%llu,\"files\":{"
	       "\"/data/shard.bin\":{\"minor\":32,\"major\":1,\"read_bytes\":393216},"
	       "\"/data/idx.bin\":{\"minor\":3,\"major\":1,\"read_bytes\":4096},"
	       "\"/opt/bin/mapper\":{\"minor\":5,\"major\":0,\"read_bytes\":0,\"role\":\"code\"}},"
	       "\"minor\":40,\"major\":2}\n", n);
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

/* ---- scale ---- */

/*
 * A whole-node capture (-a) of about N records, shaped like a real one of a
 * PyTorch job beside fio and the node's daemons (issue #25's 150 s trace):
 * a training loop (main thread launching GPU kernels, a pin-memory thread,
 * an autograd thread) fed by 6 worker processes reading 2,000 shards with
 * block requests, 2 fio jobs, 12 daemons of 5 threads each; 16 CPUs whose
 * switches, wake-ups and WAIT records (what each sleep is in) are a third
 * of the records, simulated so that every thread's states follow each
 * other without overlap and every CPU's switches chain; VFS calls made
 * while their thread runs (a call that sleeps ends when it is back on a
 * CPU), page faults that sleep, FAULT_COUNT and STATS once a second.
 */
#define SC_NCPU    16
#define SC_MAXT    96
#define SC_NSHARD  2000
#define SC_NFIO    8
#define SC_NLIB    600
#define SC_NETC    400
#define SC_F_FIO   SC_NSHARD
#define SC_F_LIB   (SC_F_FIO + SC_NFIO)
#define SC_F_ETC   (SC_F_LIB + SC_NLIB)
#define SC_NFILE   (SC_F_ETC + SC_NETC)
#define SC_NPROC   24
#define DEV_NVMEFS ((259u << 20) | 1)   /* the data file system, on nvme0n1 */

enum { SC_LOOP, SC_PIN, SC_AUX, SC_WORKER, SC_FIO, SC_BY };
enum { SC_RUN, SC_RQ, SC_SLEEP };
enum { SW_NONE, SW_FILE, SW_FAULT };     /* what a sleep ends with */

struct sc_thr {
	unsigned pid, tid, role, proc, state, cpu, seq, hi;
	unsigned long long since, last_end, wake_at;
	unsigned sleep;                 /* SW_*: a call to finish at the switch-in */
	unsigned call, cfile, cseq, nblk;
	unsigned long long cstart;
	long long cbytes, coff;
	unsigned file;                  /* its current file */
	int fd;
	long long pos;
	unsigned nread;                 /* calls on the current file */
	const char *comm;
};

static struct sc_thr sc_th[SC_MAXT];
static unsigned sc_nth;
static struct sc_thr *sc_cpu[SC_NCPU];
static struct sc_thr *sc_rq[SC_MAXT + 1];
static unsigned sc_rq_h, sc_rq_n;
static struct sc_thr *sc_heap[SC_MAXT];
static unsigned sc_heap_n;
static unsigned long long sc_t, sc_rng = 0x9e3779b97f4a7c15ull;
static unsigned long long sc_nsched, sc_nvfs, sc_nblk, sc_nkern, sc_nfault;
static unsigned long long sc_sector[2];
static unsigned long long sc_gpu_end;
static unsigned sc_corr = 1000;
static unsigned char sc_path_sent[SC_NFILE];
static struct { unsigned long long minor, major; bool dirty; } sc_fc[SC_NPROC][SC_NLIB];
static unsigned sc_proc_pid[SC_NPROC];

static unsigned long long sc_rnd(void)
{
	sc_rng ^= sc_rng << 13;
	sc_rng ^= sc_rng >> 7;
	sc_rng ^= sc_rng << 17;
	return sc_rng;
}

static unsigned long long sc_range(unsigned long long lo, unsigned long long hi)
{
	return lo + sc_rnd() % (hi - lo + 1);
}

static unsigned long long sc_now(void)
{
	return ++sc_t;
}

static void sc_heap_swap(unsigned a, unsigned b)
{
	struct sc_thr *x = sc_heap[a];

	sc_heap[a] = sc_heap[b];
	sc_heap[b] = x;
	sc_heap[a]->hi = a;
	sc_heap[b]->hi = b;
}

static void sc_heap_push(struct sc_thr *t)
{
	unsigned i = sc_heap_n++;

	sc_heap[i] = t;
	t->hi = i;
	while (i && sc_heap[(i - 1) / 2]->wake_at > sc_heap[i]->wake_at) {
		sc_heap_swap(i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

static struct sc_thr *sc_heap_pop(void)
{
	struct sc_thr *top = sc_heap[0];
	unsigned i = 0;

	sc_heap[0] = sc_heap[--sc_heap_n];
	sc_heap[0]->hi = 0;
	for (;;) {
		unsigned l = 2 * i + 1, r = l + 1, m = i;

		if (l < sc_heap_n && sc_heap[l]->wake_at < sc_heap[m]->wake_at)
			m = l;
		if (r < sc_heap_n && sc_heap[r]->wake_at < sc_heap[m]->wake_at)
			m = r;
		if (m == i)
			break;
		sc_heap_swap(i, m);
		i = m;
	}
	return top;
}

static void sc_rq_push(struct sc_thr *t)
{
	t->state = SC_RQ;
	sc_rq[(sc_rq_h + sc_rq_n++) % (SC_MAXT + 1)] = t;
}

static struct sc_thr *sc_rq_pop(void)
{
	struct sc_thr *t = sc_rq[sc_rq_h];

	sc_rq_h = (sc_rq_h + 1) % (SC_MAXT + 1);
	sc_rq_n--;
	return t;
}

/* The path of file f: shards as the kernel walks them at open (leaf first),
 * the rest as /proc/PID/fd named them at attach. */
static void sc_path(unsigned f, unsigned long long ts)
{
	char p[160];
	int len;
	unsigned flags = GPUIO_PATH_PROCFS, dev = DEV_DATA;

	if (sc_path_sent[f])
		return;
	sc_path_sent[f] = 1;
	if (f < SC_F_FIO) {
		len = snprintf(p, sizeof(p), "shard-%05u.tar%ctrain%cimagenet%cdata", f, 0, 0, 0);
		flags = GPUIO_PATH_COMPONENTS;
		dev = DEV_NVMEFS;
	} else if (f < SC_F_LIB)
		len = snprintf(p, sizeof(p), "/var/tmp/fio/job%u.0.0", f - SC_F_FIO);
	else if (f < SC_F_ETC)
		len = snprintf(p, sizeof(p), "/usr/lib/python3/dist-packages/torch/lib/lib%s_%u.so",
			       f % 3 ? "torch_cuda" : "c10", f - SC_F_LIB);
	else
		len = snprintf(p, sizeof(p), "/var/log/daemon/%u/%s.log", (f - SC_F_ETC) / 20,
			       f % 2 ? "events" : "access");
	{
		struct gpuio_path_event e;
		size_t size = (offsetof(struct gpuio_path_event, data) + (size_t)len + 7) & ~(size_t)7;

		memset(&e, 0, sizeof(e));
		fill_hdr(&e.hdr, GPUIO_REC_PATH, size, 1, 1, ts);
		e.ino = 100000 + f;
		e.dev = dev;
		e.len = (__u16)len;
		e.flags = (__u16)flags;
		memcpy(e.data, p, (size_t)len);
		append(&e, size);
	}
}

static unsigned sc_fdev(unsigned f)
{
	return f < SC_F_FIO ? DEV_NVMEFS : DEV_DATA;
}

/* a wake-up written after the next switch or wake-up (the ring buffer's
 * reservation raced its timestamp): capture order is nearly time order */
static struct gpuio_sched_event sc_held;
static bool sc_has_held;

static void sc_sched(unsigned kind, unsigned flags, unsigned cpu, const struct sc_thr *a,
		     const struct sc_thr *o, unsigned long long ts, unsigned prev_state,
		     unsigned target, const char *ocomm)
{
	struct gpuio_sched_event e;

	memset(&e, 0, sizeof(e));
	fill_hdr(&e.hdr, GPUIO_REC_SCHED, sizeof(e), a ? a->pid : 0, a ? a->tid : 0, ts);
	e.hdr.cpu = cpu;
	e.kind = kind;
	e.flags = flags;
	e.other_pid = o ? o->pid : 0;
	e.other_tid = o ? o->tid : 0;
	e.prev_state = prev_state;
	e.target_cpu = target;
	e.prio = 120;
	snprintf(e.comm, sizeof(e.comm), "%s", ocomm);
	sc_nsched++;
	if (kind == GPUIO_SCHED_WAKE && !sc_has_held && sc_rnd() % 500 == 0) {
		sc_held = e;
		sc_has_held = true;
		return;
	}
	append(&e, sizeof(e));
	if (sc_has_held) {
		append(&sc_held, sizeof(sc_held));
		sc_has_held = false;
	}
}

static struct gpuio_wait_event sc_wait_pending;

/* The WAIT record of a thread going to sleep, written by sc_off() right after its switch. */
static void sc_wait(const struct sc_thr *t, unsigned long long ts, int nr, int fd,
		    unsigned long long ino, unsigned dev, unsigned ftype, unsigned long long addr)
{
	struct gpuio_wait_event w;

	memset(&w, 0, sizeof(w));
	fill_hdr(&w.hdr, GPUIO_REC_WAIT, sizeof(w), t->pid, t->tid, ts);
	w.nr = nr;
	w.fd = fd;
	w.ino = ino;
	w.dev = dev;
	w.ftype = (__u8)ftype;
	w.addr = addr;
	sc_wait_pending = w;
}

static void sc_vfs(struct sc_thr *t, unsigned call, unsigned f, int fd, unsigned long long ts,
		   unsigned long long dur, long long bytes, long long off, unsigned misses,
		   unsigned flags, unsigned seq)
{
	struct vfs_spec s = {
		.pid = t->pid, .tid = t->tid, .call = call, .seq = seq, .ftype = GPUIO_FT_REG,
		.misses = misses, .flags = flags, .ts = ts, .dur = dur,
		.requested = bytes > 0 ? (unsigned long long)bytes : 0, .ino = 100000 + f,
		.ret = bytes, .offset = off, .offset2 = -1, .dev = sc_fdev(f), .fd = fd, .fd2 = -1,
	};

	add_vfs(&s);
	sc_nvfs++;
	t->last_end = ts + dur;
}

static char sc_comm_buf[16];

static const char *sc_idle(unsigned cpu)
{
	snprintf(sc_comm_buf, sizeof(sc_comm_buf), "swapper/%u", cpu);
	return sc_comm_buf;
}

/* t comes on cpu, from the idle task or from prev (which leaves as its own
 * switch says: prev_state, preempted). */
static void sc_on(unsigned cpu, struct sc_thr *t, struct sc_thr *prev, unsigned flags,
		  unsigned prev_state, unsigned long long ts)
{
	sc_sched(GPUIO_SCHED_SWITCH, flags | GPUIO_SF_NEXT_TRACED | (prev ? GPUIO_SF_PREV_TRACED : 0),
		 cpu, prev, t, ts, prev_state, 0, prev ? prev->comm : t->comm);
	sc_cpu[cpu] = t;
	t->state = SC_RUN;
	t->cpu = cpu;
	t->since = ts;
	t->last_end = ts;
	if (sc_wait_pending.hdr.type) {   /* what prev sleeps in: right after its switch */
		append(&sc_wait_pending, sizeof(sc_wait_pending));
		sc_wait_pending.hdr.type = 0;
		sc_nsched++;
	}
	if (t->sleep != SW_NONE) {   /* the call it slept in returns */
		sc_vfs(t, t->call, t->cfile, t->sleep == SW_FAULT ? -1 : t->fd, t->cstart,
		       ts + 1 - t->cstart, t->cbytes, t->coff, (unsigned)(t->cbytes / 4096),
		       t->sleep == SW_FAULT ? GPUIO_PF_MAJOR | GPUIO_PF_SLEPT : 0, t->cseq);
		t->sleep = SW_NONE;
	}
}

/* t leaves cpu: to sleep (prev_state 1 S, 2 D) or preempted; the next in
 * the run queue comes on, else the idle task. */
static void sc_off(unsigned cpu, struct sc_thr *t, unsigned prev_state, bool preempt,
		   unsigned long long ts)
{
	unsigned flags = preempt ? GPUIO_SF_PREEMPT : 0;

	if (sc_rq_n) {
		struct sc_thr *n = sc_rq_pop();

		if (preempt)
			sc_rq_push(t);
		sc_on(cpu, n, t, flags, prev_state, ts);
	} else {
		sc_sched(GPUIO_SCHED_SWITCH, flags | GPUIO_SF_PREV_TRACED, cpu, t, NULL, ts, prev_state,
			 0, sc_idle(cpu));
		if (sc_wait_pending.hdr.type) {
			append(&sc_wait_pending, sizeof(sc_wait_pending));
			sc_wait_pending.hdr.type = 0;
			sc_nsched++;
		}
		sc_cpu[cpu] = NULL;
		if (preempt)
			sc_rq_push(t);
	}
}

static struct sc_thr *sc_running(unsigned role)
{
	unsigned c0 = (unsigned)(sc_rnd() % SC_NCPU);

	for (unsigned i = 0; i < SC_NCPU; i++) {
		struct sc_thr *t = sc_cpu[(c0 + i) % SC_NCPU];

		if (t && (role == ~0u || t->role == role))
			return t;
	}
	return NULL;
}

static unsigned sc_idle_cpu(unsigned dflt)
{
	for (unsigned i = 0; i < SC_NCPU; i++)
		if (!sc_cpu[i])
			return i;
	return dflt;
}

/* A sleeping thread's wake-up: its block requests complete first (an
 * interrupt wakes a thread asleep in I/O), a futex by whoever the role says. */
static void sc_wake(struct sc_thr *t)
{
	unsigned long long ts = sc_now();
	struct sc_thr *w = NULL;
	unsigned cpu, target;

	if (t->sleep != SW_NONE) {
		unsigned long long s = t->cstart + 3000, span = ts - 2000 - s;
		unsigned disk = t->cfile < SC_F_FIO ? 1 : 0;

		for (unsigned k = 0; k < t->nblk; k++) {
			unsigned long long a = s + span * k / t->nblk, b = s + span * (k + 1) / t->nblk;
			struct blk_spec r = {
				.pid = t->pid, .tid = t->tid, .seq = t->cseq,
				.dev = disk ? DEV_NVME : DEV_SDA, .file_dev = sc_fdev(t->cfile),
				.bytes = (unsigned)(t->cbytes / t->nblk),
				.op = t->call == GPUIO_CALL_PWRITE64 ? GPUIO_BLK_WRITE : GPUIO_BLK_READ,
				.rq_flags = GPUIO_RQ_SYNC, .attr = GPUIO_BA_SUBMITTER,
				.ts = a, .issue = a + 500, .complete = b, .sector = sc_sector[disk],
				.ino = 100000 + t->cfile,
			};

			sc_sector[disk] += r.bytes / 512;
			add_block(&r);
			sc_nblk++;
		}
	} else if (t->role == SC_LOOP)
		w = sc_running(SC_WORKER);
	else if (t->role == SC_PIN || t->role == SC_AUX || t->role == SC_WORKER)
		w = sc_running(SC_LOOP);
	if (!w && t->sleep == SW_NONE && sc_rnd() % 2)
		w = sc_running(~0u);
	cpu = w ? w->cpu : (unsigned)(sc_rnd() % SC_NCPU);
	target = sc_idle_cpu(cpu);
	sc_sched(GPUIO_SCHED_WAKE, w ? GPUIO_SF_WAKER_TRACED : 0, cpu, t, w, ts, 0, target,
		 w ? w->comm : sc_idle(cpu));
	sc_rq_push(t);
}

/* t goes to sleep in a call its role makes. */
static void sc_block(unsigned cpu, struct sc_thr *t)
{
	unsigned long long ts = sc_now(), dur = 1000000;
	unsigned r = (unsigned)(sc_rnd() % 100), state = 1;
	int nr = 202, fd = -1;
	unsigned long long ino = 0, addr = 0;
	unsigned dev = 0, ftype = 0;
	bool file = false, fault = false;

	switch (t->role) {
	case SC_LOOP:
		file = r >= 92, fault = r >= 88 && r < 92;
		if (r < 70)
			addr = 0x7f0000001000ull + t->tid * 64, dur = sc_range(50000, 2000000);
		else if (r < 88)
			nr = 7, fd = 9, ftype = GPUIO_FT_FIFO, ino = 900, dur = sc_range(20000, 500000);
		break;
	case SC_WORKER:
		file = r < 70, fault = r >= 70 && r < 78;
		addr = 0x7f0000002000ull + t->tid * 64;
		dur = sc_range(100000, 3000000);
		if (r >= 90)
			nr = 1, fd = 11, ftype = GPUIO_FT_FIFO, ino = 901;   /* a full pipe */
		break;
	case SC_FIO:
		file = r < 92;
		addr = 0x7f0000003000ull;
		dur = sc_range(100000, 1000000);
		break;
	case SC_BY:
		file = r < 8, fault = r == 8;
		if (r < 40)
			nr = 232, fd = 4, dur = sc_range(1000000, 40000000);
		else if (r < 75)
			addr = 0x7f0000004000ull + t->tid * 64, dur = sc_range(200000, 20000000);
		else
			nr = 230, dur = sc_range(1000000, 10000000);
		break;
	default:
		addr = 0x7f0000005000ull + t->tid * 64;
		dur = sc_range(50000, 3000000);
		break;
	}
	if (file || fault) {
		state = 2;
		t->cstart = t->last_end + 100 < ts ? t->last_end + 100 + (ts - t->last_end - 100) / 2 : ts;
		t->cseq = ++t->seq;
		dur = sc_range(30000, 1500000);
		if (fault) {
			t->sleep = SW_FAULT;
			t->call = GPUIO_CALL_PAGE_FAULT;
			t->cfile = SC_F_LIB + (unsigned)(sc_rnd() % SC_NLIB);
			t->cbytes = 4096 * (long long)sc_range(1, 8);
			t->coff = 4096 * (long long)(sc_rnd() % 4096);
			t->nblk = 1;
			nr = GPUIO_WAIT_NR_NONE, fd = -1, addr = 0;
			sc_fc[t->proc][t->cfile - SC_F_LIB].major++;
			sc_fc[t->proc][t->cfile - SC_F_LIB].dirty = true;
			sc_nfault++;
		} else {
			bool wr = t->role == SC_FIO && sc_rnd() % 3 == 0;

			t->sleep = SW_FILE;
			t->call = wr ? GPUIO_CALL_PWRITE64 : t->role == SC_FIO ? GPUIO_CALL_PREAD64 : GPUIO_CALL_READ;
			t->cfile = t->file;
			t->cbytes = t->role == SC_FIO ? 131072 : t->role == SC_BY ? 16384 : 524288;
			t->coff = t->pos;
			t->pos += t->cbytes;
			t->nblk = t->role == SC_BY ? 1 : (unsigned)sc_range(1, 4);
			nr = wr ? 18 : t->role == SC_FIO ? 17 : 0, fd = t->fd, addr = 0;
			ino = 100000 + t->file, dev = sc_fdev(t->file), ftype = GPUIO_FT_REG;
			t->nread++;
		}
	}
	t->state = SC_SLEEP;
	t->wake_at = ts + dur;
	sc_heap_push(t);
	sc_wait(t, ts, nr, fd, ino, dev, ftype, addr);
	sc_off(cpu, t, state, false, ts);
}

static const char *const sc_kernels[] = {
	"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1",
	"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>",
	"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float>>",
	"nchwToNhwcKernel", "void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, 512, true>",
};

/* t, on a CPU, makes a call that does not sleep (or launches a kernel). */
static void sc_work(struct sc_thr *t)
{
	unsigned long long ts = t->last_end + 200, end = sc_t;
	unsigned long long dur;
	unsigned r = (unsigned)(sc_rnd() % 100);

	if (ts + 600 > end)
		return;
	dur = sc_range(300, end - ts - 200 < 40000 ? end - ts - 200 : 40000);
	if (t->role == SC_LOOP && r < 25) {
		unsigned long long ks, ke;

		add_api(&(struct api_spec){ .pid = t->pid, .tid = t->tid, .corr = ++sc_corr,
			.source = GPUIO_API_RUNTIME, .kind = GPUIO_API_LAUNCH, .ts = ts, .end = ts + dur,
			.stream = 7, .name = "cudaLaunchKernel_v7000" });
		t->last_end = ts + dur;
		ks = (sc_gpu_end > ts + dur ? sc_gpu_end : ts + dur) + sc_range(2000, 8000);
		ke = ks + sc_range(20000, 700000);
		sc_gpu_end = ke;
		add_kernel(t->pid, ks, ke, 0, 7, sc_corr, sc_kernels[sc_corr % ARRAY_SIZE(sc_kernels)]);
		sc_nkern++;
		return;
	}
	if (r < 2) {   /* a minor fault: counted, no record */
		unsigned f = (unsigned)(sc_rnd() % SC_NLIB);

		sc_fc[t->proc][f].minor++;
		sc_fc[t->proc][f].dirty = true;
		return;
	}
	if (t->nread >= 64 && (t->role == SC_WORKER || t->role == SC_BY)) {
		/* next file: close this one, open another (its path at the open) */
		unsigned f = t->role == SC_WORKER ? (unsigned)(sc_rnd() % SC_NSHARD)
						  : SC_F_ETC + (unsigned)(sc_rnd() % SC_NETC);

		sc_vfs(t, GPUIO_CALL_CLOSE, t->file, t->fd, ts, dur / 4 + 100, 0, -1, 0, 0, ++t->seq);
		sc_path(f, ts + dur / 4 + 200);
		t->file = f;
		t->pos = 0;
		t->nread = 0;
		sc_vfs(t, GPUIO_CALL_OPENAT, f, t->fd, ts + dur / 4 + 300, dur / 2 + 100, t->fd, -1, 0,
		       0, ++t->seq);
		return;
	}
	{
		unsigned call = t->role == SC_FIO ? (r % 3 ? GPUIO_CALL_PREAD64 : GPUIO_CALL_PWRITE64)
			      : t->role == SC_BY && r % 2 ? GPUIO_CALL_WRITE : GPUIO_CALL_READ;
		long long bytes = t->role == SC_BY ? 512 : t->role == SC_FIO ? 131072 : 65536;

		if (t->role == SC_PIN || t->role == SC_AUX || t->role == SC_LOOP) {
			/* the loop and its threads read what the libraries hold */
			unsigned f = SC_F_LIB + (unsigned)(t->tid % SC_NLIB);

			sc_vfs(t, GPUIO_CALL_PREAD64, f, 20, ts, dur, 4096, 4096 * (long long)(sc_rnd() % 512),
			       0, 0, ++t->seq);
			return;
		}
		sc_vfs(t, call, t->file, t->fd, ts, dur, bytes, t->pos, 0, 0, ++t->seq);
		t->pos += bytes;
		t->nread++;
	}
}

static void sc_stats(unsigned long long ts, int final)
{
	unsigned long long bpf[GPUIO_STAT_MAX] = { 0 };

	for (unsigned p = 0; p < SC_NPROC; p++)
		for (unsigned f = 0; f < SC_NLIB; f++)
			if (sc_fc[p][f].dirty) {
				add_fault_count(sc_proc_pid[p], ts, DEV_DATA, 100000 + SC_F_LIB + f,
						sc_fc[p][f].minor + sc_fc[p][f].major, sc_fc[p][f].major,
						f < 4 ? GPUIO_FC_EXEC : 0);
				sc_fc[p][f].dirty = false;
			}
	bpf[GPUIO_STAT_EVENTS_BLOCK] = sc_nblk;
	add_stats(ts, final, bpf);
}

static struct sc_thr *sc_thread(unsigned pid, unsigned tid, unsigned role, unsigned proc,
				const char *comm, unsigned file, int fd)
{
	struct sc_thr *t = &sc_th[sc_nth++];

	memset(t, 0, sizeof(*t));
	t->pid = pid, t->tid = tid, t->role = role, t->proc = proc, t->comm = comm;
	t->file = file, t->fd = fd;
	t->state = SC_SLEEP;
	t->wake_at = BASE_NS + sc_range(100000, 10000000);   /* asleep when the trace began */
	sc_heap_push(t);
	return t;
}

static void sc_process(unsigned proc, unsigned pid, unsigned ppid, const char *comm,
		       const char *args, size_t alen)
{
	sc_proc_pid[proc] = pid;
	add_proc_pp(GPUIO_PROC_ATTACH, pid, pid, BASE_NS, comm, strlen(comm), args, alen, ppid);
}

static void sc_thread_name(unsigned pid, unsigned tid, const char *comm)
{
	add_proc(GPUIO_PROC_NAME, pid, tid, BASE_NS, comm, strlen(comm), NULL, 0);
}

static void scale_header(struct gpuio_cap_header *h)
{
	h->flags = GPUIO_CAPF_ALL | GPUIO_CAPF_SOCKETS;
	h->ncpus = SC_NCPU;
	snprintf(h->fault_mode, sizeof(h->fault_mode), "tp_btf");
	snprintf(h->sched_mode, sizeof(h->sched_mode), "tp_btf");
	snprintf(h->target, sizeof(h->target), "all");
	snprintf(h->cmdline, sizeof(h->cmdline), "gpuio trace -a -d 150 -o node.json");
}

static void gen_scale(unsigned long long n)
{
	static const char *const daemons[] = {
		"containerd", "kubelet", "dockerd", "node_exporter", "systemd-journal", "rsyslogd",
		"sshd", "chronyd", "nginx", "postgres", "java", "prometheus",
	};
	static const char targs[] = "python3\0train.py\0--workers\0" "6";
	static const char fargs[] = "fio\0--name=randread\0--rw=randrw\0--bs=128k";
	unsigned long long next_stats = BASE_NS + NSEC_PER_SEC, t0;
	unsigned proc = 0;

	sc_t = BASE_NS;
	add_devname(DEV_SDA, "sda", 3);
	add_devname(DEV_NVME, "nvme0n1", 7);
	/* the training job: its main loop, pin memory, autograd, 6 workers */
	sc_process(proc, 1000, 1, "python3", targs, sizeof(targs) - 1);
	sc_thread(1000, 1000, SC_LOOP, proc, "python3", SC_F_LIB, 20);
	sc_thread_name(1000, 1001, "pt_pin_memory");
	sc_thread(1000, 1001, SC_PIN, proc, "pt_pin_memory", SC_F_LIB, 20);
	sc_thread_name(1000, 1002, "pt_autograd_0");
	sc_thread(1000, 1002, SC_AUX, proc, "pt_autograd_0", SC_F_LIB, 20);
	proc++;
	for (unsigned w = 0; w < 6; w++, proc++) {
		sc_process(proc, 1100 + w, 1000, "pt_data_worker", targs, sizeof(targs) - 1);
		sc_thread(1100 + w, 1100 + w, SC_WORKER, proc, "pt_data_worker", w * 300, 30);
		sc_path(w * 300, BASE_NS);
	}
	for (unsigned f = 0; f < 2; f++, proc++) {
		sc_process(proc, 2000 + f, 1, "fio", fargs, sizeof(fargs) - 1);
		sc_thread(2000 + f, 2000 + f, SC_FIO, proc, "fio", SC_F_FIO + f * 4, 5);
		sc_path(SC_F_FIO + f * 4, BASE_NS);
	}
	for (unsigned d = 0; d < ARRAY_SIZE(daemons); d++, proc++) {
		unsigned pid = 3000 + 20 * d;

		sc_process(proc, pid, 1, daemons[d], daemons[d], strlen(daemons[d]));
		for (unsigned k = 0; k < 5; k++) {
			unsigned f = SC_F_ETC + (d * 5 + k) % SC_NETC;

			if (k)
				sc_thread_name(pid, pid + k, daemons[d]);
			sc_thread(pid, pid + k, SC_BY, proc, daemons[d], f, 3 + (int)k);
			sc_path(f, BASE_NS);
		}
	}
	for (unsigned f = SC_F_LIB; f < SC_F_ETC; f++)
		sc_path(f, BASE_NS);
	add_ginfo(1000, BASE_NS + 1000, GPUIO_GPU_ON, 0, 0, 0, "");
	t0 = sc_t;
	while (gpuio_cap_writer__records(W) < n) {
		unsigned c;
		struct sc_thr *t;

		sc_t += sc_range(1000, 9000);
		if (sc_t >= next_stats) {
			sc_stats(sc_now(), 0);
			next_stats += NSEC_PER_SEC;
		}
		while (sc_heap_n && sc_heap[0]->wake_at <= sc_t)
			sc_wake(sc_heap_pop());
		for (c = 0; c < SC_NCPU && sc_rq_n; c++)
			if (!sc_cpu[c])
				sc_on(c, sc_rq_pop(), NULL, 0, 0, sc_now());
		c = (unsigned)(sc_rnd() % SC_NCPU);
		t = sc_cpu[c];
		if (!t || t->since + 2000 > sc_t)
			continue;
		if (sc_nsched * 3 < gpuio_cap_writer__records(W)) {
			if (sc_rq_n && sc_rnd() % 4 == 0)
				sc_off(c, t, 0, true, sc_now());
			else
				sc_block(c, t);
		} else
			sc_work(t);
	}
	if (sc_has_held)
		append(&sc_held, sizeof(sc_held));
	sc_stats(sc_now(), 1);
	n = gpuio_cap_writer__records(W);
	close_capture();
	printf("{\"mode\":\"scale\",\"records\":%llu,\"sched\":%llu,\"vfs\":%llu,\"block\":%llu,"
	       "\"kernels\":%llu,\"page_faults\":%llu,\"threads\":%u,\"seconds\":%.1f}\n", n, sc_nsched,
	       sc_nvfs, sc_nblk, sc_nkern, sc_nfault, sc_nth, (double)(sc_t - t0) / 1e9);
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
		} else if (c.h.type >= GPUIO_REC_GPU_KERNEL && c.h.type <= GPUIO_REC_GPU_OVERHEAD) {
			/* every GPU interval record has its end_ns right after the header */
			__u64 end;

			memcpy(&end, c.b + sizeof(struct gpuio_hdr), 8);
			end += (unsigned long long)mono;
			memcpy(c.b + sizeof(struct gpuio_hdr), &end, 8);
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
		fprintf(stderr, "usage: gen_capture basic|hostile|flows|truncate|corrupt|gpu|big|gpubig|states|gpuwait|sockets|faults|scale OUT.gpuio [N]\n"
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
	if ((!strcmp(mode, "big") || !strcmp(mode, "gpubig")) && argc < 4) {
		fprintf(stderr, "gen_capture: big needs N\n");
		return 2;
	}
	if (!strcmp(mode, "scale") && argc < 4) {
		fprintf(stderr, "gen_capture: scale needs N\n");
		return 2;
	}
	open_capture(out_path, !strcmp(mode, "hostile") ? hostile_header :
		     !strcmp(mode, "faults") ? faults_header :
		     !strcmp(mode, "scale") ? scale_header : NULL);
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
	else if (!strcmp(mode, "gpu"))
		gen_gpu();
	else if (!strcmp(mode, "gpubig"))
		gen_gpubig(strtoull(argv[3], NULL, 0));
	else if (!strcmp(mode, "gpuwait"))
		gen_gpuwait(argc > 3 && !strcmp(argv[3], "nosched"), argc > 3 && !strcmp(argv[3], "stacks"),
			    argc > 3 && !strcmp(argv[3], "collective"));
	else if (!strcmp(mode, "faults"))
		gen_faults();
	else if (!strcmp(mode, "states"))
		gen_states(argc > 3 ? strtoull(argv[3], NULL, 0) : 3000);
	else if (!strcmp(mode, "sockets"))
		gen_sockets();
	else if (!strcmp(mode, "scale"))
		gen_scale(strtoull(argv[3], NULL, 0));
	else if (!strcmp(mode, "big"))
		gen_big(strtoull(argv[3], NULL, 0), argc > 4 ? strtoull(argv[4], NULL, 0) : 16);
	else {
		unlink(out_path);
		fprintf(stderr, "gen_capture: unknown mode '%s'\n", mode);
		return 2;
	}
	return 0;
}
