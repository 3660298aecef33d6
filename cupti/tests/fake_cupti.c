// SPDX-License-Identifier: MIT
/* fake_cupti.c — see fake_cupti.h. */
#include <stdio.h>
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
	*v = 130001;
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
	return 0;
}

void *fake_cupti__reserve(size_t n)
{
	size_t max;
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
	p = fake.buf + fake.used;
	memset(p, 0, n);
	fake.used += n;
	return p;
}

void fake_cupti__deliver(void)
{
	uint8_t *b = fake.buf;
	size_t size = fake.size, used = fake.used;

	if (!b)
		return;
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
