// SPDX-License-Identifier: MIT
/*
 * report_text.c — `gpuio report` for a terminal: warnings and headline
 * findings first, then recommendations with their evidence, then the detail
 * sections (summary, GPU, checkpoints, files, devices, threads).
 *
 * Timestamps are printed as "ts=<µs>" — the same time base as the JSON and
 * Perfetto exports (µs after the capture's monotonic anchor) — and as UTC.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model/calls.h"
#include "model/waits.h"
#include "report/report_model.h"
#include "report/report_net.h"
#include "lib/job_identity.h"
#include "lib/json_writer.h"
#include "lib/units.h"

#define B(v, buf) (rpt_fmt_bytes((v), buf, sizeof(buf)), buf)
#define D(v, buf) (rpt_fmt_dur((v), buf, sizeof(buf)), buf)

static const char *const cause_text[RPT_CAUSE_N] = {
	"blocked in file reads", "in writes/fsync (checkpoints)", "in other file calls",
	"in CUDA synchronization", "none of these (compute, Python, waits)",
};

/* "ts=1234.567us (2026-01-02T03:04:05.123456Z)" */
static const char *at(const struct rpt_model *m, uint64_t t, char *buf, size_t len)
{
	char wall[48], rel[32];

	rpt_fmt_wall(m, t, wall, sizeof(wall));
	json_fmt_us(rel, rpt_ts_rel_ns(m, t));   /* any value, INT64_MIN too */
	snprintf(buf, len, "ts=%sus (%s)", rel, wall);
	return buf;
}

/* Header strings hold anything: control bytes as '?' on a terminal. */
static void put_clean(const char *s, size_t max)
{
	for (size_t i = 0; i < max && s[i]; i++)
		putchar((unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i]);
}

static void put_path(const struct rpt_file *f, size_t max)
{
	size_t n = f->path_len;

	if (n > max) {
		fputs("...", stdout);
		put_clean(f->path + n - (max - 3), max - 3);
	} else {
		put_clean(f->path, n);
	}
}

static double pct(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : 0;
}

static void warnings(const struct rpt_model *m)
{
	uint64_t d;
	bool known = rpt_model__dropped(m, &d);

	if (!known)
		printf("!! drops unknown: the capture has no stats record (tracer killed?); "
		       "counts below may be incomplete\n");
	else if (d)
		printf("!! LOSSY CAPTURE: %" PRIu64 " events lost (ring buffer/maps %" PRIu64
		       ", capture write errors %" PRIu64 ", CUPTI dropped %" PRIu64
		       "): totals below undercount\n",
		       d, (uint64_t)(d - m->f->stats.user[GPUIO_USTAT_WRITE_ERRORS] - m->cupti_dropped -
				     m->gpu_write_errors),
		       (uint64_t)m->f->stats.user[GPUIO_USTAT_WRITE_ERRORS],
		       m->cupti_dropped + m->gpu_write_errors);
	if (m->f->truncated)
		printf("!! capture cut short at offset %" PRIu64 " (%" PRIu64
		       " bytes of a partial record ignored): the report covers what was written\n",
		       m->f->trunc_offset, m->f->truncated);
	else if (known && !m->f->stats.final)
		printf("!! no final stats record: the tracer did not end cleanly\n");
	if (m->gaps_approx)
		printf("!! some GPU idle gaps held too many host calls: their split is approximate "
		       "(merged within a tolerance)\n");
	if (!m->f->records)
		printf("!! the capture holds no records\n");
}

static void headlines(const struct rpt_model *m)
{
	char a[32], b[32], c[32];
	bool any = false;

	printf("\nHEADLINES\n");
	for (size_t i = 0; i < m->ngpus; i++) {
		const struct rpt_gpu *g = &m->gpus[i];
		uint64_t span = g->last - g->first;
		static const char *const short_cause[RPT_CAUSE_N] = {
			"file reads", "writes/fsync", "other file calls", "CUDA sync",
			"outside traced calls",
		};

		printf("  * GPU %u of pid %u (%s): busy %.1f%% of %s; idle %s:", g->device, g->pid,
		       rpt_proc_comm(m, g->pid), pct(g->busy_ns, span), D(span, a), D(g->idle_ns, b));
		for (int k = 0; k < RPT_CAUSE_N; k++)
			if (g->cause_ns[k])
				printf(" %s %s (%.0f%%)%s", short_cause[k], D(g->cause_ns[k], c),
				       pct(g->cause_ns[k], g->idle_ns), k < RPT_CAUSE_NONE ? ";" : "");
		printf("\n");
		any = true;
	}
	if (m->vfs_rops) {
		printf("  * reads: %s in %" PRIu64 " calls", B(m->vfs_rbytes, a), m->vfs_rops);
		if (m->pages)
			printf(", page-cache hit ratio %.1f%%", 100 * rpt_ratio(m->hit_pages, m->pages));
		printf("; from the device: %s\n", B(m->blk_rbytes, b));
		any = true;
	}
	if (m->minor_faults || m->major_faults) {
		printf("  * page faults on file mappings: %" PRIu64 " minor, %" PRIu64 " major (their "
		       "bytes and time are in the reads)\n", m->minor_faults, m->major_faults);
		any = true;
	}
	if (m->vfs_wops) {
		printf("  * writes: %s in %" PRIu64 " calls; to the device: %s\n",
		       B(m->vfs_wbytes, a), m->vfs_wops, B(m->blk_wbytes, b));
		any = true;
	}
	if (m->nckpts) {
		uint64_t bytes = 0, lost = 0;

		for (size_t i = 0; i < m->nckpts; i++) {
			bytes += m->ckpts[i].bytes;
			lost += m->ckpts[i].gpu_lost_ns;
		}
		printf("  * %zu checkpoint(s): %s written then synced/closed", m->nckpts,
		       B(bytes, a));
		if (m->ngpus)
			printf("; GPU idle %s during them", D(lost, b));
		printf("\n");
		any = true;
	}
	if (m->small_files >= 10 && m->small_files * 4 >= m->read_files)
		printf("  * %" PRIu64 " of %" PRIu64 " data files read are small (< 1 MiB) and read once\n",
		       m->small_files, m->read_files), any = true;
	printf("  * %zu recommendation(s)%s\n", m->nrecos, m->nrecos ? " below" :
	       any ? ": nothing crossed a threshold" : "");
}

/* What the thread that launches g's work was doing while g sat idle (thread states). */
static void launcher_lines(const struct rpt_model *m, const struct rpt_gpu *g)
{
	char a[32];

	if (!g->launcher_tid)
		return;
	printf("    its launching threads during the idle gaps (each gap: the thread whose launch "
	       "ended it; tid %u launched most, %" PRIu64 "):%s\n",
	       g->launcher_tid, g->launcher_launches,
	       m->launch_states ? "" :
	       m->hdr->flags & GPUIO_CAPF_NO_BPF ? " no thread states (traced without BPF)" :
	       " no thread states in this capture (traced with --no-sched?)");
	if (!m->launch_states)
		return;
	for (int k = 0; k < RPT_LS_N; k++)
		if (g->launch_ns[k])
			printf("      %-40s %12s  %5.1f%% of idle\n", rpt_ls_name(k), D(g->launch_ns[k], a),
			       pct(g->launch_ns[k], g->idle_ns));
	if (g->launch_ns[RPT_TW_DATA])
		printf("      (waiting_for_data: the loop's waits; who woke it is under WHY THE LOOP WAITED)\n");
}

/* One blocked-in entry: "futex", "poll on a pipe", "read on a socket". */
static void put_blocked(const struct rpt_blocked *b)
{
	const char *sc = model_wait__syscall_name(b->nr), *ft = model_wait__ftype_name(b->ftype);

	if (b->kind == MODEL_WAIT_FAULT)
		printf("a page fault or other kernel work");
	else if (sc && ft)
		printf("%s on a %s", sc, ft);
	else if (sc)
		printf("%s", sc);
	else if (b->nr >= 0)
		printf("syscall %d", b->nr);
	else
		printf("%s", model_wait__kind_name(b->kind));
}

static void loop_steps(const struct rpt_model *m, const struct rpt_wait *w)
{
	uint64_t maxs = 0;
	char a[32], b[32];
	size_t show;

	for (size_t i = 0; i < w->nsteps; i++)
		if (w->steps[i].wait_ns + w->steps[i].compute_ns > maxs)
			maxs = w->steps[i].wait_ns + w->steps[i].compute_ns;
	show = w->nsteps <= 24 ? w->nsteps : 20;
	if (w->step_range)
		printf("  STEPS (%zu: the loop's NVTX range \"%s\"; W its wait for data, # the rest)\n",
		       w->nsteps, w->step_range);
	else
		printf("  STEPS (%zu: a wait for data, then the work until the next; W wait, # rest)\n",
		       w->nsteps);
	printf("  %5s %12s %12s %12s\n", "step", "start(ms)", "wait", "rest");
	for (size_t i = 0; i < show; i++) {
		const struct rpt_step *s = &w->steps[i];
		int bw = maxs ? (int)(30.0 * (double)s->wait_ns / (double)maxs + 0.5) : 0;
		int bc = maxs ? (int)(30.0 * (double)s->compute_ns / (double)maxs + 0.5) : 0;

		printf("  %5zu %12.3f %12s %12s %.*s%.*s\n", i + 1,
		       (double)rpt_ts_rel_ns(m, s->s) / 1e6, D(s->wait_ns, a), D(s->compute_ns, b),
		       bw, "WWWWWWWWWWWWWWWWWWWWWWWWWWWWWW", bc, "##############################");
	}
	if (show < w->nsteps)
		printf("  ... %zu more steps (--json has them all)\n", w->nsteps - show);
}

/* One loop: its time by state and cause, its producers, the waits for data, the steps. */
static void loop_section(const struct rpt_model *m, const struct rpt_wait *w)
{
	uint64_t span = rpt_wait__span(w), act = rpt_wait__act_total(w);
	char a[32], b[32], line[1024];

	rpt_wait__headline(m, w, line, sizeof(line));
	printf("  %s\n", line);
	for (int k = 0; k < RPT_TW_N; k++)
		if (w->ns[k] || k == RPT_TW_CPU || k == RPT_TW_DATA)
			printf("  %-18s %10s %5.1f%%%s\n", rpt_tw_names[k], D(w->ns[k], a),
			       pct(w->ns[k], span), k == RPT_TW_DATA && w->data_runnable_ns ?
			       " (of which waiting for a CPU once the data had come: see "
			       "data_then_runnable in --json)" : "");
	if (w->nblocked) {
		printf("  its other sleeps were in:");
		for (size_t i = 0; i < w->nblocked && i < 6; i++) {
			printf(" ");
			put_blocked(&w->blocked[i]);
			printf(" %s (%" PRIu64 "x)%s", D(w->blocked[i].ns, a), w->blocked[i].n,
			       i + 1 < w->nblocked && i + 1 < 6 ? ";" : "");
		}
		printf("\n");
	}
	if (w->nwakers) {
		printf("  woken with data by:");
		for (size_t i = 0; i < w->nwakers; i++) {
			const struct rpt_waker *k = &w->wakers[i];

			if (k->thread)
				printf(" thread %u of its process", k->tid);
			else
				printf(" pid %u (%s)", k->pid, rpt_proc_comm(m, k->pid));
			printf(" %" PRIu64 "x %s%s", k->wakes, D(k->ns, a), i + 1 < w->nwakers ? ";" : "");
		}
		printf("\n");
	}
	if (act) {
		printf("  meanwhile the producers that fetch its data:");
		for (int k = 0; k < RPT_WA_N; k++)
			if (w->act_ns[k] || (k != RPT_WA_FAULT && k != RPT_WA_NET))
				printf(" %s %s (%.0f%%)%s", rpt_wa_names[k], D(w->act_ns[k], a),
				       pct(w->act_ns[k], act), k + 1 < RPT_WA_N ? "," : "");
		printf("\n");
	}
	for (size_t i = 0; i < w->nfiles && i < 5; i++) {
		const struct rpt_wait_file *f = &w->files[i];

		printf("    read %s in %s: ", B(f->bytes, a), D(f->ns, b));
		put_path(&m->files[f->file], 80);
		printf("\n");
	}
	if (w->nfiles > 5)
		printf("    ... %zu more files\n", w->nfiles - 5);
	if (w->gaps)
		printf("  note: %" PRIu64 " context switch(es) were not recorded (sched_gaps): the "
		       "states around them are approximate\n", w->gaps);
	if (w->nsteps)
		loop_steps(m, w);
}

/* Loops side by side, the one that waited most first (two loops or more). */
static void stragglers(const struct rpt_model *m)
{
	char a[32];

	printf("  %-8s %-8s %-16s %12s %7s  %s\n", "pid", "tid", "thread", "data wait", "of run",
	       "its largest cause");
	for (size_t i = 0; i < m->nloops; i++) {
		const struct rpt_wait *w = m->loops[rpt_straggler(m, i)];

		printf("  %-8u %-8u %-16.16s %12s %6.1f%%  %s\n", w->pid, w->tid, rpt_wait__thread(m, w),
		       D(w->ns[RPT_TW_DATA], a), pct(w->ns[RPT_TW_DATA], rpt_wait__span(w)),
		       rpt_wait__cause(w));
	}
}

/* Why the loops waited: each loop's section; with several, the stragglers first. */
static void wait_section(const struct rpt_model *m)
{
	const struct rpt_wait *w = m->wait;

	if (!w)
		return;
	if (m->nloops == 1) {
		printf("\nWHY THE LOOP WAITED (thread states; the loop is pid %u tid %u, %s%s)\n", w->pid,
		       w->tid, rpt_proc_comm(m, w->pid),
		       !w->stand_in ? "" : w->ns[RPT_TW_DATA] ?
		       "; no thread waited for data 3 times: the one that waited most" :
		       "; no thread waited for data: the busiest thread");
		loop_section(m, w);
		return;
	}
	printf("\nWHY THE LOOPS WAITED (thread states; %zu training loops)\n", m->nloops);
	stragglers(m);
	for (size_t i = 0; i < m->nloops; i++) {
		w = m->loops[i];
		printf("\n LOOP %zu: pid %u tid %u (%s, thread %s)\n", i + 1, w->pid, w->tid,
		       rpt_proc_comm(m, w->pid), rpt_wait__thread(m, w));
		loop_section(m, w);
	}
}

static void recos(const struct rpt_model *m)
{
	if (!m->nrecos)
		return;
	printf("\nRECOMMENDATIONS\n");
	for (size_t i = 0; i < m->nrecos; i++)
		printf("  %zu. [%s] %s\n     evidence: %s\n", i + 1, m->recos[i].kind,
		       m->recos[i].text, m->recos[i].evidence);
}

/* The job(s) the processes ran in: Slurm / Kubernetes / systemd identity from their cgroups. */
static void jobs(const struct rpt_model *m)
{
	struct rpt_job jb[4];
	size_t n = rpt_model__jobs(m, jb, 4);

	for (size_t i = 0; i < n; i++) {
		struct job_identity id;
		char who[512];

		job_identity__parse(jb[i].cgroup, &id);
		if (!job_identity__format(&id, who, sizeof(who)))
			snprintf(who, sizeof(who), "no Slurm, Kubernetes or systemd identity");
		printf("  job         %s (cgroup ", who);
		put_clean(jb[i].cgroup, strlen(jb[i].cgroup));
		printf(", %u process%s)\n", jb[i].nprocs, jb[i].nprocs == 1 ? "" : "es");
	}
}

static void summary(const struct rpt_model *m)
{
	const struct gpuio_cap_header *h = m->hdr;
	char a[32], b[32], c[64];
	uint64_t d;

	printf("\nSUMMARY\n");
	printf("  capture     %s (%s), host ", m->path, B(m->file_size, a));
	put_clean(h->hostname, sizeof(h->hostname));
	printf(", target ");
	put_clean(h->target, sizeof(h->target));
	printf("\n  time        %s for %s\n", m->first_ts ? at(m, m->first_ts, c, sizeof(c)) : "-",
	       D(rpt_model__duration(m), b));
	printf("  time base   ts = us after MONOTONIC %" PRIu64 " ns (as in the exports)\n",
	       (uint64_t)h->monotonic_ns);
	printf("  tasks       %zu processes, %zu threads\n", m->nprocs, m->nthreads);
	jobs(m);
	printf("  VFS         read %s in %" PRIu64 " calls, write %s in %" PRIu64 " calls, "
	       "%" PRIu64 " calls in all (%" PRIu64 " failed)\n", B(m->vfs_rbytes, a), m->vfs_rops,
	       B(m->vfs_wbytes, b), m->vfs_wops, m->vfs_calls, m->vfs_errors);
	printf("  block       read %s in %" PRIu64 " requests, write %s in %" PRIu64 " requests\n",
	       B(m->blk_rbytes, a), m->blk_rops, B(m->blk_wbytes, b), m->blk_wops);
	if (m->pages)
		printf("  page cache  hit ratio %.1f%% (buffered reads touched %" PRIu64 " pages, %"
		       PRIu64 " pages added by misses)\n", 100 * rpt_ratio(m->hit_pages, m->pages),
		       m->pages, m->miss_pages);
	else
		printf("  page cache  no buffered reads\n");
	printf("  attach      vfs=%.16s block=%.16s proc=%.16s pagecache=%.16s io_uring=%.16s "
	       "sched=%.16s", h->vfs_mode, h->block_mode, h->proc_mode, h->pagecache_mode,
	       h->iouring_mode, h->sched_mode[0] ? h->sched_mode : "none");
	if (h->fault_mode[0])
		printf(" fault=%.16s", h->fault_mode);
	printf("\n");
	if (rpt_model__dropped(m, &d))
		printf("  drops       %" PRIu64 " (measured)%s\n", d,
		       m->f->stats.final ? "" : "; no final stats");
	else
		printf("  drops       unknown (no stats record)\n");
	printf("  records     %" PRIu64 " (vfs %" PRIu64 ", block %" PRIu64 ", gpu %" PRIu64
	       "), %" PRIu64 " files without a path\n", m->f->records, m->f->counts[GPUIO_REC_VFS],
	       m->f->counts[GPUIO_REC_BLOCK],
	       m->f->counts[GPUIO_REC_GPU_KERNEL] + m->f->counts[GPUIO_REC_GPU_MEMCPY] +
	       m->f->counts[GPUIO_REC_GPU_MEMSET] + m->f->counts[GPUIO_REC_CUDA_API] +
	       m->f->counts[GPUIO_REC_GPU_SYNC] + m->f->counts[GPUIO_REC_NVTX],
	       m->unresolved);
}

static void gpu(const struct rpt_model *m)
{
	char a[32], b[32], c[96];

	printf("\nGPU\n");
	if (!m->ngpus) {
		if (m->f->gpu_infos && m->f->gpu_info.state == GPUIO_GPU_UNAVAILABLE &&
		    m->f->gpu_info.cupti_error == GPUIO_CUPTI_HELD)
			printf("  another profiler holds CUPTI in pid %u (the PyTorch profiler, Nsight "
			       "Systems or DCGM profiling?):\n  gpuio recorded no GPU activity there; "
			       "its CUDA API calls come from uprobes\n", m->f->gpu_info.hdr.pid);
		else if (m->f->gpu_infos && m->f->gpu_info.state == GPUIO_GPU_UNAVAILABLE)
			printf("  collector unavailable: %.128s\n", m->f->gpu_info.reason);
		else
			printf("  no GPU activity records in this capture (trace a CUDA program with "
			       "the CUPTI collector to see GPU idle time explained)\n");
		return;
	}
	printf("  busy = union of kernels, copies and memsets between the first and last activity;\n"
	       "  idle gaps split by what the process's host threads did (first match wins:\n"
	       "  reads > writes/fsync > other file calls > CUDA sync > none)\n");
	for (size_t i = 0; i < m->ngpus; i++) {
		const struct rpt_gpu *g = &m->gpus[i];
		uint64_t span = g->last - g->first;

		printf("  GPU %u pid %u (%s): busy %.1f%% (%s of %s from %s)\n", g->device, g->pid,
		       rpt_proc_comm(m, g->pid), pct(g->busy_ns, span), D(g->busy_ns, a),
		       D(span, b), at(m, g->first, c, sizeof(c)));
		printf("    %" PRIu64 " kernels, %" PRIu64 " copies, %" PRIu64 " memsets; %" PRIu64
		       " idle gaps, %s idle\n", g->kernels, g->copies, g->memsets, g->ngaps,
		       D(g->idle_ns, a));
		for (int k = 0; k < RPT_CAUSE_N; k++)
			if (g->cause_ns[k])
				printf("      %-40s %12s  %5.1f%% of idle\n", cause_text[k],
				       D(g->cause_ns[k], a), pct(g->cause_ns[k], g->idle_ns));
		launcher_lines(m, g);
	}
	if (m->ntop_gaps) {
		printf("  largest idle gaps:\n");
		for (size_t i = 0; i < m->ntop_gaps; i++) {
			const struct rpt_gap *gp = &m->gaps[m->top_gaps[i]];
			bool first = true;

			printf("    %-10s GPU %u pid %u at %s%s\n", D(gp->e - gp->s, a),
			       m->gpus[gp->gpu].device, m->gpus[gp->gpu].pid,
			       at(m, gp->s, c, sizeof(c)), gp->approx ? " (approx.)" : "");
			printf("      ");
			for (int k = 0; k < RPT_CAUSE_N; k++)
				if (gp->cause_ns[k]) {
					printf("%s%s %s", first ? "" : ", ", rpt_cause_names[k],
					       D(gp->cause_ns[k], b));
					first = false;
				}
			printf("\n");
			if (m->launch_states && gp->launcher_tid) {
				first = true;
				printf("      launcher tid %u: ", gp->launcher_tid);
				for (int k = 0; k < RPT_LS_N; k++)
					if (gp->launch_ns[k]) {
						printf("%s%s %s", first ? "" : ", ", rpt_ls_name(k),
						       D(gp->launch_ns[k], b));
						first = false;
					}
				printf("\n");
			}
			for (int j = 0; j < RPT_GAP_FILES; j++) {
				const struct rpt_gap_file *gf = &m->top_gap_files[i][j];

				if (!gf->ns)
					break;
				printf("      reading %s: ", D(gf->ns, a));
				put_path(&m->files[gf->file - 1], 90);
				printf("\n");
			}
		}
	}
	{
		bool hdr = false;

		for (size_t i = 0; i < m->nfiles; i++) {
			const struct rpt_file *f = &m->files[i];

			if (!f->gpu_idle_read_ns)
				continue;
			if (!hdr)
				printf("  files read while the GPU idled (time overlapping gaps, "
				       "page-cache misses of those reads):\n");
			hdr = true;
			printf("    %12s %8" PRIu64 " pages missed  ", D(f->gpu_idle_read_ns, a),
			       f->gpu_idle_miss_pages);
			put_path(f, 90);
			printf("\n");
		}
	}
}

static void ckpts(const struct rpt_model *m)
{
	char a[32], b[32], c[96];

	printf("\nCHECKPOINTS (write bursts >= 1 MiB ended by fsync/close, in checkpoint files)\n");
	if (!m->nckpts) {
		printf("  none\n");
		return;
	}
	for (size_t i = 0; i < m->nckpts && i < 50; i++) {
		const struct rpt_ckpt *k = &m->ckpts[i];
		uint64_t dur = k->e - k->s;

		printf("  %s  %s in %" PRIu64 " writes, %s, %.1f MiB/s, pid %u tid %u",
		       at(m, k->s, c, sizeof(c)), B(k->bytes, a), k->writes, D(dur, b),
		       dur ? (double)k->bytes / 1048576.0 / ((double)dur / NS_PER_SEC_F) : 0, k->pid, k->tid);
		if (m->ngpus)
			printf(", GPU idle %s", D(k->gpu_lost_ns, a));
		printf(", then %s\n    ", k->synced ? "fsync" : "close");
		put_path(&m->files[k->file], 100);
		printf("\n");
	}
	if (m->nckpts > 50)
		printf("  ... %zu more (see --json)\n", m->nckpts - 50);
}

static void size_dist(const struct rpt_file *f)
{
	bool first = true;

	for (int i = 0; i < RPT_LOG2_BUCKETS; i++) {
		char a[32];

		if (!f->size_hist[i])
			continue;
		rpt_fmt_bytes(i ? 1ull << (i - 1) : 0, a, sizeof(a));
		printf("%s%s%s:%u", first ? "" : " ", i > 1 ? ">=" : "", a, f->size_hist[i]);
		first = false;
	}
}

static void files(const struct rpt_model *m, const struct rpt_opts *opt)
{
	char a[32], b[32], c[32], d[32], e[32], g[32];
	size_t n, *idx = rpt_model__ranked_files(m, opt->top, &n);

	printf("\nFILES (%zu of %zu: top %u by time, bytes and ops; --files all for every file)\n",
	       n, m->nfiles, opt->top);
	for (size_t k = 0; k < n; k++) {
		const struct rpt_file *f = &m->files[idx[k]];
		uint64_t single;
		enum rpt_pattern p = rpt_file__pattern(f, &single);

		printf("  ");
		put_path(f, 110);
		printf("\n    read %s/%" PRIu64 " ops, write %s/%" PRIu64 " ops, %" PRIu64 " opens, "
		       "%s in calls; latency mean %s p50 %s p99 %s\n", B(f->rbytes, a), f->rops,
		       B(f->wbytes, b), f->wops, f->opens, D(f->rtime + f->wtime + f->otime, c),
		       D(f->lat.n ? f->lat.sum / f->lat.n : 0, d), D(rpt_hist__pct(&f->lat, 0.5), e),
		       D(rpt_hist__pct(&f->lat, 0.99), g));
		printf("    pattern %s", single ? (f->rops + f->wops ? "single transfer" : "-") :
		       rpt_pattern_name(p));
		if (!single)
			printf(" (seq %" PRIu64 ", strided %" PRIu64 ", random %" PRIu64 ")",
			       f->pat[0], f->pat[1], f->pat[2]);
		if (f->pages)
			printf("; page cache hit %.1f%%", 100 * rpt_ratio(f->hit_pages, f->pages));
		else if (f->direct_rbytes)
			printf("; O_DIRECT reads");
		if (f->minor_faults || f->major_faults)
			printf("; page faults %" PRIu64 " minor, %" PRIu64 " major", f->minor_faults,
			       f->major_faults);
		printf("; sizes ");
		size_dist(f);
		printf("\n    pids");
		for (uint32_t i = 0; i < f->npids && i < RPT_FILE_PIDS; i++)
			printf(" %u(%s)", f->pids[i], rpt_proc_comm(m, f->pids[i]));
		if (f->npids > RPT_FILE_PIDS)
			printf(" +more");
		if (f->blk_reqs)
			printf("; device: %" PRIu64 " requests, %s read, %s written, mean service %s",
			       f->blk_reqs, B(f->blk_rbytes, a), B(f->blk_wbytes, b),
			       D(f->blk_svc_ns / f->blk_reqs, c));
		printf("\n");
	}
	free(idx);
	if (m->small_files)
		printf("  small files: %" PRIu64 " of %" PRIu64 " data files read are < 1 MiB and read once "
		       "(%s in %" PRIu64 " reads)\n", m->small_files, m->read_files,
		       B(m->small_bytes, a), m->small_rops);
}

/* Files by role (report_roles.c): the job's data apart from its code and outputs. */
static void roles(const struct rpt_model *m)
{
	static const char *const what[RPT_ROLE_N] = {
		"read by the job", "interpreter, libraries, config", "written state, not read back",
		"logs, outputs, pseudo files",
	};
	char a[32], b[32], c[32];

	printf("\nFILES BY ROLE\n  %-10s %8s %10s %10s %10s\n", "role", "files", "read", "written",
	       "read time");
	for (int r = 0; r < RPT_ROLE_N; r++) {
		const struct rpt_role_sum *s = &m->roles[r];

		printf("  %-10s %8" PRIu64 " %10s %10s %10s  %s\n", rpt_role_names[r], s->files,
		       B(s->rbytes, a), B(s->wbytes, b), D(s->rtime, c), what[r]);
	}
}

static void hist_rows(const uint32_t *h, const char *unit)
{
	uint32_t max = 0;
	int lo = -1, hi = -1;

	for (int i = 0; i < RPT_LOG2_BUCKETS; i++)
		if (h[i]) {
			if (lo < 0)
				lo = i;
			hi = i;
			if (h[i] > max)
				max = h[i];
		}
	for (int i = lo; i >= 0 && i <= hi; i++) {
		uint64_t a = i ? 1ull << (i - 1) : 0, b = i ? (1ull << i) - 1 : 0;
		int w = max ? (int)((uint64_t)h[i] * 40 / max) : 0;

		printf("      %10" PRIu64 " -> %-10" PRIu64 " %s : %-8u |%.*s%*s|\n", a, b, unit, h[i],
		       w, "****************************************", 40 - w, "");
	}
}

static void devices(const struct rpt_model *m)
{
	char a[32], b[32], c[32];
	bool any = false;

	printf("\nDEVICES\n");
	for (size_t i = 0; i < m->ndevs; i++) {
		const struct rpt_dev *d = &m->devs[i];
		uint64_t reqs = 0, peak_i = 0, dur = rpt_model__duration(m);
		double peak = 0;

		for (int k = 0; k < 5; k++)
			reqs += d->ops[k];
		if (!reqs)
			continue;
		any = true;
		for (unsigned k = 0; k < RPT_TL_BUCKETS; k++)
			if (d->rd->v[k] + d->wr->v[k] > peak) {
				peak = d->rd->v[k] + d->wr->v[k];
				peak_i = k;
			}
		printf("  %s: %" PRIu64 " requests; read %s (%" PRIu64 "), write %s (%" PRIu64
		       "), flush %" PRIu64 ", discard %" PRIu64 "; reads %.1f%% of bytes\n",
		       d->name, reqs, B(d->bytes[GPUIO_BLK_READ], a), d->ops[GPUIO_BLK_READ],
		       B(d->bytes[GPUIO_BLK_WRITE], b), d->ops[GPUIO_BLK_WRITE],
		       d->ops[GPUIO_BLK_FLUSH], d->ops[GPUIO_BLK_DISCARD],
		       pct(d->bytes[GPUIO_BLK_READ], d->bytes[GPUIO_BLK_READ] + d->bytes[GPUIO_BLK_WRITE]));
		printf("    writeback %.1f%% of written bytes, metadata/journal %s; mean queue %s, "
		       "mean service %s; mean queue depth %.2f over the capture\n",
		       pct(d->wb_bytes, d->bytes[GPUIO_BLK_WRITE]), B(d->meta_bytes, a),
		       D(d->q_sum / reqs, b), D(d->s_sum / reqs, c),
		       dur ? (double)d->inflight_ns / (double)dur : 0);
		printf("    peak throughput %.1f MiB/s in the %s window at ts=%.3fus\n",
		       peak / 1048576.0 / ((double)m->tl_width / NS_PER_SEC_F), D(m->tl_width, a),
		       (double)(m->tl_t0 + peak_i * m->tl_width - m->hdr->monotonic_ns) / 1e3);
		printf("    queue time (insert -> issue):\n");
		hist_rows(d->q_hist, "us");
		printf("    service time (issue -> complete):\n");
		hist_rows(d->s_hist, "us");
	}
	if (!any)
		printf("  no block requests\n");
}

static int cmp_thread_io(const void *pa, const void *pb, void *arg)
{
	const struct rpt_model *m = arg;
	const struct rpt_thread *a = &m->threads[*(const size_t *)pa];
	const struct rpt_thread *b = &m->threads[*(const size_t *)pb];

	return a->io_ns > b->io_ns ? -1 : a->io_ns < b->io_ns;
}

static void threads(const struct rpt_model *m, const struct rpt_opts *opt)
{
	char a[32], b[32], c[32], d[32], e[32], g[32], i2[32];
	size_t *idx = malloc((m->nthreads + 1) * sizeof(*idx)), lim;
	double peak = 0;
	unsigned peak_i = 0;

	printf("\nTHREADS (time in traced I/O calls vs the rest of the thread's wall time)\n");
	if (!idx)
		return;
	for (size_t i = 0; i < m->nthreads; i++)
		idx[i] = i;
	if (m->nthreads)
		qsort_r(idx, m->nthreads, sizeof(*idx), cmp_thread_io, (void *)m);
	lim = opt->top && opt->top < m->nthreads ? opt->top : m->nthreads;
	printf("  %7s %7s %-15s %10s %10s %6s %10s %10s %10s %10s %10s\n", "pid", "tid", "comm",
	       "wall", "io", "io%", "read", "write", "other io", "cuda sync", "read bytes");
	for (size_t k = 0; k < lim; k++) {
		const struct rpt_thread *t = &m->threads[idx[k]];
		uint64_t wall = rpt_thread__wall(m, t);

		printf("  %7u %7u %-15.15s %10s %10s %5.1f%% %10s %10s %10s %10s %10s\n", t->pid,
		       t->tid, t->comm[0] ? t->comm : rpt_proc_comm(m, t->pid), D(wall, a),
		       D(t->io_ns, b), pct(t->io_ns, wall), D(t->read_ns, c), D(t->write_ns, d),
		       D(t->other_ns, e), D(t->cuda_sync_ns, g), B(t->rbytes, i2));
	}
	if (lim < m->nthreads)
		printf("  ... %zu more threads\n", m->nthreads - lim);
	free(idx);
	for (unsigned k = 0; k < RPT_TL_BUCKETS; k++)
		if (m->tl_reads_inflight->v[k] > peak) {
			peak = m->tl_reads_inflight->v[k];
			peak_i = k;
		}
	if (peak > 0) {
		uint64_t dur = rpt_model__duration(m), rt = 0;

		for (size_t i = 0; i < m->nthreads; i++)
			rt += m->threads[i].read_ns;
		printf("  reads in flight: %.2f on average while the capture ran, peak %.2f in the "
		       "%s window at ts=%.3fus\n", dur ? (double)rt / (double)dur : 0,
		       peak / (double)m->tl_width, D(m->tl_width, a),
		       (double)(m->tl_t0 + peak_i * m->tl_width - m->hdr->monotonic_ns) / 1e3);
	}
	{
		size_t readers = 0;

		for (size_t i = 0; i < m->nthreads; i++)
			readers += m->threads[i].rops > 0;
		printf("  %zu thread(s) in %zu process(es) read files\n", readers, m->nprocs);
	}
}

int rpt_text__print(const struct rpt_model *m, const struct rpt_opts *opt)
{
	printf("gpuio report: %s\n", m->path);
	warnings(m);
	headlines(m);
	wait_section(m);
	recos(m);
	summary(m);
	gpu(m);
	ckpts(m);
	roles(m);
	files(m, opt);
	devices(m);
	threads(m, opt);
	rpt_net__text(m, opt->top);      /* only where sockets were named */
	return fflush(stdout) ? -errno : 0;
}

/* The largest kinds of ns (up to 3) as "futex 1.20 s, on_cpu 0.10 s". */
static void kinds(const uint64_t *ns, char *buf, size_t len)
{
	bool used[RPT_TW_N] = { false };
	size_t at = 0;
	char a[32];

	buf[0] = 0;
	for (int r = 0; r < 3; r++) {
		int best = -1;

		for (int k = 0; k < RPT_TW_N; k++)
			if (!used[k] && ns[k] && (best < 0 || ns[k] > ns[best]))
				best = k;
		if (best < 0 || at >= len)
			break;
		used[best] = true;
		at += (size_t)snprintf(buf + at, len - at, "%s%s %s", r ? ", " : "",
				       rpt_tw_names[best], D(ns[best], a));
	}
	if (!buf[0])
		snprintf(buf, len, "no thread states there");
}

int rpt_text__print_hosts(const struct rpt_hosts *j)
{
	const struct rpt_hosts_host *s;
	const struct rpt_wait *sw;
	char a[32], b[32], k[256];

	printf("ACROSS HOSTS (%d captures of one job; clocks met through their anchors)\n", j->n);
	if (j->straggler < 0) {
		printf("  no training loop in any capture (thread states needed: --no-sched was off?)\n\n");
		return ferror(stdout) ? -EIO : 0;
	}
	s = &j->h[j->straggler];
	sw = s->m->loops[j->loop];
	printf("  straggler: %s (%s), loop pid %u tid %u (%s): waited for data %.1f%% of its run "
	       "(%s), its largest cause %s\n", s->label, s->m->path, sw->pid, sw->tid,
	       rpt_wait__thread(s->m, sw), 100.0 * rpt_hosts__waited(sw), D(sw->ns[RPT_TW_DATA], a),
	       rpt_wait__cause(sw));
	printf("  meanwhile, during its %s of waits, the other hosts' loops:\n", D(j->window_ns, b));
	for (int i = 0; i < j->n; i++) {
		const struct rpt_model *m = j->h[i].m;

		if (i == j->straggler)
			continue;
		if (!m->nloops)
			printf("    %-20.20s no loop found\n", j->h[i].label);
		for (size_t l = 0; l < m->nloops; l++) {
			const char *busy = rpt_hosts__busy_with(j->h[i].meanwhile[l]);
			bool coll = !strcmp(busy, "futex") || !strcmp(busy, "socket") || !strcmp(busy, "poll");

			kinds(j->h[i].meanwhile[l], k, sizeof(k));
			printf("    %-20.20s pid %-7u tid %-7u %s -> %s%s\n", j->h[i].label, m->loops[l]->pid,
			       m->loops[l]->tid, k, busy,
			       coll ? " (how a collective such as all_reduce waits for the straggler)" : "");
		}
	}
	printf("  every loop:\n  %-20s %-8s %-8s %-16s %12s %7s  %s\n", "host", "pid", "tid", "thread",
	       "data wait", "of run", "its largest cause");
	for (int i = 0; i < j->n; i++) {
		const struct rpt_model *m = j->h[i].m;

		for (size_t l = 0; l < m->nloops; l++) {
			const struct rpt_wait *w = m->loops[l];

			printf("  %-20.20s %-8u %-8u %-16.16s %12s %6.1f%%  %s\n", j->h[i].label, w->pid,
			       w->tid, rpt_wait__thread(m, w), D(w->ns[RPT_TW_DATA], a),
			       pct(w->ns[RPT_TW_DATA], rpt_wait__span(w)), rpt_wait__cause(w));
		}
	}
	printf("\n");
	return ferror(stdout) ? -EIO : 0;
}
