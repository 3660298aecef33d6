// SPDX-License-Identifier: MIT
/*
 * py_procs.c — the traced processes' interpreters (py_procs.h).
 *
 * A process asked about is SEEKing its interpreter until the file holding
 * _PyRuntime is mapped (the loader maps libpython a moment after an exec),
 * then CHECKing it until the interpreter runs a frame the check can read.
 * Its layout goes into the kernel's map as soon as it is known — the first
 * lines of a program run within milliseconds of its start — but only
 * provisionally: its PY_PROC record says whether the check passed, and a
 * reader keeps a process's stacks only where it did (model/stacks.c). A
 * failed or abandoned check takes the layout out of the map at once.
 * Looks are every few ms while a process starts (ringbuf_drain.c polls
 * that often then), less often later, and a program not named python*
 * (a shell, a tool: most of what a job starts) is looked at fast only for
 * its first 20 ms; a process that never maps CPython is dropped without a
 * word.
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "bpf/gpuio_abi.h"
#include "lib/log.h"
#include "python/py_find.h"
#include "trace/py_procs.h"

#define MS 1000000ull
#define SEEK_FAST_NS  (1 * MS)          /* a starting image: the loader, then libpython */
#define OTHER_FAST_NS (20 * MS)         /* not named python*: its loader's libraries only */
#define SEEK_FOR_NS   (2000 * MS)       /* no CPython mapped by then: not Python */
#define CHECK_FAST_NS (2 * MS)
#define FAST_FOR_NS   (500 * MS)
#define RETRY_NS      (200 * MS)
#define GIVE_UP_NS    (30000 * MS)
#define PENDING_MAX   4096
#define SAID_MAX      16                /* distinct reasons said on the terminal */
#define MISMATCHES    5                 /* checks in a row that read no good frame: a mismatch */

enum state { SEEK, CHECK };

struct pending {
	pid_t pid;
	enum state state;
	bool named;                     /* its executable is named python*: CPython comes */
	uint64_t first, next;
	unsigned mismatches;            /* CHECK: in a row (a read torn by the running program: once) */
	struct py_found f;              /* CHECK: the layout in the map */
};

struct py_procs {
	int map_fd;
	void (*emit)(void *ctx, const void *rec, size_t len);
	void *ctx;
	struct pending *p;
	size_t n;
	unsigned found, refused;
	char said[SAID_MAX][96];
	unsigned nsaid;
};

struct py_procs *py_procs__new(int map_fd, void (*emit)(void *ctx, const void *rec, size_t len),
			       void *ctx)
{
	struct py_procs *p = calloc(1, sizeof(*p));

	if (!p || !(p->p = calloc(PENDING_MAX, sizeof(*p->p)))) {
		free(p);
		return NULL;
	}
	p->map_fd = map_fd;
	p->emit = emit;
	p->ctx = ctx;
	return p;
}

void py_procs__free(struct py_procs *p)
{
	if (!p)
		return;
	free(p->p);
	free(p);
}

void py_procs__counts(const struct py_procs *p, unsigned *found, unsigned *refused)
{
	*found = p ? p->found : 0;
	*refused = p ? p->refused : 0;
}

/* Say a reason on the terminal once (versions and mismatches repeat across workers). */
static void say_once(struct py_procs *p, const char *why)
{
	for (unsigned i = 0; i < p->nsaid; i++)
		if (!strncmp(p->said[i], why, sizeof(p->said[i]) - 1))
			return;
	if (p->nsaid < SAID_MAX)
		snprintf(p->said[p->nsaid++], sizeof(p->said[0]), "%s", why);
	pr_warn("no Python stacks: %s", why);
}

static void record(struct py_procs *p, pid_t pid, uint32_t status, const struct py_found *f,
		   const char *why, uint64_t now)
{
	struct gpuio_py_proc r;

	memset(&r, 0, sizeof(r));
	r.hdr.type = GPUIO_REC_PY_PROC;
	r.hdr.size = sizeof(r);
	r.hdr.pid = (__u32)pid;
	r.hdr.tid = (__u32)pid;
	r.hdr.ts = now;
	r.status = status;
	r.minor = (__u16)f->minor;
	r.hex = f->hex;
	snprintf(r.what, sizeof(r.what), "%s", why);
	p->emit(p->ctx, &r, sizeof(r));
	if (status == GPUIO_PYP_OK)
		p->found++;
	else
		p->refused++;
}

/* A check failed or was abandoned: no more stacks, and the ones taken do not count */
static void refuse(struct py_procs *p, struct pending *q, uint32_t status, const char *why,
		   uint64_t now)
{
	__u32 key = (__u32)q->pid;

	bpf_map_delete_elem(p->map_fd, &key);
	record(p, q->pid, status, &q->f, why, now);
	if (status != GPUIO_PYP_GAVE_UP)
		say_once(p, why);
}

/* SEEK: the layout, into the map provisionally. true: settled (not Python, or refused). */
static bool seek(struct py_procs *p, struct pending *q, uint64_t now)
{
	char why[232];
	__u32 key = (__u32)q->pid;
	int err = py_find__layout(q->pid, &q->f, why, sizeof(why));

	if (err == -ENOENT)             /* not mapped yet, or not Python at all */
		return now - q->first >= SEEK_FOR_NS;
	if (err == -ENOTSUP) {
		record(p, q->pid, GPUIO_PYP_UNSUPPORTED, &q->f, why, now);
		say_once(p, why);
		return true;
	}
	if (err)
		return true;            /* gone */
	if (bpf_map_update_elem(p->map_fd, &key, &q->f.layout, BPF_ANY)) {
		snprintf(why, sizeof(why), "pid %d: the stack walk's map is full", (int)q->pid);
		record(p, q->pid, GPUIO_PYP_GAVE_UP, &q->f, why, now);
		return true;
	}
	q->state = CHECK;
	return false;
}

/* CHECK: the layout against the running interpreter. true: settled. */
static bool check(struct py_procs *p, struct pending *q, uint64_t now)
{
	char why[232];
	int err = py_find__check(q->pid, &q->f, why, sizeof(why));

	switch (err) {
	case 0:
		pr_debug("pid %d: %s", (int)q->pid, why);
		record(p, q->pid, GPUIO_PYP_OK, &q->f, why, now);
		return true;
	case -EAGAIN:
		if (now - q->first < GIVE_UP_NS)
			return false;
		refuse(p, q, GPUIO_PYP_GAVE_UP, why, now);
		return true;
	case -EPROTO:
		if (++q->mismatches < MISMATCHES)
			return false;
		refuse(p, q, GPUIO_PYP_MISMATCH, why, now);
		return true;
	default:
		snprintf(why, sizeof(why), "pid %d exited before its Python %u.%u could be checked: "
			 "its stacks are left out", (int)q->pid, 3, q->f.minor);
		refuse(p, q, GPUIO_PYP_GAVE_UP, why, now);
		return true;
	}
}

static bool look(struct py_procs *p, struct pending *q, uint64_t now)
{
	if (q->state == SEEK && seek(p, q, now))
		return true;
	return q->state == CHECK && check(p, q, now);
}

/* Is the process's executable named python* (python3, python3.11, pythonw)? */
static bool exe_named_python(pid_t pid)
{
	char link[64], path[PATH_MAX];
	const char *base;
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	n = readlink(link, path, sizeof(path) - 1);
	if (n <= 0)
		return true;            /* cannot say: looked for as if */
	path[n] = 0;
	base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	return !strncmp(base, "python", 6);
}

static struct pending *add(struct py_procs *p, pid_t pid, uint64_t now, enum state st)
{
	if (p->n == PENDING_MAX) {
		pr_debug("pid %d: too many interpreters starting at once: no stacks", (int)pid);
		return NULL;
	}
	p->p[p->n] = (struct pending){ .pid = pid, .state = st, .first = now, .next = now,
				       .named = exe_named_python(pid) };
	return &p->p[p->n++];
}

void py_procs__want(struct py_procs *p, pid_t pid, uint64_t now)
{
	struct pending *q;

	if (!p || pid <= 0)
		return;
	py_procs__forget(p, pid);
	q = add(p, pid, now, SEEK);
	if (q && look(p, q, now))
		py_procs__forget(p, pid);
}

static struct pending *find(struct py_procs *p, pid_t pid)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->p[i].pid == pid)
			return &p->p[i];
	return NULL;
}

void py_procs__fork(struct py_procs *p, pid_t parent, pid_t child, uint64_t now)
{
	struct gpuio_py_layout L;
	struct pending *pq, *cq;
	__u32 key = (__u32)child;
	char why[96];

	if (!p)
		return;
	pq = find(p, parent);
	if (pq) {                       /* its parent is still starting: the child with it */
		struct py_found f = pq->f;
		enum state st = pq->state;

		cq = add(p, child, now, st);
		if (cq)
			cq->f = f;
		return;
	}
	if (bpf_map_lookup_elem(p->map_fd, &key, &L))
		return;                 /* its parent runs no interpreter gpuio reads */
	/* inherited in the kernel: its parent's checked interpreter, at the same addresses */
	snprintf(why, sizeof(why), "Python 3.%u: its parent's interpreter (pid %d), forked",
		 L.minor, (int)parent);
	record(p, child, GPUIO_PYP_OK, &(struct py_found){ .minor = L.minor }, why, now);
}

void py_procs__forget(struct py_procs *p, pid_t pid)
{
	struct pending *q = p ? find(p, pid) : NULL;

	if (q)
		*q = p->p[--p->n];
}

void py_procs__tick(struct py_procs *p, uint64_t now)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n;) {
		struct pending *q = &p->p[i];
		uint64_t age = now - q->first;

		if (now < q->next) {
			i++;
			continue;
		}
		if (look(p, q, now)) {
			*q = p->p[--p->n];
			continue;
		}
		/* another program (a shell, a tool) maps CPython only as an
		 * embedder does, at its start: looked at slowly after that */
		q->next = now + (age >= FAST_FOR_NS ? RETRY_NS :
				 q->state == CHECK ? CHECK_FAST_NS :
				 q->named || age < OTHER_FAST_NS ? SEEK_FAST_NS : RETRY_NS);
		i++;
	}
}

int py_procs__wait_ms(const struct py_procs *p, uint64_t now, int ms)
{
	for (size_t i = 0; p && i < p->n; i++) {
		uint64_t d = p->p[i].next > now ? p->p[i].next - now : 0;
		int w = (int)((d + MS - 1) / MS);

		if (w < ms)
			ms = w;
	}
	return ms;
}
