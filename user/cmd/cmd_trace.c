// SPDX-License-Identifier: MIT
/*
 * trace.c — `gpuio trace`: attach (or launch), collect into a capture, end
 * cleanly on Ctrl-C / SIGTERM / -d / the command's exit / the targets'
 * exit, then export the capture to Chrome JSON or Perfetto protobuf (or
 * stream the protobuf while tracing: stream.c).
 */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "gpuio.skel.h"
#include "capture/capture.h"
#include "trace/ringbuf_drain.h"
#include "cmd/commands.h"
#include "gpu/cuda_probes.h"
#include "trace/cuda_spec.h"
#include "export/export.h"
#include "gpu/cupti_launch.h"
#include "gpu/gpu_watch.h"
#include "trace/launch.h"
#include "trace/loader.h"
#include "lib/log.h"
#include "trace/procfs.h"
#include "trace/start_at.h"
#include "export/stream.h"
#include "lib/clock.h"

#define MAX_TARGETS 4096

struct trace_opts {
	pid_t pids[64];
	int npids;
	bool all;
	bool all_fds;
	bool no_export;
	const char *output;
	const char *capture;
	const char *vfs_mode;
	bool no_cuda_uprobes;
	bool no_gpu_collector;   /* --no-gpu: no CUPTI collector at all */
	bool no_gpu_inject;
	__u64 duration_ns;
	const char *duration_str;
	size_t ringbuf;
	char **cmd;
	/* long runs: --stream, --rotate, --keep, --start-at (stream.c, start_at.c) */
	bool stream;
	struct gpuio_stream_opts so;
	const char *start_at_str;
	struct timespec start_at;
};

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: gpuio trace [OPTIONS] (-p PID[,PID...] | -a | -- COMMAND [ARGS...])\n"
"\n"
"Trace what a process tree does with its files, disks and GPUs, and write a\n"
"Chrome trace JSON that opens in Perfetto (ui.perfetto.dev) or chrome://tracing.\n"
"CUDA calls come from uprobes on libcudart/libcuda; GPU kernels and copies from\n"
"the CUPTI collector, given to a launched COMMAND through CUDA_INJECTION64_PATH\n"
"and injected (ptrace) into traced processes that load libcuda.\n"
"Needs root (or CAP_BPF + CAP_PERFMON). A launched COMMAND runs as the user\n"
"who invoked sudo; output files belong to that user.\n"
"\n"
"targets (one of):\n"
"  -p, --pid PID[,PID]    attach to running processes and all their descendants\n"
"  -a, --all              trace every process on the node (except gpuio)\n"
"  -- COMMAND [ARGS]      launch COMMAND and trace it from its first instruction\n"
"\n"
"options:\n"
"  -o, --output FILE      trace to write: .json, or .pftrace (Perfetto's protobuf,\n"
"                         ~half the size), + .gz for gzip\n"
"                         (default: gpuio-YYYYmmdd-HHMMSS.json)\n"
"      --capture FILE     capture file (default: OUTPUT with .gpuio extension)\n"
"      --no-export        write only the capture; export later with `gpuio convert`\n"
"  -d, --duration DUR     stop after DUR: 500ms, 30s, 5m, 1h (default: until\n"
"                         Ctrl-C, or until the command / all targets exit)\n"
"      --all-fds          also trace pipes, sockets and other non-file fds\n"
"      --vfs-mode MODE    force the VFS attach mode: %s (default: best available)\n"
"      --no-cuda-uprobes  do not probe CUDA API calls in libcudart / libcuda.so.1\n"
"      --no-gpu-inject    do not inject the CUPTI collector into running processes\n"
"                         (launched commands still get it via CUDA_INJECTION64_PATH)\n"
"      --no-gpu           no CUPTI collector at all (uprobes still trace CUDA calls)\n"
"      --ringbuf SIZE     BPF ring buffer size, e.g. 64M (default 16M)\n"
"      --stream           write the .pftrace while tracing: memory stays flat, and a\n"
"                         killed trace is readable up to its last second\n"
"      --rotate LIMIT     with --stream: a new self-contained file every 1h / 30m\n"
"                         or every 1GiB / 500M (OUT.0001.pftrace[.gz], ...)\n"
"      --keep N           with --rotate: keep only the newest N files\n"
"      --start-at TIME    load, then wait until TIME (HH:MM[:SS] or @EPOCH) to\n"
"                         attach: traces on several hosts begin together\n"
"                         (--activate is the same); merge them with `gpuio merge`\n"
"  -v, --verbose          say which attach mode each layer uses and why (-vv: more)\n"
"  -q, --quiet            print only errors and the summary line\n"
"  -h, --help             this help\n"
"\n"
"examples:\n"
"  sudo gpuio trace -o run.json -- fio job.fio\n"
"  sudo gpuio trace -p 4242 -d 30s -o run.json\n"
"  sudo gpuio trace -a -d 10s -o all.json.gz\n"
"  sudo gpuio trace --stream --rotate 1h --keep 24 -o run.pftrace.gz -p 4242\n"
"  sudo gpuio trace -o train.pftrace -- python3 train.py   # then: gpuio report train.gpuio\n",
		gpuio_loader__vfs_modes());
}

/* "500ms", "30s", "5m", "1h", "1.5s", "30" (seconds). 0 on error. */
static __u64 parse_duration(const char *s)
{
	char *end;
	double v = strtod(s, &end);
	double mult = 1e9;

	if (end == s || v <= 0)
		return 0;
	if (!strcmp(end, "") || !strcmp(end, "s")) mult = 1e9;
	else if (!strcmp(end, "ms")) mult = 1e6;
	else if (!strcmp(end, "us")) mult = 1e3;
	else if (!strcmp(end, "m") || !strcmp(end, "min")) mult = 60e9;
	else if (!strcmp(end, "h")) mult = 3600e9;
	else return 0;
	return (__u64)(v * mult);
}

/* "16M", "1G", "4096" -> bytes rounded up to a power of two >= 1 MiB. */
static size_t parse_size(const char *s)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	size_t p = 1u << 20;

	if (end == s)
		return 0;
	if (*end == 'k' || *end == 'K') v <<= 10;
	else if (*end == 'm' || *end == 'M') v <<= 20;
	else if (*end == 'g' || *end == 'G') v <<= 30;
	else if (*end) return 0;
	if (v > (1ull << 31))
		return 0;
	while (p < v)
		p <<= 1;
	return p;
}


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

static void fill_header(struct gpuio_cap_header *h, const struct gpuio_loader *l,
			const struct trace_opts *o, int argc, char **argv)
{
	size_t used = 0;

	gpuio_cap_header__init(h, (__u32)libbpf_num_possible_cpus(),
			       (o->all ? GPUIO_CAPF_ALL : 0) | (o->all_fds ? GPUIO_CAPF_ALL_FDS : 0) |
			       (o->cmd ? GPUIO_CAPF_LAUNCH : 0));
	gpuio_loader__describe(l, h);
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
	for (int i = 0; i < argc && used < sizeof(h->cmdline) - 1; i++)
		used += (size_t)snprintf(h->cmdline + used, sizeof(h->cmdline) - used, "%s%s",
					 i ? " " : "", argv[i]);
}

/* Derive run.gpuio from run.json / run.json.gz. */
static void default_capture(const char *out, char *buf, size_t len)
{
	size_t n = strlen(out);

	if (n > 8 && !strcmp(out + n - 8, ".json.gz"))
		n -= 8;
	else if (n > 5 && !strcmp(out + n - 5, ".json"))
		n -= 5;
	else if (n > 11 && !strcmp(out + n - 11, ".pftrace.gz"))
		n -= 11;
	else if (n > 8 && !strcmp(out + n - 8, ".pftrace"))
		n -= 8;
	snprintf(buf, len, "%.*s.gpuio", (int)n, out);
}

static int parse_args(int argc, char **argv, struct trace_opts *o)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "all", no_argument, NULL, 'a' },
		{ "output", required_argument, NULL, 'o' },
		{ "capture", required_argument, NULL, 'C' },
		{ "no-export", no_argument, NULL, 'N' },
		{ "duration", required_argument, NULL, 'd' },
		{ "all-fds", no_argument, NULL, 'F' },
		{ "vfs-mode", required_argument, NULL, 'M' },
		{ "no-cuda-uprobes", no_argument, NULL, 'G' },
		{ "no-gpu-inject", no_argument, NULL, 'J' },
		{ "no-gpu", no_argument, NULL, 'U' },
		{ "ringbuf", required_argument, NULL, 'R' },
		{ "stream", no_argument, NULL, 'S' },
		{ "rotate", required_argument, NULL, 'T' },
		{ "keep", required_argument, NULL, 'K' },
		{ "start-at", required_argument, NULL, 'A' },
		{ "activate", required_argument, NULL, 'A' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	int c;

	o->ringbuf = 16u << 20;
	optind = 1;
	opterr = 0;     /* our own one-line message below */
	while ((c = getopt_long(argc, argv, "+:p:ao:d:vqh", longopts, NULL)) != -1) {
		switch (c) {
		case 'p': {
			char *s = optarg, *tok, *save = NULL;
			for (tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
				char *end;
				long v = strtol(tok, &end, 10);
				if (*end || v <= 0 || v > INT_MAX) {
					pr_err("-p: '%s' is not a process id", tok);
					return -EINVAL;
				}
				if (o->npids == (int)(sizeof(o->pids) / sizeof(o->pids[0]))) {
					pr_err("-p: too many pids (at most 64)");
					return -EINVAL;
				}
				o->pids[o->npids++] = (pid_t)v;
			}
			break;
		}
		case 'a': o->all = true; break;
		case 'o': o->output = optarg; break;
		case 'C': o->capture = optarg; break;
		case 'N': o->no_export = true; break;
		case 'd':
			o->duration_ns = parse_duration(optarg);
			o->duration_str = optarg;
			if (!o->duration_ns) {
				pr_err("-d: bad duration '%s' (examples: 500ms, 30s, 5m, 1h)", optarg);
				return -EINVAL;
			}
			break;
		case 'F': o->all_fds = true; break;
		case 'M': o->vfs_mode = optarg; break;
		case 'G': o->no_cuda_uprobes = true; break;
		case 'J': o->no_gpu_inject = true; break;
		case 'U': o->no_gpu_collector = true; break;
		case 'R':
			o->ringbuf = parse_size(optarg);
			if (!o->ringbuf) {
				pr_err("--ringbuf: bad size '%s' (examples: 16M, 256M)", optarg);
				return -EINVAL;
			}
			break;
		case 'S': o->stream = true; break;
		case 'T':
			if (gpuio_stream_opts__parse_rotate(&o->so, optarg)) {
				pr_err("--rotate: bad limit '%s' (examples: 1h, 30m, 1GiB, 500M)", optarg);
				return -EINVAL;
			}
			break;
		case 'K': {
			char *end;
			unsigned long v = strtoul(optarg, &end, 10);

			if (*end || !v || v > 1000000) {
				pr_err("--keep: '%s' is not a number of files (>= 1)", optarg);
				return -EINVAL;
			}
			o->so.keep = (unsigned)v;
			break;
		}
		case 'A':
			o->start_at_str = optarg;
			if (gpuio_start_at__parse(optarg, &o->start_at)) {
				pr_err("--start-at: bad time '%s' (examples: 14:30:00, @1700000000)",
				       optarg);
				return -EINVAL;
			}
			break;
		case 'v': gpuio_log_verbosity++; break;
		case 'q': gpuio_log_verbosity = GPUIO_LOG_WARN; break;
		case 'h': usage(stdout); return 1;
		case ':':
			pr_err("option %s needs a value (see `gpuio trace --help`)", argv[optind - 1]);
			return -EINVAL;
		default:
			pr_err("unknown option '%s' (see `gpuio trace --help`)", argv[optind - 1]);
			return -EINVAL;
		}
	}
	if (optind < argc)
		o->cmd = &argv[optind];
	if ((o->npids > 0) + o->all + (o->cmd != NULL) != 1) {
		pr_err("say what to trace: exactly one of -p PID, -a, or -- COMMAND "
		       "(see `gpuio trace --help`)");
		return -EINVAL;
	}
	if ((o->so.rotate_bytes || o->so.rotate_ns || o->so.keep) && !o->stream) {
		pr_err("--rotate and --keep go with --stream (see `gpuio trace --help`)");
		return -EINVAL;
	}
	if (o->so.keep && !o->so.rotate_bytes && !o->so.rotate_ns) {
		pr_err("--keep N needs --rotate (a size or a duration per file)");
		return -EINVAL;
	}
	return 0;
}

/* Put tgid in the traced set and describe it in the capture. */
static int add_target(struct gpuio_loader *l, struct gpuio_cap_writer *w,
		      struct gpuio_collector *c, pid_t tgid, bool all_fds, bool is_root_target)
{
	__u8 one = 1;
	__u32 key = (__u32)tgid;

	if (bpf_map_update_elem(bpf_map__fd(l->skel->maps.traced), &key, &one, BPF_ANY) != 0) {
		pr_err("cannot add pid %d to the traced set: %s", tgid, strerror(errno));
		return -errno;
	}
	/* after the map insert: anything it does from now on is seen */
	if (!procfs_alive(tgid) ||
	    procfs_emit_process(w, tgid, all_fds, clock_mono_ns(), gpuio_collector__named(c)) < 0) {
		bpf_map_delete_elem(bpf_map__fd(l->skel->maps.traced), &key);
		if (is_root_target) {
			pr_err("process %d exited before gpuio could attach", tgid);
			return -ESRCH;
		}
	}
	return 0;
}

int cmd_trace(int argc, char **argv)
{
	struct trace_opts o = { 0 };
	struct gpuio_loader_opts lo = { 0 };
	struct gpuio_loader *l = NULL;
	struct gpuio_cap_writer *w = NULL;
	struct gpuio_collector *c = NULL;
	struct cuda_probes *cp = NULL;
	struct gpu_watch *gw = NULL;
	struct gpu_collect *gc = NULL;
	struct gpuio_stream *stream = NULL;
	struct gpuio_launch child = { .pid = -1, .gate_fd = -1, .err_fd = -1 };
	struct gpuio_cap_header hdr;
	struct gpuio_collector_totals tot;
	char capbuf[PATH_MAX], outbuf[PATH_MAX];
	const char *why_end = "stopped";
	int rc = GPUIO_EXIT_ERROR, err, child_status = -1;
	uid_t ouid;
	gid_t ogid;
	__u64 start, last_stats, last_progress;
	struct sigaction sa = { .sa_handler = on_signal };

	err = parse_args(argc, argv, &o);
	if (err)
		return err > 0 ? GPUIO_EXIT_OK : GPUIO_EXIT_USAGE;

	if (!have_bpf_caps()) {
		pr_err("gpuio trace needs root (or CAP_BPF and CAP_PERFMON) to load BPF programs: "
		       "run it with sudo");
		return GPUIO_EXIT_ERROR;
	}
	/* targets first: a typo in a pid should not cost a BPF load */
	for (int i = 0; i < o.npids; i++) {
		int tgid = procfs_tgid(o.pids[i]);
		if (tgid < 0) {
			pr_err("no such process: %d (check the pid with `ps -p %d`)", o.pids[i], o.pids[i]);
			return GPUIO_EXIT_ERROR;
		}
		o.pids[i] = tgid;
	}
	if (!o.output) {
		time_t now = time(NULL);
		struct tm tm;
		localtime_r(&now, &tm);
		strftime(outbuf, sizeof(outbuf), "gpuio-%Y%m%d-%H%M%S.json", &tm);
		o.output = outbuf;
	} else {
		if (!gpuio_export__is_output_name(o.output)) {
			pr_err("-o %s: the output name must end in .json or .json.gz (Chrome "
			       "JSON), or .pftrace or .pftrace.gz (Perfetto protobuf)", o.output);
			return GPUIO_EXIT_USAGE;
		}
	}
	if (o.stream && !gpuio_export__is_pftrace_name(o.output)) {
		pr_err("--stream writes Perfetto protobuf: give -o NAME.pftrace or NAME.pftrace.gz");
		return GPUIO_EXIT_USAGE;
	}
	if (!o.capture) {
		default_capture(o.output, capbuf, sizeof(capbuf));
		o.capture = capbuf;
	}
	if (check_writable(o.capture, "capture") < 0 ||
	    (!o.no_export && check_writable(o.output, "output") < 0))
		return GPUIO_EXIT_ERROR;
	gpuio_sudo_ids(&ouid, &ogid);

	lo.trace_all = o.all;
	lo.all_fds = o.all_fds;
	lo.self_tgid = (__u32)getpid();
	lo.ringbuf_bytes = o.ringbuf;
	lo.vfs_mode = o.vfs_mode;
	lo.no_cuda_uprobes = o.no_cuda_uprobes;
	err = gpuio_loader__open(&lo, &l);
	if (err)
		return GPUIO_EXIT_ERROR;
	pr_debug("attach modes: vfs=%s block=%s proc=%s pagecache=%s io_uring=%s cuda=%s", l->vfs_mode,
		 l->block_mode, l->proc_mode, l->pagecache_mode, l->iouring_mode, l->cuda_mode);

	if (o.start_at_str) {
		/* loaded already: at TIME only the attach is left to do */
		pr_info("waiting until %s to attach (Ctrl-C cancels)", o.start_at_str);
		if (gpuio_start_at__wait(&o.start_at) < 0)
			goto out;
	}
	/* CUDA libraries already known: the command's (before it runs), the targets' */
	if (strcmp(l->cuda_mode, "off") && cuda_probes__new(l, &cp) == 0) {
		if (o.cmd)
			cuda_probes__attach_for_exec(cp, o.cmd[0]);
		for (int i = 0; i < o.npids; i++)
			cuda_probes__scan_pid(cp, o.pids[i]);
	}
	if (!o.no_gpu_collector) {
		struct gpu_collect_opts go = { .capture = o.capture, .inject = !o.no_gpu_inject };

		/* without it the trace goes on: uprobes still see the CUDA calls */
		if (gpu_collect__new(&go, &gc) != 0)
			pr_warn("GPU activity will not be collected");
	}
	{
		struct gpu_watch_opts wo = { .trace_all = o.all,
					     .on_new_cuda_process = gc ? gpu_collect__on_cuda_process : NULL,
					     .ctx = gc };

		if (gpu_watch__new(l, cp, &wo, &gw) != 0)
			pr_warn("CUDA libraries loaded from now on will not be probed (out of memory)");
	}
	fill_header(&hdr, l, &o, argc, argv);
	if (cp) {
		size_t dl = strlen(hdr.modes_detail);

		snprintf(hdr.modes_detail + dl, sizeof(hdr.modes_detail) - dl,
			 "; cuda uprobes: %d libs (%d functions) at start, more as loaded",
			 cuda_probes__nlibs(cp), cuda_probes__nfuncs(cp));
	} else {
		size_t dl = strlen(hdr.modes_detail);

		snprintf(hdr.modes_detail + dl, sizeof(hdr.modes_detail) - dl, "; cuda uprobes: off%s",
			 o.no_cuda_uprobes ? " (--no-cuda-uprobes)" : "");
	}
	err = gpuio_cap_writer__create(o.capture, &hdr, ouid, ogid, &w);
	if (err) {
		pr_err("cannot write capture %s: %s", o.capture, strerror(-err));
		goto out;
	}
	if (o.stream) {
		o.so.owner_uid = ouid;
		o.so.owner_gid = ogid;
		if (gpuio_stream__open(o.capture, o.output, &o.so, &stream) < 0)
			goto out;
	}
	err = gpuio_collector__new(l, w, &c);
	if (err) {
		pr_err("cannot start the collector: %s", strerror(-err));
		goto out;
	}

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (o.cmd) {
		if (gc)
			gpu_collect__setenv_for_launch(gc);
		err = gpuio_launch__start(o.cmd, &child);
		if (err) {
			pr_err("cannot start '%s': %s", o.cmd[0], strerror(-err));
			goto out;
		}
		/* in the set before it execs: its very first I/O is traced; its
		 * names come from the exec record, not from gpuio's fork image */
		{
			__u32 key = (__u32)child.pid;
			__u8 one = 1;

			if (bpf_map_update_elem(bpf_map__fd(l->skel->maps.traced), &key, &one, BPF_ANY)) {
				pr_err("cannot add pid %d to the traced set: %s", child.pid, strerror(errno));
				gpuio_launch__abort(&child);
				goto out;
			}
		}
		/* what the command inherits and keeps across exec (stdout to a file) */
		procfs_emit_fds(w, child.pid, o.all_fds, true, clock_mono_ns(), gpuio_collector__named(c));
		if (gpuio_launch__release(&child, o.cmd[0]) < 0) {
			child.pid = -1;
			rc = 127;
			goto out;
		}
	} else if (o.npids) {
		pid_t *desc = calloc(MAX_TARGETS, sizeof(*desc));
		size_t nd;

		for (int i = 0; i < o.npids; i++) {
			if (add_target(l, w, c, o.pids[i], o.all_fds, true) < 0) {
				free(desc);
				goto out;
			}
			nd = desc ? procfs_descendants(o.pids[i], desc, MAX_TARGETS) : 0;
			for (size_t k = 0; k < nd; k++)
				add_target(l, w, c, desc[k], o.all_fds, false);
		}
		free(desc);
	}
	/* the targets' descendants too, and from now on every tick */
	gpu_watch__scan(gw);
	gpuio_cap_writer__flush(w);
	if (gpuio_log_verbosity >= GPUIO_LOG_INFO)
		pr_info("tracing %s (vfs: %s, block: %s)%s%s; Ctrl-C to stop", hdr.target,
			l->vfs_mode, l->block_mode, o.duration_ns ? " for " : "",
			o.duration_ns ? o.duration_str : "");

	start = last_stats = last_progress = clock_mono_ns();
	for (;;) {
		__u64 now;

		err = gpuio_collector__poll(c, 100);
		if (err) {
			pr_err("reading events failed: %s", strerror(-err));
			why_end = "error";
			break;
		}
		now = clock_mono_ns();
		/* the poll flushed whole records to the capture: stream them on */
		if (stream && gpuio_stream__pump(stream, now) < 0) {
			gpuio_stream__close(stream, NULL);
			stream = NULL;
			pr_warn("the capture goes on; export it later with `gpuio convert`");
		}
		if (stop_signal) {
			why_end = stop_signal == SIGINT ? "interrupted" : "terminated";
			break;
		}
		if (o.duration_ns && now - start >= o.duration_ns) {
			why_end = "duration reached";
			break;
		}
		if (child.pid > 0) {
			int st;
			/* only its end: a GPU injection that could not detach leaves
			 * ptrace stops that waitpid reports too */
			if (waitpid(child.pid, &st, WNOHANG) == child.pid &&
			    (WIFEXITED(st) || WIFSIGNALED(st))) {
				child_status = st;
				child.pid = -1;
				why_end = "command exited";
				break;
			}
		} else if (o.npids && gpuio_collector__targets_gone(c)) {
			why_end = "all traced processes exited";
			break;
		}
		gpu_watch__tick(gw, now);
		if (now - last_stats >= 1000000000ull) {
			if (gc && gpu_collect__poll(gc, w) < 0)
				pr_warn("GPU records could not be added to the capture");
			gpuio_collector__write_stats(c, false);
			last_stats = now;
		}
		if (now - last_progress >= 10000000000ull && isatty(STDERR_FILENO) &&
		    gpuio_log_verbosity >= GPUIO_LOG_INFO) {
			gpuio_collector__totals(c, &tot);
			pr_info("%.0fs: %llu events, %llu dropped", (now - start) / 1e9,
				(unsigned long long)(tot.vfs + tot.block),
				(unsigned long long)tot.dropped);
			last_progress = now;
		}
	}
	/* stop producing before the last drain so nothing arrives after it */
	gpuio_collector__drain(c);
	gpuio_collector__totals(c, &tot);
	/* collectors of exited processes flushed at exit; injected ones get a period */
	if (gc && gpu_collect__finish(gc, w) < 0)
		pr_warn("GPU records could not be added to the capture");
	gpuio_collector__write_stats(c, true);
	gpuio_collector__free(c);
	c = NULL;
	gpu_collect__free(gc);
	gc = NULL;
	gpu_watch__free(gw);
	gw = NULL;
	if (cp)
		pr_debug("cuda uprobes: %d libs, %d functions probed", cuda_probes__nlibs(cp),
			 cuda_probes__nfuncs(cp));
	cuda_probes__free(cp);
	cp = NULL;
	gpuio_loader__destroy(l);
	l = NULL;
	err = gpuio_cap_writer__close(w);
	w = NULL;
	if (err) {
		pr_err("capture %s is incomplete: %s", o.capture, strerror(-err));
		gpuio_stream__close(stream, NULL);
		stream = NULL;
		goto out_child;
	}

	if (tot.dropped)
		pr_warn("%llu events were lost (ring buffer full: vfs %llu, block %llu, path %llu, "
			"proc %llu; maps full: pid %llu, request %llu, task %llu); try --ringbuf 64M",
			(unsigned long long)tot.dropped,
			(unsigned long long)tot.stats[GPUIO_STAT_RB_DROP_VFS],
			(unsigned long long)tot.stats[GPUIO_STAT_RB_DROP_BLOCK],
			(unsigned long long)tot.stats[GPUIO_STAT_RB_DROP_PATH],
			(unsigned long long)tot.stats[GPUIO_STAT_RB_DROP_PROC],
			(unsigned long long)tot.stats[GPUIO_STAT_MAP_FULL_PID],
			(unsigned long long)tot.stats[GPUIO_STAT_MAP_FULL_RQ],
			(unsigned long long)tot.stats[GPUIO_STAT_MAP_FULL_TASK]);
	if (tot.stats[GPUIO_STAT_RB_DROP_CUDA] || tot.stats[GPUIO_STAT_CUDA_DEPTH])
		pr_warn("CUDA API calls lost: %llu (ring buffer full), %llu (nested deeper than %d)",
			(unsigned long long)tot.stats[GPUIO_STAT_RB_DROP_CUDA],
			(unsigned long long)tot.stats[GPUIO_STAT_CUDA_DEPTH], CUDA_DEPTH);
	rc = GPUIO_EXIT_OK;
	if (o.stream) {
		/* the stream is the export: its last pump reads the closed capture */
		if (!stream || gpuio_stream__close(stream, NULL) != 0)
			rc = GPUIO_EXIT_ERROR;
		stream = NULL;
	} else if (!o.no_export) {
		struct gpuio_export_opts eo = { .owner_uid = ouid, .owner_gid = ogid };
		struct gpuio_export_stats es = { 0 };

		if (gpuio_export(o.capture, o.output, &eo, &es) != 0)
			rc = GPUIO_EXIT_ERROR;
	}
	{
		char cuda[48] = "";

		/* said only when there were some: the line is parsed by scripts */
		if (tot.cuda)
			snprintf(cuda, sizeof(cuda), ", %llu cuda", (unsigned long long)tot.cuda);
	fprintf(stderr, "gpuio: %s after %.1fs: %llu events (%llu vfs, %llu block%s), %llu dropped -> %s"
		" (capture %s)\n", why_end, (clock_mono_ns() - start) / 1e9,
		(unsigned long long)(tot.vfs + tot.block + tot.cuda), (unsigned long long)tot.vfs,
		(unsigned long long)tot.block, cuda, (unsigned long long)tot.dropped,
		o.no_export && !o.stream ? "no export" : o.output, o.capture);
	}

out_child:
	if (child.pid > 0) {
		/* ended by signal or -d: the command got Ctrl-C itself; a TERM is passed on */
		if (stop_signal == SIGTERM)
			kill(child.pid, SIGTERM);
		if (stop_signal) {
			for (int i = 0; i < 50 && child.pid > 0; i++) {
				int st;
				if (waitpid(child.pid, &st, WNOHANG) == child.pid &&
				    (WIFEXITED(st) || WIFSIGNALED(st))) {
					child_status = st;
					child.pid = -1;
				} else {
					usleep(100000);
				}
			}
		}
		if (child.pid > 0)
			pr_info("the command (pid %d) is still running; it is no longer traced", child.pid);
	}
	if (rc == GPUIO_EXIT_OK && o.cmd) {
		if (child_status >= 0 && WIFEXITED(child_status))
			rc = WEXITSTATUS(child_status);
		else if (child_status >= 0 && WIFSIGNALED(child_status))
			rc = 128 + WTERMSIG(child_status);
	}
	return rc;
out:
	if (child.pid > 0)
		gpuio_launch__abort(&child);
	gpuio_stream__close(stream, NULL);
	gpuio_collector__free(c);
	gpu_watch__free(gw);
	cuda_probes__free(cp);
	gpu_collect__free(gc);
	if (w)
		gpuio_cap_writer__close(w);
	gpuio_loader__destroy(l);
	return rc;
}
