// SPDX-License-Identifier: MIT
/*
 * unit_report_hosts — which loop `report --hosts` names the straggler
 * (report/report_hosts.c): the largest share of its run waiting for data,
 * among the loops that ran at least a quarter of the longest loop's run. An
 * alert's dump can hold the last 0.2 s of another job's loop, waiting 90% of
 * them (seen in t_alert_dump); a whole loop that waited 78% must win.
 */
#include <string.h>
#include "capture/capture.h"
#include "report/report.h"
#include "report/report_model.h"
#include "unit.h"

#define S 1000000000ull

static void loop(struct rpt_wait *w, uint64_t s, uint64_t e, uint64_t data)
{
	memset(w, 0, sizeof(*w));
	w->span_s = s;
	w->span_e = e;
	w->ns[RPT_TW_DATA] = data;
}

static void host(struct rpt_model *m, struct gpuio_cap_header *h, const char *name,
		 struct rpt_wait **loops, size_t n)
{
	memset(m, 0, sizeof(*m));
	gpuio_cap_header__init(h, 2, 0);
	h->monotonic_ns = 100 * S;
	h->realtime_ns = 1800000000 * S;
	snprintf(h->hostname, sizeof(h->hostname), "%s", name);
	m->hdr = h;
	m->loops = loops;
	m->nloops = n;
}

int main(void)
{
	struct gpuio_cap_header h1, h2;
	struct rpt_model m1, m2;
	struct rpt_model *models[] = { &m1, &m2 };
	struct rpt_wait whole, fragment, rank, *l1[2] = { &whole, &fragment }, *l2[1] = { &rank };
	struct rpt_hosts *j;

	/* n1: the starving job's loop (20 s, 78%) and another job's last 0.16 s (92%) */
	loop(&whole, 0, 20 * S, 156 * S / 10);
	loop(&fragment, 0, 162 * S / 1000, 149 * S / 1000);
	/* n2: a rank that waited 40% of its 18 s */
	loop(&rank, S, 19 * S, 72 * S / 10);
	host(&m1, &h1, "n1", l1, 2);
	host(&m2, &h2, "n2", l2, 1);
	j = rpt_hosts__build(models, 2);
	CHECK(j && j->straggler == 0 && j->loop == 0, "straggler host %d loop %zu, want n1's whole loop",
	      j ? j->straggler : -9, j ? j->loop : 99);
	rpt_hosts__free(j);

	/* a loop of exactly a quarter of the longest still counts */
	loop(&fragment, 0, 5 * S, 45 * S / 10);
	j = rpt_hosts__build(models, 2);
	CHECK(j && j->straggler == 0 && j->loop == 1, "a quarter's loop at 90%%: host %d loop %zu",
	      j ? j->straggler : -9, j ? j->loop : 99);
	rpt_hosts__free(j);

	/* just under a quarter does not; the largest share among the rest wins */
	loop(&fragment, 0, 5 * S - 1, 45 * S / 10);
	loop(&whole, 0, 20 * S, 4 * S);
	j = rpt_hosts__build(models, 2);
	CHECK(j && j->straggler == 1 && j->loop == 0, "20%% vs n2's 40%%: host %d loop %zu",
	      j ? j->straggler : -9, j ? j->loop : 99);
	rpt_hosts__free(j);

	/* stand-ins (no loop found) are never the straggler */
	rank.stand_in = whole.stand_in = fragment.stand_in = true;
	j = rpt_hosts__build(models, 2);
	CHECK(j && j->straggler == -1, "stand-ins only: straggler %d", j ? j->straggler : -9);
	rpt_hosts__free(j);
	return unit_done("unit_report_hosts");
}
