// SPDX-License-Identifier: MIT
/* alert_payload.c — Alertmanager's webhook JSON. See alert_payload.h. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "lib/json_read.h"
#include "monitor/alert_payload.h"

static const char *const key_label[] = {
	[ALERT_JOB_NONE] = "", [ALERT_JOB_SLURM] = "slurm_job", [ALERT_JOB_POD] = "k8s_pod_uid",
	[ALERT_JOB_CONTAINER] = "container_id", [ALERT_JOB_CGROUP] = "cgroup",
};

const char *alert_job_key__label(enum alert_job_key k)
{
	return key_label[k];
}

/* n digits at *s (advanced); -1 when they are not there. */
static int digits(const char **s, int n)
{
	int v = 0;

	for (int i = 0; i < n; i++, (*s)++) {
		if (!isdigit((unsigned char)**s))
			return -1;
		v = v * 10 + (**s - '0');
	}
	return v;
}

int rfc3339_parse(const char *s, __u64 *real_ns)
{
	struct tm tm = { 0 };
	long long off = 0, frac = 0, scale = 1000000000;
	time_t t;

	tm.tm_year = digits(&s, 4) - 1900;
	if (*s++ != '-' || (tm.tm_mon = digits(&s, 2) - 1) < 0 || *s++ != '-' ||
	    (tm.tm_mday = digits(&s, 2)) < 1 || (*s != 'T' && *s != 't' && *s != ' '))
		return -EINVAL;
	s++;
	if ((tm.tm_hour = digits(&s, 2)) < 0 || *s++ != ':' || (tm.tm_min = digits(&s, 2)) < 0 ||
	    *s++ != ':' || (tm.tm_sec = digits(&s, 2)) < 0 || tm.tm_year < 70 || tm.tm_mon > 11 ||
	    tm.tm_mday > 31 || tm.tm_hour > 23 || tm.tm_min > 59 || tm.tm_sec > 60)
		return -EINVAL;
	if (*s == '.') {
		for (s++; isdigit((unsigned char)*s); s++)
			if (scale > 1) {
				scale /= 10;
				frac += (*s - '0') * scale;
			}
	}
	if (*s == 'Z' || *s == 'z') {
		s++;
	} else if (*s == '+' || *s == '-') {
		int sign = *s++ == '-' ? -1 : 1, h = digits(&s, 2), m;

		if (h < 0 || *s++ != ':' || (m = digits(&s, 2)) < 0)
			return -EINVAL;
		off = sign * (h * 3600LL + m * 60LL);
	} else {
		return -EINVAL;
	}
	if (*s)
		return -EINVAL;
	t = timegm(&tm);
	if (t == (time_t)-1 || (long long)t - off < 0)
		return -EINVAL;
	*real_ns = (__u64)((long long)t - off) * 1000000000ull + (__u64)frac;
	return 0;
}

static void copy_str(char *dst, size_t len, const struct json_node *n)
{
	snprintf(dst, len, "%s", n && n->type == JSON_STRING ? n->s : "");
}

/* The job an alert's labels name: the most specific of the monitor's labels. */
static void alert_job(const struct json_doc *d, const struct json_node *labels, struct alert_item *a)
{
	static const enum alert_job_key order[] = { ALERT_JOB_SLURM, ALERT_JOB_POD,
						    ALERT_JOB_CONTAINER, ALERT_JOB_CGROUP };

	a->key = ALERT_JOB_NONE;
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		const struct json_node *v = json_get(d, labels, key_label[order[i]]);

		if (v && v->type == JSON_STRING && v->s[0] && strlen(v->s) < sizeof(a->job)) {
			a->key = order[i];
			copy_str(a->job, sizeof(a->job), v);
			return;
		}
	}
}

/* One element of "alerts". 0, or -EINVAL with the reason. */
static int read_alert(const struct json_doc *d, const struct json_node *n, struct alert_item *a,
		      int i, char *err, size_t errlen)
{
	const struct json_node *labels = json_get(d, n, "labels"), *v;

	memset(a, 0, sizeof(*a));
	if (n->type != JSON_OBJECT || !labels || labels->type != JSON_OBJECT) {
		snprintf(err, errlen, "alerts[%d]: expected an object with \"labels\"", i);
		return -EINVAL;
	}
	copy_str(a->name, sizeof(a->name), json_get(d, labels, "alertname"));
	v = json_get(d, n, "status");
	if (!v || v->type != JSON_STRING || (strcmp(v->s, "firing") && strcmp(v->s, "resolved"))) {
		snprintf(err, errlen, "alerts[%d]: \"status\" must be \"firing\" or \"resolved\"", i);
		return -EINVAL;
	}
	a->firing = !strcmp(v->s, "firing");
	v = json_get(d, n, "startsAt");
	if (!v || v->type != JSON_STRING || rfc3339_parse(v->s, &a->starts_real_ns)) {
		snprintf(err, errlen, "alerts[%d]: \"startsAt\" is not an RFC 3339 time", i);
		return -EINVAL;
	}
	alert_job(d, labels, a);
	return 0;
}

int alert_payload__parse(const char *body, size_t len, struct alert_payload *p, char *err,
			 size_t errlen)
{
	const struct json_node *root, *alerts, *ver, *n;
	struct json_doc *d = NULL;
	char why[160];
	int rc = -EINVAL, i = 0;

	memset(p, 0, sizeof(*p));
	if (json_doc__parse(body, len, &d, why, sizeof(why))) {
		snprintf(err, errlen, "not JSON: %s", why);
		return -EINVAL;
	}
	root = json_doc__root(d);
	ver = json_get(d, root, "version");
	alerts = json_get(d, root, "alerts");
	if (root->type != JSON_OBJECT || !alerts || alerts->type != JSON_ARRAY) {
		snprintf(err, errlen, "not an Alertmanager notification: no \"alerts\" array");
		goto out;
	}
	if (!ver || ver->type != JSON_STRING || strcmp(ver->s, "4")) {
		snprintf(err, errlen, "unsupported notification \"version\" (this monitor reads \"4\")");
		goto out;
	}
	for (n = json_first(d, alerts); n; n = json_next(d, n), i++) {
		if (p->n == ALERT_PAYLOAD_MAX) {
			p->dropped++;
			continue;
		}
		if (read_alert(d, n, &p->a[p->n], i, err, errlen))
			goto out;
		p->n++;
	}
	rc = 0;
out:
	json_doc__free(d);
	return rc;
}
