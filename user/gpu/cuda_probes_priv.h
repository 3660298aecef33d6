/* SPDX-License-Identifier: MIT */
/*
 * cuda_probes_priv.h — what the CUDA uprobe files share: the probe set's
 * state, the tables of CUDA functions (cuda_funcs.c) and the ELF symbol
 * tables that name launch stubs (cuda_stub_syms.c).
 */
#ifndef GPUIO_CUDA_PROBES_PRIV_H
#define GPUIO_CUDA_PROBES_PRIV_H

#include <pthread.h>
#include <bpf/libbpf.h>
#include "gpu/cuda_probes.h"
#include "trace/cuda_spec.h"


/* ---- what each function's arguments mean ------------------------------ */

/* An operand as written in the tables: arg is 1-based (0 = absent), off 0 = the argument itself. */
struct cuda_opnd {
	__u8 arg1;
	__u8 size;
	__u16 off;
};

struct cuda_fn {
	const char *name;          /* exported name; _ptds / _ptsz variants are probed too */
	__u8 kind;                 /* GPUIO_API_* */
	__u8 mk_how;               /* CUDA_MK_* */
	__u8 mk_fixed;
	__u16 mult;
	struct cuda_opnd b[3], stream, func, mk, mk2;
};


void cuda_elf_init(void);

/* Table entry that the exported name is (with a _ptds/_ptsz suffix or not), or NULL. */
const struct cuda_fn *cuda_lookup_fn(const struct cuda_fn *tab, size_t n, const char *name);

/* ---- launch stub names ------------------------------------------------ */

struct cuda_sym {
	__u64 addr, size;
	__u32 name;                /* offset in names */
};

#endif /* GPUIO_CUDA_PROBES_PRIV_H */
