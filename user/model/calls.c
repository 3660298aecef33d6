// SPDX-License-Identifier: MIT
/* calls.c — names for call numbers, errnos and flags. See calls.h. */
#include <stdio.h>
#include <string.h>
#include "model/calls.h"
#include "lib/units.h"

static const char *const call_names[GPUIO_CALL_MAX] = {
	[GPUIO_CALL_READ] = "read",
	[GPUIO_CALL_WRITE] = "write",
	[GPUIO_CALL_PREAD64] = "pread64",
	[GPUIO_CALL_PWRITE64] = "pwrite64",
	[GPUIO_CALL_READV] = "readv",
	[GPUIO_CALL_WRITEV] = "writev",
	[GPUIO_CALL_PREADV] = "preadv",
	[GPUIO_CALL_PWRITEV] = "pwritev",
	[GPUIO_CALL_PREADV2] = "preadv2",
	[GPUIO_CALL_PWRITEV2] = "pwritev2",
	[GPUIO_CALL_OPEN] = "open",
	[GPUIO_CALL_OPENAT] = "openat",
	[GPUIO_CALL_OPENAT2] = "openat2",
	[GPUIO_CALL_CREAT] = "creat",
	[GPUIO_CALL_CLOSE] = "close",
	[GPUIO_CALL_FSYNC] = "fsync",
	[GPUIO_CALL_FDATASYNC] = "fdatasync",
	[GPUIO_CALL_SYNC_FILE_RANGE] = "sync_file_range",
	[GPUIO_CALL_FALLOCATE] = "fallocate",
	[GPUIO_CALL_FTRUNCATE] = "ftruncate",
	[GPUIO_CALL_SENDFILE] = "sendfile",
	[GPUIO_CALL_COPY_FILE_RANGE] = "copy_file_range",
	[GPUIO_CALL_SPLICE] = "splice",
	[GPUIO_CALL_URING_READ] = "io_uring_read",
	[GPUIO_CALL_URING_WRITE] = "io_uring_write",
	[GPUIO_CALL_PAGE_FAULT] = "page_fault",
	[GPUIO_CALL_RECVFROM] = "recvfrom",
	[GPUIO_CALL_SENDTO] = "sendto",
	[GPUIO_CALL_RECVMSG] = "recvmsg",
	[GPUIO_CALL_SENDMSG] = "sendmsg",
	[GPUIO_CALL_RECVMMSG] = "recvmmsg",
	[GPUIO_CALL_SENDMMSG] = "sendmmsg",
	[GPUIO_CALL_AIO_READ] = "aio_read",
	[GPUIO_CALL_AIO_WRITE] = "aio_write",
	[GPUIO_CALL_AIO_FSYNC] = "aio_fsync",
	[GPUIO_CALL_AIO_FDSYNC] = "aio_fdsync",
	[GPUIO_CALL_AIO_POLL] = "aio_poll",
	[GPUIO_CALL_IO_SUBMIT] = "io_submit",
	[GPUIO_CALL_IO_GETEVENTS] = "io_getevents",
	[GPUIO_CALL_CONNECT] = "connect",
	[GPUIO_CALL_ACCEPT] = "accept",
	[GPUIO_CALL_FADVISE] = "fadvise64",
	[GPUIO_CALL_READAHEAD] = "readahead",
	[GPUIO_CALL_MADVISE] = "madvise",
	[GPUIO_CALL_URING_RECV] = "io_uring_recv",
	[GPUIO_CALL_URING_SEND] = "io_uring_send",
	[GPUIO_CALL_URING_RECVMSG] = "io_uring_recvmsg",
	[GPUIO_CALL_URING_SENDMSG] = "io_uring_sendmsg",
	[GPUIO_CALL_URING_ACCEPT] = "io_uring_accept",
	[GPUIO_CALL_URING_CONNECT] = "io_uring_connect",
};
_Static_assert(ARRAY_SIZE(call_names) == GPUIO_CALL_MAX, "a call without a name");

const char *gpuio_call__name(unsigned call)
{
	return call < GPUIO_CALL_MAX ? call_names[call] : NULL;
}

unsigned gpuio_call__from_name(const char *name)
{
	for (unsigned i = 1; i < GPUIO_CALL_MAX; i++)
		if (call_names[i] && !strcmp(call_names[i], name))
			return i;
	return GPUIO_CALL_NONE;
}

bool gpuio_call__is_read(unsigned call)
{
	switch (call) {
	case GPUIO_CALL_READ: case GPUIO_CALL_PREAD64: case GPUIO_CALL_READV:
	case GPUIO_CALL_PREADV: case GPUIO_CALL_PREADV2: case GPUIO_CALL_URING_READ:
	case GPUIO_CALL_AIO_READ:
	case GPUIO_CALL_PAGE_FAULT:     /* mmap'ed data read by touching it */
		return true;
	}
	return false;
}

bool gpuio_call__is_write(unsigned call)
{
	switch (call) {
	case GPUIO_CALL_WRITE: case GPUIO_CALL_PWRITE64: case GPUIO_CALL_WRITEV:
	case GPUIO_CALL_PWRITEV: case GPUIO_CALL_PWRITEV2: case GPUIO_CALL_URING_WRITE:
	case GPUIO_CALL_AIO_WRITE:
		return true;
	}
	return false;
}

bool gpuio_call__is_open(unsigned call)
{
	return call == GPUIO_CALL_OPEN || call == GPUIO_CALL_OPENAT ||
	       call == GPUIO_CALL_OPENAT2 || call == GPUIO_CALL_CREAT;
}

bool gpuio_call__two_files(unsigned call)
{
	return call == GPUIO_CALL_SENDFILE || call == GPUIO_CALL_COPY_FILE_RANGE ||
	       call == GPUIO_CALL_SPLICE;
}

bool gpuio_call__is_sock(unsigned call)
{
	return (call >= GPUIO_CALL_RECVFROM && call <= GPUIO_CALL_SENDMMSG) ||
	       (call >= GPUIO_CALL_URING_RECV && call <= GPUIO_CALL_URING_CONNECT) ||
	       gpuio_call__is_connection(call);
}

bool gpuio_call__is_connection(unsigned call)
{
	return call == GPUIO_CALL_CONNECT || call == GPUIO_CALL_ACCEPT ||
	       call == GPUIO_CALL_URING_CONNECT || call == GPUIO_CALL_URING_ACCEPT;
}

bool gpuio_call__moves_bytes(unsigned call)
{
	return gpuio_call__is_read(call) || gpuio_call__is_write(call) ||
	       gpuio_call__two_files(call) ||
	       (gpuio_call__is_sock(call) && !gpuio_call__is_connection(call));
}

enum gpuio_sock_dir gpuio_call__sock_dir(unsigned call, unsigned ftype)
{
	switch (call) {
	case GPUIO_CALL_RECVFROM: case GPUIO_CALL_RECVMSG: case GPUIO_CALL_RECVMMSG:
	case GPUIO_CALL_URING_RECV: case GPUIO_CALL_URING_RECVMSG:
		return GPUIO_SOCK_RECV;
	case GPUIO_CALL_SENDTO: case GPUIO_CALL_SENDMSG: case GPUIO_CALL_SENDMMSG:
	case GPUIO_CALL_URING_SEND: case GPUIO_CALL_URING_SENDMSG:
		return GPUIO_SOCK_SEND;
	}
	if (ftype != GPUIO_FT_SOCK || gpuio_call__is_async(call))
		return GPUIO_SOCK_NONE;
	if (gpuio_call__is_read(call))
		return GPUIO_SOCK_RECV;
	return gpuio_call__is_write(call) ? GPUIO_SOCK_SEND : GPUIO_SOCK_NONE;
}

/* requests in flight beside their thread (io_uring, AIO): lanes of their own */
bool gpuio_call__is_async(unsigned call)
{
	return call == GPUIO_CALL_URING_READ || call == GPUIO_CALL_URING_WRITE ||
	       (call >= GPUIO_CALL_AIO_READ && call <= GPUIO_CALL_AIO_POLL) ||
	       (call >= GPUIO_CALL_URING_RECV && call <= GPUIO_CALL_URING_CONNECT);
}

/* fadvise64, readahead, madvise(MADV_WILLNEED): the kernel asked to prefetch or drop */
bool gpuio_call__is_hint(unsigned call)
{
	return call == GPUIO_CALL_FADVISE || call == GPUIO_CALL_READAHEAD ||
	       call == GPUIO_CALL_MADVISE;
}

/* Does the hint ask for the range to be read ahead (WILLNEED, readahead)? */
bool gpuio_call__hint_prefetches(unsigned call, unsigned advice)
{
	return call == GPUIO_CALL_READAHEAD ||
	       ((call == GPUIO_CALL_FADVISE || call == GPUIO_CALL_MADVISE) && advice == 3);
}

/* io_submit / io_getevents: the thread's side of AIO, no file's own operation */
bool gpuio_call__is_aio_syscall(unsigned call)
{
	return call == GPUIO_CALL_IO_SUBMIT || call == GPUIO_CALL_IO_GETEVENTS;
}

const char *gpuio_errno__name(int err, char *buf, size_t len)
{
	const char *s = err > 0 ? strerrorname_np(err) : NULL;

	if (s)
		return s;
	snprintf(buf, len, "E%d", err);
	return buf;
}

struct flag_name {
	__u32 bits;
	const char *name;
};

/* Append names of the set bits (longest masks first), then leftovers in hex. */
static const char *flags_str(__u32 flags, const struct flag_name *t, size_t n,
			     const char *prefix, char *buf, size_t len)
{
	size_t used = 0;

	if (!len)
		return buf;
	buf[0] = 0;
	if (prefix) {
		snprintf(buf, len, "%s", prefix);
		used = strlen(buf);
	}
	for (size_t i = 0; i < n; i++) {
		if ((flags & t[i].bits) != t[i].bits)
			continue;
		flags &= ~t[i].bits;
		used += (size_t)snprintf(buf + used, used < len ? len - used : 0, "%s%s",
					 used ? "|" : "", t[i].name);
		if (used >= len)
			return buf;
	}
	if (flags)
		snprintf(buf + used, used < len ? len - used : 0, "%s0x%x", used ? "|" : "", flags);
	return buf;
}

/* Kernel UAPI values (asm-generic/fcntl.h, same on x86_64 and arm64). */
const char *gpuio_open_flags__str(__u32 flags, char *buf, size_t len)
{
	static const struct flag_name t[] = {
		{ 020200000, "O_TMPFILE" },     /* __O_TMPFILE | O_DIRECTORY */
		{ 04010000, "O_SYNC" },         /* __O_SYNC | O_DSYNC */
		{ 0100, "O_CREAT" }, { 0200, "O_EXCL" }, { 0400, "O_NOCTTY" },
		{ 01000, "O_TRUNC" }, { 02000, "O_APPEND" }, { 04000, "O_NONBLOCK" },
		{ 010000, "O_DSYNC" }, { 020000, "O_ASYNC" }, { 040000, "O_DIRECT" },
		{ 0100000, "O_LARGEFILE" }, { 0200000, "O_DIRECTORY" },
		{ 0400000, "O_NOFOLLOW" }, { 01000000, "O_NOATIME" },
		{ 02000000, "O_CLOEXEC" }, { 010000000, "O_PATH" },
	};
	static const char *const acc[4] = { "O_RDONLY", "O_WRONLY", "O_RDWR", "O_ACCMODE" };

	return flags_str(flags & ~3u, t, ARRAY_SIZE(t), acc[flags & 3], buf, len);
}

const char *gpuio_fallocate_mode__str(__u32 mode, char *buf, size_t len)
{
	static const struct flag_name t[] = {
		{ 0x01, "KEEP_SIZE" }, { 0x02, "PUNCH_HOLE" }, { 0x04, "NO_HIDE_STALE" },
		{ 0x08, "COLLAPSE_RANGE" }, { 0x10, "ZERO_RANGE" }, { 0x20, "INSERT_RANGE" },
		{ 0x40, "UNSHARE_RANGE" },
	};

	return flags_str(mode, t, ARRAY_SIZE(t), NULL, buf, len);
}

const char *gpuio_sfr_flags__str(__u32 flags, char *buf, size_t len)
{
	static const struct flag_name t[] = {
		{ 1, "WAIT_BEFORE" }, { 2, "WRITE" }, { 4, "WAIT_AFTER" },
	};

	return flags_str(flags, t, ARRAY_SIZE(t), NULL, buf, len);
}

const char *gpuio_splice_flags__str(__u32 flags, char *buf, size_t len)
{
	static const struct flag_name t[] = {
		{ 1, "MOVE" }, { 2, "NONBLOCK" }, { 4, "MORE" }, { 8, "GIFT" },
	};

	return flags_str(flags, t, ARRAY_SIZE(t), NULL, buf, len);
}

/* x86_64 and asm-generic values (include/linux/socket.h) */
const char *gpuio_msg_flags__str(__u32 flags, char *buf, size_t len)
{
	static const struct flag_name t[] = {
		{ 0x1, "MSG_OOB" }, { 0x2, "MSG_PEEK" }, { 0x4, "MSG_DONTROUTE" },
		{ 0x8, "MSG_CTRUNC" }, { 0x20, "MSG_TRUNC" }, { 0x40, "MSG_DONTWAIT" },
		{ 0x80, "MSG_EOR" }, { 0x100, "MSG_WAITALL" }, { 0x800, "MSG_CONFIRM" },
		{ 0x2000, "MSG_ERRQUEUE" }, { 0x4000, "MSG_NOSIGNAL" }, { 0x8000, "MSG_MORE" },
		{ 0x10000, "MSG_WAITFORONE" }, { 0x20000000, "MSG_FASTOPEN" },
		{ 0x40000000, "MSG_CMSG_CLOEXEC" }, { 0x4000000, "MSG_ZEROCOPY" },
	};

	return flags_str(flags, t, ARRAY_SIZE(t), NULL, buf, len);
}

/* UAPI values: POSIX_FADV_* (x86_64; asm-generic), MADV_WILLNEED */
const char *gpuio_advice__str(unsigned call, unsigned advice, char *buf, size_t len)
{
	static const char *const fadv[] = { "NORMAL", "RANDOM", "SEQUENTIAL", "WILLNEED",
					    "DONTNEED", "NOREUSE" };

	if (call == GPUIO_CALL_MADVISE && advice == 3)
		snprintf(buf, len, "MADV_WILLNEED");
	else if (call == GPUIO_CALL_FADVISE && advice < ARRAY_SIZE(fadv))
		snprintf(buf, len, "POSIX_FADV_%s", fadv[advice]);
	else
		snprintf(buf, len, "%u", advice);
	return buf;
}

const char *gpuio_blk_op__name(unsigned op)
{
	switch (op) {
	case GPUIO_BLK_READ:    return "read";
	case GPUIO_BLK_WRITE:   return "write";
	case GPUIO_BLK_FLUSH:   return "flush";
	case GPUIO_BLK_DISCARD: return "discard";
	default:                return "other";
	}
}

const char *gpuio_rq_flags__str(unsigned flags, char *buf, size_t len)
{
	static const struct flag_name t[] = {
		{ GPUIO_RQ_SYNC, "sync" }, { GPUIO_RQ_META, "meta" }, { GPUIO_RQ_FUA, "fua" },
		{ GPUIO_RQ_PREFLUSH, "preflush" }, { GPUIO_RQ_RAHEAD, "rahead" },
	};

	return flags_str(flags, t, ARRAY_SIZE(t), NULL, buf, len);
}

const char *gpuio_ftype__name(unsigned ftype)
{
	switch (ftype) {
	case 0:             return "anon";
	case GPUIO_FT_FIFO: return "pipe";
	case GPUIO_FT_CHR:  return "chr";
	case GPUIO_FT_DIR:  return "dir";
	case GPUIO_FT_BLK:  return "blk";
	case GPUIO_FT_REG:  return "reg";
	case GPUIO_FT_LNK:  return "lnk";
	case GPUIO_FT_SOCK: return "socket";
	default:            return NULL;
	}
}
