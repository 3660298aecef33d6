/* SPDX-License-Identifier: MIT */
/*
 * json_read.h — a JSON document read whole into a tree (RFC 8259).
 *
 * The text is kept as given (each value knows its span in it, so an array
 * or object can be handed on as its own JSON text); strings are decoded
 * into a separate arena (escapes resolved, \u surrogate pairs joined, a lone
 * surrogate becomes U+FFFD), NUL-terminated (a decoded NUL cuts the C view,
 * len counts every byte). Numbers stay text, read exactly on demand
 * (json_node__fixed). Nesting deeper than JSON_READ_MAX_DEPTH is refused.
 * An error says what and where: "line L, column C (byte B): expected ..."
 * — a cut-short text is "unexpected end of the text".
 */
#ifndef GPUIO_LIB_JSON_READ_H
#define GPUIO_LIB_JSON_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JSON_READ_MAX_DEPTH 128

enum json_type { JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT };

struct json_node {
	uint8_t type;           /* enum json_type */
	bool b;                 /* JSON_BOOL */
	uint32_t n;             /* arrays, objects: members; strings: decoded bytes */
	uint32_t next;          /* the next member of the parent (index + 1; 0: last) */
	uint32_t child;         /* arrays, objects: the first member (index + 1; 0: none) */
	uint32_t klen;          /* a member of an object: its key's decoded bytes */
	const char *key;        /* a member of an object: its key (NUL-terminated), else NULL */
	const char *s;          /* strings: decoded, NUL-terminated; numbers: their text
				   (len bytes, not terminated) */
	size_t off, len;        /* the value's span in the text */
};

struct json_doc;

/*
 * Parse text[0..len) (kept, not copied: it must outlive the doc). 0, or
 * -EINVAL with a one-line reason in err, or -ENOMEM.
 */
int json_doc__parse(const char *text, size_t len, struct json_doc **out, char *err, size_t errlen);
void json_doc__free(struct json_doc *d);
const struct json_node *json_doc__root(const struct json_doc *d);

/* The first member of an array or object, and the one after n; NULL: none. */
const struct json_node *json_first(const struct json_doc *d, const struct json_node *n);
const struct json_node *json_next(const struct json_doc *d, const struct json_node *n);
/* The member key of object o (the last one when repeated); NULL: none, or not an object. */
const struct json_node *json_get(const struct json_doc *d, const struct json_node *o,
				 const char *key);
/* The value's JSON text (a span of the parsed text). */
const char *json_node__text(const struct json_doc *d, const struct json_node *n, size_t *len);

/*
 * A number times 10^scale, exact, rounded half away from zero: "12.3456"
 * with scale 3 is 12346. 0, -EINVAL (not a number node), -ERANGE (past
 * int64). *frac: whether digits were dropped by the rounding (may be NULL).
 */
int json_node__fixed(const struct json_node *n, unsigned scale, int64_t *out, bool *frac);
/* A number as a double (strtod), NAN when not a number. */
double json_node__double(const struct json_node *n);
/* A number with no fraction or exponent that fits: 0, else -EINVAL/-ERANGE. */
int json_node__int(const struct json_node *n, int64_t *out);

#endif /* GPUIO_LIB_JSON_READ_H */
