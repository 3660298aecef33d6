/* SPDX-License-Identifier: MIT */
/*
 * kmap.h — containers that know nothing of gpuio: a (u64, u64) -> u64
 * open-addressing map (keys are pairs: (dev, ino), (pid, tid)...) and a
 * helper that grows a dynamic array.
 */
#ifndef GPUIO_LIB_KMAP_H
#define GPUIO_LIB_KMAP_H

#include <stddef.h>
#include <stdint.h>

struct kslot {
	uint64_t a, b;
	uint64_t val;
	uint32_t used;
};

struct kmap {
	struct kslot *slots;
	size_t cap, n;          /* cap is a power of two */
};

uint64_t *kmap__get(const struct kmap *m, uint64_t a, uint64_t b);
/* Find or insert (a, b): 1 and a zeroed *val when new, 0 when present, -ENOMEM. */
int kmap__upsert(struct kmap *m, uint64_t a, uint64_t b, uint64_t **val);
void kmap__free(struct kmap *m);
/* The hash of a key pair, as the map uses it (for filters in front of a map). */
uint64_t kmap__hash(uint64_t a, uint64_t b);
/* Grow a dynamic array so that it holds at least need elements (doubling, from 64). */
int array_grow(void **arr, size_t *cap, size_t need, size_t elem);
/* A 64-bit hash finaliser (splitmix64). */
uint64_t hash_mix64(uint64_t x);

#endif /* GPUIO_LIB_KMAP_H */
