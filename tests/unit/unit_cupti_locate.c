// SPDX-License-Identifier: MIT
/*
 * unit_cupti_locate — which libcupti the collector picks (cupti/cupti_locate.c),
 * over a made-up file tree: a CUDA 13 toolkit in /usr/local/cuda, a CUDA 12.4
 * toolkit in /usr/local/cuda-12.4, and a pip PyTorch environment whose
 * nvidia/cuda_runtime/lib/libcudart.so.12 has nvidia/cuda_cupti/lib beside it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "cupti/cupti_locate.h"
#include "unit.h"

static char root[256];

static void touch(const char *rel)
{
	char path[512], *p;
	int fd;

	snprintf(path, sizeof(path), "%s%s", root, rel);
	for (p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		*p = 0;
		mkdir(path, 0755);
		*p = '/';
	}
	fd = open(path, O_CREAT | O_WRONLY, 0644);
	CHECK(fd >= 0, "%s", path);
	close(fd);
}

static const char *at(const char *rel)
{
	static char path[4][512];
	static int i;

	i = (i + 1) % 4;
	snprintf(path[i], sizeof(path[i]), "%s%s", root, rel);
	return path[i];
}

static int find(const struct cupti_candidate *c, int n, const char *path)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(c[i].path, path))
			return i;
	return -1;
}

int main(void)
{
	struct cupti_candidate c[CUPTI_LOCATE_MAX];
	struct cupti_locate_in in = { 0 };
	const char *torch[4];
	char pip[512], cupti12[512], rt12[512];
	int n = 0;

	snprintf(root, sizeof(root), "/tmp/unit_cupti_locate.%d", (int)getpid());
	mkdir(root, 0755);
	touch("/usr/local/cuda/lib64/libcupti.so.13");
	touch("/usr/local/cuda/lib64/libcupti.so.13.0.85");
	touch("/usr/local/cuda-12.4/extras/CUPTI/lib64/libcupti.so.12");
	touch("/venv/site-packages/nvidia/cuda_runtime/lib/libcudart.so.12");
	touch("/venv/site-packages/nvidia/cuda_cupti/lib/libcupti.so.12");
	snprintf(pip, sizeof(pip), "%s", at("/venv/site-packages/nvidia/cuda_cupti/lib/libcupti.so.12"));
	snprintf(cupti12, sizeof(cupti12), "%s", at("/usr/local/cuda-12.4/extras/CUPTI/lib64/libcupti.so.12"));
	snprintf(rt12, sizeof(rt12), "%s", at("/venv/site-packages/nvidia/cuda_runtime/lib/libcudart.so.12"));
	in.root = root;

	/* names */
	CHECK(cupti_locate__major("/x/libcupti.so.12.4.127") == 12, "n=%d", n);
	CHECK(cupti_locate__major("libcupti.so.13") == 13, "n=%d", n);
	CHECK(cupti_locate__major("/x/libcupti.so") == 0, "n=%d", n);
	CHECK(cupti_locate__major("/x/libcudart.so.12") == 0, "n=%d", n);
	CHECK(cupti_locate__driver_major(12040) == 12 && cupti_locate__driver_major(0) == 0, "n=%d", n);

	/* a CUDA 13 driver, nothing loaded: 13 first (soname, then the toolkit), then 12 */
	in.driver_major = 13;
	n = cupti_locate(&in, c, CUPTI_LOCATE_MAX);
	CHECK(n >= 4, "n=%d", n);
	CHECK(!strcmp(c[0].path, "libcupti.so.13") && !c[0].exists, "n=%d", n);
	CHECK(find(c, n, at("/usr/local/cuda/lib64/libcupti.so.13")) == 1 && c[1].exists && c[1].major == 13, "n=%d", n);
	/* the versioned file is the same inode? no: a distinct file, listed after the soname */
	CHECK(find(c, n, at("/usr/local/cuda/lib64/libcupti.so.13.0.85")) == 2, "n=%d", n);
	CHECK(find(c, n, "libcupti.so.12") == 3, "n=%d", n);
	CHECK(find(c, n, cupti12) > 3, "n=%d", n);
	CHECK(find(c, n, pip) < 0, "n=%d", n);  /* nothing points at the Python environment */

	/* a CUDA 12 driver: never a libcupti 13 */
	in.driver_major = 12;
	n = cupti_locate(&in, c, CUPTI_LOCATE_MAX);
	for (int i = 0; i < n; i++)
		CHECK(c[i].major == 12, "n=%d", n);
	CHECK(find(c, n, cupti12) >= 0, "n=%d", n);

	/* PyTorch cu12 on a CUDA 13 driver, its libcudart loaded: its own cuda_cupti first */
	in.driver_major = 13;
	torch[0] = "/usr/lib/x86_64-linux-gnu/libc.so.6";
	torch[1] = rt12;
	torch[2] = NULL;
	in.loaded = torch;
	n = cupti_locate(&in, c, CUPTI_LOCATE_MAX);
	CHECK(n >= 3, "n=%d", n);
	CHECK(!strcmp(c[0].path, pip) && c[0].major == 12 && strstr(c[0].why, "cuda_cupti"), "n=%d", n);
	CHECK(find(c, n, "libcupti.so.12") < find(c, n, "libcupti.so.13"), "n=%d", n);

	/* already loaded (the profiler loaded it): that one, before anything else */
	torch[2] = cupti12;
	torch[3] = NULL;
	n = cupti_locate(&in, c, CUPTI_LOCATE_MAX);
	CHECK(!strcmp(c[0].path, cupti12) && strstr(c[0].why, "already loaded"), "n=%d", n);
	CHECK(find(c, n, pip) == 1, "n=%d", n);

	/* the override is the user's word: alone, even if missing */
	in.override = "/opt/custom/libcupti.so.12";
	n = cupti_locate(&in, c, CUPTI_LOCATE_MAX);
	CHECK(n == 1 && !strcmp(c[0].path, in.override) && !c[0].exists && c[0].major == 12, "n=%d", n);

	/* no duplicates by real path: a symlink to a listed file is not listed again */
	in.override = NULL;
	in.loaded = NULL;
	in.driver_major = 13;
	CHECK(symlink(at("/usr/local/cuda/lib64/libcupti.so.13.0.85"),
		      at("/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13")) == 0 || errno == ENOENT, "n=%d", n);
	n = cupti_locate(&in, c, 2);
	CHECK(n == 2, "n=%d", n);  /* max is honoured */

	snprintf(pip, sizeof(pip), "rm -rf '%s'", root);
	if (system(pip) != 0)
		fprintf(stderr, "could not remove %s\n", root);
	return unit_done("unit_cupti_locate");
}
