/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * sock_accept.bpf.h — the end of accept/accept4. The call began on the
 * listening socket (sock_decode); its record names the socket it returned,
 * with that socket's peer, so the report counts the connection with its
 * client. A non-blocking accept finding no connection (EAGAIN) is not a
 * connection: no record.
 */
#ifndef GPUIO_SOCK_ACCEPT_BPF_H
#define GPUIO_SOCK_ACCEPT_BPF_H
#include "trace/vfs.bpf.h"

#define EAGAIN_ 11

/* Global: checked once, beside vfs_end, not inside every syscall exit. */
__noinline int sock_accept_end(struct call_state *cs, long ret, __u64 now)
{
	__u64 id_tgid = bpf_get_current_pid_tgid();
	struct file_id id = {};
	struct file *f;

	if (!cs || ret == -EAGAIN_)
		return 0;
	cs->fd2 = cs->fd;               /* the listening socket */
	if (ret >= 0) {
		f = fd_to_file((int)ret);
		if (!file_ident(f, &id))
			return 0;
		cs->fd = (int)ret;
		cs->file = (__u64)f;
		cs->ino = id.ino;
		cs->dev = id.dev;
		cs->ftype = id.ftype;
		if (id.ftype == GPUIO_FT_SOCK)
			emit_sock_peer(f, id.ino, id.dev, id_tgid, now);
	}
	cs->offset = -1;
	cs->offset2 = -1;
	vfs_emit_direct(cs, GPUIO_CALL_ACCEPT, ret, id_tgid, now);
	return 0;
}

#endif
