// SPDX-License-Identifier: MIT
/*
 * stream.c — live Perfetto export that follows the capture (stream.h): the
 * loop that reads new whole records, holds them one round so that slices
 * come out in time order, and hands them to stream_emit.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include "model/calls.h"
#include "capture/capture.h"
#include "capture/compact.h"
#include "export/export.h"
#include "timeline/timeline.h"
#include "lib/log.h"
#include "lib/out_file.h"
#include "export/pftrace.h"
#include "export/output.h"
#include "export/stream.h"
#include "export/stream_priv.h"

#define RBUF_SIZE       (4u << 20)
#define CLOSE_AFTER_NS  2000000000ull   /* a bucket is final 2 s after it ends */
#define PUMP_BUDGET     (4u << 20)      /* capture bytes per pump: bounds the held
					   records; a stream behind catches up later */
/* version 2: 9 bytes make the smallest record, so fewer bytes for as many records */
#define PUMP_BUDGET_V2  (PUMP_BUDGET / 8)
/* held records per pump at most: blocks (72 bytes) are the smallest held */
#define PEND_MAX        (PUMP_BUDGET / sizeof(struct gpuio_block_event) + 1)

int gpuio_stream__open(const char *capture_path, const char *out_path,
		       const struct gpuio_stream_opts *o, struct gpuio_stream **out)
{
	struct gpuio_stream *s = calloc(1, sizeof(*s));
	const char *gz = NULL;
	size_t n = strlen(out_path);
	ssize_t k;
	int err;

	if (!s)
		return -ENOMEM;
	s->o = *o;
	s->cap_fd = -1;
	s->gz = gpuio_export__is_gz(out_path);
	s->out_path = strdup(out_path);
	gz = s->gz ? ".pftrace.gz" : ".pftrace";
	if (n > strlen(gz) && !strcmp(out_path + n - strlen(gz), gz)) {
		s->base = strndup(out_path, n - strlen(gz));
		s->ext = strdup(gz);
	} else {
		s->base = strdup(out_path);
		s->ext = strdup("");
	}
	s->rbuf = malloc(RBUF_SIZE);
	/* both queues at their bound from the start: memory does not creep up */
	if (s->rbuf && (array_grow((void **)&s->prev.a, &s->prev.cap, PEND_MAX, sizeof(struct stream_pend)) ||
			array_grow((void **)&s->next.a, &s->next.cap, PEND_MAX, sizeof(struct stream_pend)))) {
		free(s->rbuf);
		s->rbuf = NULL;
	}
	if (!s->out_path || !s->base || !s->ext || !s->rbuf) {
		err = -ENOMEM;
		goto fail;
	}
	s->cap_fd = open(capture_path, O_RDONLY | O_CLOEXEC);
	if (s->cap_fd < 0) {
		err = -errno;
		pr_err("--stream: cannot read the capture %s: %s", capture_path, strerror(errno));
		goto fail;
	}
	k = pread(s->cap_fd, &s->hdr, sizeof(s->hdr), 0);
	if (k != (ssize_t)sizeof(s->hdr) || memcmp(s->hdr.magic, GPUIO_CAP_MAGIC, 8) ||
	    s->hdr.header_size < sizeof(s->hdr)) {
		err = -EBADMSG;
		pr_err("--stream: %s has no capture header yet", capture_path);
		goto fail;
	}
	if (s->hdr.version != GPUIO_CAP_VERSION_RAW && s->hdr.version != GPUIO_CAP_VERSION) {
		err = -EPROTO;
		pr_err("--stream: %s has capture format version %u", capture_path, s->hdr.version);
		goto fail;
	}
	if (s->hdr.version == GPUIO_CAP_VERSION && !(s->dec = gpuio_cdec__new())) {
		err = -ENOMEM;
		goto fail;
	}
	s->cap_off = s->hdr.header_size;
	err = model_session__new_online(&s->hdr, &s->sess);
	if (err)
		goto fail;
	err = tl_model__new_online(s->sess, &s->m);
	if (err)
		goto fail;
	err = pftrace__new(&s->p);
	if (err)
		goto fail;
	err = stream_file_open(s, s->hdr.monotonic_ns);
	if (err)
		goto fail;
	*out = s;
	return 0;
fail:
	if (err == -ENOMEM)
		pr_err("--stream: out of memory");
	gpuio_stream__close(s, NULL);
	return err;
}

/*
 * Read whole new records, at most PUMP_BUDGET bytes; the partial tail stays
 * for the next pump. *more: the budget ran out before the end of the file.
 */
static int read_new(struct gpuio_stream *s, bool *more)
{
	uint64_t budget = s->dec ? PUMP_BUDGET_V2 : PUMP_BUDGET;
	size_t pos = 0;
	ssize_t k;
	int err = 0;

	*more = false;
	for (;;) {
		size_t want = RBUF_SIZE - s->rlen;

		if (want > budget)
			want = (size_t)budget;
		if (!want) {
			*more = true;
			return 0;
		}
		k = pread(s->cap_fd, s->rbuf + s->rlen, want, (off_t)s->cap_off);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		s->rlen += (size_t)k;
		s->cap_off += (uint64_t)k;
		budget -= (uint64_t)k;
		pos = 0;
		while (s->rlen - pos >= (s->dec ? 1 : sizeof(struct gpuio_hdr))) {
			union { struct gpuio_hdr h; unsigned char b[GPUIO_REC_SIZE_MAX]; } rec;
			struct gpuio_hdr h;
			struct stream_pend *e;

			if (s->dec) {
				char why[120];
				size_t used;
				int rc = gpuio_cdec__decode(s->dec, s->rbuf + pos, s->rlen - pos, rec.b,
							    &used, why, sizeof(why));

				if (rc < 0) {
					pr_err("--stream: capture offset %llu: %s", (unsigned long long)
					       (s->cap_off - s->rlen + pos), why);
					return -EBADMSG;
				}
				if (rc == GPUIO_CDEC_MORE)
					break;
				pos += used;
				if (rc == GPUIO_CDEC_DEF)
					continue;
				memcpy(&h, rec.b, sizeof(h));
			} else {
				memcpy(&h, s->rbuf + pos, sizeof(h));
				if (h.type == 0 || h.size < sizeof(h) || h.size > GPUIO_REC_SIZE_MAX ||
				    h.size % 8 || (gpuio_rec_min_size(h.type) &&
						   h.size < gpuio_rec_min_size(h.type)))
					return -EBADMSG;
				if (s->rlen - pos < h.size)
					break;
				memcpy(rec.b, s->rbuf + pos, h.size);
				memset(rec.b + h.size, 0, sizeof(rec) - h.size < 16 ? sizeof(rec) - h.size : 16);
				pos += h.size;
			}
			s->st.records++;
			/* what the reader does to every record */
			if (gpuio_rec__sanitize(rec.b) < 0)
				return -EBADMSG;
			if (h.type == GPUIO_REC_PROC)
				s->names_ver++;
			/* GPU records: counted, collector status and drops kept for the
			 * info; not drawn live (they arrive late, in CUPTI buffers) */
			{
				const struct model_tool *tools[] = { tl_model__tool(s->m) };

				err = model_session__feed(s->sess, &rec.h, tools, 1);
			}
			if (!err && (h.type == GPUIO_REC_VFS || h.type == GPUIO_REC_SCHED))
				err = stream_pendq__push(&s->next, &rec.h, &e);
			else if (!err && h.type == GPUIO_REC_BLOCK)
				err = stream_on_block(s, (const void *)rec.b);
			if (err)
				return err;
		}
		memmove(s->rbuf, s->rbuf + pos, s->rlen - pos);
		s->rlen -= pos;
		if (k == 0)
			return 0;
	}
}

/* Emit what the previous pump held back, hold this pump's records. */
static void emit_round(struct gpuio_stream *s)
{
	for (size_t i = 0; i < s->prev.n && !s->err; i++) {
		const struct stream_pend *e = &s->prev.a[i];

		if (e->type == GPUIO_REC_VFS)
			stream_emit_vfs(s, &e->r.v);
		else if (e->type == GPUIO_REC_SCHED)
			stream_emit_sched(s, &e->r.sc);
		else
			stream_emit_block(s, e);
	}
	s->prev.n = 0;
	{
		struct stream_pendq t = s->prev;

		s->prev = s->next;
		s->next = t;
	}
	for (size_t i = 0; i < s->ndisks; i++) {
		struct stream_disk *d = &s->disks[i];

		if (d->started && s->latest_ns > CLOSE_AFTER_NS)
			stream_buckets_close(s, d, (s->latest_ns - CLOSE_AFTER_NS) / BUCKET_NS);
	}
}

int gpuio_stream__pump(struct gpuio_stream *s, uint64_t now)
{
	bool more;
	int err;

	if (s->err)
		return s->err;
	err = read_new(s, &more);
	if (err == -EBADMSG)
		pr_err("--stream: the capture holds a corrupt record near offset %llu; "
		       "the stream stops (the capture itself goes on)",
		       (unsigned long long)s->cap_off);
	if (err)
		return s->err = err;
	emit_round(s);
	s->round++;
	if (s->round % 16 == 0 && stream_flows_sweep(s))
		s->err = -ENOMEM;
	if (!s->err)
		s->err = pftrace__flush(s->p, true);
	if (!s->err && stream_rotating(s) &&
	    ((s->o.rotate_bytes && out_file__file_bytes(s->of) >= s->o.rotate_bytes) ||
	     (s->o.rotate_ns && now - s->file_start_ns >= s->o.rotate_ns))) {
		s->err = stream_file_close(s);
		if (!s->err)
			s->err = stream_file_open(s, now);
	}
	if (s->err && s->err != -EBADMSG)
		pr_err("--stream: cannot write %s: %s%s", s->out_path, strerror(-s->err),
		       exp_write_hint(s->err));
	return s->err;
}

int gpuio_stream__close(struct gpuio_stream *s, struct gpuio_stream_stats *st)
{
	int err = 0;

	if (!s)
		return 0;
	if (s->of) {
		bool more = true;

		/* whatever the live pumps left behind, in budget-sized rounds */
		while (!s->err && more) {
			s->err = read_new(s, &more);
			emit_round(s);
			s->round++;
		}
		if (!s->err) {
			emit_round(s);          /* the records of the last round */
			for (size_t i = 0; i < s->ndisks; i++) {
				struct stream_disk *d = &s->disks[i];

				if (d->started) {
					stream_buckets_close(s, d, d->base + RING);
					stream_counter_emit(s, d, d->base, 0, 0, true);
				}
			}
		}
		err = stream_file_close(s);
		if (!err)
			err = s->err;
	}
	s->st.packets = s->p ? pftrace__packets(s->p) : 0;
	if (st)
		*st = s->st;
	if (s->cap_fd >= 0)
		close(s->cap_fd);
	pftrace__free(s->p);
	tl_model__free(s->m);
	model_session__free(s->sess);
	kmap__free(&s->desc);
	sched_chain__free(&s->chain);
	sched_tab__free(&s->sched_keys);
	kmap__free(&s->flows);
	kmap__free(&s->uring);
	kmap__free(&s->disk_map);
	for (size_t i = 0; i < s->nuring; i++) {
		free(s->uring_lanes[i].end);
		free(s->uring_lanes[i].tid);
	}
	free(s->uring_lanes);
	for (size_t i = 0; i < s->ndisks; i++) {
		free(s->disks[i].lanes.end);
		free(s->disks[i].lanes.tid);
	}
	free(s->disks);
	free(s->prev.a);
	free(s->next.a);
	free(s->fids);
	free(s->rbuf);
	gpuio_cdec__free(s->dec);
	free(s->out_path);
	free(s->base);
	free(s->ext);
	free(s);
	return err;
}
