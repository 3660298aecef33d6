/* SPDX-License-Identifier: MIT */
/*
 * py_procs.h — which traced processes run CPython, for the kernel's stack
 * walk (bpf/trace/pystack.bpf.h): each one's interpreter found and checked
 * (python/py_find.h) at attach and after each exec — asked again while it
 * starts, until its interpreter has a frame to check — its layout put in
 * the BPF map py_procs as soon as it is known, provisionally (a fork
 * inherits it in the kernel), and one PY_PROC record per process and image
 * saying whether its check passed — or why no frames.
 */
#ifndef GPUIO_PY_PROCS_H
#define GPUIO_PY_PROCS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct py_procs;

/* emit(ctx, rec, len) stores a record in the capture. NULL: no memory. */
struct py_procs *py_procs__new(int map_fd, void (*emit)(void *ctx, const void *rec, size_t len),
			       void *ctx);
/* Find pid's interpreter: now, and again while it is starting (now: MONOTONIC ns). */
void py_procs__want(struct py_procs *p, pid_t pid, uint64_t now);
/* A fork: the child has its parent's interpreter (the kernel copied it), or is asked. */
void py_procs__fork(struct py_procs *p, pid_t parent, pid_t child, uint64_t now);
/* The process is gone (or replaced its image): stop asking. */
void py_procs__forget(struct py_procs *p, pid_t pid);
/* Ask again those still starting. */
void py_procs__tick(struct py_procs *p, uint64_t now);
/* How long the collector may wait before the next look (ms, at most ms) */
int py_procs__wait_ms(const struct py_procs *p, uint64_t now, int ms);
/* Interpreters found so far, and processes that got no frames for a reason */
void py_procs__counts(const struct py_procs *p, unsigned *found, unsigned *refused);
void py_procs__free(struct py_procs *p);

#endif /* GPUIO_PY_PROCS_H */
