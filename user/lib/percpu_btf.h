/* SPDX-License-Identifier: MIT */
/*
 * percpu_btf.h — where two per-CPU variables lie in the kernel's per-CPU
 * area, read from its BTF: the run queue and the preempt count. A BPF
 * program finds its CPU's area from the current task's run queue and reads
 * the preempt count there, to tell an interrupt's wake-up from a task's
 * (bpf/lib/irq_ctx.bpf.h), on kernels whose kallsyms hold no data symbols.
 */
#ifndef GPUIO_PERCPU_BTF_H
#define GPUIO_PERCPU_BTF_H

#include <stdint.h>

struct percpu_btf_offs {
	uint64_t rq;            /* runqueues */
	uint64_t preempt;       /* __preempt_count, or pcpu_hot.preempt_count */
};

struct btf;

/* 0 and both offsets, or -ENOENT (btf, the kernel's, is NULL or does not say) */
int percpu_btf__offsets(const struct btf *btf, struct percpu_btf_offs *o);

#endif /* GPUIO_PERCPU_BTF_H */
