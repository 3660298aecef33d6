/* SPDX-License-Identifier: MIT */
/*
 * alert_payload.h — Alertmanager's webhook body (version "4"), read into
 * what a node needs to decide on a dump: per alert its name, status, the
 * instant it started firing, and the job it names (the monitor's own job
 * labels: slurm_job, k8s_pod_uid, container_id, else the cgroup path).
 */
#ifndef GPUIO_MONITOR_ALERT_PAYLOAD_H
#define GPUIO_MONITOR_ALERT_PAYLOAD_H
#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#define ALERT_PAYLOAD_MAX 64     /* alerts read from one notification */

/* Which label names an alert's job (the most specific present). */
enum alert_job_key { ALERT_JOB_NONE, ALERT_JOB_SLURM, ALERT_JOB_POD, ALERT_JOB_CONTAINER,
		     ALERT_JOB_CGROUP };

struct alert_item {
	char name[96];           /* labels.alertname */
	bool firing;
	__u64 starts_real_ns;    /* startsAt, CLOCK_REALTIME ns */
	enum alert_job_key key;
	char job[256];           /* the key's value */
};

struct alert_payload {
	int n;                   /* alerts read (at most ALERT_PAYLOAD_MAX) */
	int dropped;             /* alerts past ALERT_PAYLOAD_MAX */
	struct alert_item a[ALERT_PAYLOAD_MAX];
};

/* Parse a webhook body. 0, or -EINVAL with a one-line reason in err. */
int alert_payload__parse(const char *body, size_t len, struct alert_payload *p, char *err,
			 size_t errlen);
/* "2026-11-28T13:05:10.123456789Z" or with "+01:00" -> ns since the epoch. 0 or -EINVAL. */
int rfc3339_parse(const char *s, __u64 *real_ns);
/* The label a key stands for ("slurm_job", …). */
const char *alert_job_key__label(enum alert_job_key k);

#endif
