/* SPDX-License-Identifier: MIT */
/*
 * stacks.h — the Python stacks of a capture (bpf/trace/pystack.bpf.h): each
 * stack once, each code object once, per process and image (an exec starts
 * a new one: the same addresses mean other code), and whether the image's
 * interpreter passed its check (its PY_PROC record) — a stack read with a
 * layout that was never confirmed is not shown. Frames turn into
 * file:line:function here, the line from the code object's own line table
 * (python/py_lines.h), once per frame asked.
 *
 * The session (session.c) feeds it in pass 1; tools get a STACK_AT
 * record's stack as a reference (model_stack_at.stack) and read it after.
 * Memory: the distinct stacks and code objects, never the events.
 */
#ifndef GPUIO_MODEL_STACKS_H
#define GPUIO_MODEL_STACKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "bpf/gpuio_abi.h"

struct model_stacks;

struct model_stack {
	uint32_t pid;
	uint32_t gen;                   /* the process's image: execs before it */
	uint16_t nframes;
	uint16_t flags;                 /* GPUIO_PYS_* */
	uint16_t nnative;               /* frames [0, nnative): native, before the Python ones */
	uint32_t frame0;                /* its frames in the table's pool, innermost first */
	uint64_t id;
};

struct model_frame {
	const char *file;               /* "" when its code object was never sent */
	const char *func;               /* its qualified name (3.11+), or its name */
	int line;                       /* -1 unknown */
	uint64_t code;                  /* native: the address */
	int32_t lasti;
	bool native;                    /* a native frame (gpuio_abi.h): its file is the ELF
					 * file, func its symbol, no line */
};

struct model_stacks *model_stacks__new(void);
void model_stacks__free(struct model_stacks *st);

/*
 * Pass 1, in record order. 0 or -ENOMEM. at: the exec's record ordinal (the
 * session's count of records read, this one included), so that a later pass
 * finds each record's image again.
 */
int model_stacks__exec(struct model_stacks *st, uint32_t pid, uint64_t at);
int model_stacks__py_proc(struct model_stacks *st, const struct gpuio_py_proc *r);
int model_stacks__stack(struct model_stacks *st, const struct gpuio_py_stack *r);
int model_stacks__code(struct model_stacks *st, const struct gpuio_py_code *r);
/* The stack a STACK_AT record of pid names, in the image pid had at record
 * ordinal at (pass 1: the record being read; a replay: the same record
 * again): a reference (0: none known). */
uint32_t model_stacks__ref(const struct model_stacks *st, uint32_t pid, uint64_t id, uint64_t at);

/*
 * After pass 1: the stack a reference names, NULL when there is none or
 * its interpreter never passed its check. Its i-th frame (innermost 0).
 */
const struct model_stack *model_stacks__get(const struct model_stacks *st, uint32_t ref);
void model_stacks__frame(const struct model_stacks *st, const struct model_stack *k, unsigned i,
			 struct model_frame *out);
/*
 * Whether a frame is not the program's own Python code: native frames,
 * the standard library (.../lib/python3.N/, lib64 too), installed packages
 * (site-packages, dist-packages), frozen and generated code (<frozen ...>,
 * <string>) and a file never named (""). The one rule for "the line of the
 * program": the report's call sites and the exports' `site` arg.
 */
bool model_frame__library(const struct model_frame *f);
/* What the capture's PY_PROC records said of pid's latest image: a status
 * (enum gpuio_py_status, 0 none) and its line ("" none). */
uint32_t model_stacks__status(const struct model_stacks *st, uint32_t pid, const char **what);
/* Counts: stacks, code objects, processes by status */
struct model_stacks_counts {
	size_t stacks, codes;
	size_t procs[GPUIO_PYP_GAVE_UP + 1];
};
void model_stacks__counts(const struct model_stacks *st, struct model_stacks_counts *out);

#endif /* GPUIO_MODEL_STACKS_H */
