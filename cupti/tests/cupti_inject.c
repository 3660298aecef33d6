// SPDX-License-Identifier: MIT
/*
 * cupti_inject — an "application" that loads libgpuio-cupti.so the ways the
 * CUDA driver and the tracer do, on a machine that may have no driver.
 *
 *   cupti_inject LIB none|launch|attach REPORT
 *
 * launch: dlopen(LIB), InitializeInjection() (output dir from GPUIO_GPU_DIR).
 * attach: dlopen(LIB, RTLD_NOW), dlsym("gpuio_cupti_attach"), call it with
 *         $GPUIO_GPU_DIR as the tracer would; then wait (5 s at most) for the
 *         collector's thread to finish its start; then attach again (a second
 *         trace session) and wait for its file (cupti.PID.1.gpuio).
 * Whatever happens, the application prints "app: hello" on stdout and exits
 * 7; what the collector returned goes to REPORT (key=value lines), so the
 * test can check the app's own output and status are untouched.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

/* The collector's file is complete once its first record (216 bytes) is in. */
static void wait_for_file(const char *dir, const char *suffix, FILE *rep)
{
	char path[4096];
	struct stat st;
	int i;

	snprintf(path, sizeof(path), "%s/cupti.%d%s.gpuio", dir, (int)getpid(), suffix);
	for (i = 0; i < 500; i++) {
		if (stat(path, &st) == 0 && st.st_size >= 2024 + 216)
			break;
		usleep(10000);
	}
	fprintf(rep, "waited_ms=%d\n", i * 10);
}

int main(int argc, char **argv)
{
	const char *dir = getenv("GPUIO_GPU_DIR");
	FILE *rep;
	void *h;
	double t0;

	if (argc != 4) {
		fprintf(stderr, "usage: cupti_inject LIB none|launch|attach REPORT\n");
		return 2;
	}
	rep = fopen(argv[3], "w");
	if (!rep)
		return 3;
	if (strcmp(argv[2], "none")) {
		h = dlopen(argv[1], RTLD_NOW);
		if (!h) {
			fprintf(rep, "dlopen=%s\n", dlerror());
			goto app;
		}
		if (!strcmp(argv[2], "launch")) {
			int (*init)(void) = (int (*)(void))dlsym(h, "InitializeInjection");

			fprintf(rep, "InitializeInjection=%d\n", init ? init() : -1000);
			fprintf(rep, "again=%d\n", init ? init() : -1000);
		} else {
			int (*attach)(const char *) = (int (*)(const char *))dlsym(h, "gpuio_cupti_attach");
			int rc;

			t0 = now_us();
			rc = attach ? attach(dir) : -1000;
			fprintf(rep, "attach=%d\nattach_us=%.0f\n", rc, now_us() - t0);
			if (rc == 0 && dir)
				wait_for_file(dir, "", rep);
			/* a second trace session: CUPTI may be free by now, so it tries again */
			rc = attach ? attach(dir) : -1000;
			fprintf(rep, "again=%d\n", rc);
			if (rc == 0 && dir)
				wait_for_file(dir, ".1", rep);
		}
	}
app:
	fclose(rep);
	printf("app: hello\n");
	return 7;
}
