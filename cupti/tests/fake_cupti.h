/* SPDX-License-Identifier: MIT */
/*
 * fake_cupti.h — drive the collector without a GPU (tests, cupti_synth, bench).
 *
 * The table is the real libcupti's (so cuptiActivityGetNextRecord,
 * cuptiGetCallbackName and cuptiGetResultString are real) with subscribe,
 * register, enable, flush, dropped counts and the clock replaced by fakes.
 * Records are built from the real CUDA 13 structs into buffers obtained
 * through the collector's own buffer-requested callback and handed back
 * through its buffer-completed callback, as CUPTI would.
 */
#ifndef GPUIO_FAKE_CUPTI_H
#define GPUIO_FAKE_CUPTI_H

#include <stddef.h>
#include <stdint.h>
#include "cupti_api.h"
#include "record_layout.h"

struct fake_cupti {
	struct cupti_api api;         /* hand this to collector__start */
	CUpti_BuffersCallbackRequestFunc req;
	CUpti_BuffersCallbackCompleteFunc done;
	CUpti_CallbackFunc cb;
	/* knobs */
	CUptiResult ts_register_result;  /* cuptiActivityRegisterTimestampCallback */
	CUptiResult subscribe_result;
	CUptiResult enable_result;       /* every cuptiActivityEnable */
	int64_t cupti_lag_ns;            /* fake CUPTI clock = MONOTONIC - this */
	uint64_t mono;                   /* fake MONOTONIC: +10 ns per read */
	size_t dropped_next;             /* reported once, at the next completed buffer */
	int flush_delivers;              /* FlushAll completes the buffer being filled */
	/* counters */
	unsigned flushes, forced_flushes, enables, disables, subscribes, unsubscribes;
	uint32_t version;                /* cuptiGetVersion (fake_cupti__set_version) */
	enum cupti_layout layout;        /* record structs handed to the collector */
	CUptiResult (*real_next)(uint8_t *, size_t, CUpti_Activity **);
	/* the buffer being filled */
	uint8_t *buf;
	size_t size, used;
};

extern struct fake_cupti fake;

/* Load the real libcupti and put the fakes over it. 0 or -ENOENT (err says why). */
int fake_cupti__init(char *err, size_t errlen);
/*
 * Pretend to be the libcupti of this API version (130001: CUDA 13.0; 24:
 * 12.6; 26: 12.8): records are still built in the CUDA 13 structs below,
 * then rewritten into that version's structs when delivered, and walked by
 * a GetNextRecord that knows that version's sizes.
 */
void fake_cupti__set_version(uint32_t version);
/* Size of a CUDA 13 record of kind (0: not one the fakes build). */
size_t fake_cupti__size13(CUpti_ActivityKind kind);
/* The fake MONOTONIC clock (give it to collector_opts.mono_now). */
uint64_t fake_cupti__mono(void);
/* Zeroed space for one record of n bytes in the current buffer (a new one when full). */
void *fake_cupti__reserve(size_t n);
/* Hand the current buffer back through the collector's completed callback. */
void fake_cupti__deliver(void);

/* Record builders (CUPTI clock timestamps). */
CUpti_ActivityKernel10 *fake_cupti__kernel(uint64_t start, uint64_t end, uint32_t dev,
					   uint32_t stream, uint32_t corr, const char *name);
CUpti_ActivityMemcpy6 *fake_cupti__memcpy(uint64_t start, uint64_t end, uint32_t dev,
					  uint32_t stream, uint32_t corr, uint64_t bytes,
					  uint8_t kind);
CUpti_ActivityMemcpyPtoP4 *fake_cupti__peer(uint64_t start, uint64_t end, uint32_t src,
					    uint32_t dst, uint32_t stream, uint32_t corr,
					    uint64_t bytes);
CUpti_ActivityMemset4 *fake_cupti__memset(uint64_t start, uint64_t end, uint32_t dev,
					  uint32_t stream, uint32_t corr, uint64_t bytes,
					  uint32_t value);
CUpti_ActivityAPI *fake_cupti__api(int driver, uint64_t start, uint64_t end, uint32_t tid,
				   uint32_t corr, uint32_t cbid);
CUpti_ActivitySynchronization2 *fake_cupti__sync(uint64_t start, uint64_t end, uint32_t type,
						 uint32_t stream, uint32_t corr);
CUpti_ActivityOverhead3 *fake_cupti__overhead(uint64_t start, uint64_t end, uint32_t kind,
					      uint32_t tid);
/* Marker flags: CUPTI_ACTIVITY_FLAG_MARKER_START/END/INSTANTANEOUS. name must outlive delivery. */
CUpti_ActivityMarker2 *fake_cupti__marker(uint32_t flags, uint64_t ts, uint32_t id,
					  uint32_t tid, const char *name);
/* A record of a kind the collector does not convert (CONTEXT). */
void fake_cupti__ignored(void);

#endif /* GPUIO_FAKE_CUPTI_H */
