// SPDX-License-Identifier: MIT
/*
 * faults.c — page faults on file mappings in the timeline: the args of a
 * page_fault slice, and the fault counts per file (FAULT_COUNT records,
 * cumulative per process) summed into the trace info.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "timeline/timeline_priv.h"

void tl_model__fault_args(const struct gpuio_vfs_event *e, struct tl_args *a)
{
	if (e->offset >= 0)
		tl_arg_s64(a, "offset", e->offset);
	tl_arg_u64(a, "bytes", e->ret > 0 ? (uint64_t)e->ret : 0);
	tl_arg_u64(a, "pages", e->cache_miss_pages);
	tl_arg_us(a, "latency_us", e->dur_ns > INT64_MAX ? INT64_MAX : (int64_t)e->dur_ns);
	/* where the pages it brought in begin (readahead reads around and ahead) */
	if (e->offset2 >= 0)
		tl_arg_s64(a, "readahead_offset", e->offset2);
	tl_arg_bool(a, "major", e->flags & GPUIO_PF_MAJOR);
	tl_arg_bool(a, "slept", e->flags & GPUIO_PF_SLEPT);
	if (e->flags & GPUIO_PF_WRITE)
		tl_arg_bool(a, "write", true);
	if (e->flags & GPUIO_PF_CUT)
		tl_arg_bool(a, "cut", true);
}

/* The latest counts of one (process, file): the records are cumulative. */
int tl_fault_count(struct tl_model *x, const struct gpuio_fault_count *e)
{
	struct tl_fault *f;
	uint64_t *v;
	int rc = kmap__upsert(&x->fault_map, (uint64_t)e->hdr.pid << 32 | e->dev, e->ino, &v);

	if (rc < 0)
		return rc;
	if (rc) {
		if (array_grow((void **)&x->faults, &x->cfaults, x->nfaults + 1, sizeof(*x->faults)))
			return -ENOMEM;
		*v = x->nfaults++;
	}
	f = &x->faults[*v];
	f->dev = e->dev;
	f->ino = e->ino;
	f->minor = e->minor;
	f->major = e->major;
	return 0;
}

static int by_file(const void *a, const void *b)
{
	const struct tl_fault *p = a, *q = b;

	if (p->dev != q->dev)
		return p->dev < q->dev ? -1 : 1;
	return p->ino < q->ino ? -1 : p->ino > q->ino;
}

static int by_count(const void *a, const void *b)
{
	const struct tl_fault *p = a, *q = b;
	uint64_t n = p->minor + p->major, m = q->minor + q->major;

	if (n != m)
		return n > m ? -1 : 1;
	return by_file(a, b);
}

#define FAULT_INFO_FILES 8      /* files listed one by one in the info */

void tl_model__fault_info(struct tl_model *x, struct tl_args *a)
{
	static const char *const keys[FAULT_INFO_FILES] = { "0", "1", "2", "3", "4", "5", "6", "7" };
	uint64_t minor = 0, major = 0;
	size_t nfiles = 0, listed;
	struct tl_fault *t;
	struct tl_arg *d, *l;

	if (!x->nfaults)
		return;
	/* per file, over its processes: sorted by file, then summed in place */
	t = malloc(x->nfaults * sizeof(*t));
	if (!t)
		return;         /* no summary rather than a wrong one */
	memcpy(t, x->faults, x->nfaults * sizeof(*t));
	qsort(t, x->nfaults, sizeof(*t), by_file);
	for (size_t i = 0; i < x->nfaults; i++) {
		minor += t[i].minor;
		major += t[i].major;
		if (nfiles && t[nfiles - 1].dev == t[i].dev && t[nfiles - 1].ino == t[i].ino) {
			t[nfiles - 1].minor += t[i].minor;
			t[nfiles - 1].major += t[i].major;
		} else {
			t[nfiles++] = t[i];
		}
	}
	qsort(t, nfiles, sizeof(*t), by_count);
	listed = nfiles < FAULT_INFO_FILES ? nfiles : FAULT_INFO_FILES;

	d = tl_arg_add(a, "page_faults", TLA_DICT);
	d->len = 5;
	tl_arg_u64(a, "files", nfiles);
	tl_arg_u64(a, "minor", minor);
	tl_arg_u64(a, "major", major);
	l = tl_arg_add(a, "by_file", TLA_DICT);
	l->len = (uint32_t)listed;
	for (size_t i = 0; i < listed; i++) {
		const struct tl_fault *f = &t[i];
		struct tl_arg *e = tl_arg_add(a, keys[i], TLA_DICT);
		uint32_t plen;
		const char *path = model_session__path(x->s, f->dev, f->ino, &plen);
		char buf[64];

		e->len = 3;
		if (path) {
			tl_arg_str(a, "path", path, plen, true);
			a->a[a->n - 1].stable = !x->online;
		} else {
			snprintf(buf, sizeof(buf), "?dev=%u:%u,ino=%llu", f->dev >> 20, f->dev & 0xfffff,
				 (unsigned long long)f->ino);
			tl_arg_copy(a, "path", buf, true);
		}
		tl_arg_u64(a, "minor", f->minor);
		tl_arg_u64(a, "major", f->major);
	}
	tl_arg_u64(a, "files_not_listed", nfiles - listed);
	free(t);
}
