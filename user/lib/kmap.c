// SPDX-License-Identifier: MIT
/*
 * kmap.c — a (u64, u64) -> u64 open-addressing map and a growable-array
 * helper: containers that know nothing of gpuio.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "lib/kmap.h"

/* ---- (u64, u64) -> u64 open-addressing map ---- */

uint64_t hash_mix64(uint64_t x)
{
	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 29;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 32;
	return x;
}

uint64_t kmap__hash(uint64_t a, uint64_t b)
{
	/* full avalanche: keys are dense runs ((tid, seq), (dev, ino)) that a
	 * weaker mix turns into long linear-probing clusters */
	return hash_mix64(hash_mix64(a + 0x9e3779b97f4a7c15ull) ^ b);
}

static struct kslot *kmap__slot(const struct kmap *m, uint64_t a, uint64_t b)
{
	size_t i = kmap__hash(a, b) & (m->cap - 1);

	while (m->slots[i].used && (m->slots[i].a != a || m->slots[i].b != b))
		i = (i + 1) & (m->cap - 1);
	return &m->slots[i];
}

uint64_t *kmap__get(const struct kmap *m, uint64_t a, uint64_t b)
{
	struct kslot *s;

	if (!m->cap)
		return NULL;
	s = kmap__slot(m, a, b);
	return s->used ? &s->val : NULL;
}

int kmap__upsert(struct kmap *m, uint64_t a, uint64_t b, uint64_t **val)
{
	struct kslot *s;

	if ((m->n + 1) * 2 > m->cap) {
		struct kmap bigger = { .cap = m->cap ? m->cap * 2 : 64 };

		bigger.slots = calloc(bigger.cap, sizeof(*bigger.slots));
		if (!bigger.slots)
			return -ENOMEM;
		for (size_t i = 0; i < m->cap; i++)
			if (m->slots[i].used)
				*kmap__slot(&bigger, m->slots[i].a, m->slots[i].b) = m->slots[i];
		bigger.n = m->n;
		free(m->slots);
		*m = bigger;
	}
	s = kmap__slot(m, a, b);
	*val = &s->val;
	if (s->used)
		return 0;
	s->used = 1;
	s->a = a;
	s->b = b;
	s->val = 0;
	m->n++;
	return 1;
}

void kmap__free(struct kmap *m)
{
	free(m->slots);
	m->slots = NULL;
	m->cap = m->n = 0;
}

int array_grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t ncap = *cap ? *cap : 64;
	void *p;

	if (need <= *cap)
		return 0;
	while (ncap < need)
		ncap *= 2;
	p = realloc(*arr, ncap * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = ncap;
	return 0;
}
