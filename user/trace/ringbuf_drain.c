// SPDX-License-Identifier: MIT
/* ringbuf_drain.c — ring buffer -> capture file. See ringbuf_drain.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "gpuio.skel.h"
#include "capture/cap_drops.h"
#include "trace/ringbuf_drain.h"
#include "trace/ring_batch.h"
#include "trace/cuda_probes.h"
#include "trace/fault_counts.h"
#include "trace/lost_ledger.h"
#include "trace/thread_time.h"
#include "lib/keyset.h"
#include "lib/log.h"
#include "trace/mapped_paths.h"
#include "trace/procfs.h"
#include "trace/py_procs.h"
#include "trace/native_frames.h"
#include "lib/clock.h"
#include "lib/elf_symtab.h"

struct ringbuf_drain {
	struct gpuio_loader *l;
	struct gpuio_cap_writer *w;
	struct ring_buffer *rb;
	int epfd;                  /* edge-triggered on the ring: see __poll */
	struct keyset *paths;      /* (dev, ino) named in the capture */
	struct mapped_paths *maps; /* processes' file mappings, for a burst of names */
	struct keyset *tids;       /* (pid, tid) named in the capture */
	struct keyset *devs;       /* disks named in the capture */
	struct keyset *stubs;      /* (pid, launch stub address) named or tried */
	struct keyset *cgroups;    /* processes whose cgroup (job identity) was read */
	struct fault_counts *fc;   /* page faults per (process, file), with each snapshot */
	struct py_procs *py;       /* traced processes' interpreters (stacks or samples on), or NULL */
	struct native_frames *nat; /* the stacks' native frames checked and named, or NULL */
	_Alignas(8) __u8 stack_buf[sizeof(struct gpuio_py_stack) +
				   GPUIO_PY_FRAMES_MAX * sizeof(struct gpuio_py_frame)];
	int ncpus;
	__u64 *percpu;
	__u64 vfs, block, cuda, sched;
	__u64 batches, batched;    /* ring batches (bpf/trace/batch.bpf.h), the records in them */
	__u64 ustats[GPUIO_USTAT_MAX];
	int write_err;
};


static void append(struct ringbuf_drain *c, const void *rec, size_t len)
{
	int err = gpuio_cap_writer__append(c->w, rec, len);

	if (err) {
		c->ustats[GPUIO_USTAT_WRITE_ERRORS]++;
		if (!c->write_err) {
			c->write_err = err;
			pr_err("cannot write the capture: %s (events from now on are lost and counted)",
			       strerror(-err));
		}
	}
}

/* A file the kernel did not name (opened before the trace, or inherited). */
static void name_file(struct ringbuf_drain *c, const struct gpuio_hdr *h, int fd,
		      __u32 dev, __u64 ino)
{
	if (fd < 0 || (!ino && !dev) || keyset__test_and_add(c->paths, dev, ino))
		return;
	if (procfs_emit_fd_path(c->w, (pid_t)h->pid, (pid_t)h->tid, fd, dev, ino, h->ts) != 0)
		c->ustats[GPUIO_USTAT_PATH_UNRESOLVED]++;
}

/* A file known only by its mapping (read by page faults, never opened by a
 * traced call, the kernel's walk not done): /proc/PID/maps names it. */
static void name_mapped(struct ringbuf_drain *c, __u32 pid, __u32 dev, __u64 ino, __u64 ts)
{
	if (!pid || (!ino && !dev) || keyset__test_and_add(c->paths, dev, ino))
		return;
	if (procfs_emit_mapped_path(c->maps, c->w, (pid_t)pid, dev, ino, ts) != 0)
		c->ustats[GPUIO_USTAT_PATH_UNRESOLVED]++;
}

/* A record made in userspace (py_procs.c), into the capture */
static void append_any(void *ctx, const void *rec, size_t len)
{
	append(ctx, rec, len);
}

/* A FAULT_COUNT record (fault_counts.c), and its file's name if none yet. */
static void append_rec(void *ctx, const void *rec, size_t len)
{
	const struct gpuio_fault_count *f = rec;
	struct ringbuf_drain *c = ctx;

	append(c, rec, len);
	name_mapped(c, f->hdr.pid, f->dev, f->ino, f->hdr.ts);
}

static void name_thread(struct ringbuf_drain *c, const struct gpuio_hdr *h)
{
	if (!h->tid || keyset__test_and_add(c->tids, h->pid, h->tid))
		return;
	procfs_emit_thread_name(c->w, (pid_t)h->pid, (pid_t)h->tid, h->ts);
}

static int handle(void *ctx, void *data, size_t size);

/* One thread's records back to back (bpf/trace/batch.bpf.h): each handled as if alone. */
static void take_batch(struct ringbuf_drain *c, void *data, size_t size)
{
	int n = ring_batch_each(data, size, handle, c);

	c->batches++;
	if (n < 0)
		c->ustats[GPUIO_USTAT_WRITE_ERRORS]++;
	else
		c->batched += (__u64)n;
}

static void take_proc(struct ringbuf_drain *c, const struct gpuio_proc_event *p)
{
	const struct gpuio_hdr *h = &p->hdr;

	if (p->kind == GPUIO_PROC_FORK || p->kind == GPUIO_PROC_THREAD ||
	    p->kind == GPUIO_PROC_EXEC)
		keyset__test_and_add(c->tids, h->pid, h->tid);
	append(c, p, h->size);
	/* its interpreter: a new image's is found once it is up; a fork has its parent's */
	if (p->kind == GPUIO_PROC_EXEC && h->pid == h->tid)
		py_procs__want(c->py, (pid_t)h->pid, h->ts);
	else if (p->kind == GPUIO_PROC_FORK)
		py_procs__fork(c->py, (pid_t)p->ppid, (pid_t)h->pid, h->ts);
	else if (p->kind == GPUIO_PROC_EXIT)
		py_procs__forget(c->py, (pid_t)h->pid);
	if (p->kind == GPUIO_PROC_EXEC && h->pid == h->tid)
		native_frames__exec(c->nat, (pid_t)h->pid);
	/* a new process: which job it belongs to (its cgroup, inherited at fork) */
	if ((p->kind == GPUIO_PROC_FORK || p->kind == GPUIO_PROC_EXEC) && h->pid == h->tid &&
	    !keyset__test_and_add(c->cgroups, h->pid, 0))
		procfs_emit_cgroup(c->w, (pid_t)h->pid, h->ts);
}

static void take_vfs(struct ringbuf_drain *c, const struct gpuio_vfs_event *e)
{
	const struct gpuio_hdr *h = &e->hdr;

	c->vfs++;
	/* store first: a name found now is valid for this event too */
	append(c, e, h->size);
	name_thread(c, h);
	name_file(c, h, e->fd, e->dev, e->ino);
	if (e->call == GPUIO_CALL_PAGE_FAULT)
		name_mapped(c, h->pid, e->dev, e->ino, h->ts);
	if (e->fd2 >= 0)
		name_file(c, h, e->fd2, e->dev2, e->ino2);
}

static void take_sched(struct ringbuf_drain *c, const struct gpuio_sched_event *e)
{
	const struct gpuio_hdr *h = &e->hdr;
	struct gpuio_hdr next = { .pid = e->other_pid, .tid = e->other_tid, .ts = h->ts };

	c->sched++;
	append(c, e, h->size);
	/* a thread that only sleeps and runs still needs its name */
	if (e->kind != GPUIO_SCHED_SWITCH || (e->flags & GPUIO_SF_PREV_TRACED))
		name_thread(c, h);
	if (e->kind == GPUIO_SCHED_SWITCH && (e->flags & GPUIO_SF_NEXT_TRACED))
		name_thread(c, &next);
}

static void take_block(struct ringbuf_drain *c, const struct gpuio_block_event *b)
{
	const struct gpuio_hdr *h = &b->hdr;

	c->block++;
	append(c, b, h->size);
	if (b->dev && !keyset__test_and_add(c->devs, b->dev, 0))
		procfs_emit_devname(c->w, b->dev, h->ts);
	/* a file read by page faults (mmap, exec) was never opened: /proc maps names it */
	if (b->ino)
		name_mapped(c, h->pid, b->file_dev, b->ino, h->ts);
	if (h->pid)
		name_thread(c, h);
}

static void take_cuda_api(struct ringbuf_drain *c, const struct gpuio_cuda_api *a)
{
	const struct gpuio_hdr *h = &a->hdr;

	c->cuda++;
	append(c, a, h->size);
	name_thread(c, h);
	/* a runtime launch's func is the host stub: its ELF symbol is the
	 * kernel's name (the driver's CUfunction is an opaque handle) */
	if (a->func && a->source == GPUIO_API_UPROBE_RT && a->kind == GPUIO_API_LAUNCH &&
	    !keyset__test_and_add(c->stubs, h->pid, a->func) &&
	    cuda_probes__emit_sym(c->w, (pid_t)h->pid, a->func, h->ts) != 0)
		pr_debug("launch stub %#llx of pid %u: no symbol", (unsigned long long)a->func,
			 h->pid);
}

/* A stack: its native frames checked and named first (native_frames.h) */
static void take_py_stack(struct ringbuf_drain *c, const struct gpuio_py_stack *r)
{
	struct gpuio_py_stack *out = (void *)c->stack_buf;
	size_t n = native_frames__take(c->nat, r, r->hdr.size, out, sizeof(c->stack_buf));

	if (n)
		append(c, out, n);
	else
		append(c, r, r->hdr.size);
}

/* A record from the ring: stored, with what only userspace can add about it. */
static int handle(void *ctx, void *data, size_t size)
{
	struct ringbuf_drain *c = ctx;
	const struct gpuio_hdr *h = data;

	if (size < sizeof(*h) || h->size > size) {
		c->ustats[GPUIO_USTAT_WRITE_ERRORS]++;
		return 0;
	}
	switch (h->type) {
	case GPUIO_REC_RING_BATCH:
		take_batch(c, data, size);
		break;
	case GPUIO_REC_PATH: {
		const struct gpuio_path_event *p = data;

		keyset__test_and_add(c->paths, p->dev, p->ino);
		append(c, data, h->size);
		break;
	}
	case GPUIO_REC_PROC:
		take_proc(c, data);
		break;
	case GPUIO_REC_VFS:
		take_vfs(c, data);
		break;
	case GPUIO_REC_SCHED:
		take_sched(c, data);
		break;
	case GPUIO_REC_BLOCK:
		take_block(c, data);
		break;
	case GPUIO_REC_CUDA_API:
		take_cuda_api(c, data);
		break;
	case GPUIO_REC_PY_STACK:
		take_py_stack(c, data);
		break;
	default:
		append(c, data, h->size);
		break;
	}
	return 0;
}

int ringbuf_drain__new(struct gpuio_loader *l, struct gpuio_cap_writer *w,
			 struct ringbuf_drain **out)
{
	struct ringbuf_drain *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->epfd = -1;
	c->l = l;
	c->w = w;
	c->ncpus = libbpf_num_possible_cpus();
	c->percpu = calloc(c->ncpus > 0 ? c->ncpus : 1, sizeof(__u64));
	c->paths = keyset__new(18);
	c->maps = mapped_paths__new();
	c->tids = keyset__new(16);
	c->devs = keyset__new(8);
	c->stubs = keyset__new(12);
	c->cgroups = keyset__new(12);
	c->fc = fault_counts__new(strcmp(l->modes[GPUIO_LAYER_FAULT], "off") ?
				  bpf_map__fd(l->skel->maps.fault_counts) : -1);
	if (strcmp(l->modes[GPUIO_LAYER_STACK], "off") || strcmp(l->modes[GPUIO_LAYER_SAMPLE], "off"))
		c->py = py_procs__new(bpf_map__fd(l->skel->maps.py_procs), append_any, c);
	if (c->py && l->skel->rodata->py_native)
		c->nat = native_frames__new(append_any, c);
	c->rb = ring_buffer__new(bpf_map__fd(l->skel->maps.events), handle, c, NULL);
	c->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (!c->percpu || !c->paths || !c->maps || !c->tids || !c->devs || !c->stubs || !c->cgroups ||
	    !c->fc || !c->rb || c->epfd < 0) {
		ringbuf_drain__free(c);
		return -ENOMEM;
	}
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET };
	if (epoll_ctl(c->epfd, EPOLL_CTL_ADD, bpf_map__fd(l->skel->maps.events), &ev) < 0) {
		int err = -errno;

		ringbuf_drain__free(c);
		return err;
	}
	*out = c;
	return 0;
}

int ringbuf_drain__poll(struct ringbuf_drain *c, int timeout_ms)
{
	struct epoll_event ev;
	int n;

	/*
	 * Sleep until the BPF side wakes us (once per wakeup_bytes produced: a
	 * batch) or the period ends. Edge-triggered: a level-triggered poll of
	 * a ring buffer reports "ready" whenever any record is waiting, which
	 * under a steady stream is always, and the loop would spin (one
	 * epoll_wait, write and waitpid per ~100 records).
	 */
	/* an interpreter starting is looked at every few ms (py_procs.c) */
	timeout_ms = py_procs__wait_ms(c->py, clock_mono_ns(), timeout_ms);
	n = epoll_wait(c->epfd, &ev, 1, timeout_ms);
	if (n < 0 && errno != EINTR)
		return -errno;
	/* take whatever waits: a slow workload's records must not sit in the
	 * kernel until the end (and be lost to a SIGKILL) */
	n = ring_buffer__consume(c->rb);
	if (n < 0 && n != -EINTR)
		return n;
	py_procs__tick(c->py, clock_mono_ns());
	/* records reach the file every poll: a SIGKILL loses at most one period */
	gpuio_cap_writer__flush(c->w);
	return 0;
}

int ringbuf_drain__drain(struct ringbuf_drain *c)
{
	int n = ring_buffer__consume(c->rb);

	gpuio_cap_writer__flush(c->w);
	return n < 0 ? n : 0;
}

static void read_stats(struct ringbuf_drain *c, __u64 *out)
{
	int fd = bpf_map__fd(c->l->skel->maps.stats);

	for (__u32 i = 0; i < GPUIO_STAT_MAX; i++) {
		out[i] = 0;
		if (bpf_map_lookup_elem(fd, &i, c->percpu) != 0)
			continue;
		for (int cpu = 0; cpu < c->ncpus; cpu++)
			out[i] += c->percpu[cpu];
	}
}

int ringbuf_drain__write_stats(struct ringbuf_drain *c, bool final)
{
	struct gpuio_stats_event ev;
	__u64 all[GPUIO_STAT_MAX];

	memset(&ev, 0, sizeof(ev));
	ev.hdr.type = GPUIO_REC_STATS;
	ev.hdr.size = sizeof(ev);
	ev.hdr.ts = clock_mono_ns();
	/* the fault counts go with the snapshot, before it: a final one covers them */
	if (fault_counts__write(c->fc, ev.hdr.ts, append_rec, c) < 0)
		c->ustats[GPUIO_USTAT_WRITE_ERRORS]++;
	/* the lost calls' sums, once: the batches are flushed, nothing more comes;
	 * and the live threads' time by state, up to this snapshot */
	if (final) {
		lost_ledger__write(bpf_map__fd(c->l->skel->maps.lost_calls), ev.hdr.ts, append_any, c);
		thread_time__write(bpf_map__fd(c->l->skel->maps.thread_time), ev.hdr.ts, append_any, c);
	}
	read_stats(c, all);
	gpuio_stats__set_bpf(&ev, all);
	memcpy(ev.user, c->ustats, sizeof(ev.user));
	ev.records = gpuio_cap_writer__records(c->w) + 1;
	ev.final = final;
	append(c, &ev, sizeof(ev));
	return gpuio_cap_writer__flush(c->w);
}

void ringbuf_drain__totals(struct ringbuf_drain *c, struct ringbuf_drain_totals *t)
{
	__u64 all[GPUIO_STAT_MAX];

	memset(t, 0, sizeof(*t));
	read_stats(c, all);
	gpuio_stats__set_bpf(&t->stats, all);
	memcpy(t->stats.user, c->ustats, sizeof(t->stats.user));
	t->records = gpuio_cap_writer__records(c->w);
	t->vfs = c->vfs;
	t->block = c->block;
	t->cuda = c->cuda;
	t->sched = c->sched;
	t->batches = c->batches;
	t->batched = c->batched;
	t->dropped = gpuio_stats__dropped(&t->stats);
}

void ringbuf_drain__python(struct ringbuf_drain *c, pid_t pid)
{
	py_procs__want(c->py, pid, clock_mono_ns());
}

struct keyset *ringbuf_drain__named(struct ringbuf_drain *c)
{
	return c->paths;
}

bool ringbuf_drain__targets_gone(struct ringbuf_drain *c)
{
	__u32 key;
	int err = bpf_map_get_next_key(bpf_map__fd(c->l->skel->maps.traced), NULL, &key);

	/* libbpf 1.x returns -errno (and sets errno) */
	return err == -ENOENT || (err == -1 && errno == ENOENT);
}

/* What the native frames came to: the frames left out are said, not dropped silently */
static void native_frames_said(const struct native_frames *n)
{
	unsigned long named, cut;

	native_frames__counts(n, &named, &cut);
	if (named || cut)
		pr_info("native frames: %lu addresses named; %lu frames left out (not in a file, or "
			"not a return address: a frame-pointer chain through code without them)",
			named, cut);
}

void ringbuf_drain__free(struct ringbuf_drain *c)
{
	if (!c)
		return;
	ring_buffer__free(c->rb);
	if (c->epfd >= 0)
		close(c->epfd);
	keyset__free(c->paths);
	mapped_paths__free(c->maps);
	keyset__free(c->tids);
	keyset__free(c->devs);
	keyset__free(c->stubs);
	keyset__free(c->cgroups);
	fault_counts__free(c->fc);
	py_procs__free(c->py);
	native_frames_said(c->nat);
	native_frames__free(c->nat);
	elf_symtab__cache_free();
	free(c->percpu);
	free(c);
}
