// SPDX-License-Identifier: MIT
/* utf8.c — UTF-8 validation and U+FFFD repair. See utf8.h. */
#include <string.h>
#include "lib/utf8.h"

/*
 * Length of the well-formed sequence (2..4 bytes) at s, or 0 with *bad = the
 * length of its maximal subpart (>= 1): the bytes that start a well-formed
 * sequence but do not complete it.
 */
size_t utf8_seq_len(const unsigned char *s, size_t n, size_t *bad)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t need;

	if (c >= 0xc2 && c <= 0xdf) {
		need = 1;
	} else if (c >= 0xe0 && c <= 0xef) {
		need = 2;
		if (c == 0xe0)
			lo = 0xa0;      /* no overlong forms */
		else if (c == 0xed)
			hi = 0x9f;      /* no surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		need = 3;
		if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f;      /* nothing above U+10FFFF */
	} else {
		*bad = 1;
		return 0;
	}
	for (size_t i = 1; i <= need; i++) {
		if (i >= n || s[i] < lo || s[i] > hi) {
			*bad = i;
			return 0;
		}
		lo = 0x80;
		hi = 0xbf;
	}
	return need + 1;
}

bool utf8_valid(const void *sv, size_t n)
{
	const unsigned char *s = sv;
	size_t i = 0, bad;

	while (i < n) {
		size_t k;

		if (s[i] < 0x80) {
			i++;
			continue;
		}
		k = utf8_seq_len(s + i, n - i, &bad);
		if (!k)
			return false;
		i += k;
	}
	return true;
}

size_t utf8_repair(const void *sv, size_t n, char *out)
{
	const unsigned char *s = sv;
	size_t i = 0, o = 0;

	while (i < n) {
		size_t bad = 0, k;

		if (s[i] < 0x80) {
			out[o++] = (char)s[i++];
			continue;
		}
		k = utf8_seq_len(s + i, n - i, &bad);
		if (k) {
			memcpy(out + o, s + i, k);
			o += k;
			i += k;
		} else {
			memcpy(out + o, "\xef\xbf\xbd", 3);
			o += 3;
			i += bad;
		}
	}
	return o;
}
