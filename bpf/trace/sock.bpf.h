/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * sock.bpf.h — socket I/O, a part of the VFS layer (included by vfs.bpf.h,
 * after its call state): which sockets are traced by default (AF_INET,
 * AF_INET6, AF_UNIX; pipes and the rest stay behind --all-fds), the
 * arguments of recvfrom/sendto/recvmsg/sendmsg/recvmmsg/sendmmsg (the same
 * at the syscall and at __sys_*), the bytes of the *mmsg calls, and each
 * socket's addresses, sent once (struct gpuio_sock_peer).
 *
 * The peer is read from the kernel's socket at the first call a record
 * shows, so a socket opened before an attach is named like any other, and
 * the record always precedes the socket's first call in the capture.
 */
#ifndef GPUIO_SOCK_BPF_H
#define GPUIO_SOCK_BPF_H

/* --no-sockets: only --all-fds traces sockets then (rodata) */
const volatile bool trace_sockets = true;

#define AF_UNIX_  1
#define AF_INET_  2
#define AF_INET6_ 10

/* socks_sent values */
enum { SOCK_SENT_PEER = 1, SOCK_SENT_NO_PEER = 2 };

/* Sockets already named, as paths_sent (an evicted one is named again). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct path_key);
	__type(value, __u8);
} socks_sent SEC(".maps");

/* The record is 304 bytes: built here, not on the stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gpuio_sock_peer);
} sock_buf SEC(".maps");

static __always_inline struct sock *file_sk(struct file *f)
{
	struct socket *so = BPF_CORE_READ(f, private_data);

	return so ? BPF_CORE_READ(so, sk) : NULL;
}

/* The family of f's socket: plain loads where bpf_rdonly_cast exists (tp_btf). */
static __always_inline __u16 sock_family(struct file *f, const int acc)
{
	struct socket *so;
	struct sock *sk;

	if (acc != ACC_CAST) {
		sk = file_sk(f);
		return sk ? BPF_CORE_READ(sk, __sk_common.skc_family) : 0;
	}
	f = bpf_rdonly_cast(f, bpf_core_type_id_kernel(struct file));
	so = bpf_rdonly_cast(f->private_data, bpf_core_type_id_kernel(struct socket));
	if (!so)
		return 0;
	sk = so->sk;
	return sk ? sk->__sk_common.skc_family : 0;
}

/*
 * A socket fd traced by default: an IP or unix socket. The answer is kept
 * with the thread's last socket (file and inode), so a thread calling on
 * one socket pays the reads once.
 */
static __always_inline bool sock_wanted(struct call_state *cs, struct file *f,
					const struct file_id *id, const int acc)
{
	__u16 fam;

	if (!trace_sockets)
		return false;
	if ((__u64)f == cs->sk_file && id->ino == cs->sk_ino)
		return cs->sk_ok;
	fam = sock_family(f, acc);
	cs->sk_file = (__u64)f;
	cs->sk_ino = id->ino;
	cs->sk_ok = fam == AF_INET_ || fam == AF_INET6_ || fam == AF_UNIX_;
	return cs->sk_ok;
}

/* Regular files and block devices by default, IP and unix sockets unless
 * --no-sockets, everything with --all-fds. */
static __always_inline bool file_wanted(struct call_state *cs, struct file *f,
					const struct file_id *id, const int acc)
{
	if (all_fds || id->ftype == GPUIO_FT_REG || id->ftype == GPUIO_FT_BLK)
		return true;
	return id->ftype == GPUIO_FT_SOCK && sock_wanted(cs, f, id, acc);
}

/* Are the socket calls traced at all (the verifier drops them when not)? */
static __always_inline bool sock_calls_traced(void)
{
	return trace_sockets || all_fds;
}

/* ---- arguments ---- */

/* iovecs of a struct user_msghdr in user memory */
static __always_inline __u64 msghdr_total(__u64 umsg)
{
	struct user_msghdr m;

	if (!umsg || bpf_probe_read_user(&m, sizeof(m), (void *)umsg))
		return 0;
	return iov_total((__u64)m.msg_iov, m.msg_iovlen);
}

#define MMSG_MAX 1024   /* UIO_MAXIOV: the kernel's own bound on vlen */

struct mmsg_ctx { __u64 vec, total; __u32 n; bool lens; };

static long mmsg_step(__u32 i, void *arg)
{
	struct mmsg_ctx *c = arg;
	__u64 at = c->vec + (__u64)i * sizeof(struct mmsghdr);
	unsigned int len = 0;

	if (i >= c->n)
		return 1;
	if (!c->lens) {
		c->total += msghdr_total(at);
		return 0;
	}
	if (bpf_probe_read_user(&len, sizeof(len), (void *)(at + offsetof(struct mmsghdr, msg_len))))
		return 1;
	c->total += len;
	return 0;
}

/* Bytes of the first n messages of an mmsghdr array: their iovecs (lens
 * false) or what the kernel moved (msg_len, written at return). */
static __always_inline __u64 mmsg_total(__u64 vec, __u64 n, bool lens)
{
	struct mmsg_ctx c = { .vec = vec, .n = n < MMSG_MAX ? (__u32)n : MMSG_MAX, .lens = lens };

	if (vec && c.n)
		bpf_loop(MMSG_MAX, mmsg_step, &c, 0);
	return c.total;
}

/*
 * The six socket calls, from their arguments (the syscall's, which
 * __sys_recvfrom and the others share): fd, the buffer or message, the MSG_*
 * flags. False for anything else.
 */
static __always_inline bool sock_decode(__u16 call, const __u64 *a, struct vfs_args *v)
{
	v->call = call;
	v->fd = (int)a[0];
	switch (call) {
	case GPUIO_CALL_RECVFROM:
	case GPUIO_CALL_SENDTO:         /* (fd, buf, len, flags, addr, addrlen) */
		v->requested = a[2];
		v->flags = (__u32)a[3];
		return true;
	case GPUIO_CALL_RECVMSG:
	case GPUIO_CALL_SENDMSG:        /* (fd, msg, flags) */
		v->requested = msghdr_total(a[1]);
		v->flags = (__u32)a[2];
		return true;
	case GPUIO_CALL_RECVMMSG:
	case GPUIO_CALL_SENDMMSG:       /* (fd, mmsg, vlen, flags, ...) */
		v->requested = mmsg_total(a[1], a[2], false);
		v->flags = (__u32)a[3];
		v->mmsg = a[1];
		return true;
	case GPUIO_CALL_CONNECT:        /* (fd, addr, addrlen) */
	case GPUIO_CALL_ACCEPT:         /* (fd, addr, addrlen[, flags]): the listening fd */
		return true;
	}
	return false;
}

static __always_inline bool call_is_mmsg(__u16 call)
{
	return call == GPUIO_CALL_RECVMMSG || call == GPUIO_CALL_SENDMMSG;
}

/* ---- the peer record ---- */

/* sun_path of a unix_address (NULL: unbound) into out; its length */
static __always_inline __u16 unix_path(struct unix_address *ua, char *out, __u16 *flags,
				       __u16 cut)
{
	int len;
	__u64 n;        /* 64 bits: the bound the verifier sees is the one passed */
	void *name;

	if (!ua)
		return 0;
	len = BPF_CORE_READ(ua, len);
	/* len counts sun_family (2 bytes) */
	if (len <= 2)
		return 0;
	n = (__u64)(len - 2);
	if (n > GPUIO_SOCK_PATH_MAX) {
		n = GPUIO_SOCK_PATH_MAX;
		*flags |= cut;
	}
	name = (char *)ua + bpf_core_field_offset(struct unix_address, name) +
	       offsetof(struct sockaddr_un, sun_path);
	/* the compiler must not fold the bound away: the verifier needs it */
	barrier_var(n);
	if (n > GPUIO_SOCK_PATH_MAX)
		return 0;
	if (bpf_probe_read_kernel(out, n, name))
		return 0;
	return (__u16)n;
}

/* The addresses of sk into r; whether a peer is known. */
static __always_inline bool sock_addrs(struct sock *sk, struct gpuio_sock_peer *r)
{
	if (r->family == AF_INET_) {
		__be32 d = BPF_CORE_READ(sk, __sk_common.skc_daddr);
		__be32 l = BPF_CORE_READ(sk, __sk_common.skc_rcv_saddr);

		__builtin_memcpy(r->raddr, &d, 4);
		__builtin_memcpy(r->laddr, &l, 4);
	} else if (r->family == AF_INET6_) {
		BPF_CORE_READ_INTO(&r->raddr, sk, __sk_common.skc_v6_daddr);
		BPF_CORE_READ_INTO(&r->laddr, sk, __sk_common.skc_v6_rcv_saddr);
	}
	if (r->family == AF_INET_ || r->family == AF_INET6_) {
		r->rport = bpf_ntohs(BPF_CORE_READ(sk, __sk_common.skc_dport));
		r->lport = BPF_CORE_READ(sk, __sk_common.skc_num);
		return r->rport != 0;
	}
	/* unix: a module on some kernels, then its layout is unknown here */
	if (r->family == AF_UNIX_ && bpf_core_type_exists(struct unix_sock)) {
		struct unix_sock *u = (struct unix_sock *)sk;
		struct sock *peer = BPF_CORE_READ(u, peer);

		r->lpath_len = unix_path(BPF_CORE_READ(u, addr), r->lpath, &r->flags,
					 GPUIO_SP_LPATH_CUT);
		if (peer)
			r->rpath_len = unix_path(BPF_CORE_READ((struct unix_sock *)peer, addr),
						 r->rpath, &r->flags, GPUIO_SP_RPATH_CUT);
		return peer != NULL;
	}
	return false;
}

/*
 * Name the socket behind f once, its PATH record ("socket:[ino]") with it:
 * true when that is done for good (sent with a peer, now or before, or a
 * family that has none), false when it has no peer yet (a datagram socket
 * not connected: asked again at its next call) or the record was lost
 * (counted; tried again too). One map lookup when it was sent before.
 */
__noinline int emit_sock_peer_of(__u64 file, __u64 ino, __u32 dev, __u64 pid_tgid, __u64 ts)
{
	struct file_id id = { .ino = ino, .dev = dev, .ftype = GPUIO_FT_SOCK };
	struct file *f = (struct file *)file;
	struct path_key key = { .ino = ino, .dev = dev };
	struct gpuio_sock_peer *r;
	struct socket *so;
	struct sock *sk;
	__u32 zero = 0;
	__u8 *sent, val;
	bool peer, final;

	sent = bpf_map_lookup_elem(&socks_sent, &key);
	if (sent && *sent == SOCK_SENT_PEER)
		return true;
	r = bpf_map_lookup_elem(&sock_buf, &zero);
	so = f ? BPF_CORE_READ(f, private_data) : NULL;
	sk = so ? BPF_CORE_READ(so, sk) : NULL;
	if (!r || !sk)
		return false;
	__builtin_memset(r, 0, sizeof(*r));
	r->family = BPF_CORE_READ(sk, __sk_common.skc_family);
	r->type = (__u16)BPF_CORE_READ(so, type);
	r->protocol = (__u16)BPF_CORE_READ_BITFIELD_PROBED(sk, sk_protocol);
	peer = sock_addrs(sk, r);
	/* a family without peers (netlink, packet: --all-fds) is named once */
	final = peer || (r->family != AF_INET_ && r->family != AF_INET6_ &&
			 r->family != AF_UNIX_);
	/* already sent without a peer, and still none: nothing new to say */
	if (sent && !peer)
		return final;
	if (peer)
		r->flags |= GPUIO_SP_PEER;
	fill_hdr(&r->hdr, GPUIO_REC_SOCK_PEER, sizeof(*r), pid_tgid >> 32, (__u32)pid_tgid, ts);
	r->ino = ino;
	r->dev = dev;
	if (!sent)
		emit_path(f, &id, pid_tgid, ts);
	if (bpf_ringbuf_output(&events, r, sizeof(*r), BPF_RB_NO_WAKEUP) != 0) {
		stat_inc(GPUIO_STAT_RB_DROP_SOCK);
		return false;
	}
	val = final ? SOCK_SENT_PEER : SOCK_SENT_NO_PEER;
	bpf_map_update_elem(&socks_sent, &key, &val, BPF_ANY);
	return final;
}

/* Global (emit_sock_peer_of): checked once per program, not at each call site. */
static __always_inline bool emit_sock_peer(struct file *f, __u64 ino, __u32 dev, __u64 pid_tgid,
					   __u64 ts)
{
	return emit_sock_peer_of((__u64)f, ino, dev, pid_tgid, ts);
}

#endif
