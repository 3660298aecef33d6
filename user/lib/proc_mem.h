/* SPDX-License-Identifier: MIT */
/*
 * proc_mem.h — read another process's memory (process_vm_readv: the
 * caller needs the right to ptrace it).
 */
#ifndef GPUIO_LIB_PROC_MEM_H
#define GPUIO_LIB_PROC_MEM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* All len bytes at addr, or -errno (-EFAULT: not all mapped, -ESRCH: gone). */
int proc_mem__read(pid_t pid, uint64_t addr, void *buf, size_t len);
/* A 64-bit word at addr; 0 when it cannot be read. */
uint64_t proc_mem__u64(pid_t pid, uint64_t addr);

#endif /* GPUIO_LIB_PROC_MEM_H */
