/* SPDX-License-Identifier: MIT */
/*
 * native_frames.h — the native frames of the kernel's stacks
 * (bpf/trace/pystack.bpf.h, gpuio_abi.h), checked and named while their
 * process is alive: each address must lie in a mapped file, and each one
 * past the innermost must follow a call instruction there (a frame pointer
 * chain through code built without frame pointers runs into junk); the
 * frames from the first that fails are left out of the stack record
 * (GPUIO_PYS_NATIVE_CUT), never shown wrong. Each address is named once per
 * process and image by a PY_CODE record (GPUIO_PYC_NATIVE): its file and
 * the function symbol there (or +offset in the file when it has none).
 */
#ifndef GPUIO_TRACE_NATIVE_FRAMES_H
#define GPUIO_TRACE_NATIVE_FRAMES_H

#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>
#include "bpf/gpuio_abi.h"

struct native_frames;

/* emit(ctx, rec, len) stores a record in the capture. NULL: no memory. */
struct native_frames *native_frames__new(void (*emit)(void *ctx, const void *rec, size_t len),
					 void *ctx);
/*
 * A PY_STACK record of size bytes: copied into out (room: out_size bytes),
 * its native frames checked and named; returns the copy's size (0: the
 * record did not fit, nothing done).
 */
size_t native_frames__take(struct native_frames *n, const struct gpuio_py_stack *r, size_t size,
			   struct gpuio_py_stack *out, size_t out_size);
/* pid replaced its image: its addresses mean other code from now on */
void native_frames__exec(struct native_frames *n, pid_t pid);
/* Addresses checked, named, and left out (theirs and the frames after them) */
void native_frames__counts(const struct native_frames *n, unsigned long *named,
			   unsigned long *cut);
void native_frames__free(struct native_frames *n);

#endif /* GPUIO_TRACE_NATIVE_FRAMES_H */
