// SPDX-License-Identifier: MIT
/*
 * loader_flush.c — what the kernel still holds when a trace ends: the
 * page faults still open and the VFS records threads have batched, sent
 * by running BPF task iterators over every task (loader.h).
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "gpuio.skel.h"
#include "lib/log.h"
#include "trace/loader.h"

/* Run an end-of-trace iterator once: each read runs it over more tasks; it writes nothing. */
static void run_iter(struct bpf_link *it, const char *what)
{
	char buf[64];
	ssize_t n;
	int fd;

	fd = bpf_iter_create(bpf_link__fd(it));
	if (fd < 0) {
		pr_warn("%s at the end are not recorded: %s", what, strerror(errno));
		return;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		;
	if (n < 0)
		pr_warn("%s at the end: iterator failed: %s", what, strerror(errno));
	close(fd);
}

void gpuio_loader__flush_faults(struct gpuio_loader *l)
{
	if (l && l->fault_iter)
		run_iter(l->fault_iter, "page faults still open");
}

void gpuio_loader__send_batches(struct gpuio_loader *l)
{
	/* a batch a thread holds at this moment stays for its own next flush */
	if (l && l->batch_iter)
		run_iter(l->batch_iter, "VFS records batched");
}

void gpuio_loader__flush_batches(struct gpuio_loader *l)
{
	if (!l || !l->batch_iter)
		return;
	/* from now on records go straight to the ring; then the waiting ones */
	__atomic_store_n(&l->skel->bss->batch_closing, true, __ATOMIC_SEQ_CST);
	run_iter(l->batch_iter, "VFS records still batched");
	/* a batch a thread held during that pass (inside a call's end) is free
	 * a moment later; one still held now is counted as lost */
	usleep(10000);
	__atomic_store_n(&l->skel->bss->batch_final, true, __ATOMIC_SEQ_CST);
	run_iter(l->batch_iter, "VFS records still batched");
}
