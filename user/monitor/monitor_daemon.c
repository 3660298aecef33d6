// SPDX-License-Identifier: MIT
/*
 * monitor_daemon.c — `gpuio monitor` running (monitor_daemon.h): one
 * instance per node (a flock'd pid file), the in-kernel aggregation, the
 * /metrics endpoint, the flight recorder and its triggers, signals (TERM,
 * INT: exit; HUP: reopen the log; USR1: dump), and the tick that keeps the
 * series folded when nobody scrapes.
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
#include "gpuio.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "monitor/http_metrics.h"
#include "monitor/monitor_agg.h"
#include "monitor/monitor_bpf.h"
#include "monitor/monitor_cuda.h"
#include "monitor/monitor_daemon.h"
#include "monitor/monitor_names.h"
#include "monitor/monitor_nvml.h"
#include "monitor/monitor_recorder.h"
#include "monitor/alert_webhook.h"
#include "monitor/monitor_alert.h"
#include "lib/job_identity.h"
#include "lib/units.h"
#include "trace/drain_prio.h"

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

unsigned monitor_daemon__read_status(const char *run_dir, char *what, size_t len)
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

struct daemon_ctx {
	struct monitor_opts *o;
	struct monitor_loader *ml;
	struct monitor_cuda *cuda;
	struct monitor_agg *agg;
	struct monitor_recorder *rec;
	unsigned rt_prio;               /* the recorder's drain priority, 0: usual */
	struct monitor_nvml *nvml;
	struct http_metrics *http;
	struct alert_webhook *webhook;   /* NULL: no --alert-listen */
	struct monitor_alerts alerts;
	char node[64];                   /* --node-name, else the host name */
	__u64 start_real_s;
	struct monitor_names *names;
	int lock_fd;             /* the flock'd pid file in --run-dir */
	unsigned seq;            /* dumps so far (the status file's sequence) */
	char cmdline[1024];
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
			"gpuio_monitor_info{version=\"%s\",bpf_mode=\"%s\",recorder=\"%s\",cuda_uprobes=\"%s\",thread_time=\"%s\"} 1\n",
			GPUIO_VERSION, d->ml->mode, d->rec ? "on" : "off", monitor_cuda__mode(d->cuda),
			d->ml->fd_sched >= 0 ? "on" : "off");
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

static void do_dump(struct daemon_ctx *d, const struct monitor_dump_req *q, unsigned *seq)
{
	char out[PATH_MAX + 64], msg[PATH_MAX + 80];

	++*seq;
	if (!d->rec) {
		pr_warn("dump requested, but the flight recorder is off (--window 0)");
		write_status(d->o->run_dir, *seq, "error: the flight recorder is off (--window 0)");
		return;
	}
	if (monitor_recorder__dump(d->rec, q, out, sizeof(out)) == 0) {
		pr_info("dump (%s) written: %s%s", q->reason, out,
			q->keep_capture ? " (and its capture, .gpuio, for gpuio report)" : "");
		write_status(d->o->run_dir, *seq, out);
	} else {
		snprintf(msg, sizeof(msg), "error: writing %s failed (see the daemon's log)", out);
		write_status(d->o->run_dir, *seq, msg);
	}
}

/* Lock, load, aggregate, record: everything before serving. 0, or -1 (said). */
static int daemon_setup(struct daemon_ctx *d, int argc, char **argv)
{
	struct monitor_opts *o = d->o;
	struct monitor_loader_opts mo = { 0 };
	struct monitor_agg_opts ao = { 0 };

	if (o->log_file)
		reopen_log(o->log_file);
	/* journald takes whole lines */
	setvbuf(stderr, NULL, _IOLBF, 0);
	if (geteuid() != 0) {
		pr_err("gpuio monitor needs root (BPF programs, the lock in %s): run it with sudo "
		       "or as the systemd unit", o->run_dir);
		return -1;
	}
	d->lock_fd = lock_instance(o->run_dir);
	if (d->lock_fd < 0)
		return -1;
	for (int i = 0, used = 0; i < argc && used < (int)sizeof(d->cmdline) - 1; i++)
		used += snprintf(d->cmdline + used, sizeof(d->cmdline) - (size_t)used, "%s%s", i ? " " : "gpuio ", argv[i]);
	d->start_real_s = (__u64)time(NULL);
	if (o->node_name)
		snprintf(d->node, sizeof(d->node), "%s", o->node_name);
	else if (gethostname(d->node, sizeof(d->node) - 1))
		snprintf(d->node, sizeof(d->node), "unknown");

	mo.max_cgroups = o->max_cgroups;
	mo.max_procs = o->max_procs;
	mo.max_devs = 256;
	mo.max_rqs = 16384;
	mo.cg_ssid = -1;
	mo.no_thread_time = o->no_thread_time;
	mo.no_latency = o->no_latency;
	if (o->cgroups && strcmp(o->cgroups, "v2")) {
		mo.cg_ssid = monitor_names__v1_ssid(o->cgroups);
		if (mo.cg_ssid < 0) {
			pr_err("--cgroups %s: no such cgroup v1 controller in /proc/cgroups "
			       "(examples: memory, cpuset, freezer; or v2)", o->cgroups);
			return -1;
		}
	}
	if (monitor_loader__open(&mo, &d->ml))
		return -1;
	if (monitor_names__new(mo.cg_ssid < 0 ? NULL : o->cgroups, &d->names)) {
		pr_err("out of memory");
		return -1;
	}
	if (!monitor_names__cgroot(d->names)[0])
		pr_warn("no %s%s mount found: cgroups are labelled by id",
			mo.cg_ssid < 0 ? "cgroup v2" : "cgroup v1 ", mo.cg_ssid < 0 ? "" : o->cgroups);
	else
		pr_info("cgroups: %s (%s)", mo.cg_ssid < 0 ? "v2" : o->cgroups, monitor_names__cgroot(d->names));
	ao.top_cgroups = o->top_cgroups;
	ao.top_procs = o->top_procs;
	ao.retire_ns = 600000000000ull;
	ao.pseudo_fs = o->pseudo_fs;
	if (monitor_agg__new(d->ml, d->names, &ao, &d->agg)) {
		pr_err("out of memory");
		return -1;
	}
	if (o->cuda_uprobes && monitor_cuda__open(d->ml->fd_stats, d->ml->max_procs, mo.cg_ssid, &d->cuda) == 0 &&
	    monitor_agg__set_cuda(d->agg, monitor_cuda__map_fd(d->cuda), d->ml->max_procs)) {
		pr_err("out of memory");
		return -1;
	}
	d->nvml = monitor_nvml__open();
	monitor_triggers__arm(&o->trig, monitor_nvml__available(d->nvml), d->ml->fd_sched >= 0);
	if (o->window_ns) {
		struct monitor_recorder_opts ro = {
			.window_ns = o->window_ns, .max_bytes = o->window_bytes, .ringbuf_bytes = o->ringbuf,
			.dump_dir = o->dump_dir, .format = o->dump_format, .keep = o->dump_keep,
			.dir_max_bytes = o->dump_max_bytes, .cmdline = d->cmdline,
			.node_name = o->node_name,
		};

		if (mkdirs(o->dump_dir, 0750) < 0) {
			pr_err("cannot create --dump-dir %s: %s", o->dump_dir, strerror(errno));
			return -1;
		}
		if (monitor_recorder__open(&ro, &d->rec))
			return -1;
		monitor_recorder__on_event(d->rec, monitor_triggers__event, &o->trig);
		d->rt_prio = o->drain_prio;
	}
	monitor_agg__add_extra(d->agg, self_metrics, d);
	if (d->rec)
		monitor_agg__add_extra(d->agg, monitor_recorder__metrics, d->rec);
	monitor_agg__add_extra(d->agg, monitor_triggers__metrics, &o->trig);
	monitor_agg__add_extra(d->agg, monitor_nvml__metrics, d->nvml);
	monitor_agg__add_extra(d->agg, monitor_cuda__metrics, d->cuda);
	return 0;
}

/* Signals and the /metrics endpoint. 0, or -1 (said). */
static int daemon_serve(struct daemon_ctx *d)
{
	const struct monitor_opts *o = d->o;
	struct sigaction sa = { .sa_handler = on_signal };

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (http_metrics__start(o->listen, render, d, &d->http))
		return -1;
	if (o->alert_listen) {
		struct alert_webhook_opts wo = {
			.listen = o->alert_listen, .token_file = o->alert_token_file,
			.tls_cert = o->alert_tls_cert, .tls_key = o->alert_tls_key,
			.max_body = o->alert_max_body, .rate = o->alert_rate,
		};

		if (alert_webhook__start(&wo, &d->webhook))
			return -1;
		d->alerts = (struct monitor_alerts){ .rec = d->rec, .agg = d->agg,
			.span_ns = o->alert_span_ns, .node = d->node,
			.cgroot = monitor_names__cgroot(d->names), .trace_ns = o->alert_trace_ns };
		monitor_agg__add_extra(d->agg, alert_webhook__metrics, d->webhook);
		monitor_agg__add_extra(d->agg, monitor_alerts__metrics, &d->alerts);
	}
	pr_info("monitor: serving http://%s/metrics (aggregation: %s%s%s); VFS latency: %s; thread time: %s; "
		"flight recorder: %s; CUDA call counts: %s", o->listen, d->ml->mode,
		d->ml->detail[0] ? "; " : "", d->ml->detail, o->no_latency ? "off (--no-latency)" : "on",
		o->no_thread_time ? "off (--no-thread-time)" : d->ml->irq_known ? "on" :
		"on (interrupts' wake-ups not told apart on this kernel)",
		d->rec ? "on" : "off (--window 0)", d->cuda ? monitor_cuda__mode(d->cuda) :
		o->cuda_uprobes ? "off" : "off (--cuda-uprobes counts them)");
	if (d->rec)
		pr_info("monitor: recorder window %.0fs, %zu MiB, tracer %s, draining at %s%.0u; "
			"dumps to %s (%s)", o->window_ns / NS_PER_SEC_F, o->window_bytes >> 20,
			monitor_recorder__modes(d->rec), o->drain_prio ? "SCHED_FIFO " :
			"the usual priority", o->drain_prio, o->dump_dir, o->dump_format);
	return 0;
}

struct job_of { __u64 cgid; char tag[96]; char text[160]; };

static void job_of_cgroup(void *ctx, __u64 cgid, const char *path, const struct job_identity *job)
{
	struct job_of *j = ctx;
	char v[80];

	if (cgid != j->cgid || j->tag[0])
		return;
	if (job && job->slurm_job[0])
		snprintf(j->text, sizeof(j->text), "slurm_job=%s", job->slurm_job);
	else if (job && job->k8s_pod_uid[0])
		snprintf(j->text, sizeof(j->text), "k8s_pod_uid=%s", job->k8s_pod_uid);
	else
		snprintf(j->text, sizeof(j->text), "cgroup=%s", path);
	monitor_alert__tag(v, sizeof(v), strchr(j->text, '=') + 1);
	snprintf(j->tag, sizeof(j->tag), "%.*s-%s", (int)(strchr(j->text, '=') - j->text), j->text, v);
}

/* A trigger fired: dump, named by its kind (and the job, for a loop's wait). */
static void trigger_dump(struct daemon_ctx *d, const struct mon_trigger *t)
{
	struct monitor_dump_req q = { 0 };
	struct job_of j = { .cgid = d->o->trig.match_cgid };
	char reason[160], about[128];

	pr_info("trigger %s fired: %s", t->expr, d->o->trig.why);
	snprintf(reason, sizeof(reason), "trigger-%s", monitor_trigger__kind_name(t->kind));
	if (t->kind == MON_TRIG_LOOP_DATA_WAIT) {
		/* the answer is in the loops: the capture too, for gpuio report */
		monitor_agg__each_cgroup(d->agg, job_of_cgroup, &j);
		snprintf(reason, sizeof(reason), "trigger-loop_data_wait-%s", j.tag[0] ? j.tag : "cgroup");
		snprintf(about, sizeof(about), "trigger %.40s for %.80s", t->expr, j.text);
		q.about = about;
		q.keep_capture = true;
	}
	q.reason = reason;
	do_dump(d, &q, &d->seq);
}

/*
 * The recorder's poll at SCHED_FIFO (--drain-priority, drain_prio.h): woken
 * with records waiting, it runs before every ordinary task; back at the
 * usual priority for the rest of the loop, so a dump's export never holds a
 * CPU from the job. A refusal (no CAP_SYS_NICE) is said once; it stays off.
 */
static int recorder_poll(struct daemon_ctx *d)
{
	char why[128];
	int err;

	if (d->rt_prio && drain_prio__raise((int)d->rt_prio, why, sizeof(why))) {
		pr_warn("the recorder drains at the usual priority (SCHED_FIFO %u: %s): a busy "
			"node may make the kernel drop its records", d->rt_prio, why);
		d->rt_prio = 0;
	}
	err = monitor_recorder__poll(d->rec, 100);
	if (d->rt_prio)
		drain_prio__restore();
	return err;
}

/* Until a TERM or INT: poll the recorder, tick, reopen, dump. */
static void daemon_loop(struct daemon_ctx *d)
{
	struct monitor_opts *o = d->o;
	__u64 last_tick = 0, tick_ns = NSEC_PER_SEC;
	int err;

	while (!stop_sig) {
		__u64 now;
		int i;

		if (d->rec) {
			err = recorder_poll(d);
			if (err) {
				pr_err("reading the recorder's events failed: %s", strerror(-err));
				break;
			}
		} else {
			usleep(200000);
		}
		now = clock_mono_ns();
		monitor_cuda__scan(d->cuda, now);     /* every 10 s; no-op in between */
		if (now - last_tick >= tick_ns) {
			struct monitor_agg_health h;
			bool busy;

			/* folds exited processes even when nobody scrapes; faster
			 * while the process map is a quarter full (churn) */
			monitor_agg__refresh(d->agg);
			monitor_agg__health(d->agg, &h);
			tick_ns = h.proc_entries * 4 > d->ml->max_procs ? 200 * NSEC_PER_MSEC : NSEC_PER_SEC;
			if (monitor_nvml__sample(d->nvml, &busy) == 0)
				monitor_triggers__gpu(&o->trig, busy, now);
			monitor_triggers__loops(&o->trig, d->agg, now);
			last_tick = now;
		}
		if (want_reopen) {
			want_reopen = 0;
			reopen_log(o->log_file);
			pr_info("monitor: SIGHUP: %s", o->log_file ? "log reopened" : "nothing to reopen (no --log-file)");
		}
		if (want_dump) {
			struct monitor_dump_req q = { .reason = "manual" };

			want_dump = 0;
			do_dump(d, &q, &d->seq);
		}
		if ((i = monitor_triggers__take(&o->trig, now)) >= 0)
			trigger_dump(d, &o->trig.t[i]);
		alert_webhook__serve(d->webhook, monitor_alerts__decide, &d->alerts);
		monitor_alerts__reap(&d->alerts);
	}
}

static void daemon_free(struct daemon_ctx *d)
{
	alert_webhook__stop(d->webhook);
	http_metrics__stop(d->http);
	monitor_recorder__free(d->rec);
	monitor_agg__free(d->agg);
	monitor_cuda__free(d->cuda);
	monitor_names__free(d->names);
	monitor_nvml__close(d->nvml);
	monitor_loader__destroy(d->ml);
	if (d->lock_fd >= 0) {
		if (ftruncate(d->lock_fd, 0) < 0)
			pr_debug("cannot truncate the pid file");
		close(d->lock_fd);
	}
}

int monitor_daemon__run(struct monitor_opts *o, int argc, char **argv)
{
	struct daemon_ctx d = { .o = o, .lock_fd = -1 };
	int rc = GPUIO_EXIT_ERROR;

	if (daemon_setup(&d, argc, argv) == 0 && daemon_serve(&d) == 0) {
		daemon_loop(&d);
		if (stop_sig)
			pr_info("monitor: %s: detaching and exiting", strsignal(stop_sig));
		rc = stop_sig ? GPUIO_EXIT_OK : GPUIO_EXIT_ERROR;
	}
	daemon_free(&d);
	return rc;
}
