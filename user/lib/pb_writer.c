// SPDX-License-Identifier: MIT
/* pb_writer.c — protobuf wire-format encoder. See pb_writer.h. */
#include <errno.h>
#include <stdlib.h>
#include "lib/pb_writer.h"

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

/* A body longer than 127 bytes: its length takes k > 1 bytes, move it right. */
void pb_buf__end_long(struct pb_buf *b, size_t at, size_t body)
{
	size_t k = pb_varint_size(body);

	if (!pb_buf__reserve(b, k - 1))
		return;
	memmove(b->p + at + k, b->p + at + 1, body);
	b->len += k - 1;
	pb_put_varint(b->p + at, body);
}
