/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * cuda_spec.h — how the generic CUDA API uprobe (bpf/trace/cuda.bpf.h) reads one
 * function's arguments. Userspace (user/gpu/cuda_probes.c) fills one slot of the
 * cuda_specs array per distinct symbol name before attaching; the attach
 * cookie is the slot index. Shared by BPF and userspace; not part of the
 * capture ABI (records carry the decoded values, see gpuio_cuda_api).
 */
#ifndef GPUIO_CUDA_SPEC_H
#define GPUIO_CUDA_SPEC_H

#define CUDA_SPEC_MAX   512     /* distinct probed symbol names */
#define CUDA_DEPTH      4       /* per-thread nesting (runtime -> driver -> ...) */
#define CUDA_ARG_NONE   0xff
#define CUDA_OFF_NONE   (-1)

/*
 * A value read at entry: argument arg (0-based, SysV x86-64: 0..5 in
 * registers, 6.. on the stack); when off >= 0, the size-byte integer at
 * *(arg + off) instead (a field of a struct passed by pointer).
 */
struct cuda_operand {
	__u8  arg;                 /* CUDA_ARG_NONE: absent */
	__u8  size;                /* 4 or 8 */
	__s16 off;
};

/* cuda_spec.mk_how: where the memcpy kind comes from */
enum cuda_mk_how {
	CUDA_MK_FIXED = 0,         /* mk_fixed */
	CUDA_MK_RT_ENUM = 1,       /* cudaMemcpyKind operand mk */
	CUDA_MK_DRV_TYPES = 2,     /* CUmemorytype operands mk (src), mk2 (dst) */
};

struct cuda_spec {
	struct cuda_operand bytes[3]; /* bytes = product of the present ones ... */
	struct cuda_operand stream;
	struct cuda_operand func;
	struct cuda_operand mk;
	struct cuda_operand mk2;
	__u16 bytes_mult;             /* ... times this (memset element size), 0 = 1 */
	__u8  source;                 /* enum gpuio_api_source */
	__u8  kind;                   /* enum gpuio_api_kind */
	__u8  mk_how;                 /* enum cuda_mk_how */
	__u8  mk_fixed;               /* enum gpuio_memcpy_kind */
	__u8  pad[2];
	char  name[48];               /* symbol name, NUL terminated */
};

#endif
