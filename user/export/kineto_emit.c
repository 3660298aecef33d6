// SPDX-License-Identifier: MIT
/*
 * kineto_emit.c — a PyTorch profiler trace laid out beside a capture's
 * tracks, through the export's sink (timeline/sink.h), so that the JSON
 * and the .pftrace carry the same slices.
 *
 *  - CPU events of a thread gpuio traced go on a track of its own in that
 *    process, "PyTorch · tid T" (JSON: a lane of the process, tid
 *    KIN_TID_BASE + n; .pftrace: a track under the process), next to the
 *    thread's own track rather than on it: gpuio's calls and the
 *    profiler's ops come from two clocks, and a slice that straddles
 *    another's edge by the alignment's error would not nest;
 *  - CPU events of a thread gpuio did not see, and every event when the
 *    trace could not be tied to a process, go into a process "PyTorch
 *    profiler: pid P" (pid KIN_PID_BASE + n);
 *  - GPU events (kernels, copies, memsets, GPU annotations) into a process
 *    "PyTorch profiler: GPU D" with a track per stream;
 *  - a track's events that do not nest go on its next lane ("... · 2").
 * Every slice: category "pytorch", the profiler's name; args "category"
 * (the profiler's), "trace_pid"/"trace_tid" (as the trace wrote them), and
 * the event's own args (numbers, strings, booleans; arrays and objects —
 * input shapes, types — as their JSON text).
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "export/kineto.h"
#include "timeline/sink.h"
#include "lib/kmap.h"
#include "lib/log.h"

#define KIN_LANE_ORDER   250000u
#define KIN_PROC_ORDER   900000u
#define KIN_ARG_TEXT_MAX 2048u

struct kgroup {
	bool real;              /* a process of the capture */
	uint8_t kind;
	int64_t pid;            /* the trace's */
	const char *pid_str;
	uint32_t out_pid;
};

struct ktrack {
	uint32_t group;
	int64_t tid;
	const char *tid_str;
	uint32_t real_tid;      /* the capture's thread (0: none known) */
	uint32_t nlanes, tid0;  /* lane tids tid0 .. tid0 + nlanes - 1 */
};

struct emit {
	struct kin_overlay *o;
	struct kgroup *g;
	size_t ng, cg;
	struct ktrack *tr;
	size_t ntr, ctr;
	uint32_t *track_of;     /* per event */
	uint32_t *lane_of;
	char **keys;            /* sanitized arg keys, one copy each (pftrace interns by address) */
	const char **raw_keys;
	size_t nkeys, ckeys;
};

static bool same_id(int64_t a, const char *as, int64_t b, const char *bs)
{
	if (as && bs)
		return !strcmp(as, bs);
	return !as && !bs && a == b;
}

static int group_of(struct emit *x, const struct kin_event *e, bool real, uint32_t *out)
{
	for (size_t i = 0; i < x->ng; i++) {
		const struct kgroup *g = &x->g[i];

		if (g->kind == e->kind && g->real == real && same_id(g->pid, g->pid_str, e->pid, e->pid_str)) {
			*out = (uint32_t)i;
			return 0;
		}
	}
	if (array_grow((void **)&x->g, &x->cg, x->ng + 1, sizeof(*x->g)))
		return -ENOMEM;
	x->g[x->ng] = (struct kgroup){ .real = real, .kind = e->kind, .pid = e->pid,
				       .pid_str = e->pid_str };
	*out = (uint32_t)x->ng++;
	return 0;
}

static int track_of(struct emit *x, uint32_t group, int64_t tid, const char *tid_str,
		    uint32_t real_tid, uint32_t *out)
{
	for (size_t i = x->ntr; i-- > 0;) {
		const struct ktrack *t = &x->tr[i];

		if (t->group == group && same_id(t->tid, t->tid_str, tid, tid_str)) {
			*out = (uint32_t)i;
			return 0;
		}
	}
	if (array_grow((void **)&x->tr, &x->ctr, x->ntr + 1, sizeof(*x->tr)))
		return -ENOMEM;
	x->tr[x->ntr] = (struct ktrack){ .group = group, .tid = tid, .tid_str = tid_str,
					 .real_tid = real_tid };
	*out = (uint32_t)x->ntr++;
	return 0;
}

/* Which process and track each event goes on. */
static int assign(struct emit *x)
{
	const struct kin_trace *t = x->o->t;
	const struct kin_align *a = &x->o->a;
	int rc = 0;

	for (size_t i = 0; i < t->n && !rc; i++) {
		const struct kin_event *e = &t->ev[i];
		struct kin_event v = *e;
		uint32_t g, real_tid = 0;
		bool real = false;

		if (e->kind == KIN_CPU) {
			if (!strcmp(a->how, "events")) {
				/* the matched thread of the profiler's is the capture's a->tid */
				if (a->pid && same_id(e->tid, e->tid_str, a->trace_tid, NULL)) {
					real = true;
					v.pid = a->pid;
					v.pid_str = NULL;
					real_tid = a->tid;
				}
			} else if (!e->pid_str && e->pid > 0 && e->pid < UINT32_MAX &&
				   kin_threads__has_pid(&x->o->th, (uint32_t)e->pid)) {
				real = true;
				if (!e->tid_str && e->tid > 0 && e->tid < UINT32_MAX &&
				    kin_threads__has(&x->o->th, (uint32_t)e->pid, (uint32_t)e->tid))
					real_tid = (uint32_t)e->tid;
			}
		}
		if (real) {
			char buf[TL_PROC_NAME_BUF];

			/* only onto a process the walk wrote */
			real = tl_model__proc_name_of(x->o->m, (uint32_t)v.pid, buf, sizeof(buf)) > 0;
			if (!real) {
				v = *e;
				real_tid = 0;
			}
		}
		rc = group_of(x, &v, real, &g);
		if (!rc)
			rc = track_of(x, g, e->tid, e->tid_str, real_tid, &x->track_of[i]);
	}
	return rc;
}

static const struct kin_event *cmp_ev;
static const uint32_t *cmp_track;

static int cmp_nest(const void *pa, const void *pb)
{
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	const struct kin_event *x = &cmp_ev[a], *y = &cmp_ev[b];

	if (cmp_track[a] != cmp_track[b])
		return cmp_track[a] < cmp_track[b] ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->dur != y->dur)
		return x->dur > y->dur ? -1 : 1;        /* the enclosing one first */
	return x->order < y->order ? -1 : x->order > y->order;
}

/* Lanes: each event on the first lane of its track where it nests in what is open. */
static int nest(struct emit *x, uint32_t *idx)
{
	const struct kin_trace *t = x->o->t;
	struct { int64_t *end; size_t n, cap; } *lanes = NULL;
	size_t nl = 0, cl = 0;
	int rc = 0;

	for (size_t i = 0; i < t->n; i++)
		idx[i] = (uint32_t)i;
	cmp_ev = t->ev;
	cmp_track = x->track_of;
	qsort(idx, t->n, sizeof(*idx), cmp_nest);
	for (size_t i = 0; i < t->n && !rc; i++) {
		const struct kin_event *e = &t->ev[idx[i]];
		int64_t end = e->ts + (int64_t)e->dur;
		size_t l;

		if (i == 0 || x->track_of[idx[i]] != x->track_of[idx[i - 1]]) {
			for (size_t k = 0; k < nl; k++)
				lanes[k].n = 0;
		}
		for (l = 0; l < nl; l++) {
			while (lanes[l].n && lanes[l].end[lanes[l].n - 1] <= e->ts)
				lanes[l].n--;
			if (!lanes[l].n || end <= lanes[l].end[lanes[l].n - 1])
				break;
		}
		if (l == nl) {
			if (array_grow((void **)&lanes, &cl, nl + 1, sizeof(*lanes))) {
				rc = -ENOMEM;
				break;
			}
			memset(&lanes[nl++], 0, sizeof(*lanes));
		}
		if (array_grow((void **)&lanes[l].end, &lanes[l].cap, lanes[l].n + 1,
			       sizeof(int64_t))) {
			rc = -ENOMEM;
			break;
		}
		lanes[l].end[lanes[l].n++] = end;
		x->lane_of[idx[i]] = (uint32_t)l;
		if (x->tr[x->track_of[idx[i]]].nlanes < l + 1)
			x->tr[x->track_of[idx[i]]].nlanes = (uint32_t)l + 1;
	}
	for (size_t k = 0; k < nl; k++)
		free(lanes[k].end);
	free(lanes);
	return rc;
}

/* A key as JSON and Perfetto take it, one stable copy per distinct key. */
static const char *key_of(struct emit *x, const char *raw)
{
	char *k;

	for (size_t i = 0; i < x->nkeys; i++)
		if (!strcmp(x->raw_keys[i], raw))
			return x->keys[i];
	if (array_grow((void **)&x->keys, &x->ckeys, x->nkeys + 1, sizeof(*x->keys)))
		return NULL;
	x->raw_keys = realloc(x->raw_keys, x->ckeys * sizeof(*x->raw_keys));
	if (!x->raw_keys)
		return NULL;
	k = strndup(raw, 120);
	if (!k)
		return NULL;
	for (char *p = k; *p; p++) {
		unsigned char c = (unsigned char)*p;

		/* the JSON sink writes keys as they are: nothing that needs escaping */
		if (c < 0x20 || c == '"' || c == '\\' || c >= 0x7f)
			*p = '_';
	}
	if (!*k) {
		free(k);
		k = strdup("_");
		if (!k)
			return NULL;
	}
	x->raw_keys[x->nkeys] = raw;
	x->keys[x->nkeys++] = k;
	return k;
}

static void arg_str(struct tl_args *a, const char *key, const char *s, size_t len)
{
	struct tl_arg *g = &a->a[a->n++];

	*g = (struct tl_arg){ .key = key, .type = TLA_STR, .len = (uint32_t)len, .v.str = s };
}

static void arg_s64(struct tl_args *a, const char *key, int64_t v)
{
	a->a[a->n++] = (struct tl_arg){ .key = key, .type = TLA_S64, .v.s = v };
}

/*
 * An array or object as compact JSON text (no whitespace outside strings:
 * "[[16,64],[64,16]]", however the trace indented it), in a's scratch; cut
 * at KIN_ARG_TEXT_MAX or the scratch's end. Its length; *out the text.
 */
static size_t compact(struct tl_args *a, const char *txt, size_t len, const char **out)
{
	size_t room = sizeof(a->scratch) - a->used, n = 0;
	char *o = a->scratch + a->used;
	bool in_str = false, esc = false;

	if (room > KIN_ARG_TEXT_MAX)
		room = KIN_ARG_TEXT_MAX;
	for (size_t i = 0; i < len && n < room; i++) {
		char c = txt[i];

		if (in_str) {
			if (esc)
				esc = false;
			else if (c == '\\')
				esc = true;
			else if (c == '"')
				in_str = false;
		} else if (c == '"') {
			in_str = true;
		} else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
			continue;
		}
		o[n++] = c;
	}
	*out = o;
	a->used += n;
	return n;
}

static void fill_args(struct emit *x, const struct kin_event *e, struct tl_args *a)
{
	const struct json_doc *d = x->o->t->doc;

	a->n = 0;
	a->used = 0;
	if (e->cat[0])
		arg_str(a, "category", e->cat, strlen(e->cat));
	if (e->pid_str)
		arg_str(a, "trace_pid", e->pid_str, strlen(e->pid_str));
	else
		arg_s64(a, "trace_pid", e->pid);
	if (e->tid_str)
		arg_str(a, "trace_tid", e->tid_str, strlen(e->tid_str));
	else
		arg_s64(a, "trace_tid", e->tid);
	for (const struct json_node *m = json_first(d, e->args); m && a->n < TL_ARGS_MAX - 8;
	     m = json_next(d, m)) {
		const char *key = key_of(x, m->key);
		struct tl_arg *g;
		int64_t iv;
		size_t len;
		const char *txt;

		if (!key)
			break;
		g = &a->a[a->n];
		switch (m->type) {
		case JSON_STRING:
			arg_str(a, key, m->s, m->n);
			break;
		case JSON_NUMBER:
			if (!json_node__int(m, &iv)) {
				arg_s64(a, key, iv);
			} else {
				double v = json_node__double(m);

				*g = (struct tl_arg){ .key = key, .type = TLA_F3,
						      .v.d = isfinite(v) ? round(v * 1000) / 1000 : 0 };
				a->n++;
			}
			break;
		case JSON_BOOL:
			*g = (struct tl_arg){ .key = key, .type = TLA_BOOL, .v.b = m->b };
			a->n++;
			break;
		case JSON_NULL:
			*g = (struct tl_arg){ .key = key, .type = TLA_NULL };
			a->n++;
			break;
		default:
			txt = json_node__text(d, m, &len);
			len = compact(a, txt, len, &txt);
			arg_str(a, key, txt, len);
			break;
		}
	}
}

static size_t group_name(const struct emit *x, const struct kgroup *g, char *buf, size_t len)
{
	const char *kind = g->kind == KIN_GPU ? "GPU " : "pid ";
	int n;

	const char *prefix = tl_model__remap(x->o->m)->prefix;

	if (g->pid_str)
		n = snprintf(buf, len, "%sPyTorch profiler: %s", prefix, g->pid_str);
	else
		n = snprintf(buf, len, "%sPyTorch profiler: %s%lld", prefix, kind, (long long)g->pid);
	if (x->o->index)
		n += snprintf(buf + n, len - (size_t)n, " (trace %u)", x->o->index + 1);
	return (size_t)n < len ? (size_t)n : len - 1;
}

static size_t lane_name(const struct emit *x, const struct ktrack *t, uint32_t l, char *buf,
			size_t len)
{
	const struct kgroup *g = &x->g[t->group];
	const char *what = g->kind == KIN_GPU ? "stream " : "tid ";
	int n;

	if (t->tid_str)
		n = snprintf(buf, len, "%s%s", g->real ? "PyTorch · " : "", t->tid_str);
	else if (t->real_tid)
		n = snprintf(buf, len, "PyTorch · tid %u", t->real_tid);
	else
		n = snprintf(buf, len, "%s%s%lld", g->real ? "PyTorch · " : "", what,
			     (long long)t->tid);
	if (l > 0)
		n += snprintf(buf + n, len - (size_t)n, " · %u", l + 1);
	return (size_t)n < len ? (size_t)n : len - 1;
}

uint64_t kin_overlay__first(const struct kin_overlay *o)
{
	int64_t t = o->t->t_min + o->a.offset;

	return tl_ts(o->m, t > 0 ? (uint64_t)t : 0);
}

int kin_overlay__emit(struct kin_overlay *o, struct tl_sink *s, struct kin_ids *ids,
		      uint64_t *events)
{
	const struct kin_trace *t = o->t;
	struct emit x = { .o = o };
	uint32_t *idx = NULL;
	struct tl_gslice *g = NULL;
	uint64_t wrote = 0;
	char name[256];
	int rc = -ENOMEM;

	s->m = o->m;
	x.track_of = calloc(t->n, sizeof(uint32_t));
	x.lane_of = calloc(t->n, sizeof(uint32_t));
	idx = calloc(t->n, sizeof(uint32_t));
	if (!x.track_of || !x.lane_of || !idx)
		goto out;
	rc = assign(&x);
	if (!rc)
		rc = nest(&x, idx);
	if (rc)
		goto out;
	for (size_t i = 0; i < x.ng; i++) {
		struct kgroup *g = &x.g[i];

		if (g->real) {
			g->out_pid = tl_pid(o->m, (uint32_t)g->pid);
			continue;
		}
		g->out_pid = ids->pid++;
		s->ops->group(s, g->out_pid, name, group_name(&x, g, name, sizeof(name)),
			      KIN_PROC_ORDER + (g->out_pid - KIN_PID_BASE));
	}
	for (size_t i = 0; i < x.ntr; i++) {
		struct ktrack *tr = &x.tr[i];

		tr->tid0 = ids->tid;
		ids->tid += tr->nlanes;
		for (uint32_t l = 0; l < tr->nlanes; l++)
			(x.g[tr->group].real ? s->ops->proc_lane : s->ops->gpu_lane)(
				s, x.g[tr->group].out_pid, tr->tid0 + l, name,
				lane_name(&x, tr, l, name, sizeof(name)),
				KIN_LANE_ORDER + (tr->tid0 + l - KIN_TID_BASE));
	}
	g = malloc(sizeof(*g));
	if (!g)
		rc = -ENOMEM;
	for (size_t i = 0; i < t->n && !rc; i++) {
		const struct kin_event *e = &t->ev[idx[i]];
		const struct ktrack *tr = &x.tr[x.track_of[idx[i]]];
		int64_t ts = e->ts + o->a.offset;

		memset(g, 0, sizeof(*g));
		g->cat = "pytorch";
		g->name = e->name;
		g->ts = ts > 0 ? (uint64_t)ts : 0;
		g->dur = e->dur;
		g->pid = x.g[tr->group].out_pid;
		g->tid = tr->tid0 + x.lane_of[idx[i]];
		g->track = x.g[tr->group].real ? TL_GS_HOSTLANE : TL_GS_GPULANE;
		fill_args(&x, e, &s->args);
		s->ops->gslice(s, g);
		wrote++;
		rc = s->ops->error(s);
	}
	if (events)
		*events += wrote;
out:
	for (size_t i = 0; i < x.nkeys; i++)
		free(x.keys[i]);
	free(x.keys);
	free(x.raw_keys);
	free(x.g);
	free(x.tr);
	free(x.track_of);
	free(x.lane_of);
	free(idx);
	free(g);
	return rc;
}
