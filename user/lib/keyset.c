// SPDX-License-Identifier: MIT
/* keyset.c — see keyset.h. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "lib/keyset.h"

struct slot { uint64_t a, b; uint8_t used; };

struct keyset {
	struct slot *slots;
	uint32_t mask;
	uint32_t count;
	uint64_t resets;
	/* the key last asked, when it is in the set: a trace asks the same
	 * thread or file many times in a row, so most asks end here */
	uint64_t last_a, last_b;
	bool has_last;
};

struct keyset *keyset__new(uint32_t capacity_log2)
{
	struct keyset *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->mask = (1u << capacity_log2) - 1;
	s->slots = calloc((size_t)s->mask + 1, sizeof(*s->slots));
	if (!s->slots) {
		free(s);
		return NULL;
	}
	return s;
}

static uint64_t mix(uint64_t a, uint64_t b)
{
	uint64_t h = a * 0x9E3779B97F4A7C15ull ^ (b + 0x632BE59BD9B4E019ull + (a << 6) + (a >> 2));

	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return h;
}

static struct slot *find(const struct keyset *s, uint64_t a, uint64_t b)
{
	uint32_t i = (uint32_t)mix(a, b) & s->mask;

	for (;;) {
		struct slot *sl = &s->slots[i];
		if (!sl->used || (sl->a == a && sl->b == b))
			return sl;
		i = (i + 1) & s->mask;
	}
}

bool keyset__contains(const struct keyset *s, uint64_t a, uint64_t b)
{
	return find(s, a, b)->used;
}

bool keyset__test_and_add(struct keyset *s, uint64_t a, uint64_t b)
{
	struct slot *sl;

	if (s->has_last && s->last_a == a && s->last_b == b)
		return true;
	sl = find(s, a, b);
	s->last_a = a;
	s->last_b = b;
	s->has_last = true;
	if (sl->used)
		return true;
	/* keep the load under 3/4 so probes stay short */
	if (s->count + 1 > (s->mask + 1) / 4 * 3) {
		memset(s->slots, 0, ((size_t)s->mask + 1) * sizeof(*s->slots));
		s->count = 0;
		s->resets++;
		sl = find(s, a, b);
	}
	sl->a = a;
	sl->b = b;
	sl->used = 1;
	s->count++;
	return false;
}

uint64_t keyset__resets(const struct keyset *s) { return s->resets; }

void keyset__free(struct keyset *s)
{
	if (!s)
		return;
	free(s->slots);
	free(s);
}
