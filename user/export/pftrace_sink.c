// SPDX-License-Identifier: MIT
/*
 * pftrace_sink.c — capture -> Perfetto's native protobuf (.pftrace[.gz]).
 *
 * The same model as the JSON export (model/model.h), rendered as
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
 *    terminating_flow_ids (tl_gpu_flow_id);
 *  - on-CPU samples with their Python stacks (--stacks --sample-hz): Perfetto's
 *    own CPU samples, a packet sequence per sampled thread (pftrace_prof.c);
 *  - thread states: the switches and wake-ups as ftrace sched_switch /
 *    sched_waking / sched_wakeup_new events in per-CPU FtraceEventBundles
 *    (BOOTTIME), from which Perfetto builds its thread_state table (Running,
 *    Runnable, Sleeping, Uninterruptible Sleep on the thread's own track,
 *    wake-up arrows);
 *  - a track "gpuio" with the "gpuio trace info" instant at the trace start.
 *
 * Track uuids are PFT_UUID(id, kind) (pftrace.h), from the ids the JSON uses,
 * with the capture's host index in bits 48+.
 *
 * Several captures (gpuio merge) are several machines: each host's packets
 * carry its TracePacket.machine_id (none for the first), on a sequence of
 * their own that starts with the host's clock snapshot and SystemInfo, so
 * Perfetto's `machine` table has a row per host and pids stay the hosts'
 * own (the merge loads the captures without pid offsets or name prefixes).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "export/formats.h"
#include "export/output.h"
#include "timeline/sink.h"
#include "timeline/timeline.h"
#include "lib/log.h"
#include "lib/out_file.h"
#include "export/pftrace.h"


struct pexp {
	struct tl_sink s;      /* first: the walk's view */
	struct pftrace *p;
	uint64_t *flows;
	size_t cflows;
};

static struct pexp *pexp_of(struct tl_sink *s)
{
	return (struct pexp *)s;
}

/* A track's uuid: the id the JSON uses, its kind and the capture's host. */
#define UUID(s, id, kind) (PFT_UUID(id, kind) | (uint64_t)tl_model__remap((s)->m)->host << 48)

/* Room for n flow ids in x->flows: n, or fewer when out of memory (fewer arrows, not a failure). */
static size_t flows_room(struct pexp *x, size_t n)
{
	if (array_grow((void **)&x->flows, &x->cflows, n, sizeof(*x->flows)))
		return x->cflows;
	return n;
}

static void p_process(struct tl_sink *s, uint32_t pid, const char *name, size_t len,
		      uint64_t sort, const char *labels)
{
	pftrace__process(pexp_of(s)->p, UUID(s, pid, PFT_PROCESS), pid, name, len, labels);
}

static void p_thread(struct tl_sink *s, uint32_t pid, uint32_t tid, const char *name, size_t len,
		     uint64_t sort)
{
	pftrace__thread(pexp_of(s)->p, UUID(s, tid, PFT_THREAD), pid, tid, name, len);
}

static void p_proc_lane(struct tl_sink *s, uint32_t pid, uint32_t tid, const char *name,
			size_t len, uint64_t sort)
{
	pftrace__track(pexp_of(s)->p, UUID(s, tid, PFT_URING), UUID(s, pid, PFT_PROCESS), name,
		       len, false, -1);
}

static void p_vfs(struct tl_sink *s, const struct tl_vfs *v)
{
	struct pexp *x = pexp_of(s);
	struct tl_model *m = s->m;
	struct pftrace_flows f = { 0 };
	uint64_t track;

	track = v->async ? UUID(s, v->tid, PFT_URING) : UUID(s, v->tid, PFT_THREAD);
	f.nout = flows_room(x, v->nflows);
	f.out = x->flows;
	for (size_t k = 0; k < f.nout; k++)
		x->flows[k] = tl_flow_id(m, v->ftid, v->fseq, (uint32_t)k + 1);
	pftrace__slice_begin(x->p, tl_ts(m, v->ts), track, "vfs", v->name, v->name != v->namebuf,
			     &s->args, f.nout ? &f : NULL);
	pftrace__slice_end(x->p, tl_ts(m, v->ts + v->dur), track);
}

/* An on-CPU sample: Perfetto's own CPU sample, on its thread's sequence */
static void p_sample(struct tl_sink *s, const struct tl_sample *o)
{
	pftrace__sample(pexp_of(s)->p, tl_ts(s->m, o->ts), o);
}

/* A disk: a track with its two throughput counter tracks under it. */
static void p_disk(struct tl_sink *s, uint32_t pid, const char *name, size_t len,
		   const char *dname, uint64_t sort)
{
	struct pftrace *p = pexp_of(s)->p;
	uint64_t disk = UUID(s, pid, PFT_DISK);
	char cname[160];

	pftrace__track(p, disk, 0, name, len, true, -1);
	snprintf(cname, sizeof(cname), "throughput %s read_MiBps", dname);
	pftrace__counter_track(p, UUID(s, (uint64_t)pid << 1, PFT_COUNTER), disk, cname, "MiB/s");
	snprintf(cname, sizeof(cname), "throughput %s write_MiBps", dname);
	pftrace__counter_track(p, UUID(s, (uint64_t)pid << 1 | 1, PFT_COUNTER), disk, cname,
			       "MiB/s");
}

static void p_disk_lane(struct tl_sink *s, uint32_t pid, uint32_t tid, uint32_t lane)
{
	char name[32];
	int n = snprintf(name, sizeof(name), "lane %u", lane);

	pftrace__track(pexp_of(s)->p, UUID(s, tid, PFT_LANE), UUID(s, pid, PFT_DISK), name,
		       (size_t)n, false, lane);
}

static void p_block(struct tl_sink *s, const struct tl_block *o)
{
	struct pexp *x = pexp_of(s);
	struct tl_model *m = s->m;
	struct pftrace_flows f = { 0 };
	uint64_t track = UUID(s, o->tid, PFT_LANE), id;

	if (o->flow_k) {
		id = tl_flow_id(m, o->ftid, o->fseq, o->flow_k);
		f.in = &id;
		f.nin = 1;
	}
	pftrace__slice_begin(x->p, tl_ts(m, o->ts), track, "block", o->name, true, &s->args,
			     f.nin ? &f : NULL);
	pftrace__slice_end(x->p, tl_ts(m, o->end), track);
}

static void p_disk_counter(struct tl_sink *s, uint32_t pid, const char *dname, uint64_t t,
			   double rd, double wr)
{
	struct pftrace *p = pexp_of(s)->p;
	uint64_t ts = tl_ts(s->m, t);

	pftrace__counter(p, ts, UUID(s, (uint64_t)pid << 1, PFT_COUNTER), rd);
	pftrace__counter(p, ts, UUID(s, (uint64_t)pid << 1 | 1, PFT_COUNTER), wr);
}

/*
 * GPUs, as disks: a track "GPU N" with a child track per stream lane and a
 * counter track "GPU N busy fraction" (the JSON counter "GPU N busy", arg
 * fraction). Uuids reuse the disk kinds: GPU pids and lane tids are in
 * ranges of their own (TL_GPU_PID_BASE, TL_GPU_TID_BASE).
 */
static void p_gpu(struct tl_sink *s, uint32_t pid, const char *name, size_t len,
		  const char *gname, uint64_t sort)
{
	struct pftrace *p = pexp_of(s)->p;
	uint64_t gpu = UUID(s, pid, PFT_DISK);
	char cname[64];

	pftrace__track(p, gpu, 0, name, len, true, -1);
	snprintf(cname, sizeof(cname), "%s busy fraction", gname);
	pftrace__counter_track(p, UUID(s, (uint64_t)pid << 1, PFT_COUNTER), gpu, cname, "fraction");
}

/* a group of tracks that is no process: a top-level track, its lanes as a GPU's */
static void p_group(struct tl_sink *s, uint32_t pid, const char *name, size_t len, uint64_t sort)
{
	pftrace__track(pexp_of(s)->p, UUID(s, pid, PFT_DISK), 0, name, len, true, -1);
}

static void p_gpu_lane(struct tl_sink *s, uint32_t pid, uint32_t tid, const char *name,
		       size_t len, uint64_t sort)
{
	pftrace__track(pexp_of(s)->p, UUID(s, tid, PFT_LANE), UUID(s, pid, PFT_DISK), name, len,
		       false, (int64_t)sort);
}

static void p_gslice(struct tl_sink *s, const struct tl_gslice *o)
{
	struct pexp *x = pexp_of(s);
	struct tl_model *m = s->m;
	struct pftrace_flows f = { 0 };
	uint64_t track, id;

	track = o->track == TL_GS_GPULANE ? UUID(s, o->tid, PFT_LANE) :
		o->track == TL_GS_HOSTLANE ? UUID(s, o->tid, PFT_URING) :
		UUID(s, o->tid, PFT_THREAD);
	if (o->nflows) {
		f.nout = flows_room(x, o->nflows);
		for (size_t k = 0; k < f.nout; k++)
			x->flows[k] = tl_gpu_flow_id(o->fkey, (uint32_t)k + 1);
		f.out = x->flows;
	} else if (o->flow_k) {
		id = tl_gpu_flow_id(o->fkey, o->flow_k);
		f.in = &id;
		f.nin = 1;
	}
	pftrace__slice_begin(x->p, tl_ts(m, o->ts), track, o->cat, o->name, o->name_static,
			     &s->args, f.nout || f.nin ? &f : NULL);
	pftrace__slice_end(x->p, tl_ts(m, o->ts + o->dur), track);
}

static void p_gpu_counter(struct tl_sink *s, uint32_t pid, const char *gname, uint64_t t,
			  double v)
{
	pftrace__counter(pexp_of(s)->p, tl_ts(s->m, t), UUID(s, (uint64_t)pid << 1, PFT_COUNTER),
			 v);
}

static void p_info(struct tl_sink *s, uint32_t pid, const char *name, size_t len, uint64_t sort)
{
	struct pftrace *p = pexp_of(s)->p;
	uint64_t track = UUID(s, pid, PFT_INFO);

	pftrace__track(p, track, 0, name, len, false, -1);
	pftrace__instant(p, tl_model__anchor(s->m), track, "gpuio", "gpuio trace info", &s->args);
}

static int p_error(const struct tl_sink *s)
{
	return pftrace__error(((const struct pexp *)s)->p);
}

static uint64_t p_events(const struct tl_sink *s)
{
	return pftrace__packets(((const struct pexp *)s)->p);
}

static void p_sched(struct tl_sink *s, const struct tl_sched *o)
{
	pftrace__sched(pexp_of(s)->p, o);
}

static const struct tl_sink_ops pftrace_ops = {
	.process = p_process,
	.thread = p_thread,
	.proc_lane = p_proc_lane,
	.vfs = p_vfs,
	.sample = p_sample,
	.sched = p_sched,
	.disk = p_disk,
	.disk_lane = p_disk_lane,
	.block = p_block,
	.disk_counter = p_disk_counter,
	.gpu = p_gpu,
	.gpu_lane = p_gpu_lane,
	.gslice = p_gslice,
	.group = p_group,
	.gpu_counter = p_gpu_counter,
	.info = p_info,
	.error = p_error,
	.events = p_events,
};

/* Capture m's host as the machine of the packets that follow (its index in a merge). */
static int machine_of(struct pftrace *p, struct tl_model *m)
{
	const struct gpuio_cap_header *h = tl_model__header(m);
	struct pftrace_clocks c = {
		.mono = tl_ts(m, h->monotonic_ns), .real = h->realtime_ns,
		.boot = tl_ts(m, gpuio_cap_header__boottime(h)),
	};

	return pftrace_sink__machine(p, h, tl_model__remap(m)->host, &c);
}

/* The host of capture header h as machine host (its SystemInfo: Perfetto reads
 * the kernel release to decode sched_switch states), clocks c on a change. */
int pftrace_sink__machine(struct pftrace *p, const struct gpuio_cap_header *h, uint32_t host,
			  const struct pftrace_clocks *c)
{
	char kernel[sizeof(h->kernel) + 1], *version;
	struct pftrace_sysinfo si = { .name = h->hostname, .sysname = "Linux", .ncpus = h->ncpus };

	/* the header keeps uname's "release version" */
	snprintf(kernel, sizeof(kernel), "%.*s", (int)sizeof(h->kernel), h->kernel);
	version = strchr(kernel, ' ');
	if (version)
		*version++ = 0;
	si.release = kernel;
	si.version = version;
	return pftrace__machine(p, host, c, &si);
}

int pftrace_sink__export(struct tl_model *const *models, int n, const char *out_path,
			 const struct gpuio_export_opts *opts,
			 const struct gpuio_export_extra *extra, uint64_t *events,
			 uint64_t *bytes)
{
	struct tl_model *machine = n ? models[n - 1] : NULL;
	bool to_stdout = !strcmp(out_path, "-");
	const char *caps[64];
	struct exp_output out;
	struct out_file *of = NULL;
	struct pexp x = { .s.ops = &pftrace_ops };
	const struct gpuio_cap_header *h0 = tl_model__header(models[0]);
	int err, cerr;

	for (int i = 0; i < n && i < 64; i++)
		caps[i] = tl_model__capture_path(models[i]);
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
	{
		struct pftrace_clocks c = {
			.mono = tl_ts(models[0], h0->monotonic_ns), .real = h0->realtime_ns,
			.boot = tl_ts(models[0], gpuio_cap_header__boottime(h0)),
		};

		err = pftrace__start(x.p, of, &c);
	}
	for (int i = 0; i < n && !err; i++) {
		err = machine_of(x.p, models[i]);
		if (!err)
			err = tl_model__walk(&x.s, models[i]);
	}
	/* the profiler's traces, each on its capture's machine */
	for (size_t k = 0; extra && k < extra->n && !err; k++) {
		struct tl_model *m = gpuio_export_extra__model(extra, k);

		if (m != machine) {
			err = machine_of(x.p, m);
			machine = m;
		}
		if (!err)
			err = gpuio_export_extra__walk(extra, k, &x.s);
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
