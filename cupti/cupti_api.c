// SPDX-License-Identifier: MIT
/* cupti_api.c — fill struct cupti_api from the libcupti cupti_locate() picks. */
#include <dlfcn.h>
#include <link.h>
#include <stdlib.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "cupti_api.h"
#include "cupti_locate.h"
#include "lib/units.h"

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

/* Fill api from an opened handle. 0, or -ENOENT with what is missing in err. */
static int fill(struct cupti_api *api, void *h, char *err, size_t errlen)
{
	size_t i;

	memset(api, 0, sizeof(*api));
	for (i = 0; i < ARRAY_SIZE(syms); i++) {
		void *p = dlsym(h, syms[i].name);

		if (!p && syms[i].required) {
			snprintf(err, errlen, "libcupti lacks %s", syms[i].name);
			memset(api, 0, sizeof(*api));
			return -ENOENT;
		}
		memcpy((char *)api + syms[i].off, &p, sizeof(p));
	}
	api->handle = h;
	return 0;
}

/* The objects this process has loaded (libcupti or CUDA libraries tell where to look). */
struct loaded {
	char *paths[128];
	int n;
};

static int each_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct loaded *l = arg;
	const char *base;

	if (!info->dlpi_name || !*info->dlpi_name || l->n >= (int)ARRAY_SIZE(l->paths) - 1)
		return 0;
	base = strrchr(info->dlpi_name, '/');
	base = base ? base + 1 : info->dlpi_name;
	if (!strncmp(base, "libcu", 5) || !strncmp(base, "libnvrtc", 8))
		l->paths[l->n++] = strdup(info->dlpi_name);
	return 0;
}

/* The CUDA version the driver supports, when libcuda is already in the process (never load it). */
static int driver_version(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	int (*get)(int *) = h ? (int (*)(int *))dlsym(h, "cuDriverGetVersion") : NULL;
	int v = 0;

	if (get && get(&v) != 0)
		v = 0;
	if (h)
		dlclose(h);
	return v;
}

int cupti_api__load(struct cupti_api *api, char *err, size_t errlen)
{
	struct cupti_candidate cand[CUPTI_LOCATE_MAX];
	struct loaded objs = { .n = 0 };
	struct cupti_locate_in in = { 0 };
	char first[256] = "";
	int n, i, rc = -ENOENT;

	memset(api, 0, sizeof(*api));
	dl_iterate_phdr(each_object, &objs);
	objs.paths[objs.n] = NULL;
	in.override = getenv("GPUIO_CUPTI");
	in.loaded = (const char *const *)objs.paths;
	in.driver_major = cupti_locate__driver_major(driver_version());
#ifdef GPUIO_CUPTI_PATH
	in.build_path = GPUIO_CUPTI_PATH;
#endif
	n = cupti_locate(&in, cand, CUPTI_LOCATE_MAX);
	for (i = 0; i < n && rc; i++) {
		/* RTLD_LOCAL: our CUPTI symbols must not interpose on the application's. */
		void *h = dlopen(cand[i].path, RTLD_NOW | RTLD_LOCAL);

		if (!h) {
			if (!first[0])
				snprintf(first, sizeof(first), "%s", dlerror());
			continue;
		}
		rc = fill(api, h, first, sizeof(first));
		if (rc) {
			dlclose(h);
			continue;
		}
		snprintf(api->path, sizeof(api->path), "%s", cand[i].path);
		api->why = cand[i].why;
	}
	for (i = 0; i < objs.n; i++)
		free(objs.paths[i]);
	if (rc)
		snprintf(err, errlen, "no usable libcupti (%d candidates%s%s)%s%s", n,
			 in.override ? ", GPUIO_CUPTI=" : "", in.override ? in.override : "",
			 first[0] ? ": " : "", first);
	return rc;
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
