// SPDX-License-Identifier: MIT
/*
 * session.c — one `gpuio trace` (session.h): setup, targets, the loop,
 * the end, the export and the summary. Every resource lives in struct
 * trace_session so that any step can fail and session_free() still
 * releases exactly what was taken.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "gpuio.skel.h"
#include "capture/capture.h"
#include "capture/cap_drops.h"
#include "gpuio.h"
#include "trace/cuda_probes.h"
#include "trace/gpu_watch.h"
#include "lib/clock.h"
#include "lib/keyset.h"
#include "lib/log.h"
#include "trace/launch.h"
#include "trace/loader.h"
#include "trace/procfs.h"
#include "trace/drain_prio.h"
#include "trace/ringbuf_drain.h"
#include "trace/sampler.h"
#include "trace/session.h"
#include "trace/start_clock.h"
#include "trace/start_at.h"
#include "lib/units.h"

#define MAX_TARGETS 4096

struct trace_session {
	const struct trace_opts *o;
	struct gpuio_loader *l;
	struct gpuio_cap_writer *w;
	struct ringbuf_drain *c;      /* ring buffer -> capture */
	struct sampler *sampler;      /* --sample-hz's perf events, or NULL */
	struct cuda_probes *cp;
	struct gpu_watch *gw;
	const struct trace_hooks *h;
	const struct trace_gpu_ops *gpu;        /* the CUPTI collectors' side, or NULL */
	bool ticking;                           /* h->tick is called */
	bool drain_rt;                          /* the loop runs at SCHED_FIFO */
	struct gpuio_launch child;
	struct gpuio_cap_header hdr;
	struct ringbuf_drain_totals tot;
	struct keyset *gpu_named;       /* no BPF: processes described from /proc */
	struct keyset *gpu_renamed;     /* no BPF: ... and named again once CUDA runs */
	__u64 gpu_write_errors;         /* no BPF: GPU records not added to the capture */
	uid_t ouid;                     /* outputs belong to sudo's caller */
	gid_t ogid;
	const char *why_end;
	int child_status;
	__u64 start;
	struct start_clock sc;           /* the start, part by part (-v) */
};

static volatile sig_atomic_t stop_signal;

/* The loop's tick without a ring buffer to wait on; a signal ends it early. */
static int sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
	return 0;
}

static void on_signal(int sig)
{
	stop_signal = sig;
}

static void fill_header(struct trace_session *s)
{
	const struct trace_opts *o = s->o;
	struct gpuio_cap_header *h = &s->hdr;
	size_t used = 0, dl;

	gpuio_cap_header__init(h, (__u32)libbpf_num_possible_cpus(),
			       (o->all ? GPUIO_CAPF_ALL : 0) | (o->all_fds ? GPUIO_CAPF_ALL_FDS : 0) |
			       (o->cmd ? GPUIO_CAPF_LAUNCH : 0) | (o->no_bpf ? GPUIO_CAPF_NO_BPF : 0) |
			       (o->no_sockets || o->no_bpf ? 0 : GPUIO_CAPF_SOCKETS));
	if (s->l)
		gpuio_loader__describe(s->l, h);
	else
		gpuio_loader__describe_off(o->no_bpf_why, h);
	if (o->all)
		snprintf(h->target, sizeof(h->target), "all");
	else if (o->cmd)
		snprintf(h->target, sizeof(h->target), "launch %s", o->cmd[0]);
	else {
		size_t t = (size_t)snprintf(h->target, sizeof(h->target), "pid");
		for (int i = 0; i < o->npids && t < sizeof(h->target) - 12; i++)
			t += (size_t)snprintf(h->target + t, sizeof(h->target) - t, "%s%d",
					      i ? "," : " ", o->pids[i]);
	}
	for (int i = 0; i < o->argc && used < sizeof(h->cmdline) - 1; i++)
		used += (size_t)snprintf(h->cmdline + used, sizeof(h->cmdline) - used, "%s%s",
					 i ? " " : "", o->argv[i]);
	dl = strlen(h->modes_detail);
	if (s->cp)
		snprintf(h->modes_detail + dl, sizeof(h->modes_detail) - dl,
			 "; cuda uprobes: %d libs (%d functions) at start, more as loaded",
			 cuda_probes__nlibs(s->cp), cuda_probes__nfuncs(s->cp));
	else
		snprintf(h->modes_detail + dl, sizeof(h->modes_detail) - dl, "; cuda uprobes: off%s",
			 o->no_cuda_uprobes ? " (--no-cuda-uprobes)" : "");
}

/*
 * Without BPF no exec or fork record names a process: /proc does, once,
 * when it is first seen (launched, found under a target, or its collector
 * spoke).
 */
static void name_process(void *ctx, pid_t pid)
{
	struct trace_session *s = ctx;

	if (s->gpu_named && !keyset__test_and_add(s->gpu_named, (__u64)pid, 0) &&
	    procfs_alive(pid))
		procfs_emit_process(s->w, pid, false, clock_mono_ns(), NULL);
}

/*
 * A process's CUPTI collector is on: CUPTI gives its CUDA calls (with
 * correlation ids), so its uprobes only cost it a trap per call: remove
 * them. Off (another profiler holds CUPTI, no GPU): the uprobes stay.
 */
static void on_collector_state(void *ctx, pid_t pid, const struct gpuio_gpu_info *in)
{
	struct trace_session *s = ctx;
	int n;

	if (s->o->no_bpf) {
		name_process(s, pid);
		/* its collector runs: the process has its final image (an exec since
		 * it was first seen, e.g. through env or a shell, renames it) */
		if (s->gpu_renamed && !keyset__test_and_add(s->gpu_renamed, (__u64)pid, 0))
			procfs_emit_attach(s->w, pid, clock_mono_ns());
	}
	if (in->state != GPUIO_GPU_ON || !s->cp)
		return;
	n = cuda_probes__detach_pid(s->cp, pid);
	if (n > 0)
		pr_info("pid %d: CUDA API calls from its CUPTI collector; its uprobes removed (%d "
			"libraries)", pid, n);
}

static void on_cuda_process(void *ctx, pid_t pid)
{
	struct trace_session *s = ctx;

	s->gpu->on_cuda_process(s->gpu->ctx, pid);
}

/* The GPU side: CUDA uprobes on the libraries known now, the CUPTI collector, the watch. */
static void gpu_setup(struct trace_session *s)
{
	const struct trace_opts *o = s->o;
	struct gpu_watch_opts wo = {
		.trace_all = o->all, .traced_fd = s->l ? bpf_map__fd(s->l->skel->maps.traced) : -1,
	};

	/* CUDA libraries already known: the targets' (the command's at launch) */
	if (s->l && strcmp(s->l->cuda_mode, "off") && cuda_probes__new(s->l, o->all, &s->cp) == 0) {
		for (int i = 0; i < o->npids; i++)
			cuda_probes__scan_pid(s->cp, o->pids[i]);
	}
	wo.on_new_cuda_process = s->gpu && s->gpu->on_cuda_process ? on_cuda_process : NULL;
	wo.on_new_process = o->no_bpf ? name_process : NULL;
	if (s->gpu && s->gpu->on_state && (s->cp || o->no_bpf))
		s->gpu->on_state(s->gpu->ctx, on_collector_state, s);
	wo.ctx = s;
	if (gpu_watch__new(s->cp, &wo, &s->gw) != 0)
		pr_warn("CUDA libraries loaded from now on will not be probed (out of memory)");
}

/* --sample-hz: before the header is written, which says its rate (or off) */
static void start_sampler(struct trace_session *s)
{
	char why[160];

	if (!s->o->sample_hz)
		return;
	/* the trace goes on without samples: said, and the header says off */
	if (sampler__start(s->l, s->o->sample_hz, &s->sampler, why, sizeof(why))) {
		pr_warn("no on-CPU samples: %s", why);
		gpuio_loader__set_mode(s->l, GPUIO_LAYER_SAMPLE, "off");
	}
}

/* Load, attach, open the capture (and stream), start draining. 0 or -errno (said). */
static int setup(struct trace_session *s)
{
	const struct trace_opts *o = s->o;
	struct gpuio_loader_opts lo = {
		.trace_all = o->all, .all_fds = o->all_fds, .sockets = !o->no_sockets,
		.self_tgid = (__u32)getpid(),
		.ringbuf_bytes = o->ringbuf, .vfs_mode = o->vfs_mode,
		.no_cuda_uprobes = o->no_cuda_uprobes, .no_sched = o->no_sched,
		.no_faults = o->no_faults, .no_batch = o->no_batch,
		.stacks = o->stacks, .sample_hz = o->sample_hz, .no_native = o->no_native,
	};
	struct sigaction sa = { .sa_handler = on_signal };
	int err;

	if (o->no_bpf) {
		/* said once, plainly: what is off, why, and what is still traced */
		pr_warn("BPF is off (%s): files, disks, thread states and CUDA uprobes are not "
			"traced; GPU kernels, copies, memsets, CUDA API calls and NVTX ranges come "
			"from the CUPTI collector", o->no_bpf_why);
		s->gpu_named = keyset__new(10);
		s->gpu_renamed = keyset__new(10);
		if (!s->gpu_named || !s->gpu_renamed)
			return -ENOMEM;
	} else {
		char modes[256];

		err = gpuio_loader__open(&lo, &s->l);
		if (err)
			return err;
		start_clock__mark(&s->sc, s->l->load_what);
		start_sampler(s);
		start_clock__mark(&s->sc, "samples");
		gpuio_loader__modes_text(s->l, modes, sizeof(modes));
		pr_debug("attach modes: %s cuda=%s", modes, s->l->cuda_mode);
	}
	if (o->start_at_str) {
		/* loaded already: at TIME only the attach is left to do */
		pr_info("waiting until %s to attach (Ctrl-C cancels)", o->start_at_str);
		if (gpuio_start_at__wait(&o->start_at) < 0)
			return -EINTR;
		start_clock__mark(&s->sc, "waiting for --start-at");
	}
	gpu_setup(s);
	start_clock__mark(&s->sc, "CUDA libraries");
	fill_header(s);
	err = gpuio_cap_writer__create(o->capture, &s->hdr, s->ouid, s->ogid, &s->w);
	if (err) {
		pr_err("cannot write capture %s: %s", o->capture, strerror(-err));
		return err;
	}
	if (s->h->started && (err = s->h->started(s->h->ctx)) < 0)
		return err;
	err = s->l ? ringbuf_drain__new(s->l, s->w, &s->c) : 0;
	if (err) {
		pr_err("cannot start the collector: %s", strerror(-err));
		return err;
	}

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	start_clock__mark(&s->sc, "capture and collector");
	return 0;
}

static int traced_add(struct trace_session *s, pid_t pid)
{
	int err;

	if (!s->l) {
		/* no BPF: the GPU watch follows it and its descendants through /proc */
		if (gpu_watch__add_root(s->gw, pid) < 0) {
			pr_err("cannot follow pid %d: too many targets", pid);
			return -ENOSPC;
		}
		return 0;
	}
	err = gpuio_loader__traced_add(s->l, (__u32)pid);
	if (err) {
		pr_err("cannot add pid %d to the traced set: %s", pid, strerror(-err));
		return err;
	}
	return 0;
}

/* Describe tgid, already in the traced set, in the capture; a process gone
 * by now leaves the set (a root target that is gone is an error). */
static int describe_target(struct trace_session *s, pid_t tgid, bool is_root_target)
{
	/* its interpreter, for the stacks of what it does from now on */
	if (s->c)
		ringbuf_drain__python(s->c, tgid);
	/* after the map insert: anything it does from now on is seen */
	if (!procfs_alive(tgid) ||
	    procfs_emit_process(s->w, tgid, s->o->all_fds, clock_mono_ns(),
				s->c ? ringbuf_drain__named(s->c) : NULL) < 0) {
		if (s->l)
			gpuio_loader__traced_del(s->l, (__u32)tgid);
		if (is_root_target) {
			pr_err("process %d exited before gpuio could attach", tgid);
			return -ESRCH;
		}
	}
	return 0;
}

/*
 * No BPF, so no exec record: name the command from /proc once its exec has
 * set its name (the error pipe closes a moment before that).
 */
static void name_launched(struct trace_session *s)
{
	char path[64], self[32] = "", comm[32];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", s->child.pid);
	if ((f = fopen("/proc/self/comm", "r"))) {
		if (!fgets(self, sizeof(self), f))
			self[0] = 0;
		fclose(f);
	}
	for (int i = 0; i < 50; i++) {
		f = fopen(path, "r");
		if (!f)
			return;
		if (!fgets(comm, sizeof(comm), f))
			comm[0] = 0;
		fclose(f);
		if (strcmp(comm, self))
			break;
		sleep_ms(1);
	}
	name_process(s, s->child.pid);
}

/* Start the command held at its gate, in the traced set before it execs. */
static int launch(struct trace_session *s)
{
	const struct trace_opts *o = s->o;
	int err;

	if (s->gpu && s->gpu->before_launch)
		s->gpu->before_launch(s->gpu->ctx);
	err = gpuio_launch__start(o->cmd, &s->child);
	if (err) {
		pr_err("cannot start '%s': %s", o->cmd[0], strerror(-err));
		return err;
	}
	/* its very first I/O is traced; its names come from the exec record,
	 * not from gpuio's fork image */
	if (traced_add(s, s->child.pid)) {
		gpuio_launch__abort(&s->child);
		return -EPERM;
	}
	/* its CUDA libraries probed for it alone, before its first call */
	if (s->cp)
		cuda_probes__attach_for_exec(s->cp, o->cmd[0], s->child.pid);
	/* what the command inherits and keeps across exec (stdout to a file) */
	if (s->c)
		procfs_emit_fds(s->w, s->child.pid, o->all_fds, true, clock_mono_ns(),
				ringbuf_drain__named(s->c));
	if (gpuio_launch__release(&s->child, o->cmd[0]) < 0) {
		s->child.pid = -1;
		return -ECHILD;
	}
	if (o->no_bpf)
		name_launched(s);
	return 0;
}

/* Append to all[*n] the descendants of the -p targets not in it yet. */
static void find_descendants(const struct trace_opts *o, pid_t *all, size_t *n)
{
	pid_t *d = calloc(MAX_TARGETS, sizeof(*d));
	size_t nd, k, j;

	for (int i = 0; d && i < o->npids; i++) {
		nd = procfs_descendants(o->pids[i], d, MAX_TARGETS);
		for (k = 0; k < nd && *n < MAX_TARGETS; k++) {
			for (j = 0; j < *n && all[j] != d[k]; j++)
				;
			if (j == *n)
				all[(*n)++] = d[k];
		}
	}
	free(d);
}

/*
 * -p PID...: each target and its descendants, all put in the traced set
 * before any is described: reading a process's /proc takes milliseconds (a
 * torch process: tens), and a worker added after its parent's description
 * would be traced from later than its parent, its first requests or reads
 * missing from a window that starts at the parent's first event. /proc is
 * walked before the inserts (so they land together) and once after them,
 * for a child forked in between; the kernel adds those forked later.
 */
static int attach_pids(struct trace_session *s)
{
	pid_t *all = calloc(MAX_TARGETS, sizeof(*all));
	size_t n = 0, k = 0;
	int err = 0;

	if (!all)
		return -ENOMEM;
	for (int i = 0; i < s->o->npids && n < MAX_TARGETS; i++)
		all[n++] = s->o->pids[i];
	find_descendants(s->o, all, &n);
	for (int pass = 0; pass < 2 && !err; pass++) {
		for (; k < n && !err; k++)
			err = traced_add(s, all[k]);
		if (!pass)
			find_descendants(s->o, all, &n);
	}
	for (k = 0; k < n && !err; k++)
		if (describe_target(s, all[k], k < (size_t)s->o->npids) < 0)
			err = -ESRCH;
	free(all);
	return err;
}

/* Whether the launched command or the -p targets are gone (why_end set). */
static bool targets_ended(struct trace_session *s)
{
	if (s->child.pid > 0) {
		int st;

		/* only its end: a GPU injection that could not detach leaves
		 * ptrace stops that waitpid reports too */
		if (waitpid(s->child.pid, &st, WNOHANG) == s->child.pid &&
		    (WIFEXITED(st) || WIFSIGNALED(st))) {
			s->child_status = st;
			s->child.pid = -1;
			s->why_end = "command exited";
			return true;
		}
	} else if (s->o->npids && (s->c ? ringbuf_drain__targets_gone(s->c)
					   : gpu_watch__roots_gone(s->gw))) {
		s->why_end = "all traced processes exited";
		return true;
	}
	return false;
}

/* Drain until an end comes; ticks for the stream, the GPU side and progress. */
static void loop(struct trace_session *s)
{
	const struct trace_opts *o = s->o;
	__u64 last_stats, last_progress, now;
	int err;

	s->start = last_stats = last_progress = clock_mono_ns();
	for (;;) {
		int wait_ms = 100;

		/* -d ends on time, not at the next 100 ms period after it */
		if (o->duration_ns) {
			__u64 at = s->start + o->duration_ns, t = clock_mono_ns();

			if (at <= t)
				wait_ms = 0;
			else if ((at - t) / 1000000 < 100)
				wait_ms = (int)((at - t + 999999) / 1000000);
		}
		err = s->c ? ringbuf_drain__poll(s->c, wait_ms) : sleep_ms(wait_ms);
		if (err) {
			pr_err("reading events failed: %s", strerror(-err));
			s->why_end = "error";
			return;
		}
		now = clock_mono_ns();
		/* the poll flushed whole records to the capture: stream them on */
		if (s->ticking && s->h->tick(s->h->ctx, now))
			s->ticking = false;
		if (stop_signal) {
			s->why_end = stop_signal == SIGINT ? "interrupted" : "terminated";
			return;
		}
		if (o->duration_ns && now - s->start >= o->duration_ns) {
			s->why_end = "duration reached";
			return;
		}
		if (targets_ended(s))
			return;
		gpu_watch__tick(s->gw, now);
		if (now - last_stats >= NSEC_PER_SEC) {
			if (s->gpu && s->gpu->poll && s->gpu->poll(s->gpu->ctx, s->w) < 0) {
				pr_warn("GPU records could not be added to the capture");
				s->gpu_write_errors++;
			}
			if (s->c)
				ringbuf_drain__write_stats(s->c, false);
			last_stats = now;
		}
		if (s->c && now - last_progress >= 10 * NSEC_PER_SEC && isatty(STDERR_FILENO) &&
		    gpuio_log_verbosity >= GPUIO_LOG_INFO) {
			ringbuf_drain__totals(s->c, &s->tot);
			pr_info("%.0fs: %llu events, %llu dropped", (now - s->start) / NS_PER_SEC_F,
				(unsigned long long)(s->tot.vfs + s->tot.block),
				(unsigned long long)s->tot.dropped);
			last_progress = now;
		}
	}
}

/*
 * Without BPF the capture still ends with a final STATS record, so readers
 * know it is whole: no BPF program ran, so none lost anything; failed
 * writes of GPU records count as write errors. The header's NO_BPF flag and
 * "off" modes say which layers there were.
 */
static void write_stats_no_bpf(struct trace_session *s)
{
	struct gpuio_stats_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.hdr.type = GPUIO_REC_STATS;
	ev.hdr.size = sizeof(ev);
	ev.hdr.ts = clock_mono_ns();
	ev.user[GPUIO_USTAT_WRITE_ERRORS] = s->gpu_write_errors;
	ev.records = gpuio_cap_writer__records(s->w) + 1;
	ev.final = 1;
	if (gpuio_cap_writer__append(s->w, &ev, sizeof(ev)) < 0)
		pr_warn("the capture's final counters could not be written");
}

/* Stop producing, take the last records, release the probes; close the capture. */
static int stop(struct trace_session *s)
{
	int err;

	/* stop producing before the last drain so nothing arrives after it */
	if (s->c) {
		/* page faults still open (a thread's last): settled into the ring */
		gpuio_loader__flush_faults(s->l);
		/* records still batched in threads that did not leave their CPU */
		gpuio_loader__flush_batches(s->l);
		ringbuf_drain__drain(s->c);
		ringbuf_drain__totals(s->c, &s->tot);
	}
	/* collectors of exited processes flushed at exit; injected ones get a period */
	if (s->gpu && s->gpu->finish && s->gpu->finish(s->gpu->ctx, s->w) < 0) {
		pr_warn("GPU records could not be added to the capture");
		s->gpu_write_errors++;
	}
	if (s->c)
		ringbuf_drain__write_stats(s->c, true);
	else
		write_stats_no_bpf(s);
	sampler__stop(s->sampler);
	s->sampler = NULL;
	ringbuf_drain__free(s->c);
	s->c = NULL;
	gpu_watch__free(s->gw);
	s->gw = NULL;
	if (s->cp)
		pr_debug("cuda uprobes: %d libs, %d functions probed", cuda_probes__nlibs(s->cp),
			 cuda_probes__nfuncs(s->cp));
	cuda_probes__free(s->cp);
	s->cp = NULL;
	gpuio_loader__destroy(s->l);
	s->l = NULL;
	keyset__free(s->gpu_named);
	keyset__free(s->gpu_renamed);
	s->gpu_named = s->gpu_renamed = NULL;
	err = gpuio_cap_writer__close(s->w);
	s->w = NULL;
	if (err)
		pr_err("capture %s is incomplete: %s", s->o->capture, strerror(-err));
	return err;
}

/* Nothing lost silently: what the kernel side could not deliver. */
static void say_drops(const struct ringbuf_drain_totals *t, size_t ringbuf)
{
	char list[512];

	if (t->dropped) {
		gpuio_drops__total(GPUIO_DROPS_WARN, &t->stats, list, sizeof(list));
		pr_warn("%llu events were lost (%s); try --ringbuf %zuM (twice this one)",
			(unsigned long long)t->dropped, list, (size_t)(2 * ringbuf / MiB));
	}
	for (size_t i = 0; i < gpuio_ndrop_groups; i++)
		if (gpuio_drop_group__line(&gpuio_drop_groups[i], GPUIO_DROPS_WARN, NULL, &t->stats,
					   list, sizeof(list)))
			pr_warn("%s", list);
}

/* A command still running at the end: pass a TERM on, wait a little; its exit code (-1: none). */
static int end_child(struct trace_session *s)
{
	if (s->child.pid > 0) {
		/* ended by signal or -d: the command got Ctrl-C itself; a TERM is passed on */
		if (stop_signal == SIGTERM)
			kill(s->child.pid, SIGTERM);
		for (int i = 0; stop_signal && i < 50 && s->child.pid > 0; i++) {
			int st;

			if (waitpid(s->child.pid, &st, WNOHANG) == s->child.pid &&
			    (WIFEXITED(st) || WIFSIGNALED(st))) {
				s->child_status = st;
				s->child.pid = -1;
			} else {
				usleep(100000);
			}
		}
		if (s->child.pid > 0)
			pr_info("the command (pid %d) is still running; it is no longer traced",
				s->child.pid);
	}
	if (s->o->cmd && s->child_status >= 0 && WIFEXITED(s->child_status))
		return WEXITSTATUS(s->child_status);
	if (s->o->cmd && s->child_status >= 0 && WIFSIGNALED(s->child_status))
		return 128 + WTERMSIG(s->child_status);
	return -1;
}

/* After a failure before the end: undo what was done, in reverse. */
static void session_free(struct trace_session *s)
{
	if (s->child.pid > 0)
		gpuio_launch__abort(&s->child);
	sampler__stop(s->sampler);
	s->sampler = NULL;
	ringbuf_drain__free(s->c);
	gpu_watch__free(s->gw);
	cuda_probes__free(s->cp);
	if (s->w)
		gpuio_cap_writer__close(s->w);
	gpuio_loader__destroy(s->l);
	keyset__free(s->gpu_named);
	keyset__free(s->gpu_renamed);
}

/* -d as the user would write it: 2s, 500ms, 5m, 1h (else seconds, 3 decimals) */
static void duration_text(uint64_t ns, char *b, size_t n)
{
	static const struct { uint64_t ns; const char *unit; } u[] = {
		{ 3600000000000ull, "h" }, { 60000000000ull, "m" }, { 1000000000ull, "s" },
		{ 1000000ull, "ms" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(u); i++)
		if (ns % u[i].ns == 0) {
			snprintf(b, n, "%llu%s", (unsigned long long)(ns / u[i].ns), u[i].unit);
			return;
		}
	snprintf(b, n, "%.3fs", (double)ns / 1e9);
}

/* --drain-priority: the loop before every ordinary task (drain_prio.h). */
static void drain_raise(struct trace_session *s)
{
	char why[160];
	int err;

	if (!s->o->drain_prio || s->o->no_bpf)
		return;
	err = drain_prio__raise((int)s->o->drain_prio, why, sizeof(why));
	if (err) {
		pr_warn("the ring buffer is drained at the usual priority (SCHED_FIFO %u: %s): "
			"a busy node may make the kernel drop records", s->o->drain_prio, why);
		return;
	}
	s->drain_rt = true;
	pr_debug("draining at SCHED_FIFO priority %u (--drain-priority)", s->o->drain_prio);
}

int trace_session__run(const struct trace_opts *o, const struct trace_hooks *h,
		       struct trace_result *r)
{
	static const struct trace_hooks none;
	struct trace_session s = {
		.o = o, .h = h ? h : &none, .why_end = "stopped", .child_status = -1,
		.child = { .pid = -1, .gate_fd = -1, .err_fd = -1 },
	};
	__u64 cpu0;
	bool batched;
	int err;

	memset(r, 0, sizeof(*r));
	r->exit_code = -1;
	s.gpu = s.h->gpu;
	s.ticking = s.h->tick != NULL;
	gpuio_sudo_ids(&s.ouid, &s.ogid);
	start_clock__begin(&s.sc);
	/* from the start: the programs record from their attach on, while
	 * /proc is read for every process a busy node has */
	drain_raise(&s);
	if (setup(&s) < 0)
		goto fail;
	if (o->cmd) {
		err = launch(&s);
		if (err == -ECHILD) {
			if (s.drain_rt)
				drain_prio__restore();
			session_free(&s);
			return 127;
		}
		if (err)
			goto fail;
	} else if (o->npids && attach_pids(&s) < 0) {
		goto fail;
	}
	/* the targets' descendants too, and from now on every tick */
	gpu_watch__scan(s.gw);
	gpuio_cap_writer__flush(s.w);
	start_clock__mark(&s.sc, o->cmd ? "the command" : "targets");
	if (gpuio_log_verbosity >= GPUIO_LOG_DEBUG) {
		char t[512];

		start_clock__text(&s.sc, t, sizeof(t));
		pr_debug("%s", t);
	}
	if (gpuio_log_verbosity >= GPUIO_LOG_INFO) {
		char d[32] = "";

		if (o->duration_ns)
			duration_text(o->duration_ns, d, sizeof(d));
		pr_info("tracing %s (vfs: %s, block: %s)%s%s; Ctrl-C to stop", s.hdr.target,
			s.l ? s.l->modes[GPUIO_LAYER_VFS] : "off",
			s.l ? s.l->modes[GPUIO_LAYER_BLOCK] : "off",
			o->duration_ns ? " for " : "", d);
	}
	cpu0 = process_cpu_ns();
	loop(&s);
	batched = s.l && s.l->vfs_batch;
	err = stop(&s);
	if (s.drain_rt)                 /* after the last drain; the export runs as usual */
		drain_prio__restore();
	/* what the tracer itself used while tracing (make vmbench adds it to the
	 * traced program's own CPU: the guest's kernel threads are left out) */
	pr_debug("tracer CPU while tracing: %llu ns (user+sys, from the attach to the end)",
		 (unsigned long long)(process_cpu_ns() - cpu0));
	r->why_end = s.why_end;
	r->seconds = (clock_mono_ns() - s.start) / NS_PER_SEC_F;
	r->no_bpf = o->no_bpf;
	r->vfs = s.tot.vfs;
	r->block = s.tot.block;
	r->cuda = s.tot.cuda;
	r->sched = s.tot.sched;
	r->dropped = s.tot.dropped;
	if (!err)
		say_drops(&s.tot, o->ringbuf);
	if (batched)
		pr_debug("VFS records: %llu, %llu of them in %llu ring-buffer batches (%.1f records a "
			 "reservation)", (unsigned long long)s.tot.vfs,
			 (unsigned long long)s.tot.batched, (unsigned long long)s.tot.batches,
			 s.tot.batches ? (double)s.tot.batched / (double)s.tot.batches : 0.0);
	r->exit_code = end_child(&s);
	return err ? GPUIO_EXIT_ERROR : 0;
fail:
	if (s.drain_rt)
		drain_prio__restore();
	session_free(&s);
	return GPUIO_EXIT_ERROR;
}
