// SPDX-License-Identifier: MIT
/*
 * unit_stream — the live stream's arrows from a call to its block requests
 * (export/stream_emit.c): a request read in the pump after its call's gets
 * its arrow (the call is held one pump); a request read after its call was
 * written (a readahead completing after the read returned, a record late in
 * the ring) gets none, so no arrow ever ends at a request without starting
 * at its call; nor does one read after the pumps forgot the call.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>
#include "capture/capture.h"
#include "export/stream.h"
#include "unit.h"

#define TID 4242
#define MS 1000000ull

static void vfs(struct gpuio_cap_writer *w, uint32_t seq, uint64_t ts)
{
	struct gpuio_vfs_event v = { 0 };

	v.hdr = (struct gpuio_hdr){ .type = GPUIO_REC_VFS, .size = sizeof(v), .pid = TID,
				    .tid = TID, .ts = ts };
	v.call = GPUIO_CALL_PREAD64;
	v.dur_ns = MS;
	v.ret = v.requested = 4096;
	v.fd = 3;
	v.fd2 = -1;
	v.offset2 = -1;
	v.ino = 12;
	v.seq = seq;
	CHECK(gpuio_cap_writer__append(w, &v, sizeof(v)) == 0, "append vfs");
}

static void block(struct gpuio_cap_writer *w, uint32_t seq, uint64_t ts)
{
	struct gpuio_block_event b = { 0 };

	b.hdr = (struct gpuio_hdr){ .type = GPUIO_REC_BLOCK, .size = sizeof(b), .pid = TID,
				    .tid = TID, .ts = ts };
	b.issue_ns = ts;
	b.complete_ns = ts + MS / 2;
	b.bytes = 4096;
	b.dev = 7 << 20;
	b.ino = 12;
	b.vfs_seq = seq;
	CHECK(gpuio_cap_writer__append(w, &b, sizeof(b)) == 0, "append block");
}

/* Pump once after flushing what was appended. */
static void pump(struct gpuio_cap_writer *w, struct gpuio_stream *s, uint64_t now)
{
	CHECK(gpuio_cap_writer__flush(w) == 0, "flush");
	CHECK(gpuio_stream__pump(s, now) == 0, "pump");
}

/*
 * late: pumps between the call and its request's record (0: same pump,
 * 1: the next, the call still held; 2: the call was written; 20: the
 * call's entry was swept). Returns the arrows the stream wrote.
 */
static uint64_t arrows(const char *dir, unsigned late)
{
	char cap[512], out[512];
	struct gpuio_cap_header h;
	struct gpuio_cap_writer *w = NULL;
	struct gpuio_stream *s = NULL;
	struct gpuio_stream_opts o = { .owner_uid = (uid_t)-1, .owner_gid = (gid_t)-1 };
	struct gpuio_stream_stats st = { 0 };
	uint64_t t = 1000 * MS;

	snprintf(cap, sizeof(cap), "%s/late%u.gpuio", dir, late);
	snprintf(out, sizeof(out), "%s/late%u.pftrace", dir, late);
	gpuio_cap_header__init(&h, 1, 0);
	h.monotonic_ns = t;
	if (gpuio_cap_writer__create(cap, &h, (uid_t)-1, (gid_t)-1, &w) ||
	    gpuio_stream__open(cap, out, &o, &s)) {
		CHECK(0, "cannot open %s or %s", cap, out);
		return ~0ull;
	}
	vfs(w, 1, t + MS);
	for (unsigned i = 0; i < late; i++)
		pump(w, s, t + (i + 2) * MS);
	block(w, 1, t + MS + MS / 4);
	/* a later call of the same thread, with its request on time */
	vfs(w, 2, t + 3 * MS);
	block(w, 2, t + 3 * MS + MS / 4);
	pump(w, s, t + 40 * MS);
	CHECK(gpuio_stream__close(s, &st) == 0, "close");
	CHECK(gpuio_cap_writer__close(w) == 0, "close capture");
	CHECK(st.vfs == 2 && st.block == 2, "late %u: %llu calls, %llu requests written", late,
	      (unsigned long long)st.vfs, (unsigned long long)st.block);
	return st.flows;
}

/* argv[1]: a folder to keep the streams in (t_unit checks them whole) */
int main(int argc, char **argv)
{
	char tmpl[] = "/tmp/unit_stream.XXXXXX";
	const char *dir = argc > 1 ? argv[1] : mkdtemp(tmpl);
	uint64_t n;

	if (!dir) {
		perror("mkdtemp");
		return 1;
	}
	n = arrows(dir, 0);
	CHECK(n == 2, "same pump: %llu arrows, want 2", (unsigned long long)n);
	n = arrows(dir, 1);
	CHECK(n == 2, "next pump: %llu arrows, want 2", (unsigned long long)n);
	n = arrows(dir, 2);
	CHECK(n == 1, "after the call was written: %llu arrows, want 1 (call 2's)",
	      (unsigned long long)n);
	n = arrows(dir, 20);
	CHECK(n == 1, "after the call was swept: %llu arrows, want 1 (call 2's)",
	      (unsigned long long)n);
	if (argc < 2 && !getenv("GPUIO_KEEP_TMP")) {
		char cmd[600];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "cannot remove %s\n", dir);
	}
	return unit_done("unit_stream");
}
