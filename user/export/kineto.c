// SPDX-License-Identifier: MIT
/*
 * kineto.c — a PyTorch profiler trace read into events (kineto.h): the
 * file (plain or gzip) whole into memory, parsed (lib/json_read.h), told
 * apart from other Chrome traces, its slices and instants kept with their
 * times in exact ns.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>
#include "export/kineto.h"
#include "lib/kmap.h"
#include "lib/log.h"
#include "lib/units.h"

/* Events before 2001-09-09 in µs since the epoch: a bare ts this large is absolute. */
#define KIN_EPOCH_US_MIN 1000000000000000ll

static int read_all(const char *path, char **out, size_t *len)
{
	gzFile f = gzopen(path, "rb");
	size_t cap = 1 << 16, n = 0;
	char *buf;

	if (!f) {
		int e = errno ? errno : ENOMEM;

		pr_err("--pytorch %s: cannot read it: %s", path, strerror(e));
		return -e;
	}
	buf = malloc(cap);
	for (;;) {
		int got;

		if (!buf) {
			gzclose(f);
			pr_err("--pytorch %s: out of memory", path);
			return -ENOMEM;
		}
		if (cap - n < (1 << 15)) {
			char *nb = cap > SIZE_MAX / 2 ? NULL : realloc(buf, cap * 2);

			if (!nb) {
				free(buf);
				buf = NULL;
				continue;
			}
			buf = nb;
			cap *= 2;
		}
		got = gzread(f, buf + n, (unsigned)(cap - n - 1 > (1u << 30) ? 1u << 30 : cap - n - 1));
		if (got < 0) {
			int e;
			const char *msg = gzerror(f, &e);

			pr_err("--pytorch %s: cannot read it: %s", path,
			       e == Z_ERRNO ? strerror(errno) : msg);
			free(buf);
			gzclose(f);
			return -EIO;
		}
		if (got == 0)
			break;
		n += (size_t)got;
	}
	gzclose(f);
	buf[n] = 0;
	*out = buf;
	*len = n;
	return 0;
}

static bool is_gpu_cat(const char *cat)
{
	static const char *const gpu[] = {
		"kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation", "memcpy", "memset",
		"concurrent_kernel", "mtia_ccp_events", "gpu_instant_event",
	};

	for (size_t i = 0; i < ARRAY_SIZE(gpu); i++)
		if (!strcasecmp(cat, gpu[i]))
			return true;
	return false;
}

/* Categories only Kineto writes: a trace holding one is a PyTorch profiler trace. */
static bool is_kineto_cat(const char *cat)
{
	static const char *const known[] = {
		"cpu_op", "user_annotation", "python_function", "cuda_runtime", "cuda_driver",
		"cpu_instant_event", "ac2g", "privateuse1_runtime", "privateuse1_driver",
		"Trace", "overhead", "fwdbwd",
	};

	if (is_gpu_cat(cat))
		return true;
	for (size_t i = 0; i < ARRAY_SIZE(known); i++)
		if (!strcasecmp(cat, known[i]))
			return true;
	return false;
}

/* A pid or tid: a number (*s NULL) or a string; false when neither. */
static bool read_id(const struct json_node *n, int64_t *v, const char **s)
{
	*v = 0;
	*s = NULL;
	if (!n)
		return true;    /* absent: 0 */
	if (n->type == JSON_STRING) {
		char *end;
		long long x = strtoll(n->s, &end, 10);

		/* "7" is 7; "stream 7", "CPU functions" stay strings */
		if (n->n && !*end && end != n->s) {
			*v = x;
			return true;
		}
		*s = n->s;
		return true;
	}
	if (n->type == JSON_NUMBER) {
		bool frac;

		return !json_node__fixed(n, 0, v, &frac);
	}
	return false;
}

/* "12.345" µs -> ns; whether it had a fraction of a µs */
static int read_us(const struct json_node *n, int64_t *ns, bool *sub_us)
{
	bool frac;
	int err = json_node__fixed(n, 3, ns, &frac);

	if (err)
		return err;
	for (size_t i = 0; i < n->len; i++)
		if (n->s[i] == '.' || n->s[i] == 'e' || n->s[i] == 'E')
			*sub_us = true;
	return 0;
}

static int add_event(struct kin_trace *t, const struct json_doc *d, const struct json_node *e,
		     size_t idx)
{
	const struct json_node *ph = json_get(d, e, "ph"), *name = json_get(d, e, "name");
	const struct json_node *cat = json_get(d, e, "cat"), *ts = json_get(d, e, "ts");
	const struct json_node *dur = json_get(d, e, "dur");
	struct kin_event *k;
	bool sub_us = false;
	char p;

	if (e->type != JSON_OBJECT || !ph || ph->type != JSON_STRING || ph->n != 1) {
		t->skipped++;
		return 0;
	}
	p = ph->s[0];
	if (p == 'M') {
		const struct json_node *args = json_get(d, e, "args"), *nm = json_get(d, args, "name");
		struct kin_name *kn;
		int64_t tid;
		const char *ts_;

		if (!name || name->type != JSON_STRING || !nm || nm->type != JSON_STRING)
			return 0;
		if (strcmp(name->s, "process_name") && strcmp(name->s, "thread_name"))
			return 0;
		if (array_grow((void **)&t->names, &t->cnames, t->nnames + 1, sizeof(*t->names)))
			return -ENOMEM;
		kn = &t->names[t->nnames];
		if (!read_id(json_get(d, e, "pid"), &kn->pid, &kn->pid_str) ||
		    !read_id(json_get(d, e, "tid"), &tid, &ts_))
			return 0;
		kn->tid = !strcmp(name->s, "process_name") ? -1 : tid;
		kn->name = nm->s;
		t->nnames++;
		return 0;
	}
	if (p != 'X' && p != 'i' && p != 'I') {
		t->skipped++;
		return 0;
	}
	if (array_grow((void **)&t->ev, &t->cap, t->n + 1, sizeof(*t->ev)))
		return -ENOMEM;
	k = &t->ev[t->n];
	memset(k, 0, sizeof(*k));
	k->name = name && name->type == JSON_STRING ? name->s : "";
	k->cat = cat && cat->type == JSON_STRING ? cat->s : "";
	if (!ts || read_us(ts, &k->ts, &sub_us)) {
		pr_err("--pytorch %s: event %zu (\"%.80s\") has no usable ts", t->path, idx, k->name);
		return -EINVAL;
	}
	if (p == 'X') {
		int64_t dv = 0;

		if (dur && read_us(dur, &dv, &sub_us)) {
			pr_err("--pytorch %s: event %zu (\"%.80s\") has a dur that is not a number",
			       t->path, idx, k->name);
			return -EINVAL;
		}
		k->dur = dv > 0 ? (uint64_t)dv : 0;
	} else {
		k->instant = true;
	}
	if (!read_id(json_get(d, e, "pid"), &k->pid, &k->pid_str) ||
	    !read_id(json_get(d, e, "tid"), &k->tid, &k->tid_str)) {
		pr_err("--pytorch %s: event %zu (\"%.80s\") has a pid or tid that is neither a "
		       "number nor a string", t->path, idx, k->name);
		return -EINVAL;
	}
	k->args = json_get(d, e, "args");
	if (k->args && k->args->type != JSON_OBJECT)
		k->args = NULL;
	k->kind = is_gpu_cat(k->cat) ? KIN_GPU : KIN_CPU;
	k->order = (uint32_t)t->n;
	if (sub_us)
		t->quantum_ns = 1;
	if (k->kind == KIN_GPU)
		t->ngpu++;
	else
		t->ncpu++;
	t->n++;
	return 0;
}

/* What kind of trace the document is; the events array, or NULL (said). */
static const struct json_node *classify(struct kin_trace *t)
{
	const struct json_doc *d = t->doc;
	const struct json_node *root = json_doc__root(d), *evs = NULL, *base;
	bool kineto_marks = false, legacy = false, ours = false, kineto_cats = false;

	if (root && root->type == JSON_OBJECT) {
		evs = json_get(d, root, "traceEvents");
		kineto_marks = json_get(d, root, "schemaVersion") ||
			       json_get(d, root, "baseTimeNanoseconds") ||
			       json_get(d, root, "deviceProperties");
	} else if (root && root->type == JSON_ARRAY) {
		evs = root;
	}
	if (!evs || evs->type != JSON_ARRAY) {
		pr_err("--pytorch %s: not a PyTorch profiler trace: JSON, but neither Kineto's "
		       "{\"traceEvents\": [...]} nor torch's legacy event array", t->path);
		return NULL;
	}
	for (const struct json_node *e = json_first(d, evs); e; e = json_next(d, e)) {
		const struct json_node *pid = json_get(d, e, "pid"), *cat = json_get(d, e, "cat");
		const struct json_node *name = json_get(d, e, "name");

		if (pid && pid->type == JSON_STRING && !strcmp(pid->s, "CPU functions"))
			legacy = true;
		if (cat && cat->type == JSON_STRING && is_kineto_cat(cat->s))
			kineto_cats = true;
		if (name && name->type == JSON_STRING && !strcmp(name->s, "gpuio trace info"))
			ours = true;
	}
	if (ours) {
		pr_err("--pytorch %s: this is a gpuio export, not a PyTorch profiler trace "
		       "(merge its capture instead)", t->path);
		return NULL;
	}
	if (!kineto_marks && !kineto_cats && !legacy) {
		pr_err("--pytorch %s: not a PyTorch profiler trace: a Chrome trace with none of "
		       "Kineto's fields (schemaVersion, baseTimeNanoseconds, deviceProperties) or "
		       "categories (cpu_op, kernel, ...) and no \"CPU functions\" events", t->path);
		return NULL;
	}
	t->legacy = legacy && !kineto_marks && !kineto_cats;
	base = root->type == JSON_OBJECT ? json_get(d, root, "baseTimeNanoseconds") : NULL;
	if (base) {
		bool frac;

		if (json_node__fixed(base, 0, &t->base_ns, &frac) || t->base_ns < 0) {
			pr_err("--pytorch %s: baseTimeNanoseconds is not a time", t->path);
			return NULL;
		}
		t->absolute = true;
	}
	return evs;
}

int kin_trace__load(const char *path, struct kin_trace **out)
{
	struct kin_trace *t = calloc(1, sizeof(*t));
	const struct json_node *evs;
	char err[256];
	size_t idx = 0;
	int rc;

	*out = NULL;
	if (!t || !(t->path = strdup(path))) {
		free(t);
		pr_err("--pytorch %s: out of memory", path);
		return -ENOMEM;
	}
	t->quantum_ns = 1000;
	rc = read_all(path, &t->text, &t->text_len);
	if (rc)
		goto fail;
	rc = json_doc__parse(t->text, t->text_len, &t->doc, err, sizeof(err));
	if (rc) {
		pr_err("--pytorch %s: not JSON%s: %s", path,
		       strstr(err, "unexpected end") ? " (cut short?)" : "", err);
		goto fail;
	}
	rc = -EINVAL;
	evs = classify(t);
	if (!evs)
		goto fail;
	for (const struct json_node *e = json_first(t->doc, evs); e; e = json_next(t->doc, e)) {
		rc = add_event(t, t->doc, e, idx++);
		if (rc) {
			if (rc == -ENOMEM)
				pr_err("--pytorch %s: out of memory", path);
			goto fail;
		}
	}
	if (!t->n) {
		pr_err("--pytorch %s: the trace holds no events (a profile that recorded nothing?)",
		       path);
		rc = -EINVAL;
		goto fail;
	}
	t->t_min = INT64_MAX;
	t->t_max = INT64_MIN;
	for (size_t i = 0; i < t->n; i++) {
		int64_t end = t->ev[i].ts + (int64_t)t->ev[i].dur;

		if (t->ev[i].ts < t->t_min)
			t->t_min = t->ev[i].ts;
		if (end > t->t_max)
			t->t_max = end;
	}
	/* no base, but times since the epoch (PyTorch 2.0-2.2): absolute too */
	if (!t->absolute && !t->legacy && t->t_min > KIN_EPOCH_US_MIN * 1000) {
		t->absolute = true;
		t->base_ns = 0;
	}
	*out = t;
	return 0;
fail:
	kin_trace__free(t);
	return rc;
}

void kin_trace__free(struct kin_trace *t)
{
	if (!t)
		return;
	json_doc__free(t->doc);
	free(t->text);
	free(t->ev);
	free(t->names);
	free(t->path);
	free(t);
}
