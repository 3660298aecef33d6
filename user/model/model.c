// SPDX-License-Identifier: MIT
/*
 * model.c — capture -> the event model both exporters render (model.h):
 * the driver. exp_model__load() runs pass 1 (load.c, gpu_load.c), lays out
 * lanes (lanes.c) and the GPU side (gpu_layout.c), sorts processes and
 * threads; pass 2 streams the VFS records back (exp_model__next_vfs) for
 * events.c to describe.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "model/model.h"
#include "lib/log.h"
#include "model/model_priv.h"

static void model_reset_tables(struct exp_model *x);

static int cmp_proc(const void *pa, const void *pb)
{
	const struct proc_ent *a = pa, *b = pb;

	return a->pid < b->pid ? -1 : a->pid > b->pid;
}

static int cmp_thread(const void *pa, const void *pb)
{
	const struct thread_ent *a = pa, *b = pb;
	bool am = a->tid == a->pid, bm = b->tid == b->pid;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (am != bm)
		return am ? -1 : 1;
	return a->tid < b->tid ? -1 : a->tid > b->tid;
}

/*
 * flow_map is large (a key per request) and probed for every call: a call no
 * request names is answered from a bitmap of 16 bits per key that stays in
 * cache instead of a cache miss in the map.
 */
static int build_flow_filter(struct exp_model *x)
{
	size_t bits = 64;

	while (bits < x->flow_map.n * 16)
		bits *= 2;
	x->flow_bits = calloc(bits / 64, sizeof(uint64_t));
	if (!x->flow_bits)
		return -ENOMEM;
	x->flow_mask = bits - 1;
	for (size_t i = 0; i < x->flow_map.cap; i++) {
		const struct kslot *s = &x->flow_map.slots[i];

		if (s->used) {
			uint64_t h = kmap__hash(s->a, s->b) >> 20 & x->flow_mask;

			x->flow_bits[h / 64] |= 1ull << (h % 64);
		}
	}
	return 0;
}

uint64_t *flow_get(const struct exp_model *x, uint32_t tid, uint32_t seq)
{
	uint64_t h = kmap__hash(tid, seq) >> 20 & x->flow_mask;

	if (!(x->flow_bits[h / 64] & (1ull << (h % 64))))
		return NULL;
	return kmap__get(&x->flow_map, tid, seq);
}

static int sort_tasks(struct exp_model *x)
{
	int err = 0;

	if (!x->nprocs)
		return 0;
	qsort(x->procs, x->nprocs, sizeof(*x->procs), cmp_proc);
	qsort(x->threads, x->nthreads, sizeof(*x->threads), cmp_thread);
	/* the maps index the arrays: rebuild them after sorting */
	for (size_t i = 0; i < x->nprocs && !err; i++) {
		uint64_t *v;

		err = kmap__upsert(&x->proc_map, x->procs[i].pid, 0, &v) < 0 ? -ENOMEM : 0;
		if (!err)
			*v = i;
	}
	for (size_t i = 0; i < x->nthreads && !err; i++) {
		uint64_t *v;

		err = kmap__upsert(&x->thread_map, x->threads[i].pid, x->threads[i].tid, &v) < 0 ?
		      -ENOMEM : 0;
		if (!err)
			*v = i;
	}
	return err;
}

int exp_model__load(struct exp_model *x, const char *capture_path, const struct exp_remap *map)
{
	char errbuf[320];
	int err;

	memset(x, 0, sizeof(*x));
	x->p2_fd = -1;
	x->path = capture_path;
	if (map)
		x->map = *map;
	if (!x->map.prefix)
		x->map.prefix = "";
	err = gpuio_cap_reader__open(capture_path, &x->r, errbuf, sizeof(errbuf));
	if (err) {
		pr_err("%s%s", errbuf, gpuio_cap__open_hint(err));
		return err;
	}
	x->hdr = gpuio_cap_reader__header(x->r);
	x->tmin = UINT64_MAX;
	x->cache_known = x->hdr->pagecache_mode[0] && strcmp(x->hdr->pagecache_mode, "off") &&
			 strcmp(x->hdr->pagecache_mode, "none");

	err = pass_meta_fast(x);
	if (err == -EAGAIN) {
		model_reset_tables(x);
		err = pass_meta(x);
	}
	if (err == -EBADMSG) {
		pr_err("%s: %s; the capture is damaged from there on: record it again "
		       "(`gpuio info` shows what precedes the damage)", capture_path,
		       gpuio_cap_reader__error(x->r));
		return err;
	} else if (err) {
		pr_err("cannot read %s: %s", capture_path, strerror(-err));
		return err;
	}
	if (x->truncated)
		pr_warn("%s: capture cut short at offset %llu: %llu bytes of a partial record "
			"ignored (exporting the %llu whole records before it)", capture_path,
			(unsigned long long)x->trunc_offset, (unsigned long long)x->truncated,
			(unsigned long long)x->records);
	sched_tab__sort(&x->sched);
	err = layout_block(x);
	if (!err)
		err = layout_async(x);
	if (!err)
		err = gpu_layout(x);
	if (!err)
		err = sort_tasks(x);
	if (!err)
		err = build_flow_filter(x);
	if (err == -EBADMSG) {
		pr_err("%s: %s (the capture changed while it was being read?)", capture_path,
		       x->p2_err);
		return err;
	} else if (err) {
		pr_err("cannot export %s: %s", capture_path, strerror(-err));
		return err;
	}
	if (!x->map.ts_base)
		x->map.ts_base = exp_model__origin(x);
	x->st.records = x->records;
	x->st.truncated_bytes = x->truncated;
	x->st.processes = x->nprocs;
	x->st.disks = x->ndisks;
	for (size_t i = 0; i < x->nthreads; i++)
		x->st.threads++;
	for (size_t d = 0; d < x->ndisks; d++)
		x->st.lanes += x->devs[x->disk_order[d]].nlanes;
	return 0;
}

uint64_t exp_model__origin(const struct exp_model *x)
{
	uint64_t t = x->hdr->monotonic_ns;

	if (x->tmin < t)
		t = x->tmin;
	for (size_t i = 0; i < x->gpu.nacts; i++)
		if (x->gpu.acts[i].ts < t)
			t = x->gpu.acts[i].ts;
	for (size_t i = 0; i < x->gpu.nhosts; i++)
		if (x->gpu.hosts[i].ts < t)
			t = x->gpu.hosts[i].ts;
	return exp_ts(x, t);
}

void exp_model__free(struct exp_model *x)
{
	gpuio_cap_reader__close(x->r);
	x->r = NULL;
	if (x->p2_fd >= 0)
		close(x->p2_fd);
	x->p2_fd = -1;
	free(x->p2_buf);
	x->p2_buf = NULL;
	for (size_t i = 0; i < x->npaths; i++)
		free(x->paths[i].s);
	free(x->paths);
	for (size_t i = 0; i < x->nprocs; i++) {
		free(x->procs[i].args);
		free(x->procs[i].cgroup);
	}
	free(x->procs);
	free(x->threads);
	for (size_t i = 0; i < x->ndevs; i++)
		free(x->devs[i].bucket_bytes);
	free(x->devs);
	free(x->disk_order);
	free(x->blks);
	free(x->asyncs);
	free(x->ulanes);
	sched_tab__free(&x->sched);
	kmap__free(&x->path_map);
	kmap__free(&x->proc_map);
	kmap__free(&x->thread_map);
	kmap__free(&x->dev_map);
	kmap__free(&x->flow_map);
	free(x->flow_bits);
	x->flow_bits = NULL;
	gpu_free(&x->gpu);
	x->paths = NULL;
	x->procs = NULL;
	x->threads = NULL;
	x->devs = NULL;
	x->disk_order = NULL;
	x->blks = NULL;
	x->asyncs = NULL;
	x->ulanes = NULL;
	x->npaths = x->nprocs = x->nthreads = x->ndevs = x->nblks = x->nasyncs = x->nulanes = 0;
}

/* ---- pass 2 ---- */

#define P2_BUF_SIZE (1u << 20)

int exp_model__rewind(struct exp_model *x)
{
	x->vfs_ordinal = 0;
	x->async_next = 0;
	x->pass2_records = 0;
	x->p2_err[0] = 0;
	if (!model_in_place(x)) {
		if (gpuio_cap_reader__rewind(x->r) < 0) {
			snprintf(x->p2_err, sizeof(x->p2_err), "cannot read it again: %s",
				 strerror(errno));
			return -EBADMSG;
		}
		return 0;
	}
	if (x->p2_fd < 0) {
		x->p2_fd = open(x->path, O_RDONLY | O_CLOEXEC);
		if (x->p2_fd < 0) {
			snprintf(x->p2_err, sizeof(x->p2_err), "cannot open it again: %s",
				 strerror(errno));
			return -EBADMSG;
		}
	}
	if (!x->p2_buf) {
		struct stat st;

		/* a small capture, a small buffer (two of the largest records at least) */
		x->p2_cap = P2_BUF_SIZE;
		if (fstat(x->p2_fd, &st) == 0 && st.st_size >= 0 && (uint64_t)st.st_size < P2_BUF_SIZE)
			x->p2_cap = (size_t)st.st_size > 2 * GPUIO_REC_SIZE_MAX ? (size_t)st.st_size :
				    2 * GPUIO_REC_SIZE_MAX;
		x->p2_buf = malloc(x->p2_cap);
		if (!x->p2_buf)
			return -ENOMEM;
	}
	x->p2_pos = x->p2_len = 0;
	x->p2_off = x->hdr->header_size;
	return 0;
}

const char *exp_model__error(const struct exp_model *x)
{
	return x->p2_err;
}

/* At least want bytes at p2_buf[p2_pos]: 1, 0 at the end of the file, -errno. */
int p2_fill(struct exp_model *x, size_t want)
{
	ssize_t n;

	if (x->p2_len - x->p2_pos >= want)
		return 1;
	/* keep the 8-byte alignment of records: they start at multiples of 8 */
	memmove(x->p2_buf, x->p2_buf + x->p2_pos, x->p2_len - x->p2_pos);
	x->p2_len -= x->p2_pos;
	x->p2_pos = 0;
	while (x->p2_len < want) {
		n = pread(x->p2_fd, x->p2_buf + x->p2_len, x->p2_cap - x->p2_len,
			  (off_t)x->p2_off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return 0;
		x->p2_len += (size_t)n;
		x->p2_off += (uint64_t)n;
	}
	return 1;
}

int exp_model__next_vfs(struct exp_model *x, const struct gpuio_vfs_event **e)
{
	const struct gpuio_hdr *h;
	int rc;

	/*
	 * Pass 1 validated these records with the capture reader; a record that
	 * now looks different means the file changed under us. Records are
	 * 8-byte multiples after an 8-byte multiple header, so they are aligned
	 * in the buffer; an odd header size or a version 2 capture (encoded
	 * records) takes the copying reader instead.
	 */
	if (!model_in_place(x)) {
		while (x->pass2_records < x->records) {
			rc = gpuio_cap_reader__next(x->r, &h);
			if (rc <= 0)
				break;
			x->pass2_records++;
			if (h->type == GPUIO_REC_VFS) {
				*e = (const void *)h;
				return 1;
			}
		}
		if (x->pass2_records < x->records) {
			snprintf(x->p2_err, sizeof(x->p2_err), "%s", gpuio_cap_reader__error(x->r));
			return -EBADMSG;
		}
		return 0;
	}
	while (x->pass2_records < x->records) {
		rc = p2_fill(x, sizeof(*h));
		if (rc > 0) {
			h = (const void *)(x->p2_buf + x->p2_pos);
			if (h->size < sizeof(*h) || h->size > GPUIO_REC_SIZE_MAX || h->size % 8)
				rc = -EBADMSG;
			else
				rc = p2_fill(x, h->size);
		}
		if (rc <= 0) {
			snprintf(x->p2_err, sizeof(x->p2_err), "record %llu is no longer what it was "
				 "(%s)", (unsigned long long)x->pass2_records,
				 rc == 0 ? "the file is shorter" : rc == -EBADMSG ? "bad size" :
				 strerror(-rc));
			return -EBADMSG;
		}
		h = (const void *)(x->p2_buf + x->p2_pos);
		x->p2_pos += h->size;
		x->pass2_records++;
		if (h->type == GPUIO_REC_VFS && h->size >= sizeof(**e)) {
			*e = (const void *)h;
			return 1;
		}
	}
	return 0;
}

/* Forget what a pass 1 gathered (before doing it again with the reader). */
static void model_reset_tables(struct exp_model *x)
{
	for (size_t i = 0; i < x->npaths; i++)
		free(x->paths[i].s);
	for (size_t i = 0; i < x->nprocs; i++) {
		free(x->procs[i].args);
		free(x->procs[i].cgroup);
	}
	kmap__free(&x->path_map);
	kmap__free(&x->proc_map);
	kmap__free(&x->thread_map);
	kmap__free(&x->dev_map);
	kmap__free(&x->flow_map);
	gpu_free(&x->gpu);
	sched_tab__free(&x->sched);
	x->tend = 0;
	x->npaths = x->nprocs = x->nthreads = x->ndevs = x->nblks = x->nasyncs = 0;
	x->records = x->vfs_ordinal = 0;
	x->tmin = UINT64_MAX;
	memset(x->counts, 0, sizeof(x->counts));
	memset(x->seen_threads, 0, sizeof(x->seen_threads));
	memset(&x->stats, 0, sizeof(x->stats));
	x->have_stats = false;
}

/* ---- ids ---- */

uint32_t exp_disk_pid(const struct exp_model *m, size_t disk)
{
	return EXP_DISK_PID_BASE + m->map.disk_base + (uint32_t)disk;
}

uint32_t exp_lane_tid(const struct exp_model *m, size_t disk, uint32_t lane)
{
	return EXP_LANE_TID(m->map.disk_base + disk, lane);
}

uint32_t exp_info_pid(const struct exp_model *m)
{
	return EXP_INFO_PID - m->map.host;
}

uint64_t exp_flow_id(const struct exp_model *m, uint32_t tid, uint32_t seq, uint32_t k)
{
	/* the host: merged machines keep their own pids (pid_offset 0) */
	uint64_t id = hash_mix64((((uint64_t)(tid + m->map.pid_offset) << 32) | seq) ^
				((uint64_t)k * 0x9e3779b97f4a7c15ull) ^
				((uint64_t)m->map.host * 0xc2b2ae3d27d4eb4full));

	return id ? id : 1;
}
