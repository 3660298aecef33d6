// SPDX-License-Identifier: MIT
/* json_writer.c — buffered JSON text out, through out_file (plain or gzip). See json_writer.h. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/json_writer.h"
#include "lib/out_file.h"
#include "lib/utf8.h"

/* The buffer starts small and doubles up to JW_BUF_SIZE before anything is
 * written out: a small output costs a small buffer, a large one is written
 * in the same JW_BUF_SIZE pieces as ever. */
#define JW_BUF_SIZE (256u << 10)
#define JW_BUF_FIRST (8u << 10)
/* room one escaped byte can take: "\u00XX" is 6, U+FFFD is 3 */
#define JW_MAX_EXPAND 8

struct json_writer {
	struct out_file *o;     /* plain or gzip: the one byte sink (out_file.h) */
	int err;
	size_t len, cap;
	uint64_t bytes;
	char *buf;
};

static void flush_buf(struct json_writer *w)
{
	if (w->len && !w->err)
		w->err = out_file__write(w->o, w->buf, w->len);
	w->len = 0;
}

int json_writer__new(int fd, bool gz, bool own_fd, struct json_writer **out)
{
	/* not calloc: the buffer needs no zeroing, the fields are set below */
	struct json_writer *w = malloc(sizeof(*w));
	int err;

	if (!w)
		return -ENOMEM;
	w->err = 0;
	w->len = 0;
	w->bytes = 0;
	w->cap = JW_BUF_FIRST;
	w->buf = malloc(w->cap);
	if (!w->buf) {
		free(w);
		return -ENOMEM;
	}
	err = out_file__new(fd, gz, own_fd, &w->o);
	if (err) {
		free(w->buf);
		free(w);
		return err;
	}
	*out = w;
	return 0;
}

int json_writer__error(const struct json_writer *w)
{
	return w->err;
}

uint64_t json_writer__bytes(const struct json_writer *w)
{
	return w->bytes;
}

int json_writer__close(struct json_writer *w)
{
	int err;

	if (!w)
		return 0;
	flush_buf(w);
	err = out_file__close(w->o);
	if (!w->err)
		w->err = err;
	err = w->err;
	free(w->buf);
	free(w);
	return err;
}

/* Room for n more bytes (n <= JW_BUF_SIZE): a larger buffer while it is not
 * JW_BUF_SIZE yet, else (or out of memory) what it holds written out. */
static void make_room(struct json_writer *w, size_t n)
{
	if (w->len + n <= w->cap)
		return;
	if (w->cap < JW_BUF_SIZE) {
		size_t cap = w->cap;
		char *p;

		while (cap < w->len + n && cap < JW_BUF_SIZE)
			cap *= 2;
		if (cap > JW_BUF_SIZE)
			cap = JW_BUF_SIZE;
		p = realloc(w->buf, cap);
		if (p) {
			w->buf = p;
			w->cap = cap;
			if (w->len + n <= w->cap)
				return;
		}
	}
	flush_buf(w);
}

static inline char *reserve(struct json_writer *w, size_t n)
{
	make_room(w, n);
	return w->buf + w->len;
}

void json_writer__raw(struct json_writer *w, const char *s, size_t n)
{
	w->bytes += n;
	while (n) {
		size_t room, k;

		if (w->len == w->cap)
			make_room(w, 1);
		room = w->cap - w->len;
		k = n < room ? n : room;
		memcpy(w->buf + w->len, s, k);
		w->len += k;
		s += k;
		n -= k;
	}
}

void json_writer__puts(struct json_writer *w, const char *s)
{
	json_writer__raw(w, s, strlen(s));
}

void json_writer__putc(struct json_writer *w, char c)
{
	*reserve(w, 1) = c;
	w->len++;
	w->bytes++;
}

void json_writer__printf(struct json_writer *w, const char *fmt, ...)
{
	char small[512], *p = small;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(small)) {
		p = malloc((size_t)n + 1);
		if (!p) {
			if (!w->err)
				w->err = -ENOMEM;
			return;
		}
		va_start(ap, fmt);
		vsnprintf(p, (size_t)n + 1, fmt, ap);
		va_end(ap);
	}
	json_writer__raw(w, p, (size_t)n);
	if (p != small)
		free(p);
}

/*
 * One unit of s[0..n) (s[0] not plain ASCII) escaped into o, which has
 * room for JW_MAX_EXPAND bytes: returns the bytes written, *used the bytes
 * of s it stands for. The rules are json_writer.h's.
 */
static size_t escape_unit(const unsigned char *s, size_t n, char *o, size_t *used)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char c = s[0];
	size_t bad = 0, k;

	*used = 1;
	if (c == '"' || c == '\\') {
		o[0] = '\\';
		o[1] = (char)c;
		return 2;
	}
	if (c < 0x20) {
		const char *esc = c == '\n' ? "\\n" : c == '\t' ? "\\t" : c == '\r' ? "\\r" :
				  c == '\b' ? "\\b" : c == '\f' ? "\\f" : NULL;
		if (esc) {
			memcpy(o, esc, 2);
			return 2;
		}
		memcpy(o, "\\u00", 4);
		o[4] = hex[c >> 4];
		o[5] = hex[c & 15];
		return 6;
	}
	k = utf8_seq_len(s, n, &bad);
	if (k) {
		memcpy(o, s, k);
		*used = k;
		return k;
	}
	memcpy(o, "\xef\xbf\xbd", 3);   /* U+FFFD */
	*used = bad;
	return 3;
}

/* The length of the run of plain ASCII (copied as is) at s[0..n) */
static size_t plain_run(const unsigned char *s, size_t n)
{
	size_t i = 0;

	while (i < n && s[i] >= 0x20 && s[i] < 0x80 && s[i] != '"' && s[i] != '\\')
		i++;
	return i;
}

void json_writer__str(struct json_writer *w, const void *sv, size_t n)
{
	const unsigned char *s = sv;
	size_t i = 0, run, used, k;

	json_writer__putc(w, '"');
	while (i < n) {
		/* copy a run of plain ASCII at once */
		if ((run = plain_run(s + i, n - i))) {
			json_writer__raw(w, (const char *)s + i, run);
			i += run;
			continue;
		}
		k = escape_unit(s + i, n - i, reserve(w, JW_MAX_EXPAND), &used);
		w->len += k;
		w->bytes += k;
		i += used;
	}
	json_writer__putc(w, '"');
}

size_t json_escape(char *dst, size_t len, const void *sv, size_t n)
{
	const unsigned char *s = sv;
	char unit[JW_MAX_EXPAND];
	size_t i = 0, o = 0, used, k;

	if (!len)
		return 0;
	while (i < n) {
		if (plain_run(s + i, 1)) {
			k = 1;
			unit[0] = (char)s[i];
			used = 1;
		} else {
			k = escape_unit(s + i, n - i, unit, &used);
		}
		if (o + k >= len)
			break;          /* cut before a unit, never inside one */
		memcpy(dst + o, unit, k);
		o += k;
		i += used;
	}
	dst[o] = 0;
	return o;
}

void json_writer__strn(struct json_writer *w, const char *s, size_t max)
{
	json_writer__str(w, s, strnlen(s, max));
}

void json_writer__cstr(struct json_writer *w, const char *s)
{
	json_writer__str(w, s, strlen(s));
}

size_t json_fmt_u64(char *buf, uint64_t v)
{
	char tmp[24];
	size_t n = 0, i;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (i = 0; i < n; i++)
		buf[i] = tmp[n - 1 - i];
	buf[n] = 0;
	return n;
}

size_t json_fmt_us(char *buf, int64_t ns)
{
	/* negate in unsigned arithmetic: INT64_MIN has no positive int64 */
	uint64_t u = ns < 0 ? 0 - (uint64_t)ns : (uint64_t)ns;
	size_t n = 0;
	unsigned frac = (unsigned)(u % 1000);

	if (ns < 0)
		buf[n++] = '-';
	n += json_fmt_u64(buf + n, u / 1000);
	buf[n++] = '.';
	buf[n++] = (char)('0' + frac / 100);
	buf[n++] = (char)('0' + frac / 10 % 10);
	buf[n++] = (char)('0' + frac % 10);
	buf[n] = 0;
	return n;
}

void json_writer__u64(struct json_writer *w, uint64_t v)
{
	char b[24];

	json_writer__raw(w, b, json_fmt_u64(b, v));
}

void json_writer__s64(struct json_writer *w, int64_t v)
{
	char b[24];
	size_t n = 0;

	if (v < 0)
		b[n++] = '-';
	n += json_fmt_u64(b + n, v < 0 ? 0 - (uint64_t)v : (uint64_t)v);
	json_writer__raw(w, b, n);
}

void json_writer__bool(struct json_writer *w, bool v)
{
	json_writer__puts(w, v ? "true" : "false");
}

void json_writer__us(struct json_writer *w, int64_t ns)
{
	char b[32];

	json_writer__raw(w, b, json_fmt_us(b, ns));
}

void json_writer__f3(struct json_writer *w, double v)
{
	if (!isfinite(v))
		v = 0;
	json_writer__printf(w, "%.3f", v);
}

size_t json_utf8_cut(const void *sv, size_t n, size_t max)
{
	const unsigned char *s = sv;
	size_t cut, steps = 0;

	if (n <= max)
		return n;
	cut = max;
	/* s[cut] is the first byte left out: do not leave its lead byte behind */
	while (cut > 0 && steps < 3 && (s[cut] & 0xc0) == 0x80) {
		cut--;
		steps++;
	}
	if (steps && cut < max) {
		size_t bad;

		/* back off only over a real sequence; garbage is cut where it is */
		if (utf8_seq_len(s + cut, n - cut, &bad) == 0)
			return max;
	}
	return cut;
}
