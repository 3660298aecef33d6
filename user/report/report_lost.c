// SPDX-License-Identifier: MIT
/*
 * report_lost.c — what the ring lost, back into the totals: LOST_CALLS
 * records (bpf/trace/ledger.bpf.h, written at the end of a trace) hold the
 * kernel's sums of the file calls and block requests whose records found
 * the ring full. File calls go into the calls, bytes and call time per
 * file, per process and of the run; block requests into the requests and
 * bytes per disk, of the run and per file. Their latencies, offsets,
 * threads and timelines are gone: the report's LOSSY warning says so.
 */
#include <linux/types.h>
#include "bpf/gpuio_abi.h"
#include "model/calls.h"
#include "report/report_priv.h"

/* A disk's requests of one op (and its file's share). */
static int lost_requests(struct rpt_model *m, const struct gpuio_lost_calls *e)
{
	unsigned op = e->call & ~GPUIO_LOST_BLOCK;
	struct rpt_dev *d;
	int rc;

	if (op > GPUIO_BLK_OTHER)
		op = GPUIO_BLK_OTHER;
	if ((rc = rpt_dev_get(m, e->dev, &d)))
		return rc;
	m->ledger_reqs += e->count;
	m->blk_reqs += e->count;
	d->ops[op] += e->count;
	d->bytes[op] += e->bytes;
	d->s_sum += e->dur_ns;
	if (op == GPUIO_BLK_READ) {
		m->blk_rops += e->count;
		m->blk_rbytes += e->bytes;
	} else if (op == GPUIO_BLK_WRITE) {
		m->blk_wops += e->count;
		m->blk_wbytes += e->bytes;
	}
	rpt_file_blk(m, e->file_dev, e->ino, op, e->bytes, e->count, e->dur_ns);
	return 0;
}

int rpt_on_lost_calls(void *ctx, const struct gpuio_lost_calls *e)
{
	struct rpt_model *m = ctx;
	unsigned call = e->call;
	bool rd = gpuio_call__is_read(call) || gpuio_call__two_files(call), wr = gpuio_call__is_write(call);
	uint64_t bytes = gpuio_call__moves_bytes(call) ? e->bytes : 0;
	struct rpt_file *f;
	struct rpt_proc *p;
	int rc;

	if (call & GPUIO_LOST_BLOCK)
		return lost_requests(m, e);
	if ((rc = rpt_proc_get(m, e->hdr.pid, &p)))
		return rc;
	m->ledger_calls += e->count;
	m->vfs_calls += e->count;
	if (rd) {
		m->vfs_rops += e->count;
		m->vfs_rbytes += bytes;
		p->rbytes += bytes;
	} else if (wr) {
		m->vfs_wops += e->count;
		m->vfs_wbytes += bytes;
		p->wbytes += bytes;
	}
	if (!e->ino && !e->dev)
		return 0;
	if ((rc = rpt_file_get(m, e->dev, e->ino, &f)))
		return rc;
	rpt_file_pid(f, e->hdr.pid);
	f->special |= rpt_special_ftype(e->ftype);
	if (rd) {
		f->rops += e->count;
		f->rbytes += bytes;
		f->rtime += e->dur_ns;
	} else if (wr) {
		f->wops += e->count;
		f->wbytes += bytes;
		f->wtime += e->dur_ns;
	} else {
		f->other_ops += e->count;
		f->otime += e->dur_ns;
	}
	return 0;
}
