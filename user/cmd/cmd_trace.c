// SPDX-License-Identifier: MIT
/*
 * cmd_trace.c — `gpuio trace`: argv -> struct trace_opts, checked (targets
 * exist, outputs writable, names say a format), then one call:
 * trace_session__run() (trace/session.c) attaches or launches, collects,
 * ends and exports.
 *
 * Long on purpose: parse_args() (~100 lines) is one getopt switch, one case
 * per option with its own message.
 */
#include <errno.h>
#include <getopt.h>
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
#include "lib/log.h"
#include "lib/parse.h"
#include "trace/loader.h"
#include "trace/procfs.h"
#include "trace/session.h"
#include "trace/start_at.h"

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
"Needs root (or CAP_BPF + CAP_PERFMON) for files, disks and thread states.\n"
"Without them, or where the kernel refuses BPF (containers, gVisor), it traces\n"
"the GPU alone through CUPTI (-- COMMAND or -p PID) and says so. A launched\n"
"COMMAND runs as the user who invoked sudo; output files belong to that user.\n"
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
"      --no-sched         no thread states or wake-ups (the scheduler layer; on by\n"
"                         default: it says what threads did between their calls)\n"
"      --no-cuda-uprobes  do not probe CUDA API calls in libcudart / libcuda.so.1\n"
"      --no-gpu-inject    do not inject the CUPTI collector into running processes\n"
"                         (launched commands still get it via CUDA_INJECTION64_PATH)\n"
"      --no-gpu           no CUPTI collector at all (uprobes still trace CUDA calls)\n"
"      --no-bpf           load no BPF programs: GPU kernels, copies, CUDA calls and\n"
"                         NVTX from CUPTI only (the default where BPF is refused)\n"
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

/* "16M", "1G", "4096" -> bytes rounded up to a power of two >= 1 MiB; 0 when bad. */
static size_t ringbuf_size(const char *s)
{
	uint64_t v;
	size_t p = 1u << 20;

	if (parse_bytes(s, &v) || v > (1ull << 31))
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

/*
 * BPF or the GPU alone: without the privileges, or where the kernel refuses
 * bpf(), a launch or -p still gets its GPU side from CUPTI; -a and the
 * BPF-only options need BPF.
 */
static int choose_bpf(struct trace_opts *o)
{
	static char why[256];

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

/* -p 12,34: each a process id (at most 64 in all). */
static int add_pids(struct trace_opts *o, char *list)
{
	char *tok, *save = NULL;

	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		unsigned long v;

		if (parse_ulong(tok, 1, INT_MAX, &v)) {
			pr_err("-p: '%s' is not a process id", tok);
			return -EINVAL;
		}
		if (o->npids == (int)(sizeof(o->pids) / sizeof(o->pids[0]))) {
			pr_err("-p: too many pids (at most 64)");
			return -EINVAL;
		}
		o->pids[o->npids++] = (pid_t)v;
	}
	return 0;
}

/* What the options say together: one target; --rotate/--keep only with --stream. */
static int check_args(const struct trace_opts *o)
{
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
		{ "no-sched", no_argument, NULL, 'Z' },
		{ "no-gpu-inject", no_argument, NULL, 'J' },
		{ "no-gpu", no_argument, NULL, 'U' },
		{ "no-bpf", no_argument, NULL, 'B' },
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
		case 'p':
			if (add_pids(o, optarg))
				return -EINVAL;
			break;
		case 'a': o->all = true; break;
		case 'o': o->output = optarg; break;
		case 'C': o->capture = optarg; break;
		case 'N': o->no_export = true; break;
		case 'd': {
			uint64_t ns;

			o->duration_str = optarg;
			if (parse_duration_ns(optarg, false, &ns)) {
				pr_err("-d: bad duration '%s' (examples: 500ms, 30s, 5m, 1h)", optarg);
				return -EINVAL;
			}
			o->duration_ns = ns;
			break;
		}
		case 'F': o->all_fds = true; break;
		case 'M': o->vfs_mode = optarg; break;
		case 'G': o->no_cuda_uprobes = true; break;
		case 'Z': o->no_sched = true; break;
		case 'J': o->no_gpu_inject = true; break;
		case 'U': o->no_gpu_collector = true; break;
		case 'B':
			o->no_bpf = true;
			o->no_bpf_why = "--no-bpf";
			break;
		case 'R':
			o->ringbuf = ringbuf_size(optarg);
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
			unsigned long v;

			if (parse_ulong(optarg, 1, 1000000, &v)) {
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
	return check_args(o);
}

int cmd_trace(int argc, char **argv)
{
	struct trace_opts o = { .argc = argc, .argv = argv };
	char capbuf[PATH_MAX], outbuf[PATH_MAX];
	int err;

	err = parse_args(argc, argv, &o);
	if (err)
		return err > 0 ? GPUIO_EXIT_OK : GPUIO_EXIT_USAGE;
	if (choose_bpf(&o) < 0)
		return GPUIO_EXIT_ERROR;
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
	} else if (!gpuio_export__is_output_name(o.output)) {
		pr_err("-o %s: the output name must end in .json or .json.gz (Chrome "
		       "JSON), or .pftrace or .pftrace.gz (Perfetto protobuf)", o.output);
		return GPUIO_EXIT_USAGE;
	}
	if (o.stream && !gpuio_export__is_pftrace_name(o.output)) {
		pr_err("--stream writes Perfetto protobuf: give -o NAME.pftrace or NAME.pftrace.gz");
		return GPUIO_EXIT_USAGE;
	}
	if (!o.capture) {
		cmd_opt__capture_for_output(o.output, capbuf, sizeof(capbuf));
		o.capture = capbuf;
	}
	if (check_writable(o.capture, "capture") < 0 ||
	    (!o.no_export && check_writable(o.output, "output") < 0))
		return GPUIO_EXIT_ERROR;
	return trace_session__run(&o);
}
