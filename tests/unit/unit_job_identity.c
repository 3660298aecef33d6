// SPDX-License-Identifier: MIT
/*
 * unit_job_identity — job identity from cgroup paths (lib/job_identity.c):
 * the path shapes Slurm (cgroup v1 and v2 plugins), kubelet (systemd and
 * cgroupfs drivers, every QoS class, containerd / CRI-O / Docker), Docker
 * alone and systemd produce, as they appear in /proc/PID/cgroup; paths
 * that look alike but are not (a directory named job_x, a pod-like name
 * outside kubepods) give nothing; /proc/PID/cgroup of a hybrid host picks
 * the line that names the job.
 */
#include <string.h>
#include "lib/job_identity.h"
#include "unit.h"

#define UID  "0f3c2b1a-9e8d-4c7b-a6f5-e4d3c2b1a098"
#define UIDU "0f3c2b1a_9e8d_4c7b_a6f5_e4d3c2b1a098"
#define CID  "4b825dc642cb6eb9a060e54bf8d69288fbee4904ac3c6f1a2b3c4d5e6f708192"

static void want(const char *path, const char *job, const char *step, const char *pod,
		 const char *qos, const char *cid, const char *unit)
{
	struct job_identity id;
	bool any = job_identity__parse(path, &id);
	const char *w[JOB_IDENTITY_NFIELDS] = { job, step, pod, qos, cid, unit };
	bool want_any = false;

	for (int i = 0; i < JOB_IDENTITY_NFIELDS; i++) {
		want_any |= w[i][0] != 0;
		CHECK(!strcmp(job_identity__field(&id, i), w[i]), "%s: %s = '%s', want '%s'", path,
		      job_identity_keys[i], job_identity__field(&id, i), w[i]);
	}
	CHECK(any == want_any, "%s: found %d", path, any);
}

int main(void)
{
	char buf[512];
	struct job_identity id;

	/* Slurm, cgroup/v1 (a controller hierarchy) and cgroup/v2 */
	want("/slurm/uid_1000/job_4242/step_0", "4242", "0", "", "", "", "");
	want("/slurm/uid_1000/job_4242/step_batch/task_0", "4242", "batch", "", "", "", "");
	want("/slurm/uid_0/job_17/step_extern", "17", "extern", "", "", "", "");
	want("/system.slice/slurmstepd.scope/job_4242/step_0/user/task_0", "4242", "0", "", "", "",
	     "slurmstepd.scope");
	want("/system.slice/slurmstepd.scope/job_99", "99", "", "", "", "", "slurmstepd.scope");
	/* Kubernetes, systemd driver (cgroup v2 and v1), every QoS class and runtime */
	want("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UIDU
	     ".slice/cri-containerd-" CID ".scope", "", "", UID, "burstable", CID, "");
	want("/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UIDU
	     ".slice/crio-" CID ".scope", "", "", UID, "besteffort", CID, "");
	want("/kubepods.slice/kubepods-pod" UIDU ".slice/docker-" CID ".scope", "", "", UID,
	     "guaranteed", CID, "");
	want("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UIDU ".slice", "", "",
	     UID, "burstable", "", "");
	/* Kubernetes, cgroupfs driver */
	want("/kubepods/burstable/pod" UID "/" CID, "", "", UID, "burstable", CID, "");
	want("/kubepods/besteffort/pod" UID "/crio-" CID, "", "", UID, "besteffort", CID, "");
	want("/kubepods/pod" UID "/" CID, "", "", UID, "guaranteed", CID, "");
	/* containers outside Kubernetes */
	want("/docker/" CID, "", "", "", "", CID, "");
	want("/system.slice/docker-" CID ".scope", "", "", "", "", CID, "");
	/* systemd */
	want("/system.slice/nginx.service", "", "", "", "", "", "nginx.service");
	want("/user.slice/user-1000.slice/session-3.scope", "", "", "", "", "", "session-3.scope");
	want("/user.slice/user-1000.slice/user@1000.service/app.slice/train.service", "", "", "", "",
	     "", "train.service");
	want("/user.slice/user-1000.slice", "", "", "", "", "", "user-1000.slice");
	/* look-alikes that are not */
	want("/", "", "", "", "", "", "");
	want("", "", "", "", "", "", "");
	want("/job_x/step_0", "", "", "", "", "", "");
	want("/step_0", "", "", "", "", "", "");
	want("/mypod" UID, "", "", "", "", "", "");
	want("/process_api/2f8d5fb49bb375844dcd1bf29ddcae54", "", "", "", "", "", "");
	want("/user.slice/user-abc.slice", "", "", "", "", "", "");

	/* /proc/PID/cgroup: the v1 line naming the job wins over an empty v2 path */
	CHECK(job_identity__pick("12:pids:/\n4:memory:/slurm/uid_0/job_42/step_0\n0::/\n", buf,
				 sizeof(buf)) && !strcmp(buf, "/slurm/uid_0/job_42/step_0"), "pick v1: '%s'", buf);
	CHECK(job_identity__pick("0::/kubepods.slice/kubepods-pod" UIDU ".slice/cri-containerd-" CID
				 ".scope\n", buf, sizeof(buf)) && strstr(buf, CID), "pick v2: '%s'", buf);
	CHECK(job_identity__pick("9:name=systemd:/user.slice\n0::/system.slice/x.service\n", buf,
				 sizeof(buf)) && !strcmp(buf, "/system.slice/x.service"),
	      "pick v2 when none names a job: '%s'", buf);
	CHECK(!job_identity__pick("", buf, sizeof(buf)) && !buf[0], "pick of nothing: '%s'", buf);
	CHECK(job_identity__pick("garbage\n3:cpu:/a\n", buf, sizeof(buf)) && !strcmp(buf, "/a"),
	      "pick skips malformed lines: '%s'", buf);

	job_identity__parse("/system.slice/slurmstepd.scope/job_7/step_2", &id);
	job_identity__format(&id, buf, sizeof(buf));
	CHECK(!strcmp(buf, "slurm_job=7 slurm_step=2 unit=slurmstepd.scope"), "format: '%s'", buf);
	job_identity__format(&id, buf, 8);
	CHECK(strlen(buf) == 7, "format truncates: '%s'", buf);
	return unit_done("unit_job_identity");
}
