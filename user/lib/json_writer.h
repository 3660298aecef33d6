/* SPDX-License-Identifier: MIT */
/*
 * json_writer.h — a small buffered JSON text writer, plain or gzip.
 *
 * Strings are always emitted as valid JSON and valid UTF-8, whatever bytes
 * they hold:
 *   - '"' and '\\' are backslash-escaped; \b \f \n \r \t use their short
 *     escapes, other bytes below 0x20 become \u00XX;
 *   - well-formed UTF-8 passes through unchanged (DEL and U+2028/9 included);
 *   - ill-formed UTF-8 is replaced by U+FFFD, one per *maximal subpart* of an
 *     ill-formed sequence (Unicode §3.9 "U+FFFD substitution of maximal
 *     subparts", W3C/WHATWG practice). This is exactly what Python's
 *     bytes.decode("utf-8", "replace") produces, so a test can compute the
 *     expected text from raw bytes with the standard library alone.
 *     E.g. "\xc3x" -> "\uFFFDx", "\xe2\x82" -> one U+FFFD, "\xff" -> one,
 *     "\xed\xa0\x80" (a surrogate) -> three.
 *
 * Errors are sticky: the first write error is kept and returned by
 * json_writer__close(); writes after it are dropped.
 */
#ifndef GPUIO_JSON_WRITER_H
#define GPUIO_JSON_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct json_writer;

/*
 * Write to fd (gzip-compressed when gz). With own_fd the writer fsyncs and
 * closes fd in __close(); otherwise fd is left open (stdout).
 */
int json_writer__new(int fd, bool gz, bool own_fd, struct json_writer **out);
/* Flush everything; returns 0 or the first error (-errno). Frees w. */
int json_writer__close(struct json_writer *w);
int json_writer__error(const struct json_writer *w);
/* uncompressed bytes written so far */
uint64_t json_writer__bytes(const struct json_writer *w);

/* Raw text, copied as is (the caller guarantees it is valid JSON text). */
void json_writer__raw(struct json_writer *w, const char *s, size_t n);
void json_writer__puts(struct json_writer *w, const char *s);
void json_writer__putc(struct json_writer *w, char c);
void json_writer__printf(struct json_writer *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* A quoted, escaped JSON string of n arbitrary bytes (see above). */
void json_writer__str(struct json_writer *w, const void *s, size_t n);
/* A quoted string of a C string of at most max bytes (for fixed char[]). */
void json_writer__strn(struct json_writer *w, const char *s, size_t max);
void json_writer__cstr(struct json_writer *w, const char *s);
/* The same escaping into dst (no quotes, NUL-terminated, at most len - 1
 * bytes, cut before an escape or a UTF-8 sequence that would not fit):
 * for JSON put together with printf. Returns the length. */
size_t json_escape(char *dst, size_t len, const void *s, size_t n);

void json_writer__u64(struct json_writer *w, uint64_t v);
void json_writer__s64(struct json_writer *w, int64_t v);
void json_writer__bool(struct json_writer *w, bool v);
/* ns as microseconds with exactly 3 decimals, no floating point: -1500 -> -1.500 */
void json_writer__us(struct json_writer *w, int64_t ns);
/* A double with 3 decimals (rates); non-finite values become 0 (JSON has no NaN). */
void json_writer__f3(struct json_writer *w, double v);

/* Same formatting into a caller buffer (>= 24 bytes); returns the length. */
size_t json_fmt_u64(char *buf, uint64_t v);
size_t json_fmt_us(char *buf, int64_t ns);

/*
 * The byte length of the longest prefix of s[0..n) that is at most max bytes
 * and does not end inside a well-formed UTF-8 sequence (for cutting names).
 */
size_t json_utf8_cut(const void *s, size_t n, size_t max);

#endif /* GPUIO_JSON_WRITER_H */
