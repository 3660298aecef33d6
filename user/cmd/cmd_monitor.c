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
 * Options: one table each (lib/opts.h) for the daemon and for `dump`.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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
#include "lib/opts.h"
#include "lib/parse.h"
#include "lib/units.h"
#include "monitor/monitor_daemon.h"
#include "trace/drain_prio.h"



static struct monitor_opts mo;      /* the tables point into it */
static const char *dump_run_dir = "/run/gpuio";
static __u64 dump_timeout = 120 * NSEC_PER_SEC;

/* --ringbuf: bytes rounded up to a power of two, 1M .. 1G */
static int on_ringbuf(const struct opt *opt, const char *arg, void *ctx)
{
	uint64_t b, p = MiB;

	if (parse_bytes(arg, &b) || !b || b > GiB) {
		pr_err("--ringbuf: bad size '%s' (examples: 16M, 64M)", arg);
		return -1;
	}
	while (p < b)
		p <<= 1;
	mo.ringbuf = p;
	return 0;
}

static int on_trigger(const struct opt *opt, const char *arg, void *ctx)
{
	return monitor_triggers__add(&mo.trig, arg) ? -1 : 0;
}

static int on_cuda_uprobes(const struct opt *opt, const char *arg, void *ctx)
{
	mo.cuda_uprobes = !strcmp(opt->long_name, "cuda-uprobes");
	return 0;
}

static int on_quiet(const struct opt *opt, const char *arg, void *ctx)
{
	gpuio_log_verbosity = GPUIO_LOG_ERROR;
	return 0;
}

static const struct opt monitor_opts[] = {
	OPT_GROUP("options:"),
	OPT_STRING(0, "listen", &mo.listen, "ADDR:PORT",
		   "serve /metrics here (default 127.0.0.1:9477: loopback only)"),
	OPT_DURATION(0, "window", &mo.window_ns, "DUR", 0,
		     "flight-recorder window (default 60s); 0 = aggregation only:\n"
		     "the full-event programs are not loaded at all"),
	OPT_SIZE(0, "window-bytes", &mo.window_bytes, "SIZE", MiB,
		 "memory for the window's events (default 64M; at least 1M)"),
	OPT_CALL(0, "ringbuf", "SIZE", "BPF ring buffer of the recorder (default 16M)", on_ringbuf),
	OPT_UINT(0, "drain-priority", &mo.drain_prio, "N", 0, 99,
		 "the recorder drains its ring at SCHED_FIFO priority N,\n"
		 "before every ordinary task, so a busy node does not make\n"
		 "the kernel drop its records; only while it drains (the\n"
		 "daemon's other work and dumps run as usual). Default 1; 0 off"),
	OPT_STRING(0, "dump-dir", &mo.dump_dir, "DIR", "where dumps go (default /var/lib/gpuio/dumps)"),
	OPT_CHOICE(0, "dump-format", &mo.dump_format, "FMT", "pftrace|pftrace.gz|json|json.gz",
		   "pftrace (default), pftrace.gz, json or json.gz"),
	OPT_UINT(0, "dump-keep", &mo.dump_keep, "N", 1, 100000, "newest dumps kept (default 20)"),
	OPT_SIZE(0, "dump-max-bytes", &mo.dump_max_bytes, "SIZE", 1,
		 "bytes of dumps kept (default 1G)"),
	OPT_CALL(0, "trigger", "EXPR",
		 "dump automatically: 'vfs_latency>200ms', 'block_latency>1s',\n"
		 "'gpu_idle>5s' (needs GPU data), 'loop_data_wait>0.5:2m' (a\n"
		 "cgroup's loops waited for data over half their time for 2\n"
		 "minutes: the dump keeps its capture for gpuio report); repeatable",
		 on_trigger),
	OPT_DURATION(0, "trigger-interval", &mo.trig.interval_ns, "DUR", 1,
		     "at most one automatic dump per DUR (default 5m)"),
	OPT_UINT(0, "top-k", &mo.top_procs, "N", 1, 1u << 20,
		 "labelled (cgroup, process name) series (default 20); the\n"
		 "rest are summed as comm=\"other\""),
	OPT_UINT(0, "top-cgroups", &mo.top_cgroups, "N", 1, 1u << 20,
		 "labelled (cgroup, device) series (default 100)"),
	OPT_UINT(0, "max-cgroups", &mo.max_cgroups, "N", 1, 1u << 20,
		 "kernel map entries for (cgroup, device) (default 2048)"),
	OPT_UINT(0, "max-procs", &mo.max_procs, "N", 1, 1u << 20,
		 "kernel map entries for processes (default 8192)"),
	OPT_STRING(0, "cgroups", &mo.cgroups, "HIER",
		   "the cgroups series are keyed by: v2 (default), or a cgroup\n"
		   "v1 controller's hierarchy on v1 hosts (memory, cpuset...:\n"
		   "Slurm's cgroup/v1 plugin, kubelet on v1)"),
	OPT_BOOL(0, "pseudo-fs", &mo.pseudo_fs,
		 "keep proc, sysfs, cgroup, debugfs... in the VFS series\n"
		 "(left out by default: the daemon's own /proc reads)"),
	OPT_CALL(0, "cuda-uprobes", NULL,
		 "count CUDA API calls per process and cgroup with uprobes on\n"
		 "every libcudart / libcuda file mapped on the node (found by a\n"
		 "/proc scan every 10 s). Off by default: every CUDA call of\n"
		 "every job would pay a uprobe trap (~1-3 us on bare metal)", on_cuda_uprobes),
	OPT_CALL(0, "no-cuda-uprobes", NULL, "the default (kept for old command lines)",
		 on_cuda_uprobes),
	OPT_BOOL(0, "no-thread-time", &mo.no_thread_time,
		 "leave out the thread-time series (gpuio_thread_seconds_total,\n"
		 "gpuio_loop_wait_seconds_total...): no program on sched_switch\n"
		 "and sched_waking"),
	OPT_BOOL(0, "no-latency", &mo.no_latency,
		 "no gpuio_cgroup_vfs_latency_seconds histograms: no clock\n"
		 "read per file call (most of what a call pays the monitor);\n"
		 "bytes and calls are still counted"),
	OPT_STRING(0, "node-name", &mo.node_name, "NAME",
		   "the host name dumps carry (default: the node's host name)"),
	OPT_GROUP("Alertmanager's webhook (off unless --alert-listen):"),
	OPT_STRING(0, "alert-listen", &mo.alert_listen, "ADDR:PORT",
		   "accept Alertmanager's webhook at POST /alert here: each firing\n"
		   "alert naming a job of this node (slurm_job, k8s_pod_uid,\n"
		   "container_id or cgroup label) dumps the --alert-span before\n"
		   "the alert's startsAt, named by alert and job, with its capture"),
	OPT_STRING(0, "alert-token-file", &mo.alert_token_file, "FILE",
		   "the bearer token every request must carry (required; the\n"
		   "file must not be readable by other users)"),
	OPT_STRING(0, "alert-tls-cert", &mo.alert_tls_cert, "PEM", "serve HTTPS with this certificate"),
	OPT_STRING(0, "alert-tls-key", &mo.alert_tls_key, "PEM", "... and this key"),
	OPT_DURATION(0, "alert-span", &mo.alert_span_ns, "DUR", 1,
		     "how much before the alert's instant a dump holds (default\n"
		     "30s; at most --window)"),
	OPT_DURATION(0, "alert-trace", &mo.alert_trace_ns, "DUR", 0,
		     "then trace the job's root process on this node for DUR\n"
		     "with Python stacks (gpuio trace -p), beside the dump, for\n"
		     "where in its code the loop waits (default 10s; 0: no)"),
	OPT_SIZE(0, "alert-max-body", &mo.alert_max_body, "SIZE", 1024,
		 "larger requests are refused (413; default 256K)"),
	OPT_UINT(0, "alert-rate", &mo.alert_rate, "N", 1, 100000,
		 "authenticated requests a minute; more are refused (429;\n"
		 "default 30)"),
	OPT_GROUP("more options:"),
	OPT_STRING(0, "run-dir", &mo.run_dir, "DIR",
		   "lock, pid and dump-status files (default /run/gpuio)"),
	OPT_STRING(0, "log-file", &mo.log_file, "FILE",
		   "log there instead of stderr (SIGHUP reopens it)"),
	OPT_INCR('v', "verbose", &gpuio_log_verbosity, "more detail"),
	OPT_CALL('q', "quiet", NULL, "errors only", on_quiet),
	OPT_END(),
};

static const char monitor_usage[] =
"usage: gpuio monitor [OPTIONS]        run the node daemon (foreground)\n"
"       gpuio monitor dump [--run-dir DIR] [--timeout DUR]\n"
"                                      ask the running daemon for a dump; print its path";

static const struct opt_cmd monitor_page = {
	.name = "monitor",
	.usage = monitor_usage,
	.about =
"Always-on, in-kernel aggregation of file and block I/O per cgroup, process and\n"
"disk, and of CUDA API calls per cgroup and process, served as Prometheus\n"
"metrics, plus a flight recorder of the last --window of full events, dumped on\n"
"demand (SIGUSR1, `gpuio monitor dump`) or on a trigger.\n"
"Needs root. One instance per node (lock RUN_DIR/monitor.pid).\n",
	.opts = monitor_opts,
	.after =
"signals: SIGUSR1 dump, SIGHUP reopen the log, SIGTERM/SIGINT detach and exit.\n"
"examples:\n"
"  sudo gpuio monitor --trigger 'vfs_latency>200ms'\n"
"  curl -s 127.0.0.1:9477/metrics | grep gpuio_cgroup_vfs_bytes_total\n"
"  sudo gpuio monitor dump\n"
"  sudo gpuio monitor --trigger 'loop_data_wait>0.5:2m' \\\n"
"       --alert-listen 0.0.0.0:9478 --alert-token-file /etc/gpuio/alert-token\n",
};

static const struct opt dump_opts[] = {
	OPT_GROUP("options:"),
	OPT_STRING(0, "run-dir", &dump_run_dir, "DIR", "the daemon's run dir (default /run/gpuio)"),
	OPT_DURATION(0, "timeout", &dump_timeout, "DUR", 1,
		     "wait at most DUR for the dump (default 2m)"),
	OPT_END(),
};

static const struct opt_cmd dump_page = {
	.name = "monitor dump",
	.usage = "usage: gpuio monitor dump [--run-dir DIR] [--timeout DUR]",
	.about = "Ask the running `gpuio monitor` for a flight-recorder dump (SIGUSR1) and\n"
		 "print the dump's path when it is written.\n",
	.opts = dump_opts,
};

static int parse_args(int argc, char **argv, struct monitor_opts *o)
{
	int first = opt_parse(&monitor_page, argc, argv, NULL);

	if (first == OPT_HELP)
		return 1;
	if (first == OPT_BAD)
		return -EINVAL;
	if (first < argc) {
		pr_err("unexpected argument '%s' (see `gpuio monitor --help`)", argv[first]);
		return -EINVAL;
	}
	if (o->trig.n && !o->window_ns) {
		pr_err("--trigger needs the flight recorder: a --window > 0");
		return -EINVAL;
	}
	if (o->alert_listen && !o->window_ns) {
		pr_err("--alert-listen needs the flight recorder: a --window > 0");
		return -EINVAL;
	}
	if (o->alert_listen && o->alert_span_ns > o->window_ns) {
		pr_err("--alert-span %.0fs is longer than the --window %.0fs the recorder keeps",
		       o->alert_span_ns / NS_PER_SEC_F, o->window_ns / NS_PER_SEC_F);
		return -EINVAL;
	}
	if (!o->alert_listen && (o->alert_token_file || o->alert_tls_cert || o->alert_tls_key)) {
		pr_err("--alert-token-file and --alert-tls-*: only with --alert-listen");
		return -EINVAL;
	}
	return 0;
}

/* mkdir -p for the run and dump directories. */
static int cmd_monitor_dump(int argc, char **argv)
{
	const char *run_dir;
	__u64 timeout, t0;
	char path[PATH_MAX], buf[32] = "", what[PATH_MAX];
	unsigned seq0;
	int fd, n, first;
	long pid;

	first = opt_parse(&dump_page, argc, argv, NULL);
	if (first == OPT_HELP)
		return GPUIO_EXIT_OK;
	if (first == OPT_BAD)
		return GPUIO_EXIT_USAGE;
	run_dir = dump_run_dir;
	timeout = dump_timeout;
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
	pr_err("the monitor (pid %ld) wrote no dump within %.0fs", pid, timeout / NS_PER_SEC_F);
	return GPUIO_EXIT_ERROR;
}

/* ------------------------------------------------------------------ the daemon */

int cmd_monitor(int argc, char **argv)
{
	struct monitor_opts *o = &mo;
	int err;

	*o = (struct monitor_opts){
		.listen = "127.0.0.1:9477", .run_dir = "/run/gpuio", .dump_dir = "/var/lib/gpuio/dumps",
		.dump_format = "pftrace", .window_ns = 60 * NSEC_PER_SEC, .window_bytes = 64 * MiB,
		.ringbuf = 16 * MiB, .drain_prio = DRAIN_PRIO_DEFAULT, .dump_keep = 20, .dump_max_bytes = GiB, .top_procs = 20,
		.top_cgroups = 100, .max_cgroups = 2048, .max_procs = 8192,
		.trig = { .interval_ns = 300 * NSEC_PER_SEC },
		.alert_span_ns = 30 * NSEC_PER_SEC, .alert_trace_ns = 10 * NSEC_PER_SEC, .alert_max_body = 256 * 1024, .alert_rate = 30,
	};
	if (argc > 1 && !strcmp(argv[1], "dump"))
		return cmd_monitor_dump(argc - 1, argv + 1);
	err = parse_args(argc, argv, o);
	if (err)
		return err > 0 ? GPUIO_EXIT_OK : GPUIO_EXIT_USAGE;
	return monitor_daemon__run(o, argc, argv);
}
