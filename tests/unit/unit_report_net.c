// SPDX-License-Identifier: MIT
/*
 * unit_report_net — the loop analysis's question to the report's network
 * (rpt_net__recv_in, report/report_net.h): time in socket receives of a set
 * of pids/tids inside a window and spans, the calls, the bytes of the calls
 * that end inside, the peers by time, IP peers only. A capture written here
 * with known calls: thread 20 receives from 10.0.0.5:9000 in [1000, 3000)
 * (400 B) and [5000, 6000) (100 B), sends in [500, 600); thread 21 (same
 * process) receives from unix:/run/a.sock in [2000, 4000) (50 B) and fails
 * one receive from it (EAGAIN) at [7000, 7100); pid 30 receives from the
 * IP peer in [1000, 2000) (9 B). Times are ns after T0.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "capture/capture.h"
#include "report/report_model.h"
#include "report/report_net.h"
#include "report/report_priv.h"
#include "unit.h"

#define T0 1000000000000ull
#define DEV 8u

static struct gpuio_cap_writer *w;

static void hdr(struct gpuio_hdr *h, unsigned type, size_t size, unsigned pid, unsigned tid,
		unsigned long long ts)
{
	h->type = (__u16)type;
	h->size = (__u16)size;
	h->pid = pid;
	h->tid = tid;
	h->cpu = 0;
	h->ts = ts;
}

static void peer(unsigned pid, unsigned long long ino, unsigned family, const char *rpath)
{
	struct gpuio_sock_peer r;

	memset(&r, 0, sizeof(r));
	hdr(&r.hdr, GPUIO_REC_SOCK_PEER, sizeof(r), pid, pid, T0);
	r.ino = ino;
	r.dev = DEV;
	r.family = (__u16)family;
	r.type = 1;
	r.flags = GPUIO_SP_PEER;
	if (family == 2) {
		r.protocol = 6;
		r.rport = 9000;
		memcpy(r.raddr, "\x0a\x00\x00\x05", 4);
	} else {
		r.rpath_len = (__u16)strlen(rpath);
		memcpy(r.rpath, rpath, r.rpath_len);
	}
	gpuio_cap_writer__append(w, &r, sizeof(r));
}

static void call(unsigned pid, unsigned tid, unsigned c, unsigned long long ino,
		 unsigned long long s, unsigned long long e, long long ret)
{
	static unsigned seq;
	struct gpuio_vfs_event v;

	memset(&v, 0, sizeof(v));
	hdr(&v.hdr, GPUIO_REC_VFS, sizeof(v), pid, tid, T0 + s);
	v.dur_ns = e - s;
	v.ret = ret;
	v.requested = 4096;
	v.offset = v.offset2 = -1;
	v.ino = ino;
	v.dev = DEV;
	v.fd = 5;
	v.fd2 = -1;
	v.seq = ++seq;
	v.call = (__u16)c;
	v.ftype = GPUIO_FT_SOCK;
	gpuio_cap_writer__append(w, &v, sizeof(v));
}

static struct rpt_net_recv ask(struct rpt_model *m, const uint32_t *pids, size_t np,
			       const uint32_t *tids, size_t nt, unsigned long long s,
			       unsigned long long e, const struct rpt_spans *within, bool ip_only)
{
	struct rpt_net_query q = { .pids = pids, .npids = np, .tids = tids, .ntids = nt,
				   .s = T0 + s, .e = T0 + e, .within = within, .ip_only = ip_only };
	struct rpt_net_recv r;
	int rc = rpt_net__recv_in(m, &q, &r);

	CHECK(rc == 0, "rpt_net__recv_in: %d", rc);
	return r;
}

int main(void)
{
	char path[] = "/tmp/unit_report_net.XXXXXX", err[256];
	struct gpuio_cap_header h;
	uint32_t p20 = 20, t21 = 21, p30 = 30;
	struct rpt_spans sp = { 0 };
	struct rpt_net_recv r;
	struct rpt_model *m;
	int fd = mkstemp(path);

	CHECK(fd >= 0, "mkstemp");
	close(fd);
	gpuio_cap_header__init(&h, 2, 0);
	h.monotonic_ns = T0;
	CHECK(gpuio_cap_writer__create(path, &h, (uid_t)-1, (gid_t)-1, &w) == 0, "create");
	peer(20, 1, 2, NULL);
	peer(20, 2, 1, "/run/a.sock");
	peer(30, 3, 2, NULL);
	call(20, 20, GPUIO_CALL_SENDTO, 1, 500, 600, 100);
	call(20, 20, GPUIO_CALL_RECVFROM, 1, 1000, 3000, 400);
	call(30, 30, GPUIO_CALL_READ, 3, 1000, 2000, 9);
	call(20, 21, GPUIO_CALL_RECVMSG, 2, 2000, 4000, 50);
	call(20, 20, GPUIO_CALL_RECVFROM, 1, 5000, 6000, 100);
	call(20, 21, GPUIO_CALL_RECVFROM, 2, 7000, 7100, -11);
	CHECK(gpuio_cap_writer__close(w) == 0, "close");

	m = rpt_model__open(path, NULL, err, sizeof(err));
	CHECK(m, "open: %s", err);
	if (!m)
		return unit_done("unit_report_net");

	/* pid 20, everything: 2000 + 1000 from the IP peer, 2000 + 100 from unix */
	r = ask(m, &p20, 1, NULL, 0, 0, 10000, NULL, false);
	CHECK(r.ns == 5100 && r.calls == 4 && r.bytes == 550, "ns %llu calls %llu bytes %llu",
	      (unsigned long long)r.ns, (unsigned long long)r.calls, (unsigned long long)r.bytes);
	CHECK(r.npeers == 2 && !strcmp(r.peers[0].name, "10.0.0.5:9000") &&
	      r.peers[0].ns == 3000 && r.peers[0].calls == 2 && r.peers[0].bytes == 500 &&
	      !strcmp(r.peers[1].name, "unix:/run/a.sock") && r.peers[1].ns == 2100,
	      "peers %zu %s %llu", r.npeers, r.npeers ? r.peers[0].name : "-",
	      (unsigned long long)(r.npeers ? r.peers[0].ns : 0));
	/* IP peers only */
	r = ask(m, &p20, 1, NULL, 0, 0, 10000, NULL, true);
	CHECK(r.ns == 3000 && r.calls == 2 && r.npeers == 1, "ip only: ns %llu",
	      (unsigned long long)r.ns);
	/* a window cuts calls: [1500, 5500) holds 1500 + 2000 + 500; bytes of the
	 * calls that end inside: 400 + 50 */
	r = ask(m, &p20, 1, NULL, 0, 1500, 5500, NULL, false);
	CHECK(r.ns == 4000 && r.calls == 3 && r.bytes == 450, "window: ns %llu calls %llu bytes %llu",
	      (unsigned long long)r.ns, (unsigned long long)r.calls, (unsigned long long)r.bytes);
	/* one thread by tid; the failed receive counts its time, no bytes */
	r = ask(m, NULL, 0, &t21, 1, 0, 10000, NULL, false);
	CHECK(r.ns == 2100 && r.calls == 2 && r.bytes == 50, "tid 21: ns %llu",
	      (unsigned long long)r.ns);
	/* spans inside the window: [2500, 3500) and [5800, 9000) */
	rpt_spans_add(&sp, T0 + 2500, T0 + 3500);
	rpt_spans_add(&sp, T0 + 5800, T0 + 9000);
	rpt_spans_norm(&sp);
	r = ask(m, &p20, 1, NULL, 0, 0, 10000, &sp, false);
	CHECK(r.ns == 500 + 1000 + 200 + 100 && r.calls == 4 && r.bytes == 400 + 100,
	      "spans: ns %llu calls %llu bytes %llu", (unsigned long long)r.ns,
	      (unsigned long long)r.calls, (unsigned long long)r.bytes);
	/* every thread; another process */
	r = ask(m, NULL, 0, NULL, 0, 0, 10000, NULL, false);
	CHECK(r.ns == 6100 && r.calls == 5, "all: ns %llu", (unsigned long long)r.ns);
	r = ask(m, &p30, 1, NULL, 0, 0, 10000, NULL, false);
	CHECK(r.ns == 1000 && r.bytes == 9, "pid 30: ns %llu", (unsigned long long)r.ns);
	/* nothing: an empty window, a window before the calls */
	r = ask(m, &p20, 1, NULL, 0, 10, 10, NULL, false);
	CHECK(r.ns == 0 && r.calls == 0, "empty window");
	r = ask(m, &p20, 1, NULL, 0, 0, 900, NULL, false);
	CHECK(r.ns == 0 && r.calls == 0 && r.npeers == 0, "before");
	free(sp.a);
	rpt_model__close(m);
	unlink(path);
	return unit_done("unit_report_net");
}
