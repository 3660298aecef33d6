/* SPDX-License-Identifier: MIT */
/*
 * gpuio_abi.h — the one event ABI.
 *
 * Every record that the BPF programs, the CUPTI collector or the tracer itself
 * produces starts with struct gpuio_hdr and is stored verbatim in the capture
 * file. Records are little-endian, fixed size per type (PATH and PROC args are
 * the only variable parts, bounded by hdr.size). Readers skip unknown types by
 * hdr.size, so new record types never break old readers.
 *
 * Included from BPF (after vmlinux.h) and from userspace (after <linux/types.h>).
 */
#ifndef GPUIO_ABI_H
#define GPUIO_ABI_H

#define GPUIO_ABI_VERSION 1

enum gpuio_rec_type {
	GPUIO_REC_VFS     = 1,  /* struct gpuio_vfs_event */
	GPUIO_REC_BLOCK   = 2,  /* struct gpuio_block_event */
	GPUIO_REC_PATH    = 3,  /* struct gpuio_path_event: (dev, ino) -> path */
	GPUIO_REC_PROC    = 4,  /* struct gpuio_proc_event: fork/exec/exit/name */
	GPUIO_REC_STATS   = 5,  /* struct gpuio_stats_event: counters snapshot */
	GPUIO_REC_DEVNAME = 6,  /* struct gpuio_devname_event: disk dev -> name */
	GPUIO_REC_MAX     = 64, /* types below this are reserved for gpuio */
};

/* Common prefix. ts is CLOCK_MONOTONIC ns (bpf_ktime_get_ns). */
struct gpuio_hdr {
	__u16 type;
	__u16 size;     /* whole record, header included */
	__u32 pid;      /* tgid */
	__u32 tid;
	__u32 cpu;
	__u64 ts;
};

/* Calls traced at the VFS layer. Names in user/calls.c. */
enum gpuio_call {
	GPUIO_CALL_NONE = 0,
	GPUIO_CALL_READ, GPUIO_CALL_WRITE, GPUIO_CALL_PREAD64, GPUIO_CALL_PWRITE64,
	GPUIO_CALL_READV, GPUIO_CALL_WRITEV, GPUIO_CALL_PREADV, GPUIO_CALL_PWRITEV,
	GPUIO_CALL_PREADV2, GPUIO_CALL_PWRITEV2,
	GPUIO_CALL_OPEN, GPUIO_CALL_OPENAT, GPUIO_CALL_OPENAT2, GPUIO_CALL_CREAT,
	GPUIO_CALL_CLOSE, GPUIO_CALL_FSYNC, GPUIO_CALL_FDATASYNC,
	GPUIO_CALL_SYNC_FILE_RANGE, GPUIO_CALL_FALLOCATE, GPUIO_CALL_FTRUNCATE,
	GPUIO_CALL_SENDFILE, GPUIO_CALL_COPY_FILE_RANGE, GPUIO_CALL_SPLICE,
	GPUIO_CALL_URING_READ, GPUIO_CALL_URING_WRITE,  /* io_uring read/write ops */
	GPUIO_CALL_MAX
};

/* File type of the traced fd (S_IFMT >> 12), as in gpuio_vfs_event.ftype. */
#define GPUIO_FT_FIFO 1
#define GPUIO_FT_CHR  2
#define GPUIO_FT_DIR  4
#define GPUIO_FT_BLK  6
#define GPUIO_FT_REG  8
#define GPUIO_FT_LNK  10
#define GPUIO_FT_SOCK 12

/*
 * One VFS call. hdr.ts is the entry time. For two-file calls (sendfile,
 * copy_file_range, splice) fd/dev/ino/offset name the source and the *2
 * fields the destination; otherwise fd2 is -1.
 */
struct gpuio_vfs_event {
	struct gpuio_hdr hdr;
	__u64 dur_ns;
	__s64 ret;               /* bytes moved, new fd, 0, or -errno */
	__u64 requested;         /* bytes asked for (sum of iovecs for v-calls) */
	__s64 offset;            /* file offset of the transfer, -1 when none */
	__s64 offset2;
	__u64 ino;               /* inode of fd (for opens: of the result fd) */
	__u64 ino2;
	__u32 dev;               /* kernel dev_t (major << 20 | minor) of ino's fs */
	__u32 dev2;
	__s32 fd;
	__s32 fd2;
	__u32 seq;               /* per-thread call number; block records refer to it */
	__u32 cache_miss_pages;  /* pages added to the page cache by this call */
	__u32 flags;             /* open flags, sync_file_range flags, fallocate mode */
	__u16 call;              /* enum gpuio_call */
	__u8  ftype;             /* GPUIO_FT_* of fd */
	__u8  ftype2;
};

/* Block request op, normalised across kernels. */
enum gpuio_blk_op {
	GPUIO_BLK_READ = 0, GPUIO_BLK_WRITE = 1, GPUIO_BLK_FLUSH = 2,
	GPUIO_BLK_DISCARD = 3, GPUIO_BLK_OTHER = 4,
};
/* gpuio_block_event.rq_flags */
#define GPUIO_RQ_SYNC      0x01
#define GPUIO_RQ_META      0x02
#define GPUIO_RQ_FUA       0x04
#define GPUIO_RQ_PREFLUSH  0x08
#define GPUIO_RQ_RAHEAD    0x10
/* gpuio_block_event.attr */
#define GPUIO_BA_WRITEBACK 0x01  /* submitted by a flusher; pid = the dirtier */
#define GPUIO_BA_SUBMITTER 0x02  /* pid/tid taken in the submitter's context */
#define GPUIO_BA_NO_INSERT 0x04  /* issued directly: queue time is zero */
#define GPUIO_BA_BDEV_PAGE 0x08  /* page of the block device itself: filesystem
				    metadata, journal, or raw device I/O */

/*
 * One block request, emitted at completion. hdr.ts is the insert time (the
 * issue time when the request bypassed the scheduler); hdr.pid/tid the task
 * it is attributed to (0 when unknown, only with -a).
 */
struct gpuio_block_event {
	struct gpuio_hdr hdr;
	__u64 issue_ns;
	__u64 complete_ns;
	__u64 sector;
	__u64 ino;               /* file whose page the request carries, 0 unknown */
	__u32 bytes;
	__u32 dev;               /* disk dev_t (major << 20 | minor) */
	__u32 file_dev;
	__u32 vfs_seq;           /* seq of the submitting VFS call on hdr.tid, 0 none */
	__s32 error;             /* blk_status_t, 0 ok */
	__u8  op;                /* enum gpuio_blk_op */
	__u8  rq_flags;          /* GPUIO_RQ_* */
	__u8  attr;              /* GPUIO_BA_* */
	__u8  pad;
};

#define GPUIO_PATH_MAX 4096
/* gpuio_path_event.flags */
#define GPUIO_PATH_COMPONENTS 0x01 /* data = NUL-separated names, leaf first */
#define GPUIO_PATH_TRUNCATED  0x02 /* walk stopped before the root */
#define GPUIO_PATH_PROCFS     0x04 /* from /proc/PID/fd at attach */

/* (dev, ino) is named path. hdr.size = offsetof(data) + len. */
struct gpuio_path_event {
	struct gpuio_hdr hdr;
	__u64 ino;
	__u32 dev;
	__u16 len;               /* bytes used in data */
	__u16 flags;
	char data[GPUIO_PATH_MAX];
};

enum gpuio_proc_kind {
	GPUIO_PROC_FORK = 1,     /* hdr.pid/tid = child, ppid = parent */
	GPUIO_PROC_EXEC = 2,     /* args = argv, NUL separated */
	GPUIO_PROC_EXIT = 3,     /* whole process gone; exit_code */
	GPUIO_PROC_THREAD = 4,   /* new thread in hdr.pid */
	GPUIO_PROC_NAME = 5,     /* comm of hdr.tid (rename, or read at attach) */
	GPUIO_PROC_ATTACH = 6,   /* existed at attach; args = /proc/PID/cmdline */
};

#define GPUIO_ARGS_MAX 256
struct gpuio_proc_event {
	struct gpuio_hdr hdr;
	__u32 kind;
	__u32 ppid;
	__s32 exit_code;
	__u32 args_len;
	char comm[16];
	char args[GPUIO_ARGS_MAX];
};

/* Counters kept per CPU by the BPF side (stats map index) and by userspace. */
enum gpuio_stat {
	GPUIO_STAT_RB_DROP_VFS = 0,   /* ring buffer full: VFS event lost */
	GPUIO_STAT_RB_DROP_BLOCK,
	GPUIO_STAT_RB_DROP_PATH,
	GPUIO_STAT_RB_DROP_PROC,
	GPUIO_STAT_MAP_FULL_PID,      /* traced-pid map full: child not traced */
	GPUIO_STAT_MAP_FULL_RQ,       /* request map full: block request lost */
	GPUIO_STAT_MAP_FULL_TASK,     /* task storage failed: call lost */
	GPUIO_STAT_PATH_TRUNC,        /* path walk hit its depth limit */
	GPUIO_STAT_EVENTS_VFS,        /* unused (kept for the record layout) */
	GPUIO_STAT_EVENTS_BLOCK,      /* block records emitted */
	GPUIO_STAT_MAX
};

/* Userspace-side counters, after the BPF ones in gpuio_stats_event.c. */
enum gpuio_ustat {
	GPUIO_USTAT_PATH_UNRESOLVED = 0, /* events whose file has no path */
	GPUIO_USTAT_WRITE_ERRORS,        /* capture writes that failed */
	GPUIO_USTAT_MAX
};

/* Snapshot of all counters (cumulative), written periodically and at the end. */
struct gpuio_stats_event {
	struct gpuio_hdr hdr;
	__u64 bpf[GPUIO_STAT_MAX];
	__u64 user[GPUIO_USTAT_MAX];
	__u64 records;               /* records written to the capture so far */
	__u32 final;                 /* 1 in the last snapshot of a clean end */
	__u32 pad;
};

struct gpuio_devname_event {
	struct gpuio_hdr hdr;
	__u32 dev;
	__u32 pad;
	char name[32];
};

#endif /* GPUIO_ABI_H */
