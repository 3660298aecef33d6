// SPDX-License-Identifier: MIT
/*
 * fake_libcupti — a stand-in libcupti.so.13 (built as a shared library with
 * that soname, see tests/tests.mk) on which the CUPTI collector starts and
 * reports ON without a GPU: every call succeeds, the clock is MONOTONIC, and
 * no activity ever arrives. Given to a traced program through GPUIO_CUPTI,
 * it lets a test see what the tracer does when a process's collector is on
 * (t_cupti_on.sh: that process's CUDA uprobes are removed).
 */
#include <stdint.h>
#include <stdio.h>
#include <time.h>

typedef int CUptiResult;
#define CUPTI_SUCCESS 0
#define CUPTI_ERROR_MAX_LIMIT_REACHED 12

CUptiResult cuptiActivityRegisterTimestampCallback(void *fn) { (void)fn; return CUPTI_SUCCESS; }

CUptiResult cuptiGetTimestamp(uint64_t *ts)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	*ts = (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiSubscribe(void **sub, void *cb, void *ud)
{
	static int handle;

	(void)cb, (void)ud;
	*sub = &handle;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiUnsubscribe(void *sub) { (void)sub; return CUPTI_SUCCESS; }
CUptiResult cuptiActivityRegisterCallbacks(void *req, void *done) { (void)req, (void)done; return CUPTI_SUCCESS; }
CUptiResult cuptiActivityEnable(int kind) { (void)kind; return CUPTI_SUCCESS; }
CUptiResult cuptiActivityDisable(int kind) { (void)kind; return CUPTI_SUCCESS; }
CUptiResult cuptiActivityFlushAll(uint32_t flag) { (void)flag; return CUPTI_SUCCESS; }
CUptiResult cuptiActivityFlushPeriod(uint32_t ms) { (void)ms; return CUPTI_SUCCESS; }

CUptiResult cuptiActivityGetNextRecord(uint8_t *buf, size_t valid, void **rec)
{
	(void)buf, (void)valid, (void)rec;
	return CUPTI_ERROR_MAX_LIMIT_REACHED;
}

CUptiResult cuptiActivityGetNumDroppedRecords(void *ctx, uint32_t stream, size_t *dropped)
{
	(void)ctx, (void)stream;
	*dropped = 0;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiGetResultString(CUptiResult r, const char **s)
{
	*s = r ? "CUPTI_ERROR_STANDIN" : "CUPTI_SUCCESS";
	return CUPTI_SUCCESS;
}

CUptiResult cuptiGetCallbackName(int dom, uint32_t cbid, const char **name)
{
	(void)dom, (void)cbid;
	*name = "standin";
	return CUPTI_SUCCESS;
}

CUptiResult cuptiGetVersion(uint32_t *v) { *v = 130001; return CUPTI_SUCCESS; }
CUptiResult cuptiEnableCallback(uint32_t en, void *sub, int dom, uint32_t cbid)
{
	(void)en, (void)sub, (void)dom, (void)cbid;
	return CUPTI_SUCCESS;
}
CUptiResult cuptiSetThreadIdType(int t) { (void)t; return CUPTI_SUCCESS; }
