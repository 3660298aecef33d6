// SPDX-License-Identifier: MIT
/*
 * export_json.c — capture -> Chrome trace JSON (array form) for Perfetto.
 *
 * Output: "[", one event per line, "]". ts/dur are µs with exactly three
 * decimals, relative to the capture header's monotonic_ns (exact: printed
 * from integer ns). Events:
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
 *  - Trace info: pid 0x3fffffff "gpuio", a global instant "gpuio trace
 *    info" at ts 0 with the header, record counts and drop counters (and,
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
 *    device. See export_model.h for how the model is built.
 *
 * Passes: (1) metadata, paths, block requests and io_uring intervals into
 * memory, a compact entry per GPU record; (2) VFS events streamed out, then
 * the GPU records re-read in time order. Memory is bounded by files, threads,
 * disks, block requests and io_uring requests — never by the number of
 * ordinary VFS calls. The model (tables, lanes, args) is export_model.c,
 * shared with the Perfetto protobuf writer; this file only renders it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "export/export.h"
#include "model/model.h"
#include "lib/json_writer.h"
#include "lib/log.h"

struct jexp {
	struct exp_model *m;
	struct json_writer *w;
	bool first_event;
	uint64_t events;
	struct exp_args args;
};

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
	json_writer__us(x->w, exp_ts_rel(x->m, t));
}

static void bind_id(struct jexp *x, uint32_t tid, uint32_t seq)
{
	json_writer__printf(x->w, ",\"bind_id\":\"0x%llx\"",
			    (unsigned long long)(((uint64_t)exp_pid(x->m, tid) << 32) | seq));
}

/* args[i..i+n) as the members of an object (a dict counts as one, its
 * entries follow it); returns the args consumed */
static unsigned write_members(struct jexp *x, const struct exp_args *a, unsigned i, unsigned n)
{
	struct json_writer *w = x->w;
	unsigned start = i, level = 0;
	bool first = true;

	while (i < a->n && level < n) {
		const struct exp_arg *g = &a->a[i++];

		level++;
		key(x, &first, g->key);
		switch (g->type) {
		case EA_U64:
			json_writer__u64(w, g->v.u);
			break;
		case EA_S64:
			json_writer__s64(w, g->v.s);
			break;
		case EA_BOOL:
			json_writer__bool(w, g->v.b);
			break;
		case EA_STR:
			json_writer__str(w, g->v.str, g->len);
			break;
		case EA_US:
			json_writer__us(w, g->v.s);
			break;
		case EA_F3:
			json_writer__f3(w, g->v.d);
			break;
		case EA_NULL:
			json_writer__puts(w, "null");
			break;
		case EA_DICT:
			json_writer__putc(w, '{');
			i += write_members(x, a, i, g->len);
			json_writer__putc(w, '}');
			break;
		}
	}
	return i - start;
}

static void write_args(struct jexp *x, const struct exp_args *a)
{
	json_writer__puts(x->w, ",\"args\":{");
	write_members(x, a, 0, a->n);
	json_writer__puts(x->w, "}}");
}

static void emit_vfs(struct jexp *x, const struct gpuio_vfs_event *e)
{
	struct json_writer *w = x->w;
	struct exp_vfs v;

	exp_model__vfs(x->m, e, &v, &x->args);
	ev_start(x);
	json_writer__puts(w, "\"name\":\"");
	json_writer__puts(w, v.name);
	json_writer__puts(w, "\",\"cat\":\"vfs\",\"ph\":\"X\",\"ts\":");
	ts_rel(x, v.ts);
	json_writer__puts(w, ",\"dur\":");
	json_writer__us(w, (int64_t)v.dur);
	json_writer__puts(w, ",\"pid\":");
	json_writer__u64(w, v.pid);
	json_writer__puts(w, ",\"tid\":");
	json_writer__u64(w, v.tid);
	if (v.nflows) {
		bind_id(x, v.ftid, v.fseq);
		json_writer__puts(w, ",\"flow_out\":true");
	}
	write_args(x, &x->args);
}

/* Pass 2: the VFS events, streamed in capture order. */
static int pass_vfs(struct jexp *x)
{
	const struct gpuio_vfs_event *e;
	int rc;

	while ((rc = exp_model__next_vfs(x->m, &e)) > 0) {
		emit_vfs(x, e);
		if (json_writer__error(x->w))
			return json_writer__error(x->w);
	}
	return rc;
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

static void emit_process_meta(struct jexp *x)
{
	struct exp_model *m = x->m;
	char name[EXP_PROC_NAME_BUF], comm[32];
	size_t t = 0;

	/* threads are sorted by pid: walk both lists together */
	for (size_t i = 0; i < m->nprocs; i++) {
		struct proc_ent *p = &m->procs[i];
		uint32_t pid = exp_pid(m, p->pid);
		size_t n, idx = 0;

		n = exp_model__proc_name(m, p, name, sizeof(name));
		p->sort = (uint32_t)i + 1;
		meta_name(x, "process_name", pid, NULL, name, n);
		meta_sort(x, "process_sort_index", pid, NULL, p->sort);
		for (; t < m->nthreads && m->threads[t].pid == p->pid; t++) {
			const struct thread_ent *th = &m->threads[t];
			uint32_t tid = exp_pid(m, th->tid);
			size_t tl;
			const char *tn = exp_model__thread_name(m, p, th, comm, &tl);

			meta_name(x, "thread_name", pid, &tid, tn, tl);
			meta_sort(x, "thread_sort_index", pid, &tid, idx++);
		}
		for (size_t l = 0; l < m->nulanes; l++) {
			const struct lane_ent *le = &m->ulanes[l];

			if (le->pid != p->pid)
				continue;
			n = (size_t)snprintf(name, sizeof(name), "io_uring lane %u", le->n);
			meta_name(x, "thread_name", pid, &le->tid, name, n);
			meta_sort(x, "thread_sort_index", pid, &le->tid, 100000 + le->n);
		}
		for (size_t l = 0; l < m->gpu.nglanes; l++) {
			const struct ghost_lane *gl = &m->gpu.glanes[l];

			if (gl->pid != p->pid)
				continue;
			n = exp_model__ghost_lane_name(gl, name, sizeof(name));
			meta_name(x, "thread_name", pid, &gl->out_tid, name, n);
			meta_sort(x, "thread_sort_index", pid, &gl->out_tid, 200000 + l);
		}
	}
}

static void emit_block(struct jexp *x, const struct blk_ent *b, size_t disk, const char *dname)
{
	struct json_writer *w = x->w;
	struct exp_block o;

	exp_model__block(x->m, b, disk, dname, &o, &x->args);
	ev_start(x);
	json_writer__printf(w, "\"name\":\"%s\",\"cat\":\"block\",\"ph\":\"X\",\"ts\":", o.name);
	ts_rel(x, o.ts);
	json_writer__puts(w, ",\"dur\":");
	json_writer__us(w, (int64_t)(o.end - o.ts));
	json_writer__printf(w, ",\"pid\":%u,\"tid\":%u", o.pid, o.tid);
	if (o.flow_k) {
		bind_id(x, o.ftid, o.fseq);
		json_writer__puts(w, ",\"flow_in\":true");
	}
	write_args(x, &x->args);
}

static void emit_counter(struct jexp *x, const char *cname, uint32_t pid, uint64_t t,
			 double rd, double wr)
{
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

static void emit_disks(struct jexp *x)
{
	struct exp_model *m = x->m;
	size_t i = 0;

	for (size_t d = 0; d < m->ndisks; d++) {
		struct dev_ent *dev = &m->devs[m->disk_order[d]];
		uint32_t pid = exp_disk_pid(m, d);
		char dname[48], pname[160], cname[64];
		struct exp_counter_it it = { 0 };
		double r, wr;
		uint64_t t;

		exp_model__disk_name(dev, dname, sizeof(dname));
		snprintf(pname, sizeof(pname), "%sdisk %s", m->map.prefix, dname);
		snprintf(cname, sizeof(cname), "throughput %s", dname);
		meta_name(x, "process_name", pid, NULL, pname, strlen(pname));
		meta_sort(x, "process_sort_index", pid, NULL, m->nprocs + 1 + d);
		for (uint32_t l = 1; l <= dev->nlanes; l++) {
			uint32_t tid = exp_lane_tid(m, d, l);
			char lname[32];

			snprintf(lname, sizeof(lname), "lane %u", l);
			meta_name(x, "thread_name", pid, &tid, lname, strlen(lname));
			meta_sort(x, "thread_sort_index", pid, &tid, l);
		}
		/* blks[] is sorted by disk, and disks are numbered in that order */
		for (; i < m->nblks && m->blks[i].disk == d; i++)
			emit_block(x, &m->blks[i], d, dname);
		while (exp_model__next_counter(m, dev, &it, &t, &r, &wr))
			emit_counter(x, cname, pid, t, r, wr);
	}
}

static void emit_gslice(struct jexp *x, const struct exp_gslice *o)
{
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
				    (unsigned long long)exp_gpu_bind(o->fkey),
				    o->nflows ? "flow_out" : "flow_in");
	write_args(x, &x->args);
}

/* GPUs: a pseudo-process each, a thread per stream lane, the slices, busy counters. */
static int emit_gpus(struct jexp *x)
{
	struct exp_model *m = x->m;
	struct exp_gslice *o;
	char name[160];
	int rc;

	for (size_t k = 0; k < m->gpu.ndevs; k++) {
		const struct gpu_dev *d = &m->gpu.devs[m->gpu.dev_order[k]];
		uint32_t pid = exp_gpu_pid(m, k);
		char gname[16];
		int n;

		exp_model__gpu_name(d, gname, sizeof(gname));
		n = snprintf(name, sizeof(name), "%s%s", m->map.prefix, gname);
		meta_name(x, "process_name", pid, NULL, name, (size_t)n);
		meta_sort(x, "process_sort_index", pid, NULL, m->nprocs + m->ndisks + 1 + k);
	}
	for (size_t i = 0; i < m->gpu.ntracks; i++) {
		const struct gpu_track *t = &m->gpu.tracks[i];
		uint32_t pid = exp_gpu_pid(m, m->gpu.devs[t->dev_idx].index);

		for (uint32_t l = 1; l <= t->nlanes; l++) {
			uint32_t tid = t->tid0 + l - 1;
			size_t n = exp_model__gpu_lane_name(m, t, l, name, sizeof(name));

			meta_name(x, "thread_name", pid, &tid, name, n);
			meta_sort(x, "thread_sort_index", pid, &tid, t->rank + l);
		}
	}
	o = malloc(sizeof(*o));
	if (!o)
		return -ENOMEM;
	exp_model__gpu_rewind(m);
	while ((rc = exp_model__next_gpu(m, o, &x->args)) > 0) {
		emit_gslice(x, o);
		if (json_writer__error(x->w)) {
			rc = json_writer__error(x->w);
			break;
		}
	}
	free(o);
	if (rc < 0)
		return rc;
	for (size_t k = 0; k < m->gpu.ndevs; k++) {
		const struct gpu_dev *d = &m->gpu.devs[m->gpu.dev_order[k]];
		struct exp_counter_it it = { 0 };
		char gname[16];
		uint64_t t;
		double v;

		exp_model__gpu_name(d, gname, sizeof(gname));
		snprintf(name, sizeof(name), "%s busy", gname);
		while (exp_model__next_gpu_counter(m, d, &it, &t, &v)) {
			ev_start(x);
			json_writer__puts(x->w, "\"name\":");
			json_writer__cstr(x->w, name);
			json_writer__puts(x->w, ",\"cat\":\"gpu\",\"ph\":\"C\",\"ts\":");
			ts_rel(x, t);
			json_writer__printf(x->w, ",\"pid\":%u,\"args\":{\"fraction\":", exp_gpu_pid(m, k));
			json_writer__f3(x->w, v);
			json_writer__puts(x->w, "}}");
		}
	}
	return 0;
}

static void emit_info(struct jexp *x)
{
	struct exp_model *m = x->m;
	uint32_t pid = exp_info_pid(m);
	char pname[96];

	exp_model__info(m, &x->args);
	snprintf(pname, sizeof(pname), "%sgpuio", m->map.prefix);
	meta_name(x, "process_name", pid, NULL, pname, strlen(pname));
	meta_sort(x, "process_sort_index", pid, NULL, m->nprocs + m->ndisks + m->gpu.ndevs + 1);
	ev_start(x);
	json_writer__printf(x->w, "\"name\":\"gpuio trace info\",\"cat\":\"gpuio\",\"ph\":\"i\","
			    "\"s\":\"g\",\"ts\":0.000,\"pid\":%u,\"tid\":%u", pid, pid);
	write_args(x, &x->args);
}

/* One capture's events (after "[" or after another capture's). */
static int write_capture(struct jexp *x)
{
	uint64_t start = x->events;
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
	x->m->st.events = x->events - start;
	return json_writer__error(x->w);
}

bool gpuio_export__is_gz(const char *name)
{
	size_t n = strlen(name);

	return n > 3 && !strcmp(name + n - 3, ".gz");
}

bool gpuio_export__is_json_name(const char *name)
{
	size_t n = strlen(name);

	return (n > 5 && !strcmp(name + n - 5, ".json")) ||
	       (n > 8 && !strcmp(name + n - 8, ".json.gz"));
}

int gpuio_export_json_models(struct exp_model *const *models, int n, const char *out_path,
			     const struct gpuio_export_opts *opts, uint64_t *events,
			     uint64_t *bytes)
{
	const char *caps[64];
	struct exp_output out;
	struct jexp x = { 0 };
	bool to_stdout = !strcmp(out_path, "-");
	int err;

	for (int i = 0; i < n && i < 64; i++)
		caps[i] = models[i]->path;
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
		x.m = models[i];
		err = write_capture(&x);
	}
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

int gpuio_export_json(const char *capture_path, const char *out_path,
		      const struct gpuio_export_opts *opts, struct gpuio_export_stats *st)
{
	return exp_model__export_one(capture_path, out_path, opts, st, gpuio_export_json_models);
}
