// SPDX-License-Identifier: MIT
/*
 * btf_names.c — the kernel BTF's string section, read once, searched for
 * whole names (btf_names.h).
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/btf.h>
#include "trace/btf_names.h"

static char *strs;      /* the string section: names, each NUL-ended */
static size_t nstrs;
static int state;       /* 0 not read, 1 read, -1 unreadable */
/* the tracepoints' names (btf_trace_*), sorted: ~2,000 of the ~100,000
 * strings, found in one pass, then each asked by bisection */
#define TP_PREFIX "btf_trace_"
static const char **tps;
static size_t ntps;

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void index_tracepoints(void)
{
	size_t cap = 0, k = sizeof(TP_PREFIX) - 1;
	const char *p = strs, *end = strs + nstrs;

	while ((p = memmem(p, (size_t)(end - p), TP_PREFIX, k))) {
		if (p > strs && p[-1] == '\0') {
			if (ntps == cap) {
				const char **n = realloc(tps, (cap = cap ? cap * 2 : 1024) * sizeof(*n));

				if (!n)
					return;
				tps = n;
			}
			tps[ntps++] = p;
		}
		p += k;
	}
	qsort(tps, ntps, sizeof(*tps), cmp_str);
}

static char *read_all(const char *path, size_t *len)
{
	size_t cap = 8 << 20, n = 0;
	char *buf = malloc(cap);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t r;

	if (!buf || fd < 0)
		goto fail;
	while ((r = read(fd, buf + n, cap - n)) > 0) {
		n += (size_t)r;
		if (n == cap) {
			char *nb = realloc(buf, cap *= 2);

			if (!nb)
				goto fail;
			buf = nb;
		}
	}
	if (r < 0)
		goto fail;
	close(fd);
	*len = n;
	return buf;
fail:
	if (fd >= 0)
		close(fd);
	free(buf);
	return NULL;
}

static int load(void)
{
	struct btf_header h;
	size_t len = 0;
	char *raw = read_all("/sys/kernel/btf/vmlinux", &len);

	if (!raw || len < sizeof(h))
		goto bad;
	memcpy(&h, raw, sizeof(h));
	if (h.magic != BTF_MAGIC || h.hdr_len > len ||
	    (size_t)h.hdr_len + h.str_off + h.str_len > len)
		goto bad;
	strs = raw;
	memmove(strs, raw + h.hdr_len + h.str_off, h.str_len);
	nstrs = h.str_len;
	index_tracepoints();
	return 1;
bad:
	free(raw);
	return -1;
}

int btf_names__has(const char *name)
{
	size_t n = strlen(name);
	const char *p, *end;

	if (!state)
		state = load();
	if (state < 0)
		return -1;
	if (!strncmp(name, TP_PREFIX, sizeof(TP_PREFIX) - 1) && tps)
		return bsearch(&name, tps, ntps, sizeof(*tps), cmp_str) != NULL;
	end = strs + nstrs;
	/* a whole name: NUL before it (the section starts with one) and after */
	for (p = strs; p + n < end && (p = memmem(p, (size_t)(end - p), name, n + 1)); p++)
		if (p > strs && p[-1] == '\0')
			return 1;
	return 0;
}
