// SPDX-License-Identifier: MIT
/*
 * cupti_unit — collector unit checks without a GPU (tests/t_cupti_unit.sh).
 *
 *   cupti_unit clock        offset math with fake clocks
 *   cupti_unit names        API kind classification and the noise list
 *   cupti_unit pool         CUPTI always gets a buffer: recycled, and static
 *                           emergency ones when malloc fails (RLIMIT_AS)
 *   cupti_unit short DIR    side file on a filesystem that runs out
 *                           (RLIMIT_FSIZE): whole records only, losses counted
 *   cupti_unit fork DIR     fork during collection: see fork_case()
 *   cupti_unit unlink DIR   the tracer unlinks the side file: the collector
 *                           stops (disable, unsubscribe); a new attach restarts
 *   cupti_unit idle DIR     the same while idle (no buffer sees the unlink):
 *                           the new attach moves the session to a new file
 *
 * Exit 0 and "ok ..." lines when every check passes; else a FAIL line, exit 1.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "bufpool.h"
#include "capture/capture.h"
#include "clock.h"
#include "collector.h"
#include "convert.h"
#include "fake_cupti.h"
#include "side_file.h"
#include "lib/units.h"

static int failures;

#define CHECK(cond, ...)                                                \
	do {                                                            \
		if (!(cond)) {                                          \
			failures++;                                     \
			printf("FAIL %s:%d: ", __FILE__, __LINE__);     \
			printf(__VA_ARGS__);                            \
			printf("\n");                                   \
		}                                                       \
	} while (0)

/* ---- clock ---------------------------------------------------------- */

/* A scripted MONOTONIC and a CUPTI clock that is MONOTONIC - lag at the read. */
struct fake_clocks {
	const uint64_t *mono;  /* successive MONOTONIC readings */
	int i;
	int64_t lag;
	uint64_t true_now;     /* true MONOTONIC time of the CUPTI read */
	const uint64_t *cupti_at;  /* where between the reads CUPTI reads */
	int j;
};

static uint64_t fc_mono(void *ctx)
{
	struct fake_clocks *f = ctx;

	return f->mono[f->i++];
}

static uint64_t fc_cupti(void *ctx)
{
	struct fake_clocks *f = ctx;

	/* true time of the read: previous MONOTONIC reading + scripted delay */
	return f->mono[f->i - 1] + f->cupti_at[f->j++] - (uint64_t)f->lag;
}

static void clock_case(void)
{
	struct clock_fit fit;
	struct clock_sample s[4] = {
		{ 1000, 1000 + 30 - 500, 1060 },   /* window 60 */
		{ 2000, 2000 + 4 - 500, 2010 },    /* window 10: tightest */
		{ 3000, 0, 3005 },                 /* failed CUPTI read: ignored */
		{ 4010, 4000 - 500, 4000 },        /* backwards: ignored */
	};
	/* MONOTONIC reads in pairs (before, after); CUPTI read 7 ns after "before" */
	static const uint64_t mono[] = { 100, 180, 300, 320, 500, 590, 700, 716 };
	static const uint64_t at[] = { 40, 7, 80, 3 };
	struct fake_clocks fc = { mono, 0, -1700000000000000000ll, 0, at, 0 };

	CHECK(clock__fit(s, 4, &fit) == 0, "fit failed");
	/* tightest: [2000, 2010], midpoint 2005, CUPTI 1504 -> offset 501 +- 5 */
	CHECK(fit.offset_ns == 501 && fit.uncertainty_ns == 5, "fit %lld +- %llu",
	      (long long)fit.offset_ns, (unsigned long long)fit.uncertainty_ns);
	CHECK(!clock__same(&fit, 0), "501 +- 5 is not the same clock");
	CHECK(clock__same(&fit, 496), "501 within 5 + 496");
	CHECK(clock__fit(s + 2, 2, &fit) == -EINVAL, "no valid sample must fail");

	/* A REALTIME-like CUPTI clock far ahead of MONOTONIC: negative offset. */
	CHECK(clock__measure(fc_mono, fc_cupti, &fc, 4, &fit) == 0, "measure failed");
	/* tightest window is [700, 716]: midpoint 708, CUPTI read at true 703 */
	CHECK(fit.offset_ns == -1700000000000000000ll + 5 && fit.uncertainty_ns == 8,
	      "measure %lld +- %llu", (long long)fit.offset_ns, (unsigned long long)fit.uncertainty_ns);
	CHECK(clock__apply(0, fit.offset_ns) == 0, "0 (not recorded) must stay 0");
	CHECK(clock__apply(1700000000000001000ull, -1700000000000000000ll) == 1000, "apply");

	/* Same clock (our MONOTONIC callback took): offset 0 within the window. */
	s[0] = (struct clock_sample){ 5000, 5003, 5008 };
	CHECK(clock__fit(s, 1, &fit) == 0 && fit.offset_ns == 1 && fit.uncertainty_ns == 4,
	      "same-clock fit %lld +- %llu", (long long)fit.offset_ns,
	      (unsigned long long)fit.uncertainty_ns);
	CHECK(clock__same(&fit, 0), "same clock not recognised");
	if (!failures)
		printf("ok clock\n");
}

/* ---- names ---------------------------------------------------------- */

static void names_case(void)
{
	static const struct { const char *name; int kind; int memcpy_kind; int filtered; } t[] = {
		{ "cudaLaunchKernel", GPUIO_API_LAUNCH, 0, 0 },
		{ "cudaLaunchKernel_ptsz", GPUIO_API_LAUNCH, 0, 0 },
		{ "cuLaunchKernelEx", GPUIO_API_LAUNCH, 0, 0 },
		{ "cudaLaunchHostFunc", GPUIO_API_OTHER, 0, 0 },
		{ "cudaGraphLaunch", GPUIO_API_GRAPH_LAUNCH, 0, 0 },
		{ "cuGraphLaunch_ptsz", GPUIO_API_GRAPH_LAUNCH, 0, 0 },
		{ "cudaMemcpyAsync", GPUIO_API_MEMCPY, GPUIO_MEMCPY_UNKNOWN, 0 },
		{ "cuMemcpyHtoDAsync_v2", GPUIO_API_MEMCPY, GPUIO_MEMCPY_HTOD, 0 },
		{ "cuMemcpyDtoH_v2", GPUIO_API_MEMCPY, GPUIO_MEMCPY_DTOH, 0 },
		{ "cuMemcpyPeerAsync", GPUIO_API_MEMCPY, GPUIO_MEMCPY_PTOP, 0 },
		{ "cudaMemsetAsync", GPUIO_API_MEMSET, 0, 0 },
		{ "cuMemsetD8_v2", GPUIO_API_MEMSET, 0, 0 },
		{ "cudaStreamSynchronize", GPUIO_API_SYNC, 0, 0 },
		{ "cuCtxSynchronize", GPUIO_API_SYNC, 0, 0 },
		{ "cudaMallocAsync", GPUIO_API_MALLOC, 0, 0 },
		{ "cuMemAlloc_v2", GPUIO_API_MALLOC, 0, 0 },
		{ "cudaFreeHost", GPUIO_API_FREE, 0, 0 },
		{ "cudaEventRecord", GPUIO_API_OTHER, 0, 0 },
		{ "cudaGetLastError", GPUIO_API_OTHER, 0, 1 },
		{ "cudaGetDevice", GPUIO_API_OTHER, 0, 1 },
		{ "cudaGetDeviceCount", GPUIO_API_OTHER, 0, 1 },
		{ "cudaGetDeviceProperties", GPUIO_API_OTHER, 0, 0 },
		{ "cuStreamQuery_ptsz", GPUIO_API_OTHER, 0, 1 },
		{ "cuCtxGetCurrent", GPUIO_API_OTHER, 0, 1 },
		{ "cuCtxGetCurrentX", GPUIO_API_OTHER, 0, 0 },
	};
	size_t i;
	uint8_t mk;
	int before = failures;

	for (i = 0; i < ARRAY_SIZE(t); i++) {
		int k = convert__api_kind(t[i].name, &mk);

		CHECK(k == t[i].kind, "%s: kind %d, want %d", t[i].name, k, t[i].kind);
		CHECK(mk == t[i].memcpy_kind, "%s: memcpy kind %d, want %d", t[i].name, mk,
		      t[i].memcpy_kind);
		CHECK(convert__api_filtered(t[i].name) == t[i].filtered, "%s: filtered %d",
		      t[i].name, !t[i].filtered);
	}
	if (failures == before)
		printf("ok names\n");
}

/* ---- buffers handed to CUPTI ---------------------------------------- */

static void pool_case(void)
{
	uint8_t *b[4], *e[3];
	size_t sz;
	struct rlimit rl;
	int i, before = failures;

	for (i = 0; i < 4; i++) {
		b[i] = bufpool__get(&sz);
		CHECK(b[i] && sz == BUFPOOL_SIZE && ((uintptr_t)b[i] & 7) == 0, "buffer %d", i);
	}
	for (i = 0; i < 4; i++)
		bufpool__put(b[i]);
	e[0] = bufpool__get(&sz);
	CHECK(e[0] == b[3], "completed buffers are not recycled");
	bufpool__put(e[0]);
	/* keep the 4 spares out, then make malloc fail */
	for (i = 0; i < 4; i++)
		b[i] = bufpool__get(&sz);
	getrlimit(RLIMIT_AS, &rl);
	rl.rlim_cur = 0;  /* below what is mapped: every new mapping fails */
	CHECK(setrlimit(RLIMIT_AS, &rl) == 0, "setrlimit");
	for (i = 0; i < 3; i++)
		e[i] = bufpool__get(&sz);
	CHECK(e[0] && e[1] && e[0] != e[1] && sz == 0, "no emergency buffers when malloc fails");
	CHECK(!e[2], "a third emergency buffer cannot exist");
	bufpool__put(e[0]);
	e[2] = bufpool__get(&sz);
	CHECK(e[2] == e[0] && sz == BUFPOOL_EMERGENCY, "emergency buffer not reusable");
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_AS, &rl);
	CHECK(bufpool__outstanding() == 6, "outstanding %ld", bufpool__outstanding());
	if (failures == before)
		printf("ok pool\n");
}

/* ---- side file on a full disk --------------------------------------- */

static void short_case(const char *dir)
{
	static struct side_file f;
	struct gpuio_gpu_memcpy r;
	char path[4096];
	struct rlimit rl;
	struct stat st;
	int i, err = 0, before = failures;
	off_t limit = sizeof(struct gpuio_cap_header) + 10 * sizeof(r) + 20;

	snprintf(path, sizeof(path), "%s/short.gpuio", dir);
	signal(SIGXFSZ, SIG_IGN);
	CHECK(side_file__create_path(&f, path, "short") == 0, "create");
	rl.rlim_cur = rl.rlim_max = (rlim_t)limit;
	CHECK(setrlimit(RLIMIT_FSIZE, &rl) == 0, "setrlimit");
	memset(&r, 0, sizeof(r));
	r.hdr.type = GPUIO_REC_GPU_MEMCPY;
	r.hdr.size = sizeof(r);
	for (i = 0; i < 30; i++) {
		r.correlation = (__u32)i;
		side_file__append(&f, &r, sizeof(r));
		if (i % 7 == 6 && side_file__flush(&f))
			err = 1;
	}
	if (side_file__flush(&f))
		err = 1;
	CHECK(err, "writes past RLIMIT_FSIZE must fail");
	CHECK(stat(path, &st) == 0, "stat");
	/*
	 * Room for 10 records and 20 bytes: the first flush writes 7; the next
	 * three (7 each) are cut short and undone; the last 2 still fit.
	 */
	CHECK(st.st_size == (off_t)sizeof(struct gpuio_cap_header) + 9 * (off_t)sizeof(r),
	      "file size %lld: not cut back to whole records", (long long)st.st_size);
	CHECK(f.records == 9 && f.write_errors == 21, "records %llu lost %llu",
	      (unsigned long long)f.records, (unsigned long long)f.write_errors);
	side_file__close(&f);
	if (failures == before)
		printf("ok short\n");
}

/* ---- fork ----------------------------------------------------------- */

static char fork_dir[4096];

/* Registered before the collector's handler, so it runs after it at exit. */
static void note_flushes(void)
{
	char p[4200];
	FILE *f;

	snprintf(p, sizeof(p), "%s/flushes.%d", fork_dir, (int)getpid());
	f = fopen(p, "w");
	if (f) {
		fprintf(f, "%u\n", fake.flushes);
		fclose(f);
	}
}

/*
 * Parent collects: kernel corr 1 delivered, kernel corr 2 left in CUPTI's
 * (fake) buffer. child1 forks and exits: it must neither flush nor create
 * a file. child2 forks and gets GPU activity of its own (corr 3): that goes
 * to its own file, never the parent's. The parent then exits normally: its
 * exit flush brings corr 2, then FINAL. Prints "pids PARENT CHILD1 CHILD2";
 * t_cupti_unit.sh checks the files.
 */
static int fork_case(const char *dir)
{
	struct collector_opts o = {
		.api = &fake.api, .dir = dir, .how = GPUIO_GPU_HOW_ATTACH,
	};
	char err[256];
	pid_t c1, c2;
	int st;

	snprintf(fork_dir, sizeof(fork_dir), "%s", dir);
	if (fake_cupti__init(err, sizeof(err))) {
		printf("FAIL %s\n", err);
		return 1;
	}
	atexit(note_flushes);
	if (collector__start(&o)) {
		printf("FAIL collector did not start\n");
		return 1;
	}
	fake_cupti__kernel(100, 200, 0, 1, 1, "_Z6parentv");
	fake_cupti__deliver();
	fake_cupti__kernel(300, 400, 0, 1, 2, "_Z6parentv");  /* pending in "CUPTI" */

	fflush(stdout);
	c1 = fork();
	if (c1 == 0)
		exit(0);  /* runs the atexit handlers: ours must do nothing here */
	waitpid(c1, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child1 status %d", st);

	c2 = fork();
	if (c2 == 0) {
		fake.buf = NULL;  /* the child's CUPTI fills buffers of its own */
		fake_cupti__kernel(500, 600, 0, 2, 3, "_Z5childv");
		fake_cupti__deliver();
		exit(0);
	}
	waitpid(c2, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child2 status %d", st);
	printf("pids %d %d %d\n", (int)getpid(), (int)c1, (int)c2);
	return failures ? 1 : 0;  /* exit: the parent's flush + FINAL */
}

/* ---- the tracer goes away, then comes back --------------------------- */

static int unlink_case(const char *dir)
{
	struct collector_opts o = {
		.api = &fake.api, .dir = dir, .how = GPUIO_GPU_HOW_ATTACH, .no_atexit = 1,
	};
	char err[256], first[4096];
	int i;

	if (fake_cupti__init(err, sizeof(err))) {
		printf("FAIL %s\n", err);
		return 1;
	}
	CHECK(collector__start(&o) == 0, "start");
	CHECK(collector__start(&o) == -EALREADY, "second start while running");
	fake_cupti__kernel(100, 200, 0, 1, 1, "_Z3onev");
	fake_cupti__deliver();
	snprintf(first, sizeof(first), "%s", collector__path());
	CHECK(unlink(first) == 0, "unlink %s", first);
	fake_cupti__kernel(300, 400, 0, 1, 2, "_Z3twov");  /* after the trace: dropped */
	fake_cupti__deliver();
	for (i = 0; i < 500 && collector__started(); i++)
		usleep(10000);
	CHECK(!collector__started(), "collector did not stop");
	CHECK(fake.disables == 9 && fake.unsubscribes == 1, "disables %u unsubscribes %u",
	      fake.disables, fake.unsubscribes);
	CHECK(access(first, F_OK) != 0, "side file recreated after unlink");

	/* a new trace session attaches again */
	CHECK(collector__start(&o) == 0, "restart");
	CHECK(fake.subscribes == 2, "subscribes %u", fake.subscribes);
	fake_cupti__kernel(500, 600, 0, 1, 3, "_Z5threev");
	collector__stop();  /* forced flush brings corr 3, then FINAL */
	printf("path %s\n", collector__path());
	return failures ? 1 : 0;
}

/* ---- an idle collector's trace ends, a new one attaches ------------- */

static int idle_case(const char *dir)
{
	struct collector_opts o = {
		.api = &fake.api, .dir = dir, .how = GPUIO_GPU_HOW_ATTACH, .no_atexit = 1,
	};
	char err[256], first[4096];

	if (fake_cupti__init(err, sizeof(err))) {
		printf("FAIL %s\n", err);
		return 1;
	}
	CHECK(collector__attach(&o) == 0, "attach");
	fake_cupti__kernel(100, 200, 0, 1, 1, "_Z3onev");
	fake_cupti__deliver();
	snprintf(first, sizeof(first), "%s", collector__path());
	CHECK(!collector__stale(), "stale while its file exists");
	CHECK(collector__attach(&o) == -EALREADY, "second attach while the trace runs");
	CHECK(unlink(first) == 0, "unlink %s", first);
	/* no buffer completes: the collector cannot have noticed */
	CHECK(collector__started() && collector__stale(), "not stale after the unlink");
	CHECK(collector__attach(&o) == 0, "attach of a new trace");
	CHECK(!collector__stale(), "still stale after the new attach");
	CHECK(fake.subscribes == 1 && fake.unsubscribes == 0, "subscribes %u unsubscribes %u",
	      fake.subscribes, fake.unsubscribes);
	CHECK(access(collector__path(), F_OK) == 0, "no new side file");
	fake_cupti__kernel(500, 600, 0, 1, 3, "_Z5threev");
	collector__stop();  /* forced flush brings corr 3, then FINAL */
	printf("path %s\n", collector__path());
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "clock"))
		clock_case();
	else if (argc >= 2 && !strcmp(argv[1], "names"))
		names_case();
	else if (argc >= 2 && !strcmp(argv[1], "pool"))
		pool_case();
	else if (argc >= 3 && !strcmp(argv[1], "short"))
		short_case(argv[2]);
	else if (argc >= 3 && !strcmp(argv[1], "fork"))
		return fork_case(argv[2]);
	else if (argc >= 3 && !strcmp(argv[1], "unlink"))
		return unlink_case(argv[2]);
	else if (argc >= 3 && !strcmp(argv[1], "idle"))
		return idle_case(argv[2]);
	else {
		fprintf(stderr, "usage: cupti_unit clock|names|pool|short DIR|fork DIR|unlink DIR|idle DIR\n");
		return 2;
	}
	return failures ? 1 : 0;
}
