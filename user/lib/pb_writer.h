/* SPDX-License-Identifier: MIT */
/*
 * pb_writer.h — a small protobuf wire-format encoder into a growable buffer.
 *
 * Only what gpuio's Perfetto output needs: varints (uint, int64 as two's
 * complement, bool, enum), fixed64/double, length-delimited bytes and nested
 * messages. A nested message reserves one length byte and is moved right in
 * pb_buf__end() if its body turns out longer than 127 bytes, so lengths are
 * always minimal varints (protoc and Perfetto's protozero both accept them).
 *
 * Errors are sticky: after an allocation failure every call is a no-op and
 * pb_buf__error() returns -ENOMEM.
 */
#ifndef GPUIO_PB_WRITER_H
#define GPUIO_PB_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <string.h>

#define PB_MAX_DEPTH 16

/* wire types */
#define PB_VARINT 0
#define PB_I64    1
#define PB_LEN    2

struct pb_buf {
	uint8_t *p;
	size_t len, cap;
	int err;
	unsigned depth;
	size_t open[PB_MAX_DEPTH];      /* offset of each open message's length byte */
};

void pb_buf__init(struct pb_buf *b);
void pb_buf__free(struct pb_buf *b);
static inline void pb_buf__reset(struct pb_buf *b)
{
	b->len = 0;
	b->depth = 0;
}
static inline int pb_buf__error(const struct pb_buf *b)
{
	return b->err;
}

/* Make room for n more bytes; false (and err set) when out of memory. */
bool pb_buf__reserve_slow(struct pb_buf *b, size_t n);
static inline bool pb_buf__reserve(struct pb_buf *b, size_t n)
{
	return b->len + n <= b->cap || pb_buf__reserve_slow(b, n);
}

static inline size_t pb_put_varint(uint8_t *o, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		o[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	o[n++] = (uint8_t)v;
	return n;
}

static inline size_t pb_varint_size(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static inline void pb_buf__raw_varint(struct pb_buf *b, uint64_t v)
{
	if (pb_buf__reserve(b, 10))
		b->len += pb_put_varint(b->p + b->len, v);
}

static inline void pb_buf__tag(struct pb_buf *b, uint32_t field, unsigned wire)
{
	pb_buf__raw_varint(b, ((uint64_t)field << 3) | wire);
}

/* uint32/uint64/enum/bool fields; int64 as two's complement (10 bytes if < 0) */
static inline void pb_buf__varint(struct pb_buf *b, uint32_t field, uint64_t v)
{
	if (!pb_buf__reserve(b, 15))
		return;
	b->len += pb_put_varint(b->p + b->len, ((uint64_t)field << 3) | PB_VARINT);
	b->len += pb_put_varint(b->p + b->len, v);
}

static inline void pb_buf__fixed64(struct pb_buf *b, uint32_t field, uint64_t v)
{
	if (!pb_buf__reserve(b, 13))
		return;
	b->len += pb_put_varint(b->p + b->len, ((uint64_t)field << 3) | PB_I64);
	for (int i = 0; i < 8; i++)
		b->p[b->len++] = (uint8_t)(v >> (8 * i));
}

static inline void pb_buf__double(struct pb_buf *b, uint32_t field, double d)
{
	uint64_t v;

	memcpy(&v, &d, sizeof(v));
	pb_buf__fixed64(b, field, v);
}

static inline void pb_buf__bytes(struct pb_buf *b, uint32_t field, const void *s, size_t n)
{
	if (!pb_buf__reserve(b, 15 + n))
		return;
	b->len += pb_put_varint(b->p + b->len, ((uint64_t)field << 3) | PB_LEN);
	b->len += pb_put_varint(b->p + b->len, n);
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

static inline void pb_buf__cstr(struct pb_buf *b, uint32_t field, const char *s)
{
	pb_buf__bytes(b, field, s, strlen(s));
}

/* Append an already encoded message body as field (length-delimited). */
static inline void pb_buf__append_msg(struct pb_buf *b, uint32_t field, const struct pb_buf *m)
{
	pb_buf__bytes(b, field, m->p, m->len);
}

void pb_buf__end_long(struct pb_buf *b, size_t at, size_t body);

/* Open a nested message as field; close it with pb_buf__end(). */
static inline void pb_buf__begin(struct pb_buf *b, uint32_t field)
{
	if (!pb_buf__reserve(b, 11))
		return;
	b->len += pb_put_varint(b->p + b->len, ((uint64_t)field << 3) | PB_LEN);
	if (b->depth >= PB_MAX_DEPTH) {
		/* a bug in the caller, not bad input: fail the whole output */
		b->err = -E2BIG;
		return;
	}
	b->open[b->depth++] = b->len;
	b->p[b->len++] = 0;         /* length, fixed in pb_buf__end() */
}

static inline void pb_buf__end(struct pb_buf *b)
{
	size_t at, body;

	if (!b->depth || b->err)
		return;
	at = b->open[--b->depth];
	body = b->len - at - 1;
	if (body < 0x80)
		b->p[at] = (uint8_t)body;
	else
		pb_buf__end_long(b, at, body);
}

#endif /* GPUIO_PB_WRITER_H */
