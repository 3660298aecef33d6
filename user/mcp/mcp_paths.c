// SPDX-License-Identifier: MIT
/*
 * mcp_paths.c — the directories `gpuio mcp --allow` lets tools read. A
 * path argument is resolved with realpath (every symlink and ".." gone) and
 * must then lie inside one of the realpath'd directories, compared whole
 * component by component: /data2 is not inside /data, and a symlink in
 * /data that points out of it is outside.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "mcp/mcp_priv.h"

int mcp_paths__init(struct mcp_paths *p, char *const *dirs, size_t n, char *err, size_t errlen)
{
	struct stat sb;

	p->dirs = calloc(n ? n : 1, sizeof(*p->dirs));
	p->n = 0;
	if (!p->dirs) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		char *r = realpath(dirs[i], NULL);

		if (!r) {
			snprintf(err, errlen, "--allow %s: %s", dirs[i], strerror(errno));
			return -EINVAL;
		}
		if (stat(r, &sb) || !S_ISDIR(sb.st_mode)) {
			snprintf(err, errlen, "--allow %s: not a directory", dirs[i]);
			free(r);
			return -EINVAL;
		}
		p->dirs[p->n++] = r;
	}
	return 0;
}

void mcp_paths__free(struct mcp_paths *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->dirs[i]);
	free(p->dirs);
	p->dirs = NULL;
	p->n = 0;
}

bool mcp_paths__inside(const struct mcp_paths *p, const char *real)
{
	for (size_t i = 0; i < p->n; i++) {
		const char *d = p->dirs[i];
		size_t k = strlen(d);

		if (k == 1 && d[0] == '/')
			return real[0] == '/';
		if (!strncmp(real, d, k) && (real[k] == '/' || real[k] == 0))
			return true;
	}
	return false;
}

/* "DIR, DIR" for messages */
static void dir_list(const struct mcp_paths *p, char *buf, size_t len)
{
	size_t k = 0;

	buf[0] = 0;
	for (size_t i = 0; i < p->n && k < len; i++)
		k += (size_t)snprintf(buf + k, len - k, "%s%s", i ? ", " : "", p->dirs[i]);
}

/* a path that does not resolve: inside by its text alone (no ".." in it) */
static bool lexically_inside(const struct mcp_paths *p, const char *s)
{
	if (s[0] != '/')
		return !strstr(s, "..");
	return mcp_paths__inside(p, s) && !strstr(s, "/..");
}

/* realpath of s, as given or (relative) in each directory: NULL, errno set */
static char *real_of(const struct mcp_paths *p, const char *s)
{
	char buf[PATH_MAX];
	int first_err = ENOENT;

	if (s[0] == '/')
		return realpath(s, NULL);
	for (size_t i = 0; i < p->n; i++) {
		char *r;

		if (snprintf(buf, sizeof(buf), "%s/%s", p->dirs[i], s) >= (int)sizeof(buf)) {
			errno = ENAMETOOLONG;
			return NULL;
		}
		r = realpath(buf, NULL);
		if (r && mcp_paths__inside(p, r))
			return r;
		if (r) {
			free(r);
			first_err = EACCES;     /* said as outside below */
			continue;
		}
		if (i == 0)
			first_err = errno;
	}
	errno = first_err;
	return NULL;
}

char *mcp_paths__resolve(const struct mcp_paths *p, const char *s, size_t len, char *err,
			 size_t errlen)
{
	char dirs[1024], *path, *r;

	dir_list(p, dirs, sizeof(dirs));
	if (!len || memchr(s, 0, len) || len >= PATH_MAX) {
		snprintf(err, errlen, "%s", !len ? "an empty path" :
			 len >= PATH_MAX ? "the path is too long" : "a path with a NUL byte");
		return NULL;
	}
	path = strndup(s, len);
	if (!path) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	r = real_of(p, path);
	if (!r && (errno == EACCES || !lexically_inside(p, path))) {
		/* the same answer whether it exists or not: no probing outside */
		snprintf(err, errlen, "%s is outside the allowed directories (%s)", path, dirs);
	} else if (!r) {
		snprintf(err, errlen, "%s: %s (allowed directories: %s)", path, strerror(errno),
			 dirs);
	} else if (!mcp_paths__inside(p, r)) {
		snprintf(err, errlen, "%s is outside the allowed directories (%s)%s%s", path, dirs,
			 strcmp(r, path) ? "; it resolves to " : "", strcmp(r, path) ? r : "");
		free(r);
		r = NULL;
	}
	free(path);
	return r;
}
