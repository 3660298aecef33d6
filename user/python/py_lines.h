/* SPDX-License-Identifier: MIT */
/*
 * py_lines.h — a code object's line at an instruction, from its line table
 * (co_linetable) as the interpreter of 3.minor writes it: 3.10's pairs of
 * byte deltas (PEP 626), 3.11+'s location entries (Objects/locations.md);
 * and the interpreter's strings (ASCII, Latin-1, UCS-2, UCS-4) as UTF-8.
 */
#ifndef GPUIO_PY_LINES_H
#define GPUIO_PY_LINES_H

#include <stddef.h>
#include <stdint.h>

/*
 * The line of instruction lasti (code units) of a code object of 3.minor
 * that starts at firstlineno, from its line table lt[0..len). -1: the
 * instruction has no line (the interpreter's own), or is past what lt
 * holds (a table cut short).
 */
int py_line(unsigned minor, const uint8_t *lt, size_t len, int firstlineno, int lasti);

/*
 * A string of kind GPUIO_PYSTR_* (n bytes at s) as UTF-8 into out (NUL-
 * terminated, cut at a character boundary to fit len). Returns its length.
 */
size_t py_str_utf8(unsigned kind, const uint8_t *s, size_t n, char *out, size_t len);

#endif /* GPUIO_PY_LINES_H */
