/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * mon_cgroup.bpf.h — which cgroup the monitor's series are keyed by.
 *
 * By default the task's cgroup v2 id (bpf_get_current_cgroup_id). On hosts
 * whose jobs live in cgroup v1 hierarchies (Slurm's cgroup/v1 plugin,
 * kubelet on v1), `gpuio monitor --cgroups CONTROLLER` keys them by the
 * task's cgroup in that controller's hierarchy instead: the id of its
 * kernfs node, which is the inode number of its directory under the
 * controller's mount, exactly as for v2, so names resolve the same way.
 */
#ifndef GPUIO_MON_CGROUP_BPF_H
#define GPUIO_MON_CGROUP_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

/* enum cgroup_subsys_id of the v1 controller; -1: cgroup v2. Set before load. */
const volatile int mon_cg_ssid = -1;

static __always_inline __u64 mon_cgroup_id(void)
{
	struct cgroup_subsys_state *css = NULL;
	struct task_struct *t;
	struct css_set *cs;

	if (mon_cg_ssid < 0)            /* known at load: the v1 path is dead code */
		return bpf_get_current_cgroup_id();
	t = (struct task_struct *)bpf_get_current_task();
	cs = BPF_CORE_READ(t, cgroups);
	if (!cs)
		return 0;
	bpf_core_read(&css, sizeof(css), &cs->subsys[mon_cg_ssid & 15]);
	return css ? BPF_CORE_READ(css, cgroup, kn, id) : 0;
}

#endif
