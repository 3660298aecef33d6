/* SPDX-License-Identifier: MIT */
/*
 * side_file.h — the collector's output: DIR/cupti.PID.gpuio, a gpuio capture
 * of its own (struct gpuio_cap_header, then GPU records back to back) that
 * the tracer tails and merges into the main capture (user/gpu/gpu_ingest.h).
 *
 * Records are staged in memory and written with whole records per write(),
 * so a reader tailing the file (or a SIGKILL) never sees half a record
 * except at the very end; a short write (disk full) is cut back to the last
 * whole record and the lost records are counted.
 */
#ifndef GPUIO_CUPTI_SIDE_FILE_H
#define GPUIO_CUPTI_SIDE_FILE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define SIDE_FILE_STAGE (64 * 1024)

struct side_file {
	int fd;
	pid_t pid;             /* the process that owns fd */
	off_t good_off;        /* file ends with a whole record here */
	size_t len;            /* staged bytes */
	size_t staged;         /* staged records */
	uint64_t records;      /* records written (whole, in the file) */
	uint64_t write_errors; /* records lost to failed writes */
	int broken;            /* a write failed and could not be undone: stop */
	char path[4096];
	unsigned char buf[SIDE_FILE_STAGE];
};

/*
 * Create DIR/cupti.PID.gpuio (cupti.PID.N.gpuio when taken: PID reuse),
 * O_EXCL|O_NOFOLLOW, and write the header naming target. 0 or -errno.
 */
int side_file__create(struct side_file *f, const char *dir, const char *target);
/* Same at exactly path (tests, cupti_synth). */
int side_file__create_path(struct side_file *f, const char *path, const char *target);
/* Stage one whole record (len a multiple of 8); writes out when the stage is full. */
int side_file__append(struct side_file *f, const void *rec, size_t len);
/* Write staged records. 0 or -errno (the records are then counted lost). */
int side_file__flush(struct side_file *f);
/* Forget staged records without writing them (after fork, in the child). */
void side_file__discard(struct side_file *f);
/* Flush and close. */
void side_file__close(struct side_file *f);

#endif /* GPUIO_CUPTI_SIDE_FILE_H */
