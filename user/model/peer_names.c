// SPDX-License-Identifier: MIT
/* peer_names.c — names of sockets' peers (peer_names.h). */
#include <arpa/inet.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "model/peer_names.h"

#define AF_UNIX_  1
#define AF_INET_  2
#define AF_INET6_ 10

/* addr:port, [addr6]:port */
static void inet_name(unsigned family, const __u8 *addr, unsigned port, char *out)
{
	char a[INET6_ADDRSTRLEN];

	if (!inet_ntop(family == AF_INET_ ? AF_INET : AF_INET6, addr, a, sizeof(a)))
		snprintf(a, sizeof(a), "?");
	if (family == AF_INET_)
		snprintf(out, PEER_NAME_MAX, "%s:%u", a, port);
	else
		snprintf(out, PEER_NAME_MAX, "[%s]:%u", a, port);
}

/* "unix:" + the name; an abstract name's NULs as '@' (/proc/net/unix) */
static void unix_name(const char *path, size_t len, char *out)
{
	size_t n = (size_t)snprintf(out, PEER_NAME_MAX, "unix:");

	/* a bound path is NUL-terminated inside sun_path: stop there */
	if (len && path[0])
		len = strnlen(path, len);
	for (size_t i = 0; i < len && n < PEER_NAME_MAX - 1; i++)
		out[n++] = path[i] ? path[i] : '@';
	out[n] = 0;
}

void peer_names__format(const struct gpuio_sock_peer *r, char peer[PEER_NAME_MAX],
			char local[PEER_NAME_MAX])
{
	bool connected = r->flags & GPUIO_SP_PEER;
	size_t lp = r->lpath_len < GPUIO_SOCK_PATH_MAX ? r->lpath_len : GPUIO_SOCK_PATH_MAX;
	size_t rp = r->rpath_len < GPUIO_SOCK_PATH_MAX ? r->rpath_len : GPUIO_SOCK_PATH_MAX;

	peer[0] = local[0] = 0;
	switch (r->family) {
	case AF_INET_:
	case AF_INET6_:
		inet_name(r->family, r->laddr, r->lport, local);
		if (connected)
			inet_name(r->family, r->raddr, r->rport, peer);
		else
			snprintf(peer, PEER_NAME_MAX, "unconnected:%s", local);
		return;
	case AF_UNIX_:
		if (lp)
			unix_name(r->lpath, lp, local);
		else
			snprintf(local, PEER_NAME_MAX, "unix:unnamed");
		if (rp)
			unix_name(r->rpath, rp, peer);
		else if (lp)
			snprintf(peer, PEER_NAME_MAX, "%s", local);
		else
			snprintf(peer, PEER_NAME_MAX, connected ? "unix:socketpair" : "unix:unnamed");
		return;
	default:
		snprintf(peer, PEER_NAME_MAX, "family:%u", r->family);
		return;
	}
}

const char *peer_names__proto(const struct gpuio_sock_peer *r)
{
	if (r->family == AF_UNIX_)
		return r->type == 2 ? "unix_dgram" : r->type == 5 ? "unix_seqpacket" : "unix";
	if (r->family == AF_INET_ || r->family == AF_INET6_) {
		if (r->protocol == 6)
			return "tcp";
		if (r->protocol == 17)
			return "udp";
		if (r->type == 3)
			return "raw";
	}
	return "sock";
}
