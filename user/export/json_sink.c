// SPDX-License-Identifier: MIT
/*
 * json_sink.c — capture -> Chrome trace JSON (array form) for Perfetto.
 *
 * Output: "[", one event per line, "]". ts/dur are µs with exactly three
 * decimals (exact: printed from integer ns) since the timeline origin: the
 * capture header's monotonic_ns (the trace start), or the first event's
 * start when one began before it (a call in flight at attach), so that no
 * ts is ever negative (tl_model__origin). Events:
 *
 *  - Metadata (ph "M", no ts): process_name / process_sort_index for every
 *    pid seen in VFS or PROC records, thread_name / thread_sort_index for
 *    every (pid, tid). Process name = comm of the best PROC record (EXEC >
 *    ATTACH > FORK, later wins on a tie), plus ": argv joined by spaces"
 *    when known, cut at 200 bytes. Thread name = comm of the latest PROC
 *    record of that tid (NAME, THREAD, EXEC, FORK, ATTACH; EXIT only if
 *    nothing else), else the process name's comm. Processes sort by pid,
 *    threads main first then by tid.
 *  - VFS call: X slice, cat "vfs", name = call name, on (pid, tid); args
 *    path, fd, bytes, requested, offset, errno+error, cache_miss_pages,
 *    flags, ftype, length, path2/fd2/offset2/ftype2 (see emit_vfs()).
 *    io_uring requests are asynchronous (several in flight per thread), so
 *    they go on per-process lanes (tid 0x20000000 + n, "io_uring lane N",
 *    greedy like block lanes) with the submitting thread in args.tid.
 *  - Block request: X slice, cat "block", name = op, on pid 0x40000000 +
 *    disk index ("disk NAME"), tid = 0x50000000 + (disk index << 16) + lane
 *    (unique in the trace) named "lane N" for lanes 1..N, greedy by
 *    start so slices on a lane never overlap.
 *  - Flow (v2): a VFS slice named by >= 1 block request (hdr.tid, vfs_seq)
 *    carries bind_id "0x<tid<<32|seq>" + flow_out; each such block slice
 *    the same bind_id + flow_in. Only when both ends are in the capture.
 *  - Counter "throughput NAME" (cat "block") per disk: read/write MiB/s in
 *    equal buckets (<= 2000, >= 1 ms), bytes spread over issue..complete;
 *    a value is written only when it changes, plus a zero at the end.
 *  - Thread states (scheduler layer): per traced thread with switches, a
 *    lane tid 0x10000000 + tid named "COMM TID · state" with X slices cat
 *    "sched" named as Perfetto names states (Running, Runnable, Runnable
 *    (Preempted), Sleeping, Uninterruptible Sleep), each 1 ns shorter than
 *    the state (state_dur: the importer must not see neighbours overlap); args: tid, cpu
 *    (Running), kernel_state (sleeps), waker_tid/waker_pid/waker_traced/
 *    waker_call_seq for a sleep ended by a wake-up and the Runnable after it.
 *  - Trace info: pid 0x3fffffff "gpuio", a global instant "gpuio trace
 *    info" at the trace start with the header, record counts and drop counters (and,
 *    with GPU records, "gpu": collector status per process, CUPTI drops,
 *    counts; CUPTI drops also count in "dropped" and "drops").
 *  - GPU (CUPTI collector, CUDA uprobes): a pseudo-process "GPU N" per
 *    device, pid 0x60000000 + GPU index, with a thread per stream lane
 *    ("GPU N · stream S", "... · lane L" where activities overlap; tids
 *    0x70000000 + n); kernels, memcpys, memsets as X slices cat "gpu"
 *    there (syncs and CUPTI overhead with no host thread on "GPU N · sync" /
 *    "GPU N · CUPTI overhead"); CUDA API calls (cat "cuda_api"), NVTX
 *    ranges ("nvtx"), syncs ("cuda_sync") and CUPTI overhead
 *    ("cupti_overhead") on their host thread, or on an overlap lane of the
 *    process (tid 0x30000000 + n, "tid T · CUDA overlap N") when they do
 *    not nest there; a flow (bind_id 0x8000000000000000 | pid << 32 |
 *    correlation) from each API call to the activities with its
 *    correlation id; a counter "GPU N busy" (cat "gpu", arg fraction) per
 *    device. See model/model.h for how the model is built.
 *
 * Passes: (1) metadata, paths, block requests and io_uring intervals into
 * memory, a compact entry per GPU record; (2) VFS events streamed out, then
 * the GPU records re-read in time order. Memory is bounded by files, threads,
 * disks, block requests and io_uring requests — never by the number of
 * ordinary VFS calls. The model (tables, lanes, args) is user/model/,
 * shared with the Perfetto protobuf writer; this file only renders it.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "export/formats.h"
#include "export/output.h"
#include "timeline/sink.h"
#include "timeline/timeline.h"
#include "lib/json_writer.h"
#include "lib/log.h"

struct jexp {
	struct tl_sink s;      /* first: the walk's view */
	struct json_writer *w;
	bool first_event;
	uint64_t events;
};

static struct jexp *jexp_of(struct tl_sink *s)
{
	return (struct jexp *)s;
}

static void ev_start(struct jexp *x)
{
	json_writer__puts(x->w, x->first_event ? "{" : ",\n{");
	x->first_event = false;
	x->events++;
}

/* ,"key": (or "key": first in an object) */
static void key(struct jexp *x, bool *first, const char *k)
{
	json_writer__puts(x->w, *first ? "\"" : ",\"");
	json_writer__puts(x->w, k);
	json_writer__puts(x->w, "\":");
	*first = false;
}

static void ts_rel(struct jexp *x, uint64_t t)
{
	json_writer__us(x->w, tl_ts_rel(x->s.m, t));
}

static void bind_id(struct jexp *x, uint32_t tid, uint32_t seq)
{
	json_writer__printf(x->w, ",\"bind_id\":\"0x%llx\"",
			    (unsigned long long)(((uint64_t)tl_pid(x->s.m, tid) << 32) | seq));
}

/* args[i..i+n) as the members of an object (a dict counts as one, its
 * entries follow it); returns the args consumed */
static unsigned write_members(struct jexp *x, const struct tl_args *a, unsigned i, unsigned n)
{
	struct json_writer *w = x->w;
	unsigned start = i, level = 0;
	bool first = true;

	while (i < a->n && level < n) {
		const struct tl_arg *g = &a->a[i++];

		level++;
		key(x, &first, g->key);
		switch (g->type) {
		case TLA_U64:
			json_writer__u64(w, g->v.u);
			break;
		case TLA_S64:
			json_writer__s64(w, g->v.s);
			break;
		case TLA_BOOL:
			json_writer__bool(w, g->v.b);
			break;
		case TLA_STR:
			json_writer__str(w, g->v.str, g->len);
			break;
		case TLA_US:
			json_writer__us(w, g->v.s);
			break;
		case TLA_F3:
			json_writer__f3(w, g->v.d);
			break;
		case TLA_NULL:
			json_writer__puts(w, "null");
			break;
		case TLA_DICT:
			json_writer__putc(w, '{');
			i += write_members(x, a, i, g->len);
			json_writer__putc(w, '}');
			break;
		}
	}
	return i - start;
}

static void write_args(struct jexp *x)
{
	json_writer__puts(x->w, ",\"args\":{");
	write_members(x, &x->s.args, 0, x->s.args.n);
	json_writer__puts(x->w, "}}");
}

static void meta_name(struct jexp *x, const char *what, uint32_t pid, const uint32_t *tid,
		      const char *name, size_t len)
{
	ev_start(x);
	json_writer__printf(x->w, "\"name\":\"%s\",\"ph\":\"M\",\"pid\":%u", what, pid);
	if (tid)
		json_writer__printf(x->w, ",\"tid\":%u", *tid);
	json_writer__puts(x->w, ",\"args\":{\"name\":");
	json_writer__str(x->w, name, len);
	json_writer__puts(x->w, "}}");
}

static void meta_sort(struct jexp *x, const char *what, uint32_t pid, const uint32_t *tid,
		      uint64_t index)
{
	ev_start(x);
	json_writer__printf(x->w, "\"name\":\"%s\",\"ph\":\"M\",\"pid\":%u", what, pid);
	if (tid)
		json_writer__printf(x->w, ",\"tid\":%u", *tid);
	json_writer__printf(x->w, ",\"args\":{\"sort_index\":%llu}}", (unsigned long long)index);
}

static void j_process(struct tl_sink *s, uint32_t pid, const char *name, size_t len, uint64_t sort,
		      const char *labels)
{
	meta_name(jexp_of(s), "process_name", pid, NULL, name, len);
	meta_sort(jexp_of(s), "process_sort_index", pid, NULL, sort);
	if (labels) {           /* Chrome's process labels (Perfetto's JSON importer skips them) */
		struct jexp *x = jexp_of(s);

		ev_start(x);
		json_writer__printf(x->w, "\"name\":\"process_labels\",\"ph\":\"M\",\"pid\":%u,"
				    "\"args\":{\"labels\":", pid);
		json_writer__str(x->w, labels, strlen(labels));
		json_writer__puts(x->w, "}}");
	}
}

static void j_thread(struct tl_sink *s, uint32_t pid, uint32_t tid, const char *name, size_t len,
		     uint64_t sort)
{
	meta_name(jexp_of(s), "thread_name", pid, &tid, name, len);
	meta_sort(jexp_of(s), "thread_sort_index", pid, &tid, sort);
}

/* {"name":NAME,"cat":CAT,"ph":"X","ts":..,"dur":..,"pid":..,"tid":.. (name: no escaping needed) */
static void x_head(struct jexp *x, const char *name, const char *cat, uint64_t ts, uint64_t dur,
		   uint32_t pid, uint32_t tid)
{
	struct json_writer *w = x->w;

	ev_start(x);
	json_writer__puts(w, "\"name\":\"");
	json_writer__puts(w, name);
	json_writer__puts(w, "\",\"cat\":\"");
	json_writer__puts(w, cat);
	json_writer__puts(w, "\",\"ph\":\"X\",\"ts\":");
	ts_rel(x, ts);
	json_writer__puts(w, ",\"dur\":");
	json_writer__us(w, (int64_t)dur);
	json_writer__printf(w, ",\"pid\":%u,\"tid\":%u", pid, tid);
}

static void j_vfs(struct tl_sink *s, const struct tl_vfs *v)
{
	struct jexp *x = jexp_of(s);
	struct json_writer *w = x->w;

	x_head(x, v->name, "vfs", v->ts, v->dur, v->pid, v->tid);
	if (v->nflows) {
		bind_id(x, v->ftid, v->fseq);
		json_writer__puts(w, ",\"flow_out\":true");
	}
	write_args(x);
}

/*
 * One state ends where the next begins, but the importer turns µs into ns
 * through a double and truncates: short by 1 ns, or by twice the double's
 * precision at that ts (merges of hosts whose clocks are months apart), so
 * neighbours never overlap. At most 1 ns within ~100 days of the origin.
 */
static uint64_t state_dur(struct jexp *x, const struct tl_tstate *o)
{
	uint64_t d = o->end - o->ts, gap = 1;
	int64_t rel = tl_ts_rel(x->s.m, o->ts);
	double ulp_ns = rel > 0 ? ldexp(1.0, ilogb((double)rel / 1000.0) - 52) * 1000.0 : 0;

	if (ulp_ns >= 0.25)
		gap = 1 + 2 * (uint64_t)ceil(ulp_ns);
	return d > gap ? d - gap : d;
}

/* A thread-state interval: a slice on the thread's state lane. */
static void j_tstate(struct tl_sink *s, const struct tl_tstate *o)
{
	struct jexp *x = jexp_of(s);

	x_head(x, o->name, "sched", o->ts, state_dur(x, o), o->pid, o->lane_tid);
	write_args(x);
}

static void j_disk(struct tl_sink *s, uint32_t pid, const char *name, size_t len,
		   const char *dname, uint64_t sort)
{
	j_process(s, pid, name, len, sort, NULL);
}

static void j_disk_lane(struct tl_sink *s, uint32_t pid, uint32_t tid, uint32_t lane)
{
	char name[32];
	int n = snprintf(name, sizeof(name), "lane %u", lane);

	j_thread(s, pid, tid, name, (size_t)n, lane);
}

static void j_block(struct tl_sink *s, const struct tl_block *o)
{
	struct jexp *x = jexp_of(s);
	struct json_writer *w = x->w;

	ev_start(x);
	json_writer__printf(w, "\"name\":\"%s\",\"cat\":\"block\",\"ph\":\"X\",\"ts\":", o->name);
	ts_rel(x, o->ts);
	json_writer__puts(w, ",\"dur\":");
	json_writer__us(w, (int64_t)(o->end - o->ts));
	json_writer__printf(w, ",\"pid\":%u,\"tid\":%u", o->pid, o->tid);
	if (o->flow_k) {
		bind_id(x, o->ftid, o->fseq);
		json_writer__puts(w, ",\"flow_in\":true");
	}
	write_args(x);
}

static void j_disk_counter(struct tl_sink *s, uint32_t pid, const char *dname, uint64_t t,
			   double rd, double wr)
{
	struct jexp *x = jexp_of(s);
	char cname[64];

	snprintf(cname, sizeof(cname), "throughput %s", dname);
	ev_start(x);
	json_writer__puts(x->w, "\"name\":");
	json_writer__cstr(x->w, cname);
	json_writer__puts(x->w, ",\"cat\":\"block\",\"ph\":\"C\",\"ts\":");
	ts_rel(x, t);
	json_writer__printf(x->w, ",\"pid\":%u,\"args\":{\"read_MiBps\":", pid);
	json_writer__f3(x->w, rd);
	json_writer__puts(x->w, ",\"write_MiBps\":");
	json_writer__f3(x->w, wr);
	json_writer__puts(x->w, "}}");
}

static void j_gpu(struct tl_sink *s, uint32_t pid, const char *name, size_t len,
		  const char *gname, uint64_t sort)
{
	j_process(s, pid, name, len, sort, NULL);
}

static void j_group(struct tl_sink *s, uint32_t pid, const char *name, size_t len, uint64_t sort)
{
	j_process(s, pid, name, len, sort, NULL);
}

static void j_gslice(struct tl_sink *s, const struct tl_gslice *o)
{
	struct jexp *x = jexp_of(s);
	struct json_writer *w = x->w;

	ev_start(x);
	json_writer__puts(w, "\"name\":");
	json_writer__str(w, o->name, strlen(o->name));
	json_writer__printf(w, ",\"cat\":\"%s\",\"ph\":\"X\",\"ts\":", o->cat);
	ts_rel(x, o->ts);
	json_writer__puts(w, ",\"dur\":");
	json_writer__us(w, (int64_t)o->dur);
	json_writer__printf(w, ",\"pid\":%u,\"tid\":%u", o->pid, o->tid);
	if (o->nflows || o->flow_k)
		json_writer__printf(w, ",\"bind_id\":\"0x%llx\",\"%s\":true",
				    (unsigned long long)tl_gpu_bind(o->fkey),
				    o->nflows ? "flow_out" : "flow_in");
	write_args(x);
}

static void j_gpu_counter(struct tl_sink *s, uint32_t pid, const char *gname, uint64_t t,
			  double v)
{
	struct jexp *x = jexp_of(s);
	char name[64];

	snprintf(name, sizeof(name), "%s busy", gname);
	ev_start(x);
	json_writer__puts(x->w, "\"name\":");
	json_writer__cstr(x->w, name);
	json_writer__puts(x->w, ",\"cat\":\"gpu\",\"ph\":\"C\",\"ts\":");
	ts_rel(x, t);
	json_writer__printf(x->w, ",\"pid\":%u,\"args\":{\"fraction\":", pid);
	json_writer__f3(x->w, v);
	json_writer__puts(x->w, "}}");
}

static void j_info(struct tl_sink *s, uint32_t pid, const char *name, size_t len, uint64_t sort)
{
	struct jexp *x = jexp_of(s);

	j_process(s, pid, name, len, sort, NULL);
	ev_start(x);
	json_writer__puts(x->w, "\"name\":\"gpuio trace info\",\"cat\":\"gpuio\",\"ph\":\"i\","
			  "\"s\":\"g\",\"ts\":");
	/* at the trace start: ts 0 unless something began before it */
	ts_rel(x, tl_model__header(s->m)->monotonic_ns);
	json_writer__printf(x->w, ",\"pid\":%u,\"tid\":%u", pid, pid);
	write_args(x);
}

static int j_error(const struct tl_sink *s)
{
	return json_writer__error(((const struct jexp *)s)->w);
}

static uint64_t j_events(const struct tl_sink *s)
{
	return ((const struct jexp *)s)->events;
}

static const struct tl_sink_ops json_ops = {
	.process = j_process,
	.thread = j_thread,
	.proc_lane = j_thread,          /* a lane is a thread of its process in JSON */
	.vfs = j_vfs,
	.state_lane = j_thread,
	.tstate = j_tstate,
	.disk = j_disk,
	.disk_lane = j_disk_lane,
	.block = j_block,
	.disk_counter = j_disk_counter,
	.gpu = j_gpu,
	.gpu_lane = j_thread,
	.gslice = j_gslice,
	.group = j_group,
	.gpu_counter = j_gpu_counter,
	.info = j_info,
	.error = j_error,
	.events = j_events,
};

int json_sink__export(struct tl_model *const *models, int n, const char *out_path,
		      const struct gpuio_export_opts *opts, const struct gpuio_export_extra *extra,
		      uint64_t *events, uint64_t *bytes)
{
	const char *caps[64];
	struct exp_output out;
	struct jexp x = { .s.ops = &json_ops };
	bool to_stdout = !strcmp(out_path, "-");
	int err;

	for (int i = 0; i < n && i < 64; i++)
		caps[i] = tl_model__capture_path(models[i]);
	err = exp_output__open(&out, out_path, caps, n < 64 ? n : 64, opts);
	if (err)
		return err;
	err = json_writer__new(out.fd, !to_stdout && gpuio_export__is_gz(out_path), !to_stdout,
			       &x.w);
	if (err) {
		pr_err("cannot write %s: %s", out_path, strerror(-err));
		if (!to_stdout)
			close(out.fd);
		exp_output__abort(&out);
		return err;
	}
	x.first_event = true;
	json_writer__puts(x.w, "[\n");
	for (int i = 0; i < n && !err; i++) {
		err = tl_model__walk(&x.s, models[i]);
	}
	for (size_t k = 0; extra && k < extra->n && !err; k++)
		err = gpuio_export_extra__walk(extra, k, &x.s);
	json_writer__puts(x.w, "\n]\n");
	if (bytes)
		*bytes = json_writer__bytes(x.w);
	{
		int cerr = json_writer__close(x.w);

		if (!err)
			err = cerr;
	}
	if (err) {
		if (err != -EBADMSG)
			pr_err("cannot write %s: %s%s", out_path, strerror(-err), exp_write_hint(err));
		exp_output__abort(&out);
		return err;
	}
	if (events)
		*events = x.events;
	return exp_output__commit(&out);
}
