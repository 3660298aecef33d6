/* SPDX-License-Identifier: MIT */
/*
 * capture.h — the gpuio capture file (run.gpuio).
 *
 * Layout: struct gpuio_cap_header, then the records, append-only. Version 1:
 * records of bpf/gpuio_abi.h back to back. Version 2 (written now): records
 * framed and compacted (compact.c); the reader hands back the same structs.
 * A capture cut short (SIGKILL, disk full) is readable up to its last whole
 * record; the reader reports the cut. A capture still being written is read
 * the same way, and read on as it grows (__open_follow). A record whose size or type makes no
 * sense is reported as corruption with its file offset.
 */
#ifndef GPUIO_CAPTURE_H
#define GPUIO_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/types.h>
#include "bpf/gpuio_abi.h"

#define GPUIO_CAP_MAGIC   "GPUIOCAP"
#define GPUIO_CAP_VERSION 2     /* what the writer writes */
#define GPUIO_CAP_VERSION_RAW 1 /* records verbatim: still read */

/* gpuio_cap_header.flags */
#define GPUIO_CAPF_ALL      0x01 /* -a: whole node */
#define GPUIO_CAPF_ALL_FDS  0x02 /* --all-fds */
#define GPUIO_CAPF_LAUNCH   0x04 /* command launched by gpuio */
#define GPUIO_CAPF_NO_BPF   0x08 /* traced without BPF: the GPU side (CUPTI) alone */
#define GPUIO_CAPF_SOCKETS  0x10 /* socket I/O traced by default (not --no-sockets) */

struct gpuio_cap_header {
	char  magic[8];
	__u32 version;
	__u32 header_size;      /* bytes of header in the file */
	__u64 realtime_ns;      /* CLOCK_REALTIME and CLOCK_MONOTONIC, read */
	__u64 monotonic_ns;     /* together at trace start (tightest of several) */
	__u32 tracer_pid;
	__u32 flags;            /* GPUIO_CAPF_* */
	__u32 abi_version;      /* GPUIO_ABI_VERSION of the records */
	__u32 ncpus;
	char  hostname[64];
	char  kernel[128];      /* uname release and version */
	char  boot_id[40];
	char  vfs_mode[16];     /* attach mode chosen per layer */
	char  block_mode[16];
	char  proc_mode[16];
	char  pagecache_mode[16];
	char  iouring_mode[16];
	char  modes_detail[512];/* why better modes were refused */
	char  target[128];      /* "pid 4242", "launch", "all" */
	char  cmdline[1024];    /* gpuio's own argv, space separated */
	/* --- added after the first release: shorter headers read as empty --- */
	char  sched_mode[16];   /* scheduler layer, "" in older captures */
	char  fault_mode[16];   /* fault layer, "" in older captures */
	char  stack_mode[16];   /* Python stacks: "calls,sleeps", "sleeps", "off"; "" older */
	char  sample_mode[16];  /* on-CPU samples ("99Hz", "off"), "" in older captures */
};
/* Header of captures made before sched_mode. */
#define GPUIO_CAP_HEADER_V1_SIZE 2024u

/* A stats record of ABI 1 captures made before the two CUDA counters
 * (10 BPF counters); the reader expands it to struct gpuio_stats_event. */
#define GPUIO_STATS_V1_SIZE 136u
/* A stats record with only the fixed part (GPUIO_STATS_BPF_FIXED counters). */
#define GPUIO_STATS_FIXED_SIZE ((unsigned)offsetof(struct gpuio_stats_event, bpf_more))

/* Largest record any reader accepts. */
#define GPUIO_REC_SIZE_MAX ((unsigned)sizeof(struct gpuio_path_event))

/*
 * A header for a new capture: format, version, tracer pid, ncpus, flags
 * (GPUIO_CAPF_*), the clock anchor (lib/clock.h), host, kernel and boot id.
 * The writer fills in its attach modes, target and command line.
 */
void gpuio_cap_header__init(struct gpuio_cap_header *h, __u32 ncpus, __u32 flags);
/*
 * CLOCK_BOOTTIME at the header's anchor, as best known: exact when the
 * capture was made since this machine's last boot and it was not suspended
 * since, else MONOTONIC (no suspend assumed; captures do not record BOOTTIME).
 */
uint64_t gpuio_cap_header__boottime(const struct gpuio_cap_header *h);

struct gpuio_cap_writer;
struct gpuio_cap_reader;

/*
 * Create path (never through a symlink; an existing regular file is
 * replaced) and write the header. When owner_uid != (uid_t)-1 the file is
 * chowned to it. Returns 0 or -errno.
 */
int gpuio_cap_writer__create(const char *path, const struct gpuio_cap_header *hdr,
			     uid_t owner_uid, gid_t owner_gid,
			     struct gpuio_cap_writer **out);
/*
 * Append one whole record (buffered; encoded, see compact.c). Returns 0 or
 * -errno (-E2BIG/-EINVAL for a record no reader would accept).
 */
int gpuio_cap_writer__append(struct gpuio_cap_writer *w, const void *rec, size_t len);
/* Write buffered records to the file (whole records only). */
int gpuio_cap_writer__flush(struct gpuio_cap_writer *w);
/* Records appended (the encoding's own definitions not counted). */
__u64 gpuio_cap_writer__records(const struct gpuio_cap_writer *w);
/* Bytes in the file once flushed, header included. */
__u64 gpuio_cap_writer__bytes(const struct gpuio_cap_writer *w);
/* Flush, fsync and close. Returns 0 or the first error seen. */
int gpuio_cap_writer__close(struct gpuio_cap_writer *w);

/*
 * Open a capture for reading. On failure returns -errno and puts a one-line
 * reason in err (e.g. "not a gpuio capture (bad magic)").
 */
int gpuio_cap_reader__open(const char *path, struct gpuio_cap_reader **out,
			   char *err, size_t errlen);
/*
 * Open a capture that is still being appended to (`gpuio trace --stream`
 * follows the one it writes). The same checks as __open(); then __next()
 * returning 0 means "no whole record yet", not the end: a partial record at
 * the end is left where it is, and the next call reads on from the last
 * whole record as the file grows. It reads nothing until __set_budget().
 */
int gpuio_cap_reader__open_follow(const char *path, struct gpuio_cap_reader **out,
				  char *err, size_t errlen);
/*
 * Following: read at most bytes more of the file (what lies past them is
 * "not yet" too), so that one pass over what was appended stays bounded.
 */
void gpuio_cap_reader__set_budget(struct gpuio_cap_reader *r, __u64 bytes);
/* Following: the budget ran out (more may be there already). */
bool gpuio_cap_reader__budget_spent(const struct gpuio_cap_reader *r);
/* What to do about an error of __open(), to append to its message ("" when nothing helps). */
const char *gpuio_cap__open_hint(int err);
const struct gpuio_cap_header *gpuio_cap_reader__header(const struct gpuio_cap_reader *r);
/*
 * Next record: returns 1 and sets *rec (valid until the next call), 0 at the
 * end (clean or cut short: see __truncated; following: no whole record yet),
 * or -EBADMSG on corruption with the reason in __error().
 */
int gpuio_cap_reader__next(struct gpuio_cap_reader *r, const struct gpuio_hdr **rec);
/* Start again from the first record (for multi-pass readers). */
int gpuio_cap_reader__rewind(struct gpuio_cap_reader *r);
/* Bytes of a partial record at the end (0 when the capture ended cleanly). */
__u64 gpuio_cap_reader__truncated(const struct gpuio_cap_reader *r);
/* File offset of the next record (of its first definition in version 2). */
__u64 gpuio_cap_reader__offset(const struct gpuio_cap_reader *r);
const char *gpuio_cap_reader__error(const struct gpuio_cap_reader *r);
void gpuio_cap_reader__close(struct gpuio_cap_reader *r);

/*
 * A stats record as this build lays it out, whatever counters the capture's
 * build had (the reader already expands; for code that reads records in place).
 * Counters the record did not hold read 0.
 */
void gpuio_stats__from_record(const struct gpuio_hdr *h, struct gpuio_stats_event *out);
/* BPF counter idx (enum gpuio_stat) of a snapshot, 0 past the last. */
__u64 gpuio_stats__bpf(const struct gpuio_stats_event *s, unsigned idx);
/* Every BPF counter from v[GPUIO_STAT_MAX] (a writer's snapshot). */
void gpuio_stats__set_bpf(struct gpuio_stats_event *s, const __u64 *v);

/*
 * The path a PATH record names ("/top/.../leaf" from leaf-first components,
 * "/…/..." when the walk was cut), malloc'd, NUL-terminated; its length in
 * *len_out. NULL when out of memory.
 */
char *gpuio_path__string(const struct gpuio_path_event *p, size_t *len_out);

/*
 * Make a whole record (hdr.size bytes, in a buffer of GPUIO_REC_SIZE_MAX)
 * safe to read: length fields clamped to the record and to their arrays,
 * old stats records expanded. -EBADMSG for a path longer than its record.
 * The reader does this to every record; code reading records in place
 * calls it on a copy.
 */
int gpuio_rec__sanitize(unsigned char *rec);

/* Minimum valid size of a known record type, 0 for unknown types. */
size_t gpuio_rec_min_size(__u16 type);
/* A record kind's name in the outputs ("vfs", "sched", "wait"; "unknown"). */
const char *gpuio_rec__name(unsigned type);

#endif /* GPUIO_CAPTURE_H */
