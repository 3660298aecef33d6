/* SPDX-License-Identifier: MIT */
/*
 * py_find.h — is a process running CPython, which version, and where its
 * interpreter keeps its threads and frames: the layout bpf/trace/
 * pystack.bpf.h walks with, found from the ELF file that holds _PyRuntime
 * (the python binary or libpython) and checked against the running
 * interpreter before it is used — a version gpuio does not know, or a
 * layout that does not match, gets no frames and a reason, never wrong
 * frames.
 */
#ifndef GPUIO_PY_FIND_H
#define GPUIO_PY_FIND_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "python/py_layout.h"

struct py_found {
	struct gpuio_py_layout layout;  /* runtime and code_type are this process's addresses */
	char path[256];                 /* the file holding _PyRuntime */
	unsigned minor;                 /* 3.minor */
	uint64_t hex;                   /* PY_VERSION_HEX, 0 when the binary does not say */
	unsigned threads;               /* thread states seen by the check */
	unsigned frames;                /* frames checked (their code objects are code) */
};

/*
 * Find and check pid's interpreter. Returns 0 (out filled); -ENOENT: no
 * CPython in the process; -EAGAIN: not started yet (no interpreter, or no
 * Python frame to check: ask again later); -ENOTSUP: a version gpuio cannot
 * read; -EPROTO: the layout does not match this interpreter; other -errno.
 * why: one line saying what was found, or why not.
 */
int py_find(pid_t pid, struct py_found *out, char *why, size_t len);
/*
 * py_find's two halves: the layout alone (the file, version and offsets:
 * known as soon as the interpreter is mapped, before it runs), and the
 * check of a layout against the running interpreter (-EAGAIN while it has
 * no frame yet). A layout is used before its check only provisionally:
 * stacks read with it count once it passes (py_procs.h).
 */
int py_find__layout(pid_t pid, struct py_found *out, char *why, size_t len);
int py_find__check(pid_t pid, struct py_found *f, char *why, size_t len);

#endif /* GPUIO_PY_FIND_H */
