// SPDX-License-Identifier: MIT
/*
 * unit_keyset — the bounded (a, b) set (lib/keyset.c) against a plain
 * array: answers while it fills, the same key asked in a row (the last-key
 * shortcut), and the reset when full, after which only what was added since
 * is present (the shortcut must not answer for a forgotten key).
 */
#include <stdlib.h>
#include "lib/keyset.h"
#include "unit.h"

int main(void)
{
	/* 2^8 slots: a reset past 192 keys */
	struct keyset *s = keyset__new(8);
	int i;

	CHECK(s != NULL, "new");
	for (i = 0; i < 150; i++) {
		CHECK(!keyset__test_and_add(s, (uint64_t)i, 7), "key %d new", i);
		CHECK(keyset__test_and_add(s, (uint64_t)i, 7), "key %d again", i);
		CHECK(keyset__test_and_add(s, (uint64_t)i, 7), "key %d a third time", i);
		CHECK(!keyset__contains(s, (uint64_t)i, 8), "key %d with another b", i);
	}
	for (i = 0; i < 150; i++)
		CHECK(keyset__test_and_add(s, (uint64_t)i, 7), "key %d still there", i);
	CHECK(keyset__resets(s) == 0, "no reset yet");
	/* fill past the bound: it empties itself, then holds only the new key */
	for (i = 150; i < 193; i++)
		keyset__test_and_add(s, (uint64_t)i, 7);
	CHECK(keyset__resets(s) == 1, "one reset (%llu)", (unsigned long long)keyset__resets(s));
	CHECK(keyset__test_and_add(s, 192, 7), "the key that reset it is there");
	CHECK(!keyset__test_and_add(s, 5, 7), "a key from before the reset is forgotten");
	CHECK(keyset__test_and_add(s, 5, 7), "and added again");
	keyset__free(s);
	return unit_done("unit_keyset");
}
