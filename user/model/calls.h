/* SPDX-License-Identifier: MIT */
/*
 * calls.h — names for the numbers in capture records: VFS calls, errnos,
 * open/fallocate/sync_file_range/splice flags, block ops and request flags.
 * Flag decoders use the kernel's own values (the records carry what the
 * syscall saw), not glibc's (e.g. glibc's O_LARGEFILE is 0 on x86_64).
 */
#ifndef GPUIO_CALLS_H
#define GPUIO_CALLS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "bpf/gpuio_abi.h"

/* "pread64", ...; NULL for a number outside enum gpuio_call */
const char *gpuio_call__name(unsigned call);
/* enum gpuio_call for a name, GPUIO_CALL_NONE when unknown */
unsigned gpuio_call__from_name(const char *name);

bool gpuio_call__is_read(unsigned call);    /* moves bytes from a file (page faults too) */
bool gpuio_call__is_write(unsigned call);   /* moves bytes to a file */
bool gpuio_call__is_open(unsigned call);    /* ret is a new fd */
bool gpuio_call__moves_bytes(unsigned call);/* ret >= 0 is a byte count */
bool gpuio_call__two_files(unsigned call);  /* *2 fields name a second file */
bool gpuio_call__is_async(unsigned call);   /* request, not a call of its thread */
bool gpuio_call__is_aio_syscall(unsigned call); /* io_submit, io_getevents: no file op */
bool gpuio_call__is_hint(unsigned call);    /* fadvise64, readahead, madvise */
bool gpuio_call__hint_prefetches(unsigned call, unsigned advice); /* WILLNEED, readahead */
bool gpuio_call__is_sock(unsigned call);    /* recvfrom ... sendmmsg, connect, accept */
bool gpuio_call__is_connection(unsigned call); /* connect, accept: no bytes */

/* Which way a call moves a socket's bytes: read/readv and the recv calls
 * receive, write/writev and the send calls send (ftype: the record's). */
enum gpuio_sock_dir { GPUIO_SOCK_NONE, GPUIO_SOCK_RECV, GPUIO_SOCK_SEND };
enum gpuio_sock_dir gpuio_call__sock_dir(unsigned call, unsigned ftype);

/* "ENOENT" for 2 (a positive errno); "E<n>" in buf when glibc has no name */
const char *gpuio_errno__name(int err, char *buf, size_t len);

/*
 * Flag decoders: write "O_WRONLY|O_CREAT|0x40000000" style text (unknown bits
 * as one hex number) into buf and return buf. Never longer than len - 1.
 */
const char *gpuio_open_flags__str(__u32 flags, char *buf, size_t len);
const char *gpuio_fallocate_mode__str(__u32 mode, char *buf, size_t len);
const char *gpuio_sfr_flags__str(__u32 flags, char *buf, size_t len);
const char *gpuio_splice_flags__str(__u32 flags, char *buf, size_t len);
const char *gpuio_advice__str(unsigned call, unsigned advice, char *buf, size_t len);
const char *gpuio_msg_flags__str(__u32 flags, char *buf, size_t len);   /* MSG_* */

/* "read", "write", "flush", "discard", "other" */
const char *gpuio_blk_op__name(unsigned op);
/* "sync|meta|fua|preflush|rahead" subset, "" when none */
const char *gpuio_rq_flags__str(unsigned flags, char *buf, size_t len);

/* "pipe", "socket", "blk", "chr", "dir", "lnk", "reg", "anon" (0), NULL else */
const char *gpuio_ftype__name(unsigned ftype);

#endif /* GPUIO_CALLS_H */
