// SPDX-License-Identifier: MIT
/*
 * proc_mem.c — another process's memory (proc_mem.h).
 */
#include <errno.h>
#include <sys/uio.h>
#include "lib/proc_mem.h"

int proc_mem__read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { .iov_base = buf, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len };
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);

	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

uint64_t proc_mem__u64(pid_t pid, uint64_t addr)
{
	uint64_t v = 0;

	return proc_mem__read(pid, addr, &v, sizeof(v)) ? 0 : v;
}
