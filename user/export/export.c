// SPDX-License-Identifier: MIT
/*
 * export.c — capture -> trace: the format-neutral entry points. The format
 * is chosen here, by the output's name, and nowhere else; the model is
 * loaded once and handed to the format's sink (formats.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "export/export.h"
#include "export/findings_src.h"
#include "export/formats.h"
#include "export/kineto.h"
#include "lib/log.h"
#include "lib/parse.h"

bool gpuio_export__is_gz(const char *name)
{
	return parse_str_ends_with(name, ".gz");
}

bool gpuio_export__is_json_name(const char *name)
{
	return parse_str_ends_with(name, ".json") || parse_str_ends_with(name, ".json.gz");
}

bool gpuio_export__is_pftrace_name(const char *name)
{
	return parse_str_ends_with(name, ".pftrace") || parse_str_ends_with(name, ".pftrace.gz");
}

bool gpuio_export__is_output_name(const char *name)
{
	return gpuio_export__is_json_name(name) || gpuio_export__is_pftrace_name(name);
}

int gpuio_export_models_ex(struct tl_model *const *models, int n, const char *out_path,
			   const struct gpuio_export_opts *opts, struct gpuio_export_extra *extra,
			   uint64_t *events, uint64_t *bytes)
{
	if (gpuio_export__is_pftrace_name(out_path))
		return pftrace_sink__export(models, n, out_path, opts, extra, events, bytes);
	return json_sink__export(models, n, out_path, opts, extra, events, bytes);
}

int gpuio_export_models(struct tl_model *const *models, int n, const char *out_path,
			const struct gpuio_export_opts *opts, uint64_t *events, uint64_t *bytes)
{
	return gpuio_export_models_ex(models, n, out_path, opts, NULL, events, bytes);
}

int gpuio_export_extra__walk(const struct gpuio_export_extra *x, size_t k, struct tl_sink *s)
{
	struct gpuio_export_extra *w = (struct gpuio_export_extra *)x;
	struct kin_ids ids;
	int rc;

	if (!x || k >= x->n)
		return 1;
	/* every trace's synthetic ids after the previous ones' */
	if (k == 0) {
		w->next_pid = KIN_PID_BASE;
		w->next_tid = KIN_TID_BASE;
		w->events = 0;
	}
	ids.pid = w->next_pid;
	ids.tid = w->next_tid;
	rc = kin_overlay__emit(&x->ov[k], s, &ids, &w->events);
	w->next_pid = ids.pid;
	w->next_tid = ids.tid;
	return rc;
}

struct tl_model *gpuio_export_extra__model(const struct gpuio_export_extra *x, size_t k)
{
	return x && k < x->n ? x->ov[k].m : NULL;
}

int gpuio_export(const char *capture_path, const char *out_path,
		 const struct gpuio_export_opts *opts, struct gpuio_export_stats *st)
{
	struct export_findings *fx = NULL;
	struct tl_model *m;
	uint64_t bytes = 0, events = 0;
	int err;

	err = tl_model__load(capture_path, NULL, &m);
	if (!err && !(opts && opts->no_findings))
		fx = export_findings__attach(m, capture_path, opts && opts->findings_always);
	if (!err)
		err = gpuio_export_models(&m, 1, out_path, opts, &events, &bytes);
	if (!err && st) {
		st->walk = *tl_model__stats(m);
		/* what the file holds: the walk's count misses what the output
		 * adds around it (.pftrace: the first packets, the last bundles) */
		st->walk.events = events;
		st->output_bytes = bytes;
	}
	tl_model__free(m);
	export_findings__free(fx);
	return err;
}
