// SPDX-License-Identifier: MIT
/*
 * report_net.c — the report's network (report_net.h): socket calls per peer
 * and per process, requests and their latency, the loop analysis's query
 * about socket receives, and the network section of the text, JSON and
 * HTML reports.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include "lib/json_writer.h"
#include "lib/units.h"
#include "model/calls.h"
#include "report/report_net.h"
#include "report/report_priv.h"

/* A socket's place in its exchanges (report_net.h: requests). */
enum { EX_IDLE, EX_ASKING, EX_ANSWERED };
struct rpt_net_sock {
	uint32_t peer;                  /* peers[] */
	uint8_t first_dir;              /* enum gpuio_sock_dir of its first data call, 0 none */
	uint8_t state;
	uint64_t req_s, req_e;
};

static struct rpt_net *net_get(struct rpt_model *m)
{
	if (!m->net)
		m->net = calloc(1, sizeof(*m->net));
	return m->net;
}

static void peer_pid(struct rpt_net_peer *p, uint32_t pid)
{
	unsigned n = p->npids < RPT_FILE_PIDS ? p->npids : RPT_FILE_PIDS;

	for (unsigned i = 0; i < n; i++)
		if (p->pids[i] == pid)
			return;
	if (p->npids < RPT_FILE_PIDS)
		p->pids[p->npids] = pid;
	p->npids++;
}

/* The socket's entry; its peer's row made on first sight (peers by name). */
static struct rpt_net_sock *sock_get(struct rpt_net *n, const struct model_peer *mp)
{
	struct rpt_net_sock *s;
	size_t k;
	uint64_t *v;
	int rc = kmap__upsert(&n->sock_map, mp->dev, mp->ino, &v);

	if (rc < 0)
		return NULL;
	if (!rc)
		return &n->socks[*v];
	for (k = 0; k < n->npeers && strcmp(n->peers[k].name, mp->name); k++)
		;
	if (k == n->npeers) {
		struct rpt_net_peer *p;

		if (array_grow((void **)&n->peers, &n->cpeers, n->npeers + 1, sizeof(*n->peers)))
			return NULL;
		p = &n->peers[n->npeers++];
		memset(p, 0, sizeof(*p));
		snprintf(p->name, sizeof(p->name), "%s", mp->name);
		p->proto = mp->proto;
		p->ip = mp->family == 2 || mp->family == 10;
	}
	n->peers[k].sockets++;
	if (array_grow((void **)&n->socks, &n->csocks, n->nsocks + 1, sizeof(*n->socks)))
		return NULL;
	s = &n->socks[n->nsocks];
	memset(s, 0, sizeof(*s));
	s->peer = (uint32_t)k;
	*v = n->nsocks++;
	return s;
}

static struct rpt_net_proc *proc_get(struct rpt_net *n, uint32_t pid)
{
	uint64_t *v;
	int rc = kmap__upsert(&n->proc_map, pid, 0, &v);

	if (rc < 0)
		return NULL;
	if (rc) {
		if (array_grow((void **)&n->procs, &n->cprocs, n->nprocs + 1, sizeof(*n->procs)))
			return NULL;
		memset(&n->procs[n->nprocs], 0, sizeof(n->procs[0]));
		n->procs[n->nprocs].pid = pid;
		*v = n->nprocs++;
	}
	return &n->procs[*v];
}

static struct rpt_net_thread *thread_get(struct rpt_net *n, uint32_t pid, uint32_t tid)
{
	uint64_t *v;
	int rc = kmap__upsert(&n->thread_map, pid, tid, &v);

	if (rc < 0)
		return NULL;
	if (rc) {
		if (array_grow((void **)&n->threads, &n->cthreads, n->nthreads + 1,
			       sizeof(*n->threads)))
			return NULL;
		n->threads[n->nthreads] = (struct rpt_net_thread){ .pid = pid, .tid = tid };
		*v = n->nthreads++;
	}
	return &n->threads[*v];
}

/* The exchange in progress ends: its latency. */
static int exchange_close(struct rpt_net_peer *p, struct rpt_net_sock *s)
{
	int rc = 0;

	if (s->state == EX_ANSWERED)
		rc = rpt_hist_add(&p->req, s->req_e - s->req_s);
	s->state = EX_IDLE;
	return rc;
}

/* One data call: a burst of the socket's first direction opens an
 * exchange; the first answer that moves bytes makes it a request. */
static int exchange(struct rpt_net_peer *p, struct rpt_net_proc *pr, struct rpt_net_sock *s,
		    enum gpuio_sock_dir dir, const struct gpuio_vfs_event *e, uint64_t end)
{
	int rc = 0;

	if (!s->first_dir) {
		if (e->ret <= 0)
			return 0;
		s->first_dir = (uint8_t)dir;
		if (dir == GPUIO_SOCK_SEND)
			p->client = true;
		else
			p->server = true;
	}
	if (dir == s->first_dir) {
		if (s->state == EX_ANSWERED)
			rc = exchange_close(p, s);
		if (s->state == EX_IDLE) {
			s->state = EX_ASKING;
			s->req_s = e->hdr.ts;
		}
		return rc;
	}
	if (e->ret <= 0 || s->state == EX_IDLE)
		return 0;
	if (s->state == EX_ASKING) {
		s->state = EX_ANSWERED;
		p->requests++;
		pr->requests++;
	}
	s->req_e = end;
	return 0;
}

static const struct model_peer *net_peer(const struct rpt_model *m,
					 const struct gpuio_vfs_event *e)
{
	/* io_uring's reads and writes on a socket are not counted here; its
	 * socket requests (recv, send, ...) are */
	if (e->ftype != GPUIO_FT_SOCK ||
	    (gpuio_call__is_async(e->call) && !gpuio_call__is_sock(e->call)))
		return NULL;
	return model_session__peer(m->s, e->dev, e->ino);
}

bool rpt_net__owns(const struct rpt_model *m, const struct gpuio_vfs_event *e)
{
	return net_peer(m, e) != NULL;
}

bool rpt_net__remote(const struct rpt_model *m, const struct gpuio_vfs_event *e)
{
	const struct model_peer *p = net_peer(m, e);

	return p && (p->family == AF_INET || p->family == AF_INET6);
}

/* The bytes a call moved, its time, into a peer, a process, a thread. */
static int account(struct rpt_net *n, struct rpt_net_peer *p, struct rpt_net_proc *pr,
		   const struct gpuio_vfs_event *e, enum gpuio_sock_dir dir)
{
	uint64_t bytes = e->ret > 0 ? (uint64_t)e->ret : 0;
	struct rpt_net_thread *t;

	if (e->ret < 0)
		p->errors++;
	if (dir == GPUIO_SOCK_RECV) {
		p->rbytes += bytes, p->rcalls++, p->rtime += e->dur_ns;
		pr->rbytes += bytes, pr->rcalls++, pr->rtime += e->dur_ns;
		n->rbytes += bytes, n->rtime += e->dur_ns;
		/* an io_uring receive is in flight, its thread is not waiting in it */
		if (p->ip && !gpuio_call__is_async(e->call)) {
			pr->ip_rtime += e->dur_ns;
			t = thread_get(n, e->hdr.pid, e->hdr.tid);
			if (!t)
				return -ENOMEM;
			t->ip_rtime += e->dur_ns;
		}
		return rpt_hist_add(&p->rlat, e->dur_ns);
	}
	p->sbytes += bytes, p->scalls++, p->stime += e->dur_ns;
	pr->sbytes += bytes, pr->scalls++, pr->stime += e->dur_ns;
	n->sbytes += bytes, n->stime += e->dur_ns;
	return 0;
}

int rpt_net__vfs(struct rpt_model *m, const struct gpuio_vfs_event *e)
{
	const struct model_peer *mp = net_peer(m, e);
	enum gpuio_sock_dir dir;
	uint64_t end = rpt_end_of(e->hdr.ts, e->dur_ns);
	struct rpt_net_sock *s;
	struct rpt_net_peer *p;
	struct rpt_net_proc *pr;
	struct rpt_thread *t;
	struct rpt_proc *proc;
	struct rpt_net *n;

	if (!mp)
		return 0;
	/* the thread and process are the report's as any caller's: their span */
	rpt_note_time(m, e->hdr.ts, end);
	if (rpt_thread_get(m, e->hdr.pid, e->hdr.tid, e->hdr.ts, end, &t) ||
	    rpt_proc_get(m, e->hdr.pid, &proc))
		return -ENOMEM;
	if (end > proc->last_ts)
		proc->last_ts = end;
	n = net_get(m);
	if (!n || !(s = sock_get(n, mp)) || !(pr = proc_get(n, e->hdr.pid)))
		return -ENOMEM;
	p = &n->peers[s->peer];
	peer_pid(p, e->hdr.pid);
	n->calls++;
	dir = gpuio_call__sock_dir(e->call, e->ftype);
	if (gpuio_call__is_connection(e->call)) {
		/* connect: the time to reach the peer; accept: to wait for one */
		p->connects++;
		p->connect_time += e->dur_ns;
		if (e->dur_ns > p->connect_max)
			p->connect_max = e->dur_ns;
		if (e->call == GPUIO_CALL_ACCEPT || e->call == GPUIO_CALL_URING_ACCEPT)
			p->server = true;
		else
			p->client = true;
		if (e->ret < 0)
			p->errors++;
		return 1;
	}
	if (dir == GPUIO_SOCK_NONE)        /* close, fsync, ...: counted, no bytes */
		return 1;
	if (account(n, p, pr, e, dir) || exchange(p, pr, s, dir, e, end))
		return -ENOMEM;
	return 1;
}

static int cmp_peer(const void *pa, const void *pb)
{
	const struct rpt_net_peer *a = pa, *b = pb;
	uint64_t x = a->rtime + a->stime, y = b->rtime + b->stime;

	if (x != y)
		return x > y ? -1 : 1;
	return strcmp(a->name, b->name);
}

static int cmp_proc(const void *pa, const void *pb)
{
	const struct rpt_net_proc *a = pa, *b = pb;

	if (a->rtime != b->rtime)
		return a->rtime > b->rtime ? -1 : 1;
	return a->pid < b->pid ? -1 : a->pid > b->pid;
}

int rpt_net__finish(struct rpt_model *m)
{
	struct rpt_net *n = m->net;

	if (!n)
		return 0;
	for (size_t i = 0; i < n->nsocks; i++)
		if (exchange_close(&n->peers[n->socks[i].peer], &n->socks[i]))
			return -ENOMEM;
	/* each process's busiest receiving thread, and its wall time */
	for (size_t i = 0; i < n->nthreads; i++) {
		const struct rpt_net_thread *t = &n->threads[i];
		struct rpt_net_proc *pr = proc_get(n, t->pid);
		uint64_t *tv = kmap__get(&m->thread_map, t->pid, t->tid);

		if (!pr)
			return -ENOMEM;
		if (t->ip_rtime > pr->busy_rtime && tv) {
			pr->busy_tid = t->tid;
			pr->busy_rtime = t->ip_rtime;
			pr->busy_wall = rpt_thread__wall(m, &m->threads[*tv]);
		}
	}
	/* the maps point into the arrays by index: sorted, they are no longer needed */
	for (size_t i = 0; i < n->npeers; i++)
		n->requests += n->peers[i].requests;
	{
		/* sockets keep peer indices: renumber them after the sort */
		uint32_t *order = malloc((n->npeers + 1) * sizeof(*order));
		struct rpt_net_peer *sorted = malloc((n->npeers + 1) * sizeof(*sorted));

		if (!order || !sorted) {
			free(order);
			free(sorted);
			return -ENOMEM;
		}
		memcpy(sorted, n->peers, n->npeers * sizeof(*sorted));
		if (n->npeers)
			qsort(sorted, n->npeers, sizeof(*sorted), cmp_peer);
		for (size_t i = 0; i < n->npeers; i++)
			for (size_t k = 0; k < n->npeers; k++)
				if (!strcmp(n->peers[i].name, sorted[k].name))
					order[i] = (uint32_t)k;
		for (size_t i = 0; i < n->nsocks; i++)
			n->socks[i].peer = order[n->socks[i].peer];
		free(n->peers);
		n->peers = sorted;
		n->cpeers = n->npeers + 1;
		free(order);
	}
	if (n->nprocs)
		qsort(n->procs, n->nprocs, sizeof(*n->procs), cmp_proc);
	kmap__free(&n->proc_map);
	memset(&n->proc_map, 0, sizeof(n->proc_map));
	return 0;
}

void rpt_net__free(struct rpt_model *m)
{
	struct rpt_net *n = m->net;

	if (!n)
		return;
	for (size_t i = 0; i < n->npeers; i++) {
		free(n->peers[i].rlat.b);
		free(n->peers[i].req.b);
	}
	free(n->peers);
	free(n->procs);
	free(n->threads);
	free(n->socks);
	kmap__free(&n->sock_map);
	kmap__free(&n->proc_map);
	kmap__free(&n->thread_map);
	free(n);
	m->net = NULL;
}

/* ---- the loop analysis's query ---- */

struct recv_ctx {
	struct rpt_model *m;
	const struct rpt_net_query *q;
	struct rpt_net_recv *out;
	struct rpt_net_recv_peer *all;  /* every peer seen, by the session's name */
	size_t nall, call;
};

static bool has(const uint32_t *v, size_t n, uint32_t x)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == x)
			return true;
	return false;
}

static int recv_one(void *ctx, const struct gpuio_vfs_event *e)
{
	struct recv_ctx *c = ctx;
	const struct rpt_net_query *q = c->q;
	const struct model_peer *mp;
	uint64_t end, in, a, b;
	size_t k;

	if (gpuio_call__sock_dir(e->call, e->ftype) != GPUIO_SOCK_RECV ||
	    !(mp = net_peer(c->m, e)))
		return 0;
	if (q->ip_only && mp->family != 2 && mp->family != 10)
		return 0;
	if ((q->npids || q->ntids) && !has(q->pids, q->npids, e->hdr.pid) &&
	    !has(q->tids, q->ntids, e->hdr.tid))
		return 0;
	end = rpt_end_of(e->hdr.ts, e->dur_ns);
	a = e->hdr.ts > q->s ? e->hdr.ts : q->s;
	b = end < q->e ? end : q->e;
	if (b <= a && !(e->hdr.ts == end && e->hdr.ts >= q->s && e->hdr.ts < q->e))
		return 0;       /* no overlap (a zero-length call inside counts, 0 ns) */
	if (q->within && b > a && !rpt_spans_overlap(q->within, a, b))
		return 0;
	in = b > a ? (q->within ? rpt_spans_overlap(q->within, a, b) : b - a) : 0;
	c->out->ns += in;
	c->out->calls++;
	for (k = 0; k < c->nall && strcmp(c->all[k].name, mp->name); k++)
		;
	if (k == c->nall) {
		if (array_grow((void **)&c->all, &c->call, c->nall + 1, sizeof(*c->all)))
			return -ENOMEM;
		c->all[c->nall++] = (struct rpt_net_recv_peer){ .name = mp->name, .proto = mp->proto };
	}
	c->all[k].ns += in;
	c->all[k].calls++;
	/* bytes arrive at the call's end: its last ns inside the window (and spans) */
	if (e->ret > 0 && end > q->s && end <= q->e &&
	    (!q->within || rpt_spans_overlap(q->within, end - 1, end))) {
		c->out->bytes += (uint64_t)e->ret;
		c->all[k].bytes += (uint64_t)e->ret;
	}
	return 0;
}

static int cmp_recv_peer(const void *pa, const void *pb)
{
	const struct rpt_net_recv_peer *a = pa, *b = pb;

	if (a->ns != b->ns)
		return a->ns > b->ns ? -1 : 1;
	return strcmp(a->name, b->name);
}

int rpt_net__recv_in(struct rpt_model *m, const struct rpt_net_query *q, struct rpt_net_recv *out)
{
	struct recv_ctx c = { .m = m, .q = q, .out = out };
	const struct model_tool t = { .ctx = &c, .vfs = recv_one };
	int rc;

	memset(out, 0, sizeof(*out));
	if (!m->net || q->e <= q->s)
		return 0;
	rc = model_session__replay(m->s, &t, 1ull << GPUIO_REC_VFS);
	if (rc == -EBADMSG)
		snprintf(m->err, sizeof(m->err), "%s: %s", m->path, model_session__error(m->s));
	if (c.nall)
		qsort(c.all, c.nall, sizeof(*c.all), cmp_recv_peer);
	for (size_t i = 0; i < c.nall; i++) {
		if (i < RPT_NET_RECV_PEERS)
			out->peers[out->npeers++] = c.all[i];
		else
			out->other_ns += c.all[i].ns;
	}
	free(c.all);
	return rc;
}

const struct rpt_net_proc *rpt_net__remote_wait(const struct rpt_model *m, double share,
						uint64_t min_ns)
{
	const struct rpt_net_proc *best = NULL;
	double best_share = 0;

	if (!m->net)
		return NULL;
	for (size_t i = 0; i < m->net->nprocs; i++) {
		const struct rpt_net_proc *p = &m->net->procs[i];
		double s = p->busy_wall ? (double)p->busy_rtime / (double)p->busy_wall : 0;

		if (p->busy_rtime >= min_ns && s >= share && s > best_share) {
			best = p;
			best_share = s;
		}
	}
	return best;
}

/* Whether the capture named any socket: the report's network section (report_tab_net.c) */
bool rpt_net__any(const struct rpt_model *m)
{
	return m->net && m->net->npeers;
}
