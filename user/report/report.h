/* SPDX-License-Identifier: MIT */
/*
 * report.h — what a command needs of the report: open a capture into a
 * report model, render it as text, JSON or HTML, close it. The model's
 * fields stay inside user/report/ (report_model.h).
 */
#ifndef GPUIO_REPORT_H
#define GPUIO_REPORT_H

#include <stdbool.h>
#include <stddef.h>

struct rpt_opts {
	unsigned top;                   /* files per ranking, 0: all */
	bool no_gpu_pass;               /* testing aid: skip pass 2 */
};

struct rpt_model;

/* Decode path and build the whole report model. NULL on error, with the
 * reason (bad magic, corrupt record at offset N, ...) in err. */
struct rpt_model *rpt_model__open(const char *path, const struct rpt_opts *opt,
				  char *err, size_t len);
void rpt_model__close(struct rpt_model *m);

/* The findings the exports draw (model/findings.h): each loop's steps, the
 * GPU idle gaps of f->gap_min_ns or more and the largest f->gap_top (set
 * them first). 0 or -ENOMEM (f is then empty). */
struct findings;
int rpt_findings__build(const struct rpt_model *m, struct findings *f);

/* Several captures of one job (its hosts, or ranks traced apart): the
 * straggler, its cause, what the others did meanwhile. NULL: no memory. */
struct rpt_hosts;
struct rpt_hosts *rpt_hosts__build(struct rpt_model *const *models, int n);
void rpt_hosts__free(struct rpt_hosts *j);
int rpt_text__print_hosts(const struct rpt_hosts *j);
int rpt_json__write_hosts(const struct rpt_hosts *j, const struct rpt_opts *opt);

/* Renderers: stdout, or the file out. Return 0 or -errno. */
int rpt_text__print(const struct rpt_model *m, const struct rpt_opts *opt);
int rpt_json__write(struct rpt_model *const *models, int n, const struct rpt_opts *opt);
int rpt_html__write(const struct rpt_model *m, const struct rpt_opts *opt, const char *out);

#endif /* GPUIO_REPORT_H */
