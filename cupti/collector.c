// SPDX-License-Identifier: MIT
/*
 * collector.c — the CUPTI collector's lifecycle (see collector.h).
 * collector__start() (~100 lines) is the ordered CUPTI setup, a step each.
 */
#include <errno.h>
#include <libgen.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include "capture/capture.h"
#include "bufpool.h"
#include "clock.h"
#include "collector.h"
#include "convert.h"
#include "cupti_locate.h"
#include "record_layout.h"
#include "log.h"
#include "side_file.h"
#include "lib/units.h"

#define CLOCK_SAMPLES 64          /* at start: tightest of many */
#define CLOCK_RESAMPLES 16        /* on later flushes (offset mode only) */
#define CLOCK_RESAMPLE_NS NSEC_PER_SEC
#define CLOCK_SAME_SLACK_NS 1000  /* callback took: CUPTI reads our MONOTONIC */
#define DEFAULT_FLUSH_MS 1000
#define STATE_STOPPING 100        /* internal: tracer gone, teardown under way */

static struct collector {
	pthread_mutex_t lock;         /* file, converter, counters */
	struct cupti_api api;
	struct side_file file;
	struct convert *conv;
	char dir[4096];               /* where fork children put their own file */
	uint64_t (*mono)(void);
	CUpti_SubscriberHandle sub;
	pid_t pid;                    /* process whose records we write */
	int how;
	int state;                    /* 0 (off) or enum gpuio_gpu_state */
	int clock;                    /* enum gpuio_gpu_clock */
	int forked;                   /* fork child of the process that started us */
	int64_t offset;
	uint64_t uncertainty;
	uint64_t last_measure;
	uint64_t dropped, reported_dropped;
	uint32_t version;
	int32_t cupti_error;
} g = { .lock = PTHREAD_MUTEX_INITIALIZER, .file = { .fd = -1 } };

/* 1 from start until a teardown finishes (or for good, in launch mode) */
static atomic_int started;

static const CUpti_ActivityKind required_kinds[] = {
	CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,  /* never KERNEL: it serialises kernels */
	CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
	CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER,
};
static const CUpti_ActivityKind optional_kinds[] = {
	CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
	CUPTI_ACTIVITY_KIND_OVERHEAD, CUPTI_ACTIVITY_KIND_MARKER,  /* NVTX */
};

/* ---- records -------------------------------------------------------- */

static int emit_rec(void *arg, const void *rec, size_t len)
{
	return side_file__append(&g.file, rec, len);
}

/* Caller holds g.lock. */
static void info_append(int state, const char *reason)
{
	struct gpuio_gpu_info r;

	memset(&r, 0, sizeof(r));
	r.hdr.type = GPUIO_REC_GPU_INFO;
	r.hdr.size = sizeof(r);
	r.hdr.pid = (__u32)g.pid;
	r.hdr.tid = (__u32)syscall(SYS_gettid);
	r.hdr.ts = g.mono();
	r.offset_ns = g.offset;
	r.uncertainty_ns = g.uncertainty;
	r.cupti_dropped = g.dropped;
	r.records = g.file.records + g.file.staged;
	r.write_errors = g.file.write_errors;
	r.state = (__u32)state;
	r.clock = (__u32)g.clock;
	r.how = (__u32)g.how;
	r.cupti_version = g.version;
	r.cupti_error = g.cupti_error;
	snprintf(r.reason, sizeof(r.reason), "%s", reason ? reason : "");
	side_file__append(&g.file, &r, sizeof(r));
	g.reported_dropped = g.dropped;
}

/* For the ON record: which libcupti, and why that one (the reader shows it). */
static const char *lib_note(void)
{
	static char note[sizeof(((struct gpuio_gpu_info *)0)->reason)];
	const char *p = g.api.path;
	size_t room = sizeof(note) - 48;

	if (!p[0])
		return "";
	if (strlen(p) > room)  /* keep the file name end of a long path */
		p += strlen(p) - room;
	snprintf(note, sizeof(note), "libcupti %s%s (%s)", p == g.api.path ? "" : "...", p,
		 g.api.why ? g.api.why : "?");
	return note;
}

static const char *hint(CUptiResult r)
{
	switch ((int)r) {
	case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
		return " (another profiler holds CUPTI)";
	case CUPTI_ERROR_UNKNOWN:
	case CUPTI_ERROR_NOT_INITIALIZED:
	case CUPTI_ERROR_INVALID_DEVICE:
		return " (no CUDA driver or GPU?)";
	case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
	case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
		return " (profiling restricted to admin users)";
	case CUPTI_ERROR_NOT_COMPATIBLE:
	case CUPTI_ERROR_CUDA_COMPILER_NOT_COMPATIBLE:
		return " (driver too old for this CUPTI)";
	default:
		return "";
	}
}

/* Say why we are off, once, in the file (and on stderr when verbose); close. */
static int unavailable(CUptiResult r, const char *what)
{
	char reason[sizeof(((struct gpuio_gpu_info *)0)->reason)];

	if (r != CUPTI_SUCCESS)
		snprintf(reason, sizeof(reason), "CUPTI unavailable: %s: %s%s", what,
			 cupti_api__result_name(&g.api, r), hint(r));
	else
		snprintf(reason, sizeof(reason), "CUPTI unavailable: %s", what);
	cupti_log("%s", reason);
	pthread_mutex_lock(&g.lock);
	g.cupti_error = (int32_t)r;
	g.clock = GPUIO_GPU_CLOCK_NONE;
	g.offset = 0;
	g.uncertainty = 0;
	g.state = GPUIO_GPU_UNAVAILABLE;
	info_append(GPUIO_GPU_UNAVAILABLE, reason);
	side_file__close(&g.file);
	pthread_mutex_unlock(&g.lock);
	/* a later attach (a new trace session) may find CUPTI free again */
	if (g.how == GPUIO_GPU_HOW_ATTACH)
		atomic_store(&started, 0);
	return -ENODEV;
}

/* ---- clock ---------------------------------------------------------- */

static uint64_t CUPTIAPI mono_cb(void)
{
	return clock__mono_ns();
}

static uint64_t read_mono(void *ctx)
{
	return g.mono();
}

static uint64_t read_cupti(void *ctx)
{
	uint64_t t = 0;

	return g.api.getTimestamp(&t) == CUPTI_SUCCESS ? t : 0;
}

static void clock_setup(int callback_took)
{
	struct clock_fit fit;

	g.last_measure = g.mono();
	if (clock__measure(read_mono, read_cupti, NULL, CLOCK_SAMPLES, &fit)) {
		cupti_log("cuptiGetTimestamp fails: GPU timestamps left on CUPTI's clock");
		g.clock = GPUIO_GPU_CLOCK_NONE;
		return;
	}
	if (callback_took && clock__same(&fit, CLOCK_SAME_SLACK_NS)) {
		g.clock = GPUIO_GPU_CLOCK_MONOTONIC_CB;
		g.offset = 0;
		g.uncertainty = 0;
	} else {
		g.clock = GPUIO_GPU_CLOCK_OFFSET;
		g.offset = fit.offset_ns;
		g.uncertainty = fit.uncertainty_ns;
	}
	convert__set_offset(g.conv, g.offset);
	cupti_log("clock: %s, offset %lld ns +- %llu ns",
		  g.clock == GPUIO_GPU_CLOCK_MONOTONIC_CB ? "MONOTONIC callback" : "measured offset",
		  (long long)g.offset, (unsigned long long)g.uncertainty);
}

/* Offset mode: follow the other clock's drift (NTP slew) piecewise, per flush. Lock held. */
static void clock_remeasure(void)
{
	struct clock_fit fit;
	uint64_t now = g.mono();

	if (now - g.last_measure < CLOCK_RESAMPLE_NS)
		return;
	g.last_measure = now;
	if (clock__measure(read_mono, read_cupti, NULL, CLOCK_RESAMPLES, &fit))
		return;
	g.offset = fit.offset_ns;
	g.uncertainty = fit.uncertainty_ns;
	convert__set_offset(g.conv, g.offset);
}

/* ---- CUPTI callbacks ------------------------------------------------ */

static void CUPTIAPI buf_requested(uint8_t **buf, size_t *size, size_t *max_records)
{
	*buf = bufpool__get(size);
	*max_records = 0;
}

/* A fork child that produces activity of its own gets its own file. Lock held. */
static int child_file(void)
{
	char target[64];
	int err;

	if (g.file.fd >= 0)
		return 0;
	g.pid = getpid();
	convert__set_pid(g.conv, g.pid);
	snprintf(target, sizeof(target), "cupti pid %d", (int)g.pid);
	err = side_file__create(&g.file, g.dir, target);
	if (err) {
		cupti_log("fork child: cannot create its side file in %s: %s", g.dir, strerror(-err));
		g.state = GPUIO_GPU_UNAVAILABLE;
		return err;
	}
	info_append(GPUIO_GPU_ON, "fork child");
	return 0;
}

static void each_kind(void (*fn)(CUpti_ActivityKind k))
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(required_kinds); i++)
		fn(required_kinds[i]);
	for (i = 0; i < ARRAY_SIZE(optional_kinds); i++)
		fn(optional_kinds[i]);
}

static void disable_kind(CUpti_ActivityKind k)
{
	g.api.activityDisable(k);
}

/* Off CUPTI's thread: CUPTI calls are not allowed from its buffer callback. */
static void *teardown(void *arg)
{
	each_kind(disable_kind);
	if (g.api.unsubscribe)
		g.api.unsubscribe(g.sub);
	/* CUPTI hands its buffers back; the callback frees them unread */
	g.api.activityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	pthread_mutex_lock(&g.lock);
	g.state = 0;
	pthread_mutex_unlock(&g.lock);
	cupti_log("collector stopped");
	atomic_store(&started, 0);  /* a later attach starts a new session */
	return NULL;
}

/*
 * The tracer unlinks our side file when its trace ends: stop collecting, so
 * a process that outlives the trace stops paying for it. Lock held.
 */
static bool file_unlinked(void)
{
	struct stat st;

	return g.file.fd >= 0 && !fstat(g.file.fd, &st) && !st.st_nlink;
}

/* Disable and unsubscribe off CUPTI's thread; records are dropped meanwhile. Lock held. */
static void stop_async(void)
{
	pthread_attr_t attr;
	sigset_t all, old;
	pthread_t t;

	g.state = STATE_STOPPING;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (pthread_create(&t, &attr, teardown, NULL))
		cupti_log("cannot start the teardown thread: records are dropped from now on");
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
}

static int tracer_gone(void)
{
	if (g.forked || !file_unlinked())
		return 0;
	cupti_log("side file removed: the trace is over; collector stopping");
	side_file__discard(&g.file);
	close(g.file.fd);
	g.file.fd = -1;
	stop_async();
	return 1;
}

static void CUPTIAPI buf_completed(CUcontext ctx, uint32_t stream, uint8_t *buf,
				   size_t size, size_t valid)
{
	size_t d;
	long n;

	pthread_mutex_lock(&g.lock);
	if (g.state != GPUIO_GPU_ON && g.state != GPUIO_GPU_FINAL)
		goto out;
	if (g.forked && child_file())
		goto out;
	if (tracer_gone())
		goto out;
	if (g.clock == GPUIO_GPU_CLOCK_OFFSET)
		clock_remeasure();
	n = convert__buffer(g.conv, buf, valid, emit_rec, NULL);
	d = 0;
	if (g.api.activityGetNumDroppedRecords(ctx, stream, &d) == CUPTI_SUCCESS)
		g.dropped += d;
	d = 0;
	if (ctx && g.api.activityGetNumDroppedRecords(NULL, 0, &d) == CUPTI_SUCCESS)
		g.dropped += d;
	if (n > 0 || g.dropped != g.reported_dropped)
		info_append(g.state, "");
	side_file__flush(&g.file);
out:
	pthread_mutex_unlock(&g.lock);
	bufpool__put(buf);
}

static void CUPTIAPI on_callback(void *ud, CUpti_CallbackDomain dom, CUpti_CallbackId cbid,
				 const void *data)
{
	/* Flush before the context's buffers go away with it. */
	if (dom == CUPTI_CB_DOMAIN_RESOURCE && cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING &&
	    !g.forked && g.state == GPUIO_GPU_ON)
		g.api.activityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

/* ---- exit and fork -------------------------------------------------- */

void collector__stop(void)
{
	if (g.state != GPUIO_GPU_ON)
		return;
	/*
	 * A fork child never flushes: CUPTI's buffers there are copies of the
	 * parent's, whose records the parent writes itself.
	 */
	if (!g.forked)
		g.api.activityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	pthread_mutex_lock(&g.lock);
	if (g.state == GPUIO_GPU_ON && g.file.fd >= 0 && g.file.pid == getpid()) {
		info_append(GPUIO_GPU_FINAL, "");
		side_file__flush(&g.file);
		g.state = GPUIO_GPU_FINAL;
	}
	pthread_mutex_unlock(&g.lock);
}

static void at_exit(void)
{
	collector__stop();
}

static void fork_prepare(void)
{
	pthread_mutex_lock(&g.lock);
}

static void fork_parent(void)
{
	pthread_mutex_unlock(&g.lock);
}

static void fork_child(void)
{
	pthread_mutex_init(&g.lock, NULL);
	bufpool__atfork_child();
	g.forked = 1;
	/* The staged records and the file are the parent's. */
	side_file__discard(&g.file);
	if (g.file.fd >= 0)
		close(g.file.fd);
	g.file.fd = -1;
}

/* ---- start ---------------------------------------------------------- */

static unsigned flush_ms(unsigned asked)
{
	const char *e = getenv("GPUIO_GPU_FLUSH_MS");
	char *end;
	unsigned long v;

	if (asked)
		return asked;
	if (!e || !*e)
		return DEFAULT_FLUSH_MS;
	v = strtoul(e, &end, 10);
	return *end || v > 3600000 ? DEFAULT_FLUSH_MS : (unsigned)v;
}

static const char *kind_name(CUpti_ActivityKind k)
{
	switch (k) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return "CONCURRENT_KERNEL";
	case CUPTI_ACTIVITY_KIND_MEMCPY: return "MEMCPY";
	case CUPTI_ACTIVITY_KIND_MEMSET: return "MEMSET";
	case CUPTI_ACTIVITY_KIND_RUNTIME: return "RUNTIME";
	case CUPTI_ACTIVITY_KIND_DRIVER: return "DRIVER";
	case CUPTI_ACTIVITY_KIND_MEMCPY2: return "MEMCPY2";
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return "SYNCHRONIZATION";
	case CUPTI_ACTIVITY_KIND_OVERHEAD: return "OVERHEAD";
	case CUPTI_ACTIVITY_KIND_MARKER: return "MARKER";
	default: return "?";
	}
}

static void off_rt(void *arg, uint32_t cbid)
{
	g.api.activityEnableRuntimeApi(cbid, 0);
}

static void off_drv(void *arg, uint32_t cbid)
{
	g.api.activityEnableDriverApi(cbid, 0);
}

/* Enable what we collect. On failure, undo and return the failing kind's error. */
static CUptiResult enable_kinds(const char **what)
{
	static char buf[64];
	CUptiResult r;
	size_t i, j;

	for (i = 0; i < ARRAY_SIZE(required_kinds); i++) {
		r = g.api.activityEnable(required_kinds[i]);
		if (r != CUPTI_SUCCESS) {
			for (j = 0; j < i; j++)
				g.api.activityDisable(required_kinds[j]);
			snprintf(buf, sizeof(buf), "cuptiActivityEnable(%s)", kind_name(required_kinds[i]));
			*what = buf;
			return r;
		}
	}
	for (i = 0; i < ARRAY_SIZE(optional_kinds); i++) {
		r = g.api.activityEnable(optional_kinds[i]);
		if (r != CUPTI_SUCCESS)
			cupti_log("activity %s not collected: %s", kind_name(optional_kinds[i]),
				  cupti_api__result_name(&g.api, r));
	}
	/* After the kinds: enabling RUNTIME/DRIVER would re-enable these. */
	if (g.api.activityEnableRuntimeApi)
		convert__each_filtered(&g.api, CUPTI_CB_DOMAIN_RUNTIME_API, off_rt, NULL);
	if (g.api.activityEnableDriverApi)
		convert__each_filtered(&g.api, CUPTI_CB_DOMAIN_DRIVER_API, off_drv, NULL);
	return CUPTI_SUCCESS;
}

static int open_file(const struct collector_opts *o)
{
	char target[64], tmp[4096];
	int err;

	snprintf(target, sizeof(target), "cupti pid %d", (int)g.pid);
	if (o->path) {
		snprintf(tmp, sizeof(tmp), "%s", o->path);
		snprintf(g.dir, sizeof(g.dir), "%s", dirname(tmp));
		err = side_file__create_path(&g.file, o->path, target);
	} else {
		snprintf(g.dir, sizeof(g.dir), "%s", o->dir);
		err = side_file__create(&g.file, o->dir, target);
	}
	if (err)
		cupti_log("cannot create the side file in %s: %s: collector off", g.dir, strerror(-err));
	return err;
}

/* A new session's state: counters zero, no clock yet. */
static void session_reset(const struct collector_opts *o)
{
	g.pid = getpid();
	g.how = o->how;
	g.dropped = g.reported_dropped = 0;
	g.cupti_error = 0;
	g.offset = 0;
	g.uncertainty = 0;
	g.clock = GPUIO_GPU_CLOCK_NONE;
	g.mono = o->mono_now ? o->mono_now : clock__mono_ns;
}

/* The library, once per process, and only a version whose records we decode. */
static int load_cupti(const struct collector_opts *o)
{
	char why[256];

	if (o->api) {
		g.api = *o->api;
	} else if (!g.api.handle && cupti_api__load(&g.api, why, sizeof(why))) {
		return unavailable(CUPTI_SUCCESS, why);
	}
	/* Records are decoded by the library's version: refuse one we cannot read. */
	if (g.api.getVersion)
		g.api.getVersion(&g.version);
	if (g.version && record_layout__for_version(g.version) == CUPTI_LAYOUT_NONE) {
		char rel[16];

		cupti_locate__release(g.version, rel, sizeof(rel));
		snprintf(why, sizeof(why), "libcupti of CUDA %s (API %u): gpuio decodes 12.0-13.x",
			 rel, g.version);
		return unavailable(CUPTI_SUCCESS, why);
	}
	return 0;
}

int collector__start(const struct collector_opts *o)
{
	const char *what = NULL;
	static int hooks;
	CUptiResult r;
	int ts_took, err;

	if (atomic_exchange(&started, 1))
		return -EALREADY;
	cupti_log__init();
	session_reset(o);
	if (!o->path && (!o->dir || !*o->dir)) {
		cupti_log("GPUIO_GPU_DIR is not set: collector off");
		err = -ENOENT;
		goto off;
	}
	err = open_file(o);
	if (err)
		goto off;

	if ((err = load_cupti(o)))
		return err;
	/* The first CUPTI call that matters: CUPTI's clock must be ours before it stamps anything. */
	r = g.api.activityRegisterTimestampCallback(mono_cb);
	ts_took = r == CUPTI_SUCCESS;
	if (!ts_took)
		cupti_log("cuptiActivityRegisterTimestampCallback: %s", cupti_api__result_name(&g.api, r));

	r = g.api.subscribe(&g.sub, on_callback, NULL);
	if (r != CUPTI_SUCCESS)
		return unavailable(r, "cuptiSubscribe");
	if (g.conv)
		convert__set_pid(g.conv, g.pid);
	else
		g.conv = convert__new(&g.api, g.pid);
	if (!g.conv) {
		what = "out of memory";
		r = CUPTI_SUCCESS;
		goto fail;
	}
	r = g.api.activityRegisterCallbacks(buf_requested, buf_completed);
	if (r != CUPTI_SUCCESS) {
		what = "cuptiActivityRegisterCallbacks";
		goto fail;
	}
	if (g.api.enableCallback) {
		r = g.api.enableCallback(1, g.sub, CUPTI_CB_DOMAIN_RESOURCE,
					 CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
		if (r != CUPTI_SUCCESS)
			cupti_log("no flush at context destroy: %s", cupti_api__result_name(&g.api, r));
	}
	/* API records then carry gettid() values, as the BPF side does. */
	if (g.api.setThreadIdType &&
	    (r = g.api.setThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM)) != CUPTI_SUCCESS)
		cupti_log("cuptiSetThreadIdType(SYSTEM): %s", cupti_api__result_name(&g.api, r));
	clock_setup(ts_took);

	g.state = GPUIO_GPU_ON;  /* before enabling: buffers may complete at once */
	r = enable_kinds(&what);
	if (r != CUPTI_SUCCESS)
		goto fail;
	if (g.api.activityFlushPeriod)
		g.api.activityFlushPeriod(flush_ms(o->flush_ms));

	pthread_mutex_lock(&g.lock);
	info_append(GPUIO_GPU_ON, lib_note());
	side_file__flush(&g.file);
	pthread_mutex_unlock(&g.lock);
	if (!hooks) {  /* once per process, whatever the sessions */
		hooks = 1;
		if (!o->no_atexit)
			atexit(at_exit);
		pthread_atfork(fork_prepare, fork_parent, fork_child);
	}
	cupti_log("collecting to %s (CUPTI %u)", g.file.path, g.version);
	return 0;

fail:
	g.state = 0;
	if (g.api.unsubscribe)
		g.api.unsubscribe(g.sub);
	return unavailable(r, what);
off:
	if (g.how == GPUIO_GPU_HOW_ATTACH)
		atomic_store(&started, 0);
	return err;
}

int collector__started(void)
{
	return atomic_load(&started);
}

const char *collector__path(void)
{
	return g.file.fd >= 0 || g.state ? g.file.path : "";
}

/*
 * An idle collector never sees its trace end (no buffer completes): still
 * started, its side file unlinked. Unlocked peek for the hijacked thread of
 * gpuio_cupti_attach, which must take no lock; collector__attach decides.
 */
int collector__stale(void)
{
	return atomic_load(&started) && g.state == GPUIO_GPU_ON && !g.forked && file_unlinked();
}

int collector__attach(const struct collector_opts *o)
{
	char target[64];
	int err;

	err = collector__start(o);
	if (err != -EALREADY || o->path || !o->dir || !*o->dir)
		return err;
	/* a new trace while the last one's session still runs: same CUPTI
	 * subscription, new side file; the old trace's unwritten records go */
	pthread_mutex_lock(&g.lock);
	if (g.state != GPUIO_GPU_ON || g.forked || !file_unlinked()) {
		pthread_mutex_unlock(&g.lock);
		return -EALREADY;
	}
	side_file__discard(&g.file);
	close(g.file.fd);
	g.file.fd = -1;
	g.how = o->how;
	snprintf(g.dir, sizeof(g.dir), "%s", o->dir);
	snprintf(target, sizeof(target), "cupti pid %d", (int)g.pid);
	err = side_file__create(&g.file, g.dir, target);
	if (err) {
		cupti_log("cannot create the side file in %s: %s: collector stopping", g.dir,
			  strerror(-err));
		stop_async();
		pthread_mutex_unlock(&g.lock);
		return err;
	}
	info_append(GPUIO_GPU_ON, lib_note());
	side_file__flush(&g.file);
	pthread_mutex_unlock(&g.lock);
	cupti_log("new trace: collecting to %s", g.file.path);
	return 0;
}
