// SPDX-License-Identifier: MIT
/*
 * cupti_synth — a collector side file (cupti.PID.gpuio) from a text spec,
 * through the real collector: records are built from the CUDA 13 structs,
 * iterated by the real libcupti, converted and written as in a traced
 * process. For tests that need GPU records with known content.
 *
 * usage: cupti_synth SPEC DIR        writes DIR/cupti.<pid>.gpuio
 *        cupti_synth SPEC -o FILE    writes FILE
 * SPEC is a file or "-" (stdin). The output path is printed on stdout.
 *
 * Spec: one item a line; '#' starts a comment; numbers are decimal or 0x..;
 * times are ns on CUPTI's clock (= MONOTONIC unless "clock offset").
 *
 *   clock monotonic          (default) the MONOTONIC callback took: times kept
 *   clock offset N           CUPTI clock = MONOTONIC - N: times come out + N
 *                            (N may be negative); info says OFFSET, offset N
 *   fail subscribe CODE      cuptiSubscribe returns CODE (39: another
 *                            profiler, 999: no driver): one UNAVAILABLE record
 *   fail enable CODE         every cuptiActivityEnable returns CODE
 *   now NS                   the (fake) MONOTONIC clock reads NS from here on:
 *                            the ts of the info records
 *   cupti VERSION            act as the libcupti whose cuptiGetVersion is VERSION
 *                            (default 130001 = CUDA 13.0; 24 = 12.6, 26 = 12.8):
 *                            records reach the collector in that version's structs
 *   (the five above must come before the first activity)
 *
 *   kernel START END DEV STREAM CORR [ctx=N grid=X,Y,Z block=X,Y,Z regs=N
 *          ssmem=N dsmem=N] NAME...       NAME (mangled or not) = rest of line
 *   memcpy START END DEV STREAM CORR BYTES KIND [async ctx=N src=N dst=N]
 *          KIND: htod dtoh htoa atoh atoa atod dtoa dtod htoh ptop, or a number
 *   peer   START END SRCDEV DSTDEV STREAM CORR BYTES [async ctx=N]   (MEMCPY2)
 *   memset START END DEV STREAM CORR BYTES VALUE [async ctx=N mem=N]
 *   api    runtime|driver START END TID CORR CBID [ret=N]
 *          CBID: a number (cupti_runtime_cbid.h / cupti_driver_cbid.h)
 *   sync   START END TYPE STREAM CORR [ctx=N]
 *          TYPE: unknown event stream_wait_event stream context, or a number
 *   overhead START END KIND TID           (object = thread TID)
 *   nvtx   START END TID NAME...          a push/pop range (START + END markers)
 *   push   TS TID NAME...                 an NVTX range starts (START marker) ...
 *   pop    TS TID                         ... and the innermost open one ends
 *   mark   TS TID NAME...                 an instantaneous NVTX marker
 *   ignored                               a CONTEXT record (not converted)
 *   drop N                                the next delivered buffer reports N
 *                                         more records dropped by CUPTI
 *   flush                                 deliver the buffer so far
 *
 * At the end the collector's exit path runs: a forced flush delivers what
 * is left, then the FINAL info record.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "capture/capture.h"
#include "collector.h"
#include "fake_cupti.h"

static const char *spec_name;
static int lineno;

static void die(const char *msg)
{
	fprintf(stderr, "cupti_synth: %s:%d: %s\n", spec_name, lineno, msg);
	exit(2);
}

static char *tok(char **s)
{
	char *t;

	*s += strspn(*s, " \t");
	if (!**s)
		return NULL;
	t = *s;
	*s += strcspn(*s, " \t");
	if (**s)
		*(*s)++ = 0;
	return t;
}

static uint64_t num_of(const char *t)
{
	char *end;
	unsigned long long v;

	if (!t)
		die("missing number");
	errno = 0;
	v = strtoull(t, &end, 0);
	if (errno || *end || end == t)
		die("bad number");
	return v;
}

static uint64_t num(char **s)
{
	return num_of(tok(s));
}

static int64_t snum(char **s)
{
	char *t = tok(s), *end;
	long long v;

	if (!t)
		die("missing number");
	v = strtoll(t, &end, 0);
	if (*end || end == t)
		die("bad number");
	return v;
}

static const char *const memcpy_kinds[] = {
	"unknown", "htod", "dtoh", "htoa", "atoh", "atoa", "atod", "dtoa", "dtod", "htoh", "ptop",
};
static const char *const sync_types[] = {
	"unknown", "event", "stream_wait_event", "stream", "context",
};

static unsigned named(const char *t, const char *const *names, unsigned n)
{
	unsigned i;

	if (!t)
		die("missing value");
	for (i = 0; i < n; i++)
		if (!strcmp(t, names[i]))
			return i;
	return (unsigned)num_of(t);
}

/* key=value options; returns 1 and the value when t is "key=...". */
static int opt(const char *t, const char *key, const char **val)
{
	size_t n = strlen(key);

	if (strncmp(t, key, n) || t[n] != '=')
		return 0;
	*val = t + n + 1;
	return 1;
}

static void triple(const char *v, int32_t *x, int32_t *y, int32_t *z)
{
	if (sscanf(v, "%d,%d,%d", x, y, z) != 3)
		die("want X,Y,Z");
}

/* Names must outlive delivery: they are only read when the buffer completes. */
static const char *keep(const char *s)
{
	char *d = strdup(s);

	if (!d)
		die("out of memory");
	return d;
}

static const char *rest(char **s)
{
	*s += strspn(*s, " \t");
	if (!**s)
		die("missing name");
	return keep(*s);
}

static void kernel(char *s)
{
	uint64_t start = num(&s), end = num(&s);
	uint32_t dev = (uint32_t)num(&s), stream = (uint32_t)num(&s), corr = (uint32_t)num(&s);
	CUpti_ActivityKernel10 k = { 0 }, *r;
	const char *v;
	char t[128];
	size_t n;

	/* key=value options, then the name: the rest of the line, spaces and all */
	for (;;) {
		s += strspn(s, " \t");
		n = strcspn(s, " \t");
		if (!n)
			die("missing kernel name");
		snprintf(t, sizeof(t), "%.*s", (int)n, s);
		if (opt(t, "ctx", &v))
			k.contextId = (uint32_t)num_of(v);
		else if (opt(t, "grid", &v))
			triple(v, &k.gridX, &k.gridY, &k.gridZ);
		else if (opt(t, "block", &v))
			triple(v, &k.blockX, &k.blockY, &k.blockZ);
		else if (opt(t, "regs", &v))
			k.registersPerThread = (uint16_t)num_of(v);
		else if (opt(t, "ssmem", &v))
			k.staticSharedMemory = (int32_t)num_of(v);
		else if (opt(t, "dsmem", &v))
			k.dynamicSharedMemory = (int32_t)num_of(v);
		else
			break;
		s += n;
	}
	r = fake_cupti__kernel(start, end, dev, stream, corr, rest(&s));
	if (!r)
		die("no buffer");
	r->contextId = k.contextId;
	r->gridX = k.gridX, r->gridY = k.gridY, r->gridZ = k.gridZ;
	r->blockX = k.blockX, r->blockY = k.blockY, r->blockZ = k.blockZ;
	r->registersPerThread = k.registersPerThread;
	r->staticSharedMemory = k.staticSharedMemory;
	r->dynamicSharedMemory = k.dynamicSharedMemory;
}

static void memcpy_(char *s)
{
	uint64_t start = num(&s), end = num(&s);
	uint32_t dev = (uint32_t)num(&s), stream = (uint32_t)num(&s), corr = (uint32_t)num(&s);
	uint64_t bytes = num(&s);
	unsigned kind = named(tok(&s), memcpy_kinds, 11);
	CUpti_ActivityMemcpy6 *m = fake_cupti__memcpy(start, end, dev, stream, corr, bytes, (uint8_t)kind);
	const char *v;
	char *t;

	if (!m)
		die("no buffer");
	while ((t = tok(&s))) {
		if (!strcmp(t, "async"))
			m->flags |= CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
		else if (opt(t, "ctx", &v))
			m->contextId = (uint32_t)num_of(v);
		else if (opt(t, "src", &v))
			m->srcKind = (uint8_t)num_of(v);
		else if (opt(t, "dst", &v))
			m->dstKind = (uint8_t)num_of(v);
		else
			die("unknown memcpy option");
	}
}

static void peer(char *s)
{
	uint64_t start = num(&s), end = num(&s);
	uint32_t src = (uint32_t)num(&s), dst = (uint32_t)num(&s);
	uint32_t stream = (uint32_t)num(&s), corr = (uint32_t)num(&s);
	uint64_t bytes = num(&s);
	CUpti_ActivityMemcpyPtoP4 *m = fake_cupti__peer(start, end, src, dst, stream, corr, bytes);
	const char *v;
	char *t;

	if (!m)
		die("no buffer");
	while ((t = tok(&s))) {
		if (!strcmp(t, "async"))
			m->flags |= CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
		else if (opt(t, "ctx", &v))
			m->contextId = (uint32_t)num_of(v);
		else
			die("unknown peer option");
	}
}

static void memset_(char *s)
{
	uint64_t start = num(&s), end = num(&s);
	uint32_t dev = (uint32_t)num(&s), stream = (uint32_t)num(&s), corr = (uint32_t)num(&s);
	uint64_t bytes = num(&s);
	uint32_t value = (uint32_t)num(&s);
	CUpti_ActivityMemset4 *m = fake_cupti__memset(start, end, dev, stream, corr, bytes, value);
	const char *v;
	char *t;

	if (!m)
		die("no buffer");
	while ((t = tok(&s))) {
		if (!strcmp(t, "async"))
			m->flags |= CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC;
		else if (opt(t, "ctx", &v))
			m->contextId = (uint32_t)num_of(v);
		else if (opt(t, "mem", &v))
			m->memoryKind = (uint16_t)num_of(v);
		else
			die("unknown memset option");
	}
}

static void api(char *s)
{
	char *src = tok(&s), *t;
	int drv;
	uint64_t start, end;
	uint32_t tid, corr, cbid;
	CUpti_ActivityAPI *a;
	const char *v;

	if (!src || (strcmp(src, "runtime") && strcmp(src, "driver")))
		die("api wants runtime|driver");
	drv = !strcmp(src, "driver");
	start = num(&s), end = num(&s);
	tid = (uint32_t)num(&s), corr = (uint32_t)num(&s), cbid = (uint32_t)num(&s);
	a = fake_cupti__api(drv, start, end, tid, corr, cbid);
	if (!a)
		die("no buffer");
	while ((t = tok(&s))) {
		if (opt(t, "ret", &v))
			a->returnValue = (uint32_t)num_of(v);
		else
			die("unknown api option");
	}
}

static void sync_(char *s)
{
	uint64_t start = num(&s), end = num(&s);
	unsigned type = named(tok(&s), sync_types, 5);
	uint32_t stream = (uint32_t)num(&s), corr = (uint32_t)num(&s);
	CUpti_ActivitySynchronization2 *y = fake_cupti__sync(start, end, type, stream, corr);
	const char *v;
	char *t;

	if (!y)
		die("no buffer");
	while ((t = tok(&s))) {
		if (opt(t, "ctx", &v))
			y->contextId = (uint32_t)num_of(v);
		else
			die("unknown sync option");
	}
}

static void nvtx(char *s)
{
	static uint32_t id = 1000;
	uint64_t start = num(&s), end = num(&s);
	uint32_t tid = (uint32_t)num(&s);
	const char *name = rest(&s);

	id++;
	if (!fake_cupti__marker(CUPTI_ACTIVITY_FLAG_MARKER_START, start, id, tid, name) ||
	    !fake_cupti__marker(CUPTI_ACTIVITY_FLAG_MARKER_END, end, id, tid, NULL))
		die("no buffer");
}

/* push/pop: the ids of the open ranges, innermost last */
static uint32_t stack[64];
static int depth;

static void push(char *s)
{
	uint64_t ts = num(&s);
	uint32_t tid = (uint32_t)num(&s);

	if (depth == 64)
		die("too deep");
	stack[depth] = 5000 + (uint32_t)lineno;
	if (!fake_cupti__marker(CUPTI_ACTIVITY_FLAG_MARKER_START, ts, stack[depth], tid, rest(&s)))
		die("no buffer");
	depth++;
}

static void pop(char *s)
{
	uint64_t ts = num(&s);
	uint32_t tid = (uint32_t)num(&s);

	if (!depth)
		die("pop without push");
	depth--;
	if (!fake_cupti__marker(CUPTI_ACTIVITY_FLAG_MARKER_END, ts, stack[depth], tid, NULL))
		die("no buffer");
}

static int started;
static const char *out_dir, *out_path;

static void start(void)
{
	struct collector_opts o = {
		.api = &fake.api, .dir = out_dir, .path = out_path,
		.how = GPUIO_GPU_HOW_LAUNCH, .mono_now = fake_cupti__mono, .no_atexit = 1,
	};
	int err;

	if (started)
		return;
	started = 1;
	err = collector__start(&o);
	if (err == -ENODEV)
		return;  /* UNAVAILABLE, as asked: the file holds the record */
	if (err) {
		fprintf(stderr, "cupti_synth: collector did not start: %s\n", strerror(-err));
		exit(1);
	}
}

static void line(char *s)
{
	char *cmd = tok(&s), *what;

	if (!cmd)
		return;
	if (!strcmp(cmd, "clock") || !strcmp(cmd, "fail")) {
		if (started)
			die("must come before the first activity");
		what = tok(&s);
		if (!strcmp(cmd, "clock") && what && !strcmp(what, "monotonic"))
			fake.cupti_lag_ns = 0;
		else if (!strcmp(cmd, "clock") && what && !strcmp(what, "offset"))
			fake.cupti_lag_ns = snum(&s), fake.ts_register_result = CUPTI_ERROR_NOT_INITIALIZED;
		else if (!strcmp(cmd, "fail") && what && !strcmp(what, "subscribe"))
			fake.subscribe_result = (CUptiResult)num(&s);
		else if (!strcmp(cmd, "fail") && what && !strcmp(what, "enable"))
			fake.enable_result = (CUptiResult)num(&s);
		else
			die("unknown clock/fail item");
		return;
	}
	if (!strcmp(cmd, "now")) {
		fake.mono = num(&s);
		return;
	}
	if (!strcmp(cmd, "cupti")) {
		if (started)
			die("must come before the first activity");
		fake_cupti__set_version((uint32_t)num(&s));
		return;
	}
	start();
	if (!fake.req)
		return;  /* collector off (fail ...): nothing more to write */
	if (!strcmp(cmd, "kernel"))
		kernel(s);
	else if (!strcmp(cmd, "memcpy"))
		memcpy_(s);
	else if (!strcmp(cmd, "peer"))
		peer(s);
	else if (!strcmp(cmd, "memset"))
		memset_(s);
	else if (!strcmp(cmd, "api"))
		api(s);
	else if (!strcmp(cmd, "sync"))
		sync_(s);
	else if (!strcmp(cmd, "overhead")) {
		uint64_t a = num(&s), b = num(&s);
		uint32_t kind = (uint32_t)num(&s), tid = (uint32_t)num(&s);

		if (!fake_cupti__overhead(a, b, kind, tid))
			die("no buffer");
	} else if (!strcmp(cmd, "nvtx"))
		nvtx(s);
	else if (!strcmp(cmd, "push"))
		push(s);
	else if (!strcmp(cmd, "pop"))
		pop(s);
	else if (!strcmp(cmd, "mark")) {
		uint64_t ts = num(&s);
		uint32_t tid = (uint32_t)num(&s);

		if (!fake_cupti__marker(CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, ts, 0, tid, rest(&s)))
			die("no buffer");
	} else if (!strcmp(cmd, "ignored"))
		fake_cupti__ignored();
	else if (!strcmp(cmd, "drop"))
		fake.dropped_next += num(&s);
	else if (!strcmp(cmd, "flush"))
		fake_cupti__deliver();
	else
		die("unknown item");
}

int main(int argc, char **argv)
{
	char err[512], buf[8192];
	FILE *f;

	if (argc != 3 && !(argc == 4 && !strcmp(argv[2], "-o"))) {
		fprintf(stderr, "usage: cupti_synth SPEC DIR | cupti_synth SPEC -o FILE\n");
		return 2;
	}
	spec_name = argv[1];
	if (argc == 4)
		out_path = argv[3];
	else
		out_dir = argv[2];
	if (fake_cupti__init(err, sizeof(err))) {
		fprintf(stderr, "cupti_synth: %s\n", err);
		return 1;
	}
	f = strcmp(argv[1], "-") ? fopen(argv[1], "r") : stdin;
	if (!f) {
		fprintf(stderr, "cupti_synth: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	while (fgets(buf, sizeof(buf), f)) {
		char *hash = strchr(buf, '#');

		lineno++;
		if (hash)
			*hash = 0;
		buf[strcspn(buf, "\r\n")] = 0;
		line(buf);
	}
	if (f != stdin)
		fclose(f);
	start();
	collector__stop();
	printf("%s\n", collector__path());
	return 0;
}
