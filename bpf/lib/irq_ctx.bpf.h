/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * irq_ctx.bpf.h — is this CPU serving a hard interrupt (or an NMI)? Then
 * the running task did not cause what the program sees: a timer ending a
 * timed futex wait or a nanosleep (hrtimers fire in hard interrupts) "wakes"
 * the sleeper on whichever task the interrupt landed on (a busy DataLoader
 * worker, say). A softirq is not counted: one served in a task's context as
 * it enables bottom halves again is mostly that task's own work (TCP over
 * loopback delivers the sender's data to the receiver, and wakes it, so),
 * and the count cannot tell it from one served at an interrupt's exit.
 *
 * The kernel's per-CPU preempt count says. Its typed ksym needs kallsyms to
 * hold data symbols, which kernels without CONFIG_KALLSYMS_ALL (this one)
 * lack; so the loader reads from BTF where the run queue and the preempt
 * count lie in the per-CPU area (user/lib/percpu_btf.c), and the program
 * finds its CPU's area from the current task's run queue (checked against
 * its CPU number). Unknown offsets, or no cfs_rq->rq (no group scheduling):
 * the answer is false, as before.
 */
#ifndef GPUIO_IRQ_CTX_BPF_H
#define GPUIO_IRQ_CTX_BPF_H

const volatile __u64 irq_rq_off = 0;      /* runqueues in the per-CPU area; 0: unknown */
const volatile __u64 irq_pc_off = 0;      /* the preempt count */

#define GPUIO_NMI_MASK       0x00f00000
#define GPUIO_HARDIRQ_MASK   0x000f0000

static __always_inline bool gpuio_in_irq(void)
{
	struct task_struct *cur = (struct task_struct *)bpf_get_current_task();
	struct rq *rq;
	int pc = 0;

	if (!irq_rq_off || !irq_pc_off || !bpf_core_field_exists(struct cfs_rq, rq))
		return false;
	rq = BPF_CORE_READ(cur, se.cfs_rq, rq);
	if (!rq || BPF_CORE_READ(rq, cpu) != (int)bpf_get_smp_processor_id())
		return false;
	if (bpf_probe_read_kernel(&pc, sizeof(pc), (void *)((__u64)rq - irq_rq_off + irq_pc_off)))
		return false;
	return pc & (GPUIO_NMI_MASK | GPUIO_HARDIRQ_MASK);
}

#endif /* GPUIO_IRQ_CTX_BPF_H */
