// SPDX-License-Identifier: MIT
/*
 * stream_files.c — the live stream's output files: --rotate by time or size,
 * --keep N, each file self-contained (its own clock snapshot and
 * descriptors).
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
#include "export/formats.h"
#include "export/export.h"
#include "timeline/timeline.h"
#include "lib/log.h"
#include "lib/out_file.h"
#include "export/pftrace.h"
#include "export/output.h"
#include "export/stream.h"
#include "export/stream_priv.h"
#include "lib/units.h"

int gpuio_stream_opts__parse_rotate(struct gpuio_stream_opts *o, const char *s)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || v <= 0)
		return -EINVAL;
	if (!strcmp(end, "s"))
		o->rotate_ns = (uint64_t)(v * NS_PER_SEC_F);
	else if (!strcmp(end, "m") || !strcmp(end, "min"))
		o->rotate_ns = (uint64_t)(v * 60e9);
	else if (!strcmp(end, "h"))
		o->rotate_ns = (uint64_t)(v * 3600e9);
	else if (!strcmp(end, "K") || !strcmp(end, "KiB") || !strcmp(end, "k"))
		o->rotate_bytes = (uint64_t)(v * 1024);
	else if (!strcmp(end, "M") || !strcmp(end, "MiB"))
		o->rotate_bytes = (uint64_t)(v * 1048576);
	else if (!strcmp(end, "G") || !strcmp(end, "GiB"))
		o->rotate_bytes = (uint64_t)(v * 1073741824.0);
	else if (!strcmp(end, "B") || !*end)
		o->rotate_bytes = (uint64_t)v;
	else
		return -EINVAL;
	return 0;
}

static int open_out(struct gpuio_stream *s, const char *path, int *fd)
{
	*fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (*fd < 0) {
		int err = -errno;

		pr_err("cannot create %s: %s%s", path, strerror(errno), exp_write_hint(err));
		return err;
	}
	if (s->o.owner_uid != (uid_t)-1 && fchown(*fd, s->o.owner_uid, s->o.owner_gid) < 0)
		pr_warn("cannot give %s to uid %u: %s", path, (unsigned)s->o.owner_uid,
			strerror(errno));
	return 0;
}

bool stream_rotating(const struct gpuio_stream *s)
{
	return s->o.rotate_bytes || s->o.rotate_ns;
}

static char *file_name(const struct gpuio_stream *s, uint64_t no)
{
	char *p;

	if (!stream_rotating(s))
		return strdup(s->out_path);
	if (asprintf(&p, "%s.%04llu%s", s->base, (unsigned long long)no, s->ext) < 0)
		return NULL;
	return p;
}

int stream_file_open(struct gpuio_stream *s, uint64_t now)
{
	char *path;
	int fd, err;

	s->file_no++;
	path = file_name(s, s->file_no);
	if (!path)
		return -ENOMEM;
	err = open_out(s, path, &fd);
	if (!err) {
		err = out_file__new(fd, s->gz, true, &s->of);
		if (err)
			close(fd);
	}
	if (err) {
		free(path);
		return err;
	}
	/* --keep N: the oldest beyond N go */
	if (s->o.keep && s->file_no > s->o.keep) {
		char *old = file_name(s, s->file_no - s->o.keep);

		if (old && unlink(old) == 0)
			s->st.deleted++;
		free(old);
	}
	free(path);
	s->st.files++;
	s->file_start_ns = now;
	{
		/* the capture's anchor pair, moved to now (no drift in a few hours) */
		struct pftrace_clocks c = {
			.mono = now, .real = s->hdr->realtime_ns + (now - s->hdr->monotonic_ns),
			.boot = gpuio_cap_header__boottime(s->hdr) + (now - s->hdr->monotonic_ns),
		};

		int err = pftrace__start(s->p, s->of, &c);

		/* its SystemInfo: Perfetto decodes sched_switch states by kernel release */
		return err ? err : pftrace_sink__machine(s->p, s->hdr, 0, &c);
	}
}

int stream_file_close(struct gpuio_stream *s)
{
	int err, cerr;

	stream_emit_info(s);
	err = pftrace__detach(s->p);
	cerr = out_file__close(s->of);
	s->of = NULL;
	return err ? err : cerr;
}
