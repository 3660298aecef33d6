// SPDX-License-Identifier: MIT
/*
 * unit_native_frames — the collector's check of native frames
 * (trace/native_frames.c, lib/elf_symtab.c) on this process's own stack: a
 * return address (after a call) is kept and named by its function, an
 * address outside any file (the heap) and one that follows no call (a
 * function's first byte) cut the chain there, the Python frames after move
 * up, and each address kept is named once by a PY_CODE record.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/elf_symtab.h"
#include "trace/native_frames.h"
#include "unit.h"

static unsigned nrec;
static char names[8][GPUIO_PY_NAME_MAX + 1];

static void emit(void *ctx, const void *rec, size_t len)
{
	const struct gpuio_py_code *c = rec;

	(void)ctx;
	CHECK(c->hdr.type == GPUIO_REC_PY_CODE && c->hdr.size == len && (c->flags & GPUIO_PYC_NATIVE),
	      "a native PY_CODE record");
	if (nrec < 8)
		snprintf(names[nrec], sizeof(names[0]), "%.*s", c->name_len, (const char *)c->data +
			 c->file_len);
	nrec++;
}

static __attribute__((noinline)) uint64_t where_i_return(void)
{
	return (uint64_t)__builtin_return_address(0);
}

__attribute__((noinline)) uint64_t unit_caller(void)
{
	uint64_t r = where_i_return();

	__asm__ volatile("" ::: "memory");     /* a call, not a jump */
	return r;
}

/* a stack of the given frames, the last one Python */
static size_t take(struct native_frames *n, const uint64_t *addrs, unsigned nat,
		   struct gpuio_py_stack *out, size_t room)
{
	struct {
		struct gpuio_py_stack s;
		struct gpuio_py_frame f[8];
	} r;

	memset(&r, 0, sizeof(r));
	r.s.hdr.type = GPUIO_REC_PY_STACK;
	r.s.hdr.pid = r.s.hdr.tid = (uint32_t)getpid();
	r.s.nframes = (uint16_t)(nat + 1);
	r.s.hdr.size = (uint16_t)(sizeof(r.s) + r.s.nframes * sizeof(r.f[0]));
	for (unsigned i = 0; i < nat; i++)
		r.f[i] = (struct gpuio_py_frame){ .code = addrs[i], .lasti = GPUIO_PY_LASTI_NATIVE };
	r.f[nat] = (struct gpuio_py_frame){ .code = 0xc0de, .lasti = 7 };
	return native_frames__take(n, &r.s, r.s.hdr.size, out, room);
}

int main(void)
{
	struct native_frames *n = native_frames__new(emit, NULL);
	_Alignas(8) unsigned char buf[sizeof(struct gpuio_py_stack) + 16 * sizeof(struct gpuio_py_frame)];
	struct gpuio_py_stack *out = (void *)buf;
	uint64_t ret = unit_caller(), heap = (uint64_t)(uintptr_t)malloc(64);
	uint64_t a[3];
	unsigned long named, cut;
	struct elf_where w;
	size_t sz;

	CHECK(elf_where(getpid(), ret, &w) == 0 && elf_symtab__after_call(&w), "a return address");
	CHECK(elf_where(getpid(), (uint64_t)(uintptr_t)unit_caller, &w) == 0 &&
	      !elf_symtab__after_call(&w), "a function's first byte follows no call");

	/* innermost: any address in a file; then returns */
	a[0] = (uint64_t)(uintptr_t)unit_caller + 1;
	a[1] = ret;
	sz = take(n, a, 2, out, sizeof(buf));
	CHECK(sz && out->nframes == 3 && !(out->flags & GPUIO_PYS_NATIVE_CUT), "2 natives kept: %u",
	      out->nframes);
	CHECK(nrec == 2 && !strcmp(names[0], "unit_caller") && !strcmp(names[1], "unit_caller"),
	      "named unit_caller twice (%u): %s %s", nrec, names[0], names[1]);

	/* a heap address (no file) cuts it there, the Python frame moves up */
	a[0] = ret;
	a[1] = heap;
	a[2] = ret;
	sz = take(n, a, 3, out, sizeof(buf));
	CHECK(out->nframes == 2 && out->frames[0].code == ret && out->frames[1].code == 0xc0de &&
	      out->frames[1].lasti == 7 && (out->flags & GPUIO_PYS_NATIVE_CUT) &&
	      sz == sizeof(*out) + 2 * sizeof(out->frames[0]) && out->hdr.size == sz,
	      "cut at the heap: %u frames", out->nframes);
	/* a function's first byte past the innermost: no return address */
	a[0] = ret;
	a[1] = (uint64_t)(uintptr_t)unit_caller;
	take(n, a, 2, out, sizeof(buf));
	CHECK(out->nframes == 2 && (out->flags & GPUIO_PYS_NATIVE_CUT), "cut at a non-return");
	CHECK(nrec == 3, "each address named once per process: %u records", nrec);
	native_frames__counts(n, &named, &cut);
	CHECK(named == 3 && cut == 3, "named %lu cut %lu", named, cut);
	/* no room: nothing done */
	CHECK(take(n, a, 2, out, 8) == 0, "a record larger than the room");
	native_frames__free(n);
	elf_symtab__cache_free();
	free((void *)(uintptr_t)heap);
	return unit_done("unit_native_frames");
}
