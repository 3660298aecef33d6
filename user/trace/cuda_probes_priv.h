/* SPDX-License-Identifier: MIT */
/*
 * cuda_probes_priv.h — what the CUDA uprobe files share: the probe set's
 * state, the tables of CUDA functions (cuda/cuda_lib.c) and the ELF symbol
 * tables that name launch stubs (cuda_stub_syms.c).
 */
#ifndef GPUIO_CUDA_PROBES_PRIV_H
#define GPUIO_CUDA_PROBES_PRIV_H

#include <pthread.h>
#include <bpf/libbpf.h>
#include "trace/cuda_probes.h"
#include "bpf/trace/cuda_spec.h"


/* ---- launch stub names ------------------------------------------------ */

struct cuda_sym {
	__u64 addr, size;
	__u32 name;                /* offset in names */
};

#endif /* GPUIO_CUDA_PROBES_PRIV_H */
