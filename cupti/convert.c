// SPDX-License-Identifier: MIT
/* convert.c — CUPTI activity records -> gpuio GPU records (see convert.h). */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>
#include "bpf/gpuio_abi.h"
#include "clock.h"
#include "convert.h"
#include "record_layout.h"
#include "lib/units.h"

#define ROUND8(n) (((n) + 7u) & ~7u)

/*
 * API calls dropped as noise: queries that frameworks issue thousands of
 * times a second (PyTorch calls cudaGetDevice and cudaStreamIsCapturing
 * around nearly every op) and that say nothing about where time went.
 * Matched on the base name: "cudaGetDevice" drops cudaGetDevice_v3020 but
 * not cudaGetDeviceCount. The collector also switches them off at the
 * source (cuptiActivityEnableRuntimeApi/DriverApi) so they cost nothing.
 */
static const char *const noisy_apis[] = {
	/* runtime */
	"cudaGetLastError", "cudaPeekAtLastError", "cudaGetDevice", "cudaGetDeviceCount",
	"cudaDeviceGetAttribute", "cudaStreamQuery", "cudaEventQuery",
	"cudaStreamIsCapturing", "cudaStreamGetCaptureInfo", "cudaThreadExchangeStreamCaptureMode",
	"cudaPointerGetAttributes", "cudaFuncGetAttributes", "cudaGetDriverEntryPoint",
	"cudaGetDriverEntryPointByVersion", "cudaRuntimeGetVersion", "cudaDriverGetVersion",
	/* driver */
	"cuCtxGetCurrent", "cuCtxSetCurrent", "cuCtxGetDevice", "cuCtxPushCurrent",
	"cuCtxPopCurrent", "cuCtxGetId", "cuDevicePrimaryCtxGetState", "cuStreamQuery",
	"cuEventQuery", "cuDeviceGet", "cuDeviceGetCount", "cuDeviceGetAttribute",
	"cuGetProcAddress", "cuDriverGetVersion", "cuPointerGetAttribute",
	"cuPointerGetAttributes", "cuStreamIsCapturing", "cuStreamGetCaptureInfo",
	"cuThreadExchangeStreamCaptureMode", "cuFuncGetAttribute", "cuStreamGetCtx",
	"cuStreamGetId", "cuGetExportTable",
};

/* First match wins: the specific prefixes come before the general ones. */
static const struct { const char *prefix; int kind; } api_kinds[] = {
	{ "cudaLaunchHostFunc", GPUIO_API_OTHER }, { "cuLaunchHostFunc", GPUIO_API_OTHER },
	{ "cudaGraphLaunch", GPUIO_API_GRAPH_LAUNCH }, { "cuGraphLaunch", GPUIO_API_GRAPH_LAUNCH },
	{ "cudaLaunch", GPUIO_API_LAUNCH }, { "cuLaunch", GPUIO_API_LAUNCH },
	{ "__cudaLaunch", GPUIO_API_LAUNCH },
	{ "cudaMemcpy", GPUIO_API_MEMCPY }, { "cuMemcpy", GPUIO_API_MEMCPY },
	{ "cudaMemset", GPUIO_API_MEMSET }, { "cuMemset", GPUIO_API_MEMSET },
	{ "cudaDeviceSynchronize", GPUIO_API_SYNC }, { "cudaStreamSynchronize", GPUIO_API_SYNC },
	{ "cudaEventSynchronize", GPUIO_API_SYNC }, { "cudaThreadSynchronize", GPUIO_API_SYNC },
	{ "cuCtxSynchronize", GPUIO_API_SYNC }, { "cuStreamSynchronize", GPUIO_API_SYNC },
	{ "cuEventSynchronize", GPUIO_API_SYNC },
	{ "cudaMalloc", GPUIO_API_MALLOC }, { "cudaHostAlloc", GPUIO_API_MALLOC },
	{ "cuMemAlloc", GPUIO_API_MALLOC }, { "cuMemHostAlloc", GPUIO_API_MALLOC },
	{ "cudaFree", GPUIO_API_FREE }, { "cuMemFree", GPUIO_API_FREE },
};

static const struct { const char *tag; uint8_t kind; } memcpy_tags[] = {
	{ "HtoD", GPUIO_MEMCPY_HTOD }, { "DtoH", GPUIO_MEMCPY_DTOH },
	{ "DtoD", GPUIO_MEMCPY_DTOD }, { "HtoA", GPUIO_MEMCPY_HTOA },
	{ "AtoH", GPUIO_MEMCPY_ATOH }, { "AtoA", GPUIO_MEMCPY_ATOA },
	{ "AtoD", GPUIO_MEMCPY_ATOD }, { "DtoA", GPUIO_MEMCPY_DTOA },
	{ "Peer", GPUIO_MEMCPY_PTOP },
};

enum { API_UNSEEN = 0, API_KEEP = 1, API_DROP = 2 };
struct api_slot {
	char name[48];
	uint8_t state, kind, memcpy_kind;
};

/* Demangled kernel names, keyed by CUPTI's name pointer (checked by content). */
#define NAME_SLOTS 1024
struct name_slot {
	const char *key;
	char *mangled;
	char *out;
	uint16_t len;
	uint16_t flags;
};

/* Open NVTX ranges, waiting for their end marker. */
#define NVTX_OPEN 512
struct nvtx_open {
	uint32_t id;
	uint32_t tid;
	uint64_t start;
	uint16_t len;
	uint8_t used;
	char name[sizeof(((struct gpuio_nvtx_range *)0)->name)];
};

struct convert {
	const struct cupti_api *api;
	pid_t pid;
	int64_t offset;
	struct convert_stats st;
	struct api_slot rt[CUPTI_RUNTIME_TRACE_CBID_SIZE];
	struct api_slot drv[CUPTI_DRIVER_TRACE_CBID_SIZE];
	struct name_slot names[NAME_SLOTS];
	struct nvtx_open nvtx[NVTX_OPEN];
	unsigned nvtx_used;
	enum cupti_layout layout;     /* the loaded libcupti's record structs */
};

/* ---- names ---------------------------------------------------------- */

static int base_is(const char *name, const char *base)
{
	size_t n = strlen(base);

	return strncmp(name, base, n) == 0 && (name[n] == 0 || name[n] == '_');
}

int convert__api_filtered(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(noisy_apis); i++)
		if (base_is(name, noisy_apis[i]))
			return 1;
	return 0;
}

int convert__api_kind(const char *name, uint8_t *memcpy_kind)
{
	size_t i, j;

	*memcpy_kind = GPUIO_MEMCPY_UNKNOWN;
	for (i = 0; i < ARRAY_SIZE(api_kinds); i++) {
		if (strncmp(name, api_kinds[i].prefix, strlen(api_kinds[i].prefix)))
			continue;
		if (api_kinds[i].kind == GPUIO_API_MEMCPY)
			for (j = 0; j < ARRAY_SIZE(memcpy_tags); j++)
				if (strstr(name, memcpy_tags[j].tag)) {
					*memcpy_kind = memcpy_tags[j].kind;
					break;
				}
		return api_kinds[i].kind;
	}
	return GPUIO_API_OTHER;
}

/*
 * "cudaLaunchKernel_v7000" -> "cudaLaunchKernel": CUPTI tags runtime names
 * with the CUDA version (4+ digits); a driver "_v2" is the symbol's own.
 */
static void api_name(const struct cupti_api *api, CUpti_CallbackDomain dom, uint32_t cbid,
		     char *out, size_t outlen)
{
	const char *s = NULL;
	size_t n;
	char *v;

	if (!api->getCallbackName || api->getCallbackName(dom, cbid, &s) != CUPTI_SUCCESS || !s) {
		snprintf(out, outlen, "%s_cbid_%u",
			 dom == CUPTI_CB_DOMAIN_RUNTIME_API ? "runtime" : "driver", cbid);
		return;
	}
	snprintf(out, outlen, "%s", s);
	v = strrchr(out, '_');
	if (v && v[1] == 'v' && v[2]) {
		n = strspn(v + 2, "0123456789");
		if (n >= 4 && v[2 + n] == 0)
			*v = 0;
	}
}

static void api_classify(const struct cupti_api *api, CUpti_CallbackDomain dom,
			 uint32_t cbid, struct api_slot *s)
{
	api_name(api, dom, cbid, s->name, sizeof(s->name));
	s->kind = (uint8_t)convert__api_kind(s->name, &s->memcpy_kind);
	s->state = convert__api_filtered(s->name) ? API_DROP : API_KEEP;
}

void convert__each_filtered(const struct cupti_api *api, CUpti_CallbackDomain dom,
			    void (*fn)(void *arg, uint32_t cbid), void *arg)
{
	uint32_t cbid, max = dom == CUPTI_CB_DOMAIN_RUNTIME_API ? CUPTI_RUNTIME_TRACE_CBID_SIZE
								: CUPTI_DRIVER_TRACE_CBID_SIZE;
	struct api_slot s;

	for (cbid = 1; cbid < max; cbid++) {
		api_classify(api, dom, cbid, &s);
		if (s.state == API_DROP)
			fn(arg, cbid);
	}
}

typedef char *(*cxa_demangle_fn)(const char *, char *, size_t *, int *);
static cxa_demangle_fn demangle_fn;
static pthread_once_t demangle_once = PTHREAD_ONCE_INIT;

/* libstdc++ is in nearly every CUDA process; load it only if it is not. */
static void demangle_init(void)
{
	void *h;

	demangle_fn = (cxa_demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");
	if (demangle_fn)
		return;
	h = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL);
	if (h)
		demangle_fn = (cxa_demangle_fn)dlsym(h, "__cxa_demangle");
}

static size_t hash_ptr(const void *p)
{
	uint64_t x = (uint64_t)(uintptr_t)p;

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return (size_t)(x % NAME_SLOTS);
}

/* Demangled name for CUPTI's name pointer; NULL when out of memory. */
static const struct name_slot *kernel_name(struct convert *c, const char *mangled)
{
	struct name_slot *s = &c->names[hash_ptr(mangled)];
	char *out = NULL;
	size_t len;
	int status = -1;

	if (s->key == mangled && strcmp(s->mangled, mangled) == 0)
		return s;
	free(s->mangled);
	free(s->out);
	memset(s, 0, sizeof(*s));
	if (mangled[0] == '_' && mangled[1] == 'Z') {
		pthread_once(&demangle_once, demangle_init);
		if (demangle_fn)
			out = demangle_fn(mangled, NULL, NULL, &status);
		if (status != 0) {
			free(out);
			out = NULL;
		}
	}
	if (!out)
		out = strdup(mangled);
	s->mangled = strdup(mangled);
	if (!out || !s->mangled) {
		free(out);
		free(s->mangled);
		s->mangled = NULL;
		return NULL;
	}
	len = strlen(out);
	if (len > GPUIO_GPU_NAME_MAX) {
		len = GPUIO_GPU_NAME_MAX;
		s->flags |= GPUIO_GK_NAME_TRUNCATED;
	}
	s->key = mangled;
	s->out = out;
	s->len = (uint16_t)len;
	return s;
}

/* ---- records -------------------------------------------------------- */

static void hdr_fill(struct gpuio_hdr *h, const struct convert *c, __u16 type, size_t size,
		     __u32 tid, uint64_t ts)
{
	h->type = type;
	h->size = (__u16)size;
	h->pid = (__u32)c->pid;
	h->tid = tid;
	h->cpu = 0;
	h->ts = clock__apply(ts, c->offset);
}

/*
 * The emitters below are written once over the field names and stamped out
 * for each struct version a layout uses (record_layout.h): the compiler
 * takes each version's offsets from NVIDIA's own struct definitions.
 */
#define DEFINE_EMIT_KERNEL(fn, T)                                                           \
static int fn(struct convert *c, const T *k, convert_emit_fn emit, void *arg)               \
{                                                                                           \
	struct gpuio_gpu_kernel r;                                                          \
	const struct name_slot *n = k->name ? kernel_name(c, k->name) : NULL;               \
	size_t size, len = n ? n->len : 0;                                                  \
                                                                                            \
	memset(&r, 0, offsetof(struct gpuio_gpu_kernel, name));                             \
	size = ROUND8(offsetof(struct gpuio_gpu_kernel, name) + len);                       \
	hdr_fill(&r.hdr, c, GPUIO_REC_GPU_KERNEL, size, 0, k->start);                       \
	r.end_ns = clock__apply(k->end, c->offset);                                         \
	r.context = k->contextId;                                                           \
	r.stream = k->streamId;                                                             \
	r.correlation = k->correlationId;                                                   \
	r.device = k->deviceId;                                                             \
	r.grid[0] = (__u32)k->gridX;                                                        \
	r.grid[1] = (__u32)k->gridY;                                                        \
	r.grid[2] = (__u32)k->gridZ;                                                        \
	r.block[0] = (__u32)k->blockX;                                                      \
	r.block[1] = (__u32)k->blockY;                                                      \
	r.block[2] = (__u32)k->blockZ;                                                      \
	r.static_smem = (__u32)k->staticSharedMemory;                                       \
	r.dynamic_smem = (__u32)k->dynamicSharedMemory;                                     \
	r.registers = k->registersPerThread;                                                \
	r.name_len = (__u16)len;                                                            \
	r.flags = n ? n->flags : 0;                                                         \
	if (len)                                                                            \
		memcpy(r.name, n->out, len);                                                \
	memset(r.name + len, 0, size - offsetof(struct gpuio_gpu_kernel, name) - len);      \
	return emit(arg, &r, size);                                                         \
}
DEFINE_EMIT_KERNEL(emit_kernel10, CUpti_ActivityKernel10)
DEFINE_EMIT_KERNEL(emit_kernel9, CUpti_ActivityKernel9)

static int emit_kernel(struct convert *c, const CUpti_Activity *a, convert_emit_fn emit, void *arg)
{
	if (c->layout == CUPTI_LAYOUT_13)
		return emit_kernel10(c, (const void *)a, emit, arg);
	return emit_kernel9(c, (const void *)a, emit, arg);
}

/* A host/device copy record of any version into r. */
#define FILL_MEMCPY(r, c, m) do {                                                             \
	hdr_fill(&(r)->hdr, c, GPUIO_REC_GPU_MEMCPY, sizeof(*(r)), 0, (m)->start);              \
	(r)->end_ns = clock__apply((m)->end, (c)->offset);                                      \
	(r)->bytes = (m)->bytes;                                                                \
	(r)->context = (m)->contextId;                                                          \
	(r)->stream = (m)->streamId;                                                            \
	(r)->correlation = (m)->correlationId;                                                  \
	(r)->device = (m)->deviceId;                                                            \
	(r)->dst_device = (m)->deviceId;                                                        \
	(r)->kind = (m)->copyKind;                                                              \
	(r)->src_kind = (m)->srcKind;                                                           \
	(r)->dst_kind = (m)->dstKind;                                                           \
	(r)->flags = (m)->flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC ? GPUIO_GM_ASYNC : 0;        \
} while (0)

static int emit_memcpy(struct convert *c, const CUpti_Activity *a, convert_emit_fn emit, void *arg)
{
	struct gpuio_gpu_memcpy r;

	memset(&r, 0, sizeof(r));
	if (a->kind == CUPTI_ACTIVITY_KIND_MEMCPY2) {
		const CUpti_ActivityMemcpyPtoP4 *m = (const void *)a;

		hdr_fill(&r.hdr, c, GPUIO_REC_GPU_MEMCPY, sizeof(r), 0, m->start);
		r.end_ns = clock__apply(m->end, c->offset);
		r.bytes = m->bytes;
		r.context = m->contextId;
		r.stream = m->streamId;
		r.correlation = m->correlationId;
		r.device = m->srcDeviceId;
		r.dst_device = m->dstDeviceId;
		r.kind = m->copyKind;
		r.src_kind = m->srcKind;
		r.dst_kind = m->dstKind;
		r.flags = GPUIO_GM_PEER | (m->flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC ? GPUIO_GM_ASYNC : 0);
	} else if (c->layout == CUPTI_LAYOUT_13) {
		FILL_MEMCPY(&r, c, (const CUpti_ActivityMemcpy6 *)a);
	} else if (c->layout == CUPTI_LAYOUT_12_8) {
		FILL_MEMCPY(&r, c, (const cupti128_ActivityMemcpy6 *)a);
	} else {
		FILL_MEMCPY(&r, c, (const CUpti_ActivityMemcpy5 *)a);
	}
	return emit(arg, &r, sizeof(r));
}

#define DEFINE_EMIT_MEMSET(fn, T)                                                           \
static int fn(struct convert *c, const T *m, convert_emit_fn emit, void *arg)               \
{                                                                                           \
	struct gpuio_gpu_memset r;                                                          \
                                                                                            \
	memset(&r, 0, sizeof(r));                                                           \
	hdr_fill(&r.hdr, c, GPUIO_REC_GPU_MEMSET, sizeof(r), 0, m->start);                  \
	r.end_ns = clock__apply(m->end, c->offset);                                         \
	r.bytes = m->bytes;                                                                 \
	r.context = m->contextId;                                                           \
	r.stream = m->streamId;                                                             \
	r.correlation = m->correlationId;                                                   \
	r.device = m->deviceId;                                                             \
	r.value = m->value;                                                                 \
	r.mem_kind = (__u8)m->memoryKind;                                                   \
	r.flags = m->flags & CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC ? GPUIO_GM_ASYNC : 0;         \
	return emit(arg, &r, sizeof(r));                                                    \
}
DEFINE_EMIT_MEMSET(emit_memset13, CUpti_ActivityMemset4)
DEFINE_EMIT_MEMSET(emit_memset12, cupti12_ActivityMemset4)

static int emit_memset(struct convert *c, const CUpti_Activity *a, convert_emit_fn emit, void *arg)
{
	if (c->layout == CUPTI_LAYOUT_13)
		return emit_memset13(c, (const void *)a, emit, arg);
	return emit_memset12(c, (const void *)a, emit, arg);
}

static int emit_api(struct convert *c, const CUpti_ActivityAPI *a, convert_emit_fn emit, void *arg)
{
	int drv = a->kind == CUPTI_ACTIVITY_KIND_DRIVER;
	CUpti_CallbackDomain dom = drv ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API;
	struct api_slot tmp, *s = &tmp;
	struct gpuio_cuda_api r;

	if (drv && a->cbid < CUPTI_DRIVER_TRACE_CBID_SIZE)
		s = &c->drv[a->cbid];
	else if (!drv && a->cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE)
		s = &c->rt[a->cbid];
	if (s == &tmp || s->state == API_UNSEEN)
		api_classify(c->api, dom, a->cbid, s);
	if (s->state == API_DROP) {
		c->st.filtered++;
		return 0;
	}
	memset(&r, 0, sizeof(r));
	hdr_fill(&r.hdr, c, GPUIO_REC_CUDA_API, sizeof(r), a->threadId, a->start);
	r.end_ns = clock__apply(a->end, c->offset);
	r.ret = (__s64)a->returnValue;
	r.correlation = a->correlationId;
	r.cbid = a->cbid;
	r.source = drv ? GPUIO_API_DRIVER : GPUIO_API_RUNTIME;
	r.kind = s->kind;
	r.memcpy_kind = s->memcpy_kind;
	memcpy(r.name, s->name, sizeof(r.name));
	r.name[sizeof(r.name) - 1] = 0;
	return emit(arg, &r, sizeof(r));
}

#define DEFINE_EMIT_SYNC(fn, T)                                                             \
static int fn(struct convert *c, const T *s, convert_emit_fn emit, void *arg)               \
{                                                                                           \
	struct gpuio_gpu_sync r;                                                            \
                                                                                            \
	memset(&r, 0, sizeof(r));                                                           \
	hdr_fill(&r.hdr, c, GPUIO_REC_GPU_SYNC, sizeof(r), 0, s->start);                    \
	r.end_ns = clock__apply(s->end, c->offset);                                         \
	r.context = s->contextId;                                                           \
	r.stream = s->streamId;                                                             \
	r.correlation = s->correlationId;                                                   \
	/* CUPTI's synchronization types are ours, 0..4. */                                 \
	r.type = (unsigned)s->type <= GPUIO_SYNC_CONTEXT ? (__u32)s->type : GPUIO_SYNC_UNKNOWN; \
	return emit(arg, &r, sizeof(r));                                                    \
}
DEFINE_EMIT_SYNC(emit_sync2, CUpti_ActivitySynchronization2)
DEFINE_EMIT_SYNC(emit_sync1, CUpti_ActivitySynchronization)

static int emit_sync(struct convert *c, const CUpti_Activity *a, convert_emit_fn emit, void *arg)
{
	if (c->layout == CUPTI_LAYOUT_12_0)
		return emit_sync1(c, (const void *)a, emit, arg);
	return emit_sync2(c, (const void *)a, emit, arg);
}

static int emit_overhead(struct convert *c, const CUpti_ActivityOverhead3 *o,
			 convert_emit_fn emit, void *arg)
{
	struct gpuio_gpu_overhead r;
	__u32 tid = 0;

	memset(&r, 0, sizeof(r));
	switch (o->objectKind) {
	case CUPTI_ACTIVITY_OBJECT_THREAD:
		tid = o->objectId.pt.threadId;
		r.object_id = tid;
		break;
	case CUPTI_ACTIVITY_OBJECT_PROCESS:
		r.object_id = o->objectId.pt.processId;
		break;
	case CUPTI_ACTIVITY_OBJECT_DEVICE:
	case CUPTI_ACTIVITY_OBJECT_CONTEXT:
	case CUPTI_ACTIVITY_OBJECT_STREAM:
		r.object_id = o->objectId.dcs.deviceId;
		break;
	default:
		break;
	}
	hdr_fill(&r.hdr, c, GPUIO_REC_GPU_OVERHEAD, sizeof(r), tid, o->start);
	r.end_ns = clock__apply(o->end, c->offset);
	r.kind = (__u32)o->overheadKind;
	r.object_kind = (__u32)o->objectKind;
	return emit(arg, &r, sizeof(r));
}

static int emit_nvtx(struct convert *c, __u32 tid, uint64_t start, uint64_t end, __u32 depth,
		     const char *name, size_t len, convert_emit_fn emit, void *arg)
{
	struct gpuio_nvtx_range r;
	size_t size = ROUND8(offsetof(struct gpuio_nvtx_range, name) + len);

	memset(&r, 0, size);
	hdr_fill(&r.hdr, c, GPUIO_REC_NVTX, size, tid, start);
	r.end_ns = clock__apply(end, c->offset);
	r.depth = depth;
	r.name_len = (__u16)len;
	if (len)
		memcpy(r.name, name, len);
	return emit(arg, &r, size);
}

/*
 * NVTX arrives as markers: START (with the name) and END share an id;
 * INSTANTANEOUS markers become zero-length ranges. Depth is the number of
 * ranges open on the same thread when the range started.
 */
static int convert_marker(struct convert *c, const CUpti_ActivityMarker2 *m,
			  convert_emit_fn emit, void *arg)
{
	__u32 tid = m->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ? m->objectId.pt.threadId : 0;
	size_t len = m->name ? strnlen(m->name, sizeof(c->nvtx[0].name)) : 0;
	unsigned i, depth = 0, slot;
	int err;

	if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS) {
		err = emit_nvtx(c, tid, m->timestamp, m->timestamp, 0, m->name, len, emit, arg);
		return err < 0 ? err : 1;
	}
	if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
		for (i = 0; i < NVTX_OPEN && c->nvtx[i].used; i++)
			;
		if (i == NVTX_OPEN) {
			c->st.nvtx_lost++;
			return 0;
		}
		c->nvtx[i].used = 1;
		c->nvtx[i].id = m->id;
		c->nvtx[i].tid = tid;
		c->nvtx[i].start = m->timestamp;
		c->nvtx[i].len = (uint16_t)len;
		if (len)
			memcpy(c->nvtx[i].name, m->name, len);
		c->nvtx_used++;
		return 0;
	}
	if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_END) {
		for (i = 0; i < NVTX_OPEN; i++)
			if (c->nvtx[i].used && c->nvtx[i].id == m->id)
				break;
		if (i == NVTX_OPEN) {
			c->st.nvtx_lost++;
			return 0;
		}
		slot = i;
		for (i = 0; i < NVTX_OPEN; i++)
			if (i != slot && c->nvtx[i].used && c->nvtx[i].tid == c->nvtx[slot].tid &&
			    c->nvtx[i].start <= c->nvtx[slot].start)
				depth++;
		c->nvtx[slot].used = 0;
		c->nvtx_used--;
		err = emit_nvtx(c, c->nvtx[slot].tid, c->nvtx[slot].start, m->timestamp, depth,
				c->nvtx[slot].name, c->nvtx[slot].len, emit, arg);
		return err < 0 ? err : 1;
	}
	c->st.ignored++;
	return 0;
}

int convert__record(struct convert *c, const CUpti_Activity *a, convert_emit_fn emit, void *arg)
{
	int err;

	switch (a->kind) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
	case CUPTI_ACTIVITY_KIND_KERNEL:
		err = emit_kernel(c, a, emit, arg);
		break;
	case CUPTI_ACTIVITY_KIND_MEMCPY:
	case CUPTI_ACTIVITY_KIND_MEMCPY2:
		err = emit_memcpy(c, a, emit, arg);
		break;
	case CUPTI_ACTIVITY_KIND_MEMSET:
		err = emit_memset(c, a, emit, arg);
		break;
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER: {
		uint64_t before = c->st.filtered;

		err = emit_api(c, (const void *)a, emit, arg);
		if (!err && c->st.filtered != before)
			return 0;
		break;
	}
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
		err = emit_sync(c, a, emit, arg);
		break;
	case CUPTI_ACTIVITY_KIND_OVERHEAD:
		err = emit_overhead(c, (const void *)a, emit, arg);
		break;
	case CUPTI_ACTIVITY_KIND_MARKER:
		err = convert_marker(c, (const void *)a, emit, arg);
		if (err > 0)
			c->st.converted++;
		return err;
	default:
		c->st.ignored++;
		return 0;
	}
	if (err < 0)
		return err;
	c->st.converted++;
	return 1;
}

long convert__buffer(struct convert *c, uint8_t *buf, size_t valid, convert_emit_fn emit, void *arg)
{
	CUpti_Activity *rec = NULL;
	long n = 0;
	int k;

	if (!buf || !valid)
		return 0;
	while (c->api->activityGetNextRecord(buf, valid, &rec) == CUPTI_SUCCESS) {
		k = convert__record(c, rec, emit, arg);
		if (k > 0)
			n += k;
	}
	return n;
}

struct convert *convert__new(const struct cupti_api *api, pid_t pid)
{
	struct convert *c = calloc(1, sizeof(*c));
	uint32_t version = 0;

	if (!c)
		return NULL;
	c->api = api;
	c->pid = pid;
	/* A libcupti without cuptiGetVersion predates every layout we know: take 13's. */
	c->layout = CUPTI_LAYOUT_13;
	if (api && api->getVersion && api->getVersion(&version) == CUPTI_SUCCESS)
		c->layout = record_layout__for_version(version);
	return c;
}

void convert__free(struct convert *c)
{
	unsigned i;

	if (!c)
		return;
	for (i = 0; i < NAME_SLOTS; i++) {
		free(c->names[i].mangled);
		free(c->names[i].out);
	}
	free(c);
}

void convert__set_pid(struct convert *c, pid_t pid)
{
	c->pid = pid;
}

void convert__set_offset(struct convert *c, int64_t offset_ns)
{
	c->offset = offset_ns;
}

enum cupti_layout convert__layout(const struct convert *c)
{
	return c->layout;
}

const struct convert_stats *convert__stats(const struct convert *c)
{
	return &c->st;
}
