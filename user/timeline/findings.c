// SPDX-License-Identifier: MIT
/*
 * findings.c — the report's findings (model/findings.h) on the timeline:
 * per loop a "steps" track in the loop's process, a slice per step with its
 * wait for data and the loop thread's time by kind as args; per GPU and
 * process an "idle gaps" track on the GPU, a slice per gap with its cause
 * and the launching thread's state. Drawn by the same walk in both formats.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model/findings.h"
#include "timeline/sink.h"
#include "timeline/timeline_priv.h"

#define ORDER_FIND_LANE 50000           /* after the threads, before io_uring lanes */
#define ORDER_GAP_LANE  1000000         /* after a GPU's stream lanes */

void tl_model__set_findings(struct tl_model *m, const struct findings *f)
{
	m->findings = f;
}

bool tl_model__has_findings_input(const struct tl_model *m)
{
	const uint64_t *c = m->f->counts;

	return c[GPUIO_REC_SCHED] || c[GPUIO_REC_GPU_KERNEL] || c[GPUIO_REC_GPU_MEMCPY] ||
	       c[GPUIO_REC_GPU_MEMSET];
}

uint64_t tl_model__sched_records(const struct tl_model *m)
{
	return m->f->counts[GPUIO_REC_SCHED] + m->f->counts[GPUIO_REC_WAIT];
}

/* the track's output tid: unique in a merge (host) and among the tracks */
static uint32_t find_tid(const struct tl_model *m, size_t i)
{
	return TL_FIND_TID_BASE + ((uint32_t)m->map.host << 12) + (uint32_t)i;
}

/* a dict of ns[] by names[], the kinds with time only */
static void ns_dict(struct tl_args *a, const char *key, const char *const *names, unsigned n,
		    const uint64_t *ns)
{
	struct tl_arg *d = tl_arg_add(a, key, TLA_DICT);

	d->len = 0;
	for (unsigned k = 0; k < n; k++)
		if (ns[k]) {
			tl_arg_us(a, names[k], (int64_t)ns[k]);
			d->len++;
		}
}

static void step_args(struct tl_args *a, const struct tl_model *m, const struct finding_track *t,
		      const struct finding_slice *v)
{
	tl_args_reset(a);
	tl_arg_u64(a, "loop", t->loop);
	tl_arg_u64(a, "tid", tl_pid_(m, t->tid));      /* the loop thread */
	tl_arg_u64(a, "step", v->index);
	tl_arg_us(a, "wait_us", (int64_t)v->wait_ns);
	tl_arg_us(a, "rest_us", (int64_t)v->rest_ns);
	tl_arg_cstr(a, "cause", v->cause);
	ns_dict(a, t->ns_key, t->names, t->nnames, v->ns);
	if (t->files[0])
		tl_arg_str(a, "data_files", t->files, strlen(t->files), true);
	if (t->peers[0])
		tl_arg_str(a, "peers", t->peers, strlen(t->peers), true);
}

static void gap_args(struct tl_args *a, const struct tl_model *m, const struct finding_track *t,
		     const struct finding_slice *v)
{
	tl_args_reset(a);
	/* "pid" moves with the output's pids (a merge's JSON); the launcher's
	 * tid stays the capture's own, as in the track names */
	tl_arg_u64(a, "pid", tl_pid_(m, t->pid));
	tl_arg_cstr(a, "cause", v->cause);
	ns_dict(a, t->ns_key, t->names, t->nnames, v->ns);
	if (v->launcher_tid) {
		tl_arg_u64(a, "launcher_tid", v->launcher_tid);
		if (t->nnames2)
			ns_dict(a, "launcher_state_us", t->names2, t->nnames2, v->ns2);
	}
}

/* the GPU pseudo-process index of device, -1 none */
static int gpu_of(const struct tl_model *m, uint32_t device)
{
	for (size_t k = 0; k < m->gpu.ndevs; k++)
		if (m->gpu.devs[k].device == device)
			return (int)m->gpu.devs[k].index;
	return -1;
}

static void one_track(struct tl_sink *s, struct tl_model *m, size_t i, struct tl_gslice *o)
{
	const struct finding_track *t = &m->findings->t[i];
	char name[160];
	uint32_t pid;
	int n, g = -1;

	if (t->kind == FINDING_STEPS) {
		if (!kmap__get(&m->proc_map, t->pid, 0))
			return;
		pid = tl_pid_(m, t->pid);
		n = snprintf(name, sizeof(name), "steps · loop %u · %s %u", t->loop, t->thread, t->tid);
		s->ops->proc_lane(s, pid, find_tid(m, i), name, (size_t)n, ORDER_FIND_LANE + i);
	} else {
		g = gpu_of(m, t->device);
		if (g < 0)
			return;
		pid = tl_gpu_pid(m, (size_t)g);
		n = snprintf(name, sizeof(name), "idle gaps · pid %u", t->pid);
		s->ops->gpu_lane(s, pid, find_tid(m, i), name, (size_t)n, ORDER_GAP_LANE + i);
	}
	for (size_t k = 0; k < t->n && !s->ops->error(s); k++) {
		const struct finding_slice *v = &t->v[k];

		memset(o, 0, sizeof(*o));
		o->ts = v->s;
		o->dur = v->e - v->s;
		o->pid = pid;
		o->tid = find_tid(m, i);
		if (t->kind == FINDING_STEPS) {
			o->cat = "gpuio_step";
			snprintf(o->namebuf, sizeof(o->namebuf), "step %u", v->index);
			o->name = o->namebuf;
			o->track = TL_GS_HOSTLANE;
			step_args(&s->args, m, t, v);
			m->st.steps++;
		} else {
			o->cat = "gpuio_gap";
			o->name = "GPU idle";
			o->name_static = true;
			o->track = TL_GS_GPULANE;
			gap_args(&s->args, m, t, v);
			m->st.gaps++;
		}
		s->ops->gslice(s, o);
	}
}

int tl_walk_findings(struct tl_sink *s, struct tl_model *m)
{
	struct tl_gslice *o;

	if (!m->findings || !m->findings->n)
		return 0;
	o = malloc(sizeof(*o));
	if (!o)
		return -ENOMEM;
	for (size_t i = 0; i < m->findings->n && !s->ops->error(s); i++)
		one_track(s, m, i, o);
	free(o);
	return s->ops->error(s);
}
