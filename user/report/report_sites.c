// SPDX-License-Identifier: MIT
/*
 * report_sites.c — call sites, as the report counts them (report_sites.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/kmap.h"
#include "lib/sort.h"
#include "model/stacks.h"
#include "report/report_model.h"
#include "report/report_sites.h"

#define PEND 64                         /* a thread's calls whose records are still to come:
                                         * a batch (16) and the faults and calls between */
#define SLEPT 8                         /* a thread's last sleeps, for calls that have none */
#define SITE_NONE UINT64_MAX

struct pend {
	uint32_t seq[PEND], ref[PEND];
	unsigned head;
	uint64_t sleep_ts[SLEPT];
	uint32_t sleep_ref[SLEPT];
	unsigned sleep_head;
};

struct fsum {
	size_t file;
	uint32_t ref;
	uint64_t n, bytes, ns;
};

struct rpt_sites {
	struct kmap ts_map;             /* (tid, ref) -> tstacks[] + 1 */
	struct rpt_thread_stack *tstacks;
	size_t ntstacks, ctstacks;
	struct kmap pend_map;           /* (tid, 0) -> pends[] + 1 */
	struct pend *pends;
	size_t npends, cpends;
	struct rpt_stack_ev *ev;        /* by thread, then time, after pass 1 */
	size_t nev, cev;
	struct kmap ev_map;             /* (tid, 0) -> first ev + 1, count in the high half */
	struct kmap fsum_map;           /* (file, ref) -> fsums[] + 1 */
	struct fsum *fsums;
	size_t nfsums, cfsums;
	/* after pass 1 */
	struct kmap site_of;            /* (ref, 0) -> site + 1, or SITE_NONE */
	struct kmap site_map;           /* the site's text hash -> sites[] + 1 */
	struct rpt_site *sites;
	size_t nsites, csites;
	struct rpt_site_sum *by_file;   /* every file's sites, back to back */
	size_t nby_file;
	size_t *file_first, *file_n;    /* per files[] */
};

static struct rpt_sites *sites_of(struct rpt_model *m)
{
	if (!m->sites)
		m->sites = calloc(1, sizeof(*m->sites));
	return m->sites;
}

bool rpt_sites__any(const struct rpt_model *m)
{
	return m->sites && m->sites->nsites;
}

/* ---- pass 1 ---- */

static int ev_add(struct rpt_sites *S, uint64_t ts, uint32_t tid, uint32_t ref, uint8_t what)
{
	if (array_grow((void **)&S->ev, &S->cev, S->nev + 1, sizeof(*S->ev)))
		return -ENOMEM;
	S->ev[S->nev++] = (struct rpt_stack_ev){ .ts = ts, .tid = tid, .ref = ref, .what = what };
	return 0;
}

static struct rpt_thread_stack *tstack(struct rpt_sites *S, uint32_t pid, uint32_t tid,
				       uint32_t ref)
{
	uint64_t *v;

	if (kmap__upsert(&S->ts_map, tid, ref, &v) < 0)
		return NULL;
	if (!*v) {
		if (array_grow((void **)&S->tstacks, &S->ctstacks, S->ntstacks + 1,
			       sizeof(*S->tstacks)))
			return NULL;
		S->tstacks[S->ntstacks] = (struct rpt_thread_stack){ .pid = pid, .tid = tid,
								     .ref = ref };
		*v = ++S->ntstacks;
	}
	return &S->tstacks[*v - 1];
}

/* A thread's calls and sleeps whose records are still to come */
static struct pend *pend_of(struct rpt_sites *S, uint32_t tid)
{
	uint64_t *v;

	if (kmap__upsert(&S->pend_map, tid, 0, &v) < 0)
		return NULL;
	if (!*v) {
		if (array_grow((void **)&S->pends, &S->cpends, S->npends + 1, sizeof(*S->pends)))
			return NULL;
		memset(&S->pends[S->npends], 0, sizeof(S->pends[0]));
		*v = ++S->npends;
	}
	return &S->pends[*v - 1];
}

int rpt_sites__stack_at(struct rpt_model *m, const struct model_stack_at *a)
{
	struct rpt_sites *S = sites_of(m);
	struct pend *p;

	if (!S)
		return -ENOMEM;
	if (a->what == GPUIO_SA_SAMPLE && a->stack) {
		struct rpt_thread_stack *t = tstack(S, a->h->pid, a->h->tid, a->stack);

		if (!t)
			return -ENOMEM;
		t->samples++;
	}
	if (!a->stack)
		return a->what == GPUIO_SA_CALL ? 0 : ev_add(S, a->h->ts, a->h->tid, 0, a->what);
	if (!(p = pend_of(S, a->h->tid)))
		return -ENOMEM;
	if (a->what == GPUIO_SA_CALL) {
		p->seq[p->head % PEND] = a->seq;
		p->ref[p->head % PEND] = a->stack;
		p->head++;
		return 0;
	}
	if (a->what == GPUIO_SA_SLEEP) {
		p->sleep_ts[p->sleep_head % SLEPT] = a->h->ts;
		p->sleep_ref[p->sleep_head % SLEPT] = a->stack;
		p->sleep_head++;
	}
	return ev_add(S, a->h->ts, a->h->tid, a->stack, a->what);
}

/* A sleep's stack is its call's where the call had none of its own (stacks
 * on sleeps only): the thread slept inside the call, so it was there */
uint32_t rpt_sites__call_stack(struct rpt_model *m, uint32_t tid, uint32_t seq, uint64_t ts,
			       uint64_t end)
{
	uint64_t *v = m->sites ? kmap__get(&m->sites->pend_map, tid, 0) : NULL;
	struct pend *p;

	if (!v)
		return 0;
	p = &m->sites->pends[*v - 1];
	for (unsigned i = 0; i < PEND; i++)
		if (p->ref[i] && p->seq[i] == seq) {
			uint32_t ref = p->ref[i];

			p->ref[i] = 0;
			return ref;
		}
	for (unsigned i = 0; i < SLEPT; i++)
		if (p->sleep_ref[i] && p->sleep_ts[i] >= ts && p->sleep_ts[i] <= end)
			return p->sleep_ref[i];
	return 0;
}

int rpt_sites__call(struct rpt_model *m, uint32_t pid, uint32_t tid, uint64_t ts, uint64_t end,
		    uint32_t ref, bool fetch, uint64_t bytes)
{
	struct rpt_sites *S = m->sites;
	struct rpt_thread_stack *t;

	if (!S || !ref)
		return 0;
	if (ev_add(S, ts, tid, ref, GPUIO_SA_CALL) || ev_add(S, end, tid, ref, GPUIO_SA_CALL))
		return -ENOMEM;
	if (!fetch)
		return 0;
	t = tstack(S, pid, tid, ref);
	if (!t)
		return -ENOMEM;
	t->fetches++;
	t->bytes += bytes;
	t->ns += end - ts;
	return 0;
}

int rpt_sites__file_call(struct rpt_model *m, size_t file, uint32_t ref, uint64_t bytes,
			 uint64_t ns)
{
	struct rpt_sites *S = m->sites;
	uint64_t *v;

	if (!S || !ref)
		return 0;
	if (kmap__upsert(&S->fsum_map, file, ref, &v) < 0)
		return -ENOMEM;
	if (!*v) {
		if (array_grow((void **)&S->fsums, &S->cfsums, S->nfsums + 1, sizeof(*S->fsums)))
			return -ENOMEM;
		S->fsums[S->nfsums] = (struct fsum){ .file = file, .ref = ref };
		*v = ++S->nfsums;
	}
	S->fsums[*v - 1].n++;
	S->fsums[*v - 1].bytes += bytes;
	S->fsums[*v - 1].ns += ns;
	return 0;
}

/* ---- sites ---- */

static uint64_t text_hash(const char *s, uint64_t h)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

static int site_intern(struct rpt_sites *S, const struct model_frame *f, bool library)
{
	uint64_t a = text_hash(f->file, 0xcbf29ce484222325ull);
	uint64_t b = text_hash(f->func, (uint64_t)(uint32_t)f->line * 0x9e3779b97f4a7c15ull + library);
	uint64_t *v;

	if (kmap__upsert(&S->site_map, a, b, &v) < 0)
		return -1;
	if (!*v) {
		if (array_grow((void **)&S->sites, &S->csites, S->nsites + 1, sizeof(*S->sites)))
			return -1;
		S->sites[S->nsites] = (struct rpt_site){ .file = f->file, .func = f->func,
							 .line = f->line, .library = library };
		*v = ++S->nsites;
	}
	return (int)*v - 1;
}

int rpt_sites__of(const struct rpt_model *m, uint32_t ref)
{
	struct rpt_sites *S = m->sites;
	const struct model_stack *k;
	struct model_frame f;
	uint64_t *v;
	int site;

	if (!S || !ref)
		return -1;
	if (kmap__upsert(&S->site_of, ref, 0, &v) < 0)
		return -1;
	if (*v)
		return *v == SITE_NONE ? -1 : (int)*v - 1;
	*v = SITE_NONE;
	k = model_session__stack(m->s, ref);
	if (!k || !k->nframes)
		return -1;
	for (unsigned i = 0; i < k->nframes; i++) {
		model_session__frame(m->s, k, i, &f);
		if (!model_frame__library(&f)) {
			site = site_intern(S, &f, false);
			goto found;
		}
	}
	/* all library: its innermost Python frame (a native one says less) */
	model_session__frame(m->s, k, k->nnative < k->nframes ? k->nnative : 0, &f);
	site = site_intern(S, &f, true);
found:
	v = kmap__get(&S->site_of, ref, 0);     /* the intern may have grown nothing here */
	if (v && site >= 0)
		*v = (uint64_t)site + 1;
	return site;
}

int rpt_sites__frame(const struct rpt_model *m, uint32_t ref, unsigned i)
{
	const struct model_stack *k = ref && m->sites ? model_session__stack(m->s, ref) : NULL;
	struct model_frame f;

	if (!k || i >= k->nframes)
		return -1;
	model_session__frame(m->s, k, i, &f);
	return site_intern(m->sites, &f, model_frame__library(&f));
}

#define HELD_SITES 16
int rpt_sites__held(const struct rpt_model *m, uint32_t tid, uint64_t s, uint64_t e)
{
	size_t n, lo = 0, hi, ns = 0, best = 0;
	const struct rpt_stack_ev *ev = rpt_sites__thread(m, tid, &n);
	struct { int site; uint64_t ns; } v[HELD_SITES];

	/* the stacks seen in [s, e) (one from before says little: the thread
	 * has moved on since), each until the next */
	for (hi = n; lo < hi;) {
		size_t mid = lo + (hi - lo) / 2;

		if (ev[mid].ts < s)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < n && ev[i].ts < e; i++) {
		uint64_t a = ev[i].ts, b = i + 1 < n && ev[i + 1].ts < e ? ev[i + 1].ts : e;
		int site = ev[i].ref ? rpt_sites__of(m, ev[i].ref) : -1;
		size_t j;

		if (site < 0 || b <= a)
			continue;
		for (j = 0; j < ns && v[j].site != site; j++)
			;
		if (j == ns) {
			if (ns == HELD_SITES)
				continue;
			v[ns++] = (typeof(v[0])){ .site = site };
		}
		v[j].ns += b - a;
	}
	for (size_t j = 1; j < ns; j++)
		if (v[j].ns > v[best].ns)
			best = j;
	return ns ? v[best].site : -1;
}

int rpt_sites__func_of(const struct rpt_model *m, uint32_t ref)
{
	const struct model_stack *k = ref && m->sites ? model_session__stack(m->s, ref) : NULL;
	struct model_frame f;

	if (!k || k->nnative >= k->nframes)
		return -1;
	model_session__frame(m->s, k, k->nnative, &f);    /* by Python function */
	f.line = -1;
	return site_intern(m->sites, &f, model_frame__library(&f));
}

const struct rpt_site *rpt_sites__get(const struct rpt_model *m, int site)
{
	return m->sites && site >= 0 && (size_t)site < m->sites->nsites ? &m->sites->sites[site] :
	       NULL;
}

const char *rpt_sites__text(const struct rpt_model *m, int site, char *buf, size_t len)
{
	const struct rpt_site *s = rpt_sites__get(m, site);

	if (!s)
		snprintf(buf, len, "?");
	else if (s->line >= 0)
		snprintf(buf, len, "%s:%d %s", s->file, s->line, s->func);
	else
		snprintf(buf, len, "%s %s", s->func, s->file);     /* a function: its name first */
	return buf;
}

size_t rpt_sites__chain(const struct rpt_model *m, uint32_t ref, char *buf, size_t len)
{
	const struct model_stack *k = ref ? model_session__stack(m->s, ref) : NULL;
	size_t at = 0;

	buf[0] = 0;
	for (unsigned i = 0; k && i < k->nframes && at + 1 < len; i++) {
		struct model_frame f;
		int n;

		model_session__frame(m->s, k, i, &f);
		if (f.native)
			n = snprintf(buf + at, len - at, "%s%s %s", i ? " <- " : "", f.func, f.file);
		else
			n = snprintf(buf + at, len - at, "%s%s:%d %s", i ? " <- " : "", f.file, f.line,
				     f.func);
		at = n < 0 ? at : at + (size_t)n < len ? at + (size_t)n : len - 1;
	}
	return at;
}

/* ---- folding ---- */

int rpt_sites__add(struct rpt_site_sum **out, size_t *n, size_t *cap, int site, uint32_t ref,
		   uint64_t count, uint64_t bytes, uint64_t ns)
{
	for (size_t i = 0; i < *n; i++)
		if ((*out)[i].site == site) {
			(*out)[i].n += count;
			(*out)[i].bytes += bytes;
			(*out)[i].ns += ns;
			return 0;
		}
	if (array_grow((void **)out, cap, *n + 1, sizeof(**out)))
		return -ENOMEM;
	(*out)[(*n)++] = (struct rpt_site_sum){ .site = site, .ref = ref, .n = count, .bytes = bytes,
						.ns = ns };
	return 0;
}

static int by_ns(const void *pa, const void *pb)
{
	const struct rpt_site_sum *a = pa, *b = pb;

	if (a->ns != b->ns)
		return a->ns > b->ns ? -1 : 1;
	if (a->bytes != b->bytes)
		return a->bytes > b->bytes ? -1 : 1;
	if (a->n != b->n)
		return a->n > b->n ? -1 : 1;
	return a->site - b->site;
}

void rpt_sites__sort(struct rpt_site_sum *v, size_t n)
{
	if (n > 1)
		qsort(v, n, sizeof(*v), by_ns);
}

/* ---- after pass 1 ---- */

static int by_file(const void *pa, const void *pb)
{
	const struct fsum *a = pa, *b = pb;

	return a->file != b->file ? (a->file < b->file ? -1 : 1) : (a->ref > b->ref) - (a->ref < b->ref);
}

/* Every file's calls folded by site (a file's stacks that meet at a site are one row) */
static int files_by_site(struct rpt_model *m)
{
	struct rpt_sites *S = m->sites;
	struct rpt_site_sum *tmp = NULL;
	size_t tcap = 0, cap = 0;
	int rc = -ENOMEM;

	S->file_first = calloc(m->nfiles + 1, sizeof(*S->file_first));
	S->file_n = calloc(m->nfiles + 1, sizeof(*S->file_n));
	if (!S->file_first || !S->file_n)
		return -ENOMEM;
	if (S->nfsums)
		qsort(S->fsums, S->nfsums, sizeof(*S->fsums), by_file);
	for (size_t i = 0; i < S->nfsums;) {
		size_t file = S->fsums[i].file, n = 0;

		for (; i < S->nfsums && S->fsums[i].file == file; i++) {
			const struct fsum *f = &S->fsums[i];
			int site = rpt_sites__of(m, f->ref);

			if (site >= 0 &&
			    rpt_sites__add(&tmp, &n, &tcap, site, f->ref, f->n, f->bytes, f->ns))
				goto out;
		}
		if (!n || file >= m->nfiles)
			continue;
		if (array_grow((void **)&S->by_file, &cap, S->nby_file + n, sizeof(*S->by_file)))
			goto out;
		rpt_sites__sort(tmp, n);
		memcpy(S->by_file + S->nby_file, tmp, n * sizeof(*tmp));
		S->file_first[file] = S->nby_file;
		S->file_n[file] = n;
		S->nby_file += n;
	}
	rc = 0;
out:
	free(tmp);
	return rc;
}

static int ev_by_tid(const void *pa, const void *pb)
{
	const struct rpt_stack_ev *a = pa, *b = pb;

	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return (a->ts > b->ts) - (a->ts < b->ts);
}

int rpt_sites__finish(struct rpt_model *m)
{
	struct rpt_sites *S = m->sites;
	uint64_t *v;

	if (!S)
		return 0;
	if (S->nev > 1)
		qsort(S->ev, S->nev, sizeof(*S->ev), ev_by_tid);
	for (size_t i = 0; i < S->nev; i++) {
		if (kmap__upsert(&S->ev_map, S->ev[i].tid, 0, &v) < 0)
			return -ENOMEM;
		if (!*v)
			*v = (uint64_t)i + 1;
		*v += 1ull << 32;       /* the count, above the index */
	}
	return files_by_site(m);
}

const struct rpt_site_sum *rpt_sites__file(const struct rpt_model *m, size_t file, size_t *n)
{
	struct rpt_sites *S = m->sites;

	*n = 0;
	if (!S || !S->file_n || file >= m->nfiles || !S->file_n[file])
		return NULL;
	*n = S->file_n[file];
	return S->by_file + S->file_first[file];
}

const struct rpt_stack_ev *rpt_sites__thread(const struct rpt_model *m, uint32_t tid, size_t *n)
{
	uint64_t *v = m->sites ? kmap__get(&m->sites->ev_map, tid, 0) : NULL;

	*n = v ? (size_t)(*v >> 32) : 0;
	return v ? &m->sites->ev[(uint32_t)*v - 1] : NULL;
}

const struct rpt_thread_stack *rpt_sites__thread_stacks(const struct rpt_model *m, size_t *n)
{
	*n = m->sites ? m->sites->ntstacks : 0;
	return m->sites ? m->sites->tstacks : NULL;
}

unsigned rpt_sites__sample_hz(const struct rpt_model *m)
{
	/* the header's samples layer says its rate: "99Hz" */
	return (unsigned)strtoul(m->hdr->sample_mode, NULL, 10);
}

void rpt_sites__free(struct rpt_model *m)
{
	struct rpt_sites *S = m->sites;

	if (!S)
		return;
	kmap__free(&S->ts_map);
	free(S->tstacks);
	kmap__free(&S->pend_map);
	kmap__free(&S->ev_map);
	kmap__free(&S->fsum_map);
	kmap__free(&S->site_of);
	kmap__free(&S->site_map);
	free(S->pends);
	free(S->ev);
	free(S->fsums);
	free(S->sites);
	free(S->by_file);
	free(S->file_first);
	free(S->file_n);
	free(S);
	m->sites = NULL;
}
