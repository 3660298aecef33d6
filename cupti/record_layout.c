// SPDX-License-Identifier: MIT
/* record_layout.c — CUPTI record structs by library version (see record_layout.h). */
#include <stdio.h>
#include "record_layout.h"

/*
 * The converter reads these fields through whichever struct the layout
 * names; each must sit where the CUDA 13 struct has it, or the macros in
 * convert.c would need per-version code. Checked here, at build time.
 */
#define SAME(a, b, f) _Static_assert(offsetof(a, f) == offsetof(b, f), #a "." #f " moved")
SAME(CUpti_ActivityKernel9, CUpti_ActivityKernel10, start);
SAME(CUpti_ActivityKernel9, CUpti_ActivityKernel10, name);
SAME(CUpti_ActivityKernel9, CUpti_ActivityKernel10, correlationId);
SAME(CUpti_ActivityMemcpy5, CUpti_ActivityMemcpy6, correlationId);
SAME(cupti128_ActivityMemcpy6, CUpti_ActivityMemcpy6, correlationId);
SAME(cupti12_ActivityMemset4, CUpti_ActivityMemset4, memoryKind);
SAME(CUpti_ActivitySynchronization, CUpti_ActivitySynchronization2, streamId);
_Static_assert(sizeof(cupti12_ActivityMemset4) == sizeof(CUpti_ActivityMemset4),
	       "12.x Memset4 transcription");
_Static_assert(sizeof(cupti128_ActivityMemcpy6) == sizeof(CUpti_ActivityMemcpy6),
	       "12.8 Memcpy6 transcription");

enum cupti_layout record_layout__for_version(uint32_t v)
{
	if (v >= 130000 && v < 150000)
		return CUPTI_LAYOUT_13;
	if (v >= 26 && v <= 28)
		return CUPTI_LAYOUT_12_8;
	if (v >= 19 && v <= 25)
		return CUPTI_LAYOUT_12_0;
	return CUPTI_LAYOUT_NONE;
}

const char *record_layout__name(enum cupti_layout l)
{
	switch (l) {
	case CUPTI_LAYOUT_12_0: return "CUDA 12.0-12.6";
	case CUPTI_LAYOUT_12_8: return "CUDA 12.8-12.9";
	case CUPTI_LAYOUT_13: return "CUDA 13.x";
	default: return "unsupported";
	}
}

size_t record_layout__size(enum cupti_layout l, CUpti_ActivityKind kind)
{
	int v13 = l == CUPTI_LAYOUT_13, v128 = l == CUPTI_LAYOUT_12_8;

	switch (kind) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
	case CUPTI_ACTIVITY_KIND_KERNEL:
		return v13 ? sizeof(CUpti_ActivityKernel10) : sizeof(CUpti_ActivityKernel9);
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		return v13 ? sizeof(CUpti_ActivityMemcpy6)
			   : v128 ? sizeof(cupti128_ActivityMemcpy6) : sizeof(CUpti_ActivityMemcpy5);
	case CUPTI_ACTIVITY_KIND_MEMSET:
		return v13 ? sizeof(CUpti_ActivityMemset4) : sizeof(cupti12_ActivityMemset4);
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
		return v13 || v128 ? sizeof(CUpti_ActivitySynchronization2)
				   : sizeof(CUpti_ActivitySynchronization);
	case CUPTI_ACTIVITY_KIND_MEMCPY2: return sizeof(CUpti_ActivityMemcpyPtoP4);
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER: return sizeof(CUpti_ActivityAPI);
	case CUPTI_ACTIVITY_KIND_OVERHEAD: return sizeof(CUpti_ActivityOverhead3);
	case CUPTI_ACTIVITY_KIND_MARKER: return sizeof(CUpti_ActivityMarker2);
	case CUPTI_ACTIVITY_KIND_CONTEXT: return sizeof(CUpti_ActivityContext3);
	default: return 0;
	}
}
