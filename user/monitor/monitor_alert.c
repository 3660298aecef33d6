// SPDX-License-Identifier: MIT
/* monitor_alert.c — an Alertmanager notification to dumps. See monitor_alert.h. */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "lib/clock.h"
#include "lib/job_identity.h"
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
};

void monitor_alert__tag(char *out, size_t len, const char *s)
{
	size_t o = 0;

	for (; *s && o + 1 < len; s++)
		out[o++] = isalnum((unsigned char)*s) || *s == '.' || *s == '-' || *s == '_' ? *s : '_';
	out[o] = 0;
}

struct find { const struct alert_item *a; bool found; };

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
	if (have && *have && !strcmp(have, f->a->job))
		f->found = true;
}

/* The firing alerts with a job, grouped by job; returns the groups. */
static int group_jobs(const struct alert_payload *p, struct job_group *g)
{
	int n = 0;

	for (int i = 0; i < p->n; i++) {
		const struct alert_item *a = &p->a[i];
		int k;

		if (!a->firing || a->key == ALERT_JOB_NONE)
			continue;
		for (k = 0; k < n; k++)
			if (g[k].first->key == a->key && !strcmp(g[k].first->job, a->job))
				break;
		if (k == n) {
			if (n == GROUPS_MAX)
				continue;
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

/* Dump one job's window; its answer (a JSON object) appended at msg+*o. true: dumped. */
static bool dump_job(struct monitor_alerts *m, const struct alert_item *a, char *msg, size_t len,
		     size_t *o)
{
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
		alert_json_escape(esc, sizeof(esc), m->done[i].path);
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
	alert_json_escape(esc, sizeof(esc), path);
	*o += (size_t)snprintf(msg + *o, len - *o, "\"path\":\"%s\",\"window_s\":%.3f,\"partial\":%s}",
			       esc, (until - from) / NS_PER_SEC_F, oldest > from ? "true" : "false");
	return true;
}

unsigned monitor_alerts__decide(void *ctx, const struct alert_payload *p, char *msg, size_t len)
{
	struct monitor_alerts *m = ctx;
	struct job_group g[GROUPS_MAX];
	int n = group_jobs(p, g), here = 0, dumped = 0, firing = 0;
	char items[3072];
	size_t o;

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
		here += f.found;
	}
	if (!here) {
		snprintf(msg, len, "{\"status\":\"error\",\"error\":\"no job of the alert runs on this "
			 "node\",\"node\":\"%s\"}\n", m->node);
		return 422;
	}
	o = 0;
	items[0] = 0;
	for (int k = 0; k < n && o + 1500 < sizeof(items); k++)
		if (g[k].here)
			dumped += dump_job(m, g[k].first, items, sizeof(items), &o);
	snprintf(msg, len, "{\"status\":\"%s\",\"node\":\"%s\",\"dumps\":[%s]}\n",
		 dumped ? "ok" : "error", m->node, items);
	return dumped ? 200 : 410;
}
