/* SPDX-License-Identifier: MIT */
/*
 * job_identity.h — who a cgroup belongs to, read from its path alone (no
 * API calls): a Slurm job and step, a Kubernetes pod (uid, QoS class) and
 * container, a systemd unit or user slice. The path shapes recognised, for
 * the cgroup v2 hierarchy and v1 controller hierarchies alike:
 *
 *   Slurm    …/job_<id>/step_<n|batch|extern|interactive>/…
 *            (v1: /slurm/uid_<uid>/job_42/step_0; v2:
 *            /system.slice/slurmstepd.scope/job_42/step_0/user/task_0)
 *   k8s      systemd driver: /kubepods.slice/kubepods-<qos>.slice/
 *              kubepods-<qos>-pod<uid with _>.slice/<runtime>-<id>.scope
 *            cgroupfs driver: /kubepods/<qos>/pod<uid>/<id>
 *            (no <qos> level: the pod is Guaranteed)
 *   containers outside k8s: /docker/<id>, /system.slice/docker-<id>.scope
 *   systemd  the deepest *.service or *.scope (not a container's), else a
 *            user-<uid>.slice
 */
#ifndef GPUIO_JOB_IDENTITY_H
#define GPUIO_JOB_IDENTITY_H
#include <stdbool.h>
#include <stddef.h>

struct job_identity {
	char slurm_job[24];
	char slurm_step[24];
	char k8s_pod_uid[40];
	char k8s_qos[16];          /* guaranteed, burstable, besteffort */
	char container_id[72];
	char unit[128];
};

/* The labels, in this order, as Prometheus label names and trace args. */
#define JOB_IDENTITY_NFIELDS 6
extern const char *const job_identity_keys[JOB_IDENTITY_NFIELDS];
/* Field i of id ("" when unknown). */
const char *job_identity__field(const struct job_identity *id, int i);

/* Parse a cgroup path (relative to its hierarchy's root). true: something was found. */
bool job_identity__parse(const char *path, struct job_identity *out);

/*
 * The path of /proc/PID/cgroup (its text) that tells the most: the first
 * line whose path carries a job identity, else the cgroup v2 ("0::") path,
 * else the first line's. Written to out (NUL-terminated); false if none.
 */
bool job_identity__pick(const char *proc_cgroup, char *out, size_t len);

/* "slurm_job=42 slurm_step=0 …" (the fields found, space separated). */
size_t job_identity__format(const struct job_identity *id, char *buf, size_t len);

#endif
