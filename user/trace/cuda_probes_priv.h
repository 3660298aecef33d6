/* SPDX-License-Identifier: MIT */
/*
 * cuda_probes_priv.h — what the CUDA uprobe files share: the probe set's
 * state and the tables of CUDA functions (cuda/cuda_lib.c).
 */
#ifndef GPUIO_CUDA_PROBES_PRIV_H
#define GPUIO_CUDA_PROBES_PRIV_H

#include <pthread.h>
#include <bpf/libbpf.h>
#include "trace/cuda_probes.h"
#include "bpf/trace/cuda_spec.h"


#endif /* GPUIO_CUDA_PROBES_PRIV_H */
