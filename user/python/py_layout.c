// SPDX-License-Identifier: MIT
/*
 * py_layout.c — the interpreter layouts (py_layout.h). The table's numbers
 * were printed by scripts/python/py_offsets.c compiled against CPython
 * 3.10.13, 3.11.7 and 3.12.1's internal headers (x86-64, release builds);
 * they are checked against each running interpreter before use.
 */
#include <errno.h>
#include <string.h>
#include "python/py_layout.h"

#define N GPUIO_PY_NONE

static const struct gpuio_py_layout table[] = {
	{       /* 3.10: PyFrameObject chain from tstate->frame; f_lasti in code units */
		.minor = 10, .interp_head = 32, .threads_head = 8, .ts_next = 8,
		.ts_thread_id = 176, .ts_frame = 24, .cframe_frame = N,
		.f_prev = 24, .f_code = 32, .f_instr = 96, .f_owner = N, .co_code = N,
		.co_filename = 104, .co_name = 112, .co_firstlineno = 40, .co_linetable = 120,
		.str_state = 32, .str_ascii_size = 48, .str_compact_size = 72,
		.str_utf8 = 56, .str_utf8_len = 48, .str_len = 16, .owner_cstack = 0xff,
	},
	{       /* 3.11: _PyInterpreterFrame chain from tstate->cframe->current_frame */
		.minor = 11, .interp_head = 40, .threads_head = 16, .ts_next = 8,
		.ts_thread_id = 152, .ts_frame = 56, .cframe_frame = 8,
		.f_prev = 48, .f_code = 32, .f_instr = 56, .f_owner = 69, .co_code = 184,
		.co_filename = 112, .co_name = 128 /* co_qualname */, .co_firstlineno = 72,
		.co_linetable = 136, .str_state = 32, .str_ascii_size = 48,
		.str_compact_size = 72, .str_utf8 = 56, .str_utf8_len = 48, .str_len = 16,
		.owner_cstack = 0xff,
	},
	{       /* 3.12: as 3.11, frames owned by the C stack (shims) skipped */
		.minor = 12, .interp_head = 40, .threads_head = 72, .ts_next = 8,
		.ts_thread_id = 136, .ts_frame = 56, .cframe_frame = 0,
		.f_prev = 8, .f_code = 0, .f_instr = 56, .f_owner = 70, .co_code = 192,
		.co_filename = 112, .co_name = 128, .co_firstlineno = 68, .co_linetable = 136,
		.str_state = 32, .str_ascii_size = 40, .str_compact_size = 56,
		.str_utf8 = 48, .str_utf8_len = 40, .str_len = 16, .owner_cstack = 3,
	},
};

int py_layout__finish(struct gpuio_py_layout *out)
{
	unsigned end = 16;              /* ob_type */

	if (out->co_filename + 8u > end)
		end = out->co_filename + 8u;
	if (out->co_name + 8u > end)
		end = out->co_name + 8u;
	if (out->co_firstlineno + 4u > end)
		end = out->co_firstlineno + 4u;
	if (end > PY_CODE_WIN_MAX)
		return -ENOTSUP;
	out->code_win = (uint8_t)((end + 7) & ~7u);
	return 0;
}

int py_layout__table(unsigned minor, struct gpuio_py_layout *out)
{
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (table[i].minor == minor) {
			*out = table[i];
			return 0;
		}
	return -ENOENT;
}

/*
 * 3.13's _Py_DebugOffsets (Include/internal/pycore_runtime.h), every field a
 * uint64_t, in its order: only the groups read here are named.
 */
struct debug_offsets_313 {
	char cookie[8];
	uint64_t version, free_threaded;
	struct { uint64_t size, finalizing, interpreters_head; } runtime_state;
	struct {
		uint64_t size, id, next, threads_head, gc, imports_modules, sysdict, builtins,
			 ceval_gil, gil_runtime_state, gil_enabled, gil_locked, gil_holder;
	} interpreter_state;
	struct {
		uint64_t size, prev, next, interp, current_frame, thread_id, native_thread_id,
			 datastack_chunk, status;
	} thread_state;
	struct { uint64_t size, previous, executable, instr_ptr, localsplus, owner; } frame;
	struct {
		uint64_t size, filename, name, qualname, linetable, firstlineno, argcount,
			 localsplusnames, localspluskinds, co_code_adaptive;
	} code;
	struct { uint64_t size, ob_type; } pyobject;
	struct { uint64_t size, tp_name, tp_repr, tp_flags; } type_object;
	struct { uint64_t size, ob_item, ob_size; } tuple, list;
	struct { uint64_t size, ma_keys, ma_values; } dict;
	struct { uint64_t size, ob_fval; } float_;
	struct { uint64_t size, lv_tag, ob_digit; } long_;
	struct { uint64_t size, ob_size, ob_sval; } bytes;
	struct { uint64_t size, state, length, asciiobject_size; } unicode;
	struct { uint64_t size, collecting; } gc;
};
_Static_assert(sizeof(struct debug_offsets_313) == PY_DEBUG_OFFSETS_SIZE, "3.13's layout");

/* every offset the walk uses fits its 16 bits, or the layout is not one we can use */
static int fit(uint64_t v, uint16_t *out)
{
	if (v >= GPUIO_PY_NONE)
		return -ERANGE;
	*out = (uint16_t)v;
	return 0;
}

int py_layout__debug_offsets(const void *buf, size_t len, struct gpuio_py_layout *out,
			     uint64_t *hex)
{
	struct debug_offsets_313 d;
	int err = 0;

	if (len < 16 || memcmp(buf, "xdebugpy", 8))
		return -EINVAL;
	memcpy(&d.version, (const char *)buf + 8, sizeof(d.version));
	*hex = d.version;
	if ((d.version >> 16) != 0x030d || len < sizeof(d))
		return -ENOTSUP;
	memcpy(&d, buf, sizeof(d));
	if (d.free_threaded)
		return -ENOTSUP;        /* the free-threaded build: other object headers */
	memset(out, 0, sizeof(*out));
	out->minor = 13;
	out->cframe_frame = GPUIO_PY_NONE;
	out->owner_cstack = 3;          /* FRAME_OWNED_BY_CSTACK */
	err |= fit(d.runtime_state.interpreters_head, &out->interp_head);
	err |= fit(d.interpreter_state.threads_head, &out->threads_head);
	err |= fit(d.thread_state.next, &out->ts_next);
	err |= fit(d.thread_state.thread_id, &out->ts_thread_id);
	err |= fit(d.thread_state.current_frame, &out->ts_frame);
	err |= fit(d.frame.previous, &out->f_prev);
	err |= fit(d.frame.executable, &out->f_code);
	err |= fit(d.frame.instr_ptr, &out->f_instr);
	err |= fit(d.frame.owner, &out->f_owner);
	err |= fit(d.code.co_code_adaptive, &out->co_code);
	err |= fit(d.code.filename, &out->co_filename);
	err |= fit(d.code.qualname, &out->co_name);
	err |= fit(d.code.firstlineno, &out->co_firstlineno);
	err |= fit(d.code.linetable, &out->co_linetable);
	err |= fit(d.unicode.state, &out->str_state);
	err |= fit(d.unicode.length, &out->str_len);
	err |= fit(d.unicode.asciiobject_size, &out->str_ascii_size);
	/* not published: PyCompactUnicodeObject as in 3.12 (checked by decoding a name at attach) */
	out->str_utf8_len = 40;
	out->str_utf8 = 48;
	out->str_compact_size = 56;
	return err ? -ERANGE : 0;
}
