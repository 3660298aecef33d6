/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * stat.bpf.h — the one counter bump every program uses. The includer names
 * its per-CPU __u64 array as STAT_MAP (trace: stats, monitor: mon_stats)
 * before including; per-CPU slots need no atomics.
 */
#ifndef GPUIO_STAT_BPF_H
#define GPUIO_STAT_BPF_H

static __always_inline void stat_inc_in(void *map, __u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(map, &idx);

	if (v)
		(*v)++;
}

#define stat_inc(idx) stat_inc_in(&STAT_MAP, (idx))

#endif /* GPUIO_STAT_BPF_H */
