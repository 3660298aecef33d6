// SPDX-License-Identifier: MIT
/* fault_counts.c — page-fault counts per (process, file) into the capture. See fault_counts.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "bpf/gpuio_abi.h"
#include "lib/kmap.h"
#include "trace/fault_counts.h"

/* bpf/trace/fault.bpf.h's key and value */
struct fc_key {
	__u32 pid;
	__u32 dev;
	__u64 ino;
};

struct fc_val {
	__u64 minor, major;
	__u32 flags;
	__u32 pad;
};

struct fault_counts {
	int fd;
	struct kmap seen;       /* (pid << 32 | dev, ino) -> index in last[] */
	struct fc_val *last;    /* what was written last */
	size_t nlast, clast;
};

struct fault_counts *fault_counts__new(int map_fd)
{
	struct fault_counts *fc = calloc(1, sizeof(*fc));

	if (fc)
		fc->fd = map_fd;
	return fc;
}

/* The last written counts of k (zeroed when new), NULL when out of memory. */
static struct fc_val *last_of(struct fault_counts *fc, const struct fc_key *k)
{
	uint64_t *v;
	int rc = kmap__upsert(&fc->seen, (uint64_t)k->pid << 32 | k->dev, k->ino, &v);

	if (rc < 0)
		return NULL;
	if (rc) {
		if (array_grow((void **)&fc->last, &fc->clast, fc->nlast + 1, sizeof(*fc->last)))
			return NULL;
		memset(&fc->last[fc->nlast], 0, sizeof(fc->last[0]));
		*v = fc->nlast++;
	}
	return &fc->last[*v];
}

int fault_counts__write(struct fault_counts *fc, __u64 ts,
			void (*out)(void *ctx, const void *rec, size_t len), void *ctx)
{
	struct gpuio_fault_count r;
	struct fc_key k, next;
	struct fc_val v, *last;
	void *prev = NULL;
	int n = 0;

	if (!fc || fc->fd < 0)
		return 0;
	while (bpf_map_get_next_key(fc->fd, prev, &next) == 0) {
		k = next;
		prev = &k;
		if (bpf_map_lookup_elem(fc->fd, &k, &v) != 0)
			continue;       /* gone meanwhile: nothing removes entries, but be plain */
		last = last_of(fc, &k);
		if (!last)
			return -ENOMEM;
		if (v.minor == last->minor && v.major == last->major && v.flags == last->flags)
			continue;
		*last = v;
		memset(&r, 0, sizeof(r));
		r.hdr.type = GPUIO_REC_FAULT_COUNT;
		r.hdr.size = sizeof(r);
		r.hdr.pid = k.pid;
		r.hdr.ts = ts;
		r.ino = k.ino;
		r.dev = k.dev;
		r.flags = v.flags;
		r.minor = v.minor;
		r.major = v.major;
		out(ctx, &r, sizeof(r));
		n++;
	}
	return n;
}

void fault_counts__free(struct fault_counts *fc)
{
	if (!fc)
		return;
	kmap__free(&fc->seen);
	free(fc->last);
	free(fc);
}
