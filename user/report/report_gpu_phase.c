// SPDX-License-Identifier: MIT
/*
 * report_gpu_phase.c — a GPU's idle time by phase of its process's
 * training loop: before the loop's first step (start-up: imports, model
 * building, workers starting), between its first and last step (where a
 * data pipeline shows), after the last (shutdown, evaluation, saving) —
 * and, between steps, what the launching thread was doing (its states,
 * report_gpu.c). A run's seconds of start-up must not read as the loop's
 * idle GPU.
 */
#include "report/report_model.h"
#include "report/report_priv.h"

enum { BEFORE, BETWEEN, AFTER };

static uint64_t overlap(uint64_t a, uint64_t b, uint64_t s, uint64_t e)
{
	uint64_t lo = a > s ? a : s, hi = b < e ? b : e;

	return hi > lo ? hi - lo : 0;
}

/* The loop of pid with the most steps, NULL none */
static const struct rpt_wait *loop_of(const struct rpt_model *m, uint32_t pid)
{
	const struct rpt_wait *best = NULL;

	for (size_t i = 0; i < m->nloops; i++)
		if (m->loops[i]->pid == pid && m->loops[i]->nsteps &&
		    (!best || m->loops[i]->nsteps > best->nsteps))
			best = m->loops[i];
	return best;
}

static void phase(struct rpt_model *m, struct rpt_gpu *g)
{
	const struct rpt_wait *w = loop_of(m, g->pid);
	uint64_t s, e;

	if (!w)
		return;
	s = w->steps[0].s;
	e = s + rpt_wait__steps_span(w);
	g->phased = true;
	for (size_t k = g->gap0; k < g->gap0 + g->ngap && k < m->ngaps; k++) {
		const struct rpt_gap *gp = &m->gaps[k];
		uint64_t len = gp->e - gp->s, in = overlap(gp->s, gp->e, s, e);

		g->phase_ns[BEFORE] += overlap(gp->s, gp->e, 0, s);
		g->phase_ns[BETWEEN] += in;
		g->phase_ns[AFTER] += overlap(gp->s, gp->e, e, UINT64_MAX);
		/* the launcher's states, the part of the gap between steps */
		for (int c = 0; in && len && c < RPT_LS_N; c++)
			g->between_launch_ns[c] += (uint64_t)((double)gp->launch_ns[c] * in / len);
	}
}

void rpt_gpu_phases(struct rpt_model *m)
{
	for (size_t i = 0; i < m->ngpus; i++)
		phase(m, &m->gpus[i]);
}
