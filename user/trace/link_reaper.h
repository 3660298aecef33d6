/* SPDX-License-Identifier: GPL-2.0 OR MIT */
#ifndef GPUIO_LINK_REAPER_H
#define GPUIO_LINK_REAPER_H
#include <stdbool.h>

struct bpf_link;

/*
 * Hands links over to a child process that closes them, so that the
 * caller's own bpf_link__destroy() only drops references. Returns whether a
 * child took them (false: fork failed; destroy them the slow way).
 */
bool link_reaper__take(struct bpf_link *const *links, int n);
/*
 * The same, started now, for the slow links alone (tracepoints' perf-event
 * links; the others close at once), when there are at least min_slow: the
 * child holds them and closes them once the returned fd (O_CLOEXEC) is
 * closed, by the caller or by its end, however it ends. -1: no child.
 * flag_fd >= 0: an mmapable BPF map whose byte at flag_off the child sets
 * to 1 before the first close (the programs' "tracing over").
 */
int link_reaper__arm(struct bpf_link *const *links, int n, int min_slow, int flag_fd,
		     unsigned long flag_off);

/* The child's program: gpuio run as LINK_REAPER_ARGV0 closes what it holds. */
#define LINK_REAPER_ARGV0 "gpuio-detach"
/* arg: argv[1] ("wN": wait for EOF on fd N first), or NULL */
int link_reaper__main(const char *arg);

/*
 * A lock gpuio holds while it attaches, and a reaper around each close: a
 * close waits for an RCU grace period inside the kernel's bpf_event_mutex,
 * which every attach also takes. Returns an fd for _unlock (-1: no lock).
 */
int link_reaper__lock(void);
void link_reaper__unlock(int fd);

#endif
