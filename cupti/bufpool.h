/* SPDX-License-Identifier: MIT */
/*
 * bufpool.h — activity buffers handed to CUPTI.
 *
 * Completed buffers are recycled (a few kept) so steady tracing does not
 * malloc; when malloc fails, two static emergency buffers stand in, so CUPTI
 * gets a NULL buffer only when every one of those is already in its hands.
 */
#ifndef GPUIO_CUPTI_BUFPOOL_H
#define GPUIO_CUPTI_BUFPOOL_H

#include <stddef.h>
#include <stdint.h>

#define BUFPOOL_SIZE (1u << 20)     /* ~4800 kernel records */
#define BUFPOOL_EMERGENCY (64u << 10)

/* A buffer (8-byte aligned) and its size; NULL/0 only in the case above. */
uint8_t *bufpool__get(size_t *size);
void bufpool__put(uint8_t *buf);
/* Buffers currently out (tests). */
long bufpool__outstanding(void);
/* After fork, in the child: the lock may have been held by a vanished thread. */
void bufpool__atfork_child(void);

#endif /* GPUIO_CUPTI_BUFPOOL_H */
