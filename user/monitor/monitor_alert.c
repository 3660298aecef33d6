// SPDX-License-Identifier: MIT
/* monitor_alert.c — an Alertmanager notification to dumps. See monitor_alert.h. */
#include <ctype.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
#include "lib/clock.h"
#include "lib/job_identity.h"
#include "lib/json_writer.h"
#include "lib/log.h"
#include "lib/units.h"
#include "monitor/alert_payload.h"
#include "monitor/monitor_agg.h"
#include "monitor/monitor_alert.h"
#include "monitor/monitor_recorder.h"

#define GROUPS_MAX 16

/* The firing alerts of one job. */
struct job_group {
	const struct alert_item *first;   /* the earliest: its name and instant */
	bool here;
	char cgroup[256];                 /* a cgroup of the job on this node */
};

void monitor_alert__tag(char *out, size_t len, const char *s)
{
	size_t o = 0;

	for (; *s && o + 1 < len; s++)
		out[o++] = isalnum((unsigned char)*s) || *s == '.' || *s == '-' || *s == '_' ? *s : '_';
	out[o] = 0;
}

struct find { const struct alert_item *a; bool found; char path[256]; };

static void match_cgroup(void *ctx, __u64 cgid, const char *path, const struct job_identity *job)
{
	struct find *f = ctx;
	const char *have = NULL;

	(void)cgid;
	switch (f->a->key) {
	case ALERT_JOB_SLURM: have = job ? job->slurm_job : NULL; break;
	case ALERT_JOB_POD: have = job ? job->k8s_pod_uid : NULL; break;
	case ALERT_JOB_CONTAINER: have = job ? job->container_id : NULL; break;
	case ALERT_JOB_CGROUP: have = path; break;
	default: break;
	}
	if (have && *have && !strcmp(have, f->a->job) && !f->found) {
		f->found = true;
		snprintf(f->path, sizeof(f->path), "%s", path);
	}
}

/* The firing alerts with a job, grouped by job; returns the groups, the
 * jobs past GROUPS_MAX counted in *over. */
static int group_jobs(const struct alert_payload *p, struct job_group *g, int *over)
{
	int n = 0;

	*over = 0;
	for (int i = 0; i < p->n; i++) {
		const struct alert_item *a = &p->a[i];
		int k;

		if (!a->firing || a->key == ALERT_JOB_NONE)
			continue;
		for (k = 0; k < n; k++)
			if (g[k].first->key == a->key && !strcmp(g[k].first->job, a->job))
				break;
		if (k == n) {
			if (n == GROUPS_MAX) {
				(*over)++;     /* counted; its later alerts count again */
				continue;
			}
			g[n++] = (struct job_group){ .first = a };
		} else if (a->starts_real_ns < g[k].first->starts_real_ns) {
			g[k].first = a;
		}
	}
	return n;
}

static __u64 done_key(const struct alert_item *a)
{
	__u64 h = 1469598103934665603ull ^ a->starts_real_ns;

	for (const char *s = a->name; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	h = (h ^ a->key) * 1099511628211ull;
	for (const char *s = a->job; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static void iso(char *buf, size_t len, __u64 real_ns)
{
	time_t t = (time_t)(real_ns / NSEC_PER_SEC);
	struct tm tm;

	gmtime_r(&t, &tm);
	snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03uZ", tm.tm_year + 1900, tm.tm_mon + 1,
		 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		 (unsigned)(real_ns % NSEC_PER_SEC / 1000000));
}

/* The job's first process in cgroup path whose parent is not in it: the
 * root of its tree there (the launcher, or the training program). 0: none. */
static pid_t job_root(const char *cgroot, const char *path)
{
	char file[PATH_MAX];
	pid_t pids[512], root = 0;
	int n = 0;
	FILE *f;

	snprintf(file, sizeof(file), "%s%s/cgroup.procs", cgroot, path);
	f = fopen(file, "re");
	if (!f)
		return 0;
	while (n < 512 && fscanf(f, "%d", &pids[n]) == 1)
		n++;
	fclose(f);
	for (int i = 0; i < n && !root; i++) {
		char stat[64], buf[512], *rp;
		FILE *s;
		int ppid = 0;
		bool inside = false;

		snprintf(stat, sizeof(stat), "/proc/%d/stat", pids[i]);
		s = fopen(stat, "re");
		if (!s)
			continue;
		rp = fgets(buf, sizeof(buf), s) ? strrchr(buf, ')') : NULL;
		fclose(s);
		if (!rp || sscanf(rp + 1, " %*c %d", &ppid) != 1)
			continue;
		for (int k = 0; k < n; k++)
			inside |= pids[k] == ppid;
		if (!inside)
			root = pids[i];
	}
	return root;
}

/* --alert-trace: trace the job's root process for DUR, stacks on, beside the
 * dump (NAME.trace.gpuio); its part of the answer appended at msg+*o. */
static void follow_up(struct monitor_alerts *m, const char *cgroup, const char *dump, char *msg,
		      size_t len, size_t *o)
{
	char pid_s[16], dur_s[32], cap[560], esc[700];
	const char *dot = strrchr(dump, '.');
	pid_t root, c;
	int slot = -1;

	if (!m->trace_ns || !m->cgroot || !*m->cgroot)
		return;
	for (int i = 0; i < MONITOR_ALERT_TRACES && slot < 0; i++)
		if (!m->traces[i].pid)
			slot = i;
	root = job_root(m->cgroot, cgroup);
	if (slot < 0 || !root) {
		*o += (size_t)snprintf(msg + *o, len - *o, ",\"trace_error\":\"%s\"",
				       slot < 0 ? "too many traces running" : "no process of the job found");
		return;
	}
	snprintf(cap, sizeof(cap), "%.*s.trace.gpuio", (int)(dot ? dot - dump : (long)strlen(dump)), dump);
	snprintf(pid_s, sizeof(pid_s), "%d", (int)root);
	snprintf(dur_s, sizeof(dur_s), "%llums", (unsigned long long)(m->trace_ns / 1000000));
	c = fork();
	if (c == 0) {
		execl("/proc/self/exe", "gpuio", "trace", "-q", "-p", pid_s, "-d", dur_s, "--no-export",
		      "--capture", cap, (char *)NULL);
		_exit(127);
	}
	if (c < 0) {
		*o += (size_t)snprintf(msg + *o, len - *o, ",\"trace_error\":\"fork failed\"");
		return;
	}
	m->traces[slot].pid = c;
	snprintf(m->traces[slot].path, sizeof(m->traces[slot].path), "%s", cap);
	pr_info("alert: tracing the job's process %d for %s (Python stacks on): %s", (int)root, dur_s, cap);
	json_escape(esc, sizeof(esc), cap, strlen(cap));
	*o += (size_t)snprintf(msg + *o, len - *o, ",\"trace\":\"%s\",\"trace_pid\":%d,\"trace_s\":%.3f",
			       esc, (int)root, m->trace_ns / NS_PER_SEC_F);
}

void monitor_alerts__metrics(struct mon_buf *b, void *ctx)
{
	const struct monitor_alerts *m = ctx;

	mon_buf__printf(b, "# HELP gpuio_alert_left_out_total Alerts and jobs of Alertmanager's notifications "
			"not read or not dumped: past %d alerts a notification, past %d jobs, or past the answer's room.\n"
			"# TYPE gpuio_alert_left_out_total counter\n"
			"gpuio_alert_left_out_total{what=\"alert\"} %llu\n"
			"gpuio_alert_left_out_total{what=\"job\"} %llu\n", ALERT_PAYLOAD_MAX, GROUPS_MAX,
			(unsigned long long)m->alerts_unread, (unsigned long long)m->jobs_unread);
}

void monitor_alerts__reap(struct monitor_alerts *m)
{
	for (int i = 0; i < MONITOR_ALERT_TRACES; i++) {
		int st;

		if (!m->traces[i].pid || waitpid(m->traces[i].pid, &st, WNOHANG) != m->traces[i].pid)
			continue;
		if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
			pr_info("alert: the job's trace is written: %s", m->traces[i].path);
		else
			pr_warn("alert: the job's trace %s failed (status %d; see the lines above)",
				m->traces[i].path, WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
		m->traces[i].pid = 0;
	}
}

/* Dump one job's window; its answer (a JSON object) appended at msg+*o. true: dumped. */
static bool dump_job(struct monitor_alerts *m, const struct job_group *jg, char *msg, size_t len,
		     size_t *o)
{
	const struct alert_item *a = jg->first;
	__u64 now_real = clock_real_ns(), now = clock_mono_ns();
	__u64 until = a->starts_real_ns + now - now_real, from, oldest;
	char name[64], job[80], reason[160], about[128], at[40], path[600], esc[700];
	struct monitor_dump_req q = { .keep_capture = true };
	__u64 key = done_key(a);
	unsigned i;

	monitor_alert__tag(name, sizeof(name), a->name[0] ? a->name : "alert");
	monitor_alert__tag(job, sizeof(job), a->job);
	iso(at, sizeof(at), a->starts_real_ns);
	*o += (size_t)snprintf(msg + *o, len - *o, "%s{\"alert\":\"%s\",\"%s\":\"%s\",\"starts_at\":\"%s\",",
			       *o && msg[*o - 1] == '}' ? "," : "", name,
			       alert_job_key__label(a->key), job, at);
	for (i = 0; i < m->ndone && m->done[i].key != key; i++)
		;
	if (i < m->ndone) {
		json_escape(esc, sizeof(esc), m->done[i].path, strlen(m->done[i].path));
		*o += (size_t)snprintf(msg + *o, len - *o, "\"already\":true,\"path\":\"%s\"}", esc);
		return true;
	}
	if (until > now)                 /* the alert's clock ahead of ours: what we have */
		until = now;
	from = until > m->span_ns ? until - m->span_ns : 0;
	oldest = monitor_recorder__oldest(m->rec);
	if (!oldest || oldest > until) {
		*o += (size_t)snprintf(msg + *o, len - *o, "\"error\":\"the recorder's window no longer "
				       "holds the alert's instant\"}");
		return false;
	}
	snprintf(reason, sizeof(reason), "alert-%s-%s-%s", name, alert_job_key__label(a->key), job);
	snprintf(about, sizeof(about), "alert %.40s %s=%.24s at %s", a->name, alert_job_key__label(a->key),
		 a->job, at);
	q.reason = reason;
	q.about = about;
	q.from_ns = from;
	q.until_ns = until;
	if (monitor_recorder__dump(m->rec, &q, path, sizeof(path))) {
		*o += (size_t)snprintf(msg + *o, len - *o, "\"error\":\"writing the dump failed\"}");
		return false;
	}
	pr_info("alert %s for %s=%s at %s: dump written: %s", a->name, alert_job_key__label(a->key),
		a->job, at, path);
	i = m->ndone < MONITOR_ALERT_DONE ? m->ndone++ : key % MONITOR_ALERT_DONE;
	m->done[i].key = key;
	snprintf(m->done[i].path, sizeof(m->done[i].path), "%s", path);
	json_escape(esc, sizeof(esc), path, strlen(path));
	*o += (size_t)snprintf(msg + *o, len - *o, "\"path\":\"%s\",\"window_s\":%.3f,\"partial\":%s",
			       esc, (until - from) / NS_PER_SEC_F, oldest > from ? "true" : "false");
	follow_up(m, jg->cgroup, path, msg, len, o);
	*o += (size_t)snprintf(msg + *o, len - *o, "}");
	return true;
}

unsigned monitor_alerts__decide(void *ctx, const struct alert_payload *p, char *msg, size_t len)
{
	struct monitor_alerts *m = ctx;
	struct job_group g[GROUPS_MAX];
	int over, n = group_jobs(p, g, &over), here = 0, dumped = 0, firing = 0, unanswered = 0;
	char items[3072], left[160] = "";
	size_t o;

	/* nothing left out silently: alerts past what one notification is
	 * read for, jobs past GROUPS_MAX, dumps past the answer's room */
	if (p->dropped || over) {
		m->alerts_unread += (__u64)p->dropped;
		m->jobs_unread += (__u64)over;
		pr_warn("alert: a notification of %d alerts: %d past the first %d and %d job(s) past the "
			"first %d not read (gpuio_alert_left_out_total)", p->n + p->dropped, p->dropped,
			ALERT_PAYLOAD_MAX, over, GROUPS_MAX);
	}
	for (int i = 0; i < p->n; i++)
		firing += p->a[i].firing;
	if (!firing) {
		snprintf(msg, len, "{\"status\":\"ok\",\"node\":\"%s\",\"dumps\":[],\"note\":\"nothing firing\"}\n",
			 m->node);
		return 200;
	}
	if (!n) {
		snprintf(msg, len, "{\"status\":\"error\",\"error\":\"no firing alert names a job "
			 "(slurm_job, k8s_pod_uid, container_id or cgroup label)\"}\n");
		return 422;
	}
	for (int k = 0; k < n; k++) {
		struct find f = { .a = g[k].first };

		monitor_agg__each_cgroup(m->agg, match_cgroup, &f);
		g[k].here = f.found;
		snprintf(g[k].cgroup, sizeof(g[k].cgroup), "%s", f.path);
		here += f.found;
	}
	if (!here) {
		snprintf(msg, len, "{\"status\":\"error\",\"error\":\"no job of the alert runs on this "
			 "node\",\"node\":\"%s\"}\n", m->node);
		return 422;
	}
	o = 0;
	items[0] = 0;
	for (int k = 0; k < n; k++) {
		if (!g[k].here)
			continue;
		if (o + 1500 >= sizeof(items)) {
			unanswered++;
			continue;
		}
		dumped += dump_job(m, &g[k], items, sizeof(items), &o);
	}
	if (unanswered) {
		m->jobs_unread += (__u64)unanswered;
		pr_warn("alert: %d job(s) of a notification not dumped: the answer is full "
			"(gpuio_alert_left_out_total)", unanswered);
	}
	if (p->dropped || over || unanswered)
		snprintf(left, sizeof(left), ",\"left_out\":{\"alerts\":%d,\"jobs\":%d}",
			 p->dropped, over + unanswered);
	snprintf(msg, len, "{\"status\":\"%s\",\"node\":\"%s\",\"dumps\":[%s]%s}\n",
		 dumped ? "ok" : "error", m->node, items, left);
	return dumped ? 200 : 410;
}
