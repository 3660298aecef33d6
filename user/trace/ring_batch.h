/* SPDX-License-Identifier: MIT */
/*
 * ring_batch.h — the records of a GPUIO_REC_RING_BATCH (one thread's VFS
 * records sent together: bpf/trace/batch.bpf.h), for every reader of the
 * BPF ring buffer (the trace's collector, the monitor's flight recorder).
 */
#ifndef GPUIO_RING_BATCH_H
#define GPUIO_RING_BATCH_H
#include <stddef.h>
#include "bpf/gpuio_abi.h"

/*
 * Hand each record of the batch at data (size bytes, its header first) to
 * fn(ctx, record, record size). Returns the number handed on, or -1 when
 * the batch is malformed (those before the fault were handed on).
 */
static inline int ring_batch_each(void *data, size_t size,
				  int (*fn)(void *ctx, void *rec, size_t len), void *ctx)
{
	const struct gpuio_hdr *h = data;
	unsigned char *p = (unsigned char *)data + sizeof(*h);
	unsigned char *end = (unsigned char *)data + (h->size < size ? h->size : size);
	int n = 0;

	while (p + sizeof(*h) <= end) {
		const struct gpuio_hdr *in = (const void *)p;

		if (in->size < sizeof(*in) || in->size > (size_t)(end - p) ||
		    in->type == GPUIO_REC_RING_BATCH)
			return -1;
		fn(ctx, p, in->size);
		p += in->size;
		n++;
	}
	return p == end ? n : -1;
}

#endif
