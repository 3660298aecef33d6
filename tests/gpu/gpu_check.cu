// gpu_check.cu — GPU work with known answers for `make gpu-check`
// (tests/gpu/gpu_check.sh). It runs kernels of known duration (spinning on
// %globaltimer), pinned host<->device copies of known sizes on three streams,
// a captured CUDA graph launched three times and a few tiny "probe" kernels,
// times each kernel and copy with cudaEvents, and writes that ground truth as
// JSON to TRUTH (tests/gpu/gpu_check.py compares a gpuio trace against it).
//
// usage: gpu_check [--wait-for-file PATH] TRUTH.json
//   --wait-for-file: set up CUDA (context, streams, buffers, kernels loaded),
//   print "gpu_check: pid N ready", then wait until PATH exists before any
//   GPU work, so that `gpuio trace -p N` can attach and inject its collector.
#include <cuda_runtime.h>
#include <cxxabi.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NSTREAMS 3
#define MIB (1ull << 20)
#define MS 1000000ull
#define MAX_OPS 64
#define NPROBES 8

#define CK(call) ck((call), #call, __LINE__)
static void ck(cudaError_t e, const char *what, int line)
{
	if (e != cudaSuccess) {
		fprintf(stderr, "gpu_check: line %d: %s: %s\n", line, what, cudaGetErrorString(e));
		exit(1);
	}
}

// ---- device side ----
__device__ __forceinline__ unsigned long long gtime(void)
{
	unsigned long long t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}
__device__ __forceinline__ void spin_for(unsigned long long ns)
{
	unsigned long long t0 = gtime();
	while (gtime() - t0 < ns) {
	}
}
__global__ void spin_kernel(unsigned long long ns) { spin_for(ns); }
__global__ void graph_kernel_a(unsigned long long ns) { spin_for(ns); }
__global__ void graph_kernel_b(unsigned long long ns) { spin_for(ns); }
__global__ void probe_kernel(unsigned long long ns) { spin_for(ns); }
// Holds its stream until the host sets *flag (or timeout_ns passes): the
// events and the operation behind it are all queued before any of them runs,
// so host-side launch latency never lands inside an event interval.
__global__ void gate_kernel(volatile int *flag, unsigned long long timeout_ns)
{
	unsigned long long t0 = gtime();
	while (*flag == 0 && gtime() - t0 < timeout_ns) {
	}
}

// ---- the ground truth ----
struct op {
	const char *kind;   // "kernel" or "memcpy"
	char name[128];     // demangled kernel name, or "memcpy HtoD" / "memcpy DtoH"
	unsigned long long bytes, target_ns;
	long long event_ns; // -1: not timed by events (graph fallback)
	int stream, graph_launch;  // graph_launch: 0, or which launch (1..)
	const char *phase;
};
static struct op ops[MAX_OPS];
static int nops;
struct probe {
	unsigned long long before_ns, after_ns;
};
static struct probe probes[NPROBES];
#define NSMALL 5   // 4-byte copies each way (small copies may take another path)

static cudaStream_t streams[NSTREAMS];
static cudaEvent_t ev[NSTREAMS][2];
static cudaEvent_t gev[3];          // event nodes inside the graph
static volatile int *gate_flag;   // pinned, mapped: written by the host, read by gate_kernel
static int *gate_dflag;
static void *hsrc, *hdst, *dsrc, *ddst;
static char kname_spin[128], kname_ga[128], kname_gb[128], kname_probe[128];

static unsigned long long mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

// The name CUPTI reports is the demangled symbol: ask the runtime for the
// symbol and demangle it the way gpuio's collector does (__cxa_demangle).
static void kernel_name(const void *fn, const char *fallback, char *out, size_t len)
{
	const char *mangled = NULL;
	char *dem = NULL;
	int status = -1;

	if (cudaFuncGetName(&mangled, fn) != cudaSuccess || !mangled) {
		cudaGetLastError();
		snprintf(out, len, "%s", fallback);
		return;
	}
	if (mangled[0] == '_' && mangled[1] == 'Z')
		dem = abi::__cxa_demangle(mangled, NULL, NULL, &status);
	snprintf(out, len, "%s", dem && status == 0 ? dem : mangled);
	free(dem);
}

static struct op *add_op(const char *kind, const char *name, unsigned long long bytes,
			 unsigned long long target_ns, int stream, const char *phase)
{
	struct op *o;

	if (nops == MAX_OPS) {
		fprintf(stderr, "gpu_check: too many operations\n");
		exit(1);
	}
	o = &ops[nops++];
	o->kind = kind;
	snprintf(o->name, sizeof(o->name), "%s", name);
	o->bytes = bytes;
	o->target_ns = target_ns;
	o->event_ns = -1;
	o->stream = stream;
	o->graph_launch = 0;
	o->phase = phase;
	return o;
}

static long long elapsed_ns(cudaEvent_t a, cudaEvent_t b)
{
	float ms = 0;

	CK(cudaEventElapsedTime(&ms, a, b));
	return (long long)(ms * 1e6 + 0.5);
}

// Queue one operation (a spin kernel, or a copy when bytes > 0) on stream s.
static void enqueue(struct op *o)
{
	cudaStream_t st = streams[o->stream];

	if (strcmp(o->kind, "kernel") == 0)
		spin_kernel<<<1, 1, 0, st>>>(o->target_ns);
	else if (strcmp(o->name, "memcpy HtoD") == 0)
		CK(cudaMemcpyAsync(dsrc, hsrc, o->bytes, cudaMemcpyHostToDevice, st));
	else
		CK(cudaMemcpyAsync(hdst, ddst, o->bytes, cudaMemcpyDeviceToHost, st));
	CK(cudaGetLastError());
}

// Run the operations o[0..n) at once, each on its own stream, each between
// two events, all held by gate kernels until everything is queued.
static void run_gated(struct op **o, int n)
{
	*gate_flag = 0;
	__sync_synchronize();
	for (int i = 0; i < n; i++) {
		cudaStream_t st = streams[o[i]->stream];

		gate_kernel<<<1, 1, 0, st>>>(gate_dflag, 2000 * MS);
		CK(cudaGetLastError());
		CK(cudaEventRecord(ev[o[i]->stream][0], st));
		enqueue(o[i]);
		CK(cudaEventRecord(ev[o[i]->stream][1], st));
	}
	__sync_synchronize();
	*gate_flag = 1;
	for (int i = 0; i < n; i++)
		CK(cudaStreamSynchronize(streams[o[i]->stream]));
	for (int i = 0; i < n; i++)
		o[i]->event_ns = elapsed_ns(ev[o[i]->stream][0], ev[o[i]->stream][1]);
}

// Capture on stream 1: [event] graph_kernel_a 1 ms [event] graph_kernel_b 3 ms
// [event]; the events are graph nodes (cudaEventRecordExternal), so each
// kernel is timed inside the graph. If this driver refuses event nodes in a
// capture, capture the kernels alone: their reference is then the spin time.
static cudaGraphExec_t capture_graph(bool *timed)
{
	cudaStream_t st = streams[1];
	cudaGraph_t g = NULL;
	cudaGraphExec_t x;

	*timed = true;
	CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
	if (cudaEventRecordWithFlags(gev[0], st, cudaEventRecordExternal) != cudaSuccess) {
		*timed = false;
		cudaStreamEndCapture(st, &g);
		if (g)
			cudaGraphDestroy(g);
		cudaGetLastError();
		fprintf(stderr, "gpu_check: no event nodes in a captured graph; graph kernels "
				"are checked against their spin time\n");
		CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
	}
	graph_kernel_a<<<1, 1, 0, st>>>(1 * MS);
	if (*timed)
		CK(cudaEventRecordWithFlags(gev[1], st, cudaEventRecordExternal));
	graph_kernel_b<<<1, 1, 0, st>>>(3 * MS);
	if (*timed)
		CK(cudaEventRecordWithFlags(gev[2], st, cudaEventRecordExternal));
	CK(cudaStreamEndCapture(st, &g));
	CK(cudaGraphInstantiate(&x, g, 0));
	CK(cudaGraphDestroy(g));
	return x;
}

static void run_graph(void)
{
	bool timed;
	cudaGraphExec_t x = capture_graph(&timed);

	for (int l = 1; l <= 3; l++) {
		struct op *a = add_op("kernel", kname_ga, 0, 1 * MS, 2, "graph");
		struct op *b = add_op("kernel", kname_gb, 0, 3 * MS, 2, "graph");

		a->graph_launch = b->graph_launch = l;
		CK(cudaGraphLaunch(x, streams[2]));
		CK(cudaStreamSynchronize(streams[2]));
		if (timed) {
			a->event_ns = elapsed_ns(gev[0], gev[1]);
			b->event_ns = elapsed_ns(gev[1], gev[2]);
		}
	}
	CK(cudaGraphExecDestroy(x));
}

static void run_probes(void)
{
	for (int i = 0; i < NPROBES; i++) {
		probes[i].before_ns = mono_ns();
		probe_kernel<<<1, 1, 0, streams[0]>>>(20000);
		CK(cudaGetLastError());
		CK(cudaStreamSynchronize(streams[0]));
		probes[i].after_ns = mono_ns();
	}
}

// 4-byte copies each way, gated and timed like the others: tiny copies are
// what a training loop's scalars are, and the trace must have every one.
static void run_small(void)
{
	static const char *const names[2] = { "memcpy HtoD", "memcpy DtoH" };

	for (int d = 0; d < 2; d++)
		for (int i = 0; i < NSMALL; i++) {
			struct op *o = add_op("memcpy", names[d], 4, 0, 0, "small");

			run_gated(&o, 1);
		}
}

static void run_all(void)
{
	static const unsigned long long spin_ms[] = { 2, 5, 10 };
	static const unsigned long long sizes[] = { 1 * MIB, 8 * MIB, 64 * MIB };
	struct op *o, *con[NSTREAMS];

	run_small();
	// serial: one operation at a time; each stream gets one kernel, one H2D
	// and one D2H, of different sizes (a different sequence per stream)
	for (int i = 0; i < 3; i++) {
		o = add_op("kernel", kname_spin, 0, spin_ms[i] * MS, i % NSTREAMS, "serial");
		run_gated(&o, 1);
		o = add_op("memcpy", "memcpy HtoD", sizes[i], 0, (i + 1) % NSTREAMS, "serial");
		run_gated(&o, 1);
		o = add_op("memcpy", "memcpy DtoH", sizes[i], 0, (i + 2) % NSTREAMS, "serial");
		run_gated(&o, 1);
	}
	// concurrent: two kernels and one copy at the same time (nothing shares an engine)
	con[0] = add_op("kernel", kname_spin, 0, 5 * MS, 0, "concurrent");
	con[1] = add_op("kernel", kname_spin, 0, 2 * MS, 1, "concurrent");
	con[2] = add_op("memcpy", "memcpy HtoD", 8 * MIB, 0, 2, "concurrent");
	run_gated(con, NSTREAMS);
	run_graph();
	run_probes();
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

static void write_truth(const char *path, const char *mode)
{
	char tmp[4096];
	cudaDeviceProp p;
	int dev = 0, drv = 0;
	FILE *f;

	CK(cudaGetDevice(&dev));
	CK(cudaGetDeviceProperties(&p, dev));
	CK(cudaDriverGetVersion(&drv));
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f) {
		fprintf(stderr, "gpu_check: %s: %s\n", tmp, strerror(errno));
		exit(1);
	}
	fprintf(f, "{\n\"pid\": %d,\n\"mode\": \"%s\",\n\"clock\": \"CLOCK_MONOTONIC\",\n", getpid(), mode);
	fprintf(f, "\"device\": %d,\n\"device_name\": ", dev);
	json_str(f, p.name);
	fprintf(f, ",\n\"driver_version\": %d,\n\"streams\": [", drv);
	for (int i = 0; i < NSTREAMS; i++) {
		unsigned long long id = 0;

		CK(cudaStreamGetId(streams[i], &id));
		fprintf(f, "%s\n  {\"index\": %d, \"stream_id\": %llu, \"handle\": %llu}", i ? "," : "",
			i, id, (unsigned long long)(uintptr_t)streams[i]);
	}
	fprintf(f, "\n],\n\"ops\": [");
	for (int i = 0; i < nops; i++) {
		const struct op *o = &ops[i];

		fprintf(f, "%s\n  {\"seq\": %d, \"kind\": \"%s\", \"name\": ", i ? "," : "", i, o->kind);
		json_str(f, o->name);
		fprintf(f, ", \"bytes\": %llu, \"stream\": %d, \"phase\": \"%s\", \"graph_launch\": %d, "
			   "\"target_ns\": %llu, \"event_ns\": ", o->bytes, o->stream, o->phase,
			o->graph_launch, o->target_ns);
		if (o->event_ns < 0)
			fprintf(f, "null}");
		else
			fprintf(f, "%lld}", o->event_ns);
	}
	fprintf(f, "\n],\n\"probes\": [");
	for (int i = 0; i < NPROBES; i++) {
		fprintf(f, "%s\n  {\"name\": ", i ? "," : "");
		json_str(f, kname_probe);
		fprintf(f, ", \"stream\": 0, \"host_before_ns\": %llu, \"host_after_ns\": %llu}",
			probes[i].before_ns, probes[i].after_ns);
	}
	fprintf(f, "\n]\n}\n");
	if (fclose(f) != 0 || rename(tmp, path) != 0) {
		fprintf(stderr, "gpu_check: writing %s: %s\n", path, strerror(errno));
		exit(1);
	}
}

// Everything that is not GPU work: context, streams, events, buffers, and
// every kernel's module loaded (lazy loading must not happen in a timed span).
static void setup(void)
{
	cudaFuncAttributes fa;

	CK(cudaSetDevice(0));
	CK(cudaFree(0));
	for (int i = 0; i < NSTREAMS; i++) {
		CK(cudaStreamCreateWithFlags(&streams[i], cudaStreamNonBlocking));
		CK(cudaEventCreate(&ev[i][0]));
		CK(cudaEventCreate(&ev[i][1]));
	}
	for (int i = 0; i < 3; i++)
		CK(cudaEventCreate(&gev[i]));
	CK(cudaMallocHost(&hsrc, 64 * MIB));
	CK(cudaMallocHost(&hdst, 64 * MIB));
	memset(hsrc, 0x5a, 64 * MIB);
	memset(hdst, 0, 64 * MIB);
	CK(cudaMalloc(&dsrc, 64 * MIB));
	CK(cudaMalloc(&ddst, 64 * MIB));
	CK(cudaHostAlloc((void **)&gate_flag, sizeof(int), cudaHostAllocMapped));
	CK(cudaHostGetDevicePointer((void **)&gate_dflag, (void *)gate_flag, 0));
	CK(cudaFuncGetAttributes(&fa, spin_kernel));
	CK(cudaFuncGetAttributes(&fa, graph_kernel_a));
	CK(cudaFuncGetAttributes(&fa, graph_kernel_b));
	CK(cudaFuncGetAttributes(&fa, probe_kernel));
	CK(cudaFuncGetAttributes(&fa, gate_kernel));
	kernel_name((const void *)spin_kernel, "spin_kernel(unsigned long long)", kname_spin, sizeof(kname_spin));
	kernel_name((const void *)graph_kernel_a, "graph_kernel_a(unsigned long long)", kname_ga, sizeof(kname_ga));
	kernel_name((const void *)graph_kernel_b, "graph_kernel_b(unsigned long long)", kname_gb, sizeof(kname_gb));
	kernel_name((const void *)probe_kernel, "probe_kernel(unsigned long long)", kname_probe, sizeof(kname_probe));
}

static void wait_for_file(const char *path)
{
	struct timespec ten_ms = { 0, 10 * 1000 * 1000 };

	printf("gpu_check: pid %d ready, waiting for %s\n", getpid(), path);
	fflush(stdout);
	for (int i = 0; i < 30000; i++) {   // 300 s at most
		if (access(path, F_OK) == 0)
			return;
		nanosleep(&ten_ms, NULL);
	}
	fprintf(stderr, "gpu_check: %s never appeared\n", path);
	exit(3);
}

int main(int argc, char **argv)
{
	const char *wait_path = NULL, *truth = NULL;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--wait-for-file") == 0 && i + 1 < argc)
			wait_path = argv[++i];
		else if (argv[i][0] != '-' && !truth)
			truth = argv[i];
		else {
			fprintf(stderr, "usage: gpu_check [--wait-for-file PATH] TRUTH.json\n");
			return 2;
		}
	}
	if (!truth) {
		fprintf(stderr, "usage: gpu_check [--wait-for-file PATH] TRUTH.json\n");
		return 2;
	}
	setup();
	if (wait_path)
		wait_for_file(wait_path);
	run_all();
	CK(cudaDeviceSynchronize());
	write_truth(truth, wait_path ? "wait" : "launch");
	printf("gpu_check: %d operations, %d probes -> %s\n", nops, NPROBES, truth);
	return 0;
}
