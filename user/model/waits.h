/* SPDX-License-Identifier: MIT */
/*
 * waits.h — what a sleeping thread waits in (a WAIT record), as a kind the
 * outputs name: its own file I/O, a page fault, a socket, a pipe, a futex
 * (a lock, a condition, a queue), poll/epoll, a child, a timed sleep.
 * Shared by the report and the timeline.
 */
#ifndef GPUIO_MODEL_WAITS_H
#define GPUIO_MODEL_WAITS_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/types.h>
#include "bpf/gpuio_abi.h"

enum model_wait_kind {
	MODEL_WAIT_OTHER,       /* none of the below, or not known */
	MODEL_WAIT_FILE,        /* a call on a file, directory or block device */
	MODEL_WAIT_FAULT,       /* outside any syscall: a page fault (or other kernel work) */
	MODEL_WAIT_SOCKET,
	MODEL_WAIT_PIPE,
	MODEL_WAIT_FUTEX,
	MODEL_WAIT_POLL,        /* poll, select, epoll (on which fd: the record's) */
	MODEL_WAIT_CHILD,       /* wait4, waitid */
	MODEL_WAIT_TIMER,       /* nanosleep, clock_nanosleep */
	MODEL_WAIT_N
};

/* The kind of e: from its syscall, and the type of the fd it waits on. */
enum model_wait_kind model_wait__kind(const struct gpuio_wait_event *e);
/* "file_io", "page_fault", "socket", "pipe", "futex", "poll", "child", "sleep", "other". */
const char *model_wait__kind_name(unsigned kind);
/* The syscall's name ("read", "futex", "epoll_wait"), NULL when not one gpuio names. */
const char *model_wait__syscall_name(int nr);
/* Does syscall nr send (write, sendmsg...)? A thread asleep in one waits for
 * room, not for data: a wake-up there hands it nothing. */
bool model_wait__sends(int nr);
/* Is syscall nr a sleep for a time (nanosleep)? Its wake-up is a timer's,
 * made in the interrupt of whatever task was on that CPU: not a hand-over. */
bool model_wait__timed(int nr);
/* The fd type's name ("file", "pipe", "socket", "char device", ...), NULL for none. */
const char *model_wait__ftype_name(unsigned ftype);

#endif /* GPUIO_MODEL_WAITS_H */
