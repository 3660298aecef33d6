/* SPDX-License-Identifier: MIT */
/*
 * proc_names.h — the one rule that names processes and threads, for the
 * exporters (model/load.c) and the report (report/report_load.c) alike, so
 * a timeline and a report never name the same process differently.
 *
 * A process is named by its best PROC record: EXEC > ATTACH > FORK, the
 * later one on a tie, and only a record that carries a comm; its argv comes
 * from that same record. A thread is named by its latest PROC record with a
 * comm, an EXIT record only when nothing else named it.
 */
#ifndef GPUIO_MODEL_PROC_NAMES_H
#define GPUIO_MODEL_PROC_NAMES_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/types.h>
#include "bpf/gpuio_abi.h"

enum { RANK_NONE, RANK_FORK, RANK_ATTACH, RANK_EXEC };

static inline bool proc_names__has_comm(const char comm[16])
{
	return comm[0] != 0;
}

/* Does e name its process, which *rank named so far? If so *rank is e's. */
static inline bool proc_names__names_process(uint8_t *rank, const struct gpuio_proc_event *e)
{
	uint8_t r = e->kind == GPUIO_PROC_EXEC ? RANK_EXEC :
		    e->kind == GPUIO_PROC_ATTACH ? RANK_ATTACH :
		    e->kind == GPUIO_PROC_FORK ? RANK_FORK : RANK_NONE;

	if (!r || r < *rank || !proc_names__has_comm(e->comm))
		return false;
	*rank = r;
	return true;
}

/* Does e name its thread (named before: had_name)? */
static inline bool proc_names__names_thread(bool had_name, const struct gpuio_proc_event *e)
{
	return proc_names__has_comm(e->comm) && (e->kind != GPUIO_PROC_EXIT || !had_name);
}

#endif /* GPUIO_MODEL_PROC_NAMES_H */
