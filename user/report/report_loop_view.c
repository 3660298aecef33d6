// SPDX-License-Identifier: MIT
/*
 * report_loop_view.c — what the renderers ask of a loop, once report_wait.c
 * has built it: its name, data files first with their glob, its span, its
 * largest cause, its one-line headline; the order of the stragglers; freeing
 * the loops.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "report/report_model.h"
#include "report/report_sites.h"
#include "report/report_net.h"
#include "report/report_priv.h"

static void files_glob(const struct rpt_model *m, struct rpt_wait *w)
{
	const char *p0 = NULL, *slash, *dot;
	size_t dl = 0, el = 0, same = 0;

	w->glob[0] = 0;
	if (!w->nfiles)
		return;
	p0 = m->files[w->files[0].file].path;
	if (!p0)
		return;
	slash = strrchr(p0, '/');
	dot = strrchr(p0, '.');
	dl = slash ? (size_t)(slash - p0) + 1 : 0;
	el = dot && dot > slash ? strlen(dot) : 0;
	for (size_t i = 0; i < w->nfiles; i++) {
		const char *q = m->files[w->files[i].file].path;

		if (q && !strncmp(q, p0, dl) && !strchr(q + dl, '/') &&
		    strlen(q) >= el && !strcmp(q + strlen(q) - el, p0 + strlen(p0) - el))
			same++;
	}
	if (same >= 2 && same * 10 >= w->nfiles * 9)
		snprintf(w->glob, sizeof(w->glob), "%.*s*%.*s", (int)dl, p0, (int)el,
			 el ? p0 + strlen(p0) - el : "");
	else
		snprintf(w->glob, sizeof(w->glob), "%s", p0);
}

size_t rpt_straggler(const struct rpt_model *m, size_t i)
{
	return m->straggle ? m->straggle[i] : i;
}

static const struct rpt_model *sort_m;

static int data_first(const void *a, const void *b)
{
	const struct rpt_wait_file *x = a, *y = b;
	bool dx = sort_m->files[x->file].role == RPT_ROLE_DATA;
	bool dy = sort_m->files[y->file].role == RPT_ROLE_DATA;

	if (dx != dy)
		return dx ? -1 : 1;
	return x->ns > y->ns ? -1 : x->ns < y->ns;
}

/*
 * Once paths and roles are known (after rpt_roles): the data files first,
 * and the glob and page-cache hit ratio of the data files only (a worker's
 * imports are not what it waited on).
 */
static void wait_name(struct rpt_model *m, struct rpt_wait *w)
{
	size_t nd = 0;

	sort_m = m;
	if (w->nfiles > 1)      /* qsort must not see a NULL array */
		qsort(w->files, w->nfiles, sizeof(*w->files), data_first);
	w->pages = w->hit_pages = w->read_bytes = 0;
	while (nd < w->nfiles && m->files[w->files[nd].file].role == RPT_ROLE_DATA) {
		const struct rpt_file *f = &m->files[w->files[nd].file];

		w->pages += f->pages;
		w->hit_pages += f->pages > f->miss_pages ? f->pages - f->miss_pages : 0;
		w->read_bytes += w->files[nd].bytes;
		nd++;
	}
	w->ndata_files = nd;
	{
		size_t all = w->nfiles;

		/* the glob looks at the data files only: a remote loader's workers
		 * read nothing but their code (no glob, not the code's path) */
		w->nfiles = nd;
		files_glob(m, w);
		w->nfiles = all;
	}
}

void rpt_wait_name(struct rpt_model *m)
{
	for (size_t i = 0; i < m->nloops; i++)
		wait_name(m, m->loops[i]);
}

void rpt_wait_free(struct rpt_model *m)
{
	for (size_t i = 0; i < m->nloops; i++) {
		free(m->loops[i]->files);
		free(m->loops[i]->steps);
		rpt_loop_sites_free(m->loops[i]);
		free(m->loops[i]->win.a);
		for (int k = 0; k < RPT_TW_N; k++)
			free(m->loops[i]->tw[k].a);
		free(m->loops[i]);
	}
	free(m->loops);
	free(m->straggle);
	m->straggle = NULL;
	m->loops = NULL;
	m->nloops = 0;
	m->wait = NULL;
	free(m->waits);
	m->waits = NULL;
	m->nwaits = m->cwaits = 0;
}

static double share(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : 0;
}

uint64_t rpt_wait__span(const struct rpt_wait *w)
{
	return w->span_e > w->span_s ? w->span_e - w->span_s : 0;
}

uint64_t rpt_wait__data(const struct rpt_wait *w)
{
	return w->next.known ? w->next.ns : w->ns[RPT_TW_DATA];
}

uint64_t rpt_wait__act_total(const struct rpt_wait *w)
{
	uint64_t t = 0;

	for (int k = 0; k < RPT_WA_N; k++)
		t += w->act_ns[k];
	return t;
}

/* The one sentence: how long the loop waited for data, and what the workers did meanwhile. */
const char *rpt_wait__thread(const struct rpt_model *m, const struct rpt_wait *w)
{
	const uint64_t *i = kmap__get((struct kmap *)&m->thread_map, w->pid, w->tid);

	return i ? m->threads[*i].comm : "";
}

const char *rpt_tw_cause(const uint64_t ns[RPT_TW_N])
{
	int best = -1;

	for (int k = 0; k < RPT_TW_N; k++)
		if (k != RPT_TW_CPU && ns[k] && (best < 0 || ns[k] > ns[best]))
			best = k;
	return best < 0 ? "on_cpu" : rpt_tw_names[best];
}

const char *rpt_wait__cause(const struct rpt_wait *w)
{
	return rpt_tw_cause(w->ns);
}

/* "from 4 process(es)", "from 2 thread(s) of its process", or both */
static size_t from_whom(const struct rpt_wait *w, char *buf, size_t len)
{
	size_t np = 0, nt = 0;

	for (size_t i = 0; i < w->nwakers; i++)
		w->wakers[i].thread ? nt++ : np++;
	if (nt && np)
		return (size_t)snprintf(buf, len, "from %zu process(es) and %zu thread(s) of its own", np, nt);
	if (nt)
		return (size_t)snprintf(buf, len, "from %zu thread(s) of its own process", nt);
	return (size_t)snprintf(buf, len, "from %zu process(es)", np);
}

/* The steps' run: from the first step's start to the last one's end (0: no steps) */
uint64_t rpt_wait__steps_span(const struct rpt_wait *w)
{
	const struct rpt_step *l;

	if (!w->nsteps)
		return 0;
	l = &w->steps[w->nsteps - 1];
	return l->s + l->wait_ns + l->compute_ns - w->steps[0].s;
}

/*
 * The answer, from the loop's stacks: "the loop (python3, pid 7 tid 7)
 * spent 2.90 s in next() at train.py:41 run (23% of its steps): 2.10 s
 * asleep for its workers, 0.60 s waiting for a CPU, 0.20 s on a CPU; its
 * producers' reads were 96% at dataset.py:27 load, their CPU 80% in decode".
 */
static void next_headline(const struct rpt_model *m, const struct rpt_wait *w, char *buf, size_t len)
{
	const struct rpt_next *nx = &w->next;
	uint64_t steps = rpt_wait__steps_span(w);
	char t[4][32], site[512], who[96];
	size_t n;

	rpt_fmt_dur(nx->ns, t[0], sizeof(t[0]));
	rpt_fmt_dur(nx->asleep_data_ns + nx->asleep_other_ns, t[1], sizeof(t[1]));
	rpt_fmt_dur(nx->runnable_ns, t[2], sizeof(t[2]));
	rpt_fmt_dur(nx->cpu_ns, t[3], sizeof(t[3]));
	from_whom(w, who, sizeof(who));
	n = (size_t)snprintf(buf, len, "the loop (%s, pid %u tid %u) spent %s in next() at %s "
			     "(%.0f%% of its %s): %s asleep for data %s, %s waiting for a CPU, %s "
			     "on a CPU", rpt_proc_comm(m, w->pid), w->pid, w->tid, t[0],
			     rpt_sites__text(m, nx->site, site, sizeof(site)),
			     share(nx->ns, steps ? steps : rpt_wait__span(w)), steps ? "steps" : "run",
			     t[1], who, t[2], t[3]);
	if (n < len && w->nfetch_sites && w->fetch_bytes) {
		size_t top = 0;         /* the line that read the most */
		uint64_t all = w->fetch_all_bytes > w->fetch_bytes ? w->fetch_all_bytes : w->fetch_bytes;

		for (size_t i = 1; i < w->nfetch_sites; i++)
			if (w->fetch_sites[i].bytes > w->fetch_sites[top].bytes)
				top = i;
		/* stacks on sleeps only place the reads that slept: said so */
		if (w->fetch_bytes * 10 >= all * 9)
			n += (size_t)snprintf(buf + n, len - n, "; its producers' reads were %.0f%% at %s",
					      share(w->fetch_sites[top].bytes, w->fetch_bytes),
					      rpt_sites__text(m, w->fetch_sites[top].site, site, sizeof(site)));
		else
			n += (size_t)snprintf(buf + n, len - n, "; its producers' reads that slept "
					      "(%.0f%% of their bytes; --stacks places every read) were "
					      "%.0f%% at %s", share(w->fetch_bytes, all),
					      share(w->fetch_sites[top].bytes, w->fetch_bytes),
					      rpt_sites__text(m, w->fetch_sites[top].site, site, sizeof(site)));
	}
	if (n < len && w->ncpu_funcs && w->samples) {
		const struct rpt_site *f = rpt_sites__get(m, w->cpu_funcs[0].site);

		snprintf(buf + n, len - n, "%s their CPU %.0f%% in %s", w->nfetch_sites ? "," : ";",
			 share(w->cpu_funcs[0].n, w->samples), f ? f->func : "?");
	}
}

void rpt_wait__headline(const struct rpt_model *m, const struct rpt_wait *w, char *buf, size_t len)
{
	uint64_t span, act;
	char d[32], who[96];
	size_t n;

	buf[0] = 0;
	if (!w)
		return;
	span = rpt_wait__span(w);
	act = rpt_wait__act_total(w);
	if (w->next.known) {
		next_headline(m, w, buf, len);
		return;
	}
	if (w->own_reads) {
		rpt_fmt_dur(w->own_read_ns, d, sizeof(d));
		snprintf(buf, len, "the loop (%s, pid %u tid %u) spent %.0f%% of its run (%s) blocked in "
			 "its own data reads (no workers feed it): file I/O %.0f%%, page faults %.0f%%, "
			 "network %.0f%%", rpt_proc_comm(m, w->pid), w->pid, w->tid,
			 share(w->own_read_ns, span), d, share(w->ns[RPT_TW_FILE_IO], span),
			 share(w->ns[RPT_TW_FAULT], span), share(w->ns[RPT_TW_SOCKET], span));
		return;
	}
	rpt_fmt_dur(w->ns[RPT_TW_DATA], d, sizeof(d));
	from_whom(w, who, sizeof(who));
	/* of its steps where it has them: a run's start-up is not the loop's */
	n = (size_t)snprintf(buf, len, "the loop (%s, pid %u tid %u) waited %.0f%% of its %s (%s) for "
			     "data %s", rpt_proc_comm(m, w->pid), w->pid, w->tid,
			     share(w->ns[RPT_TW_DATA], w->nsteps ? rpt_wait__steps_span(w) : span),
			     w->nsteps ? "steps" : "run", d, who);
	if (n < len && act)
		n += (size_t)snprintf(buf + n, len - n, "; meanwhile they spent %.0f%% reading files",
				      share(w->act_ns[RPT_WA_READ], act));
	if (n < len && act && w->act_ns[RPT_WA_READ] && w->glob[0]) {
		n += (size_t)snprintf(buf + n, len - n, " (%s", w->glob);
		if (n < len && w->pages)
			n += (size_t)snprintf(buf + n, len - n, ", page-cache hit ratio %.0f%%",
					      share(w->hit_pages, w->pages));
		if (n < len)
			n += (size_t)snprintf(buf + n, len - n, ")");
	}
	if (n < len && act && w->act_ns[RPT_WA_FAULT])
		n += (size_t)snprintf(buf + n, len - n, ", %.0f%% in page faults of mapped files",
				      share(w->act_ns[RPT_WA_FAULT], act));
	if (n < len && act && w->act_ns[RPT_WA_NET])
		n += (size_t)snprintf(buf + n, len - n, ", %.0f%% receiving from the network",
				      share(w->act_ns[RPT_WA_NET], act));
	if (n < len && act)
		snprintf(buf + n, len - n, ", %.0f%% on CPU, %.0f%% waiting for a CPU, %.0f%% other",
			 share(w->act_ns[RPT_WA_CPU], act), share(w->act_ns[RPT_WA_RUNNABLE], act),
			 share(w->act_ns[RPT_WA_OTHER], act));
}
