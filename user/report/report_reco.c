// SPDX-License-Identifier: MIT
/*
 * report_reco.c — rankings (files by time, bytes, operations) and
 * recommendations, each with the evidence behind it.
 *
 * Long on purpose: rpt_recommend() (~100 lines) is the list of rules, one
 * block each with its evidence.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include "model/calls.h"
#include "report/report_model.h"
#include "report/report_net.h"
#include "report/report_priv.h"
#include "lib/units.h"

/* ---- ranking, names, recommendations ---- */

static const struct rpt_model *rank_m;

static int cmp_time(const void *pa, const void *pb)
{
	const struct rpt_file *a = &rank_m->files[*(const size_t *)pa];
	const struct rpt_file *b = &rank_m->files[*(const size_t *)pb];
	uint64_t x = a->rtime + a->wtime + a->otime, y = b->rtime + b->wtime + b->otime;

	return x > y ? -1 : x < y;
}

static int cmp_bytes(const void *pa, const void *pb)
{
	const struct rpt_file *a = &rank_m->files[*(const size_t *)pa];
	const struct rpt_file *b = &rank_m->files[*(const size_t *)pb];
	uint64_t x = a->rbytes + a->wbytes, y = b->rbytes + b->wbytes;

	return x > y ? -1 : x < y;
}

static int cmp_ops(const void *pa, const void *pb)
{
	const struct rpt_file *a = &rank_m->files[*(const size_t *)pa];
	const struct rpt_file *b = &rank_m->files[*(const size_t *)pb];
	uint64_t x = a->rops + a->wops + a->opens + a->closes + a->syncs + a->other_ops;
	uint64_t y = b->rops + b->wops + b->opens + b->closes + b->syncs + b->other_ops;

	return x > y ? -1 : x < y;
}

size_t *rpt_model__ranked_files(const struct rpt_model *m, unsigned top, size_t *n)
{
	size_t *all = malloc((m->nfiles + 1) * sizeof(*all));
	size_t *out = malloc((m->nfiles + 1) * sizeof(*out));
	unsigned char *in = calloc(m->nfiles + 1, 1);
	size_t k = 0, lim = top && top < m->nfiles ? top : m->nfiles;
	int (*cmps[])(const void *, const void *) = { cmp_time, cmp_bytes, cmp_ops };

	if (!all || !out || !in) {
		free(all);
		free(out);
		free(in);
		*n = 0;
		return NULL;
	}
	rank_m = m;
	for (int c = 0; c < 3; c++) {
		for (size_t i = 0; i < m->nfiles; i++)
			all[i] = i;
		if (m->nfiles)
			qsort(all, m->nfiles, sizeof(*all), cmps[c]);
		for (size_t i = 0; i < lim; i++)
			if (!in[all[i]]) {
				in[all[i]] = 1;
				out[k++] = all[i];
			}
	}
	/* shown by time, whatever ranking brought them in */
	if (k)
		qsort(out, k, sizeof(*out), cmp_time);
	free(all);
	free(in);
	*n = k;
	return out;
}

int rpt_name_files(struct rpt_model *m)
{
	for (size_t i = 0; i < m->nfiles; i++) {
		struct rpt_file *f = &m->files[i];
		uint32_t len;
		const char *path = model_session__path(m->s, f->dev, f->ino, &len);

		if (path) {
			f->path = path;
			f->path_len = len;
		} else {
			char buf[80], *name;
			int n = snprintf(buf, sizeof(buf), "?dev=%u:%u,ino=%llu", f->dev >> 20,
					 f->dev & 0xfffff, (unsigned long long)f->ino);

			/* kept in unnamed[] so that rpt_model__free frees it */
			if (array_grow((void **)&m->unnamed, &m->cunnamed, m->nunnamed + 1,
				       sizeof(*m->unnamed)))
				return -ENOMEM;
			name = strdup(buf);
			if (!name)
				return -ENOMEM;
			m->unnamed[m->nunnamed++] = name;
			f->path = name;
			f->path_len = (uint32_t)n;
			f->nameless = true;
			m->unresolved++;
		}
	}
	return 0;
}

static struct rpt_reco *reco_new(struct rpt_model *m, const char *kind)
{
	struct rpt_reco *r;

	if (m->nrecos >= ARRAY_SIZE(m->recos))
		return NULL;
	r = &m->recos[m->nrecos++];
	memset(r, 0, sizeof(*r));
	snprintf(r->kind, sizeof(r->kind), "%s", kind);
	r->loop = -1;
	return r;
}

static size_t appendf(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static size_t appendf(char *buf, size_t len, const char *fmt, ...)
{
	size_t used = strnlen(buf, len);
	va_list ap;

	if (used + 1 >= len)
		return used;
	va_start(ap, fmt);
	vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
	return strnlen(buf, len);
}

/* When the loop launches GPU work: the GPU idle time its waits for data cost. */
static void gpu_evidence(const struct rpt_model *m, const struct rpt_wait *w, struct rpt_reco *r)
{
	uint64_t data = 0, idle = 0;
	char a[32];

	if (!m->launch_states)
		return;
	for (size_t i = 0; i < m->ngpus; i++)
		if (m->gpus[i].pid == w->pid)
			idle += m->gpus[i].idle_ns;
	for (size_t k = 0; k < m->ngaps; k++)
		if (m->gaps[k].launcher_tid == w->tid && m->gpus[m->gaps[k].gpu].pid == w->pid)
			data += m->gaps[k].launch_ns[RPT_TW_DATA];
	if (!data)
		return;
	rpt_fmt_dur(data, a, sizeof(a));
	appendf(r->evidence, sizeof(r->evidence), "; its GPU(s) sat idle %s while it waited for data "
		"(%.0f%% of their idle time)", a, 100.0 * (double)data / (double)idle);
}

static void peers_evidence(const struct rpt_model *m, struct rpt_reco *r);

/*
 * A loop that blocks in its own data reads (>= 20% of its run) with no
 * worker feeding it: workers or a prefetch thread would overlap the reads
 * with its compute, hiding at most the smaller of the two.
 */
static void reco_no_workers(struct rpt_model *m, const struct rpt_wait *w)
{
	uint64_t span = rpt_wait__span(w), hide;
	struct rpt_reco *r;
	char a[32], b[32], line[600];

	if (!w->own_reads || !span || w->own_read_ns * 5 < span || !(r = reco_new(m, "no_workers")))
		return;
	r->loop = (int)w->index;
	hide = w->own_read_ns < w->ns[RPT_TW_CPU] ? w->own_read_ns : w->ns[RPT_TW_CPU];
	rpt_fmt_dur(w->own_read_ns, a, sizeof(a));
	rpt_fmt_dur(hide, b, sizeof(b));
	rpt_wait__headline(m, w, line, sizeof(line));
	snprintf(r->text, sizeof(r->text), "the loop (pid %u tid %u) reads its data itself and computes "
		 "only once each read returns (%s blocked in its own reads): DataLoader workers "
		 "(num_workers >= 2, prefetch_factor >= 2) or a prefetch thread would overlap the reads "
		 "with its compute, hiding up to %s", w->pid, w->tid, a, b);
	snprintf(r->evidence, sizeof(r->evidence), "%s", line);
	gpu_evidence(m, w, r);
}

/*
 * A loop waits for data (>= 10% of its run): the cause is what the
 * producers that hand it the data did meanwhile (report_wait.c).
 */
static void reco_wait(struct rpt_model *m, const struct rpt_wait *w)
{
	uint64_t span, act;
	struct rpt_reco *r;
	char a[32], line[600];
	double rd, net, cpu, run;
	unsigned ncpu = m->hdr->ncpus;

	if (!(span = rpt_wait__span(w)) || rpt_wait__data(w) * 10 < span ||
	    !(act = rpt_wait__act_total(w)))
		return;
	rd = (double)(w->act_ns[RPT_WA_READ] + w->act_ns[RPT_WA_FAULT]) / (double)act;
	net = (double)w->act_ns[RPT_WA_NET] / (double)act;
	cpu = (double)w->act_ns[RPT_WA_CPU] / (double)act;
	run = (double)w->act_ns[RPT_WA_RUNNABLE] / (double)act;
	rpt_fmt_dur(rpt_wait__data(w), a, sizeof(a));
	rpt_wait__headline(m, w, line, sizeof(line));
	if (net >= 0.5 && (r = reco_new(m, "remote_data"))) {
		snprintf(r->text, sizeof(r->text), "the loop (pid %u) waits for data while its producers "
			 "wait on the network: more requests in flight per worker (threads or async I/O "
			 "inside each worker), a deeper prefetch (prefetch_factor), or a local cache of the "
			 "hot objects", w->pid);
	} else if (rd >= 0.5 && (r = reco_new(m, "data_storage"))) {
		snprintf(r->text, sizeof(r->text), "the loop waits for data while its workers read files: "
			 "faster storage, or stage the hot data files (%s) on local disk or in memory "
			 "before training; more workers help only while the device has headroom", w->glob);
	} else if (run >= 0.25 && run > cpu && (r = reco_new(m, "data_cpu_shortage"))) {
		snprintf(r->text, sizeof(r->text), "the loop waits for data while its %zu workers wait "
			 "for a CPU (%u CPUs): more CPUs, or fewer workers (num_workers <= CPUs - 1) so "
			 "the loop and the workers stop competing", w->nwakers, ncpu);
	} else if (cpu >= 0.5 && (r = reco_new(m, "data_workers"))) {
		snprintf(r->text, sizeof(r->text), "the loop waits for data while its %zu workers compute "
			 "(decode, transforms): %s", w->nwakers,
			 w->nwakers + 1 < ncpu ? "more workers (CPUs are free) or a larger prefetch_factor; "
			 "cheaper transforms" : "cheaper transforms or more CPUs (every CPU has a worker)");
	} else {
		return;
	}
	r->loop = (int)w->index;
	snprintf(r->evidence, sizeof(r->evidence), "%s", line);
	if (!strcmp(r->kind, "remote_data"))
		peers_evidence(m, r);
	gpu_evidence(m, w, r);
}

/*
 * A process spends a large share of its time receiving from IP peers (an
 * object store, an HTTP or RPC data service): its requests run one at a
 * time, or too few ahead (report_net.h).
 */
/* The IP peers most time was spent receiving from: requests, bytes, latency. */
static void peers_evidence(const struct rpt_model *m, struct rpt_reco *r)
{
	const struct rpt_net *n = m->net;
	char a[32], b[32], c[32];
	size_t shown = 0;

	for (size_t i = 0; n && i < n->npeers && shown < 3; i++) {
		const struct rpt_net_peer *q = &n->peers[i];

		if (!q->ip || !q->rbytes)
			continue;
		rpt_fmt_bytes(q->rbytes, a, sizeof(a));
		rpt_fmt_dur(q->req.n ? q->req.sum / q->req.n : 0, b, sizeof(b));
		rpt_fmt_dur(q->rtime, c, sizeof(c));
		appendf(r->evidence, sizeof(r->evidence), "%s%s: %llu requests, %s received, "
			"mean request latency %s, %s in receives", shown ? "; " : "; peers ",
			q->name, (unsigned long long)q->requests, a, b, c);
		shown++;
	}
}

/* A process waiting on remote data, where no loop's advice said so already. */
static void reco_remote_data(struct rpt_model *m)
{
	const struct rpt_net_proc *p = rpt_net__remote_wait(m, 0.25, 100 * NSEC_PER_MSEC);
	struct rpt_reco *r;
	char a[32], b[32];

	for (size_t i = 0; i < m->nrecos; i++)
		if (!strcmp(m->recos[i].kind, "remote_data"))
			return;
	if (!p || !(r = reco_new(m, "remote_data")))
		return;
	snprintf(r->text, sizeof(r->text), "pid %u (%s) waits on remote data most of its time: "
		 "keep several requests in flight inside each worker (a thread pool or async "
		 "I/O per worker), prefetch deeper (more workers, a larger prefetch_factor), or "
		 "cache the objects on local disk or in memory", p->pid, rpt_proc_comm(m, p->pid));
	rpt_fmt_dur(p->busy_rtime, a, sizeof(a));
	rpt_fmt_dur(p->busy_wall, b, sizeof(b));
	snprintf(r->evidence, sizeof(r->evidence), "its thread %u spent %s of its %s (%.0f%%) "
		 "in socket receives from IP peers", p->busy_tid, a, b,
		 100.0 * (double)p->busy_rtime / (double)p->busy_wall);
	peers_evidence(m, r);
}

/* The GPU idles on file reads that are not overlapped */
static void reco_loader(struct rpt_model *m)
{
	char a[32], b[32];
	struct rpt_reco *r;

	for (size_t gi = 0; gi < m->ngpus; gi++) {
		const struct rpt_gpu *g = &m->gpus[gi];
		uint64_t span = g->last - g->first, rd = g->cause_ns[RPT_CAUSE_READ];
		double conc;

		if (!span || rd * 10 < span)
			continue;
		conc = m->cause_ns[RPT_CAUSE_READ] ?
		       (double)m->gap_reads_ns / (double)m->cause_ns[RPT_CAUSE_READ] : 0;
		r = reco_new(m, "loader");
		if (!r)
			break;
		rpt_fmt_dur(rd, a, sizeof(a));
		rpt_fmt_dur(span, b, sizeof(b));
		snprintf(r->text, sizeof(r->text), conc < 1.5 ?
			 "GPU %u of pid %u (%s) waits for file reads that run one at a time: "
			 "use more data-loader workers or prefetch the next batches" :
			 "GPU %u of pid %u (%s) waits for file reads although several are in "
			 "flight: prefetch further ahead or move the data to faster storage",
			 g->device, g->pid, rpt_proc_comm(m, g->pid));
		snprintf(r->evidence, sizeof(r->evidence),
			 "GPU idle %s (%.1f%% of its %s active span) while host threads were "
			 "blocked in file reads; %.2f reads in flight on average during those gaps",
			 a, 100.0 * (double)rd / (double)span, b, conc);
	}
}

/* Checkpoints stall the GPU */
static void reco_checkpoints(struct rpt_model *m)
{
	uint64_t lost = 0, bytes = 0, dur = 0;
	char a[32], b[32], c[32];
	struct rpt_reco *r;

	if (!m->nckpts || !m->gpu_span_ns)
		return;
	for (size_t i = 0; i < m->nckpts; i++) {
		lost += m->ckpts[i].gpu_lost_ns;
		bytes += m->ckpts[i].bytes;
		dur += m->ckpts[i].e - m->ckpts[i].s;
	}
	if (lost * 20 < m->gpu_span_ns || !(r = reco_new(m, "async_checkpoint")))
		return;
	rpt_fmt_dur(lost, a, sizeof(a));
	rpt_fmt_bytes(bytes, b, sizeof(b));
	rpt_fmt_dur(dur, c, sizeof(c));
	snprintf(r->text, sizeof(r->text),
		 "checkpoints stall the GPU: write them asynchronously (copy the state "
		 "to host memory, write and fsync from a background thread or process)");
	snprintf(r->evidence, sizeof(r->evidence),
		 "%zu checkpoint(s), %s written in %s; GPU idle %s during them "
		 "(%.1f%% of the GPU active span)", m->nckpts, b, c, a,
		 100.0 * (double)lost / (double)m->gpu_span_ns);
}

/* Many small data files, each read once (code and libraries are not counted) */
static void reco_shard(struct rpt_model *m)
{
	struct rpt_reco *r;
	char a[32];

	if (m->small_files < 64 || m->small_files * 2 < m->read_files || !(r = reco_new(m, "shard")))
		return;
	rpt_fmt_bytes(m->small_files ? m->small_bytes / m->small_files : 0, a, sizeof(a));
	snprintf(r->text, sizeof(r->text),
		 "many small files, each read once: pack them into larger shards "
		 "(tar/WebDataset, TFRecord, HDF5, ...) of 100 MiB or more");
	snprintf(r->evidence, sizeof(r->evidence),
		 "%llu of %llu data files read are under 1 MiB and read once (mean %s, %llu read "
		 "calls); per-file opens and metadata dominate such loads",
		 (unsigned long long)m->small_files, (unsigned long long)m->read_files, a,
		 (unsigned long long)m->small_rops);
}

/* Hot, re-read data files with device latency: stage them (tf-Darshan) */
static void reco_stage(struct rpt_model *m)
{
	size_t nf = 0;
	char ev[600] = "", a[32], b[32];
	struct rpt_reco *r;

	for (size_t i = 0; i < m->nfiles && nf < 5; i++) {
		const struct rpt_file *f = &m->files[i];
		double reread = f->extent ? (double)f->rbytes / (double)f->extent : 0;
		uint64_t miss_b = f->miss_pages * RPT_PAGE;
		uint64_t svc = f->blk_reqs ? f->blk_svc_ns / f->blk_reqs : 0;

		if (f->role != RPT_ROLE_DATA || f->rbytes * 20 < m->roles[RPT_ROLE_DATA].rbytes ||
		    reread < 1.5 || !f->rops)
			continue;
		/* the cache did not keep it, or the device is slow for it */
		if (!((double)miss_b >= 1.5 * (double)f->extent ||
		      (f->blk_reqs && svc >= 2000000 && f->miss_pages)))
			continue;
		rpt_fmt_bytes(f->rbytes, a, sizeof(a));
		rpt_fmt_dur(f->rlat.n ? f->rlat.sum / f->rlat.n : 0, b, sizeof(b));
		appendf(ev, sizeof(ev), "%s%.*s: read %s (%.1fx its size), %.0f%% of pages "
			"missed the cache, mean read %s, device service %.2f ms",
			nf ? "; " : "", (int)(f->path_len < 120 ? f->path_len : 120), f->path,
			a, reread, f->pages ? 100.0 * (1 - rpt_ratio(f->hit_pages, f->pages)) : 0,
			b, (double)svc / 1e6);
		nf++;
	}
	if (!nf || !(r = reco_new(m, "stage")))
		return;
	snprintf(r->text, sizeof(r->text),
		 "stage %zu hot, re-read file(s) to faster storage (local NVMe, tmpfs) "
		 "or cache them in memory: they are read repeatedly from the device", nf);
	snprintf(r->evidence, sizeof(r->evidence), "%s", ev);
}

/* Every recommendation, in the order they are shown */
void rpt_recommend(struct rpt_model *m)
{
	for (size_t i = 0; i < m->nloops; i++) {
		reco_wait(m, m->loops[i]);
		reco_no_workers(m, m->loops[i]);
	}
	reco_remote_data(m);
	reco_loader(m);
	reco_checkpoints(m);
	reco_shard(m);
	reco_stage(m);
}

void rpt_small_files(struct rpt_model *m)
{
	for (size_t i = 0; i < m->nfiles; i++) {
		struct rpt_file *f = &m->files[i];

		/* pages the buffered reads touched that no read had to add */
		f->hit_pages = f->pages - (f->miss_pages < f->pages ? f->miss_pages : f->pages);
		m->pages += f->pages;
		m->hit_pages += f->hit_pages;
		m->miss_pages += f->miss_pages;

		if (f->role != RPT_ROLE_DATA || !f->rops || !f->rbytes)
			continue;
		m->read_files++;
		if (f->extent && f->extent < RPT_SMALL_FILE && f->rbytes <= f->extent) {
			m->small_files++;
			m->small_bytes += f->rbytes;
			m->small_rops += f->rops;
		}
	}
}
