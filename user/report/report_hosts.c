// SPDX-License-Identifier: MIT
/*
 * report_hosts.c — several captures of one job (its hosts, or ranks traced
 * apart): which host's loop waited the largest share of its run (the
 * straggler), for what, and what every other host's loops were doing
 * during the straggler's waits for data (blocked in a collective shows up
 * here: in socket, futex or poll calls, or a CUDA sync). The hosts' clocks
 * meet through each capture's REALTIME/MONOTONIC anchor, as in a merge.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "report/report.h"
#include "report/report_priv.h"

/* When the capture's host booted, by its wall clock. */
static int64_t boot_wall(const struct rpt_model *m)
{
	return (int64_t)(m->hdr->realtime_ns - m->hdr->monotonic_ns);
}

static double waited(const struct rpt_wait *w)
{
	uint64_t span = rpt_wait__span(w);

	return span ? (double)rpt_wait__data(w) / (double)span : 0;
}

static void label(struct rpt_hosts *j, int i)
{
	const char *name = j->h[i].m->hdr->hostname;
	int len = (int)strnlen(name, sizeof(j->h[i].m->hdr->hostname));
	bool dup = false;

	for (int k = 0; k < j->n; k++)
		if (k != i && !strncmp(name, j->h[k].m->hdr->hostname, sizeof(j->h[k].m->hdr->hostname)))
			dup = true;
	if (!len)
		name = "host", len = 4;
	snprintf(j->h[i].label, sizeof(j->h[i].label), dup ? "%.*s#%d" : "%.*s", len, name, i + 1);
}

/* o's loop's time by kind inside the straggler loop's waits (on o's clock). */
static void meanwhile(const struct rpt_hosts *j, int o, const struct rpt_wait *w, uint64_t *ns)
{
	const struct rpt_wait *s = j->h[j->straggler].m->loops[j->loop];
	int64_t d = j->h[j->straggler].shift - j->h[o].shift;

	for (size_t i = 0; i < s->win.n; i++) {
		int64_t a = (int64_t)s->win.a[i].s + d, b = (int64_t)s->win.a[i].e + d;

		if (b <= 0)
			continue;
		for (int k = 0; k < RPT_TW_N; k++)
			ns[k] += rpt_spans_overlap(&w->tw[k], a > 0 ? (uint64_t)a : 0, (uint64_t)b);
	}
}

/*
 * The longest run of a loop in any capture. A loop that ran under a quarter
 * of it is a fragment (a loop that ended or began at the window's edge, a
 * helper thread's short stretch), not the job's straggler: a dump's window
 * can hold the last 0.2 s of another job's loop, waiting 90% of them.
 */
static uint64_t longest_run(struct rpt_model *const *models, int n)
{
	uint64_t best = 0;

	for (int i = 0; i < n; i++)
		for (size_t l = 0; l < models[i]->nloops; l++)
			if (!models[i]->loops[l]->stand_in && rpt_wait__span(models[i]->loops[l]) > best)
				best = rpt_wait__span(models[i]->loops[l]);
	return best;
}

struct rpt_hosts *rpt_hosts__build(struct rpt_model *const *models, int n)
{
	struct rpt_hosts *j = calloc(1, sizeof(*j));
	uint64_t longest = longest_run(models, n);
	double best = -1;

	if (!j)
		return NULL;
	j->h = calloc((size_t)n, sizeof(*j->h));
	if (!j->h) {
		free(j);
		return NULL;
	}
	j->n = n;
	j->straggler = -1;
	for (int i = 0; i < n; i++)
		j->h[i].m = models[i];
	for (int i = 0; i < n; i++) {
		j->h[i].shift = boot_wall(models[i]) - boot_wall(models[0]);
		label(j, i);
		for (size_t l = 0; l < models[i]->nloops; l++) {
			const struct rpt_wait *w = models[i]->loops[l];

			if (!w->stand_in && rpt_wait__span(w) * 4 >= longest && waited(w) > best) {
				best = waited(w);
				j->straggler = i;
				j->loop = l;
			}
		}
	}
	if (j->straggler < 0)
		return j;
	for (int i = 0; i < n; i++) {
		const struct rpt_model *m = models[i];

		j->h[i].meanwhile = calloc(m->nloops ? m->nloops : 1, sizeof(*j->h[i].meanwhile));
		if (!j->h[i].meanwhile) {
			rpt_hosts__free(j);
			return NULL;
		}
		for (size_t l = 0; l < m->nloops; l++)
			if (i != j->straggler)
				meanwhile(j, i, m->loops[l], j->h[i].meanwhile[l]);
	}
	j->window_ns = rpt_spans_overlap(&models[j->straggler]->loops[j->loop]->win, 0, UINT64_MAX);
	return j;
}

void rpt_hosts__free(struct rpt_hosts *j)
{
	if (!j)
		return;
	for (int i = 0; i < j->n; i++)
		free(j->h[i].meanwhile);
	free(j->h);
	free(j);
}

double rpt_hosts__waited(const struct rpt_wait *w)
{
	return waited(w);
}

/* A loop's largest kind meanwhile, not on a CPU ("on_cpu" when only that). */
const char *rpt_hosts__busy_with(const uint64_t ns[RPT_TW_N])
{
	return rpt_tw_cause(ns);
}
