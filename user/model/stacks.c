// SPDX-License-Identifier: MIT
/*
 * stacks.c — the capture's Python stacks (stacks.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "lib/kmap.h"
#include "model/stacks.h"
#include "python/py_lines.h"

#define TEXT_MAX 1024

struct code {
	char *file, *func;
	uint8_t *lines;
	uint32_t nlines;
	int32_t firstlineno;
	uint16_t minor;
	bool native;                    /* a native address: file, function, no line */
};

struct pyproc {
	uint32_t gen;                   /* its current image: the execs seen */
	uint64_t *exec_at;              /* the record ordinal of each exec, in order */
	size_t cexec;
	uint32_t status;                /* the latest PY_PROC's */
	char what[sizeof(((struct gpuio_py_proc *)0)->what) + 1];
};

struct model_stacks {
	struct kmap proc_map;           /* (pid, 0) -> procs[] + 1 */
	struct kmap ok_map;             /* (pid | gen << 32, 0) -> 1: that image's check passed */
	struct pyproc *procs;
	size_t nprocs, cprocs;
	struct kmap stack_map;          /* (pid | gen << 32, id) -> stacks[] + 1 */
	struct model_stack *stacks;
	size_t nstacks, cstacks;
	struct gpuio_py_frame *frames;  /* the stacks' frames, back to back */
	size_t nframes, cframes;
	struct kmap code_map;           /* (pid | gen << 32, code) -> codes[] + 1 */
	struct code *codes;
	size_t ncodes, ccodes;
};

struct model_stacks *model_stacks__new(void)
{
	return calloc(1, sizeof(struct model_stacks));
}

void model_stacks__free(struct model_stacks *st)
{
	if (!st)
		return;
	for (size_t i = 0; i < st->ncodes; i++) {
		free(st->codes[i].file);
		free(st->codes[i].func);
		free(st->codes[i].lines);
	}
	free(st->codes);
	free(st->stacks);
	free(st->frames);
	for (size_t i = 0; i < st->nprocs; i++)
		free(st->procs[i].exec_at);
	free(st->procs);
	kmap__free(&st->proc_map);
	kmap__free(&st->ok_map);
	kmap__free(&st->stack_map);
	kmap__free(&st->code_map);
	free(st);
}

static struct pyproc *proc_get(struct model_stacks *st, uint32_t pid, bool create)
{
	uint64_t *v = kmap__get(&st->proc_map, pid, 0);

	if (v)
		return &st->procs[*v - 1];
	if (!create || array_grow((void **)&st->procs, &st->cprocs, st->nprocs + 1,
				  sizeof(*st->procs)) ||
	    kmap__upsert(&st->proc_map, pid, 0, &v) < 0)
		return NULL;
	memset(&st->procs[st->nprocs], 0, sizeof(st->procs[0]));
	*v = ++st->nprocs;
	return &st->procs[*v - 1];
}

static uint32_t gen_of(const struct model_stacks *st, uint32_t pid)
{
	uint64_t *v = kmap__get(&st->proc_map, pid, 0);

	return v ? st->procs[*v - 1].gen : 0;
}

/* pid's image when the record numbered at was read: the execs up to it */
static uint32_t gen_at(const struct model_stacks *st, uint32_t pid, uint64_t at)
{
	uint64_t *v = kmap__get(&st->proc_map, pid, 0);
	const struct pyproc *p;
	uint32_t g;

	if (!v)
		return 0;
	p = &st->procs[*v - 1];
	for (g = p->gen; g && p->exec_at[g - 1] > at; g--)
		;
	return g;
}

int model_stacks__exec(struct model_stacks *st, uint32_t pid, uint64_t at)
{
	struct pyproc *p = proc_get(st, pid, true);

	if (!p || array_grow((void **)&p->exec_at, &p->cexec, p->gen + 1, sizeof(*p->exec_at)))
		return -ENOMEM;
	p->exec_at[p->gen++] = at;
	p->status = 0;
	p->what[0] = 0;
	return 0;
}

int model_stacks__py_proc(struct model_stacks *st, const struct gpuio_py_proc *r)
{
	struct pyproc *p = proc_get(st, r->hdr.pid, true);

	if (!p)
		return -ENOMEM;
	uint64_t *ok;

	p->status = r->status;
	memcpy(p->what, r->what, sizeof(r->what));
	p->what[sizeof(r->what)] = 0;
	if (kmap__upsert(&st->ok_map, r->hdr.pid | (uint64_t)p->gen << 32, 0, &ok) < 0)
		return -ENOMEM;
	*ok = r->status == GPUIO_PYP_OK;        /* a later word on the same image wins */
	return 0;
}

int model_stacks__stack(struct model_stacks *st, const struct gpuio_py_stack *r)
{
	uint32_t gen = gen_of(st, r->hdr.pid);
	size_t n = r->nframes;
	struct model_stack *k;
	uint64_t *v;
	int rc;

	/* frames past what the record holds are not there */
	if (sizeof(*r) + n * sizeof(r->frames[0]) > r->hdr.size)
		n = (r->hdr.size - sizeof(*r)) / sizeof(r->frames[0]);
	rc = kmap__upsert(&st->stack_map, r->hdr.pid | (uint64_t)gen << 32, r->id, &v);
	if (rc < 0)
		return -ENOMEM;
	if (!rc)
		return 0;               /* sent again (the kernel's seen-map forgot it): the same */
	if (array_grow((void **)&st->stacks, &st->cstacks, st->nstacks + 1, sizeof(*st->stacks)) ||
	    array_grow((void **)&st->frames, &st->cframes, st->nframes + n, sizeof(*st->frames)))
		return -ENOMEM;
	k = &st->stacks[st->nstacks];
	*k = (struct model_stack){ .pid = r->hdr.pid, .gen = gen, .nframes = (uint16_t)n,
				   .flags = r->flags, .frame0 = (uint32_t)st->nframes, .id = r->id };
	if (n)          /* a stack of no frames may find the pool still unmade */
		memcpy(&st->frames[st->nframes], r->frames, n * sizeof(r->frames[0]));
	while (k->nnative < n && r->frames[k->nnative].lasti == GPUIO_PY_LASTI_NATIVE)
		k->nnative++;
	st->nframes += n;
	*v = ++st->nstacks;
	return 0;
}

/* A string of the record as UTF-8 (a fresh copy) */
static char *text(unsigned kind, const uint8_t *s, size_t n)
{
	char buf[TEXT_MAX];

	py_str_utf8(kind, s, n, buf, sizeof(buf));
	return strdup(buf);
}

int model_stacks__code(struct model_stacks *st, const struct gpuio_py_code *r)
{
	uint32_t gen = gen_of(st, r->hdr.pid);
	size_t room = r->hdr.size - sizeof(*r), fl = r->file_len, nl = r->name_len,
	       ll = r->lines_len;
	struct code *c;
	uint64_t *v;
	int rc;

	/* lengths past the record are cut to it */
	fl = fl < room ? fl : room;
	nl = nl < room - fl ? nl : room - fl;
	ll = ll < room - fl - nl ? ll : room - fl - nl;
	rc = kmap__upsert(&st->code_map, r->hdr.pid | (uint64_t)gen << 32, r->code, &v);
	if (rc < 0)
		return -ENOMEM;
	if (!rc)
		return 0;
	if (array_grow((void **)&st->codes, &st->ccodes, st->ncodes + 1, sizeof(*st->codes)))
		return -ENOMEM;
	c = &st->codes[st->ncodes];
	c->file = text(r->file_kind, r->data, fl);
	c->func = text(r->name_kind, r->data + fl, nl);
	c->lines = malloc(ll ? ll : 1);
	if (!c->file || !c->func || !c->lines) {
		free(c->file);
		free(c->func);
		free(c->lines);
		return -ENOMEM;
	}
	memcpy(c->lines, r->data + fl + nl, ll);
	c->nlines = (uint32_t)ll;
	c->firstlineno = r->firstlineno;
	c->minor = r->minor;
	c->native = r->flags & GPUIO_PYC_NATIVE;
	*v = ++st->ncodes;
	return 0;
}

uint32_t model_stacks__ref(const struct model_stacks *st, uint32_t pid, uint64_t id, uint64_t at)
{
	uint64_t *v = id ? kmap__get(&st->stack_map, pid | (uint64_t)gen_at(st, pid, at) << 32, id) :
		      NULL;

	return v ? (uint32_t)*v : 0;
}

const struct model_stack *model_stacks__get(const struct model_stacks *st, uint32_t ref)
{
	const struct model_stack *k;
	uint64_t *ok;

	if (!ref || ref > st->nstacks)
		return NULL;
	k = &st->stacks[ref - 1];
	/* only an image whose interpreter passed its check */
	ok = kmap__get(&st->ok_map, k->pid | (uint64_t)k->gen << 32, 0);
	return ok && *ok ? k : NULL;
}

void model_stacks__frame(const struct model_stacks *st, const struct model_stack *k, unsigned i,
			 struct model_frame *out)
{
	const struct gpuio_py_frame *f = &st->frames[k->frame0 + i];
	uint64_t *v = kmap__get(&st->code_map, k->pid | (uint64_t)k->gen << 32, f->code);
	const struct code *c;

	out->code = f->code;
	out->lasti = f->lasti;
	out->native = f->lasti == GPUIO_PY_LASTI_NATIVE;
	if (!v) {
		out->file = "";
		out->func = "?";
		out->line = -1;
		return;
	}
	c = &st->codes[*v - 1];
	out->file = c->file;
	out->func = c->func;
	out->line = c->native ? -1 : py_line(c->minor, c->lines, c->nlines, c->firstlineno, f->lasti);
}

bool model_frame__library(const struct model_frame *f)
{
	const char *file = f->file;

	if (f->native || !file[0] || file[0] == '<')    /* native, unknown, <frozen ...>, <string> */
		return true;
	return strstr(file, "/site-packages/") || strstr(file, "/dist-packages/") ||
	       strstr(file, "/lib/python3.") || strstr(file, "/lib64/python3.");
}

uint32_t model_stacks__status(const struct model_stacks *st, uint32_t pid, const char **what)
{
	uint64_t *v = kmap__get(&st->proc_map, pid, 0);

	*what = v ? st->procs[*v - 1].what : "";
	return v ? st->procs[*v - 1].status : 0;
}

void model_stacks__counts(const struct model_stacks *st, struct model_stacks_counts *out)
{
	memset(out, 0, sizeof(*out));
	out->stacks = st->nstacks;
	out->codes = st->ncodes;
	for (size_t i = 0; i < st->nprocs; i++)
		if (st->procs[i].status <= GPUIO_PYP_GAVE_UP)
			out->procs[st->procs[i].status]++;
}
