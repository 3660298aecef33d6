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

#ifndef GPUIO_VERSION
#define GPUIO_VERSION "0.1.0"
#endif

struct monitor_opts {
	const char *listen;
	const char *run_dir;
	const char *dump_dir;
	const char *dump_format;
	const char *log_file;
	__u64 window_ns;
	size_t window_bytes;
	size_t ringbuf;
	unsigned dump_keep;
	__u64 dump_max_bytes;
	unsigned top_procs, top_cgroups;
	unsigned max_cgroups, max_procs;
	bool no_cuda;
	struct monitor_triggers trig;
};

static volatile sig_atomic_t stop_sig, want_dump, want_reopen;

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		want_dump = 1;
	else if (sig == SIGHUP)
		want_reopen = 1;
	else
		stop_sig = sig;
}


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
"      --no-cuda-uprobes    do not count CUDA API calls (by default, every libcudart /\n"
"                           libcuda file mapped on the node gets counting uprobes, found\n"
"                           by a /proc scan every 10 s)\n"
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

static __u64 parse_dur(const char *s, bool allow_zero)
{
	char *end;
	double v = strtod(s, &end);
	double mult = 1e9;

	if (end == s || v < 0 || (!allow_zero && v == 0))
		return ~0ull;
	if (!*end || !strcmp(end, "s")) mult = 1e9;
	else if (!strcmp(end, "ms")) mult = 1e6;
	else if (!strcmp(end, "m") || !strcmp(end, "min")) mult = 60e9;
	else if (!strcmp(end, "h")) mult = 3600e9;
	else return ~0ull;
	return (__u64)(v * mult);
}

static __u64 parse_bytes(const char *s)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);

	if (end == s)
		return 0;
	switch (*end) {
	case 'k': case 'K': v <<= 10; end++; break;
	case 'm': case 'M': v <<= 20; end++; break;
	case 'g': case 'G': v <<= 30; end++; break;
	}
	if (!strcmp(end, "iB") || !strcmp(end, "B"))
		end += strlen(end);
	return *end ? 0 : v;
}

static long parse_uint(const char *s, long max)
{
	char *end;
	long v = strtol(s, &end, 10);

	return *end || v < 1 || v > max ? -1 : v;
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
			o->window_bytes = parse_bytes(optarg);
			if (o->window_bytes < (1u << 20)) {
				pr_err("--window-bytes: '%s' is not a size of at least 1M", optarg);
				return -EINVAL;
			}
			break;
		case 'R': {
			__u64 b = parse_bytes(optarg), p = 1u << 20;

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
			o->dump_max_bytes = parse_bytes(optarg);
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
		case 'U': o->no_cuda = true; break;
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
static int mkdirs(const char *path, mode_t mode)
{
	char buf[PATH_MAX];

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(buf, mode) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, mode) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

/* The single-instance lock. Returns the locked fd or -errno (message printed). */
static int lock_instance(const char *run_dir)
{
	char path[PATH_MAX], pid[32] = "";
	int fd, n;

	if (mkdirs(run_dir, 0755) < 0) {
		pr_err("cannot create %s: %s", run_dir, strerror(errno));
		return -errno;
	}
	snprintf(path, sizeof(path), "%s/monitor.pid", run_dir);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0) {
		pr_err("cannot open %s: %s", path, strerror(errno));
		return -errno;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		n = (int)pread(fd, pid, sizeof(pid) - 1, 0);
		pid[n > 0 ? n : 0] = 0;
		pid[strcspn(pid, "\n")] = 0;
		pr_err("gpuio monitor is already running (pid %s, lock %s): one instance per node; "
		       "stop it first (systemctl stop gpuio-monitor) or use another --run-dir",
		       pid[0] ? pid : "?", path);
		close(fd);
		return -EBUSY;
	}
	n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	if (ftruncate(fd, 0) < 0 || pwrite(fd, pid, (size_t)n, 0) != n)
		pr_warn("cannot write %s: %s", path, strerror(errno));
	return fd;
}

/* RUN_DIR/monitor.dump = "SEQ PATH" or "SEQ error: WHY", replaced atomically. */
static void write_status(const char *run_dir, unsigned seq, const char *what)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8];
	FILE *f;

	snprintf(path, sizeof(path), "%s/monitor.dump", run_dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "we");
	if (!f)
		return;
	fprintf(f, "%u %s\n", seq, what);
	if (fclose(f) == 0)
		rename(tmp, path);
}

static unsigned read_status(const char *run_dir, char *what, size_t len)
{
	char path[PATH_MAX], line[PATH_MAX + 64];
	unsigned seq = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/monitor.dump", run_dir);
	what[0] = 0;
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (fgets(line, sizeof(line), f)) {
		char *sp = strchr(line, ' ');

		line[strcspn(line, "\n")] = 0;
		seq = (unsigned)strtoul(line, NULL, 10);
		if (sp)
			snprintf(what, len, "%s", sp + 1);
	}
	fclose(f);
	return seq;
}

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
	seq0 = read_status(run_dir, what, sizeof(what));
	if (kill((pid_t)pid, SIGUSR1) < 0) {
		pr_err("cannot signal the monitor (pid %ld): %s", pid, strerror(errno));
		return GPUIO_EXIT_ERROR;
	}
	for (t0 = clock_mono_ns(); clock_mono_ns() - t0 < timeout; usleep(50000)) {
		if (read_status(run_dir, what, sizeof(what)) == seq0)
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

struct daemon_ctx {
	struct monitor_opts *o;
	struct monitor_loader *ml;
	struct monitor_cuda *cuda;
	struct monitor_agg *agg;
	struct monitor_recorder *rec;
	struct monitor_nvml *nvml;
	struct http_metrics *http;
	__u64 start_real_s;
};

static void self_metrics(struct mon_buf *b, void *ctx)
{
	struct daemon_ctx *d = ctx;
	long pages = 0, rss = 0;
	unsigned fds = 0;
	FILE *f = fopen("/proc/self/statm", "re");
	DIR *dir;

	if (f) {
		if (fscanf(f, "%ld %ld", &pages, &rss) != 2)
			rss = 0;
		fclose(f);
	}
	dir = opendir("/proc/self/fd");
	if (dir) {
		while (readdir(dir))
			fds++;
		closedir(dir);
		fds = fds > 3 ? fds - 3 : 0;    /* ., .., the dir's own fd */
	}
	mon_buf__printf(b, "# HELP gpuio_monitor_info The monitor's configuration.\n"
			"# TYPE gpuio_monitor_info gauge\n"
			"gpuio_monitor_info{version=\"%s\",bpf_mode=\"%s\",recorder=\"%s\",cuda_uprobes=\"%s\"} 1\n",
			GPUIO_VERSION, d->ml->mode, d->rec ? "on" : "off", monitor_cuda__mode(d->cuda));
	mon_buf__printf(b, "# HELP gpuio_monitor_resident_bytes The daemon's resident memory.\n"
			"# TYPE gpuio_monitor_resident_bytes gauge\ngpuio_monitor_resident_bytes %ld\n",
			rss * sysconf(_SC_PAGESIZE));
	mon_buf__printf(b, "# HELP gpuio_monitor_open_fds The daemon's open file descriptors.\n"
			"# TYPE gpuio_monitor_open_fds gauge\ngpuio_monitor_open_fds %u\n", fds);
	mon_buf__printf(b, "# HELP gpuio_monitor_start_time_seconds When the daemon started (Unix time).\n"
			"# TYPE gpuio_monitor_start_time_seconds gauge\ngpuio_monitor_start_time_seconds %llu\n",
			(unsigned long long)d->start_real_s);
	mon_buf__printf(b, "# HELP gpuio_monitor_scrapes_total Scrapes served before this one.\n"
			"# TYPE gpuio_monitor_scrapes_total counter\ngpuio_monitor_scrapes_total %llu\n",
			http_metrics__scrapes(d->http));
}

static void render(struct mon_buf *b, void *ctx)
{
	struct daemon_ctx *d = ctx;

	monitor_agg__render(d->agg, b);
}

static void reopen_log(const char *path)
{
	if (!path)
		return;
	if (!freopen(path, "ae", stderr))
		return;
	setvbuf(stderr, NULL, _IOLBF, 0);
}

static void do_dump(struct daemon_ctx *d, const char *reason, unsigned *seq)
{
	char out[PATH_MAX + 64], msg[PATH_MAX + 80];

	++*seq;
	if (!d->rec) {
		pr_warn("dump requested, but the flight recorder is off (--window 0)");
		write_status(d->o->run_dir, *seq, "error: the flight recorder is off (--window 0)");
		return;
	}
	if (monitor_recorder__dump(d->rec, reason, out, sizeof(out)) == 0) {
		pr_info("dump (%s) written: %s", reason, out);
		write_status(d->o->run_dir, *seq, out);
	} else {
		snprintf(msg, sizeof(msg), "error: writing %s failed (see the daemon's log)", out);
		write_status(d->o->run_dir, *seq, msg);
	}
}

int cmd_monitor(int argc, char **argv)
{
	struct monitor_opts o = {
		.listen = "127.0.0.1:9477", .run_dir = "/run/gpuio", .dump_dir = "/var/lib/gpuio/dumps",
		.dump_format = "pftrace", .window_ns = 60000000000ull, .window_bytes = 64u << 20,
		.ringbuf = 16u << 20, .dump_keep = 20, .dump_max_bytes = 1ull << 30, .top_procs = 20,
		.top_cgroups = 100, .max_cgroups = 2048, .max_procs = 8192,
		.trig = { .interval_ns = 300000000000ull },
	};
	struct monitor_loader_opts mo = { 0 };
	struct monitor_agg_opts ao = { 0 };
	struct monitor_names *names = NULL;
	struct daemon_ctx d = { .o = &o };
	struct sigaction sa = { .sa_handler = on_signal };
	char cmdline[1024] = "";
	int lock_fd = -1, rc = GPUIO_EXIT_ERROR, err;
	unsigned seq = 0;
	__u64 last_tick = 0, tick_ns = 1000000000ull;

	if (argc > 1 && !strcmp(argv[1], "dump"))
		return cmd_monitor_dump(argc - 1, argv + 1);
	err = parse_args(argc, argv, &o);
	if (err)
		return err > 0 ? GPUIO_EXIT_OK : GPUIO_EXIT_USAGE;
	if (o.log_file)
		reopen_log(o.log_file);
	/* journald takes whole lines */
	setvbuf(stderr, NULL, _IOLBF, 0);
	if (geteuid() != 0) {
		pr_err("gpuio monitor needs root (BPF programs, the lock in %s): run it with sudo "
		       "or as the systemd unit", o.run_dir);
		return GPUIO_EXIT_ERROR;
	}
	lock_fd = lock_instance(o.run_dir);
	if (lock_fd < 0)
		return GPUIO_EXIT_ERROR;
	for (int i = 0, used = 0; i < argc && used < (int)sizeof(cmdline) - 1; i++)
		used += snprintf(cmdline + used, sizeof(cmdline) - (size_t)used, "%s%s", i ? " " : "gpuio ", argv[i]);
	d.start_real_s = (__u64)time(NULL);

	mo.max_cgroups = o.max_cgroups;
	mo.max_procs = o.max_procs;
	mo.max_devs = 256;
	mo.max_rqs = 16384;
	if (monitor_loader__open(&mo, &d.ml))
		goto out;
	if (monitor_names__new(&names)) {
		pr_err("out of memory");
		goto out;
	}
	if (!monitor_names__cgroot(names)[0])
		pr_warn("no cgroup v2 mount found: cgroups are labelled by id");
	ao.top_cgroups = o.top_cgroups;
	ao.top_procs = o.top_procs;
	ao.retire_ns = 600000000000ull;
	if (monitor_agg__new(d.ml, names, &ao, &d.agg)) {
		pr_err("out of memory");
		goto out;
	}
	if (!o.no_cuda && monitor_cuda__open(d.ml->fd_stats, d.ml->max_procs, &d.cuda) == 0 &&
	    monitor_agg__set_cuda(d.agg, monitor_cuda__map_fd(d.cuda), d.ml->max_procs)) {
		pr_err("out of memory");
		goto out;
	}
	d.nvml = monitor_nvml__open();
	monitor_triggers__arm(&o.trig, monitor_nvml__available(d.nvml));
	if (o.window_ns) {
		struct monitor_recorder_opts ro = {
			.window_ns = o.window_ns, .max_bytes = o.window_bytes, .ringbuf_bytes = o.ringbuf,
			.dump_dir = o.dump_dir, .format = o.dump_format, .keep = o.dump_keep,
			.dir_max_bytes = o.dump_max_bytes, .cmdline = cmdline,
		};

		if (mkdirs(o.dump_dir, 0750) < 0) {
			pr_err("cannot create --dump-dir %s: %s", o.dump_dir, strerror(errno));
			goto out;
		}
		if (monitor_recorder__open(&ro, &d.rec))
			goto out;
		monitor_recorder__on_event(d.rec, monitor_triggers__event, &o.trig);
	}
	monitor_agg__add_extra(d.agg, self_metrics, &d);
	if (d.rec)
		monitor_agg__add_extra(d.agg, monitor_recorder__metrics, d.rec);
	monitor_agg__add_extra(d.agg, monitor_triggers__metrics, &o.trig);
	monitor_agg__add_extra(d.agg, monitor_nvml__metrics, d.nvml);
	monitor_agg__add_extra(d.agg, monitor_cuda__metrics, d.cuda);

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (http_metrics__start(o.listen, render, &d, &d.http))
		goto out;
	pr_info("monitor: serving http://%s/metrics (aggregation: %s%s%s); flight recorder: %s; "
		"CUDA call counts: %s", o.listen, d.ml->mode, d.ml->detail[0] ? "; " : "", d.ml->detail,
		d.rec ? "on" : "off (--window 0)", d.cuda ? monitor_cuda__mode(d.cuda) :
		o.no_cuda ? "off (--no-cuda-uprobes)" : "off");
	if (d.rec)
		pr_info("monitor: recorder window %.0fs, %zu MiB, tracer %s; dumps to %s (%s)",
			o.window_ns / 1e9, o.window_bytes >> 20, monitor_recorder__modes(d.rec),
			o.dump_dir, o.dump_format);

	while (!stop_sig) {
		__u64 now;
		int i;

		if (d.rec) {
			err = monitor_recorder__poll(d.rec, 100);
			if (err) {
				pr_err("reading the recorder's events failed: %s", strerror(-err));
				break;
			}
		} else {
			usleep(200000);
		}
		now = clock_mono_ns();
		monitor_cuda__scan(d.cuda, now);     /* every 10 s; no-op in between */
		if (now - last_tick >= tick_ns) {
			struct monitor_agg_health h;
			bool busy;

			/* folds exited processes even when nobody scrapes; faster
			 * while the process map is a quarter full (churn) */
			monitor_agg__refresh(d.agg);
			monitor_agg__health(d.agg, &h);
			tick_ns = h.proc_entries * 4 > d.ml->max_procs ? 200000000ull : 1000000000ull;
			if (monitor_nvml__sample(d.nvml, &busy) == 0)
				monitor_triggers__gpu(&o.trig, busy, now);
			last_tick = now;
		}
		if (want_reopen) {
			want_reopen = 0;
			reopen_log(o.log_file);
			pr_info("monitor: SIGHUP: %s", o.log_file ? "log reopened" : "nothing to reopen (no --log-file)");
		}
		if (want_dump) {
			want_dump = 0;
			do_dump(&d, "manual", &seq);
		}
		if ((i = monitor_triggers__take(&o.trig, now)) >= 0) {
			char reason[32];

			pr_info("trigger %s fired: %s", o.trig.t[i].expr, o.trig.why);
			snprintf(reason, sizeof(reason), "trigger-%s",
				 o.trig.t[i].kind == MON_TRIG_VFS_LATENCY ? "vfs_latency" :
				 o.trig.t[i].kind == MON_TRIG_BLOCK_LATENCY ? "block_latency" : "gpu_idle");
			do_dump(&d, reason, &seq);
		}
	}
	if (stop_sig)
		pr_info("monitor: %s: detaching and exiting", strsignal(stop_sig));
	rc = stop_sig ? GPUIO_EXIT_OK : GPUIO_EXIT_ERROR;
out:
	http_metrics__stop(d.http);
	monitor_recorder__free(d.rec);
	monitor_agg__free(d.agg);
	monitor_cuda__free(d.cuda);
	monitor_names__free(names);
	monitor_nvml__close(d.nvml);
	monitor_loader__destroy(d.ml);
	if (lock_fd >= 0) {
		if (ftruncate(lock_fd, 0) < 0)
			pr_debug("cannot truncate the pid file");
		close(lock_fd);
	}
	return rc;
}
