// SPDX-License-Identifier: MIT
/*
 * export_pftrace.c — capture -> Perfetto's native protobuf (.pftrace[.gz]).
 *
 * The same model as the JSON export (export_model.h), rendered as
 * TracePackets (pftrace.h) in the same order and with the same content:
 *
 *  - a ProcessDescriptor track per process (pid, "comm: argv"), a
 *    ThreadDescriptor track per thread (pid, tid, comm);
 *  - io_uring lanes: tracks "io_uring lane N" whose parent is the process;
 *  - a track "disk NAME" per disk, with child tracks "lane N" (explicit
 *    order) and two counter tracks "throughput NAME read_MiBps" and
 *    "... write_MiBps" (unit MiB/s), as Perfetto names the JSON counter's
 *    args;
 *  - a slice = TYPE_SLICE_BEGIN (category, name, args as debug annotations)
 *    + TYPE_SLICE_END on its track; JSON µs values become doubles in µs,
 *    JSON nulls are left out;
 *  - flows: a call bound to k block requests lists k flow_ids, each request
 *    ends one of them (terminating_flow_ids), so every arrow of the JSON's
 *    bind_id fan-out is there;
 *  - GPUs as disks: a track "GPU N" with child tracks per stream lane and a
 *    counter track "GPU N busy fraction"; host-side GPU slices on the
 *    thread's track or an overlap lane (a track under the process, like
 *    io_uring lanes); API call -> activity arrows as flow_ids /
 *    terminating_flow_ids (exp_gpu_flow_id);
 *  - a track "gpuio" with the "gpuio trace info" instant at ts 0.
 *
 * Track uuids are PFT_UUID(id, kind) (pftrace.h), from the ids the JSON uses.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "export/export.h"
#include "model/model.h"
#include "lib/log.h"
#include "lib/out_file.h"
#include "export/pftrace.h"


struct pexp {
	struct exp_model *m;
	struct pftrace *p;
	struct exp_args args;
	uint64_t *flows;
	size_t cflows;
};

static void emit_process_meta(struct pexp *x)
{
	struct exp_model *m = x->m;
	char name[EXP_PROC_NAME_BUF], comm[32];
	size_t t = 0;

	for (size_t i = 0; i < m->nprocs; i++) {
		struct proc_ent *p = &m->procs[i];
		uint32_t pid = exp_pid(m, p->pid);
		size_t n = exp_model__proc_name(m, p, name, sizeof(name));

		pftrace__process(x->p, PFT_UUID(pid, PFT_PROCESS), pid, name, n);
		for (; t < m->nthreads && m->threads[t].pid == p->pid; t++) {
			const struct thread_ent *th = &m->threads[t];
			uint32_t tid = exp_pid(m, th->tid);
			size_t tl;
			const char *tn = exp_model__thread_name(m, p, th, comm, &tl);

			pftrace__thread(x->p, PFT_UUID(tid, PFT_THREAD), pid, tid, tn, tl);
		}
		for (size_t l = 0; l < m->nulanes; l++) {
			const struct lane_ent *le = &m->ulanes[l];

			if (le->pid != p->pid)
				continue;
			n = (size_t)snprintf(name, sizeof(name), "io_uring lane %u", le->n);
			pftrace__track(x->p, PFT_UUID(le->tid, PFT_URING), PFT_UUID(pid, PFT_PROCESS), name, n,
				       false, -1);
		}
		/* a thread's CUDA/NVTX slices that do not nest: io_uring-like lanes */
		for (size_t l = 0; l < m->gpu.nglanes; l++) {
			const struct ghost_lane *gl = &m->gpu.glanes[l];

			if (gl->pid != p->pid)
				continue;
			n = exp_model__ghost_lane_name(gl, name, sizeof(name));
			pftrace__track(x->p, PFT_UUID(gl->out_tid, PFT_URING), PFT_UUID(pid, PFT_PROCESS),
				       name, n, false, -1);
		}
	}
}

static void emit_vfs(struct pexp *x, const struct gpuio_vfs_event *e)
{
	struct exp_model *m = x->m;
	struct pftrace_flows f = { .out = x->flows };
	struct exp_vfs v;
	uint64_t track;

	exp_model__vfs(m, e, &v, &x->args);
	track = v.async ? PFT_UUID(v.tid, PFT_URING) : PFT_UUID(v.tid, PFT_THREAD);
	f.nout = v.nflows;
	if (array_grow((void **)&x->flows, &x->cflows, f.nout, sizeof(*x->flows)))
		f.nout = x->cflows;     /* out of memory: fewer arrows, not a failure */
	f.out = x->flows;
	for (size_t k = 0; k < f.nout; k++)
		x->flows[k] = exp_flow_id(m, v.ftid, v.fseq, (uint32_t)k + 1);
	pftrace__slice_begin(x->p, exp_ts(m, v.ts), track, "vfs", v.name, v.name != v.namebuf,
			     &x->args, f.nout ? &f : NULL);
	pftrace__slice_end(x->p, exp_ts(m, v.ts + v.dur), track);
}

static int pass_vfs(struct pexp *x)
{
	const struct gpuio_vfs_event *e;
	int rc;

	while ((rc = exp_model__next_vfs(x->m, &e)) > 0) {
		emit_vfs(x, e);
		if (pftrace__error(x->p))
			return pftrace__error(x->p);
	}
	return rc;
}

static void emit_block(struct pexp *x, const struct blk_ent *b, size_t disk, const char *dname)
{
	struct exp_model *m = x->m;
	struct pftrace_flows f = { 0 };
	struct exp_block o;
	uint64_t track, id;

	exp_model__block(m, b, disk, dname, &o, &x->args);
	track = PFT_UUID(o.tid, PFT_LANE);
	if (o.flow_k) {
		id = exp_flow_id(m, o.ftid, o.fseq, o.flow_k);
		f.in = &id;
		f.nin = 1;
	}
	pftrace__slice_begin(x->p, exp_ts(m, o.ts), track, "block", o.name, true, &x->args,
			     f.nin ? &f : NULL);
	pftrace__slice_end(x->p, exp_ts(m, o.end), track);
}

static void emit_disks(struct pexp *x)
{
	struct exp_model *m = x->m;
	size_t i = 0;

	for (size_t d = 0; d < m->ndisks; d++) {
		struct dev_ent *dev = &m->devs[m->disk_order[d]];
		uint32_t pid = exp_disk_pid(m, d);
		uint64_t disk = PFT_UUID(pid, PFT_DISK);
		uint64_t rd_track = PFT_UUID((uint64_t)pid << 1, PFT_COUNTER);
		uint64_t wr_track = PFT_UUID((uint64_t)pid << 1 | 1, PFT_COUNTER);
		char dname[48], name[160];
		struct exp_counter_it it = { 0 };
		double r, w;
		uint64_t t;
		int n;

		exp_model__disk_name(dev, dname, sizeof(dname));
		n = snprintf(name, sizeof(name), "%sdisk %s", m->map.prefix, dname);
		pftrace__track(x->p, disk, 0, name, (size_t)n, true, -1);
		snprintf(name, sizeof(name), "throughput %s read_MiBps", dname);
		pftrace__counter_track(x->p, rd_track, disk, name, "MiB/s");
		snprintf(name, sizeof(name), "throughput %s write_MiBps", dname);
		pftrace__counter_track(x->p, wr_track, disk, name, "MiB/s");
		for (uint32_t l = 1; l <= dev->nlanes; l++) {
			n = snprintf(name, sizeof(name), "lane %u", l);
			pftrace__track(x->p, PFT_UUID(exp_lane_tid(m, d, l), PFT_LANE), disk, name,
				       (size_t)n, false, l);
		}
		for (; i < m->nblks && m->blks[i].disk == d; i++)
			emit_block(x, &m->blks[i], d, dname);
		while (exp_model__next_counter(m, dev, &it, &t, &r, &w)) {
			pftrace__counter(x->p, exp_ts(m, t), rd_track, r);
			pftrace__counter(x->p, exp_ts(m, t), wr_track, w);
		}
	}
}

static void emit_gslice(struct pexp *x, const struct exp_gslice *o)
{
	struct exp_model *m = x->m;
	struct pftrace_flows f = { 0 };
	uint64_t track, id;

	track = o->track == EXP_GS_GPULANE ? PFT_UUID(o->tid, PFT_LANE) :
		o->track == EXP_GS_HOSTLANE ? PFT_UUID(o->tid, PFT_URING) :
		PFT_UUID(o->tid, PFT_THREAD);
	if (o->nflows) {
		f.nout = o->nflows;
		if (array_grow((void **)&x->flows, &x->cflows, f.nout, sizeof(*x->flows)))
			f.nout = x->cflows;     /* out of memory: fewer arrows, not a failure */
		for (size_t k = 0; k < f.nout; k++)
			x->flows[k] = exp_gpu_flow_id(o->fkey, (uint32_t)k + 1);
		f.out = x->flows;
	} else if (o->flow_k) {
		id = exp_gpu_flow_id(o->fkey, o->flow_k);
		f.in = &id;
		f.nin = 1;
	}
	pftrace__slice_begin(x->p, exp_ts(m, o->ts), track, o->cat, o->name, o->name_static,
			     &x->args, f.nout || f.nin ? &f : NULL);
	pftrace__slice_end(x->p, exp_ts(m, o->ts + o->dur), track);
}

/*
 * GPUs, as disks: a track "GPU N" with a child track per stream lane and a
 * counter track "GPU N busy fraction" (the JSON counter "GPU N busy", arg
 * fraction). Uuids reuse the disk kinds: GPU pids and lane tids are in
 * ranges of their own (EXP_GPU_PID_BASE, EXP_GPU_TID_BASE).
 */
static int emit_gpus(struct pexp *x)
{
	struct exp_model *m = x->m;
	struct exp_gslice *o;
	char name[160];
	int rc;

	for (size_t k = 0; k < m->gpu.ndevs; k++) {
		const struct gpu_dev *d = &m->gpu.devs[m->gpu.dev_order[k]];
		uint32_t pid = exp_gpu_pid(m, k);
		uint64_t gpu = PFT_UUID(pid, PFT_DISK);
		char gname[16];
		int n;

		exp_model__gpu_name(d, gname, sizeof(gname));
		n = snprintf(name, sizeof(name), "%s%s", m->map.prefix, gname);
		pftrace__track(x->p, gpu, 0, name, (size_t)n, true, -1);
		snprintf(name, sizeof(name), "%s busy fraction", gname);
		pftrace__counter_track(x->p, PFT_UUID((uint64_t)pid << 1, PFT_COUNTER), gpu, name,
				       "fraction");
	}
	for (size_t i = 0; i < m->gpu.ntracks; i++) {
		const struct gpu_track *t = &m->gpu.tracks[i];
		uint32_t pid = exp_gpu_pid(m, m->gpu.devs[t->dev_idx].index);

		for (uint32_t l = 1; l <= t->nlanes; l++) {
			size_t n = exp_model__gpu_lane_name(m, t, l, name, sizeof(name));

			pftrace__track(x->p, PFT_UUID(t->tid0 + l - 1, PFT_LANE),
				       PFT_UUID(pid, PFT_DISK), name, n, false, t->rank + l);
		}
	}
	o = malloc(sizeof(*o));
	if (!o)
		return -ENOMEM;
	exp_model__gpu_rewind(m);
	while ((rc = exp_model__next_gpu(m, o, &x->args)) > 0) {
		emit_gslice(x, o);
		if (pftrace__error(x->p)) {
			rc = pftrace__error(x->p);
			break;
		}
	}
	free(o);
	if (rc < 0)
		return rc;
	for (size_t k = 0; k < m->gpu.ndevs; k++) {
		const struct gpu_dev *d = &m->gpu.devs[m->gpu.dev_order[k]];
		uint64_t track = PFT_UUID((uint64_t)exp_gpu_pid(m, k) << 1, PFT_COUNTER);
		struct exp_counter_it it = { 0 };
		uint64_t t;
		double v;

		while (exp_model__next_gpu_counter(m, d, &it, &t, &v))
			pftrace__counter(x->p, exp_ts(m, t), track, v);
	}
	return 0;
}

static void emit_info(struct pexp *x)
{
	struct exp_model *m = x->m;
	uint64_t track = PFT_UUID(exp_info_pid(m), PFT_INFO);
	char name[96];
	int n;

	exp_model__info(m, &x->args);
	n = snprintf(name, sizeof(name), "%sgpuio", m->map.prefix);
	pftrace__track(x->p, track, 0, name, (size_t)n, false, -1);
	pftrace__instant(x->p, m->map.ts_base, track, "gpuio", "gpuio trace info", &x->args);
}

static int write_capture(struct pexp *x)
{
	uint64_t start = pftrace__packets(x->p);
	int err;

	emit_process_meta(x);
	err = exp_model__rewind(x->m);
	if (err)
		return err;
	err = pass_vfs(x);
	if (err)
		return exp_model__said(x->m, err);
	emit_disks(x);
	err = emit_gpus(x);
	if (err)
		return exp_model__said(x->m, err);
	emit_info(x);
	x->m->st.events = pftrace__packets(x->p) - start;
	return pftrace__error(x->p);
}

bool gpuio_export__is_pftrace_name(const char *name)
{
	size_t n = strlen(name);

	return (n > 8 && !strcmp(name + n - 8, ".pftrace")) ||
	       (n > 11 && !strcmp(name + n - 11, ".pftrace.gz"));
}

bool gpuio_export__is_output_name(const char *name)
{
	return gpuio_export__is_json_name(name) || gpuio_export__is_pftrace_name(name);
}

int gpuio_export_pftrace_models(struct exp_model *const *models, int n, const char *out_path,
				const struct gpuio_export_opts *opts, uint64_t *events,
				uint64_t *bytes)
{
	bool to_stdout = !strcmp(out_path, "-");
	const char *caps[64];
	struct exp_output out;
	struct out_file *of = NULL;
	struct pexp x = { 0 };
	const struct gpuio_cap_header *h0 = models[0]->hdr;
	int err, cerr;

	for (int i = 0; i < n && i < 64; i++)
		caps[i] = models[i]->path;
	err = exp_output__open(&out, out_path, caps, n < 64 ? n : 64, opts);
	if (err)
		return err;
	err = out_file__new(out.fd, !to_stdout && gpuio_export__is_gz(out_path), !to_stdout, &of);
	if (!err)
		err = pftrace__new(&x.p);
	if (err) {
		pr_err("cannot write %s: %s", out_path, strerror(-err));
		if (!of && !to_stdout)
			close(out.fd);
		goto fail;
	}
	/* the output's clock is the first capture's, shifted like its events */
	err = pftrace__start(x.p, of, exp_ts(models[0], h0->monotonic_ns), h0->realtime_ns);
	for (int i = 0; i < n && !err; i++) {
		x.m = models[i];
		err = write_capture(&x);
	}
	if (!err)
		err = pftrace__detach(x.p);
	if (bytes)
		*bytes = pftrace__bytes(x.p);
	if (events)
		*events = pftrace__packets(x.p);
	cerr = out_file__close(of);
	of = NULL;
	if (!err)
		err = cerr;
	if (err) {
		if (err != -EBADMSG)
			pr_err("cannot write %s: %s%s", out_path, strerror(-err), exp_write_hint(err));
		goto fail;
	}
	pftrace__free(x.p);
	free(x.flows);
	return exp_output__commit(&out);
fail:
	out_file__close(of);
	pftrace__free(x.p);
	free(x.flows);
	exp_output__abort(&out);
	return err;
}

int gpuio_export_pftrace(const char *capture_path, const char *out_path,
			 const struct gpuio_export_opts *opts, struct gpuio_export_stats *st)
{
	return exp_model__export_one(capture_path, out_path, opts, st,
				     gpuio_export_pftrace_models);
}

int gpuio_export(const char *capture_path, const char *out_path,
		 const struct gpuio_export_opts *opts, struct gpuio_export_stats *st)
{
	if (gpuio_export__is_pftrace_name(out_path))
		return gpuio_export_pftrace(capture_path, out_path, opts, st);
	return gpuio_export_json(capture_path, out_path, opts, st);
}
