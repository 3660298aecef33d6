// SPDX-License-Identifier: MIT
/*
 * cupti_bench — what the CUPTI collector costs per activity record: CUPTI's
 * buffer-completed callback doing real libcupti iteration, conversion to
 * gpuio records and write() to the side file. No GPU: buffers are filled
 * from the CUDA 13 structs (tests' fake_cupti) before the clock starts.
 *
 *   cupti_bench DIR KIND [BUFFERS]
 *     KIND: kernel       CONCURRENT_KERNEL, 64 distinct mangled names (cache hits)
 *           kernel_cold  every record a different name (demangled each time)
 *           memcpy       MEMCPY
 *           api          RUNTIME records (cudaLaunchKernel)
 *     BUFFERS: 1 MiB buffers to complete (default 40)
 *
 * Prints one line: kind, records, ns per record for the whole callback,
 * ns per record for iteration alone, bytes written.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include "capture/capture.h"
#include "clock.h"
#include "collector.h"
#include "fake_cupti.h"

static char **names;
static size_t nnames;

static void make_names(size_t n)
{
	size_t i;

	names = calloc(n, sizeof(*names));
	for (i = 0; i < n; i++) {
		names[i] = malloc(96);
		/* a templated CUDA kernel, as PyTorch's look: demangling is real work */
		snprintf(names[i], 96, "_ZN2at6native18elementwise_kernelILi%zuELi4EZNS0_22gpu_kernel_implIfEEvRNS_18TensorIteratorBaseEEUliE_EEviT1_", 100 + i);
	}
	nnames = n;
}

/* Fill one buffer the way CUPTI would; returns records. */
static size_t fill(const char *kind, uint64_t *t, size_t *name_i)
{
	size_t n = 0, rec = !strcmp(kind, "memcpy") ? sizeof(CUpti_ActivityMemcpy6)
			  : !strcmp(kind, "api") ? sizeof(CUpti_ActivityAPI)
			  : sizeof(CUpti_ActivityKernel10);

	/* stop before fake_cupti__reserve would deliver the buffer itself */
	while (!fake.buf || fake.used + rec <= fake.size) {
		*t += 1000;
		if (!strcmp(kind, "memcpy"))
			fake_cupti__memcpy(*t, *t + 500, 0, 7, (uint32_t)n, 4096, 1);
		else if (!strcmp(kind, "api"))
			fake_cupti__api(0, *t, *t + 500, 4242, (uint32_t)n, 211);
		else
			fake_cupti__kernel(*t, *t + 500, 0, 7, (uint32_t)n, names[(*name_i)++ % nnames]);
		n++;
	}
	return n;
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	char err[256], path[4096];
	const char *kind;
	int buffers, i;
	uint64_t t = 1000000;
	size_t name_i = 0, total = 0;
	double cb_ns = 0, it_ns = 0;
	struct stat st;

	if (argc < 3) {
		fprintf(stderr, "usage: cupti_bench DIR kernel|kernel_cold|memcpy|api [BUFFERS]\n");
		return 2;
	}
	kind = argv[2];
	buffers = argc > 3 ? atoi(argv[3]) : 40;
	if (fake_cupti__init(err, sizeof(err))) {
		fprintf(stderr, "cupti_bench: %s\n", err);
		return 1;
	}
	make_names(!strcmp(kind, "kernel_cold") ? 200000 : 64);
	snprintf(path, sizeof(path), "%s/cupti_bench.%d.gpuio", argv[1], (int)getpid());
	{
		struct collector_opts o = { .api = &fake.api, .path = path, .how = GPUIO_GPU_HOW_LAUNCH,
					    .no_atexit = 1 };

		if (collector__start(&o)) {
			fprintf(stderr, "cupti_bench: collector did not start\n");
			return 1;
		}
	}
	for (i = 0; i < buffers; i++) {
		CUpti_Activity *rec = NULL;
		uint8_t *b;
		size_t n = fill(kind, &t, &name_i), used = fake.used, size = fake.size;
		double t0, t1;

		/* iteration alone, for scale */
		t0 = now_ns();
		while (fake.api.activityGetNextRecord(fake.buf, used, &rec) == CUPTI_SUCCESS)
			;
		t1 = now_ns();
		it_ns += t1 - t0;
		b = fake.buf;
		fake.buf = NULL;
		t0 = now_ns();
		fake.done(NULL, 0, b, size, used);
		t1 = now_ns();
		cb_ns += t1 - t0;
		total += n;
	}
	collector__stop();
	stat(path, &st);
	printf("kind=%s records=%zu ns_per_record=%.1f iterate_ns_per_record=%.1f bytes=%lld\n",
	       kind, total, cb_ns / total, it_ns / total, (long long)st.st_size);
	unlink(path);
	return 0;
}
