/* SPDX-License-Identifier: MIT */
/*
 * report_net.h — the report's network: socket calls whose socket a
 * SOCK_PEER record names (every socket a build with socket tracing saw; an
 * older capture has none, and its report is what it was), per peer and per
 * process, and the query the loop analysis asks about socket receives.
 *
 * Such calls are the network's alone: report_load.c hands them here before
 * its file tables see them (so they are not files, and not file I/O time of
 * their thread). Calls on sockets without a peer record (an older capture
 * traced with --all-fds; a peer record lost: rb_drop_sock) stay files, as
 * they always were.
 *
 * A request is one exchange on a socket: a burst of calls in the direction
 * of the socket's first data call (sends, for a client), answered by at
 * least one call the other way that moved bytes; its latency runs from the
 * start of the burst's first call to the end of the last answering call
 * before the next burst. A client's requests are its requests; a server's
 * socket counts the requests it answered.
 */
#ifndef GPUIO_REPORT_NET_H
#define GPUIO_REPORT_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "report/report_model.h"

struct rpt_spans;

/* One peer, over every socket to it (several connections to one server: one row). */
struct rpt_net_peer {
	char name[128];                 /* model/peer_names.h: "10.0.0.5:9000", "unix:/path" */
	const char *proto;              /* "tcp", "udp", "unix", ... */
	bool ip;                        /* IPv4 or IPv6: another host, or a server on this one */
	bool client;                    /* a socket to it sent first (this side asks) */
	bool server;                    /* one received first (this side answers) */
	uint64_t sockets;
	uint64_t rbytes, sbytes;        /* received, sent */
	uint64_t rcalls, scalls, errors;
	uint64_t rtime, stime;          /* ns inside receive / send calls */
	uint64_t requests;
	uint64_t connects;              /* connect and accept calls */
	uint64_t connect_time, connect_max; /* ns inside them, the longest */
	struct rpt_hist rlat;           /* receive calls */
	struct rpt_hist req;            /* requests, first call of the burst to the last answer */
	uint32_t pids[RPT_FILE_PIDS];
	uint32_t npids;                 /* distinct pids (the first few kept) */
};

/* One process's socket calls. */
struct rpt_net_proc {
	uint32_t pid;
	uint64_t rbytes, sbytes, rcalls, scalls, requests;
	uint64_t rtime, stime;
	uint64_t ip_rtime;              /* of rtime: receives from IP peers */
	uint32_t busy_tid;              /* its thread with the most IP receive time */
	uint64_t busy_rtime, busy_wall; /* that thread's IP receive time and wall time */
};

struct rpt_net_thread { uint32_t pid, tid; uint64_t ip_rtime; };
struct rpt_net_sock;

struct rpt_net {
	struct rpt_net_peer *peers;     /* by time in calls once built (rpt_net__finish) */
	size_t npeers, cpeers;
	struct rpt_net_proc *procs;     /* by receive time once built */
	size_t nprocs, cprocs;
	struct rpt_net_thread *threads;
	size_t nthreads, cthreads;
	struct rpt_net_sock *socks;
	size_t nsocks, csocks;
	struct kmap sock_map;           /* (dev, ino) -> socks[] */
	struct kmap proc_map;           /* (pid, 0) -> procs[] */
	struct kmap thread_map;         /* (pid, tid) -> threads[] */
	uint64_t calls, rbytes, sbytes, rtime, stime, requests;
};

/*
 * Pass 1 (report_load.c): 1 when e is the network's (a socket call whose
 * socket has a peer record: folded in here), 0 when it is not, -ENOMEM.
 */
int rpt_net__vfs(struct rpt_model *m, const struct gpuio_vfs_event *e);
/* Whether e is the network's, as rpt_net__vfs decides (for later passes over the calls). */
bool rpt_net__owns(const struct rpt_model *m, const struct gpuio_vfs_event *e);
/* Is the call's socket an IP one (a fetch from another host or a local
 * server), not a Unix socket (a worker handing over a batch's fds)? */
bool rpt_net__remote(const struct rpt_model *m, const struct gpuio_vfs_event *e);
/* After pass 1: open requests closed, tables sorted, processes' busiest threads. */
int rpt_net__finish(struct rpt_model *m);
void rpt_net__free(struct rpt_model *m);

/*
 * For the loop analysis: the time threads spent receiving from sockets in
 * a window, and from whom.
 *
 * A receive is recvfrom/recvmsg/recvmmsg, or read/readv on a socket, whose
 * socket a SOCK_PEER record names. It counts when its thread matches (its
 * pid is one of pids, or its tid one of tids; both empty: every thread) and
 * it overlaps [s, e) — and, when within is given (normalised spans:
 * rpt_spans_norm), those spans inside [s, e).
 *   ns      the calls' time inside the window (and spans), summed over
 *           calls: two threads receiving at once count twice
 *   calls   the calls that overlap it
 *   bytes   what the calls that end inside it received
 *   peers   up to RPT_NET_RECV_PEERS peers, most ns first (name: the
 *           session's, valid while the model is open); other_ns the rest's
 * ip_only leaves unix sockets out (a DataLoader's own workers hand file
 * descriptors over unix sockets: that is not remote data).
 * One pass over the capture's calls (memory: none); out is filled in any
 * case. 0, -ENOMEM, or -EBADMSG (m->err says why) when the capture changed.
 * Call it after pass 1 (rpt_model__open's passes), from the report's own
 * files; not from inside another replay.
 */
#define RPT_NET_RECV_PEERS 8
struct rpt_net_query {
	const uint32_t *pids;
	size_t npids;
	const uint32_t *tids;
	size_t ntids;
	uint64_t s, e;                  /* CLOCK_MONOTONIC ns, as the records */
	const struct rpt_spans *within; /* NULL: all of [s, e) */
	bool ip_only;
};
struct rpt_net_recv_peer {
	const char *name;
	const char *proto;
	uint64_t ns, calls, bytes;
};
struct rpt_net_recv {
	uint64_t ns, calls, bytes;
	struct rpt_net_recv_peer peers[RPT_NET_RECV_PEERS];
	size_t npeers;
	uint64_t other_ns;              /* peers past the first RPT_NET_RECV_PEERS */
};
int rpt_net__recv_in(struct rpt_model *m, const struct rpt_net_query *q, struct rpt_net_recv *out);

/*
 * Remote data (report_reco.c's remote_data entry): the process that spends
 * the largest share of its busiest thread's wall time receiving from IP
 * peers, NULL when none reaches share (0..1) with at least min_ns.
 */
const struct rpt_net_proc *rpt_net__remote_wait(const struct rpt_model *m, double share,
						uint64_t min_ns);

/* Did the capture name any socket (the report's network section: report_tab_net.c)? */
bool rpt_net__any(const struct rpt_model *m);

#endif /* GPUIO_REPORT_NET_H */
