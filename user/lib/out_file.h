/* SPDX-License-Identifier: MIT */
/*
 * out_file.h — a byte sink for trace output: a file descriptor, written
 * plain or as one gzip member (zlib deflate, level 3 like the JSON writer).
 *
 * Callers hand it whole records (Perfetto packets) and call
 * out_file__sync() at the points where a reader must see everything so
 * far: a plain file is then complete up to the last record, a gzip file
 * decompresses up to it (Z_SYNC_FLUSH), so a trace killed later is still
 * readable up to there. Errors are sticky and returned by every call.
 */
#ifndef GPUIO_OUT_FILE_H
#define GPUIO_OUT_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct out_file;

/* Own fd (fsync + close in __close) when own_fd. */
int out_file__new(int fd, bool gz, bool own_fd, struct out_file **out);
int out_file__write(struct out_file *o, const void *p, size_t n);
/* Everything written so far reaches the file in decodable form. */
int out_file__sync(struct out_file *o);
/* Bytes handed in (uncompressed) and bytes in the file (compressed when gz). */
uint64_t out_file__in_bytes(const struct out_file *o);
uint64_t out_file__file_bytes(const struct out_file *o);
/* Finish (gzip trailer), fsync and close; returns 0 or the first error. */
int out_file__close(struct out_file *o);

#endif /* GPUIO_OUT_FILE_H */
