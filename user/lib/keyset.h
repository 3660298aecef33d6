/* SPDX-License-Identifier: MIT */
/*
 * keyset.h — a bounded set of (a, b) u64 pairs (open addressing). When full
 * it empties itself: callers use it only to avoid repeating work (naming a
 * file twice), so forgetting costs a repeat, never a wrong answer.
 */
#ifndef GPUIO_KEYSET_H
#define GPUIO_KEYSET_H
#include <stdbool.h>
#include <stdint.h>

struct keyset;

struct keyset *keyset__new(uint32_t capacity_log2);
/* true if (a, b) was already present; inserts it otherwise */
bool keyset__test_and_add(struct keyset *s, uint64_t a, uint64_t b);
bool keyset__contains(const struct keyset *s, uint64_t a, uint64_t b);
uint64_t keyset__resets(const struct keyset *s);
void keyset__free(struct keyset *s);

#endif
