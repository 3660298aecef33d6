// SPDX-License-Identifier: MIT
/*
 * stream.c — live Perfetto export that follows the capture (stream.h): the
 * loop that has the session read the new whole records (the capture reader
 * and the decode `convert` uses) to the timeline model and the stream's
 * handlers, holds them one round so that slices come out in time order, and
 * hands them to stream_emit.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model/calls.h"
#include "model/session.h"
#include "capture/capture.h"
#include "export/export.h"
#include "timeline/timeline.h"
#include "lib/log.h"
#include "lib/units.h"
#include "lib/out_file.h"
#include "export/pftrace.h"
#include "export/output.h"
#include "export/stream.h"
#include "export/stream_priv.h"

#define CLOSE_AFTER_NS  2000000000ull   /* a bucket is final 2 s after it ends */
#define PUMP_BUDGET     (4u << 20)      /* capture bytes per pump: bounds the held
					   records; a stream behind catches up later */
/* version 2: 9 bytes make the smallest record, so fewer bytes for as many records */
#define PUMP_BUDGET_V2  (PUMP_BUDGET / 8)
/* held records per pump at most: blocks (72 bytes) are the smallest held */
#define PEND_MAX        (PUMP_BUDGET / sizeof(struct gpuio_block_event) + 1)

/* ---- the stream's handlers: after the timeline model's, for every record ---- */

/* Calls and scheduler events are held a round (stream_emit.c draws them). */
static int on_vfs(void *ctx, const struct gpuio_vfs_event *e)
{
	struct gpuio_stream *s = ctx;
	struct stream_pend *p;

	return stream_pendq__push(&s->next, &e->hdr, sizeof(*e), &p);
}

static int on_sched(void *ctx, const struct gpuio_sched_event *e)
{
	struct gpuio_stream *s = ctx;
	struct stream_pend *p;

	return stream_pendq__push(&s->next, &e->hdr, sizeof(*e), &p);
}

/* Block requests take their lane and bucket now, and join their call. */
static int on_block(void *ctx, const struct gpuio_block_event *e)
{
	return stream_on_block(ctx, e);
}

/* Names may have changed: the descriptors are written again. */
static int on_proc(void *ctx, const struct gpuio_proc_event *e)
{
	struct gpuio_stream *s = ctx;

	s->names_ver++;
	return 0;
}

/* GPU records are counted by the session, their collector status and drops
 * kept for the info; not drawn live (they arrive late, in CUPTI buffers). */

int gpuio_stream__open(const char *capture_path, const char *out_path,
		       const struct gpuio_stream_opts *o, struct gpuio_stream **out)
{
	struct gpuio_stream *s = calloc(1, sizeof(*s));
	const char *gz = NULL;
	size_t n = strlen(out_path);
	char why[320];
	int err;

	if (!s)
		return -ENOMEM;
	s->o = *o;
	s->tool = (struct model_tool){ .ctx = s, .vfs = on_vfs, .sched = on_sched,
				       .block = on_block, .proc = on_proc };
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
	/* both queues at their bound from the start: memory does not creep up */
	if (array_grow((void **)&s->prev.a, &s->prev.cap, PEND_MAX, sizeof(struct stream_pend)) ||
	    array_grow((void **)&s->next.a, &s->next.cap, PEND_MAX, sizeof(struct stream_pend)) ||
	    !s->out_path || !s->base || !s->ext) {
		err = -ENOMEM;
		goto fail;
	}
	err = model_session__open_follow(capture_path, &s->sess, why, sizeof(why));
	if (err) {
		pr_err("--stream: %s", why);
		goto fail;
	}
	s->hdr = model_session__facts(s->sess)->hdr;
	err = tl_model__new_online(s->sess, &s->m);
	if (err)
		goto fail;
	err = pftrace__new(&s->p);
	if (err)
		goto fail;
	err = stream_file_open(s, s->hdr->monotonic_ns);
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
 * The whole records appended since the last round, at most a budget of
 * capture bytes, to the timeline model and the stream's handlers; a partial
 * record at the end waits for the next round. *more: the budget ran out
 * before the end of the file.
 */
static int read_new(struct gpuio_stream *s, bool *more)
{
	const struct model_tool *tools[] = { tl_model__tool(s->m), &s->tool };
	uint64_t budget = s->hdr->version == GPUIO_CAP_VERSION_RAW ? PUMP_BUDGET : PUMP_BUDGET_V2;
	int err = model_session__follow(s->sess, tools, ARRAY_SIZE(tools), budget, more);

	if (err == -EBADMSG)
		pr_err("--stream: %s in the capture; the stream stops (the capture itself goes on)",
		       model_session__error(s->sess));
	return err;
}

/* --rotate by time: files hold the trace's own windows (from the capture's
 * start, R long), whenever the stream gets to them; a window with no record
 * has no file. */
static int rotate_at(struct gpuio_stream *s, uint64_t ts)
{
	uint64_t base = s->hdr->monotonic_ns, r = s->o.rotate_ns;
	int err = stream_file_close(s);

	return err ? err : stream_file_open(s, ts < base ? base : base + (ts - base) / r * r);
}

/* Emit what the previous pump held back, hold this pump's records. */
static void emit_round(struct gpuio_stream *s)
{
	for (size_t i = 0; i < s->prev.n && !s->err; i++) {
		const struct stream_pend *e = &s->prev.a[i];

		/* a record of a later window opens its file (one that began in
		 * an earlier window, arriving late, stays in the open one) */
		if (s->o.rotate_ns && e->r.h.ts >= s->file_start_ns + s->o.rotate_ns &&
		    (s->err = rotate_at(s, e->r.h.ts)))
			break;
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
	if (err)
		return s->err = err;
	s->behind = more;
	emit_round(s);
	/* behind the capture: by how much of the trace's time */
	if (more) {
		uint64_t at = s->latest_ns ? s->latest_ns : s->hdr->monotonic_ns;

		if (now > at && now - at > s->st.lag_max_ns)
			s->st.lag_max_ns = now - at;
	}
	s->round++;
	if (s->round % 16 == 0 && stream_flows_sweep(s))
		s->err = -ENOMEM;
	if (!s->err)
		s->err = pftrace__flush(s->p, true);
	if (!s->err && s->o.rotate_bytes && out_file__file_bytes(s->of) >= s->o.rotate_bytes) {
		s->err = stream_file_close(s);
		if (!s->err)
			s->err = stream_file_open(s, s->latest_ns > s->file_start_ns ? s->latest_ns : now);
	}
	if (s->err && s->err != -EBADMSG)
		pr_err("--stream: cannot write %s: %s%s", s->out_path, strerror(-s->err),
		       exp_write_hint(s->err));
	return s->err;
}

bool gpuio_stream__behind(const struct gpuio_stream *s)
{
	return s->behind;
}

uint64_t gpuio_stream__lag_ns(const struct gpuio_stream *s, uint64_t now)
{
	uint64_t at = s->latest_ns ? s->latest_ns : s->hdr->monotonic_ns;

	return s->behind && now > at ? now - at : 0;
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
	s->st.records = s->sess ? model_session__facts(s->sess)->records : 0;
	if (st)
		*st = s->st;
	pftrace__free(s->p);
	tl_model__free(s->m);
	model_session__free(s->sess);
	kmap__free(&s->desc);
	sched_chain__free(&s->chain);
	sched_tab__free(&s->sched_keys);
	kmap__free(&s->flows);
	kmap__free(&s->written);
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
	free(s->out_path);
	free(s->base);
	free(s->ext);
	free(s);
	return err;
}
