// SPDX-License-Identifier: MIT
/* cupti_api.c — fill struct cupti_api from a dlopen()ed libcupti. */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "cupti_api.h"

struct sym {
	const char *name;
	size_t off;
	int required;
};

#define SYM(field, name, req) { name, offsetof(struct cupti_api, field), req }
static const struct sym syms[] = {
	SYM(activityRegisterTimestampCallback, "cuptiActivityRegisterTimestampCallback", 1),
	SYM(getTimestamp, "cuptiGetTimestamp", 1),
	SYM(subscribe, "cuptiSubscribe", 1),
	SYM(activityRegisterCallbacks, "cuptiActivityRegisterCallbacks", 1),
	SYM(activityEnable, "cuptiActivityEnable", 1),
	SYM(activityDisable, "cuptiActivityDisable", 1),
	SYM(activityFlushAll, "cuptiActivityFlushAll", 1),
	SYM(activityGetNextRecord, "cuptiActivityGetNextRecord", 1),
	SYM(activityGetNumDroppedRecords, "cuptiActivityGetNumDroppedRecords", 1),
	SYM(getResultString, "cuptiGetResultString", 1),
	SYM(getCallbackName, "cuptiGetCallbackName", 1),
	SYM(getVersion, "cuptiGetVersion", 0),
	SYM(unsubscribe, "cuptiUnsubscribe", 0),
	SYM(enableCallback, "cuptiEnableCallback", 0),
	SYM(activityFlushPeriod, "cuptiActivityFlushPeriod", 0),
	SYM(setThreadIdType, "cuptiSetThreadIdType", 0),
	SYM(activityEnableRuntimeApi, "cuptiActivityEnableRuntimeApi", 0),
	SYM(activityEnableDriverApi, "cuptiActivityEnableDriverApi", 0),
	SYM(initializeInjectionNvtx2, "InitializeInjectionNvtx2", 0),
};

int cupti_api__load(struct cupti_api *api, char *err, size_t errlen)
{
	char first[256] = "";
	void *h;
	size_t i;

	memset(api, 0, sizeof(*api));
	/* RTLD_LOCAL: our CUPTI symbols must not interpose on the application's. */
	h = dlopen(GPUIO_CUPTI_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(first, sizeof(first), "%s", dlerror());
#ifdef GPUIO_CUPTI_PATH
		h = dlopen(GPUIO_CUPTI_PATH, RTLD_NOW | RTLD_LOCAL);
#endif
	}
	if (!h) {
		snprintf(err, errlen, "cannot load %s: %s", GPUIO_CUPTI_SONAME, first);
		return -ENOENT;
	}
	for (i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		void *p = dlsym(h, syms[i].name);

		if (!p && syms[i].required) {
			snprintf(err, errlen, "libcupti lacks %s", syms[i].name);
			dlclose(h);
			memset(api, 0, sizeof(*api));
			return -ENOENT;
		}
		memcpy((char *)api + syms[i].off, &p, sizeof(p));
	}
	api->handle = h;
	return 0;
}

const char *cupti_api__result_name(const struct cupti_api *api, CUptiResult r)
{
	static __thread char buf[32];
	const char *s = NULL;

	if (api && api->getResultString && api->getResultString(r, &s) == CUPTI_SUCCESS && s)
		return s;
	snprintf(buf, sizeof(buf), "CUPTI error %d", (int)r);
	return buf;
}
