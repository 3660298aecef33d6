/* SPDX-License-Identifier: MIT */
/* file_io.h — whole writes and reads on a file descriptor, EINTR retried. */
#ifndef GPUIO_LIB_FILE_IO_H
#define GPUIO_LIB_FILE_IO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Write all n bytes (short writes continued). 0, or -errno with *done (may
 * be NULL) the bytes that did reach the file; a write of 0 bytes is -EIO.
 */
int file_write_all(int fd, const void *buf, size_t n, size_t *done);
/* pread until n bytes or end of file: the bytes read, or -errno. */
ssize_t file_pread_full(int fd, void *buf, size_t n, uint64_t off);
/* The first line of a small file, without its newline ("" when unreadable). */
void file_read_first_line(const char *path, char *buf, size_t len);

#endif /* GPUIO_LIB_FILE_IO_H */
