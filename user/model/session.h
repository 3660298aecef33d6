/* SPDX-License-Identifier: MIT */
/*
 * session.h — a capture read once: every record decoded in one place, the
 * tables every reader of a capture needs kept in one place, and each
 * consumer's handlers called (the shape of perf's perf_session + struct
 * perf_tool).
 *
 * The session owns the capture reader. For each record it first updates
 * its own tables — processes (their names by one rule, parent, job cgroup,
 * exit), threads' names, file paths, disk names, the scheduler events, the
 * GPU collectors' last state, the drop counters, the record counts — then
 * calls, in order, the handler every registered tool has for the record's
 * kind (a NULL handler: not interested). The exporters' timeline model
 * (timeline/timeline.h), the report (report/report_model.h) and the live
 * stream (export/stream.c, following the capture as it is written) are
 * tools. Tools get records through their handlers only: a new record kind
 * is decoded here and handled by the tools that care (docs/architecture.md,
 * "Adding a record kind").
 *
 * Later passes — a tool's pass 2 over the VFS calls, a GPU record re-read
 * by the file offset pass 1 saw it at — come back through the session too,
 * to the same kind of handlers.
 */
#ifndef GPUIO_MODEL_SESSION_H
#define GPUIO_MODEL_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "bpf/gpuio_abi.h"
#include "capture/capture.h"

struct model_session;
struct sched_tab;

/* A kernel, copy or memset, decoded the same way for every tool. */
enum model_gpu_kind { MODEL_GPU_KERNEL, MODEL_GPU_MEMCPY, MODEL_GPU_MEMSET };
struct model_gpu_act {
	const struct gpuio_hdr *h;      /* the record itself (type-specific fields) */
	uint8_t kind;                   /* enum model_gpu_kind */
	uint64_t ts, end;               /* end as recorded (may precede ts: nonsense) */
	uint64_t stream, context, bytes;/* bytes: copies and memsets */
	uint32_t device, correlation;
	const char *name;               /* kernels: the name bytes the record holds, */
	size_t name_len;                /* cut at a NUL (0: none) */
};

/* A STACK_AT record, its stack looked up (model/stacks.h). */
struct model_stack_at {
	const struct gpuio_hdr *h;      /* pid, tid, ts */
	uint8_t what;                   /* enum gpuio_stack_what */
	uint8_t why;                    /* no stack: GPUIO_STACK_NONE_* */
	uint32_t seq;                   /* GPUIO_SA_CALL: the call's seq */
	uint32_t stack;                 /* model_session__stack's reference, 0: none */
};

/*
 * A consumer of records. Each handler returns 0 or -errno (which stops the
 * pass and is returned by it); ctx is the tool's own.
 */
struct model_tool {
	void *ctx;
	int (*vfs)(void *ctx, const struct gpuio_vfs_event *e);
	int (*block)(void *ctx, const struct gpuio_block_event *e);
	int (*path)(void *ctx, const struct gpuio_path_event *e);
	int (*proc)(void *ctx, const struct gpuio_proc_event *e);
	int (*stats)(void *ctx, const struct gpuio_stats_event *e);     /* expanded to this build's */
	int (*devname)(void *ctx, const struct gpuio_devname_event *e);
	int (*sched)(void *ctx, const struct gpuio_sched_event *e);
	int (*wait)(void *ctx, const struct gpuio_wait_event *e);     /* what a sleep is in */
	int (*gpu_info)(void *ctx, const struct gpuio_gpu_info *e);
	int (*gpu_act)(void *ctx, const struct model_gpu_act *a);       /* kernel, memcpy, memset */
	int (*cuda_api)(void *ctx, const struct gpuio_cuda_api *e);
	int (*gpu_sync)(void *ctx, const struct gpuio_gpu_sync *e);
	int (*nvtx)(void *ctx, const struct gpuio_nvtx_range *e);
	int (*gpu_overhead)(void *ctx, const struct gpuio_gpu_overhead *e);
	int (*gpu_sym)(void *ctx, const struct gpuio_gpu_sym *e);
	int (*sock_peer)(void *ctx, const struct gpuio_sock_peer *e);
	int (*fault_count)(void *ctx, const struct gpuio_fault_count *e);   /* cumulative */
	int (*lost_calls)(void *ctx, const struct gpuio_lost_calls *e);     /* at the end */
	int (*thread_time)(void *ctx, const struct gpuio_thread_time *e);   /* at exit or the end */
	int (*stack_at)(void *ctx, const struct model_stack_at *a);
};

/* ---- the session ---- */

/*
 * Open a capture. On failure returns -errno and a one-line reason in err
 * (the capture reader's: bad magic, unreadable, ...).
 */
int model_session__open(const char *path, struct model_session **out, char *err, size_t errlen);
/*
 * Open a capture that is still being written (gpuio trace --stream follows
 * its own) to read it with model_session__follow() as it grows.
 */
int model_session__open_follow(const char *path, struct model_session **out, char *err,
			       size_t errlen);
void model_session__free(struct model_session *s);

/*
 * Pass 1: every record, the tables, then each tool in order. 0, -ENOMEM,
 * a tool's error, or -EBADMSG when a record is corrupt (the reason:
 * model_session__error; the records before it were handled).
 */
int model_session__run(struct model_session *s, const struct model_tool *const *tools,
		       size_t ntools);
/*
 * Following (model_session__open_follow): the whole records appended since
 * the last call, as pass 1 handles them, reading at most budget bytes of the
 * file; a record not yet whole waits for a later call. *more: the budget ran
 * out first. 0, -ENOMEM, a tool's error, or -EBADMSG (model_session__error).
 * The scheduler table is not sorted.
 */
int model_session__follow(struct model_session *s, const struct model_tool *const *tools,
			  size_t ntools, uint64_t budget, bool *more);
/*
 * Again from the first record, to one tool, only the records whose type is
 * in mask (1ull << GPUIO_REC_*); the tables are not touched. -EBADMSG when
 * the capture no longer holds what pass 1 read.
 */
int model_session__replay(struct model_session *s, const struct model_tool *t, uint64_t mask);
/*
 * The record pass 1 saw at file offset off (model_session__offset), to t:
 * GPU records only (they are kept by offset and re-read in time order).
 * type: what pass 1 saw there (0: any GPU record). -EBADMSG when it is not.
 */
int model_session__read_at(struct model_session *s, uint64_t off, unsigned type,
			   const struct model_tool *t);
/* During a handler of pass 1: the file offset of the record at hand. */
uint64_t model_session__offset(const struct model_session *s);
/* Why a pass returned -EBADMSG. */
const char *model_session__error(const struct model_session *s);
const char *model_session__path_name(const struct model_session *s);  /* the capture's */

/* ---- what pass 1 found ---- */

struct model_facts {
	const struct gpuio_cap_header *hdr;
	uint64_t records;                       /* whole records */
	uint64_t counts[GPUIO_REC_LAST + 1];   /* by type; [0]: types this build does not know */
	uint64_t first_ts, last_ts;             /* the earliest (non-zero) and latest record ts */
	uint64_t truncated, trunc_offset;       /* a partial record's bytes at the end, where */
	bool have_stats;                        /* a STATS record was read; stats: the last */
	struct gpuio_stats_event stats;
	/* GPU collectors: the last GPU_INFO of all, how many there were */
	struct gpuio_gpu_info gpu_info;
	uint64_t gpu_infos;
};
const struct model_facts *model_session__facts(const struct model_session *s);

/* A process as its PROC records describe it (model/proc_names.h decides the name). */
struct model_proc {
	uint32_t pid;
	uint32_t ppid;                  /* from its FORK record, 0 unknown */
	uint8_t rank;                   /* of the record that named it */
	char comm[16];                  /* "" when no record named it */
	const char *args;               /* argv, NUL separated, no trailing NUL; NULL none */
	uint32_t args_len;
	const char *cgroup;             /* the cgroup that names its job, NULL unknown */
	bool exited;
	uint64_t exit_ts;               /* its last EXIT record */
};
/* NULL when no PROC record named pid. */
const struct model_proc *model_session__proc(const struct model_session *s, uint32_t pid);

/* A thread's name, from its latest PROC record that carries one. */
struct model_thread {
	uint32_t pid, tid;
	bool has_comm;
	char comm[16];
};
const struct model_thread *model_session__thread(const struct model_session *s, uint32_t pid,
						 uint32_t tid);

/* The absolute path a PATH record gave (dev, ino) (the latest), its length; NULL none. */
const char *model_session__path(const struct model_session *s, uint32_t dev, uint64_t ino,
				uint32_t *len);
/*
 * A socket as its SOCK_PEER record names it (the latest: a socket that got
 * a peer after its first record is named again). Names by the one rule of
 * model/peer_names.h.
 */
struct model_peer {
	uint32_t dev;
	uint64_t ino;
	uint16_t family, type, protocol;        /* as the record has them */
	bool connected;                         /* a peer is known */
	const char *proto;                      /* "tcp", "udp", "unix", ... */
	char name[128];                         /* "10.0.0.5:9000", "[::1]:80", "unix:/path" */
	char local[128];                        /* this end, the same way */
};
/* The peer of the socket (dev, ino), NULL when no SOCK_PEER record named it. */
const struct model_peer *model_session__peer(const struct model_session *s, uint32_t dev,
					     uint64_t ino);
/* Every socket named, in the order first named; NULL past the last. */
const struct model_peer *model_session__peer_at(const struct model_session *s, size_t i);

/* The name a DEVNAME record gave the block device dev ("sda"), NULL none. */
const char *model_session__devname(const struct model_session *s, uint32_t dev);

/*
 * Python stacks (model/stacks.h), once pass 1 is over: the stack a
 * STACK_AT's reference names (NULL: none, or its interpreter never passed
 * its check), its i-th frame as file:line:function; the table (NULL when
 * the capture has no stacks).
 */
struct model_stack;
struct model_frame;
struct model_stacks;
const struct model_stack *model_session__stack(const struct model_session *s, uint32_t ref);
void model_session__frame(const struct model_session *s, const struct model_stack *k, unsigned i,
			  struct model_frame *out);
const struct model_stacks *model_session__stacks(const struct model_session *s);

/* Every switch and wake-up of the capture, sorted once pass 1 is over. */
const struct sched_tab *model_session__sched(const struct model_session *s);

/* A GPU collector (one per process): its latest GPU_INFO. */
struct model_collector {
	struct gpuio_gpu_info info;
	char reason[sizeof(((struct gpuio_gpu_info *)0)->reason) + 1];  /* kept from an
								       * UNAVAILABLE record */
	uint64_t nrec;                  /* GPU_INFO records */
};
/* In the order they first spoke; NULL past the last. */
const struct model_collector *model_session__collector(const struct model_session *s, size_t i);
/* The collector of process pid, NULL when it never spoke. */
const struct model_collector *model_session__collector_of(const struct model_session *s,
							  uint32_t pid);

#endif /* GPUIO_MODEL_SESSION_H */
