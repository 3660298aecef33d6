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
	/* GPU side: CUPTI collector (cupti/) and CUDA API uprobes (bpf/trace/cuda.bpf.h) */
	GPUIO_REC_GPU_INFO     = 7,  /* struct gpuio_gpu_info: collector state, clock */
	GPUIO_REC_GPU_KERNEL   = 8,  /* struct gpuio_gpu_kernel (name: variable) */
	GPUIO_REC_GPU_MEMCPY   = 9,  /* struct gpuio_gpu_memcpy */
	GPUIO_REC_GPU_MEMSET   = 10, /* struct gpuio_gpu_memset */
	GPUIO_REC_CUDA_API     = 11, /* struct gpuio_cuda_api: one host-side CUDA call */
	GPUIO_REC_GPU_SYNC     = 12, /* struct gpuio_gpu_sync */
	GPUIO_REC_NVTX         = 13, /* struct gpuio_nvtx_range (name: variable) */
	GPUIO_REC_GPU_OVERHEAD = 14, /* struct gpuio_gpu_overhead */
	GPUIO_REC_GPU_SYM      = 15, /* struct gpuio_gpu_sym: host stub addr -> name */
	GPUIO_REC_SCHED        = 16, /* struct gpuio_sched_event: switch or wake-up */
	/* numbers given to the job-shape records (each moves GPUIO_REC_LAST when
	 * its decode lands; until then readers count it as unknown) */
	GPUIO_REC_WAIT         = 17, /* struct gpuio_wait_event: what a sleeping thread waits in */
	GPUIO_REC_FAULT_COUNT  = 18, /* struct gpuio_fault_count: page faults per (process, file) */
	GPUIO_REC_SOCK_PEER    = 19, /* struct gpuio_sock_peer: a socket's addresses */
	GPUIO_REC_PY_STACK     = 20, /* struct gpuio_py_stack: a Python stack's frames, once */
	GPUIO_REC_PY_CODE      = 21, /* struct gpuio_py_code: a code object's file, name, lines */
	GPUIO_REC_STACK_AT     = 22, /* struct gpuio_stack_at: the stack of a call, sleep, sample */
	GPUIO_REC_PY_PROC      = 23, /* struct gpuio_py_proc: a process's interpreter, or why not */
	GPUIO_REC_LOST_CALLS   = 24, /* struct gpuio_lost_calls: calls the ring lost, summed */
	GPUIO_REC_THREAD_TIME  = 25, /* struct gpuio_thread_time: a thread's time by state, summed */
	GPUIO_REC_LAST         = GPUIO_REC_THREAD_TIME, /* the highest this build knows */
	/* in the ring buffer only, never in a capture: one thread's VFS records
	 * back to back after this header (bpf/trace/batch.bpf.h) */
	GPUIO_REC_RING_BATCH   = 63,
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

/* Calls traced at the VFS layer. Names in user/model/calls.c. */
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
	/* a page fault on a file mapping, as one call: fd -1, the file's page
	 * offset, the bytes it brought in (mmap data read by touching it) */
	GPUIO_CALL_PAGE_FAULT,
	/* socket calls (read/write/readv/writev on a socket keep their names) */
	GPUIO_CALL_RECVFROM, GPUIO_CALL_SENDTO, GPUIO_CALL_RECVMSG, GPUIO_CALL_SENDMSG,
	GPUIO_CALL_RECVMMSG, GPUIO_CALL_SENDMMSG,
	/* Linux native AIO: an iocb, from its io_submit to the io_getevents
	 * that reaped it (bpf/trace/aio.bpf.h); then the two syscalls */
	GPUIO_CALL_AIO_READ, GPUIO_CALL_AIO_WRITE, GPUIO_CALL_AIO_FSYNC,
	GPUIO_CALL_AIO_FDSYNC, GPUIO_CALL_AIO_POLL,
	GPUIO_CALL_IO_SUBMIT, GPUIO_CALL_IO_GETEVENTS,
	/* a socket's connection: connect (fd the socket, ret 0 or -errno) and
	 * accept/accept4 (fd and dev/ino the accepted socket, fd2 the
	 * listening one; ret the new fd or -errno) */
	GPUIO_CALL_CONNECT, GPUIO_CALL_ACCEPT,
	/* prefetch hints (bpf/trace/hints.bpf.h): offset and requested the
	 * range, flags the advice (POSIX_FADV_*, MADV_WILLNEED); madvise: fd
	 * -1, its mapping's file */
	GPUIO_CALL_FADVISE, GPUIO_CALL_READAHEAD, GPUIO_CALL_MADVISE,
	/* io_uring socket requests (bpf/trace/iouring.bpf.h), on the async
	 * lanes like its reads: fd and dev/ino the socket, requested the
	 * buffer (the iovecs of a msghdr); accept: ret the new fd */
	GPUIO_CALL_URING_RECV, GPUIO_CALL_URING_SEND, GPUIO_CALL_URING_RECVMSG,
	GPUIO_CALL_URING_SENDMSG, GPUIO_CALL_URING_ACCEPT, GPUIO_CALL_URING_CONNECT,
	GPUIO_CALL_MAX
};
/*
 * Socket calls fill gpuio_vfs_event like reads and writes: fd, the socket
 * inode's (dev, ino) (ftype GPUIO_FT_SOCK), requested (the buffer, the sum
 * of the iovecs), ret (bytes moved or -errno), offset -1, flags the MSG_*
 * flags given. recvmmsg/sendmmsg: requested and ret sum the messages' bytes
 * (msg_len), and offset2 is the messages the call moved (the syscall's own
 * return value), -1 when it failed.
 */

/*
 * AIO records (bpf/trace/aio.bpf.h). An iocb (AIO_READ/WRITE/FSYNC/FDSYNC/
 * POLL): hdr.ts its io_submit's entry, dur_ns until the io_getevents that
 * reaped it returned, tid the submitter, fd/dev/ino/ftype its file, offset
 * and requested from the iocb (the sum of the iovecs for PREADV/PWRITEV; -1
 * and 0 for the others), ret the event's res, flags its RWF_* flags, seq 0.
 * IO_SUBMIT: the syscall; fd/dev/ino its first iocb's file, requested the
 * bytes its traced iocbs ask for, flags the iocbs it was given, ret how many
 * it took (or -errno). IO_GETEVENTS: no file; ret the events it returned
 * (only one that reaped a traced request is recorded).
 */

/*
 * A GPUIO_CALL_PAGE_FAULT record (bpf/trace/fault.bpf.h) is a fault of a
 * traced thread on a file mapping that made it wait or brought pages in:
 * hdr.ts its entry, dur_ns until the thread ran again after its last sleep
 * in it (else until the last page it added), fd -1, dev/ino/ftype the
 * mapped file, offset the faulting page's file offset, ret = requested =
 * the bytes it brought into the page cache (cache_miss_pages of them),
 * offset2 the lowest file offset of those (-1: none), seq as for a call (its
 * block requests name it), flags GPUIO_PF_*.
 */
#define GPUIO_PF_MAJOR 0x01     /* the kernel counted it major (maj_flt) */
#define GPUIO_PF_SLEPT 0x02     /* the thread left the CPU inside it */
#define GPUIO_PF_WRITE 0x04     /* a write access */
#define GPUIO_PF_CUT   0x08     /* not finished when seen last (thread exit, trace end) */

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
/* Files /proc/PID/fd names specially (fs/d_path.c); the reader formats them */
#define GPUIO_PATH_DELETED    0x08 /* unlinked or O_TMPFILE: "PATH (deleted)" */
#define GPUIO_PATH_PSEUDO     0x10 /* memfd and the like: "/NAME (deleted)" */
#define GPUIO_PATH_PIPE       0x20 /* "pipe:[INO]" */
#define GPUIO_PATH_SOCKET     0x40 /* "socket:[INO]" */
#define GPUIO_PATH_ANON       0x80 /* "anon_inode:NAME" */

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
	GPUIO_PROC_CGROUP = 7,   /* args = the cgroup path that names its job (userspace, at
	                            fork/exec/attach: lib/job_identity.h); no comm */
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

/*
 * Scheduler layer (bpf/trace/sched.bpf.h): what a traced thread does between
 * its calls. Only events with a traced thread on either side are kept.
 */
enum gpuio_sched_kind {
	GPUIO_SCHED_SWITCH = 1,     /* hdr.tid = prev (left the CPU), next_* = who came on */
	GPUIO_SCHED_WAKE = 2,       /* hdr.tid = woken; waker_* = the running task (sched_waking) */
	GPUIO_SCHED_WAKE_NEW = 3,   /* a new task's first wake-up (hdr.tid = the new task) */
};
/* gpuio_sched_event.flags */
#define GPUIO_SF_PREV_TRACED 0x01   /* switch: prev is traced */
#define GPUIO_SF_NEXT_TRACED 0x02   /* switch: next is traced */
#define GPUIO_SF_PREEMPT     0x04   /* switch: prev was preempted (still runnable) */
#define GPUIO_SF_WAKER_TRACED 0x08  /* wake: the waker is traced */

/*
 * One context switch or wake-up. hdr.pid/tid: switch prev / woken task;
 * hdr.cpu: the CPU it happened on (wake: the waker's CPU).
 * prev_state is the kernel's task state (TASK_* bits of __state, with
 * exit_state in the high half) before the switch; with GPUIO_SF_PREEMPT the
 * task stays runnable whatever it says. comm names the untraced side of a
 * switch (next when next is untraced, else prev), or the waker.
 */
struct gpuio_sched_event {
	struct gpuio_hdr hdr;
	__u32 kind;                 /* enum gpuio_sched_kind */
	__u32 flags;                /* GPUIO_SF_* */
	__u32 other_pid;            /* switch: next's tgid; wake: waker's tgid */
	__u32 other_tid;            /* switch: next; wake: waker (0: idle/interrupt) */
	__u32 prev_state;           /* switch: __state | exit_state << 16 */
	__u32 target_cpu;           /* wake: the CPU the woken task will run on */
	__u32 waker_seq;            /* wake: the waker's VFS call in flight (its seq), 0 none */
	__s32 prio;                 /* switch: prev's prio; wake: woken's prio */
	char comm[16];
};

/*
 * What a traced thread went to sleep in, emitted right after the switch that
 * took it off its CPU (same ts, pid, tid). Read from its saved user
 * registers: the syscall it is inside and that syscall's fd (poll/ppoll: the
 * first pollfd's), or none — a sleep outside any syscall is a page fault or
 * other kernel work on the thread's behalf. Syscall numbers are x86-64's;
 * other architectures record GPUIO_WAIT_NR_UNKNOWN.
 */
#define GPUIO_WAIT_NR_NONE     (-1)    /* not inside a syscall */
#define GPUIO_WAIT_NR_UNKNOWN  (-2)    /* not read on this architecture */
struct gpuio_wait_event {
	struct gpuio_hdr hdr;
	__s32 nr;                   /* syscall number, or GPUIO_WAIT_NR_* */
	__s32 fd;                   /* the fd it waits on, -1 none */
	__u64 ino;                  /* that fd's inode (0: none) */
	__u64 addr;                 /* futex: the user address waited on; else 0 */
	__u32 dev;                  /* that inode's dev_t (kernel encoding) */
	__u8  ftype;                /* GPUIO_FT_* of the fd, 0 none */
	__u8  pad[3];
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
	GPUIO_STAT_RB_DROP_CUDA,      /* ring buffer full: CUDA API (uprobe) record lost */
	GPUIO_STAT_CUDA_DEPTH,        /* CUDA calls nested deeper than the per-thread stack: call lost */
	GPUIO_STAT_RB_DROP_SCHED,     /* ring buffer full: context switch or wake-up lost */
	GPUIO_STAT_RB_DROP_SOCK,      /* ring buffer full: a socket's peer record lost */
	GPUIO_STAT_RB_DROP_WAIT,      /* ring buffer full: what a sleep was in, lost */
	GPUIO_STAT_RB_DROP_FAULT,     /* ring buffer full: page fault record lost */
	GPUIO_STAT_MAP_FULL_FAULT,    /* fault-count map full: a file's faults not counted */
	GPUIO_STAT_FAULT_NO_VMA,      /* fault whose mapping could not be looked up (mmap lock busy) */
	GPUIO_STAT_RB_DROP_STACK,     /* ring buffer full: a stack, code object or stack reference lost */
	GPUIO_STAT_PY_NO_TSTATE,      /* a Python thread's own thread state not found: no stack */
	GPUIO_STAT_PY_CUT,            /* a Python stack cut short (unreadable frame, too deep) */
	GPUIO_STAT_AIO_UNTRACKED,     /* AIO iocbs or events past the first 1024 of one syscall */
	GPUIO_STAT_LEDGER_FULL,       /* a lost call not summed: the ledger of lost calls full (not a
				       * record lost: the report's LOSSY warning shows the gap) */
	GPUIO_STAT_SHED_SCHED,        /* ring over 3/4 full: a switch, wake-up or sleep's call left out
				       * (the last quarter is for file, disk and process records) */
	GPUIO_STAT_SHED_STACK,        /* ring over 3/4 full: a Python stack use left out */
	GPUIO_STAT_MAP_FULL_TTIME,    /* a thread's time by state not kept: its map full */
	GPUIO_STAT_MAX
};

/* Userspace-side counters, after the BPF ones in gpuio_stats_event.c. */
enum gpuio_ustat {
	GPUIO_USTAT_PATH_UNRESOLVED = 0, /* events whose file has no path */
	GPUIO_USTAT_WRITE_ERRORS,        /* capture writes that failed */
	GPUIO_USTAT_MAX
};

/*
 * Snapshot of all counters (cumulative), written periodically and at the end.
 * The first GPUIO_STATS_BPF_FIXED BPF counters come first; counters added
 * since follow the fixed part (bpf_more[i] is counter FIXED + i), so that a
 * reader built before them still finds user[], records and final where it
 * expects them. Userspace reads and writes them by index through
 * gpuio_stats__bpf() and gpuio_stats__set_bpf() (user/capture/capture.h).
 */
#define GPUIO_STATS_BPF_FIXED 13
struct gpuio_stats_event {
	struct gpuio_hdr hdr;
	__u64 bpf[GPUIO_STATS_BPF_FIXED];
	__u64 user[GPUIO_USTAT_MAX];
	__u64 records;               /* records written to the capture so far */
	__u32 final;                 /* 1 in the last snapshot of a clean end */
	__u32 nbpf;                  /* readers: how many BPF counters the tracer had (older
				      * tracers, fewer: the record's size says); files: 0 */
	__u64 bpf_more[GPUIO_STAT_MAX - GPUIO_STATS_BPF_FIXED];
};

/*
 * A socket's addresses (bpf/trace/vfs.bpf.h), sent before the first call on
 * the socket that a record shows: every socket call's (dev, ino) then names
 * its peer. Sent again when a socket without a peer gets one (a datagram
 * socket connected later); later records win. hdr: the thread of that call.
 * Addresses are in network byte order as the kernel keeps them (IPv4 in the
 * first 4 bytes); ports in host order. AF_UNIX: the bound names of this end
 * (lpath) and of the peer (rpath), sun_path bytes (abstract names start
 * with a NUL); either may be empty (unbound, socketpair).
 */
#define GPUIO_SOCK_PATH_MAX 108          /* sizeof(sun_path) */
/* gpuio_sock_peer.flags */
#define GPUIO_SP_PEER      0x01  /* a peer is known (connected, or a unix peer socket) */
#define GPUIO_SP_LPATH_CUT 0x02  /* lpath longer than the record holds */
#define GPUIO_SP_RPATH_CUT 0x04
struct gpuio_sock_peer {
	struct gpuio_hdr hdr;
	__u64 ino;                       /* the socket's inode (sockfs) */
	__u32 dev;
	__u16 family;                    /* AF_INET 2, AF_INET6 10, AF_UNIX 1, other */
	__u16 type;                      /* SOCK_STREAM 1, SOCK_DGRAM 2, SOCK_SEQPACKET 5, ... */
	__u16 protocol;                  /* IPPROTO_TCP 6, IPPROTO_UDP 17, ...; 0 for unix */
	__u16 flags;                     /* GPUIO_SP_* */
	__u16 lport, rport;              /* local and peer port (inet) */
	__u8  laddr[16], raddr[16];      /* local and peer address (inet) */
	__u16 lpath_len, rpath_len;      /* bytes used in lpath / rpath (unix) */
	__u32 pad;
	char  lpath[GPUIO_SOCK_PATH_MAX];
	char  rpath[GPUIO_SOCK_PATH_MAX];
};

/*
 * Faults of one process on one file's mappings, cumulative since the trace
 * began (bpf/trace/fault.bpf.h counts them in a map; the tracer writes the
 * ones that changed with each STATS snapshot). hdr.pid = the process, tid 0,
 * ts = when read. Major faults are also page_fault VFS records, one each.
 */
struct gpuio_fault_count {
	struct gpuio_hdr hdr;
	__u64 ino;
	__u32 dev;
	__u32 flags;                 /* GPUIO_FC_* */
	__u64 minor;
	__u64 major;
};
/*
 * Calls whose records the ring buffer could not take (bpf/trace/ledger.bpf.h),
 * summed by (process, file, call) — block requests by (process, disk, file,
 * op) — and written once at the end of the trace: the report adds them to
 * its totals per file, per process and per disk.
 * hdr.pid = the process, hdr.tid = 0, hdr.ts = when the sums were read.
 */
struct gpuio_lost_calls {
	struct gpuio_hdr hdr;
	__u64 ino;
	__u32 dev;                   /* the file's; GPUIO_LOST_BLOCK: the disk's */
	__u32 file_dev;              /* GPUIO_LOST_BLOCK: the request's file's dev */
	__u16 call;                  /* GPUIO_CALL_*, or GPUIO_LOST_BLOCK | enum gpuio_blk_op */
	__u8 ftype;                  /* GPUIO_FT_* */
	__u8 pad[5];
	__u64 count;                 /* calls (block requests) lost */
	__u64 bytes;                 /* their positive returns (request bytes), summed */
	__u64 dur_ns;                /* their time in the call (a request's service time) */
};
#define GPUIO_LOST_BLOCK 0x8000      /* gpuio_lost_calls.call: block requests of this op */

/*
 * A traced thread's time by state, summed in the kernel at every switch and
 * wake-up (bpf/trace/thread_time.bpf.h) whether or not the ring took their
 * records: the report's per-thread totals stay exact when scheduler records
 * were lost or shed. Written when the thread exits (its last switch), or at
 * the end of the trace for the threads still alive (user/trace/thread_time.c).
 * hdr.pid = the process, hdr.tid = the thread, hdr.ts = the exit or the end.
 * The kernel's map holds this very struct while the thread runs.
 */
enum gpuio_tstate {
	GPUIO_TS_CPU = 0,            /* on a CPU */
	GPUIO_TS_RUNNABLE,           /* woken or preempted, waiting for a CPU */
	GPUIO_TS_SLEEP,              /* asleep, interruptible (S: futex, poll, pipes, timers) */
	GPUIO_TS_BLOCKED,            /* asleep, uninterruptible (D: disk I/O, page faults, locks) */
	GPUIO_TS_N,
	GPUIO_TS_NONE = GPUIO_TS_N,  /* state: not known yet (first seen leaving a CPU) */
	GPUIO_TS_GONE,               /* state: exited */
};
struct gpuio_thread_time {
	struct gpuio_hdr hdr;
	__u64 from;                  /* when the trace first saw it (its birth: GPUIO_TT_BORN) */
	__u64 ns[GPUIO_TS_N];        /* by enum gpuio_tstate; they add up to ts - from */
	__u32 flags;                 /* GPUIO_TT_* */
	__u8 state;                  /* in the kernel's map: since when (below) */
	__u8 pad[3];
	__u64 since;
	__u64 exec_ns;               /* in the kernel's map: its on-CPU total at its last switch */
};
#define GPUIO_TT_BORN   0x1          /* seen from its creation: from is its first instant */
#define GPUIO_TT_EXITED 0x2          /* ts is its exit */

/* gpuio_fault_count.flags */
#define GPUIO_FC_EXEC 0x1            /* an instruction fetch faulted on it: a program or a library */

struct gpuio_devname_event {
	struct gpuio_hdr hdr;
	__u32 dev;
	__u32 pad;
	char name[32];
};


/* ===================== Python stacks =====================
 * Where in a Python program a traced call, page fault, sleep or on-CPU
 * sample happened: bpf/trace/pystack.bpf.h walks the thread's own
 * interpreter frames (its PyThreadState, found by its pthread id) with the
 * layout user/python/ found at attach (struct gpuio_py_layout), and names
 * the stack by a 64-bit hash of its frames. A stack is sent once per
 * process (PY_STACK), each code object once per process (PY_CODE: its file,
 * name and line table, decoded in userspace), and every use of a stack as
 * a small STACK_AT record. All per process (hdr.pid): code addresses are.
 */
#define GPUIO_PY_FRAMES_MAX   64     /* innermost first; deeper stacks are cut (flag); a power of two */
#define GPUIO_PY_NAME_MAX     128
#define GPUIO_PY_FILE_MAX     256
#define GPUIO_PY_LINES_MAX    2048   /* line table bytes kept (longer: cut, flag) */

struct gpuio_py_frame {
	__u64 code;                  /* the PyCodeObject: a hash of its address, name, file name
				      * and first line (an address alone is reused once freed) */
	__s32 lasti;                 /* instruction index (code units) being executed;
				      * GPUIO_PY_LASTI_NATIVE: code is a native return address */
	__u32 pad;
};
/*
 * Native frames: the thread's user stack by its frame pointers, innermost
 * first, up to the first address inside the interpreter (its own C frames
 * say nothing the Python frames do not), at most GPUIO_PY_NATIVE_MAX; they
 * come before the Python frames. The collector keeps only those it can
 * name and that return where a call was (a frame pointer chain through
 * code built without one runs into junk: cut there, GPUIO_PYS_NATIVE_CUT),
 * and names each address once per process (a PY_CODE record, flag
 * GPUIO_PYC_NATIVE: file = the mapped ELF file, name = its symbol).
 */
#define GPUIO_PY_LASTI_NATIVE (-2)
#define GPUIO_PY_NATIVE_MAX   8

/* gpuio_py_stack.flags */
#define GPUIO_PYS_CUT      0x1       /* frames past GPUIO_PY_FRAMES_MAX (outermost) left out */
#define GPUIO_PYS_BAD      0x2       /* a frame could not be read or was not code: stopped there */
#define GPUIO_PYS_NATIVE_CUT 0x4     /* native frames past one not named or not a return left out */
struct gpuio_py_stack {
	struct gpuio_hdr hdr;        /* the thread that first had it */
	__u64 id;                    /* hash of the frames: what STACK_AT records name */
	__u16 nframes;
	__u16 flags;                 /* GPUIO_PYS_* */
	__u32 pad;
	struct gpuio_py_frame frames[]; /* nframes of them, innermost first */
};

/* string kinds in gpuio_py_code: the bytes as the interpreter keeps them */
#define GPUIO_PYSTR_UTF8   0         /* ASCII or UTF-8 */
#define GPUIO_PYSTR_LATIN1 1
#define GPUIO_PYSTR_UCS2   2
#define GPUIO_PYSTR_UCS4   4
/* gpuio_py_code.flags */
#define GPUIO_PYC_LINES_CUT 0x1      /* the line table is longer than what was kept */
#define GPUIO_PYC_FILE_CUT  0x2
#define GPUIO_PYC_NAME_CUT  0x4
#define GPUIO_PYC_NATIVE    0x8      /* a native address: file = its ELF file, name = its symbol */
struct gpuio_py_code {
	struct gpuio_hdr hdr;
	__u64 code;                  /* its identity, as gpuio_py_frame.code names it */
	__s32 firstlineno;
	__u16 minor;                 /* the interpreter's 3.minor: the line table's format */
	__u16 flags;                 /* GPUIO_PYC_* */
	__u16 file_len, name_len;    /* bytes of data[]: the file name, then the (qualified) name */
	__u16 lines_len;             /* then the line table (co_linetable) */
	__u8  file_kind, name_kind;  /* GPUIO_PYSTR_* */
	__u8  data[];
};

/* gpuio_stack_at.what */
enum gpuio_stack_what {
	GPUIO_SA_CALL = 1,           /* the VFS call (or page fault) of this thread numbered seq */
	GPUIO_SA_SLEEP = 2,          /* the thread left its CPU to sleep at hdr.ts */
	GPUIO_SA_PREEMPT = 3,        /* the thread was preempted at hdr.ts (runnable) */
	GPUIO_SA_SAMPLE = 4,         /* an on-CPU sample at hdr.ts (--sample-hz) */
};
struct gpuio_stack_at {
	struct gpuio_hdr hdr;
	__u64 id;                    /* gpuio_py_stack.id of this process; 0: no stack (see why) */
	__u32 seq;                   /* GPUIO_SA_CALL: the call's gpuio_vfs_event.seq */
	__u8  what;                  /* enum gpuio_stack_what */
	__u8  why;                   /* id 0: GPUIO_STACK_NONE_* */
	__u16 pad;
};
/* gpuio_stack_at.why */
#define GPUIO_STACK_NONE_NOPY     0  /* not a Python thread (no interpreter known) */
#define GPUIO_STACK_NONE_TSTATE   1  /* its thread state not found (not yet created, or gone) */
#define GPUIO_STACK_NONE_EMPTY    2  /* no Python frame: in the interpreter's own C code */

/* What gpuio found of a process's interpreter (user/trace/py_procs.c):
 * written once per process and image, whatever the outcome */
enum gpuio_py_status {
	GPUIO_PYP_OK = 1,            /* found and checked: its threads' stacks are read */
	GPUIO_PYP_UNSUPPORTED = 2,   /* a version gpuio does not read: no frames */
	GPUIO_PYP_MISMATCH = 3,      /* its layout is not what gpuio expects: no frames */
	GPUIO_PYP_GAVE_UP = 4,       /* never started, or could not be read */
};
struct gpuio_py_proc {
	struct gpuio_hdr hdr;        /* the process; ts: when found */
	__u32 status;                /* enum gpuio_py_status */
	__u16 minor;                 /* 3.minor, 0 unknown */
	__u16 pad;
	__u64 hex;                   /* PY_VERSION_HEX, 0 unknown */
	char what[232];              /* the one line that says what was found, or why not */
};

/*
 * One interpreter's layout, as user/python/ found and checked it at attach:
 * where its runtime is, and the offsets of the fields the walk reads
 * (bpf/trace/pystack.bpf.h). The map py_procs holds one per traced process
 * that runs CPython; a forked child inherits its parent's.
 */
#define GPUIO_PY_NONE 0xffff         /* a field this version does not have */
struct gpuio_py_layout {
	__u64 runtime;               /* &_PyRuntime */
	__u64 code_type;             /* &PyCode_Type: every frame's code must be one */
	__u16 minor;                 /* 3.minor */
	__u16 interp_head;           /* _PyRuntime.interpreters.head */
	__u16 threads_head;          /* PyInterpreterState: its first PyThreadState */
	__u16 ts_next;               /* PyThreadState.next */
	__u16 ts_thread_id;          /* PyThreadState.thread_id (the pthread_t) */
	__u16 ts_frame;              /* PyThreadState.frame (3.10) / cframe (3.11, 3.12) / current_frame */
	__u16 cframe_frame;          /* _PyCFrame.current_frame (3.11, 3.12), else NONE */
	__u16 f_prev;                /* frame: the caller (f_back, previous) */
	__u16 f_code;                /* frame: f_code / f_executable */
	__u16 f_instr;               /* frame: f_lasti (3.10, an int) or the instruction pointer */
	__u16 f_owner;               /* frame: owner (3.11+), else NONE */
	__u16 co_code;               /* PyCodeObject: where its bytecode starts (3.11+) */
	__u16 co_filename, co_name, co_firstlineno, co_linetable;
	__u16 str_state;             /* PyASCIIObject.state */
	__u16 str_ascii_size;        /* sizeof(PyASCIIObject): an ASCII string's data follows */
	__u16 str_compact_size;      /* sizeof(PyCompactUnicodeObject): other compact strings' data */
	__u16 str_utf8, str_utf8_len, str_len;
	__u8  owner_cstack;          /* frames owned by the C stack (shims): skipped; 0xff none */
	__u8  code_win;              /* bytes of a code object read to name it (py_layout__finish) */
	__u8  pad[2];
	__u64 text_lo, text_hi;      /* the interpreter's code, mapped: native frames stop there */
};

/* ===================== GPU records =====================
 * All timestamps are CLOCK_MONOTONIC ns (the collector registers a MONOTONIC
 * timestamp callback with CUPTI, or corrects by a measured offset; see
 * gpuio_gpu_info). hdr.pid is the process the record came from; hdr.tid the
 * host thread for API calls and NVTX ranges, 0 for device activity; hdr.cpu
 * is 0 for collector records. hdr.ts is the start of the interval.
 */

/* gpuio_gpu_info.state */
enum gpuio_gpu_state {
	GPUIO_GPU_ON = 1,           /* subscribed, activity enabled */
	GPUIO_GPU_UNAVAILABLE = 2,  /* collector loaded but off: reason says why */
	GPUIO_GPU_FINAL = 3,        /* last record of a clean shutdown (counts final) */
};
/* gpuio_gpu_info.clock */
enum gpuio_gpu_clock {
	GPUIO_GPU_CLOCK_NONE = 0,
	GPUIO_GPU_CLOCK_MONOTONIC_CB = 1, /* CUPTI timestamps come from our MONOTONIC callback */
	GPUIO_GPU_CLOCK_OFFSET = 2,       /* CUPTI clock + offset_ns = MONOTONIC (already applied) */
};
/* gpuio_gpu_info.how */
/* CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED: the PyTorch profiler, Nsight or DCGM got there first */
#define GPUIO_CUPTI_HELD 39
#define GPUIO_GPU_HOW_LAUNCH 1  /* InitializeInjection (CUDA_INJECTION64_PATH) */
#define GPUIO_GPU_HOW_ATTACH 2  /* injected into a running process by ptrace */

/* Collector status, written when it starts, on each flush and at the end. */
struct gpuio_gpu_info {
	struct gpuio_hdr hdr;
	__s64 offset_ns;            /* applied to CUPTI timestamps (clock OFFSET) */
	__u64 uncertainty_ns;       /* measured alignment uncertainty (half the tightest window) */
	__u64 cupti_dropped;        /* cumulative records CUPTI dropped (cuptiActivityGetNumDroppedRecords) */
	__u64 records;              /* cumulative records this collector wrote */
	__u64 write_errors;         /* cumulative records lost to failed writes */
	__u32 state;                /* enum gpuio_gpu_state */
	__u32 clock;                /* enum gpuio_gpu_clock */
	__u32 how;                  /* GPUIO_GPU_HOW_* */
	__u32 cupti_version;        /* cuptiGetVersion, 0 unknown */
	__s32 cupti_error;          /* CUptiResult that turned the collector off, 0 none
	                               (GPUIO_CUPTI_HELD: another profiler holds CUPTI) */
	__u32 pad;
	char reason[128];           /* why UNAVAILABLE, NUL terminated */
};

#define GPUIO_GPU_NAME_MAX 1024
/* A kernel execution (CUPTI CONCURRENT_KERNEL). hdr.size = offsetof(name) + name_len + pad to 8. */
struct gpuio_gpu_kernel {
	struct gpuio_hdr hdr;       /* ts = start */
	__u64 end_ns;
	__u64 context;
	__u64 stream;               /* CUPTI stream id */
	__u32 correlation;
	__u32 device;
	__u32 grid[3];
	__u32 block[3];
	__u32 static_smem;
	__u32 dynamic_smem;
	__u32 registers;
	__u16 name_len;             /* bytes used in name (demangled, no NUL) */
	__u16 flags;                /* GPUIO_GK_* */
	char name[GPUIO_GPU_NAME_MAX];
};
#define GPUIO_GK_NAME_TRUNCATED 0x1

/* gpuio_gpu_memcpy.kind (CUpti_ActivityMemcpyKind values) */
enum gpuio_memcpy_kind {
	GPUIO_MEMCPY_UNKNOWN = 0, GPUIO_MEMCPY_HTOD = 1, GPUIO_MEMCPY_DTOH = 2,
	GPUIO_MEMCPY_HTOA = 3, GPUIO_MEMCPY_ATOH = 4, GPUIO_MEMCPY_ATOA = 5,
	GPUIO_MEMCPY_ATOD = 6, GPUIO_MEMCPY_DTOA = 7, GPUIO_MEMCPY_DTOD = 8,
	GPUIO_MEMCPY_HTOH = 9, GPUIO_MEMCPY_PTOP = 10,
};
/* A copy (CUPTI MEMCPY, or MEMCPY2 for peer copies: dst_device set). */
struct gpuio_gpu_memcpy {
	struct gpuio_hdr hdr;       /* ts = start */
	__u64 end_ns;
	__u64 bytes;
	__u64 context;
	__u64 stream;
	__u32 correlation;
	__u32 device;               /* src device for MEMCPY2 */
	__u32 dst_device;           /* == device except peer copies */
	__u8  kind;                 /* enum gpuio_memcpy_kind */
	__u8  src_kind;             /* CUpti_ActivityMemoryKind */
	__u8  dst_kind;
	__u8  flags;                /* GPUIO_GM_* */
};
#define GPUIO_GM_ASYNC 0x1
#define GPUIO_GM_PEER  0x2      /* from a MEMCPY2 record */

struct gpuio_gpu_memset {
	struct gpuio_hdr hdr;       /* ts = start */
	__u64 end_ns;
	__u64 bytes;
	__u64 context;
	__u64 stream;
	__u32 correlation;
	__u32 device;
	__u32 value;
	__u8  mem_kind;             /* CUpti_ActivityMemoryKind */
	__u8  flags;                /* GPUIO_GM_ASYNC */
	__u16 pad;
};

/* Where a CUDA API record came from. */
enum gpuio_api_source {
	GPUIO_API_RUNTIME = 1,      /* CUPTI RUNTIME activity */
	GPUIO_API_DRIVER = 2,       /* CUPTI DRIVER activity */
	GPUIO_API_UPROBE_RT = 3,    /* uprobe on libcudart */
	GPUIO_API_UPROBE_DRV = 4,   /* uprobe on libcuda.so.1 */
};
/* What a call does, whichever library it is in (for export and report). */
enum gpuio_api_kind {
	GPUIO_API_OTHER = 0,
	GPUIO_API_LAUNCH = 1,       /* kernel launch (cudaLaunchKernel, __cudaLaunchKernel, cuLaunchKernel*) */
	GPUIO_API_MEMCPY = 2,
	GPUIO_API_MEMSET = 3,
	GPUIO_API_SYNC = 4,         /* device/stream/event/context synchronize, blocking waits */
	GPUIO_API_GRAPH_LAUNCH = 5,
	GPUIO_API_MALLOC = 6,
	GPUIO_API_FREE = 7,
};
/*
 * One host-side CUDA call: hdr.ts entry, hdr.pid/tid the calling thread.
 * Uprobe records have correlation 0 and carry what the probe read from the
 * arguments (bytes, stream handle, memcpy kind, stub address for launches).
 */
struct gpuio_cuda_api {
	struct gpuio_hdr hdr;
	__u64 end_ns;
	__s64 ret;                  /* cudaError_t / CUresult */
	__u64 bytes;                /* copies and memsets, allocations */
	__u64 stream;               /* stream handle (uprobe) or CUPTI stream id, 0 default */
	__u64 func;                 /* launches: host stub / CUfunction address (uprobe) */
	__u32 correlation;          /* CUPTI correlation id, 0 for uprobes */
	__u32 cbid;                 /* CUPTI callback id (runtime or driver), 0 for uprobes */
	__u8  source;               /* enum gpuio_api_source */
	__u8  kind;                 /* enum gpuio_api_kind */
	__u8  memcpy_kind;          /* enum gpuio_memcpy_kind when known */
	__u8  pad[5];
	char  name[48];             /* API function name, NUL terminated */
};

/* CUPTI SYNCHRONIZATION activity: a host thread waiting on the GPU. */
enum gpuio_sync_type {
	GPUIO_SYNC_UNKNOWN = 0, GPUIO_SYNC_EVENT = 1, GPUIO_SYNC_STREAM_WAIT_EVENT = 2,
	GPUIO_SYNC_STREAM = 3, GPUIO_SYNC_CONTEXT = 4,
};
struct gpuio_gpu_sync {
	struct gpuio_hdr hdr;       /* ts = start; tid = waiting host thread when known */
	__u64 end_ns;
	__u64 context;
	__u64 stream;
	__u32 correlation;
	__u32 type;                 /* enum gpuio_sync_type */
};

/* An NVTX push/pop or start/end range. hdr.size = offsetof(name) + len, padded to 8. */
struct gpuio_nvtx_range {
	struct gpuio_hdr hdr;       /* ts = start; tid = the thread that pushed it */
	__u64 end_ns;
	__u32 depth;                /* nesting depth of push/pop ranges, 0 outermost */
	__u16 name_len;
	__u16 pad;
	char name[256];
};

/* CUPTI OVERHEAD activity: time CUPTI itself spent (buffer flush, instrumentation). */
struct gpuio_gpu_overhead {
	struct gpuio_hdr hdr;       /* ts = start; tid = thread when object is a thread */
	__u64 end_ns;
	__u32 kind;                 /* CUpti_ActivityOverheadKind */
	__u32 object_kind;          /* CUpti_ActivityObjectKind */
	__u64 object_id;            /* thread id or device id */
};

/* A launch stub address named from the process's ELF symbols (tracer-side). */
struct gpuio_gpu_sym {
	struct gpuio_hdr hdr;       /* pid = process */
	__u64 addr;
	__u16 name_len;
	__u16 pad[3];
	char name[GPUIO_GPU_NAME_MAX];
};

#endif /* GPUIO_ABI_H */
