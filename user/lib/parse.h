/* SPDX-License-Identifier: MIT */
/*
 * parse.h — numbers with units, as the command line spells them. Each returns
 * 0 and the value, or -EINVAL (the caller names the option in its message).
 */
#ifndef GPUIO_LIB_PARSE_H
#define GPUIO_LIB_PARSE_H

#include <stdbool.h>
#include <stdint.h>

/* "500ms", "30s", "5m"/"5min", "1h", "250us", "1.5s", "30" (seconds) -> ns.
 * 0 is refused unless allow_zero. */
int parse_duration_ns(const char *s, bool allow_zero, uint64_t *ns);
/* "4096", "64k", "16M", "1.5G", "2GiB", "100B" -> bytes (k = 1024). */
int parse_bytes(const char *s, uint64_t *bytes);
/* A decimal integer in [min, max], nothing after it. */
int parse_ulong(const char *s, unsigned long min, unsigned long max, unsigned long *out);
/* true when name ends with suffix */
bool parse_str_ends_with(const char *name, const char *suffix);

#endif /* GPUIO_LIB_PARSE_H */
