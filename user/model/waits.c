// SPDX-License-Identifier: MIT
/*
 * waits.c — a WAIT record's kind. The syscall numbers are x86-64's (the
 * only architecture whose registers the BPF side reads, see
 * bpf/trace/sched.bpf.h); the fd's type decides for calls that take any fd
 * (read on a pipe is a pipe wait, on a socket a socket wait).
 */
#include <stddef.h>
#include "model/waits.h"
#include "lib/units.h"

static const struct { int nr; const char *name; enum model_wait_kind kind; } calls[] = {
	{ 0, "read", MODEL_WAIT_FILE }, { 1, "write", MODEL_WAIT_FILE },
	{ 2, "open", MODEL_WAIT_FILE }, { 3, "close", MODEL_WAIT_FILE },
	{ 4, "stat", MODEL_WAIT_FILE }, { 5, "fstat", MODEL_WAIT_FILE },
	{ 6, "lstat", MODEL_WAIT_FILE }, { 7, "poll", MODEL_WAIT_POLL },
	{ 16, "ioctl", MODEL_WAIT_OTHER }, { 17, "pread64", MODEL_WAIT_FILE },
	{ 18, "pwrite64", MODEL_WAIT_FILE }, { 19, "readv", MODEL_WAIT_FILE },
	{ 20, "writev", MODEL_WAIT_FILE }, { 23, "select", MODEL_WAIT_POLL },
	{ 26, "msync", MODEL_WAIT_FILE }, { 34, "pause", MODEL_WAIT_OTHER },
	{ 35, "nanosleep", MODEL_WAIT_TIMER }, { 40, "sendfile", MODEL_WAIT_FILE },
	{ 42, "connect", MODEL_WAIT_SOCKET }, { 43, "accept", MODEL_WAIT_SOCKET },
	{ 44, "sendto", MODEL_WAIT_SOCKET }, { 45, "recvfrom", MODEL_WAIT_SOCKET },
	{ 46, "sendmsg", MODEL_WAIT_SOCKET }, { 47, "recvmsg", MODEL_WAIT_SOCKET },
	{ 61, "wait4", MODEL_WAIT_CHILD }, { 72, "fcntl", MODEL_WAIT_FILE },
	{ 73, "flock", MODEL_WAIT_FILE }, { 74, "fsync", MODEL_WAIT_FILE },
	{ 75, "fdatasync", MODEL_WAIT_FILE }, { 77, "ftruncate", MODEL_WAIT_FILE },
	{ 202, "futex", MODEL_WAIT_FUTEX }, { 217, "getdents64", MODEL_WAIT_FILE },
	{ 230, "clock_nanosleep", MODEL_WAIT_TIMER }, { 232, "epoll_wait", MODEL_WAIT_POLL },
	{ 247, "waitid", MODEL_WAIT_CHILD }, { 257, "openat", MODEL_WAIT_FILE },
	{ 262, "newfstatat", MODEL_WAIT_FILE }, { 270, "pselect6", MODEL_WAIT_POLL },
	{ 271, "ppoll", MODEL_WAIT_POLL }, { 275, "splice", MODEL_WAIT_FILE },
	{ 277, "sync_file_range", MODEL_WAIT_FILE }, { 281, "epoll_pwait", MODEL_WAIT_POLL },
	{ 285, "fallocate", MODEL_WAIT_FILE }, { 288, "accept4", MODEL_WAIT_SOCKET },
	{ 295, "preadv", MODEL_WAIT_FILE }, { 296, "pwritev", MODEL_WAIT_FILE },
	{ 299, "recvmmsg", MODEL_WAIT_SOCKET }, { 307, "sendmmsg", MODEL_WAIT_SOCKET },
	{ 326, "copy_file_range", MODEL_WAIT_FILE }, { 327, "preadv2", MODEL_WAIT_FILE },
	{ 328, "pwritev2", MODEL_WAIT_FILE }, { 332, "statx", MODEL_WAIT_FILE },
	{ 426, "io_uring_enter", MODEL_WAIT_FILE },
	{ 208, "io_getevents", MODEL_WAIT_FILE }, { 209, "io_submit", MODEL_WAIT_FILE },
	{ 333, "io_pgetevents", MODEL_WAIT_FILE }, { 206, "io_setup", MODEL_WAIT_OTHER },
	{ 207, "io_destroy", MODEL_WAIT_FILE }, { 210, "io_cancel", MODEL_WAIT_FILE },
	{ 8, "lseek", MODEL_WAIT_FILE }, { 9, "mmap", MODEL_WAIT_OTHER },
	{ 10, "mprotect", MODEL_WAIT_OTHER }, { 11, "munmap", MODEL_WAIT_OTHER },
	{ 76, "truncate", MODEL_WAIT_FILE }, { 82, "rename", MODEL_WAIT_FILE },
	{ 83, "mkdir", MODEL_WAIT_FILE }, { 84, "rmdir", MODEL_WAIT_FILE },
	{ 86, "link", MODEL_WAIT_FILE }, { 87, "unlink", MODEL_WAIT_FILE },
	{ 89, "readlink", MODEL_WAIT_FILE }, { 258, "mkdirat", MODEL_WAIT_FILE },
	{ 263, "unlinkat", MODEL_WAIT_FILE }, { 264, "renameat", MODEL_WAIT_FILE },
	{ 316, "renameat2", MODEL_WAIT_FILE }, { 441, "epoll_pwait2", MODEL_WAIT_POLL },
	{ 449, "futex_waitv", MODEL_WAIT_FUTEX },
};

static int call_index(int nr)
{
	for (size_t i = 0; i < ARRAY_SIZE(calls); i++)
		if (calls[i].nr == nr)
			return (int)i;
	return -1;
}

enum model_wait_kind model_wait__kind(const struct gpuio_wait_event *e)
{
	int i;

	if (e->nr == GPUIO_WAIT_NR_NONE)
		return MODEL_WAIT_FAULT;
	i = call_index(e->nr);
	if (i < 0)
		return MODEL_WAIT_OTHER;
	/* a call that takes any fd: the fd says what it waits on */
	if (calls[i].kind == MODEL_WAIT_FILE || calls[i].nr == 16) {
		switch (e->ftype) {
		case GPUIO_FT_FIFO: return MODEL_WAIT_PIPE;
		case GPUIO_FT_SOCK: return MODEL_WAIT_SOCKET;
		case GPUIO_FT_REG: case GPUIO_FT_BLK: case GPUIO_FT_DIR: return MODEL_WAIT_FILE;
		default: return calls[i].nr == 16 ? MODEL_WAIT_OTHER : calls[i].kind;
		}
	}
	return calls[i].kind;
}

const char *model_wait__kind_name(unsigned kind)
{
	static const char *const names[MODEL_WAIT_N] = {
		[MODEL_WAIT_OTHER] = "other", [MODEL_WAIT_FILE] = "file_io",
		[MODEL_WAIT_FAULT] = "page_fault", [MODEL_WAIT_SOCKET] = "socket",
		[MODEL_WAIT_PIPE] = "pipe", [MODEL_WAIT_FUTEX] = "futex",
		[MODEL_WAIT_POLL] = "poll", [MODEL_WAIT_CHILD] = "child",
		[MODEL_WAIT_TIMER] = "sleep",
	};

	return kind < MODEL_WAIT_N ? names[kind] : "other";
}

const char *model_wait__syscall_name(int nr)
{
	int i = call_index(nr);

	return i < 0 ? NULL : calls[i].name;
}

const char *model_wait__ftype_name(unsigned ftype)
{
	switch (ftype) {
	case GPUIO_FT_FIFO: return "pipe";
	case GPUIO_FT_CHR: return "char device";
	case GPUIO_FT_DIR: return "directory";
	case GPUIO_FT_BLK: return "block device";
	case GPUIO_FT_REG: return "file";
	case GPUIO_FT_LNK: return "symlink";
	case GPUIO_FT_SOCK: return "socket";
	default: return NULL;
	}
}

bool model_wait__timed(int nr)
{
	return nr == 35 || nr == 230;   /* nanosleep clock_nanosleep */
}

bool model_wait__sends(int nr)
{
	switch (nr) {
	case 1: case 18: case 20: case 44: case 46: case 296: case 307: case 328:
		return true;    /* write pwrite64 writev sendto sendmsg pwritev sendmmsg pwritev2 */
	}
	return false;
}
