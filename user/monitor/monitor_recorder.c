// SPDX-License-Identifier: MIT
/*
 * monitor_recorder.c — the flight recorder. See monitor_recorder.h.
 *
 * Memory is fixed at start: a ring of fixed-size slots for VFS, block and
 * GPU records (time-window eviction from the head, and the oldest evicted
 * early — counted — when the byte cap is reached first), plus direct-mapped
 * tables of the naming records (paths, process names, sockets' addresses) that the window's
 * events refer to but that the kernel sends only once. A dump writes a
 * capture of the window (names first), exports it with the existing
 * exporters and deletes the capture.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "gpuio.skel.h"
#include "capture/capture.h"
#include "export/export.h"
#include "lib/keyset.h"
#include "trace/loader.h"
#include "trace/ring_batch.h"
#include "lib/log.h"
#include "monitor/monitor_agg.h"
#include "monitor/monitor_recorder.h"
#include "trace/procfs.h"
#include "lib/clock.h"
#include "lib/units.h"

#define SLOT 192                 /* VFS 120, block 96, CUDA API 128 bytes */
#define PATH_SLOTS 65536        /* a node's file names (torch alone imports ~2,000) */
#define PATH_REC_MAX 1024        /* longer paths are named from /proc at dump */
#define PROC_SLOTS 4096
#define SOCK_SLOTS 8192          /* sockets' addresses, by (dev, inode): torch opens one a tensor */

struct slot { union { struct gpuio_hdr h; char b[SLOT]; }; };

struct monitor_recorder {
	struct monitor_recorder_opts o;
	char dump_dir[PATH_MAX];
	struct gpuio_loader *l;
	struct ring_buffer *rb;
	struct slot *ring;
	size_t nslots, head, count;
	struct gpuio_path_event *paths[PATH_SLOTS];
	struct gpuio_proc_event *procs;          /* PROC_SLOTS, hdr.type 0 = empty */
	struct gpuio_proc_event *forks;          /* PROC_SLOTS: each process's fork (its parent) */
	struct gpuio_sock_peer *socks;           /* SOCK_SLOTS, hdr.type 0 = empty */
	monitor_recorder_event_fn fn;
	void *fn_ctx;
	__u64 *percpu;
	int ncpus;
	unsigned seq;
	/* counters */
	__u64 received, evicted_early, skipped, names_skipped, names_evicted, dumps, dump_errors;
	__u64 socks_evicted, procs_evicted;       /* a table slot taken by another's */
	size_t name_bytes;                       /* the paths table's records */
	__u64 last_dump_bytes, last_dump_events;
	double last_dump_secs;
};


static void expire(struct monitor_recorder *r, __u64 now)
{
	__u64 cutoff = now > r->o.window_ns ? now - r->o.window_ns : 0;

	while (r->count && r->ring[r->head].h.ts < cutoff) {
		r->head = (r->head + 1) % r->nslots;
		r->count--;
	}
}

static void ring_put(struct monitor_recorder *r, const void *rec, size_t len)
{
	size_t at;

	if (r->count == r->nslots) {
		/* the byte cap before the window: the oldest goes, counted */
		r->head = (r->head + 1) % r->nslots;
		r->count--;
		r->evicted_early++;
	}
	at = (r->head + r->count) % r->nslots;
	memcpy(r->ring[at].b, rec, len);
	r->count++;
}

static __u32 path_slot(__u32 dev, __u64 ino)
{
	return (__u32)(((ino ^ ((__u64)dev << 32)) * 0x9E3779B97F4A7C15ull) >> 40) & (PATH_SLOTS - 1);
}

static void keep_path(struct monitor_recorder *r, const struct gpuio_path_event *p)
{
	struct gpuio_path_event **s = &r->paths[path_slot(p->dev, p->ino)];

	if (p->hdr.size > PATH_REC_MAX) {
		r->names_skipped++;
		return;
	}
	/* another file's name in the slot: gone, and counted (its events
	 * in the window, if any, are named from /proc or left unnamed) */
	if (*s && ((*s)->dev != p->dev || (*s)->ino != p->ino))
		r->names_evicted++;
	if (!*s || (*s)->hdr.size != p->hdr.size) {
		size_t had = *s ? (*s)->hdr.size : 0;
		void *n = realloc(*s, p->hdr.size);

		if (!n) {
			r->names_skipped++;
			return;
		}
		*s = n;
		r->name_bytes += p->hdr.size - had;
	}
	memcpy(*s, p, p->hdr.size);
}

static void keep_proc(struct monitor_recorder *r, const struct gpuio_proc_event *p)
{
	size_t at = (p->hdr.tid * 2654435761u >> 20) & (PROC_SLOTS - 1);
	struct gpuio_proc_event *s = &r->procs[at];

	/* the latest name-bearing record per thread; an exit names nothing new */
	if (p->kind == GPUIO_PROC_EXIT)
		return;
	/* and the fork apart: who a process's parent is (a loop's data
	 * producers are its descendants) outlives its later names */
	if (p->kind == GPUIO_PROC_FORK) {
		if (r->forks[at].hdr.type && r->forks[at].hdr.tid != p->hdr.tid)
			r->procs_evicted++;
		memcpy(&r->forks[at], p, p->hdr.size < sizeof(*s) ? p->hdr.size : sizeof(*s));
	}
	if (s->hdr.type && s->hdr.tid != p->hdr.tid)
		r->procs_evicted++;       /* another thread's name: gone, counted */
	memcpy(s, p, p->hdr.size < sizeof(*s) ? p->hdr.size : sizeof(*s));
}

/* A socket's addresses, named once by the kernel: kept like a path. */
static void keep_sock(struct monitor_recorder *r, const struct gpuio_sock_peer *p)
{
	struct gpuio_sock_peer *s = &r->socks[path_slot(p->dev, p->ino) & (SOCK_SLOTS - 1)];

	if (s->hdr.type && (s->dev != p->dev || s->ino != p->ino))
		r->socks_evicted++;       /* another socket's addresses: gone, counted */
	memcpy(s, p, p->hdr.size < sizeof(*s) ? p->hdr.size : sizeof(*s));
}

static int handle(void *ctx, void *data, size_t size)
{
	struct monitor_recorder *r = ctx;
	const struct gpuio_hdr *h = data;

	if (size < sizeof(*h) || h->size > size || h->size < sizeof(*h))
		return 0;
	/* a thread's VFS records sent together: each kept as if alone */
	if (h->type == GPUIO_REC_RING_BATCH) {
		if (ring_batch_each(data, size, handle, ctx) < 0)
			r->skipped++;
		return 0;
	}
	r->received++;
	switch (h->type) {
	case GPUIO_REC_PATH:
		keep_path(r, data);
		return 0;
	case GPUIO_REC_PROC:
		keep_proc(r, data);
		return 0;
	case GPUIO_REC_SOCK_PEER:
		keep_sock(r, data);
		return 0;
	default:
		if (h->size > SLOT) {
			r->skipped++;
			return 0;
		}
		ring_put(r, data, h->size);
		if (r->fn)
			r->fn(r->fn_ctx, h);
		return 0;
	}
}

int monitor_recorder__open(const struct monitor_recorder_opts *o, struct monitor_recorder **out)
{
	struct gpuio_loader_opts lo = { 0 };
	struct monitor_recorder *r;
	int err;

	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->o = *o;
	if (!realpath(o->dump_dir, r->dump_dir)) {
		err = -errno;
		pr_err("--dump-dir %s: %s", o->dump_dir, strerror(errno));
		free(r);
		return err;
	}
	r->nslots = o->max_bytes / sizeof(struct slot);
	if (r->nslots < 1024)
		r->nslots = 1024;
	r->ring = calloc(r->nslots, sizeof(struct slot));
	r->procs = calloc(PROC_SLOTS, sizeof(*r->procs));
	r->forks = calloc(PROC_SLOTS, sizeof(*r->forks));
	r->socks = calloc(SOCK_SLOTS, sizeof(*r->socks));
	r->ncpus = libbpf_num_possible_cpus();
	r->percpu = calloc(r->ncpus > 0 ? r->ncpus : 1, sizeof(__u64));
	if (!r->ring || !r->procs || !r->forks || !r->socks || !r->percpu) {
		monitor_recorder__free(r);
		return -ENOMEM;
	}
	lo.trace_all = true;
	/* page faults node-wide (a mapping lookup per fault of every process)
	 * are not for an always-on recorder: gpuio trace -a has them */
	lo.no_faults = true;
	/* socket calls as trace -a has them: a loop's socket reads are its
	 * receives, not data it fetched (the report tells the loop by them) */
	lo.sockets = true;
	lo.self_tgid = (__u32)getpid();
	lo.ringbuf_bytes = o->ringbuf_bytes;
	err = gpuio_loader__open(&lo, &r->l);
	if (err) {
		r->l = NULL;
		monitor_recorder__free(r);
		return err;
	}
	r->rb = ring_buffer__new(bpf_map__fd(r->l->skel->maps.events), handle, r, NULL);
	if (!r->rb) {
		monitor_recorder__free(r);
		return -ENOMEM;
	}
	*out = r;
	return 0;
}

void monitor_recorder__on_event(struct monitor_recorder *r, monitor_recorder_event_fn fn, void *ctx)
{
	r->fn = fn;
	r->fn_ctx = ctx;
}

int monitor_recorder__poll(struct monitor_recorder *r, int timeout_ms)
{
	int n = ring_buffer__poll(r->rb, timeout_ms);

	if (n < 0 && n != -EINTR)
		return n;
	/* wakeups are batched in the kernel: take what waits every period */
	n = ring_buffer__consume(r->rb);
	if (n < 0 && n != -EINTR)
		return n;
	expire(r, clock_mono_ns());
	return 0;
}

const char *monitor_recorder__modes(const struct monitor_recorder *r)
{
	static char buf[256];

	gpuio_loader__modes_text(r->l, buf, sizeof(buf));
	return buf;
}

/* ------------------------------------------------------------------ dump */

static void fill_header(struct monitor_recorder *r, struct gpuio_cap_header *h, const char *about,
			__u64 from)
{
	gpuio_cap_header__init(h, (__u32)r->ncpus, GPUIO_CAPF_ALL);
	/* the clocks' anchor moved back to the window's start: its times from 0 */
	if (from && from < h->monotonic_ns) {
		h->realtime_ns -= h->monotonic_ns - from;
		h->monotonic_ns = from;
	}
	gpuio_loader__describe(r->l, h);
	if (r->o.node_name && *r->o.node_name)
		snprintf(h->hostname, sizeof(h->hostname), "%s", r->o.node_name);
	if (about)
		snprintf(h->target, sizeof(h->target), "%s", about);
	else
		snprintf(h->target, sizeof(h->target), "monitor flight recorder (all, last %.3gs)",
			 r->o.window_ns / NS_PER_SEC_F);
	snprintf(h->cmdline, sizeof(h->cmdline), "%s", r->o.cmdline ? r->o.cmdline : "gpuio monitor");
}

static void read_stats(struct monitor_recorder *r, __u64 *out)
{
	int fd = bpf_map__fd(r->l->skel->maps.stats);

	for (__u32 i = 0; i < GPUIO_STAT_MAX; i++) {
		out[i] = 0;
		if (bpf_map_lookup_elem(fd, &i, r->percpu) != 0)
			continue;
		for (int c = 0; c < r->ncpus; c++)
			out[i] += r->percpu[c];
	}
}

struct dumpfile { char name[NAME_MAX + 1]; time_t mtime; off_t size; };

static int by_newest(const void *a, const void *b)
{
	const struct dumpfile *x = a, *y = b;

	return x->mtime != y->mtime ? (x->mtime < y->mtime ? 1 : -1) : strcmp(y->name, x->name);
}

/* Keep the newest `keep` dumps within dir_max_bytes (the newest always). */
static void prune(struct monitor_recorder *r)
{
	struct dumpfile *v = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	__u64 total = 0;
	DIR *d = opendir(r->dump_dir);

	if (!d)
		return;
	while ((de = readdir(d))) {
		struct stat st;

		if (strncmp(de->d_name, "gpuio-dump-", 11) ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		if (n == cap) {
			struct dumpfile *nv = realloc(v, (cap = cap ? cap * 2 : 64) * sizeof(*v));
			if (!nv)
				break;
			v = nv;
		}
		snprintf(v[n].name, sizeof(v[n].name), "%s", de->d_name);
		v[n].mtime = st.st_mtime;
		v[n].size = st.st_size;
		n++;
	}
	qsort(v, n, sizeof(*v), by_newest);
	for (size_t i = 0; i < n; i++) {
		total += (__u64)v[i].size;
		if (i > 0 && (i >= r->o.keep || total > r->o.dir_max_bytes)) {
			if (unlinkat(dirfd(d), v[i].name, 0) == 0)
				pr_info("monitor: removed old dump %s/%s (--dump-keep %u, --dump-max-bytes)",
					r->dump_dir, v[i].name, r->o.keep);
		}
	}
	closedir(d);
	free(v);
}

/* What a dump of the window needs named: its threads, files and disks. */
struct dump_names {
	struct keyset *tids, *files, *named;
	__u32 devs[64];
	size_t ndevs;
};

/* Pass 1: who and what the window's events name. */
static void dump_collect(struct monitor_recorder *r, __u64 cutoff, __u64 until, struct dump_names *d)
{
	for (size_t i = 0; i < r->count; i++) {
		const struct slot *s = &r->ring[(r->head + i) % r->nslots];

		if (s->h.ts < cutoff || s->h.ts > until)
			continue;
		keyset__test_and_add(d->tids, s->h.pid, s->h.tid);
		if (s->h.type == GPUIO_REC_VFS) {
			const struct gpuio_vfs_event *e = (const void *)s;

			keyset__test_and_add(d->files, e->dev, e->ino);
			if (e->fd2 >= 0)
				keyset__test_and_add(d->files, e->dev2, e->ino2);
		} else if (s->h.type == GPUIO_REC_BLOCK) {
			const struct gpuio_block_event *b = (const void *)s;
			size_t k;

			if (b->ino)
				keyset__test_and_add(d->files, b->file_dev, b->ino);
			for (k = 0; k < d->ndevs && d->devs[k] != b->dev; k++)
				;
			if (k == d->ndevs && d->ndevs < 64 && b->dev)
				d->devs[d->ndevs++] = b->dev;
		}
	}
}

/* The names the tables hold for them (times moved up to the window's start). */
static __u64 clamp_ts(__u64 ts, __u64 lo, __u64 hi)
{
	return ts < lo ? lo : ts > hi ? hi : ts;
}

static void dump_names(struct monitor_recorder *r, struct gpuio_cap_writer *w, __u64 cutoff,
		       __u64 until, struct dump_names *d)
{
	for (size_t i = 0; i < PROC_SLOTS; i++) {
		struct gpuio_proc_event f = r->forks[i];

		if (!f.hdr.type || !keyset__contains(d->tids, f.hdr.pid, f.hdr.tid) ||
		    (r->procs[i].hdr.tid == f.hdr.tid && r->procs[i].kind == GPUIO_PROC_FORK))
			continue;
		f.hdr.ts = clamp_ts(f.hdr.ts, cutoff, until);
		gpuio_cap_writer__append(w, &f, f.hdr.size);
	}
	for (size_t i = 0; i < PROC_SLOTS; i++) {
		struct gpuio_proc_event p = r->procs[i];

		if (!p.hdr.type || !keyset__contains(d->tids, p.hdr.pid, p.hdr.tid))
			continue;
		p.hdr.ts = clamp_ts(p.hdr.ts, cutoff, until);
		keyset__test_and_add(d->named, p.hdr.pid, ((__u64)1 << 63) | p.hdr.tid);
		gpuio_cap_writer__append(w, &p, p.hdr.size);
	}
	for (size_t i = 0; i < PATH_SLOTS; i++) {
		struct gpuio_path_event *p = r->paths[i];
		__u64 ts;

		if (!p || !keyset__contains(d->files, p->dev, p->ino))
			continue;
		ts = p->hdr.ts;
		p->hdr.ts = clamp_ts(ts, cutoff, until);
		keyset__test_and_add(d->named, p->dev, p->ino);
		gpuio_cap_writer__append(w, p, p->hdr.size);
		p->hdr.ts = ts;
	}
	for (size_t i = 0; i < SOCK_SLOTS; i++) {
		struct gpuio_sock_peer sp = r->socks[i];

		if (!sp.hdr.type || !keyset__contains(d->files, sp.dev, sp.ino))
			continue;
		sp.hdr.ts = clamp_ts(sp.hdr.ts, cutoff, until);
		gpuio_cap_writer__append(w, &sp, sp.hdr.size);
	}
	for (size_t k = 0; k < d->ndevs; k++)
		procfs_emit_devname(w, d->devs[k], cutoff);
}

/* Pass 2: the events, naming from /proc what the kernel named before the
 * daemon started (or what the tables forgot). Returns the events written. */
static __u64 dump_events(struct monitor_recorder *r, struct gpuio_cap_writer *w, __u64 cutoff,
			 __u64 until, struct dump_names *d)
{
	__u64 events = 0;

	for (size_t i = 0; i < r->count; i++) {
		const struct slot *s = &r->ring[(r->head + i) % r->nslots];

		if (s->h.ts < cutoff || s->h.ts > until)
			continue;
		gpuio_cap_writer__append(w, s, s->h.size);
		events++;
		if (s->h.tid && !keyset__test_and_add(d->named, s->h.pid, ((__u64)1 << 63) | s->h.tid))
			procfs_emit_thread_name(w, (pid_t)s->h.pid, (pid_t)s->h.tid, s->h.ts);
		if (s->h.type == GPUIO_REC_VFS) {
			const struct gpuio_vfs_event *e = (const void *)s;

			if ((e->dev || e->ino) && !keyset__test_and_add(d->named, e->dev, e->ino))
				procfs_emit_fd_path(w, (pid_t)e->hdr.pid, (pid_t)e->hdr.tid, e->fd,
						    e->dev, e->ino, e->hdr.ts);
		}
	}
	return events;
}

/* The capture beside the export, as NAME.gpuio (NAME: the export's without
 * its format's suffix), for `gpuio report`. 0 or -errno. */
static int keep_capture(const char *cap, const char *out)
{
	char kept[PATH_MAX + 64];
	const char *dot = strstr(out, ".pftrace");
	size_t n = dot ? (size_t)(dot - out) : strlen(out);

	if (!dot && (dot = strstr(out, ".json")))
		n = (size_t)(dot - out);
	snprintf(kept, sizeof(kept), "%.*s.gpuio", (int)n, out);
	int err;

	if (rename(cap, kept) == 0)
		return 0;
	err = -errno;
	pr_err("monitor: cannot keep the dump's capture as %s: %s", kept, strerror(-err));
	return err;
}

/* The window as a capture file (the final stats record last). 0 or -errno. */
static int dump_capture(struct monitor_recorder *r, const char *cap, const struct monitor_dump_req *q,
			__u64 t0, __u64 *events)
{
	struct dump_names d = { .tids = keyset__new(16), .files = keyset__new(16),
				.named = keyset__new(16) };
	__u64 cutoff = t0 > r->o.window_ns ? t0 - r->o.window_ns : 0;
	__u64 until = q->until_ns && q->until_ns < t0 ? q->until_ns : t0;
	struct gpuio_cap_writer *w = NULL;
	struct gpuio_cap_header hdr;
	struct gpuio_stats_event st;
	__u64 all[GPUIO_STAT_MAX];
	int err = -ENOMEM;

	if (!d.tids || !d.files || !d.named)
		goto out;
	if (q->from_ns > cutoff)
		cutoff = q->from_ns;
	fill_header(r, &hdr, q->about, cutoff);
	err = gpuio_cap_writer__create(cap, &hdr, (uid_t)-1, (gid_t)-1, &w);
	if (err) {
		pr_err("monitor: cannot write %s: %s", cap, strerror(-err));
		goto out;
	}
	dump_collect(r, cutoff, until, &d);
	dump_names(r, w, cutoff, until, &d);
	*events = dump_events(r, w, cutoff, until, &d);
	memset(&st, 0, sizeof(st));
	st.hdr.type = GPUIO_REC_STATS;
	st.hdr.size = sizeof(st);
	st.hdr.ts = until;
	read_stats(r, all);
	gpuio_stats__set_bpf(&st, all);
	st.records = gpuio_cap_writer__records(w) + 1;
	st.final = 1;
	gpuio_cap_writer__append(w, &st, sizeof(st));
	err = gpuio_cap_writer__close(w);
	if (err)
		pr_err("monitor: cannot write %s: %s", cap, strerror(-err));
out:
	keyset__free(d.tids);
	keyset__free(d.files);
	keyset__free(d.named);
	return err;
}

__u64 monitor_recorder__oldest(const struct monitor_recorder *r)
{
	return r->count ? r->ring[r->head].h.ts : 0;
}

int monitor_recorder__dump(struct monitor_recorder *r, const struct monitor_dump_req *q,
			   char *out, size_t outlen)
{
	struct gpuio_export_opts eo = { .owner_uid = (uid_t)-1, .owner_gid = (gid_t)-1 };
	struct gpuio_export_stats es = { 0 };
	char cap[PATH_MAX + 32], stamp[32];
	__u64 t0 = clock_mono_ns(), events = 0;
	time_t now = time(NULL);
	struct tm tm;
	int err;

	/* what is still in the ring buffer belongs in the window */
	/* what running threads still hold in their batches, into the ring first */
	gpuio_loader__send_batches(r->l);
	ring_buffer__consume(r->rb);
	expire(r, t0);
	localtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	snprintf(out, outlen, "%s/gpuio-dump-%s-%u-%s.%s", r->dump_dir, stamp, ++r->seq, q->reason,
		 r->o.format);
	snprintf(cap, sizeof(cap), "%s/.gpuio-dump-%d.gpuio", r->dump_dir, (int)getpid());
	err = dump_capture(r, cap, q, t0, &events);
	if (!err)
		err = gpuio_export(cap, out, &eo, &es);
	if (!err && q->keep_capture)
		err = keep_capture(cap, out);
	if (!err) {
		r->last_dump_events = events;
		r->last_dump_bytes = es.output_bytes;
		r->last_dump_secs = (clock_mono_ns() - t0) / NS_PER_SEC_F;
		prune(r);
	}
	unlink(cap);
	if (err)
		r->dump_errors++;
	else
		r->dumps++;
	return err;
}

void monitor_recorder__metrics(struct mon_buf *b, void *ctx)
{
	struct monitor_recorder *r = ctx;
	__u64 st[GPUIO_STAT_MAX];

	read_stats(r, st);
	mon_buf__printf(b, "# HELP gpuio_recorder_events Events in the flight recorder's window.\n"
			"# TYPE gpuio_recorder_events gauge\ngpuio_recorder_events %zu\n", r->count);
	mon_buf__printf(b, "# HELP gpuio_recorder_capacity_events Events the recorder's memory holds.\n"
			"# TYPE gpuio_recorder_capacity_events gauge\ngpuio_recorder_capacity_events %zu\n",
			r->nslots);
	mon_buf__printf(b, "# HELP gpuio_recorder_window_seconds The recorder's window.\n"
			"# TYPE gpuio_recorder_window_seconds gauge\ngpuio_recorder_window_seconds %.3f\n",
			r->o.window_ns / NS_PER_SEC_F);
	mon_buf__printf(b, "# HELP gpuio_recorder_memory_bytes Memory of the ring and the name tables.\n"
			"# TYPE gpuio_recorder_memory_bytes gauge\ngpuio_recorder_memory_bytes %zu\n",
			r->nslots * sizeof(struct slot) + 2 * PROC_SLOTS * sizeof(*r->procs) +
			SOCK_SLOTS * sizeof(*r->socks) + PATH_SLOTS * sizeof(r->paths[0]) +
			r->name_bytes);
	mon_buf__printf(b, "# HELP gpuio_recorder_received_total Records received from the kernel.\n"
			"# TYPE gpuio_recorder_received_total counter\ngpuio_recorder_received_total %llu\n",
			(unsigned long long)r->received);
	mon_buf__printf(b, "# HELP gpuio_recorder_lost_total Events lost, by reason (ring buffer full in the kernel; evicted before the window ended because the memory cap was reached; too large; a name too long, or its table slot taken by another file's, socket's or thread's).\n"
			"# TYPE gpuio_recorder_lost_total counter\n"
			"gpuio_recorder_lost_total{reason=\"ringbuf_vfs\"} %llu\n"
			"gpuio_recorder_lost_total{reason=\"ringbuf_block\"} %llu\n"
			"gpuio_recorder_lost_total{reason=\"ringbuf_path\"} %llu\n"
			"gpuio_recorder_lost_total{reason=\"ringbuf_proc\"} %llu\n"
			"gpuio_recorder_lost_total{reason=\"request_map_full\"} %llu\n"
			"gpuio_recorder_lost_total{reason=\"task_storage\"} %llu\n"
			"gpuio_recorder_lost_total{reason=\"memory_cap\"} %llu\n"
			"gpuio_recorder_lost_total{reason=\"too_large\"} %llu\n"
			"gpuio_recorder_lost_total{reason=\"name_too_long\"} %llu\n"
			"gpuio_recorder_lost_total{reason=\"name_evicted\"} %llu\n"
			"gpuio_recorder_lost_total{reason=\"sock_evicted\"} %llu\n"
			"gpuio_recorder_lost_total{reason=\"proc_evicted\"} %llu\n",
			(unsigned long long)st[GPUIO_STAT_RB_DROP_VFS],
			(unsigned long long)st[GPUIO_STAT_RB_DROP_BLOCK],
			(unsigned long long)st[GPUIO_STAT_RB_DROP_PATH],
			(unsigned long long)st[GPUIO_STAT_RB_DROP_PROC],
			(unsigned long long)st[GPUIO_STAT_MAP_FULL_RQ],
			(unsigned long long)st[GPUIO_STAT_MAP_FULL_TASK],
			(unsigned long long)r->evicted_early, (unsigned long long)r->skipped,
			(unsigned long long)r->names_skipped, (unsigned long long)r->names_evicted,
			(unsigned long long)r->socks_evicted, (unsigned long long)r->procs_evicted);
	mon_buf__printf(b, "# HELP gpuio_recorder_dumps_total Dumps written (result=error: failed).\n"
			"# TYPE gpuio_recorder_dumps_total counter\n"
			"gpuio_recorder_dumps_total{result=\"ok\"} %llu\n"
			"gpuio_recorder_dumps_total{result=\"error\"} %llu\n",
			(unsigned long long)r->dumps, (unsigned long long)r->dump_errors);
	mon_buf__printf(b, "# HELP gpuio_recorder_last_dump_seconds Time the last dump took.\n"
			"# TYPE gpuio_recorder_last_dump_seconds gauge\ngpuio_recorder_last_dump_seconds %.3f\n",
			r->last_dump_secs);
}

void monitor_recorder__free(struct monitor_recorder *r)
{
	if (!r)
		return;
	ring_buffer__free(r->rb);
	gpuio_loader__destroy(r->l);
	for (size_t i = 0; i < PATH_SLOTS; i++)
		free(r->paths[i]);
	free(r->ring);
	free(r->procs);
	free(r->forks);
	free(r->socks);
	free(r->percpu);
	free(r);
}
