// SPDX-License-Identifier: MIT
/*
 * unit_json_escape — lib/json_writer.c's json_escape (JSON put together
 * with printf: the monitor's alert answers) against escapes written out by
 * hand from RFC 8259 and Python's bytes.decode("utf-8", "replace"), its
 * cuts (never inside an escape or a UTF-8 sequence), and against
 * json_writer__str on random bytes: one escaping, two ways to write it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/json_writer.h"
#include "unit.h"

static void expect(const char *in, size_t n, size_t room, const char *want)
{
	char out[256];
	size_t k = json_escape(out, room, in, n);

	CHECK(k == strlen(want) && !strcmp(out, want), "%zu bytes in %zu of room: got \"%s\", want \"%s\"",
	      n, room, out, want);
}

#define EXPECT(in, room, want) expect(in, sizeof(in) - 1, room, want)

/* json_writer__str of s, its quotes taken off, into out */
static size_t writer_str(const unsigned char *s, size_t n, char *out, size_t cap)
{
	struct json_writer *w;
	FILE *f = tmpfile();
	size_t got;

	if (!f || json_writer__new(fileno(f), false, false, &w))
		return 0;
	json_writer__str(w, s, n);
	json_writer__close(w);
	rewind(f);
	got = fread(out, 1, cap - 1, f);
	fclose(f);
	if (got < 2)
		return 0;
	memmove(out, out + 1, got - 2);
	out[got - 2] = 0;
	return got - 2;
}

int main(void)
{
	unsigned char in[64];
	char a[512], b[512];
	unsigned seed = 12345;

	EXPECT("plain /path/ok.bin", 64, "plain /path/ok.bin");
	EXPECT("a\"b\\c", 64, "a\\\"b\\\\c");
	EXPECT("\n\t\r\b\f", 64, "\\n\\t\\r\\b\\f");
	EXPECT("\x01\x1f", 64, "\\u0001\\u001f");
	EXPECT("\x7f", 64, "\x7f");                             /* DEL: valid JSON as it is */
	EXPECT("caf\xc3\xa9 \xe2\x82\xac", 64, "caf\xc3\xa9 \xe2\x82\xac");   /* UTF-8 kept */
	EXPECT("\xc3x", 64, "\xef\xbf\xbdx");                   /* a cut sequence: one U+FFFD */
	EXPECT("\xe2\x82", 64, "\xef\xbf\xbd");                 /* one maximal subpart */
	EXPECT("\xff\xfe", 64, "\xef\xbf\xbd\xef\xbf\xbd");
	EXPECT("\xed\xa0\x80", 64, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");    /* a surrogate */
	/* the room: len - 1 bytes and the NUL, cut before a whole unit */
	EXPECT("abc\"", 5, "abc");
	EXPECT("abc\"", 6, "abc\\\"");
	EXPECT("a\xc3\xa9", 3, "a");
	EXPECT("a\xc3\xa9", 4, "a\xc3\xa9");
	EXPECT("a\x01", 7, "a");
	EXPECT("a\x01", 8, "a\\u0001");
	EXPECT("abc", 1, "");
	{
		char z[4] = "zzz";

		CHECK(json_escape(z, 0, "abc", 3) == 0 && z[0] == 'z', "no room: nothing written");
	}

	/* random bytes (control, quotes, ill-formed and well-formed UTF-8):
	 * the same text as the streamed writer */
	for (int t = 0; t < 2000; t++) {
		size_t n = (size_t)(rand_r(&seed) % sizeof(in)), ka, kb;

		for (size_t i = 0; i < n; i++) {
			unsigned r = (unsigned)rand_r(&seed);

			static const unsigned char odd[] = "\"\\\n\x01\xc3\xa9\xe2\x82\xac\xff\xed";

			in[i] = r % 4 == 0 ? odd[r / 4 % sizeof(odd)] :
				(unsigned char)(r % 4 == 1 ? 0x80 + r / 4 % 0x80 : 0x20 + r / 4 % 0x60);
		}
		ka = json_escape(a, sizeof(a), in, n);
		kb = writer_str(in, n, b, sizeof(b));
		CHECK(ka == kb && !memcmp(a, b, ka), "random string %d (%zu bytes): %zu vs %zu bytes", t, n,
		      ka, kb);
	}
	return unit_done("unit_json_escape");
}
