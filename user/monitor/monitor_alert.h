/* SPDX-License-Identifier: MIT */
/*
 * monitor_alert.h — what a node does with an Alertmanager notification
 * (alert_webhook.h hands it over on the daemon's loop): for each job the
 * firing alerts name that runs here (a cgroup of this node's series carries
 * its label), dump the recorder's window ending at the job's alert instant
 * (the earliest startsAt among its alerts in the notification: every node
 * given the same notification picks the same instant), --alert-span long,
 * named by alert and job, the capture kept for `gpuio report --hosts`.
 * The same (alert, job, instant) is dumped once.
 *
 * The dump has no Python stacks (the recorder traces the whole node); so,
 * with --alert-trace DUR, the job's root process there is then traced for
 * DUR (`gpuio trace -p PID`, stacks on) beside the dump: NAME.trace.gpuio,
 * whose report says where in its code the loop waits.
 */
#ifndef GPUIO_MONITOR_ALERT_H
#define GPUIO_MONITOR_ALERT_H
#include <stddef.h>
#include <linux/types.h>

struct alert_payload;
struct mon_buf;
struct monitor_agg;
struct monitor_recorder;

#define MONITOR_ALERT_DONE 32    /* (alert, job, instant)s remembered */
#define MONITOR_ALERT_TRACES 4   /* follow-up traces running at once */

struct monitor_alerts {
	struct monitor_recorder *rec;
	struct monitor_agg *agg;
	__u64 span_ns;           /* the dump ends at the instant and covers this much before it */
	const char *node;        /* this node's name, in the answer */
	const char *cgroot;      /* the cgroup hierarchy's mount ("": none) */
	__u64 trace_ns;          /* --alert-trace: follow-up trace of the job (0: none) */
	struct { int pid; char path[560]; } traces[MONITOR_ALERT_TRACES];
	struct { __u64 key; char path[512]; } done[MONITOR_ALERT_DONE];
	unsigned ndone;
	__u64 alerts_unread, jobs_unread;   /* left out (gpuio_alert_left_out_total) */
};

/* alert_webhook_fn: decide, dump, and write the answer (JSON) into msg. */
unsigned monitor_alerts__decide(void *ctx, const struct alert_payload *p, char *msg, size_t len);
/* monitor_agg_extra_fn: gpuio_alert_left_out_total. */
void monitor_alerts__metrics(struct mon_buf *b, void *ctx);
/* Reap the follow-up traces that ended (the daemon's loop), saying how. */
void monitor_alerts__reap(struct monitor_alerts *m);
/* A file-name-safe tag: [A-Za-z0-9._-], the rest '_', at most len - 1 bytes. */
void monitor_alert__tag(char *out, size_t len, const char *s);

#endif
