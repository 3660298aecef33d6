/* SPDX-License-Identifier: MIT */
/*
 * cupti_api.h — the CUPTI entry points the collector uses, as a table of
 * function pointers filled by dlopen()ing libcupti.
 *
 * Going through a table (never linking libcupti) keeps the collector loadable
 * where CUDA is absent, and lets tests substitute subscribe/enable/flush with
 * fakes while keeping the real cuptiActivityGetNextRecord to iterate
 * synthetic buffers.
 */
#ifndef GPUIO_CUPTI_API_H
#define GPUIO_CUPTI_API_H

#include <stddef.h>
#include <stdint.h>
#include <cupti.h>

struct cupti_api {
	void *handle;  /* dlopen handle, NULL for a hand-filled table */
	char path[512];  /* the libcupti loaded (cupti_locate.h) */
	const char *why; /* why that one: "already loaded in the process", ... */

	/* Required: the collector cannot run without these. */
	CUptiResult (*activityRegisterTimestampCallback)(CUpti_TimestampCallbackFunc fn);
	CUptiResult (*getTimestamp)(uint64_t *ts);
	CUptiResult (*subscribe)(CUpti_SubscriberHandle *sub, CUpti_CallbackFunc cb, void *ud);
	CUptiResult (*activityRegisterCallbacks)(CUpti_BuffersCallbackRequestFunc req,
						 CUpti_BuffersCallbackCompleteFunc done);
	CUptiResult (*activityEnable)(CUpti_ActivityKind kind);
	CUptiResult (*activityDisable)(CUpti_ActivityKind kind);
	CUptiResult (*activityFlushAll)(uint32_t flag);
	CUptiResult (*activityGetNextRecord)(uint8_t *buf, size_t valid, CUpti_Activity **rec);
	CUptiResult (*activityGetNumDroppedRecords)(CUcontext ctx, uint32_t stream, size_t *dropped);
	CUptiResult (*getResultString)(CUptiResult r, const char **str);
	CUptiResult (*getCallbackName)(CUpti_CallbackDomain dom, uint32_t cbid, const char **name);

	/* Optional: NULL when this libcupti lacks them; the collector copes. */
	CUptiResult (*getVersion)(uint32_t *version);
	CUptiResult (*unsubscribe)(CUpti_SubscriberHandle sub);
	CUptiResult (*enableCallback)(uint32_t enable, CUpti_SubscriberHandle sub,
				      CUpti_CallbackDomain dom, CUpti_CallbackId cbid);
	CUptiResult (*activityFlushPeriod)(uint32_t ms);
	CUptiResult (*setThreadIdType)(CUpti_ActivityThreadIdType type);
	CUptiResult (*activityEnableRuntimeApi)(CUpti_CallbackId cbid, uint8_t enable);
	CUptiResult (*activityEnableDriverApi)(CUpti_CallbackId cbid, uint8_t enable);
	int (*initializeInjectionNvtx2)(const void *get_export_table);
};

/*
 * dlopen the first usable libcupti in cupti_locate()'s order ($GPUIO_CUPTI,
 * one already loaded, beside the process's CUDA libraries, by soname, known
 * places, the one found at build time) and fill api. Returns 0, or -ENOENT
 * with a one-line reason in err.
 */
int cupti_api__load(struct cupti_api *api, char *err, size_t errlen);
/* "CUPTI_ERROR_UNKNOWN", or "CUPTI error 123" when the name is unknown. */
const char *cupti_api__result_name(const struct cupti_api *api, CUptiResult r);

#endif /* GPUIO_CUPTI_API_H */
