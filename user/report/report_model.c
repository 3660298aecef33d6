// SPDX-License-Identifier: MIT
/*
 * report_model.c — streaming aggregation behind `gpuio report` (see
 * report_model.h for the passes and the memory bound): the driver. Pass 1
 * (report_load.c, report_gpu.c's GPU records), pass 2 (report_gpu.c: what
 * the host did while each GPU sat idle), then file roles (report_roles.c),
 * rankings and recommendations (report_reco.c).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include "model/calls.h"
#include "report/report_model.h"
#include "report/report_net.h"
#include "report/report_sites.h"
#include "report/report_priv.h"

const char *const rpt_cause_names[RPT_CAUSE_N] = {
	[RPT_CAUSE_READ] = "file_read", [RPT_CAUSE_WRITE] = "write_fsync",
	[RPT_CAUSE_OTHER_IO] = "other_file_io", [RPT_CAUSE_CUDA_SYNC] = "cuda_sync",
	[RPT_CAUSE_NONE] = "other",
};

static void rpt_model__free(struct rpt_model *m);

/* Open path and build the whole model. Returns 0 or -errno with the reason
 * in m->err (bad magic, corrupt record at offset N, ...). */
static int rpt_model__load(struct rpt_model *m, const char *path, const struct rpt_opts *opt)
{
	struct stat sb;
	int rc;

	memset(m, 0, sizeof(*m));
	m->path = path;
	if (opt)
		m->opt = *opt;
	rc = model_session__open(path, &m->s, m->err, sizeof(m->err));
	if (rc)
		return rc;
	m->f = model_session__facts(m->s);
	m->hdr = m->f->hdr;
	if (stat(path, &sb) == 0)
		m->file_size = (uint64_t)sb.st_size;
	m->tl_t0 = m->hdr->monotonic_ns;
	m->tl_width = RPT_TL_WIDTH0;
	if (rpt_series_new(m, &m->tl_rbytes) || rpt_series_new(m, &m->tl_wbytes) ||
	    rpt_series_new(m, &m->tl_reads_inflight))
		goto nomem;
	rc = rpt_pass1(m);
	if (rc == -ENOMEM)
		goto nomem;
	if (rc)
		return rc;
	if (rpt_net__finish(m) || rpt_sites__finish(m))
		goto nomem;
	{
		const struct model_collector *c;

		/* each collector's counts are cumulative: its last ones */
		for (size_t i = 0; (c = model_session__collector(m->s, i)) != NULL; i++) {
			m->cupti_dropped += c->info.cupti_dropped;
			m->gpu_write_errors += c->info.write_errors;
		}
	}
	if (rpt_gpu_build(m))
		goto nomem;
	if (m->ngaps && !m->opt.no_gpu_pass) {
		rc = rpt_pass2(m);
		if (rc == -ENOMEM)
			goto nomem;
		if (rc)
			return rc;
	}
	if (rpt_gaps_resolve(m))
		goto nomem;
	if (rpt_name_files(m) || rpt_roles(m))     /* roles need names; they pick checkpoints */
		goto nomem;
	rpt_threads_data_bytes(m);                 /* the loops' producers fetch data files */
	rc = rpt_wait_build(m);
	if (rc == -ENOMEM)
		goto nomem;
	if (rc)
		return rc;
	rpt_wait_name(m);
	if (rpt_loop_sites(m))
		goto nomem;
	rpt_gpu_phases(m);
	for (size_t i = 0; i < m->nckpts; i++)
		m->ckpts[i].gpu_lost_ns = rpt_gpu_idle_in(m, m->ckpts[i].pid, m->ckpts[i].s,
						      m->ckpts[i].e);
	rpt_small_files(m);         /* data files only; also page-cache totals */
	rpt_recommend(m);
	return 0;
nomem:
	snprintf(m->err, sizeof(m->err), "%s: out of memory", path);
	return -ENOMEM;
}

struct rpt_model *rpt_model__open(const char *path, const struct rpt_opts *opt,
				  char *err, size_t len)
{
	struct rpt_model *m = calloc(1, sizeof(*m));
	int rc;

	if (!m) {
		snprintf(err, len, "%s", strerror(ENOMEM));
		return NULL;
	}
	rc = rpt_model__load(m, path, opt);
	if (rc) {
		snprintf(err, len, "%s", m->err[0] ? m->err : strerror(-rc));
		rpt_model__close(m);
		return NULL;
	}
	return m;
}

void rpt_model__close(struct rpt_model *m)
{
	if (!m)
		return;
	rpt_model__free(m);
	free(m);
}

static void rpt_model__free(struct rpt_model *m)
{
	model_session__free(m->s);
	for (size_t i = 0; i < m->nfiles; i++) {
		free(m->files[i].lat.b);
		free(m->files[i].rlat.b);
	}
	for (size_t i = 0; i < m->nunnamed; i++)
		free(m->unnamed[i]);
	free(m->unnamed);
	for (size_t i = 0; i < m->nseries; i++)
		free(m->series[i]);
	for (size_t i = 0; i < m->ngaps; i++)
		free(m->gaps[i].segs);
	rpt_wait_free(m);
	rpt_nvtx_free(m);
	rpt_net__free(m);
	rpt_sites__free(m);
	free(m->series);
	free(m->files);
	free(m->streams);
	free(m->threads);
	free(m->procs);
	free(m->devs);
	free(m->gpu_ivs);
	free(m->syncs);
	free(m->colls);
	free(m->launches);
	free(m->gpus);
	free(m->gaps);
	free(m->ckpts);
	free(m->fault_last);
	kmap__free(&m->fault_map);
	kmap__free(&m->file_map);
	kmap__free(&m->stream_map);
	kmap__free(&m->fd_map);
	kmap__free(&m->thread_map);
	kmap__free(&m->thread_files);
	kmap__free(&m->proc_map);
	kmap__free(&m->dev_map);
	kmap__free(&m->gpu_map);
	memset(m, 0, sizeof(*m));
}

size_t rpt_model__jobs(const struct rpt_model *m, struct rpt_job *out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < m->nprocs; i++) {
		const char *cg = m->procs[i].cgroup;
		size_t k;

		if (!cg[0])
			continue;
		for (k = 0; k < n && strcmp(out[k].cgroup, cg); k++)
			;
		if (k < n) {
			out[k].nprocs++;
		} else if (n < max) {
			out[n].cgroup = cg;
			out[n++].nprocs = 1;
		}
	}
	for (size_t i = 1; i < n; i++)          /* few: insertion sort, most processes first */
		for (size_t k = i; k > 0 && out[k].nprocs > out[k - 1].nprocs; k--) {
			struct rpt_job t = out[k];

			out[k] = out[k - 1];
			out[k - 1] = t;
		}
	return n;
}
