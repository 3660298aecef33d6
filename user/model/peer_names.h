/* SPDX-License-Identifier: MIT */
/*
 * peer_names.h — the one rule that names a socket's peer (and its own end)
 * from its SOCK_PEER record, as the exports, the report and `gpuio info`
 * show it:
 *
 *   IPv4             10.0.0.5:9000
 *   IPv6             [::1]:80, [::ffff:10.0.0.5]:9000 (as the kernel has it)
 *   unix             unix:/run/app.sock: the peer's bound name, else this
 *                    end's (the server side of a connection to a named
 *                    socket); abstract names as /proc/net/unix writes them
 *                    (unix:@name); unix:socketpair when neither end has a
 *                    name; unix:unnamed when not connected
 *   not connected    unconnected:0.0.0.0:5353 (a datagram socket that names
 *                    each datagram's address: its local end)
 *   other families   family:16
 */
#ifndef GPUIO_MODEL_PEER_NAMES_H
#define GPUIO_MODEL_PEER_NAMES_H

#include <stddef.h>
#include <linux/types.h>
#include "bpf/gpuio_abi.h"

#define PEER_NAME_MAX 128       /* the longest: "unix:" + 108 bytes + NUL */

/* The peer's name and this end's ("127.0.0.1:43122", "unix:/path", "" unknown). */
void peer_names__format(const struct gpuio_sock_peer *r, char peer[PEER_NAME_MAX],
			char local[PEER_NAME_MAX]);
/* "tcp", "udp", "unix", "unix_dgram", "unix_seqpacket", "raw", "sock" */
const char *peer_names__proto(const struct gpuio_sock_peer *r);

#endif /* GPUIO_MODEL_PEER_NAMES_H */
