/* SPDX-License-Identifier: MIT */
/*
 * utf8.h — make arbitrary bytes valid UTF-8 the way json_writer does:
 * well-formed sequences pass through, each maximal subpart of an ill-formed
 * sequence becomes one U+FFFD (what Python's bytes.decode("utf-8",
 * "replace") gives). Control bytes and NUL are kept: protobuf strings carry
 * them as they are. Used for the protobuf output, whose strings must be UTF-8,
 * and by json_writer's escaper.
 */
#ifndef GPUIO_UTF8_H
#define GPUIO_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* Length (2..4) of the well-formed multi-byte sequence at s[0..n), or 0 with
 * *bad = the length of its maximal ill-formed subpart (>= 1). s[0] >= 0x80. */
size_t utf8_seq_len(const unsigned char *s, size_t n, size_t *bad);
/* true when s[0..n) is well-formed UTF-8 (fast path: nothing to copy) */
bool utf8_valid(const void *s, size_t n);
/* Write the repaired form of s[0..n) to out (room for 3 * n bytes); its length. */
size_t utf8_repair(const void *s, size_t n, char *out);

#endif
