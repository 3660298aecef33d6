// SPDX-License-Identifier: MIT
/*
 * output.c — the output file of an export: OUT.tmp created (never through a
 * symlink, never over a capture), owned by sudo's caller, renamed into place
 * when whole; and the hint that says what to do when a write fails.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "capture/capture.h"
#include "export/output.h"
#include "lib/log.h"

const char *exp_write_hint(int err)
{
	switch (err) {
	case -ENOSPC:
	case -EDQUOT:
		return " (disk full: free space or choose another -o)";
	case -EACCES:
	case -EPERM:
	case -EROFS:
		return " (choose a writable directory with -o)";
	case -ENOENT:
	case -ENOTDIR:
		return " (the output directory does not exist: create it or choose another -o)";
	default:
		return "";
	}
}

/* ---- output file ---- */

/* Refuse outputs that are symlinks, non-regular files or a capture being read. */
static int check_output(const char *const *caps, int ncaps, const char *out)
{
	struct stat so, sc;

	if (lstat(out, &so) < 0)
		return 0;
	if (S_ISLNK(so.st_mode)) {
		pr_err("refusing to write %s: it is a symbolic link (remove it or choose another name)",
		       out);
		return -ELOOP;
	}
	if (!S_ISREG(so.st_mode)) {
		pr_err("refusing to write %s: it exists and is not a regular file "
		       "(choose another name)", out);
		return S_ISDIR(so.st_mode) ? -EISDIR : -EEXIST;
	}
	for (int i = 0; i < ncaps; i++) {
		if (stat(caps[i], &sc) == 0 && sc.st_dev == so.st_dev && sc.st_ino == so.st_ino) {
			pr_err("refusing to write %s: it is the capture being converted", out);
			return -EEXIST;
		}
	}
	return 0;
}

int exp_output__open(struct exp_output *o, const char *out_path, const char *const *caps,
		     int ncaps, const struct gpuio_export_opts *opts)
{
	int err;

	o->path = out_path;
	o->tmp = NULL;
	o->fd = -1;
	if (!strcmp(out_path, "-")) {
		o->fd = STDOUT_FILENO;
		return 0;
	}
	err = check_output(caps, ncaps, out_path);
	if (err)
		return err;
	if (asprintf(&o->tmp, "%s.tmp", out_path) < 0) {
		o->tmp = NULL;
		pr_err("out of memory");
		return -ENOMEM;
	}
	/* a stale or planted OUT.tmp is removed, never written through */
	if (unlink(o->tmp) < 0 && errno != ENOENT && errno != EACCES && errno != EROFS) {
		err = -errno;
		pr_err("cannot remove stale %s: %s", o->tmp, strerror(errno));
		goto fail;
	}
	o->fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (o->fd < 0) {
		err = -errno;
		pr_err("cannot create %s: %s%s", o->tmp, strerror(errno), exp_write_hint(err));
		goto fail;
	}
	if (opts && opts->owner_uid != (uid_t)-1 &&
	    fchown(o->fd, opts->owner_uid, opts->owner_gid) < 0) {
		err = -errno;
		pr_err("cannot give %s to uid %u: %s", o->tmp, (unsigned)opts->owner_uid,
		       strerror(errno));
		close(o->fd);
		o->fd = -1;
		unlink(o->tmp);
		goto fail;
	}
	return 0;
fail:
	free(o->tmp);
	o->tmp = NULL;
	return err;
}

int exp_output__commit(struct exp_output *o)
{
	int err = 0;

	if (o->tmp && rename(o->tmp, o->path) < 0) {
		err = -errno;
		pr_err("cannot rename %s to %s: %s", o->tmp, o->path, strerror(errno));
		unlink(o->tmp);
	}
	free(o->tmp);
	o->tmp = NULL;
	return err;
}

void exp_output__abort(struct exp_output *o)
{
	if (o->tmp) {
		unlink(o->tmp);
		free(o->tmp);
		o->tmp = NULL;
	}
}
