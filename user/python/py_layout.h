/* SPDX-License-Identifier: MIT */
/*
 * py_layout.h — where a CPython interpreter keeps what gpuio's stack walk
 * reads (struct gpuio_py_layout, bpf/gpuio_abi.h): for 3.10 to 3.12 from a
 * table made from each version's own headers (scripts/python/py_offsets.c);
 * from 3.13 from the _Py_DebugOffsets the interpreter publishes at the start
 * of _PyRuntime. A layout is only used once checked against the running
 * interpreter (py_find.c).
 */
#ifndef GPUIO_PY_LAYOUT_H
#define GPUIO_PY_LAYOUT_H

#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "bpf/gpuio_abi.h"

#define PY_MINOR_MIN 10
#define PY_MINOR_TABLE_MAX 12           /* the table's last; later ones publish their offsets */
#define PY_DEBUG_OFFSETS_SIZE 584       /* the 3.13 _Py_DebugOffsets */

/* The table's layout of 3.minor (10..12). 0, or -ENOENT: not in the table. */
int py_layout__table(unsigned minor, struct gpuio_py_layout *out);
/*
 * The layout of 3.13 from the _Py_DebugOffsets at the start of _PyRuntime
 * (buf: its first len bytes). 0; -EINVAL when the cookie is not there;
 * -ENOTSUP for a version whose _Py_DebugOffsets gpuio cannot read (its
 * layout changes with every minor version), with the version in *hex.
 */
int py_layout__debug_offsets(const void *buf, size_t len, struct gpuio_py_layout *out,
			     uint64_t *hex);

/* What the walk reads of a code object to tell it from another that
 * reuses its address (its name, file name, first line): out->code_win.
 * 0, or -ENOTSUP when those lie beyond what it reads at once. */
#define PY_CODE_WIN_MAX 248
int py_layout__finish(struct gpuio_py_layout *out);

#endif /* GPUIO_PY_LAYOUT_H */
