// SPDX-License-Identifier: MIT
/* pb_writer.c — protobuf wire-format encoder. See pb_writer.h. */
#include <errno.h>
#include <stdlib.h>
#include "pb_writer.h"

void pb_buf__init(struct pb_buf *b)
{
	memset(b, 0, sizeof(*b));
}

void pb_buf__free(struct pb_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

bool pb_buf__reserve_slow(struct pb_buf *b, size_t n)
{
	size_t cap = b->cap ? b->cap : 4096;
	uint8_t *p;

	if (b->err)
		return false;
	while (cap < b->len + n)
		cap *= 2;
	p = realloc(b->p, cap);
	if (!p) {
		b->err = -ENOMEM;
		return false;
	}
	b->p = p;
	b->cap = cap;
	return true;
}

void pb_buf__begin(struct pb_buf *b, uint32_t field)
{
	pb_buf__tag(b, field, PB_LEN);
	if (b->depth >= PB_MAX_DEPTH) {
		/* a bug in the caller, not bad input: fail the whole output */
		b->err = -E2BIG;
		return;
	}
	if (!pb_buf__reserve(b, 1))
		return;
	b->open[b->depth++] = b->len;
	b->p[b->len++] = 0;         /* length, fixed in pb_buf__end() */
}

void pb_buf__end(struct pb_buf *b)
{
	size_t at, body, k;

	if (!b->depth || b->err)
		return;
	at = b->open[--b->depth];
	body = b->len - at - 1;
	k = pb_varint_size(body);
	if (k > 1) {
		/* most messages are short: move the rare long body right */
		if (!pb_buf__reserve(b, k - 1))
			return;
		memmove(b->p + at + k, b->p + at + 1, body);
		b->len += k - 1;
	}
	pb_put_varint(b->p + at, body);
}
