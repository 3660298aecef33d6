/* SPDX-License-Identifier: MIT */
/*
 * report_priv.h — what the report model's own files share and no renderer
 * may use: the pass-1 record handlers, the GPU idle attribution, the
 * rankings and recommendations.
 */
#ifndef GPUIO_REPORT_PRIV_H
#define GPUIO_REPORT_PRIV_H

#include "report/report_model.h"


#define KERNEL_O_DIRECT 040000   /* the kernel's value: records carry raw flags */

uint64_t rpt_end_of(uint64_t ts, uint64_t dur);

unsigned rpt_log2_idx(uint64_t v);

int rpt_hist_add(struct rpt_hist *h, uint64_t v);

int rpt_series_new(struct rpt_model *m, struct rpt_series **out);

void rpt_tl_fit(struct rpt_model *m, uint64_t t);

void rpt_tl_point(struct rpt_model *m, struct rpt_series *s, uint64_t t, double v);

void rpt_tl_span(struct rpt_model *m, struct rpt_series *s, uint64_t a, uint64_t b, double w);

int rpt_proc_get(struct rpt_model *m, uint32_t pid, struct rpt_proc **out);
int rpt_file_get(struct rpt_model *m, uint32_t dev, uint64_t ino, struct rpt_file **out);
int rpt_dev_get(struct rpt_model *m, uint32_t dev, struct rpt_dev **out);
/* a file's share of block requests (reqs of op, bytes, service time), if the file is known */
void rpt_file_blk(struct rpt_model *m, uint32_t file_dev, uint64_t ino, unsigned op, uint64_t bytes,
		  uint64_t reqs, uint64_t svc_ns);
/* f was touched by pid (the first few kept) */
void rpt_file_pid(struct rpt_file *f, uint32_t pid);
/* not a file of data: a pipe, socket or character device */
bool rpt_special_ftype(unsigned ftype);
/* LOST_CALLS: the kernel's sums of lost calls and requests into the totals (report_lost.c) */
int rpt_on_lost_calls(void *ctx, const struct gpuio_lost_calls *e);
int rpt_on_thread_time(void *ctx, const struct gpuio_thread_time *e);   /* report_thread_time.c */

int rpt_thread_get(struct rpt_model *m, uint32_t pid, uint32_t tid, uint64_t ts, uint64_t end, struct rpt_thread **out);

void rpt_note_time(struct rpt_model *m, uint64_t ts, uint64_t end);

enum rpt_cause rpt_call_cause(unsigned call);
bool rpt_call_fetches_data(const struct gpuio_vfs_event *e);    /* report_load.c */
/* a hint kept on f, or a read of bytes held against f's hints (report_prefetch.c) */
void rpt_prefetch__note(struct rpt_model *m, struct rpt_file *f, const struct gpuio_vfs_event *e,
			bool rd, uint64_t bytes);

void rpt_gpu_handlers(struct model_tool *t);     /* report_gpu.c: pass 1's GPU handlers */

/* report_spans.c: [s, e) spans of time (struct rpt_spans: report_model.h) */
int rpt_spans_add(struct rpt_spans *v, uint64_t s, uint64_t e);   /* empty ones ignored */
/* An NCCL collective's kernel (by its name's prefix)? */
bool rpt_kernel_is_collective(const char *name, size_t len);
void rpt_spans_norm(struct rpt_spans *v);                         /* sort, merge overlaps */
uint64_t rpt_spans_overlap(const struct rpt_spans *v, uint64_t s, uint64_t e); /* normalised v */
int rpt_spans_minus(const struct rpt_spans *v, uint64_t s, uint64_t e, struct rpt_spans *out);

/* report_steps.c: NVTX ranges (pass 1), the steps they mark (rpt_wait_build),
 * else the steps of the loop's waits for data; each step's time by kind */
int rpt_wait_steps(struct rpt_wait *w, const struct rpt_spans *win, const struct rpt_spans *cuts);
void rpt_steps_time(struct rpt_wait *w, const struct rpt_spans tw[RPT_TW_N]);
int rpt_nvtx_add(struct rpt_model *m, const struct gpuio_nvtx_range *r);
int rpt_nvtx_steps(struct rpt_model *m, struct rpt_wait *w, const struct rpt_spans *data);
void rpt_nvtx_free(struct rpt_model *m);

/* report_gpu.c: the GPUs' launching threads, and their state during the idle
 * gaps (tw: the thread's time by enum rpt_tw, normalised spans) */
uint32_t rpt_gpu_launcher(struct rpt_model *m, struct rpt_gpu *g);
void rpt_gaps_by_launcher(struct rpt_model *m, uint32_t pid, uint32_t tid, const struct rpt_spans *tw);
void rpt_gaps_launch_totals(struct rpt_model *m);

/* report_blocked.c: what each sleep was in (WAIT records) */
int rpt_waits_add(struct rpt_model *m, const struct gpuio_wait_event *e);      /* pass 1 */
void rpt_waits_sort(struct rpt_model *m);                                      /* after it */
/* tid's WAIT record for a sleep in [s, e), NULL none */
const struct rpt_waitrec *rpt_wait_in(const struct rpt_model *m, uint32_t tid, uint64_t s,
				      uint64_t e);
int rpt_tw_of_wait(const struct rpt_waitrec *r);        /* enum rpt_tw; NULL: RPT_TW_SLEEP */
void rpt_blocked_add(struct rpt_wait *w, const struct rpt_waitrec *r, uint64_t ns);
void rpt_blocked_sort(struct rpt_wait *w);

/* report_wait.c: every thread's states, by thread then time */
struct rpt_ivs {
	struct tstate_iv *a;
	size_t n, cap;
};
/* report_handover.c: every thread's states, by thread then time (a thread
 * asleep when tracing began: its sleep from the start) */
int rpt_ivs_load(struct rpt_model *m, struct rpt_ivs *v);
/* Asleep (S or D)? */
bool rpt_iv_sleep(uint8_t state);
/* Was iv (a sleep, or the wait for a CPU right after one) ended by another
 * traced thread handing something over, woke at `woke` — not a dying child
 * waking its parent (a join)? deaths: a cache of when threads left for good. */
bool rpt_data_waker(const struct sched_tab *t, const struct tstate_iv *iv, uint64_t woke,
		    struct kmap *deaths);
/* A sleep so ended — not one in a send (write, sendmsg: waiting for room). */
bool rpt_data_wake(const struct rpt_model *m, const struct tstate_iv *iv, struct kmap *deaths);

/* report_loops.c: which threads are training loops, and who feeds each */
struct rpt_loopset;
/* After the roles: each thread's data_bytes, from data files and sockets only. */
void rpt_threads_data_bytes(struct rpt_model *m);
/* Is pid a descendant of anc (its child, grandchild, ...)? */
bool rpt_proc_descends(const struct rpt_model *m, uint32_t pid, uint32_t anc);
int rpt_loops_find(struct rpt_model *m, const struct rpt_ivs *v, struct kmap *deaths,
		   struct rpt_loopset **out);
size_t rpt_loops_count(const struct rpt_loopset *ls);
/* The i-th loop (most data-waiting first); own: found by its own reads; none: no
 * loop was found and this thread (the busiest) stands in. */
void rpt_loops_get(const struct rpt_loopset *ls, size_t i, uint32_t *pid, uint32_t *tid,
		   bool *own, bool *none);
/* Is thread (wpid, wtid) a data producer of the loop (lpid, ltid)? */
bool rpt_loops_feeds(const struct rpt_loopset *ls, uint32_t lpid, uint32_t ltid, uint32_t wpid,
		     uint32_t wtid);
/* Did tid fetch data itself (reads, faults, receives)? */
bool rpt_loops_fetcher(const struct rpt_loopset *ls, uint32_t tid);
void rpt_loops_free(struct rpt_loopset *ls);

/* report_next.c: the loop's time inside next() from its stacks (w->next), the
 * spans of it into out (normalised); iv: the loop thread's states in time order,
 * waits: its sleeps a producer ended (normalised). 0 or -ENOMEM. */
/* Is the stack ref inside the loop's next() (its caller's line, then its frame)? */
bool rpt_next_inside(const struct rpt_model *m, const struct rpt_next *nx, uint32_t ref);
int rpt_next_build(struct rpt_model *m, struct rpt_wait *w, const struct tstate_iv *iv, size_t n,
		   const struct rpt_spans *waits, struct rpt_spans *out, struct rpt_spans *cuts);

/* report_loop_sites.c: each loop's producers' fetches by line and CPU by
 * function (after rpt_wait_build). 0 or -1 (no memory). */
int rpt_loop_sites(struct rpt_model *m);
void rpt_loop_sites_free(struct rpt_wait *w);

/* report_wait.c: after pass 1 (a pass of its own over the VFS calls) */
int rpt_wait_build(struct rpt_model *m);
/* report_loop_view.c */
void rpt_wait_name(struct rpt_model *m);        /* after rpt_name_files */
void rpt_wait_free(struct rpt_model *m);

int rpt_pass1(struct rpt_model *m);

int rpt_gpu_build(struct rpt_model *m);
/* report_gpu_phase.c: each GPU's idle by phase of its process's loop (after the loops' steps) */
void rpt_gpu_phases(struct rpt_model *m);

int rpt_pass2(struct rpt_model *m);

int rpt_gaps_resolve(struct rpt_model *m);

uint64_t rpt_gpu_idle_in(const struct rpt_model *m, uint32_t pid, uint64_t s, uint64_t e);

int rpt_name_files(struct rpt_model *m);

int rpt_roles(struct rpt_model *m);

void rpt_recommend(struct rpt_model *m);

void rpt_small_files(struct rpt_model *m);

#endif /* GPUIO_REPORT_PRIV_H */
