// SPDX-License-Identifier: MIT
/* fake_cupti.c — see fake_cupti.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "clock.h"
#include "fake_cupti.h"

struct fake_cupti fake;

uint64_t fake_cupti__mono(void)
{
	fake.mono += 10;
	return fake.mono;
}

static CUptiResult f_register_ts(CUpti_TimestampCallbackFunc fn)
{
	return fake.ts_register_result;
}

/* Read in the middle of two MONOTONIC reads: exactly mono + 5 - lag. */
static CUptiResult f_get_ts(uint64_t *ts)
{
	*ts = fake.mono + 5 - (uint64_t)fake.cupti_lag_ns;
	return CUPTI_SUCCESS;
}

static CUptiResult f_subscribe(CUpti_SubscriberHandle *sub, CUpti_CallbackFunc cb, void *ud)
{
	fake.subscribes++;
	if (fake.subscribe_result != CUPTI_SUCCESS)
		return fake.subscribe_result;
	fake.cb = cb;
	*sub = (CUpti_SubscriberHandle)&fake;
	return CUPTI_SUCCESS;
}

static CUptiResult f_unsubscribe(CUpti_SubscriberHandle sub)
{
	fake.unsubscribes++;
	return CUPTI_SUCCESS;
}

static CUptiResult f_register_cbs(CUpti_BuffersCallbackRequestFunc req,
				  CUpti_BuffersCallbackCompleteFunc done)
{
	fake.req = req;
	fake.done = done;
	return CUPTI_SUCCESS;
}

static CUptiResult f_enable(CUpti_ActivityKind k)
{
	fake.enables++;
	return fake.enable_result;
}

static CUptiResult f_disable(CUpti_ActivityKind k)
{
	fake.disables++;
	return CUPTI_SUCCESS;
}

static CUptiResult f_flush_all(uint32_t flag)
{
	fake.flushes++;
	if (flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED)
		fake.forced_flushes++;
	if (fake.flush_delivers && fake.buf)
		fake_cupti__deliver();
	return CUPTI_SUCCESS;
}

static CUptiResult f_dropped(CUcontext ctx, uint32_t stream, size_t *dropped)
{
	/* Like CUPTI: the count resets when read. */
	*dropped = fake.dropped_next;
	fake.dropped_next = 0;
	return CUPTI_SUCCESS;
}

static CUptiResult f_ok_u32(uint32_t v)
{
	return CUPTI_SUCCESS;
}

static CUptiResult f_enable_cb(uint32_t en, CUpti_SubscriberHandle s, CUpti_CallbackDomain d,
			       CUpti_CallbackId id)
{
	return CUPTI_SUCCESS;
}

static CUptiResult f_tid_type(CUpti_ActivityThreadIdType t)
{
	return CUPTI_SUCCESS;
}

static CUptiResult f_api_onoff(CUpti_CallbackId cbid, uint8_t en)
{
	return CUPTI_SUCCESS;
}

static CUptiResult f_version(uint32_t *v)
{
	*v = fake.version;
	return CUPTI_SUCCESS;
}

int fake_cupti__init(char *err, size_t errlen)
{
	struct cupti_api real;
	int rc = cupti_api__load(&real, err, errlen);

	if (rc)
		return rc;
	memset(&fake, 0, sizeof(fake));
	fake.api = real;
	fake.api.activityRegisterTimestampCallback = f_register_ts;
	fake.api.getTimestamp = f_get_ts;
	fake.api.subscribe = f_subscribe;
	fake.api.unsubscribe = f_unsubscribe;
	fake.api.activityRegisterCallbacks = f_register_cbs;
	fake.api.activityEnable = f_enable;
	fake.api.activityDisable = f_disable;
	fake.api.activityFlushAll = f_flush_all;
	fake.api.activityFlushPeriod = f_ok_u32;
	fake.api.activityGetNumDroppedRecords = f_dropped;
	fake.api.enableCallback = f_enable_cb;
	fake.api.setThreadIdType = f_tid_type;
	fake.api.activityEnableRuntimeApi = f_api_onoff;
	fake.api.activityEnableDriverApi = f_api_onoff;
	fake.api.getVersion = f_version;
	fake.mono = clock__mono_ns();
	fake.flush_delivers = 1;
	fake.real_next = real.activityGetNextRecord;
	fake_cupti__set_version(130001);
	return 0;
}

/*
 * The buffer records are built in: the collector's own (CUDA 13 layout), or
 * for an older layout a staging copy, rewritten into the collector's buffer
 * in that layout at delivery (downgrade_all).
 */
static uint8_t *build_area(void)
{
	static uint8_t *staging;
	static size_t staging_size;

	if (fake.layout == CUPTI_LAYOUT_13)
		return fake.buf;
	if (staging_size < fake.size) {
		free(staging);
		staging = malloc(fake.size);
		staging_size = staging ? fake.size : 0;
	}
	return staging;
}

void *fake_cupti__reserve(size_t n)
{
	size_t max;
	uint8_t *area;
	void *p;

	if (fake.buf && fake.used + n > fake.size)
		fake_cupti__deliver();
	if (!fake.buf) {
		fake.req(&fake.buf, &fake.size, &max);
		fake.used = 0;
		if (!fake.buf || fake.size < n) {
			fprintf(stderr, "fake_cupti: collector handed CUPTI no usable buffer\n");
			return NULL;
		}
	}
	area = build_area();
	if (!area)
		return NULL;
	p = area + fake.used;
	memset(p, 0, n);
	fake.used += n;
	return p;
}

size_t fake_cupti__size13(CUpti_ActivityKind kind)
{
	switch (kind) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return sizeof(CUpti_ActivityKernel10);
	case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(CUpti_ActivityMemcpy6);
	case CUPTI_ACTIVITY_KIND_MEMCPY2: return sizeof(CUpti_ActivityMemcpyPtoP4);
	case CUPTI_ACTIVITY_KIND_MEMSET: return sizeof(CUpti_ActivityMemset4);
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER: return sizeof(CUpti_ActivityAPI);
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return sizeof(CUpti_ActivitySynchronization2);
	case CUPTI_ACTIVITY_KIND_OVERHEAD: return sizeof(CUpti_ActivityOverhead3);
	case CUPTI_ACTIVITY_KIND_MARKER: return sizeof(CUpti_ActivityMarker2);
	case CUPTI_ACTIVITY_KIND_CONTEXT: return sizeof(CUpti_ActivityContext3);
	default: return 0;
	}
}

/* Copy the fields both structs name (the ones gpuio reads, and the kind). */
#define COPY_COMMON(d, s) do { (d)->kind = (s)->kind; (d)->start = (s)->start;      \
	(d)->end = (s)->end; (d)->deviceId = (s)->deviceId;                         \
	(d)->contextId = (s)->contextId; (d)->streamId = (s)->streamId;             \
	(d)->correlationId = (s)->correlationId; } while (0)
#define COPY_MEMCPY(d, m) do { COPY_COMMON(d, m); (d)->bytes = (m)->bytes;          \
	(d)->copyKind = (m)->copyKind; (d)->flags = (m)->flags;                     \
	(d)->srcKind = (m)->srcKind; (d)->dstKind = (m)->dstKind; } while (0)
/* d: a T at out, every byte 0xA5 until a named field is set */
#define DOWN(T) T *d = (T *)out; n = sizeof(T); memset(out, 0xA5, n)

/*
 * One CUDA 13 record rewritten in the older layout through NVIDIA's struct
 * of that version (or the transcribed 12.x ones in record_layout.h): bytes
 * not set from a named field stay 0xA5, so a converter reading a field at
 * the wrong offset sees garbage.
 */
static size_t downgrade(const CUpti_Activity *a, uint8_t *out)
{
	size_t n;

	if (a->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
		const CUpti_ActivityKernel10 *k = (const void *)a;
		DOWN(CUpti_ActivityKernel9);

		COPY_COMMON(d, k);
		d->gridX = k->gridX, d->gridY = k->gridY, d->gridZ = k->gridZ;
		d->blockX = k->blockX, d->blockY = k->blockY, d->blockZ = k->blockZ;
		d->staticSharedMemory = k->staticSharedMemory;
		d->dynamicSharedMemory = k->dynamicSharedMemory;
		d->registersPerThread = k->registersPerThread;
		d->name = k->name;
		d->completed = k->completed;
		return n;
	}
	if (a->kind == CUPTI_ACTIVITY_KIND_MEMCPY && fake.layout == CUPTI_LAYOUT_12_8) {
		DOWN(cupti128_ActivityMemcpy6);

		COPY_MEMCPY(d, (const CUpti_ActivityMemcpy6 *)a);
		return n;
	}
	if (a->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
		DOWN(CUpti_ActivityMemcpy5);

		COPY_MEMCPY(d, (const CUpti_ActivityMemcpy6 *)a);
		return n;
	}
	if (a->kind == CUPTI_ACTIVITY_KIND_MEMSET) {
		const CUpti_ActivityMemset4 *m = (const void *)a;
		DOWN(cupti12_ActivityMemset4);

		COPY_COMMON(d, m);
		d->bytes = m->bytes, d->value = m->value, d->flags = m->flags;
		d->memoryKind = m->memoryKind;
		return n;
	}
	if (a->kind == CUPTI_ACTIVITY_KIND_SYNCHRONIZATION && fake.layout == CUPTI_LAYOUT_12_0) {
		const CUpti_ActivitySynchronization2 *y = (const void *)a;
		DOWN(CUpti_ActivitySynchronization);

		d->kind = y->kind, d->type = y->type, d->start = y->start, d->end = y->end;
		d->correlationId = y->correlationId, d->contextId = y->contextId;
		d->streamId = y->streamId, d->cudaEventId = y->cudaEventId;
		return n;
	}
	/* the same struct in every layout (API, PtoP4, Overhead3, Marker2, Context3, Sync2 in 12.8) */
	n = fake_cupti__size13(a->kind);
	memcpy(out, a, n);
	return n;
}

/* The older layout's record size, by NVIDIA's struct of that version. */
static size_t size_old(CUpti_ActivityKind kind)
{
	switch (kind) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return sizeof(CUpti_ActivityKernel9);
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		return fake.layout == CUPTI_LAYOUT_12_8 ? sizeof(cupti128_ActivityMemcpy6)
							: sizeof(CUpti_ActivityMemcpy5);
	case CUPTI_ACTIVITY_KIND_MEMSET: return sizeof(cupti12_ActivityMemset4);
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
		return fake.layout == CUPTI_LAYOUT_12_0 ? sizeof(CUpti_ActivitySynchronization)
							: sizeof(CUpti_ActivitySynchronization2);
	default: return fake_cupti__size13(kind);
	}
}

/* cuptiActivityGetNextRecord of a CUDA 12 libcupti, for buffers in its layout. */
static CUptiResult f_next_old(uint8_t *buf, size_t valid, CUpti_Activity **rec)
{
	uint8_t *p = *rec ? (uint8_t *)*rec + size_old((*rec)->kind) : buf;
	size_t n;

	if (p < buf || (size_t)(p - buf) + sizeof(CUpti_Activity) > valid)
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	n = size_old(((CUpti_Activity *)p)->kind);
	if (!n || (size_t)(p - buf) + n > valid)
		return CUPTI_ERROR_INVALID_KIND;
	*rec = (CUpti_Activity *)p;
	return CUPTI_SUCCESS;
}

/* Staging (CUDA 13 layout) -> the collector's buffer in the older layout; bytes used. */
static size_t downgrade_all(void)
{
	uint8_t *src = build_area(), *p = src;
	size_t n, used = 0;

	while (p < src + fake.used && (n = fake_cupti__size13(((CUpti_Activity *)p)->kind))) {
		used += downgrade((const CUpti_Activity *)p, fake.buf + used);
		p += n;
	}
	return used;
}

void fake_cupti__set_version(uint32_t version)
{
	fake.version = version;
	fake.layout = record_layout__for_version(version);
	if (fake.layout == CUPTI_LAYOUT_NONE)
		fake.layout = CUPTI_LAYOUT_13;  /* the collector refuses it before any record */
	fake.api.activityGetNextRecord = fake.layout == CUPTI_LAYOUT_13 ? fake.real_next : f_next_old;
}

void fake_cupti__deliver(void)
{
	uint8_t *b = fake.buf;
	size_t size = fake.size, used = fake.used;

	if (!b)
		return;
	if (fake.layout != CUPTI_LAYOUT_13)
		used = downgrade_all();
	fake.buf = NULL;
	fake.size = fake.used = 0;
	fake.done(NULL, 0, b, size, used);
}

#define RESERVE(type, var, k)                                   \
	type *var = fake_cupti__reserve(sizeof(type));          \
	if (!var)                                               \
		return NULL;                                    \
	var->kind = (k)

CUpti_ActivityKernel10 *fake_cupti__kernel(uint64_t start, uint64_t end, uint32_t dev,
					   uint32_t stream, uint32_t corr, const char *name)
{
	RESERVE(CUpti_ActivityKernel10, k, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	k->start = start;
	k->end = end;
	k->completed = end;
	k->deviceId = dev;
	k->streamId = stream;
	k->correlationId = corr;
	k->name = name;
	return k;
}

CUpti_ActivityMemcpy6 *fake_cupti__memcpy(uint64_t start, uint64_t end, uint32_t dev,
					  uint32_t stream, uint32_t corr, uint64_t bytes,
					  uint8_t kind)
{
	RESERVE(CUpti_ActivityMemcpy6, m, CUPTI_ACTIVITY_KIND_MEMCPY);
	m->start = start;
	m->end = end;
	m->deviceId = dev;
	m->streamId = stream;
	m->correlationId = corr;
	m->bytes = bytes;
	m->copyKind = kind;
	return m;
}

CUpti_ActivityMemcpyPtoP4 *fake_cupti__peer(uint64_t start, uint64_t end, uint32_t src,
					    uint32_t dst, uint32_t stream, uint32_t corr,
					    uint64_t bytes)
{
	RESERVE(CUpti_ActivityMemcpyPtoP4, m, CUPTI_ACTIVITY_KIND_MEMCPY2);
	m->start = start;
	m->end = end;
	m->deviceId = src;
	m->srcDeviceId = src;
	m->dstDeviceId = dst;
	m->streamId = stream;
	m->correlationId = corr;
	m->bytes = bytes;
	m->copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
	return m;
}

CUpti_ActivityMemset4 *fake_cupti__memset(uint64_t start, uint64_t end, uint32_t dev,
					  uint32_t stream, uint32_t corr, uint64_t bytes,
					  uint32_t value)
{
	RESERVE(CUpti_ActivityMemset4, m, CUPTI_ACTIVITY_KIND_MEMSET);
	m->start = start;
	m->end = end;
	m->deviceId = dev;
	m->streamId = stream;
	m->correlationId = corr;
	m->bytes = bytes;
	m->value = value;
	return m;
}

CUpti_ActivityAPI *fake_cupti__api(int driver, uint64_t start, uint64_t end, uint32_t tid,
				   uint32_t corr, uint32_t cbid)
{
	RESERVE(CUpti_ActivityAPI, a, driver ? CUPTI_ACTIVITY_KIND_DRIVER : CUPTI_ACTIVITY_KIND_RUNTIME);
	a->start = start;
	a->end = end;
	a->threadId = tid;
	a->correlationId = corr;
	a->cbid = cbid;
	return a;
}

CUpti_ActivitySynchronization2 *fake_cupti__sync(uint64_t start, uint64_t end, uint32_t type,
						 uint32_t stream, uint32_t corr)
{
	RESERVE(CUpti_ActivitySynchronization2, s, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
	s->start = start;
	s->end = end;
	s->type = (CUpti_ActivitySynchronizationType)type;
	s->streamId = stream;
	s->correlationId = corr;
	return s;
}

CUpti_ActivityOverhead3 *fake_cupti__overhead(uint64_t start, uint64_t end, uint32_t kind,
					      uint32_t tid)
{
	RESERVE(CUpti_ActivityOverhead3, o, CUPTI_ACTIVITY_KIND_OVERHEAD);
	o->start = start;
	o->end = end;
	o->overheadKind = (CUpti_ActivityOverheadKind)kind;
	o->objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
	o->objectId.pt.threadId = tid;
	return o;
}

CUpti_ActivityMarker2 *fake_cupti__marker(uint32_t flags, uint64_t ts, uint32_t id,
					  uint32_t tid, const char *name)
{
	RESERVE(CUpti_ActivityMarker2, m, CUPTI_ACTIVITY_KIND_MARKER);
	m->flags = (CUpti_ActivityFlag)flags;
	m->timestamp = ts;
	m->id = id;
	m->objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
	m->objectId.pt.threadId = tid;
	m->name = name;
	m->domain = NULL;
	return m;
}

void fake_cupti__ignored(void)
{
	CUpti_ActivityContext3 *c = fake_cupti__reserve(sizeof(*c));

	if (c)
		c->kind = CUPTI_ACTIVITY_KIND_CONTEXT;
}
