// SPDX-License-Identifier: MIT
/*
 * report_thread_time.c — each thread's time by state as the kernel summed it
 * (THREAD_TIME records: bpf/trace/thread_time.bpf.h), written at its exit or
 * the end of the trace. They are exact whatever scheduler records the ring
 * lost or shed; the THREADS table shows them, the loops' causes (which need
 * the records) stay drawn from the surviving ones.
 */
#include <linux/types.h>
#include "bpf/gpuio_abi.h"
#include "report/report_priv.h"

int rpt_on_thread_time(void *ctx, const struct gpuio_thread_time *e)
{
	struct rpt_model *m = ctx;
	struct rpt_thread *t;
	/* its wall time (first to last record) takes in the span of the sums */
	int rc = rpt_thread_get(m, e->hdr.pid, e->hdr.tid, e->from, e->hdr.ts, &t);

	if (rc)
		return rc;
	if (!t->kt_known) {
		m->kt_threads++;
		t->kt_known = true;
		t->kt_from = e->from;
	}
	/* a tid reused in the trace: both threads' sums, as its other records are */
	for (int k = 0; k < GPUIO_TS_N; k++)
		t->kt_ns[k] += e->ns[k];
	t->kt_flags |= e->flags;
	if (e->from < t->kt_from)
		t->kt_from = e->from;
	if (e->hdr.ts > t->kt_to)
		t->kt_to = e->hdr.ts;
	return 0;
}
