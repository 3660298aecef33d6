// SPDX-License-Identifier: MIT
/*
 * session.c — a capture read once, or followed as it is written (session.h):
 * the reader, the shared tables, and the one place that turns a record's
 * type into the handler to call.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/file_io.h"
#include "lib/kmap.h"
#include "model/peer_names.h"
#include "model/proc_names.h"
#include "model/sched_tab.h"
#include "model/stacks.h"
#include "model/session.h"

struct spath {
	char *s;
	uint32_t len;
};

struct sdev {
	bool named;
	char name[33];
};

/* GPU records read back by offset: a few windows of the file, least
 * recently used replaced (GPU records come in CUPTI buffers: time order
 * jumps between a few places of the file). */
#define RA_SLOTS 16
#define RA_BLOCK (256u << 10)
struct read_at {
	int fd;
	uint64_t tick;
	struct {
		unsigned char *buf;
		uint64_t base, used;
		size_t len;
	} s[RA_SLOTS];
	union {
		struct gpuio_hdr h;
		unsigned char b[GPUIO_REC_SIZE_MAX + 16];
	} rec;
};

struct model_session {
	const char *path;
	struct gpuio_cap_reader *r;
	struct model_facts f;
	uint64_t rec_off;
	char err[200];

	struct kmap proc_map;           /* (pid, 0) -> procs[] */
	struct model_proc *procs;
	size_t nprocs, cprocs;
	struct kmap thread_map;         /* (pid, tid) -> threads[] */
	struct model_thread *threads;
	size_t nthreads, cthreads;
	struct kmap path_map;           /* (dev, ino) -> paths[] */
	struct spath *paths;
	size_t npaths, cpaths;
	struct kmap dev_map;            /* (dev, 0) -> devs[] */
	struct sdev *devs;
	size_t ndevs, cdevs;
	struct kmap peer_map;           /* (dev, ino) -> peers[] */
	struct model_peer *peers;
	size_t npeers, cpeers;
	struct kmap coll_map;           /* (pid, 0) -> colls[] */
	struct model_collector *colls;
	size_t ncolls, ccolls;
	struct sched_tab sched;
	struct model_stacks *stacks;    /* Python stacks: made at the first record of them */
	uint64_t at;                    /* the ordinal of the record handled (1: the first) */
	struct read_at *ra;
};

/* ---- open, free ---- */

static int session_open(const char *path, bool follow, struct model_session **out,
			char *err, size_t errlen)
{
	struct model_session *s = calloc(1, sizeof(*s));
	int rc;

	if (!s) {
		snprintf(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	s->path = path;
	rc = follow ? gpuio_cap_reader__open_follow(path, &s->r, err, errlen) :
		      gpuio_cap_reader__open(path, &s->r, err, errlen);
	if (rc) {
		free(s);
		return rc;
	}
	s->f.hdr = gpuio_cap_reader__header(s->r);
	*out = s;
	return 0;
}

int model_session__open(const char *path, struct model_session **out, char *err, size_t errlen)
{
	return session_open(path, false, out, err, errlen);
}

int model_session__open_follow(const char *path, struct model_session **out, char *err,
			       size_t errlen)
{
	return session_open(path, true, out, err, errlen);
}

static void read_at_free(struct read_at *c)
{
	if (!c)
		return;
	for (int i = 0; i < RA_SLOTS; i++)
		free(c->s[i].buf);
	if (c->fd >= 0)
		close(c->fd);
	free(c);
}

void model_session__free(struct model_session *s)
{
	if (!s)
		return;
	gpuio_cap_reader__close(s->r);
	for (size_t i = 0; i < s->nprocs; i++) {
		free((char *)s->procs[i].args);
		free((char *)s->procs[i].cgroup);
	}
	for (size_t i = 0; i < s->npaths; i++)
		free(s->paths[i].s);
	free(s->procs);
	free(s->threads);
	free(s->paths);
	free(s->devs);
	free(s->colls);
	free(s->peers);
	kmap__free(&s->peer_map);
	kmap__free(&s->proc_map);
	kmap__free(&s->thread_map);
	kmap__free(&s->path_map);
	kmap__free(&s->dev_map);
	kmap__free(&s->coll_map);
	sched_tab__free(&s->sched);
	model_stacks__free(s->stacks);
	read_at_free(s->ra);
	free(s);
}

/* ---- the shared tables ---- */

static struct model_proc *proc_get(struct model_session *s, uint32_t pid)
{
	uint64_t *v;
	int rc = kmap__upsert(&s->proc_map, pid, 0, &v);

	if (rc < 0)
		return NULL;
	if (rc) {
		if (array_grow((void **)&s->procs, &s->cprocs, s->nprocs + 1, sizeof(*s->procs)))
			return NULL;
		memset(&s->procs[s->nprocs], 0, sizeof(s->procs[0]));
		s->procs[s->nprocs].pid = pid;
		*v = s->nprocs++;
	}
	return &s->procs[*v];
}

static struct model_thread *thread_get(struct model_session *s, uint32_t pid, uint32_t tid)
{
	uint64_t *v;
	int rc = kmap__upsert(&s->thread_map, pid, tid, &v);

	if (rc < 0)
		return NULL;
	if (rc) {
		if (array_grow((void **)&s->threads, &s->cthreads, s->nthreads + 1,
			       sizeof(*s->threads)))
			return NULL;
		memset(&s->threads[s->nthreads], 0, sizeof(s->threads[0]));
		s->threads[s->nthreads].pid = pid;
		s->threads[s->nthreads].tid = tid;
		*v = s->nthreads++;
	}
	return &s->threads[*v];
}

/* A PROC record: the process's name (one rule: proc_names.h), parent, job, exit. */
static int on_proc(struct model_session *s, const struct gpuio_proc_event *e)
{
	struct model_thread *t;
	struct model_proc *p = proc_get(s, e->hdr.pid);

	if (!p)
		return -ENOMEM;
	if (e->kind == GPUIO_PROC_CGROUP) {      /* its job: kept as the path */
		char *cg = strndup(e->args, e->args_len);

		if (!cg)
			return -ENOMEM;
		free((char *)p->cgroup);
		p->cgroup = cg;
		return 0;
	}
	t = thread_get(s, e->hdr.pid, e->hdr.tid);
	if (!t)
		return -ENOMEM;
	p = proc_get(s, e->hdr.pid);            /* procs[] may have moved: no, but be plain */
	/* the parent: from the fork, else from any record that names one (as
	 * /proc said at attach: a process started before the trace has its
	 * children as its workers all the same) */
	if (e->kind == GPUIO_PROC_FORK || (e->ppid && !p->ppid))
		p->ppid = e->ppid;
	if (e->kind == GPUIO_PROC_EXIT) {
		p->exited = true;
		p->exit_ts = e->hdr.ts;
	}
	/* a new image: its Python stacks are its own (the same addresses, other code) */
	if (e->kind == GPUIO_PROC_EXEC && s->stacks &&
	    model_stacks__exec(s->stacks, e->hdr.pid, s->f.records))
		return -ENOMEM;
	if (proc_names__names_process(&p->rank, e)) {
		char *args = NULL;
		uint32_t n = e->args_len;

		/* the reader clamps args_len to the record; drop trailing NULs */
		while (n && e->args[n - 1] == 0)
			n--;
		if (n) {
			args = malloc(n);
			if (!args)
				return -ENOMEM;
			memcpy(args, e->args, n);
		}
		free((char *)p->args);
		p->args = args;
		p->args_len = n;
		memcpy(p->comm, e->comm, sizeof(p->comm));
	}
	if (proc_names__names_thread(t->has_comm, e)) {
		memcpy(t->comm, e->comm, sizeof(t->comm));
		t->has_comm = true;
	}
	return 0;
}

/* A PATH record: (dev, ino) -> the absolute path (later records win). */
static int on_path(struct model_session *s, const struct gpuio_path_event *p)
{
	size_t len;
	uint64_t *v;
	char *str = gpuio_path__string(p, &len);
	int rc;

	if (!str)
		return -ENOMEM;
	rc = kmap__upsert(&s->path_map, p->dev, p->ino, &v);
	if (rc < 0 || (rc && array_grow((void **)&s->paths, &s->cpaths, s->npaths + 1,
					 sizeof(*s->paths)))) {
		free(str);
		return -ENOMEM;
	}
	if (rc)
		*v = s->npaths++;
	else
		free(s->paths[*v].s);
	s->paths[*v] = (struct spath){ .s = str, .len = (uint32_t)len };
	return 0;
}

static int on_devname(struct model_session *s, const struct gpuio_devname_event *d)
{
	uint64_t *v;
	int rc = kmap__upsert(&s->dev_map, d->dev, 0, &v);

	if (rc < 0)
		return -ENOMEM;
	if (rc) {
		if (array_grow((void **)&s->devs, &s->cdevs, s->ndevs + 1, sizeof(*s->devs)))
			return -ENOMEM;
		*v = s->ndevs++;
	}
	memset(&s->devs[*v], 0, sizeof(s->devs[0]));
	s->devs[*v].named = true;
	memcpy(s->devs[*v].name, d->name, strnlen(d->name, sizeof(d->name)));
	return 0;
}

/* A SOCK_PEER record: (dev, ino) -> its addresses, named (later records win). */
static int on_sock_peer(struct model_session *s, const struct gpuio_sock_peer *r)
{
	struct model_peer *p;
	uint64_t *v;
	int rc = kmap__upsert(&s->peer_map, r->dev, r->ino, &v);

	_Static_assert(sizeof(p->name) == PEER_NAME_MAX, "peer_names.h's bound");
	if (rc < 0)
		return -ENOMEM;
	if (rc) {
		if (array_grow((void **)&s->peers, &s->cpeers, s->npeers + 1, sizeof(*s->peers)))
			return -ENOMEM;
		*v = s->npeers++;
	}
	p = &s->peers[*v];
	memset(p, 0, sizeof(*p));
	p->dev = r->dev;
	p->ino = r->ino;
	p->family = r->family;
	p->type = r->type;
	p->protocol = r->protocol;
	p->connected = r->flags & GPUIO_SP_PEER;
	p->proto = peer_names__proto(r);
	peer_names__format(r, p->name, p->local);
	return 0;
}

/* The latest status of each collector (its counters are cumulative). */
static int on_gpu_info(struct model_session *s, const struct gpuio_gpu_info *i)
{
	struct model_collector *c;
	uint64_t *v;
	int rc = kmap__upsert(&s->coll_map, i->hdr.pid, 0, &v);

	if (rc < 0)
		return -ENOMEM;
	if (rc) {
		if (array_grow((void **)&s->colls, &s->ccolls, s->ncolls + 1, sizeof(*s->colls)))
			return -ENOMEM;
		memset(&s->colls[s->ncolls], 0, sizeof(s->colls[0]));
		*v = s->ncolls++;
	}
	c = &s->colls[*v];
	c->info = *i;
	c->nrec++;
	/* the reason an UNAVAILABLE record gave stays when a FINAL one follows */
	if (i->reason[0]) {
		memcpy(c->reason, i->reason, sizeof(i->reason));
		c->reason[sizeof(i->reason)] = 0;
	}
	s->f.gpu_info = *i;
	s->f.gpu_infos++;
	return 0;
}

/* Bytes of a kernel's name the record really holds, cut at a NUL. */
static size_t kernel_name_len(const struct gpuio_gpu_kernel *k)
{
	size_t off = offsetof(struct gpuio_gpu_kernel, name);
	size_t room = k->hdr.size > off ? k->hdr.size - off : 0, len = k->name_len;

	if (len > room)
		len = room;
	if (len > GPUIO_GPU_NAME_MAX)
		len = GPUIO_GPU_NAME_MAX;
	return strnlen(k->name, len);
}

static void gpu_act_of(const struct gpuio_hdr *h, struct model_gpu_act *a)
{
	memset(a, 0, sizeof(*a));
	a->h = h;
	a->ts = h->ts;
	if (h->type == GPUIO_REC_GPU_KERNEL) {
		const struct gpuio_gpu_kernel *k = (const void *)h;

		a->kind = MODEL_GPU_KERNEL;
		a->end = k->end_ns, a->stream = k->stream, a->context = k->context;
		a->correlation = k->correlation, a->device = k->device;
		a->name = k->name;
		a->name_len = kernel_name_len(k);
	} else if (h->type == GPUIO_REC_GPU_MEMCPY) {
		const struct gpuio_gpu_memcpy *c = (const void *)h;

		a->kind = MODEL_GPU_MEMCPY;
		a->end = c->end_ns, a->stream = c->stream, a->context = c->context;
		a->correlation = c->correlation, a->device = c->device, a->bytes = c->bytes;
	} else {
		const struct gpuio_gpu_memset *m = (const void *)h;

		a->kind = MODEL_GPU_MEMSET;
		a->end = m->end_ns, a->stream = m->stream, a->context = m->context;
		a->correlation = m->correlation, a->device = m->device, a->bytes = m->bytes;
	}
}

/* The Python stacks' records: the table is made at the first one. */
static int on_python(struct model_session *s, const struct gpuio_hdr *h)
{
	if (!s->stacks && !(s->stacks = model_stacks__new()))
		return -ENOMEM;
	switch (h->type) {
	case GPUIO_REC_PY_PROC:
		return model_stacks__py_proc(s->stacks, (const void *)h);
	case GPUIO_REC_PY_STACK:
		return model_stacks__stack(s->stacks, (const void *)h);
	default:
		return model_stacks__code(s->stacks, (const void *)h);
	}
}

/* The tables a record changes (pass 1 and following only). */
static int note(struct model_session *s, const struct gpuio_hdr *h)
{
	s->f.records++;
	/* numbers given to kinds this build does not decode yet count as unknown */
	s->f.counts[h->type <= GPUIO_REC_LAST && gpuio_rec_min_size(h->type) ? h->type : 0]++;
	if (h->ts > s->f.last_ts)
		s->f.last_ts = h->ts;
	/* collector records (stats, devnames) may carry no ts: 0 is none */
	if (h->ts && (!s->f.first_ts || h->ts < s->f.first_ts))
		s->f.first_ts = h->ts;
	switch (h->type) {
	case GPUIO_REC_PATH:
		return on_path(s, (const void *)h);
	case GPUIO_REC_PROC:
		return on_proc(s, (const void *)h);
	case GPUIO_REC_STATS:
		gpuio_stats__from_record(h, &s->f.stats);
		s->f.have_stats = true;
		return 0;
	case GPUIO_REC_DEVNAME:
		return on_devname(s, (const void *)h);
	case GPUIO_REC_SCHED:
		return sched_tab__add(&s->sched, (const void *)h);
	case GPUIO_REC_GPU_INFO:
		return on_gpu_info(s, (const void *)h);
	case GPUIO_REC_SOCK_PEER:
		return on_sock_peer(s, (const void *)h);
	case GPUIO_REC_PY_PROC:
	case GPUIO_REC_PY_STACK:
	case GPUIO_REC_PY_CODE:
		return on_python(s, h);
	default:
		return 0;
	}
}

/*
 * Where a record's kind becomes a tool's handler: h to t's handler for its
 * kind (note() above keeps the session's own tables). Types this build does
 * not know (newer captures) go to no one.
 */
static int dispatch(const struct model_session *s, const struct gpuio_hdr *h,
		    const struct model_tool *t)
{
	const void *r = h;

	switch (h->type) {
	case GPUIO_REC_VFS:
		return t->vfs ? t->vfs(t->ctx, r) : 0;
	case GPUIO_REC_BLOCK:
		return t->block ? t->block(t->ctx, r) : 0;
	case GPUIO_REC_PATH:
		return t->path ? t->path(t->ctx, r) : 0;
	case GPUIO_REC_PROC:
		return t->proc ? t->proc(t->ctx, r) : 0;
	case GPUIO_REC_STATS:
		if (t->stats) {
			struct gpuio_stats_event st;

			gpuio_stats__from_record(h, &st);
			return t->stats(t->ctx, &st);
		}
		return 0;
	case GPUIO_REC_DEVNAME:
		return t->devname ? t->devname(t->ctx, r) : 0;
	case GPUIO_REC_SCHED:
		return t->sched ? t->sched(t->ctx, r) : 0;
	case GPUIO_REC_WAIT:
		return t->wait ? t->wait(t->ctx, r) : 0;
	case GPUIO_REC_GPU_INFO:
		return t->gpu_info ? t->gpu_info(t->ctx, r) : 0;
	case GPUIO_REC_GPU_KERNEL:
	case GPUIO_REC_GPU_MEMCPY:
	case GPUIO_REC_GPU_MEMSET:
		if (t->gpu_act) {
			struct model_gpu_act a;

			gpu_act_of(h, &a);
			return t->gpu_act(t->ctx, &a);
		}
		return 0;
	case GPUIO_REC_CUDA_API:
		return t->cuda_api ? t->cuda_api(t->ctx, r) : 0;
	case GPUIO_REC_GPU_SYNC:
		return t->gpu_sync ? t->gpu_sync(t->ctx, r) : 0;
	case GPUIO_REC_NVTX:
		return t->nvtx ? t->nvtx(t->ctx, r) : 0;
	case GPUIO_REC_GPU_OVERHEAD:
		return t->gpu_overhead ? t->gpu_overhead(t->ctx, r) : 0;
	case GPUIO_REC_GPU_SYM:
		return t->gpu_sym ? t->gpu_sym(t->ctx, r) : 0;
	case GPUIO_REC_SOCK_PEER:
		return t->sock_peer ? t->sock_peer(t->ctx, r) : 0;
	case GPUIO_REC_FAULT_COUNT:
		return t->fault_count ? t->fault_count(t->ctx, r) : 0;
	case GPUIO_REC_LOST_CALLS:
		return t->lost_calls ? t->lost_calls(t->ctx, r) : 0;
	case GPUIO_REC_THREAD_TIME:
		return t->thread_time ? t->thread_time(t->ctx, r) : 0;
	case GPUIO_REC_STACK_AT:
		if (t->stack_at) {
			const struct gpuio_stack_at *e = r;
			struct model_stack_at a = {
				.h = &e->hdr, .what = e->what, .why = e->why, .seq = e->seq,
				.stack = s && s->stacks ?
					 model_stacks__ref(s->stacks, e->hdr.pid, e->id, s->at) : 0,
			};

			return t->stack_at(t->ctx, &a);
		}
		return 0;
	default:
		return 0;
	}
}

static int handle(struct model_session *s, const struct gpuio_hdr *h,
		  const struct model_tool *const *tools, size_t ntools)
{
	int err = note(s, h);

	s->at = s->f.records;
	for (size_t i = 0; !err && i < ntools; i++)
		err = dispatch(s, h, tools[i]);
	return err;
}

/* ---- passes ---- */

/* Every whole record the reader has, through the tables and the tools; -EBADMSG: corrupt. */
static int read_records(struct model_session *s, const struct model_tool *const *tools,
			size_t ntools)
{
	const struct gpuio_hdr *h;
	int rc, err = 0;

	while (!err && (rc = gpuio_cap_reader__next(s->r, &h)) > 0) {
		s->rec_off = gpuio_cap_reader__offset(s->r) - h->size;
		err = handle(s, h, tools, ntools);
	}
	if (err)
		return err;
	if (rc < 0) {
		snprintf(s->err, sizeof(s->err), "%s", gpuio_cap_reader__error(s->r));
		return -EBADMSG;
	}
	return 0;
}

int model_session__run(struct model_session *s, const struct model_tool *const *tools,
		       size_t ntools)
{
	int err = read_records(s, tools, ntools);

	if (err)
		return err;
	s->f.truncated = gpuio_cap_reader__truncated(s->r);
	s->f.trunc_offset = gpuio_cap_reader__offset(s->r);
	return sched_tab__sort(&s->sched);
}

int model_session__follow(struct model_session *s, const struct model_tool *const *tools,
			  size_t ntools, uint64_t budget, bool *more)
{
	int err;

	gpuio_cap_reader__set_budget(s->r, budget);
	err = read_records(s, tools, ntools);
	*more = !err && gpuio_cap_reader__budget_spent(s->r);
	return err;
}

int model_session__replay(struct model_session *s, const struct model_tool *t, uint64_t mask)
{
	const struct gpuio_hdr *h;
	uint64_t n = 0;
	int rc, err = 0;

	s->err[0] = 0;
	if (gpuio_cap_reader__rewind(s->r) < 0) {
		snprintf(s->err, sizeof(s->err), "cannot read it again: %s", strerror(errno));
		return -EBADMSG;
	}
	while (!err && n < s->f.records && (rc = gpuio_cap_reader__next(s->r, &h)) > 0) {
		s->at = ++n;    /* the ordinal pass 1 gave it (model_stacks__ref) */
		if (h->type < 64 && (mask & (1ull << h->type)))
			err = dispatch(s, h, t);
	}
	if (err)
		return err;
	if (n < s->f.records) {
		snprintf(s->err, sizeof(s->err), "%s", gpuio_cap_reader__error(s->r)[0] ?
			 gpuio_cap_reader__error(s->r) : "it holds fewer records than before");
		return -EBADMSG;
	}
	return 0;
}

uint64_t model_session__offset(const struct model_session *s)
{
	return s->rec_off;
}

int model_session__read_at(struct model_session *s, uint64_t off, unsigned type,
			   const struct model_tool *t)
{
	struct read_at *c = s->ra;
	struct gpuio_hdr h;
	int slot = -1;
	size_t size;

	if (!c) {
		c = calloc(1, sizeof(*c));
		if (!c)
			return -ENOMEM;
		c->fd = open(s->path, O_RDONLY | O_CLOEXEC);
		if (c->fd < 0) {
			snprintf(s->err, sizeof(s->err), "cannot open it again: %s", strerror(errno));
			free(c);
			return -EBADMSG;
		}
		s->ra = c;
	}
	for (int i = 0; i < RA_SLOTS; i++) {
		if (c->s[i].buf && off >= c->s[i].base &&
		    off + sizeof(h) <= c->s[i].base + c->s[i].len) {
			slot = i;
			break;
		}
	}
	if (slot < 0) {
		ssize_t k;

		slot = 0;
		for (int i = 1; i < RA_SLOTS; i++)
			if (c->s[i].used < c->s[slot].used)
				slot = i;
		if (!c->s[slot].buf) {
			c->s[slot].buf = malloc(RA_BLOCK);
			if (!c->s[slot].buf)
				return -ENOMEM;
		}
		c->s[slot].base = off & ~4095ull;
		k = file_pread_full(c->fd, c->s[slot].buf, RA_BLOCK, c->s[slot].base);
		c->s[slot].len = k > 0 ? (size_t)k : 0;
		if (k < 0 || off + sizeof(h) > c->s[slot].base + c->s[slot].len)
			goto changed;
	}
	c->s[slot].used = ++c->tick;
	memcpy(&h, c->s[slot].buf + (off - c->s[slot].base), sizeof(h));
	size = h.size;
	if ((type ? h.type != type : h.type < GPUIO_REC_GPU_INFO || h.type > GPUIO_REC_GPU_SYM) ||
	    size < sizeof(h) || size > GPUIO_REC_SIZE_MAX || size < gpuio_rec_min_size(h.type))
		goto changed;
	if (off + size <= c->s[slot].base + c->s[slot].len)
		memcpy(c->rec.b, c->s[slot].buf + (off - c->s[slot].base), size);
	else if (file_pread_full(c->fd, c->rec.b, size, off) != (ssize_t)size)
		goto changed;
	memset(c->rec.b + size, 0, 16);
	return dispatch(s, &c->rec.h, t);
changed:
	snprintf(s->err, sizeof(s->err), "the GPU record at offset %llu is no longer what it was",
		 (unsigned long long)off);
	return -EBADMSG;
}

const char *model_session__error(const struct model_session *s)
{
	return s->err;
}

const char *model_session__path_name(const struct model_session *s)
{
	return s->path;
}

/* ---- lookups ---- */

const struct model_facts *model_session__facts(const struct model_session *s)
{
	return &s->f;
}

const struct model_proc *model_session__proc(const struct model_session *s, uint32_t pid)
{
	uint64_t *v = kmap__get(&s->proc_map, pid, 0);

	return v ? &s->procs[*v] : NULL;
}

const struct model_thread *model_session__thread(const struct model_session *s, uint32_t pid,
						 uint32_t tid)
{
	uint64_t *v = kmap__get(&s->thread_map, pid, tid);

	return v ? &s->threads[*v] : NULL;
}

const char *model_session__path(const struct model_session *s, uint32_t dev, uint64_t ino,
				uint32_t *len)
{
	uint64_t *v = kmap__get(&s->path_map, dev, ino);

	if (!v)
		return NULL;
	if (len)
		*len = s->paths[*v].len;
	return s->paths[*v].s;
}

const struct model_peer *model_session__peer(const struct model_session *s, uint32_t dev,
					     uint64_t ino)
{
	uint64_t *v = kmap__get(&s->peer_map, dev, ino);

	return v ? &s->peers[*v] : NULL;
}

const struct model_peer *model_session__peer_at(const struct model_session *s, size_t i)
{
	return i < s->npeers ? &s->peers[i] : NULL;
}

const char *model_session__devname(const struct model_session *s, uint32_t dev)
{
	uint64_t *v = kmap__get(&s->dev_map, dev, 0);

	return v && s->devs[*v].named ? s->devs[*v].name : NULL;
}

const struct sched_tab *model_session__sched(const struct model_session *s)
{
	return &s->sched;
}

const struct model_collector *model_session__collector(const struct model_session *s, size_t i)
{
	return i < s->ncolls ? &s->colls[i] : NULL;
}

const struct model_collector *model_session__collector_of(const struct model_session *s,
							  uint32_t pid)
{
	uint64_t *v = kmap__get(&s->coll_map, pid, 0);

	return v ? &s->colls[*v] : NULL;
}

const struct model_stack *model_session__stack(const struct model_session *s, uint32_t ref)
{
	return s->stacks ? model_stacks__get(s->stacks, ref) : NULL;
}

void model_session__frame(const struct model_session *s, const struct model_stack *k, unsigned i,
			  struct model_frame *out)
{
	model_stacks__frame(s->stacks, k, i, out);
}

const struct model_stacks *model_session__stacks(const struct model_session *s)
{
	return s->stacks;
}
