// SPDX-License-Identifier: MIT
/* unit_kmap — the (u64, u64) -> u64 map (lib/kmap.c) against a plain array, through growth. */
#include <stdlib.h>
#include "lib/kmap.h"
#include "unit.h"

#define N 20000

int main(void)
{
	struct kmap m = { 0 };
	uint64_t *a = calloc(N, sizeof(*a)), *b = calloc(N, sizeof(*b)), *v;
	int isnew;

	srand(7);
	for (int i = 0; i < N; i++) {
		a[i] = (uint64_t)rand() << 20 ^ (uint64_t)i;
		b[i] = (uint64_t)(i % 97);
		isnew = kmap__upsert(&m, a[i], b[i], &v);
		CHECK(isnew == 1 && *v == 0, "insert %d: %d", i, isnew);
		*v = (uint64_t)i + 1;
	}
	CHECK(m.n == N, "n %zu", m.n);
	for (int i = 0; i < N; i++) {
		v = kmap__get(&m, a[i], b[i]);
		CHECK(v && *v == (uint64_t)i + 1, "get %d", i);
		CHECK(kmap__upsert(&m, a[i], b[i], &v) == 0 && *v == (uint64_t)i + 1, "again %d", i);
		CHECK(!kmap__get(&m, a[i], b[i] + 1000), "absent key found %d", i);
	}
	kmap__free(&m);
	free(a);
	free(b);
	return unit_done("unit_kmap");
}
