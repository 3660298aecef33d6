// SPDX-License-Identifier: MIT
/*
 * btf_names.c — the kernel's BTF, parsed once, and its string section
 * searched for whole names (btf_names.h).
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <linux/btf.h>
#include <bpf/btf.h>
#include "trace/btf_names.h"

static const char *strs; /* the string section: names, each NUL-ended */
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

/* The kernel's BTF, parsed once for the whole process (NULL: none). */
struct btf *btf_names__vmlinux(void)
{
	static struct btf *vmlinux;
	static bool tried;

	if (!tried) {
		tried = true;
		vmlinux = btf__load_vmlinux_btf();
		if (!vmlinux)
			vmlinux = NULL;         /* libbpf < 1.0 returned an error pointer */
	}
	return vmlinux;
}

/* The string section, straight from the parsed BTF's raw bytes: the file
 * is read once for both uses. */
static int load(void)
{
	struct btf *vmlinux = btf_names__vmlinux();
	const char *raw;
	struct btf_header h;
	__u32 len = 0;

	raw = vmlinux ? btf__raw_data(vmlinux, &len) : NULL;
	if (!raw || len < sizeof(h))
		return -1;
	memcpy(&h, raw, sizeof(h));
	if (h.magic != BTF_MAGIC || h.hdr_len > len ||
	    (size_t)h.hdr_len + h.str_off + h.str_len > len)
		return -1;
	strs = raw + h.hdr_len + h.str_off;
	nstrs = h.str_len;
	index_tracepoints();
	return 1;
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
