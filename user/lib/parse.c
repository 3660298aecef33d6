// SPDX-License-Identifier: MIT
/* parse.c — see parse.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "lib/parse.h"
#include "lib/units.h"

int parse_duration_ns(const char *s, bool allow_zero, uint64_t *ns)
{
	char *end;
	double v = strtod(s, &end), mult;

	if (end == s || v < 0 || (!allow_zero && v == 0) || v > 1e12)
		return -EINVAL;
	if (!*end || !strcmp(end, "s"))
		mult = NS_PER_SEC_F;
	else if (!strcmp(end, "ms"))
		mult = 1e6;
	else if (!strcmp(end, "us"))
		mult = 1e3;
	else if (!strcmp(end, "m") || !strcmp(end, "min"))
		mult = 60e9;
	else if (!strcmp(end, "h"))
		mult = 3600e9;
	else
		return -EINVAL;
	*ns = (uint64_t)(v * mult);
	return 0;
}

int parse_bytes(const char *s, uint64_t *bytes)
{
	char *end;
	double v = strtod(s, &end), mult = 1;

	if (end == s || v < 0 || v > 9e18 || *s == '-' || *s == '+')
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K': mult = 1024.0; end++; break;
	case 'm': case 'M': mult = 1048576.0; end++; break;
	case 'g': case 'G': mult = 1073741824.0; end++; break;
	}
	if (mult > 1 && !strcmp(end, "iB"))
		end += 2;
	else if (!strcmp(end, "B"))
		end++;
	if (*end || v * mult > 9e18)
		return -EINVAL;
	*bytes = (uint64_t)(v * mult);
	return 0;
}

int parse_ulong(const char *s, unsigned long min, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	if (!*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

bool parse_str_ends_with(const char *name, const char *suffix)
{
	size_t n = strlen(name), k = strlen(suffix);

	return n > k && !strcmp(name + n - k, suffix);
}
