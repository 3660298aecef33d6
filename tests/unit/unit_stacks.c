// SPDX-License-Identifier: MIT
/*
 * unit_stacks — the capture's Python stacks (model/stacks.c): which files
 * are the program's own code (model_frame__library: the stdlib, installed
 * packages, frozen code are not), and a STACK_AT record's stack found in
 * the image its process had when the record was read, also when a later
 * pass asks after an exec gave the same pid new code (the same stack id in
 * two images); native frames before the Python ones, named by their
 * PY_CODE records, never the program's line.
 */
#include <string.h>
#include "model/stacks.h"
#include "unit.h"

static const struct {
	const char *file;
	bool library;
} files[] = {
	{ "/home/u/project/train.py", false },
	{ "/work/tests/progs/stack_truth.py", false },
	{ "train.py", false },
	{ "/home/u/python3.11-notes/app.py", false },
	{ "/usr/lib/python3.11/inspect.py", true },
	{ "/usr/lib64/python3.12/os.py", true },
	{ "/root/.pyenv/versions/3.12.1/lib/python3.12/threading.py", true },
	{ "/usr/lib/python3/dist-packages/torch/utils/data/dataloader.py", true },
	{ "/opt/venv/lib/python3.12/site-packages/numpy/core/numeric.py", true },
	{ "<frozen importlib._bootstrap>", true },
	{ "<string>", true },
	{ "", true },
};

/* A stack record of one frame (code, lasti) named id, of pid */
static void stack_rec(struct model_stacks *st, uint32_t pid, uint64_t id, uint64_t code)
{
	struct {
		struct gpuio_py_stack s;
		struct gpuio_py_frame f[1];
	} r;

	memset(&r, 0, sizeof(r));
	r.s.hdr.type = GPUIO_REC_PY_STACK;
	r.s.hdr.size = sizeof(r);
	r.s.hdr.pid = r.s.hdr.tid = pid;
	r.s.id = id;
	r.s.nframes = 1;
	r.f[0].code = code;
	CHECK(model_stacks__stack(st, &r.s) == 0, "stack %llx", (unsigned long long)id);
}

static void proc_ok(struct model_stacks *st, uint32_t pid)
{
	struct gpuio_py_proc r;

	memset(&r, 0, sizeof(r));
	r.hdr.type = GPUIO_REC_PY_PROC;
	r.hdr.size = sizeof(r);
	r.hdr.pid = pid;
	r.status = GPUIO_PYP_OK;
	CHECK(model_stacks__py_proc(st, &r) == 0, "py_proc");
}

static void images(void)
{
	struct model_stacks *st = model_stacks__new();
	uint32_t a, b;

	/* pid 7: image 0 from record 1, an exec at record 10, image 1 after */
	proc_ok(st, 7);
	stack_rec(st, 7, 0xabc, 0x1000);
	CHECK(model_stacks__exec(st, 7, 10) == 0, "exec");
	proc_ok(st, 7);
	stack_rec(st, 7, 0xabc, 0x2000);
	a = model_stacks__ref(st, 7, 0xabc, 5);
	b = model_stacks__ref(st, 7, 0xabc, 12);
	CHECK(a && b && a != b, "one id, two images: refs %u %u", a, b);
	CHECK(model_stacks__ref(st, 7, 0xabc, 10) == b, "the exec's own record is the new image");
	CHECK(model_stacks__get(st, a) && model_stacks__get(st, a)->gen == 0, "record 5: image 0");
	CHECK(model_stacks__get(st, b) && model_stacks__get(st, b)->gen == 1, "record 12: image 1");
	CHECK(model_stacks__ref(st, 7, 0xdef, 12) == 0, "an unknown id: none");
	CHECK(model_stacks__ref(st, 8, 0xabc, 12) == 0, "another pid: none");
	model_stacks__free(st);
}

/* A native PY_CODE record: addr named func in file */
static void native_code(struct model_stacks *st, uint32_t pid, uint64_t addr, const char *file,
			const char *func)
{
	struct {
		struct gpuio_py_code c;
		char data[64];
	} r;
	size_t fl = strlen(file), nl = strlen(func);

	memset(&r, 0, sizeof(r));
	r.c.hdr.type = GPUIO_REC_PY_CODE;
	r.c.hdr.size = (uint16_t)((sizeof(r.c) + fl + nl + 7) & ~7u);
	r.c.hdr.pid = pid;
	r.c.code = addr;
	r.c.flags = GPUIO_PYC_NATIVE;
	r.c.file_len = (uint16_t)fl;
	r.c.name_len = (uint16_t)nl;
	memcpy(r.data, file, fl);
	memcpy(r.data + fl, func, nl);
	CHECK(model_stacks__code(st, &r.c) == 0, "native code %s", func);
}

/* Native frames before the Python ones: counted, named, no line */
static void natives(void)
{
	struct model_stacks *st = model_stacks__new();
	struct {
		struct gpuio_py_stack s;
		struct gpuio_py_frame f[3];
	} r;
	const struct model_stack *k;
	struct model_frame f;

	memset(&r, 0, sizeof(r));
	r.s.hdr.type = GPUIO_REC_PY_STACK;
	r.s.hdr.size = sizeof(r);
	r.s.hdr.pid = r.s.hdr.tid = 9;
	r.s.id = 0x99;
	r.s.nframes = 3;
	r.f[0] = (struct gpuio_py_frame){ .code = 0x7f0000001234, .lasti = GPUIO_PY_LASTI_NATIVE };
	r.f[1] = (struct gpuio_py_frame){ .code = 0x7f0000005678, .lasti = GPUIO_PY_LASTI_NATIVE };
	r.f[2] = (struct gpuio_py_frame){ .code = 0x1000, .lasti = 4 };
	proc_ok(st, 9);
	CHECK(model_stacks__stack(st, &r.s) == 0, "stack");
	native_code(st, 9, 0x7f0000001234, "/lib/libc.so.6", "__pread64");
	k = model_stacks__get(st, model_stacks__ref(st, 9, 0x99, 1));
	CHECK(k && k->nframes == 3 && k->nnative == 2, "3 frames, 2 native: %u %u",
	      k ? k->nframes : 0, k ? k->nnative : 0);
	if (!k)
		return;
	model_stacks__frame(st, k, 0, &f);
	CHECK(f.native && !strcmp(f.file, "/lib/libc.so.6") && !strcmp(f.func, "__pread64") &&
	      f.line == -1 && f.code == 0x7f0000001234, "frame 0: %s %s %d", f.func, f.file, f.line);
	model_stacks__frame(st, k, 1, &f);
	CHECK(f.native && !f.file[0] && f.line == -1, "frame 1, never named: native, unknown");
	model_stacks__frame(st, k, 2, &f);
	CHECK(!f.native, "frame 2: Python");
	model_stacks__free(st);
}

int main(void)
{
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		struct model_frame f = { .file = files[i].file, .func = "f" };

		CHECK(model_frame__library(&f) == files[i].library, "%s: library %d",
		      files[i].file, files[i].library);
		f.native = true;        /* a native frame is never the program's line */
		CHECK(model_frame__library(&f), "%s native: library", files[i].file);
	}
	images();
	natives();
	return unit_done("unit_stacks");
}
