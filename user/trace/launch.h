/* SPDX-License-Identifier: MIT */
/*
 * launch.h — start the traced command held at a gate, so it is in the traced
 * set before it runs a single instruction of its own; it runs as the user
 * who invoked sudo (SUDO_UID/SUDO_GID), not as root.
 */
#ifndef GPUIO_LAUNCH_H
#define GPUIO_LAUNCH_H
#include <sys/types.h>

struct gpuio_launch {
	pid_t pid;
	int gate_fd;    /* unused (the gate is a SIGSTOP) */
	int err_fd;     /* read end: exec errors come back here */
};

/* Fork the child and wait until it is stopped at the gate. 0 or -errno. */
int gpuio_launch__start(char **argv, struct gpuio_launch *l);
/* SIGCONT the child to exec. Returns 0, or -errno if exec failed (printed). */
int gpuio_launch__release(struct gpuio_launch *l, const char *cmd);
/* Kill a child that never got released. */
void gpuio_launch__abort(struct gpuio_launch *l);

/* uid/gid of the invoking user under sudo, or -1 when not under sudo. */
void gpuio_sudo_ids(uid_t *uid, gid_t *gid);

#endif
