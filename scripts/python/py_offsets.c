// SPDX-License-Identifier: MIT
/*
 * py_offsets.c — prints the offsets gpuio's Python stack walk reads
 * (struct gpuio_py_layout), from an interpreter's own internal headers:
 * how the table in user/python/py_layout.c was made. Per version:
 *   I=PREFIX/include/python3.X
 *   gcc -I$I -I$I/internal scripts/python/py_offsets.c -o /tmp/o && /tmp/o
 * From 3.13 the interpreter publishes them itself (_Py_DebugOffsets), so
 * the table stops at 3.12. gpuio checks them against the running
 * interpreter at attach (user/python/py_find.c) before using them.
 */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <stddef.h>
#include <stdio.h>
#if PY_VERSION_HEX >= 0x030d0000
#include "internal/pycore_runtime.h"
#include "internal/pycore_frame.h"
#include "internal/pycore_code.h"
#elif PY_VERSION_HEX >= 0x030b0000
#include "internal/pycore_runtime.h"
#include "internal/pycore_interp.h"
#include "internal/pycore_frame.h"
#include "internal/pycore_code.h"
#else
#include "internal/pycore_runtime.h"
#include "internal/pycore_interp.h"
#include "frameobject.h"
#endif
#define O(t, f) printf("%-40s %zu\n", #t "." #f, offsetof(t, f))
int main(void) {
	printf("version %x\n", PY_VERSION_HEX);
	O(_PyRuntimeState, interpreters.head);
#if PY_VERSION_HEX >= 0x030b0000
	O(PyInterpreterState, threads.head);
#else
	O(PyInterpreterState, tstate_head);
#endif
	O(PyThreadState, next); O(PyThreadState, interp); O(PyThreadState, thread_id);
#if PY_VERSION_HEX >= 0x030b0000
	O(PyThreadState, native_thread_id);
#endif
#if PY_VERSION_HEX >= 0x030d0000
	O(PyThreadState, current_frame);
	O(_PyInterpreterFrame, f_executable); O(_PyInterpreterFrame, previous); O(_PyInterpreterFrame, instr_ptr); O(_PyInterpreterFrame, owner);
#elif PY_VERSION_HEX >= 0x030b0000
	O(PyThreadState, cframe); O(_PyCFrame, current_frame);
	O(_PyInterpreterFrame, f_code); O(_PyInterpreterFrame, previous); O(_PyInterpreterFrame, prev_instr); O(_PyInterpreterFrame, owner);
	O(PyCodeObject, _co_firsttraceable);
#else
	O(PyThreadState, frame);
	O(PyFrameObject, f_back); O(PyFrameObject, f_code); O(PyFrameObject, f_lasti);
#endif
	O(PyCodeObject, co_filename); O(PyCodeObject, co_name);
#if PY_VERSION_HEX >= 0x030b0000
	O(PyCodeObject, co_qualname); O(PyCodeObject, co_code_adaptive);
#endif
	O(PyCodeObject, co_firstlineno); O(PyCodeObject, co_linetable);
	printf("%-40s %zu\n", "sizeof PyASCIIObject", sizeof(PyASCIIObject));
	printf("%-40s %zu\n", "sizeof PyCompactUnicodeObject", sizeof(PyCompactUnicodeObject));
	O(PyASCIIObject, state); O(PyASCIIObject, length); O(PyCompactUnicodeObject, utf8); O(PyCompactUnicodeObject, utf8_length);
	O(PyBytesObject, ob_sval); O(PyVarObject, ob_size); O(PyObject, ob_type);
	{ PyASCIIObject a = {0}; a.state.ascii = 1; printf("ascii bit byte %x\n", *(unsigned*)&a.state);
	  PyASCIIObject b = {0}; b.state.compact = 1; printf("compact bit %x\n", *(unsigned*)&b.state);
	  PyASCIIObject k = {0}; k.state.kind = 7; printf("kind bits %x\n", *(unsigned*)&k.state); }
	return 0;
}
