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

void rpt_fmt_bytes(uint64_t b, char *buf, size_t len);

int rpt_series_new(struct rpt_model *m, struct rpt_series **out);

void rpt_tl_fit(struct rpt_model *m, uint64_t t);

void rpt_tl_point(struct rpt_model *m, struct rpt_series *s, uint64_t t, double v);

void rpt_tl_span(struct rpt_model *m, struct rpt_series *s, uint64_t a, uint64_t b, double w);

int rpt_proc_get(struct rpt_model *m, uint32_t pid, struct rpt_proc **out);

int rpt_thread_get(struct rpt_model *m, uint32_t pid, uint32_t tid, uint64_t ts, uint64_t end, struct rpt_thread **out);

void rpt_note_time(struct rpt_model *m, uint64_t ts, uint64_t end);

enum rpt_cause rpt_call_cause(unsigned call);

void rpt_gpu_handlers(struct model_tool *t);     /* report_gpu.c: pass 1's GPU handlers */

/* report_spans.c: [s, e) spans of time */
struct rpt_span { uint64_t s, e; };
struct rpt_spans {
	struct rpt_span *a;
	size_t n, cap;
};
int rpt_spans_add(struct rpt_spans *v, uint64_t s, uint64_t e);   /* empty ones ignored */
void rpt_spans_norm(struct rpt_spans *v);                         /* sort, merge overlaps */
uint64_t rpt_spans_overlap(const struct rpt_spans *v, uint64_t s, uint64_t e); /* normalised v */
int rpt_spans_minus(const struct rpt_spans *v, uint64_t s, uint64_t e, struct rpt_spans *out);

/* report_steps.c: NVTX ranges (pass 1), the steps they mark (rpt_wait_build) */
int rpt_nvtx_add(struct rpt_model *m, const struct gpuio_nvtx_range *r);
int rpt_nvtx_steps(struct rpt_model *m, struct rpt_wait *w, const struct rpt_spans *data);
void rpt_nvtx_free(struct rpt_model *m);

/* report_gpu.c: the GPUs' launching threads, and their state during the idle
 * gaps (tw: the thread's time by enum rpt_tw, normalised spans) */
uint32_t rpt_gpu_launcher(struct rpt_model *m, struct rpt_gpu *g);
void rpt_gaps_by_launcher(struct rpt_model *m, struct rpt_gpu *g, const struct rpt_spans *tw);

/* report_wait.c: after pass 1 (a pass of its own over the VFS calls) */
int rpt_wait_build(struct rpt_model *m);
void rpt_wait_name(struct rpt_model *m);        /* after rpt_name_files */
void rpt_wait_free(struct rpt_model *m);

int rpt_pass1(struct rpt_model *m);

int rpt_gpu_build(struct rpt_model *m);

int rpt_pass2(struct rpt_model *m);

int rpt_gaps_resolve(struct rpt_model *m);

uint64_t rpt_gpu_idle_in(const struct rpt_model *m, uint32_t pid, uint64_t s, uint64_t e);

int rpt_name_files(struct rpt_model *m);

int rpt_roles(struct rpt_model *m);

void rpt_recommend(struct rpt_model *m);

void rpt_small_files(struct rpt_model *m);

#endif /* GPUIO_REPORT_PRIV_H */
