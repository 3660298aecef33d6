// SPDX-License-Identifier: MIT
/*
 * cmd_monitor.c — `gpuio monitor`: the node daemon (foreground, for
 * systemd), and `gpuio monitor dump`, which asks the running daemon for a
 * flight-recorder dump and prints its path.
 *
 * One instance per node: RUN_DIR/monitor.pid is flock()ed for the daemon's
 * life. `dump` reads the pid from it, sends SIGUSR1 and waits for
 * RUN_DIR/monitor.dump ("SEQ PATH" or "SEQ error: WHY") to change.
 * Signals: SIGUSR1 dump, SIGHUP reopen the log file, SIGTERM/SIGINT detach
 * everything and exit 0.
 *
 * Long on purpose: parse_args() (~125 lines) is one getopt switch, one case
 * per option with its own message; it reads best as one table.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include "cmd/commands.h"
#include "monitor/http_metrics.h"
#include "lib/log.h"
#include "monitor/monitor_agg.h"
#include "monitor/monitor_bpf.h"
#include "monitor/monitor_cuda.h"
#include "monitor/monitor_names.h"
#include "monitor/monitor_nvml.h"
#include "monitor/monitor_recorder.h"
#include "monitor/monitor_trigger.h"
#include "lib/clock.h"
#include "lib/parse.h"
#include "monitor/monitor_daemon.h"



static void usage(FILE *f)
{
	fprintf(f,
"usage: gpuio monitor [OPTIONS]        run the node daemon (foreground)\n"
"       gpuio monitor dump [--run-dir DIR] [--timeout DUR]\n"
"                                      ask the running daemon for a dump; print its path\n"
"\n"
"Always-on, in-kernel aggregation of file and block I/O per cgroup, process and\n"
"disk, and of CUDA API calls per cgroup and process, served as Prometheus metrics, plus a flight recorder of the last --window\n"
"of full events, dumped on demand (SIGUSR1, `gpuio monitor dump`) or on a trigger.\n"
"Needs root. One instance per node (lock RUN_DIR/monitor.pid).\n"
"\n"
"options:\n"
"      --listen ADDR:PORT   serve /metrics here (default 127.0.0.1:9477: loopback only)\n"
"      --window DUR         flight-recorder window (default 60s); 0 = aggregation only:\n"
"                           the full-event programs are not loaded at all\n"
"      --window-bytes SIZE  memory for the window's events (default 64M)\n"
"      --ringbuf SIZE       BPF ring buffer of the recorder (default 16M)\n"
"      --dump-dir DIR       where dumps go (default /var/lib/gpuio/dumps)\n"
"      --dump-format FMT    pftrace (default), pftrace.gz, json or json.gz\n"
"      --dump-keep N        newest dumps kept (default 20)\n"
"      --dump-max-bytes SIZE  bytes of dumps kept (default 1G)\n"
"      --trigger EXPR       dump automatically: 'vfs_latency>200ms', 'block_latency>1s',\n"
"                           'gpu_idle>5s' (needs GPU data); repeatable\n"
"      --trigger-interval DUR  at most one automatic dump per DUR (default 5m)\n"
"      --top-k N            labelled (cgroup, process name) series (default 20); the\n"
"                           rest are summed as comm=\"other\"\n"
"      --top-cgroups N      labelled (cgroup, device) series (default 100)\n"
"      --max-cgroups N      kernel map entries for (cgroup, device) (default 2048)\n"
"      --max-procs N        kernel map entries for processes (default 8192)\n"
"      --cgroups HIER       the cgroups series are keyed by: v2 (default), or a cgroup\n"
"                           v1 controller's hierarchy on v1 hosts (memory, cpuset...:\n"
"                           Slurm's cgroup/v1 plugin, kubelet on v1)\n"
"      --pseudo-fs          keep proc, sysfs, cgroup, debugfs... in the VFS series\n"
"                           (left out by default: the daemon's own /proc reads)\n"
"      --cuda-uprobes       count CUDA API calls per process and cgroup with uprobes on\n"
"                           every libcudart / libcuda file mapped on the node (found by a\n"
"                           /proc scan every 10 s). Off by default: every CUDA call of\n"
"                           every job would pay a uprobe trap (~1-3 us on bare metal)\n"
"      --no-cuda-uprobes    the default (kept for old command lines)\n"
"      --run-dir DIR        lock, pid and dump-status files (default /run/gpuio)\n"
"      --log-file FILE      log there instead of stderr (SIGHUP reopens it)\n"
"  -v, --verbose            more detail; -q, --quiet: errors only\n"
"  -h, --help               this help\n"
"\n"
"signals: SIGUSR1 dump, SIGHUP reopen the log, SIGTERM/SIGINT detach and exit.\n"
"examples:\n"
"  sudo gpuio monitor --trigger 'vfs_latency>200ms'\n"
"  curl -s 127.0.0.1:9477/metrics | grep gpuio_cgroup_vfs_bytes_total\n"
"  sudo gpuio monitor dump\n");
}

/* lib/parse.h with the conventions parse_args uses: ~0 / 0 / -1 when bad */
static __u64 parse_dur(const char *s, bool allow_zero)
{
	uint64_t ns;

	return parse_duration_ns(s, allow_zero, &ns) ? ~0ull : ns;
}

static __u64 parse_size(const char *s)
{
	uint64_t v;

	return parse_bytes(s, &v) ? 0 : v;
}

static long parse_uint(const char *s, long max)
{
	unsigned long v;

	return parse_ulong(s, 1, (unsigned long)max, &v) ? -1 : (long)v;
}

static int parse_args(int argc, char **argv, struct monitor_opts *o)
{
	static const struct option longopts[] = {
		{ "listen", required_argument, NULL, 'L' },
		{ "window", required_argument, NULL, 'W' },
		{ "window-bytes", required_argument, NULL, 'B' },
		{ "ringbuf", required_argument, NULL, 'R' },
		{ "dump-dir", required_argument, NULL, 'D' },
		{ "dump-format", required_argument, NULL, 'F' },
		{ "dump-keep", required_argument, NULL, 'K' },
		{ "dump-max-bytes", required_argument, NULL, 'X' },
		{ "trigger", required_argument, NULL, 'T' },
		{ "trigger-interval", required_argument, NULL, 'I' },
		{ "top-k", required_argument, NULL, 'k' },
		{ "top-cgroups", required_argument, NULL, 'c' },
		{ "max-cgroups", required_argument, NULL, 'C' },
		{ "max-procs", required_argument, NULL, 'P' },
		{ "no-cuda-uprobes", no_argument, NULL, 'U' },
		{ "cuda-uprobes", no_argument, NULL, 'u' },
		{ "cgroups", required_argument, NULL, 'G' },
		{ "pseudo-fs", no_argument, NULL, 'S' },
		{ "run-dir", required_argument, NULL, 'r' },
		{ "log-file", required_argument, NULL, 'l' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	int c;
	long v;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":vqh", longopts, NULL)) != -1) {
		switch (c) {
		case 'L': o->listen = optarg; break;
		case 'W':
			o->window_ns = parse_dur(optarg, true);
			if (o->window_ns == ~0ull) {
				pr_err("--window: bad duration '%s' (examples: 60s, 5m, 0)", optarg);
				return -EINVAL;
			}
			break;
		case 'B':
			o->window_bytes = parse_size(optarg);
			if (o->window_bytes < (1u << 20)) {
				pr_err("--window-bytes: '%s' is not a size of at least 1M", optarg);
				return -EINVAL;
			}
			break;
		case 'R': {
			__u64 b = parse_size(optarg), p = 1u << 20;

			while (p < b)
				p <<= 1;
			if (!b || p > (1ull << 30)) {
				pr_err("--ringbuf: bad size '%s' (examples: 16M, 64M)", optarg);
				return -EINVAL;
			}
			o->ringbuf = p;
			break;
		}
		case 'D': o->dump_dir = optarg; break;
		case 'F':
			if (strcmp(optarg, "pftrace") && strcmp(optarg, "pftrace.gz") &&
			    strcmp(optarg, "json") && strcmp(optarg, "json.gz")) {
				pr_err("--dump-format: one of pftrace, pftrace.gz, json, json.gz");
				return -EINVAL;
			}
			o->dump_format = optarg;
			break;
		case 'K':
			if ((v = parse_uint(optarg, 100000)) < 0) {
				pr_err("--dump-keep: '%s' is not a count >= 1", optarg);
				return -EINVAL;
			}
			o->dump_keep = (unsigned)v;
			break;
		case 'X':
			o->dump_max_bytes = parse_size(optarg);
			if (!o->dump_max_bytes) {
				pr_err("--dump-max-bytes: bad size '%s' (examples: 500M, 2G)", optarg);
				return -EINVAL;
			}
			break;
		case 'T':
			if (monitor_triggers__add(&o->trig, optarg))
				return -EINVAL;
			break;
		case 'I':
			o->trig.interval_ns = parse_dur(optarg, false);
			if (o->trig.interval_ns == ~0ull) {
				pr_err("--trigger-interval: bad duration '%s' (examples: 30s, 5m)", optarg);
				return -EINVAL;
			}
			break;
		case 'k': case 'c': case 'C': case 'P':
			if ((v = parse_uint(optarg, 1 << 20)) < 0) {
				pr_err("%s: '%s' is not a count >= 1", argv[optind - 1], optarg);
				return -EINVAL;
			}
			if (c == 'k') o->top_procs = (unsigned)v;
			else if (c == 'c') o->top_cgroups = (unsigned)v;
			else if (c == 'C') o->max_cgroups = (unsigned)v;
			else o->max_procs = (unsigned)v;
			break;
		case 'U': o->cuda_uprobes = false; break;
		case 'u': o->cuda_uprobes = true; break;
		case 'G': o->cgroups = optarg; break;
		case 'S': o->pseudo_fs = true; break;
		case 'r': o->run_dir = optarg; break;
		case 'l': o->log_file = optarg; break;
		case 'v': gpuio_log_verbosity++; break;
		case 'q': gpuio_log_verbosity = GPUIO_LOG_ERROR; break;
		case 'h': usage(stdout); return 1;
		case ':':
			pr_err("option %s needs a value (see `gpuio monitor --help`)", argv[optind - 1]);
			return -EINVAL;
		default:
			pr_err("unknown option '%s' (see `gpuio monitor --help`)", argv[optind - 1]);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		pr_err("unexpected argument '%s' (see `gpuio monitor --help`)", argv[optind]);
		return -EINVAL;
	}
	if (o->trig.n && !o->window_ns) {
		pr_err("--trigger needs the flight recorder: a --window > 0");
		return -EINVAL;
	}
	return 0;
}

/* mkdir -p for the run and dump directories. */
static int cmd_monitor_dump(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "run-dir", required_argument, NULL, 'r' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *run_dir = "/run/gpuio";
	__u64 timeout = 120000000000ull, t0;
	char path[PATH_MAX], buf[32] = "", what[PATH_MAX];
	unsigned seq0;
	int fd, c, n;
	long pid;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case 'r': run_dir = optarg; break;
		case 't':
			timeout = parse_dur(optarg, false);
			if (timeout == ~0ull) {
				pr_err("--timeout: bad duration '%s'", optarg);
				return GPUIO_EXIT_USAGE;
			}
			break;
		case 'h': usage(stdout); return GPUIO_EXIT_OK;
		default:
			pr_err("monitor dump: unknown option '%s' (see `gpuio monitor --help`)", argv[optind - 1]);
			return GPUIO_EXIT_USAGE;
		}
	}
	snprintf(path, sizeof(path), "%s/monitor.pid", run_dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || flock(fd, LOCK_SH | LOCK_NB) == 0) {
		/* we got the lock: nobody holds it */
		pr_err("no gpuio monitor is running (%s %s)", path, fd < 0 ? strerror(errno) : "is not locked");
		if (fd >= 0)
			close(fd);
		return GPUIO_EXIT_ERROR;
	}
	n = (int)read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	pid = strtol(buf, NULL, 10);
	if (pid <= 0) {
		pr_err("%s names no pid", path);
		return GPUIO_EXIT_ERROR;
	}
	seq0 = monitor_daemon__read_status(run_dir, what, sizeof(what));
	if (kill((pid_t)pid, SIGUSR1) < 0) {
		pr_err("cannot signal the monitor (pid %ld): %s", pid, strerror(errno));
		return GPUIO_EXIT_ERROR;
	}
	for (t0 = clock_mono_ns(); clock_mono_ns() - t0 < timeout; usleep(50000)) {
		if (monitor_daemon__read_status(run_dir, what, sizeof(what)) == seq0)
			continue;
		if (!strncmp(what, "error: ", 7)) {
			pr_err("the monitor could not dump: %s", what + 7);
			return GPUIO_EXIT_ERROR;
		}
		printf("%s\n", what);
		return GPUIO_EXIT_OK;
	}
	pr_err("the monitor (pid %ld) wrote no dump within %.0fs", pid, timeout / 1e9);
	return GPUIO_EXIT_ERROR;
}

/* ------------------------------------------------------------------ the daemon */

int cmd_monitor(int argc, char **argv)
{
	struct monitor_opts o = {
		.listen = "127.0.0.1:9477", .run_dir = "/run/gpuio", .dump_dir = "/var/lib/gpuio/dumps",
		.dump_format = "pftrace", .window_ns = 60000000000ull, .window_bytes = 64u << 20,
		.ringbuf = 16u << 20, .dump_keep = 20, .dump_max_bytes = 1ull << 30, .top_procs = 20,
		.top_cgroups = 100, .max_cgroups = 2048, .max_procs = 8192,
		.trig = { .interval_ns = 300000000000ull },
	};
	int err;

	if (argc > 1 && !strcmp(argv[1], "dump"))
		return cmd_monitor_dump(argc - 1, argv + 1);
	err = parse_args(argc, argv, &o);
	if (err)
		return err > 0 ? GPUIO_EXIT_OK : GPUIO_EXIT_USAGE;
	return monitor_daemon__run(&o, argc, argv);
}
