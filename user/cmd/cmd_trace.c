// SPDX-License-Identifier: MIT
/*
 * cmd_trace.c — `gpuio trace`: the options (one table), the checks (targets
 * exist, outputs writable, names say a format, BPF or the GPU alone), then
 * the composition: the trace (trace/session.c) with the GPU collector's side
 * (gpu/cupti_launch.c) handed to it as hooks, the live stream on its ticks
 * (--stream), the export of the closed capture, and the summary line.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include "cmd/commands.h"
#include "cmd/options.h"
#include "export/export.h"
#include "export/stream.h"
#include "export/stream_runner.h"
#include "gpu/cupti_launch.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/opts.h"
#include "lib/parse.h"
#include "lib/units.h"
#include "trace/drain_prio.h"
#include "trace/launch.h"
#include "trace/loader.h"
#include "trace/procfs.h"
#include "trace/session.h"
#include "trace/start_at.h"

/* Everything the command line says: the trace's part and the command's own. */
struct trace_cmd {
	struct trace_opts t;
	const char *output;      /* set: a name is made when -o is absent */
	bool no_export;
	bool no_gpu_collector;   /* --no-gpu: no CUPTI collector at all */
	bool no_gpu_inject;
	bool stream;
	struct gpuio_stream_opts so;
	bool quiet;
	int stacks;              /* --stacks / --no-stacks, -1: neither (the default) */
	/* while tracing */
	struct cupti_launch *gc;
	struct gpuio_stream *st;
	struct stream_runner *sr;        /* --stream: pumped on its own thread */
	uid_t ouid;
	gid_t ogid;
};

/* -p 12,34: each a process id (at most 64 in all). */
static int on_pid(const struct opt *opt, const char *arg, void *ctx)
{
	struct trace_cmd *c = ctx;
	char buf[256], *tok, *save = NULL;

	snprintf(buf, sizeof(buf), "%s", arg);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		unsigned long v;

		if (parse_ulong(tok, 1, INT_MAX, &v)) {
			pr_err("-p: '%s' is not a process id", tok);
			return -1;
		}
		if (c->t.npids == (int)ARRAY_SIZE(c->t.pids)) {
			pr_err("-p: too many pids (at most 64)");
			return -1;
		}
		c->t.pids[c->t.npids++] = (pid_t)v;
	}
	return 0;
}

/* "16M", "1G", "4096": bytes rounded up to a power of two >= 1 MiB */
static int on_ringbuf(const struct opt *opt, const char *arg, void *ctx)
{
	struct trace_cmd *c = ctx;
	uint64_t v;
	size_t p = MiB;

	if (parse_bytes(arg, &v) || v > (1ull << 31)) {
		pr_err("--ringbuf: bad size '%s' (examples: 16M, 256M)", arg);
		return -1;
	}
	while (p < v)
		p <<= 1;
	c->t.ringbuf = p;
	return 0;
}

static int on_rotate(const struct opt *opt, const char *arg, void *ctx)
{
	struct trace_cmd *c = ctx;

	if (gpuio_stream_opts__parse_rotate(&c->so, arg)) {
		pr_err("--rotate: bad limit '%s' (examples: 1h, 30m, 1GiB, 500M)", arg);
		return -1;
	}
	return 0;
}

static int on_start_at(const struct opt *opt, const char *arg, void *ctx)
{
	struct trace_cmd *c = ctx;

	c->t.start_at_str = arg;
	if (gpuio_start_at__parse(arg, &c->t.start_at)) {
		pr_err("--start-at: bad time '%s' (examples: 14:30:00, @1700000000)", arg);
		return -1;
	}
	return 0;
}

static int on_no_bpf(const struct opt *opt, const char *arg, void *ctx)
{
	struct trace_cmd *c = ctx;

	c->t.no_bpf = true;
	c->t.no_bpf_why = "--no-bpf";
	return 0;
}

static int on_stacks(const struct opt *opt, const char *arg, void *ctx)
{
	struct trace_cmd *c = ctx;

	c->stacks = !strcmp(opt->long_name, "stacks") ? GPUIO_STACKS_ALL : GPUIO_STACKS_OFF;
	return 0;
}

#define SAMPLE_HZ_DEFAULT 99            /* not 100: off the kernel's own tick */
#define SAMPLE_HZ_UNSET   UINT_MAX

/*
 * Python stacks by default at each sleep and 99 samples a second: a few µs
 * per sleep, 0.03% of a CPU (docs/overhead.md); on every call (--stacks)
 * they cost more than the call's own tracing, so that is asked for. With
 * -a nothing by default: every process on the node would be looked into.
 */
static void resolve_stacks(struct trace_cmd *c)
{
	if (c->stacks < 0)
		c->stacks = c->t.all ? GPUIO_STACKS_OFF : GPUIO_STACKS_SLEEPS;
	c->t.stacks = (enum gpuio_stacks)c->stacks;
	if (c->t.sample_hz == SAMPLE_HZ_UNSET)
		c->t.sample_hz = c->t.stacks == GPUIO_STACKS_OFF ? 0 : SAMPLE_HZ_DEFAULT;
}

/*
 * The ring buffer: 16 MiB for a process tree; with -a, 16 MiB a CPU within
 * [64 MiB, 512 MiB]: every CPU of a busy node writes into the one ring, and
 * the whole node's burst while the drain waits for its turn must fit. And
 * with -a the drain at SCHED_FIFO 1 unless told otherwise.
 */
static void resolve_ringbuf(struct trace_cmd *c)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	size_t want = 16 * MiB * (size_t)(ncpu > 0 ? ncpu : 1), p = 64 * MiB;

	/* the whole node's drain first; a process tree's as usual (drain_prio.h) */
	if (c->t.drain_prio == DRAIN_PRIO_UNSET)
		c->t.drain_prio = c->t.all ? DRAIN_PRIO_DEFAULT : 0;
	if (c->t.ringbuf)
		return;
	if (!c->t.all) {
		c->t.ringbuf = 16 * MiB;
		return;
	}
	while (p < want && p < 512 * MiB)
		p <<= 1;
	c->t.ringbuf = p;
}

static int on_quiet(const struct opt *opt, const char *arg, void *ctx)
{
	gpuio_log_verbosity = GPUIO_LOG_WARN;
	return 0;
}

static struct trace_cmd cmd;    /* the table points into it */

static const struct opt trace_opts[] = {
	OPT_GROUP("targets (one of):"),
	OPT_CALL('p', "pid", "PID[,PID]", "attach to running processes and all their descendants",
		 on_pid),
	OPT_BOOL('a', "all", &cmd.t.all, "trace every process on the node (except gpuio)"),
	OPT_GROUP("  -- COMMAND [ARGS]      launch COMMAND and trace it from its first instruction\n"
		  "\noptions:"),
	OPT_STRING('o', "output", &cmd.output, "FILE",
		   "trace to write: .json, or .pftrace (Perfetto's protobuf,\n"
		   "~half the size), + .gz for gzip\n"
		   "(default: gpuio-YYYYmmdd-HHMMSS.json)"),
	OPT_STRING(0, "capture", &cmd.t.capture, "FILE",
		   "capture file (default: OUTPUT with .gpuio extension)"),
	OPT_BOOL(0, "no-export", &cmd.no_export,
		 "write only the capture; export later with `gpuio convert`"),
	OPT_DURATION('d', "duration", &cmd.t.duration_ns, "DUR", 1,
		     "stop after DUR: 500ms, 30s, 5m, 1h (default: until\n"
		     "Ctrl-C, or until the command / all targets exit)"),
	OPT_BOOL(0, "all-fds", &cmd.t.all_fds,
		 "also trace pipes, eventfds, other sockets (netlink, ...)\n"
		 "and the rest of the non-file fds"),
	OPT_BOOL(0, "no-sockets", &cmd.t.no_sockets,
		 "do not trace socket I/O (on by default: IPv4, IPv6 and\n"
		 "unix sockets' calls with their peer addresses)"),
	/* a string, not a choice: the loader also takes exact modes (sys:raw_tp) */
	OPT_STRING(0, "vfs-mode", &cmd.t.vfs_mode, "MODE",
		   "force the VFS attach mode: fentry, kprobe, per_syscall\n"
		   "(other processes' syscalls run nothing), syscall (a\n"
		   "program pair on every syscall: fewer links to close), or\n"
		   "one exact mode: sys:each, sys:each:probe, sys:tp_btf,\n"
		   "sys:raw_tp, sys:tracepoint (default: the first that works)"),
	OPT_BOOL(0, "no-sched", &cmd.t.no_sched,
		 "no thread states or wake-ups (the scheduler layer; on by\n"
		 "default: it says what threads did between their calls)"),
	OPT_BOOL(0, "no-faults", &cmd.t.no_faults,
		 "no page faults on file mappings (the fault layer; on by\n"
		 "default: mmap'ed files read by touching them are I/O too)"),
	OPT_BOOL(0, "no-batch", &cmd.t.no_batch,
		 "one ring-buffer record per file call (by default a\n"
		 "thread's records go out together: when it leaves its CPU,\n"
		 "after 16 calls, or 10 ms; cheaper per call)"),
	OPT_CALL(0, "stacks", NULL,
		 "the Python stack (file:line:function) of every traced\n"
		 "call and page fault too (by default: of each sleep of a\n"
		 "Python 3.10-3.13 thread, read from the interpreter's own\n"
		 "frames; costs ~1 us + 0.1 us a frame per call, ~1 us more\n"
		 "for the native frames: docs/stacks.md)",
		 on_stacks),
	OPT_CALL(0, "no-stacks", NULL,
		 "no Python stacks (no call sites, no time in next(), no\n"
		 "samples unless --sample-hz)", on_stacks),
	OPT_BOOL(0, "no-native-frames", &cmd.t.no_native,
		 "Python frames only: no native (C/C++) frames before\n"
		 "them (by default the user stack by frame pointers, up to\n"
		 "the interpreter, where the code keeps them)"),
	OPT_UINT(0, "sample-hz", &cmd.t.sample_hz, "HZ", 0, 10000,
		 "sample traced Python threads on their CPU HZ times a\n"
		 "second, with their stacks: where CPU time went (default\n"
		 "99; 0: none)"),
	OPT_BOOL(0, "no-cuda-uprobes", &cmd.t.no_cuda_uprobes,
		 "do not probe CUDA API calls in libcudart / libcuda.so.1"),
	OPT_BOOL(0, "no-gpu-inject", &cmd.no_gpu_inject,
		 "do not inject the CUPTI collector into running processes\n"
		 "(launched commands still get it via CUDA_INJECTION64_PATH)"),
	OPT_BOOL(0, "no-gpu", &cmd.no_gpu_collector,
		 "no CUPTI collector at all (uprobes still trace CUDA calls)"),
	OPT_CALL(0, "no-bpf", NULL,
		 "load no BPF programs: GPU kernels, copies, CUDA calls and\n"
		 "NVTX from CUPTI only (the default where BPF is refused)", on_no_bpf),
	OPT_CALL(0, "ringbuf", "SIZE",
		 "BPF ring buffer size, e.g. 64M (default 16M; with -a\n"
		 "16M a CPU, 64M to 512M)", on_ringbuf),
	OPT_UINT(0, "drain-priority", &cmd.t.drain_prio, "N", 0, 99,
		 "drain the ring buffer at SCHED_FIFO priority N while\n"
		 "tracing: before every ordinary task, so a busy node does\n"
		 "not make the kernel drop records (it sleeps when the ring\n"
		 "is empty). Default 1 with -a, else 0 (the usual priority:\n"
		 "a real-time drain cost a DataLoader on busy cores more).\n"
		 "--stream takes it too while over 2s behind, and at the end"),
	OPT_BOOL(0, "stream", &cmd.stream,
		 "write the .pftrace while tracing: memory stays flat, and a\n"
		 "killed trace is readable up to its last second"),
	OPT_CALL(0, "rotate", "LIMIT",
		 "with --stream: a new self-contained file every 1h / 30m\n"
		 "or every 1GiB / 500M (OUT.0001.pftrace[.gz], ...)", on_rotate),
	OPT_UINT(0, "keep", &cmd.so.keep, "N", 1, 1000000,
		 "with --rotate: keep only the newest N files"),
	OPT_CALL(0, "start-at", "TIME",
		 "load, then wait until TIME (HH:MM[:SS] or @EPOCH) to\n"
		 "attach: traces on several hosts begin together\n"
		 "(--activate is the same); merge them with `gpuio merge`", on_start_at),
	OPT_ALIAS("activate"),
	OPT_INCR('v', "verbose", &gpuio_log_verbosity,
		 "say which attach mode each layer uses and why (-vv: more)"),
	OPT_CALL('q', "quiet", NULL, "print only errors and the summary line", on_quiet),
	OPT_END(),
};

static const struct opt_cmd trace_cmd_page = {
	.name = "trace",
	.usage = "usage: gpuio trace [OPTIONS] (-p PID[,PID...] | -a | -- COMMAND [ARGS...])",
	.about =
"Trace what a process tree does with its files, disks and GPUs, and write a\n"
"Chrome trace JSON that opens in Perfetto (ui.perfetto.dev) or chrome://tracing.\n"
"CUDA calls come from uprobes on libcudart/libcuda; GPU kernels and copies from\n"
"the CUPTI collector, given to a launched COMMAND through CUDA_INJECTION64_PATH\n"
"and injected (ptrace) into traced processes that load libcuda.\n"
"Needs root (or CAP_BPF + CAP_PERFMON) for files, disks and thread states.\n"
"Without them, or where the kernel refuses BPF (containers, gVisor), it traces\n"
"the GPU alone through CUPTI (-- COMMAND or -p PID) and says so. A launched\n"
"COMMAND runs as the user who invoked sudo; output files belong to that user.\n",
	.opts = trace_opts,
	.after =
"examples:\n"
"  sudo gpuio trace -o run.json -- fio job.fio\n"
"  sudo gpuio trace -p 4242 -d 30s -o run.json\n"
"  sudo gpuio trace -a -d 10s -o all.json.gz\n"
"  sudo gpuio trace --stream --rotate 1h --keep 24 -o run.pftrace.gz -p 4242\n"
"  sudo gpuio trace -o train.pftrace -- python3 train.py   # then: gpuio report train.gpuio\n",
	.stop_at_nonopt = true,
};

static bool have_bpf_caps(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	if (geteuid() == 0)
		return true;
	if (syscall(SYS_capget, &h, d) != 0)
		return false;
	/* CAP_PERFMON = 38, CAP_BPF = 39: both in the second word */
	return (d[1].effective & (1u << (38 - 32))) && (d[1].effective & (1u << (39 - 32)));
}

/*
 * BPF or the GPU alone: without the privileges, or where the kernel refuses
 * bpf(), a launch or -p still gets its GPU side from CUPTI; -a and the
 * BPF-only options need BPF.
 */
static int choose_bpf(struct trace_cmd *c)
{
	static char why[256];
	struct trace_opts *o = &c->t;

	if (!o->no_bpf) {
		if (!have_bpf_caps())
			snprintf(why, sizeof(why), "not root and no CAP_BPF + CAP_PERFMON");
		else if (gpuio_loader__probe(why, sizeof(why)) == 0)
			return 0;
		o->no_bpf = true;
		o->no_bpf_why = why;
	}
	if (o->all) {
		pr_err("gpuio trace -a needs BPF (%s): run it with sudo, or trace one command "
		       "(-- COMMAND) or process (-p PID) for its GPU side alone", o->no_bpf_why);
		return -EPERM;
	}
	if (o->vfs_mode) {
		pr_err("--vfs-mode needs BPF (%s)", o->no_bpf_why);
		return -EPERM;
	}
	if (c->no_gpu_collector) {
		pr_err("--no-gpu without BPF leaves nothing to trace");
		return -EPERM;
	}
	return 0;
}

/* dirname(path) is a directory we can create files in. */
static int check_writable(const char *path, const char *what)
{
	char buf[PATH_MAX];
	struct stat st;
	char *dir;

	snprintf(buf, sizeof(buf), "%s", path);
	dir = dirname(buf);
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		pr_err("cannot write %s %s: directory %s does not exist", what, path, dir);
		return -ENOENT;
	}
	if (access(dir, W_OK) != 0) {
		pr_err("cannot write %s %s: no write permission on %s (choose another %s)",
		       what, path, dir, strcmp(what, "capture") ? "-o" : "--capture or -o");
		return -EACCES;
	}
	if (lstat(path, &st) == 0 && (S_ISLNK(st.st_mode) || !S_ISREG(st.st_mode))) {
		pr_err("refusing to write %s %s: it exists and is %s", what, path,
		       S_ISLNK(st.st_mode) ? "a symbolic link" : "not a regular file");
		return -EEXIST;
	}
	return 0;
}

/* What the options say together: one target; --rotate/--keep only with --stream. */
static int check_args(const struct trace_cmd *c)
{
	const struct trace_opts *o = &c->t;

	if ((o->npids > 0) + o->all + (o->cmd != NULL) != 1) {
		pr_err("say what to trace: exactly one of -p PID, -a, or -- COMMAND "
		       "(see `gpuio trace --help`)");
		return -EINVAL;
	}
	if ((c->so.rotate_bytes || c->so.rotate_ns || c->so.keep) && !c->stream) {
		pr_err("--rotate and --keep go with --stream (see `gpuio trace --help`)");
		return -EINVAL;
	}
	if (c->so.keep && !c->so.rotate_bytes && !c->so.rotate_ns) {
		pr_err("--keep N needs --rotate (a size or a duration per file)");
		return -EINVAL;
	}
	return 0;
}

/* The output and capture names: made up, checked, writable. GPUIO_EXIT_* or 0. */
static int name_outputs(struct trace_cmd *c, char *outbuf, char *capbuf, size_t len)
{
	if (!c->output) {
		time_t now = time(NULL);
		struct tm tm;

		localtime_r(&now, &tm);
		strftime(outbuf, len, "gpuio-%Y%m%d-%H%M%S.json", &tm);
		c->output = outbuf;
	} else if (!gpuio_export__is_output_name(c->output)) {
		pr_err("-o %s: the output name must end in .json or .json.gz (Chrome "
		       "JSON), or .pftrace or .pftrace.gz (Perfetto protobuf)", c->output);
		return GPUIO_EXIT_USAGE;
	}
	if (c->stream && !gpuio_export__is_pftrace_name(c->output)) {
		pr_err("--stream writes Perfetto protobuf: give -o NAME.pftrace or NAME.pftrace.gz");
		return GPUIO_EXIT_USAGE;
	}
	if (!c->t.capture) {
		cmd_opt__capture_for_output(c->output, capbuf, len);
		c->t.capture = capbuf;
	}
	if (check_writable(c->t.capture, "capture") < 0 ||
	    (!c->no_export && check_writable(c->output, "output") < 0))
		return GPUIO_EXIT_ERROR;
	return 0;
}

/* ---- the GPU collector's side, as the trace's hooks ---- */

static void gpu_before_launch(void *ctx)
{
	cupti_launch__setenv_for_launch(ctx);
}

static void gpu_on_state(void *ctx, trace_gpu_state_fn fn, void *fn_ctx)
{
	cupti_launch__on_state(ctx, fn, fn_ctx);
}

static long gpu_poll(void *ctx, struct gpuio_cap_writer *w)
{
	return cupti_launch__poll(ctx, w);
}

static int gpu_finish(void *ctx, struct gpuio_cap_writer *w)
{
	return cupti_launch__finish(ctx, w);
}

/* ---- the live stream, on the trace's ticks ---- */

static int stream_started(void *ctx)
{
	struct trace_cmd *c = ctx;
	struct gpuio_stream_opts so = c->so;
	int err;

	if (!c->stream)
		return 0;
	so.owner_uid = c->ouid;
	so.owner_gid = c->ogid;
	err = gpuio_stream__open(c->t.capture, c->output, &so, &c->st);
	if (!err && (err = stream_runner__start(c->st, (int)c->t.drain_prio, &c->sr))) {
		pr_err("--stream: cannot start its thread: %s", strerror(-err));
		gpuio_stream__close(c->st, NULL);
		c->st = NULL;
	}
	return err;
}

/* Each tick the capture has new records: the stream's thread looks now. */
static int stream_tick(void *ctx, __u64 now)
{
	struct trace_cmd *c = ctx;

	if (!c->sr)
		return 0;
	if (!stream_runner__error(c->sr)) {
		stream_runner__kick(c->sr);
		return 0;
	}
	stream_runner__stop(c->sr);
	c->sr = NULL;
	gpuio_stream__close(c->st, NULL);
	c->st = NULL;
	pr_warn("the capture goes on; export it later with `gpuio convert`");
	return 1;
}

/* The stream's end: what the thread had not reached, then the last pump. */
static int stream_end(struct trace_cmd *c)
{
	struct gpuio_stream_stats st = { 0 };
	struct stream_runner_stats rs = { 0 };
	__u64 t0 = clock_mono_ns();
	int err;

	stream_runner__finish(c->sr, &rs);
	c->sr = NULL;
	err = !c->st || gpuio_stream__close(c->st, &st) != 0;
	c->st = NULL;
	/* said where it matters: the export fell behind the capture */
	if (st.lag_max_ns >= NSEC_PER_SEC || clock_mono_ns() - t0 >= NSEC_PER_SEC)
		pr_info("--stream: at most %.1fs behind the capture; its end written %.1fs after the trace's",
			st.lag_max_ns / NS_PER_SEC_F, (clock_mono_ns() - t0) / NS_PER_SEC_F);
	if (rs.rt_times)
		pr_info("--stream: caught up at SCHED_FIFO %u %llu time(s), %.1fs in all (the drain's priority)",
			c->t.drain_prio, (unsigned long long)rs.rt_times, rs.rt_ns / NS_PER_SEC_F);
	return err;
}

/* The stream's last pump, or the export of the closed capture. */
static int export(struct trace_cmd *c)
{
	if (c->stream)
		return stream_end(c) ? GPUIO_EXIT_ERROR : 0;
	if (!c->no_export) {
		struct gpuio_export_opts eo = { .owner_uid = c->ouid, .owner_gid = c->ogid };
		struct gpuio_export_stats es = { 0 };

		if (gpuio_export(c->t.capture, c->output, &eo, &es) != 0)
			return GPUIO_EXIT_ERROR;
	}
	return 0;
}

/* The one summary line (scripts parse it). */
static void summary(const struct trace_cmd *c, const struct trace_result *r)
{
	const char *out = c->no_export && !c->stream ? "no export" : c->output;
	char more[48] = "";

	if (r->no_bpf) {
		/* no kernel side: its counts would be a claim of zero; the GPU side's are said above */
		fprintf(stderr, "gpuio: %s after %.1fs: GPU only (BPF off) -> %s (capture %s)\n",
			r->why_end, r->seconds, out, c->t.capture);
		return;
	}
	/* said only when there were some */
	if (r->cuda)
		snprintf(more, sizeof(more), ", %llu cuda", (unsigned long long)r->cuda);
	if (r->sched)
		snprintf(more + strlen(more), sizeof(more) - strlen(more), ", %llu sched",
			 (unsigned long long)r->sched);
	fprintf(stderr, "gpuio: %s after %.1fs: %llu events (%llu vfs, %llu block%s), %llu dropped "
		"-> %s (capture %s)\n", r->why_end, r->seconds,
		(unsigned long long)(r->vfs + r->block + r->cuda + r->sched),
		(unsigned long long)r->vfs, (unsigned long long)r->block, more,
		(unsigned long long)r->dropped, out, c->t.capture);
}

/* Trace, export, say so; the exit status (a launched command's own when it ran). */
static int run(struct trace_cmd *c)
{
	const struct trace_gpu_ops gpu = {
		.before_launch = gpu_before_launch, .on_cuda_process = cupti_launch__on_cuda_process,
		.on_state = gpu_on_state, .poll = gpu_poll, .finish = gpu_finish,
	};
	struct trace_gpu_ops g = gpu;
	struct trace_hooks h = { .ctx = c, .started = stream_started, .tick = stream_tick };
	struct trace_result r;
	int rc;

	gpuio_sudo_ids(&c->ouid, &c->ogid);
	if (!c->no_gpu_collector) {
		struct cupti_launch_opts go = { .capture = c->t.capture, .inject = !c->no_gpu_inject };

		/* without it the trace goes on: uprobes still see the CUDA calls */
		if (cupti_launch__new(&go, &c->gc) != 0)
			pr_warn("GPU activity will not be collected");
	}
	if (c->gc) {
		g.ctx = c->gc;
		h.gpu = &g;
	}
	rc = trace_session__run(&c->t, &h, &r);
	cupti_launch__free(c->gc);
	c->gc = NULL;
	if (rc) {
		stream_runner__stop(c->sr);
		c->sr = NULL;
		if (c->st)
			gpuio_stream__close(c->st, NULL);
		return rc;
	}
	rc = export(c);
	summary(c, &r);
	if (rc == 0 && r.exit_code >= 0)
		rc = r.exit_code;
	return rc;
}

int cmd_trace(int argc, char **argv)
{
	struct trace_cmd *c = &cmd;
	char capbuf[PATH_MAX], outbuf[PATH_MAX];
	int first, rc;

	memset(c, 0, sizeof(*c));
	c->t.argc = argc;
	c->t.argv = argv;
	c->t.ringbuf = 0;                       /* resolve_ringbuf() */
	c->t.drain_prio = DRAIN_PRIO_UNSET;     /* resolve_ringbuf() */
	c->t.sample_hz = SAMPLE_HZ_UNSET;
	c->stacks = -1;
	first = opt_parse(&trace_cmd_page, argc, argv, c);
	if (first == OPT_HELP)
		return GPUIO_EXIT_OK;
	if (first == OPT_BAD)
		return GPUIO_EXIT_USAGE;
	if (first < argc)
		c->t.cmd = &argv[first];
	if (check_args(c))
		return GPUIO_EXIT_USAGE;
	resolve_stacks(c);
	resolve_ringbuf(c);
	if (choose_bpf(c) < 0)
		return GPUIO_EXIT_ERROR;
	/* targets first: a typo in a pid should not cost a BPF load */
	for (int i = 0; i < c->t.npids; i++) {
		int tgid = procfs_tgid(c->t.pids[i]);

		if (tgid < 0) {
			pr_err("no such process: %d (check the pid with `ps -p %d`)", c->t.pids[i],
			       c->t.pids[i]);
			return GPUIO_EXIT_ERROR;
		}
		c->t.pids[i] = tgid;
	}
	rc = name_outputs(c, outbuf, capbuf, sizeof(outbuf));
	if (rc)
		return rc;
	return run(c);
}
