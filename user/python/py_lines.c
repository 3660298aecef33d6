// SPDX-License-Identifier: MIT
/*
 * py_lines.c — line tables and strings of CPython code objects (py_lines.h),
 * decoded as the interpreter itself does (Objects/codeobject.c of each
 * version: advance(), get_line_delta(), scan_varint()).
 */
#include <string.h>
#include <linux/types.h>
#include "bpf/gpuio_abi.h"
#include "python/py_lines.h"

/* 3.10: (byte delta of the address, signed line delta) pairs; -128: no line */
static int line_310(const uint8_t *lt, size_t len, int line, int lasti)
{
	long addr = (long)lasti * 2, end = 0;

	for (size_t i = 0; i + 1 < len; i += 2) {
		long start = end;
		int8_t dl = (int8_t)lt[i + 1];
		int here;

		end += lt[i];
		if (dl == -128) {
			here = -1;
		} else {
			line += dl;
			here = line;
		}
		if (addr >= start && addr < end)
			return here;
	}
	return -1;
}

/* 3.11+: 6-bit varints, the sign in the low bit of the signed ones */
static unsigned varint(const uint8_t *p, const uint8_t *end)
{
	unsigned v = 0, shift = 0;
	uint8_t b;

	do {
		if (p >= end || shift > 30)
			return 0;
		b = *p++;
		v |= (unsigned)(b & 63) << shift;
		shift += 6;
	} while (b & 64);
	return v;
}

static int svarint(const uint8_t *p, const uint8_t *end)
{
	unsigned u = varint(p, end);

	return u & 1 ? -(int)(u >> 1) : (int)(u >> 1);
}

enum { LOC_SHORT_MAX = 9, LOC_ONE_LINE0 = 10, LOC_ONE_LINE2 = 12, LOC_NO_COLUMNS = 13,
       LOC_LONG = 14, LOC_NONE = 15 };

/* Each entry: a byte 1cccclll (code c, l + 1 code units), then c's operands. */
static int line_311(const uint8_t *lt, size_t len, int line, int lasti)
{
	const uint8_t *p = lt, *end = lt + len;
	long at = 0;

	while (p < end) {
		unsigned code = (*p >> 3) & 15, n = (*p & 7) + 1;
		int here;

		if (code == LOC_NO_COLUMNS || code == LOC_LONG)
			line += svarint(p + 1, end);
		else if (code >= LOC_ONE_LINE0 && code <= LOC_ONE_LINE2)
			line += (int)code - LOC_ONE_LINE0;
		here = code == LOC_NONE ? -1 : line;
		if (lasti >= at && lasti < at + (long)n)
			return here;
		at += n;
		do
			p++;
		while (p < end && !(*p & 128));
	}
	return -1;
}

int py_line(unsigned minor, const uint8_t *lt, size_t len, int firstlineno, int lasti)
{
	if (lasti < 0)
		return firstlineno;
	return minor <= 10 ? line_310(lt, len, firstlineno, lasti) :
	       line_311(lt, len, firstlineno, lasti);
}

/* One code point as UTF-8 into out[at..len); false when it does not fit. */
static int put_cp(uint32_t c, char *out, size_t len, size_t *at)
{
	uint8_t b[4];
	size_t n;

	if (c >= 0xd800 && c < 0xe000)
		c = 0xfffd;             /* a lone surrogate: not UTF-8 */
	if (c < 0x80) {
		b[0] = (uint8_t)c, n = 1;
	} else if (c < 0x800) {
		b[0] = 0xc0 | (c >> 6), b[1] = 0x80 | (c & 63), n = 2;
	} else if (c < 0x10000) {
		b[0] = 0xe0 | (c >> 12), b[1] = 0x80 | ((c >> 6) & 63), b[2] = 0x80 | (c & 63), n = 3;
	} else {
		c = c > 0x10ffff ? 0xfffd : c;
		b[0] = 0xf0 | (c >> 18), b[1] = 0x80 | ((c >> 12) & 63);
		b[2] = 0x80 | ((c >> 6) & 63), b[3] = 0x80 | (c & 63), n = 4;
	}
	if (*at + n >= len)
		return 0;
	memcpy(out + *at, b, n);
	*at += n;
	return 1;
}

size_t py_str_utf8(unsigned kind, const uint8_t *s, size_t n, char *out, size_t len)
{
	size_t at = 0;

	if (!len)
		return 0;
	if (kind == GPUIO_PYSTR_UTF8) {
		n = n < len - 1 ? n : len - 1;
		memcpy(out, s, n);
		out[n] = 0;
		return n;
	}
	for (size_t i = 0; i + kind <= n; i += kind) {
		uint32_t c = kind == GPUIO_PYSTR_LATIN1 ? s[i] :
			     kind == GPUIO_PYSTR_UCS2 ? (uint32_t)(s[i] | s[i + 1] << 8) :
			     (uint32_t)(s[i] | s[i + 1] << 8 | s[i + 2] << 16 | (uint32_t)s[i + 3] << 24);

		if (!put_cp(c, out, len, &at))
			break;
	}
	out[at] = 0;
	return at;
}
