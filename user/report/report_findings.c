// SPDX-License-Identifier: MIT
/*
 * report_findings.c — the report's answer as tracks for the exporters
 * (model/findings.h): each loop's steps, each with the loop thread's time
 * by kind inside it, and the GPU idle gaps with their causes and the
 * launching thread's state. The numbers are the report's own (the JSON's
 * loops[].steps[] and largest_gaps[] carry the same), not recomputed.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "report/report.h"
#include "report/report_priv.h"
#include "report/report_net.h"
#include "model/findings.h"

static const char *ls_names[RPT_LS_N];

static int steps(const struct rpt_model *m, const struct rpt_wait *w, struct findings *f)
{
	struct finding_track *t = findings__track(f, FINDING_STEPS);
	size_t used = 0;

	if (!t)
		return -ENOMEM;
	t->pid = w->pid;
	t->tid = w->tid;
	t->loop = w->index;
	t->thread = rpt_wait__thread(m, w);
	t->names = rpt_tw_names;
	t->nnames = RPT_TW_N;
	t->ns_key = "time_us";
	snprintf(t->files, sizeof(t->files), "%s", w->glob);
	for (size_t i = 0; i < w->npeers && used < sizeof(t->peers); i++) {
		int n = snprintf(t->peers + used, sizeof(t->peers) - used, "%s%s", i ? ", " : "",
				 m->net->peers[w->peers[i]].name);

		if (n > 0)
			used += (size_t)n;
	}
	for (size_t i = 0; i < w->nsteps; i++) {
		const struct rpt_step *st = &w->steps[i];
		struct finding_slice *s = findings__slice(t);

		if (!s)
			return -ENOMEM;
		s->s = st->s;
		s->e = st->s + st->wait_ns + st->compute_ns;
		s->index = (uint32_t)i + 1;
		s->wait_ns = st->wait_ns;
		s->rest_ns = st->compute_ns;
		s->cause = rpt_tw_cause(st->ns);
		memcpy(s->ns, st->ns, sizeof(st->ns));
	}
	return 0;
}

/* The gap's cause: the launcher's largest state off the CPU when the
 * thread states say it, else the largest of what the host did meanwhile. */
static const char *gap_cause(const struct rpt_model *m, const struct rpt_gap *gp)
{
	int best = -1;

	if (m->launch_states && gp->launcher_tid) {
		for (int k = 0; k < RPT_LS_N; k++)
			if (gp->launch_ns[k] && (best < 0 || gp->launch_ns[k] > gp->launch_ns[best]))
				best = k;
		if (best >= 0)
			return ls_names[best];
	}
	for (int c = 0; c < RPT_CAUSE_N; c++)
		if (gp->cause_ns[c] && (best < 0 || gp->cause_ns[c] > gp->cause_ns[best]))
			best = c;
	return best < 0 ? rpt_cause_names[RPT_CAUSE_NONE] : rpt_cause_names[best];
}

static int gaps(const struct rpt_model *m, struct findings *f)
{
	struct finding_track *t = NULL;
	uint32_t cur = UINT32_MAX;

	/* gaps[] is grouped by GPU (one process's view of a device) */
	for (size_t k = 0; k < m->ngaps; k++) {
		const struct rpt_gap *gp = &m->gaps[k];
		struct finding_slice *s;

		if (gp->e - gp->s < f->gap_min_ns && (gp->top < 0 || (unsigned)gp->top >= f->gap_top))
			continue;
		if (gp->gpu != cur) {
			t = findings__track(f, FINDING_GPU_GAPS);
			if (!t)
				return -ENOMEM;
			cur = gp->gpu;
			t->pid = m->gpus[cur].pid;
			t->device = m->gpus[cur].device;
			t->names = rpt_cause_names;
			t->nnames = RPT_CAUSE_N;
			t->ns_key = "by_cause_us";
			if (m->launch_states) {
				t->names2 = ls_names;
				t->nnames2 = RPT_LS_N;
			}
		}
		s = findings__slice(t);
		if (!s)
			return -ENOMEM;
		s->s = gp->s;
		s->e = gp->e;
		s->launcher_tid = gp->launcher_tid;
		s->cause = gap_cause(m, gp);
		memcpy(s->ns, gp->cause_ns, sizeof(gp->cause_ns));
		memcpy(s->ns2, gp->launch_ns, sizeof(gp->launch_ns));
	}
	return 0;
}

int rpt_findings__build(const struct rpt_model *m, struct findings *f)
{
	int rc = 0;

	_Static_assert(RPT_TW_N <= FINDING_KINDS_MAX && RPT_LS_N <= FINDING_KINDS_MAX &&
		       RPT_CAUSE_N <= FINDING_KINDS_MAX, "findings hold every kind");
	for (int k = 0; k < RPT_LS_N; k++)
		ls_names[k] = rpt_ls_name(k);
	for (size_t i = 0; i < m->nloops && !rc; i++)
		if (m->loops[i]->nsteps)
			rc = steps(m, m->loops[i], f);
	if (!rc)
		rc = gaps(m, f);
	if (rc)
		findings__free(f);
	return rc;
}
