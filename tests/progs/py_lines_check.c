// SPDX-License-Identifier: MIT
/*
 * py_lines_check.c — gpuio's line-table decoder (user/python/py_lines.c)
 * against the interpreter's own lines (tests/progs/py_lines_gen.py on
 * stdin): prints how many instructions were checked and each mismatch;
 * exits 1 on any.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "python/py_lines.h"

int main(void)
{
	static char hex[1 << 20];
	static unsigned char lt[1 << 19];
	unsigned minor;
	int first, lasti, want;
	long n = 0, bad = 0;

	while (scanf("%u %d %1048575s %d %d", &minor, &first, hex, &lasti, &want) == 5) {
		size_t len = 0;
		int got;

		for (size_t i = 0; hex[0] != '-' && hex[i] && hex[i + 1]; i += 2)
			sscanf(hex + i, "%2hhx", &lt[len++]);
		got = py_line(minor, lt, len, first, lasti);
		n++;
		if (got != want && bad++ < 20)
			printf("3.%u first %d lasti %d: decoder %d, interpreter %d\n", minor, first,
			       lasti, got, want);
	}
	printf("%ld instructions, %ld mismatches\n", n, bad);
	return bad || !n;
}
