// SPDX-License-Identifier: MIT
/* bufpool.c — CUPTI activity buffers (see bufpool.h). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include "bufpool.h"

#define KEEP 4

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t *spare[KEEP];
static int nspare;
static _Alignas(64) uint8_t emergency[2][BUFPOOL_EMERGENCY];
static atomic_int emergency_out[2];
static atomic_long outstanding;

uint8_t *bufpool__get(size_t *size)
{
	uint8_t *p = NULL;
	int i;

	pthread_mutex_lock(&lock);
	if (nspare)
		p = spare[--nspare];
	pthread_mutex_unlock(&lock);
	if (!p)
		p = malloc(BUFPOOL_SIZE);  /* malloc is 16-byte aligned; CUPTI wants 8 */
	if (p) {
		*size = BUFPOOL_SIZE;
		atomic_fetch_add(&outstanding, 1);
		return p;
	}
	for (i = 0; i < 2; i++)
		if (!atomic_exchange(&emergency_out[i], 1)) {
			*size = BUFPOOL_EMERGENCY;
			atomic_fetch_add(&outstanding, 1);
			return emergency[i];
		}
	*size = 0;
	return NULL;
}

void bufpool__put(uint8_t *buf)
{
	int i;

	if (!buf)
		return;
	atomic_fetch_sub(&outstanding, 1);
	for (i = 0; i < 2; i++)
		if (buf == emergency[i]) {
			atomic_store(&emergency_out[i], 0);
			return;
		}
	pthread_mutex_lock(&lock);
	if (nspare < KEEP) {
		spare[nspare++] = buf;
		buf = NULL;
	}
	pthread_mutex_unlock(&lock);
	free(buf);
}

long bufpool__outstanding(void)
{
	return atomic_load(&outstanding);
}

void bufpool__atfork_child(void)
{
	pthread_mutex_init(&lock, NULL);
}
