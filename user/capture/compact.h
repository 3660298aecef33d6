/* SPDX-License-Identifier: MIT */
/*
 * compact.h — the record encoding of version 2 captures (format in
 * compact.c): an encoder for the writer and a decoder for the reader of
 * the file (capture.c, which every reader goes through, --stream's too).
 * Both keep state across records, so records go through them in file order.
 */
#ifndef GPUIO_COMPACT_H
#define GPUIO_COMPACT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "bpf/gpuio_abi.h"

/* Bytes __encode may write for one record (definitions included). */
#define GPUIO_CENC_OUT_MAX (65536u + 512u)

struct gpuio_cenc;
struct gpuio_cdec;

struct gpuio_cenc *gpuio_cenc__new(void);
void gpuio_cenc__free(struct gpuio_cenc *e);
/*
 * Encode one whole record (len bytes, a struct of gpuio_abi.h) into out
 * (GPUIO_CENC_OUT_MAX bytes), preceded by the definitions it uses; returns
 * the bytes written. These bytes must reach the file in one piece, in order.
 */
size_t gpuio_cenc__encode(struct gpuio_cenc *e, const void *rec, size_t len, unsigned char *out);

struct gpuio_cdec *gpuio_cdec__new(void);
void gpuio_cdec__free(struct gpuio_cdec *d);
/* Forget all state: decoding starts again at the first frame. */
void gpuio_cdec__reset(struct gpuio_cdec *d);

enum gpuio_cdec_rc {
	GPUIO_CDEC_MORE = 0,    /* the frame at p is not whole yet */
	GPUIO_CDEC_REC = 1,     /* a record came out in rec */
	GPUIO_CDEC_DEF = 2,     /* a definition, nothing to hand on */
};
/*
 * Decode the frame at p (avail bytes) into rec (GPUIO_REC_SIZE_MAX bytes,
 * zeroed past the record like the v1 reader does). Returns an enum
 * gpuio_cdec_rc with *used = frame bytes (0 for MORE), or -EBADMSG with a
 * reason in why (the caller adds the file offset). Validation of a record's
 * type and size is the same as for a version 1 record.
 */
int gpuio_cdec__decode(struct gpuio_cdec *d, const unsigned char *p, size_t avail,
		       unsigned char *rec, size_t *used, char *why, size_t whylen);

#endif /* GPUIO_COMPACT_H */
