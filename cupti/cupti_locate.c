// SPDX-License-Identifier: MIT
/* cupti_locate.c — which libcupti to use, in order (see cupti_locate.h). */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "cupti_locate.h"
#include "lib/units.h"

/* The CUDA majors gpuio decodes (cupti/record_layout.c). */
static const int supported_majors[] = { 13, 12 };

int cupti_locate__major(const char *path)
{
	const char *base = strrchr(path, '/');
	const char *p;

	base = base ? base + 1 : path;
	if (strncmp(base, "libcupti.so.", 12) != 0)
		return 0;
	p = base + 12;
	return (*p >= '0' && *p <= '9') ? atoi(p) : 0;
}

static int is_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

struct list {
	struct cupti_candidate *out;
	int n, max;
};

/* Add a candidate unless it is already there (by real path) or the list is full. */
static void add(struct list *l, const char *path, const char *why)
{
	char real[PATH_MAX], other[PATH_MAX];
	int exists = strchr(path, '/') ? is_file(path) : 0;
	struct cupti_candidate *c;
	int i;

	if (l->n >= l->max || (strchr(path, '/') && !exists))
		return;
	if (!exists || !realpath(path, real))
		snprintf(real, sizeof(real), "%s", path);
	for (i = 0; i < l->n; i++) {
		const char *p = l->out[i].path;

		if (!strcmp(p, path) || (l->out[i].exists && realpath(p, other) && !strcmp(other, real)))
			return;
	}
	c = &l->out[l->n++];
	snprintf(c->path, sizeof(c->path), "%s", path);
	c->major = cupti_locate__major(path);
	c->why = why;
	c->exists = exists;
}

/* Every libcupti.so.MAJOR* file in dir (the exact soname first). */
static void add_dir(struct list *l, const char *dir, int major, const char *why)
{
	char path[PATH_MAX];
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof(path), "%s/libcupti.so.%d", dir, major);
	add(l, path, why);
	d = opendir(dir);
	if (!d)
		return;
	while ((e = readdir(d)))
		if (cupti_locate__major(e->d_name) == major) {
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			add(l, path, why);
		}
	closedir(d);
}

static int dirname_of(const char *path, char *dir, size_t len)
{
	const char *slash = strrchr(path, '/');

	if (!slash || (size_t)(slash - path) >= len)
		return -1;
	memcpy(dir, path, slash - path);
	dir[slash - path] = 0;
	return 0;
}

/*
 * Beside a loaded CUDA library: the same directory (a toolkit's lib64), and
 * for pip's layout (site-packages/nvidia/cuda_runtime/lib/libcudart.so.12)
 * the sibling package nvidia/cuda_cupti/lib.
 */
static void add_beside(struct list *l, const char *lib, int major)
{
	char dir[PATH_MAX], up[PATH_MAX], sib[PATH_MAX + 32];
	const char *base = strrchr(lib, '/');

	if (!base || (strncmp(base + 1, "libcudart.so", 12) && strncmp(base + 1, "libcuda.so", 10) &&
		      strncmp(base + 1, "libcublas", 9) && strncmp(base + 1, "libnvrtc", 8)))
		return;
	if (dirname_of(lib, dir, sizeof(dir)))
		return;
	add_dir(l, dir, major, "beside the process's CUDA libraries");
	/* dir = .../nvidia/cuda_runtime/lib -> .../nvidia/cuda_cupti/lib */
	if (dirname_of(dir, up, sizeof(up)) || dirname_of(up, up, sizeof(up)))
		return;
	snprintf(sib, sizeof(sib), "%s/cuda_cupti/lib", up);
	add_dir(l, sib, major, "the Python environment's nvidia/cuda_cupti");
}

/* /usr/local/cuda-12.4 style directories under root/usr/local, newest name last. */
static void add_versioned_toolkits(struct list *l, const char *root, int major)
{
	static const char *const subs[] = { "lib64", "extras/CUPTI/lib64", "targets/x86_64-linux/lib",
					    "targets/sbsa-linux/lib" };
	char base[PATH_MAX], pfx[32], dir[PATH_MAX + 64];
	struct dirent **names = NULL;
	int n, i;
	size_t s;

	snprintf(base, sizeof(base), "%s/usr/local", root);
	snprintf(pfx, sizeof(pfx), "cuda-%d.", major);
	n = scandir(base, &names, NULL, versionsort);
	for (i = n - 1; i >= 0; i--) {
		if (!strncmp(names[i]->d_name, pfx, strlen(pfx)))
			for (s = 0; s < ARRAY_SIZE(subs); s++) {
				snprintf(dir, sizeof(dir), "%s/%s/%s", base, names[i]->d_name, subs[s]);
				add_dir(l, dir, major, "a CUDA toolkit install");
			}
		free(names[i]);
	}
	free(names);
}

static void add_known(struct list *l, const char *root, int major)
{
	static const char *const dirs[] = { "/usr/local/cuda/lib64", "/usr/local/cuda/extras/CUPTI/lib64",
					    "/usr/local/cuda/targets/x86_64-linux/lib",
					    "/usr/local/cuda/targets/sbsa-linux/lib",
					    "/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu" };
	char dir[PATH_MAX];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(dirs); i++) {
		snprintf(dir, sizeof(dir), "%s%s", root, dirs[i]);
		add_dir(l, dir, major, "a known location");
	}
	add_versioned_toolkits(l, root, major);
}

/* libcudart.so.12.4.127 among the loaded objects -> 12. */
static int runtime_major(const char *const *loaded)
{
	const char *base;
	int i;

	for (i = 0; loaded && loaded[i]; i++) {
		base = strrchr(loaded[i], '/');
		base = base ? base + 1 : loaded[i];
		if (!strncmp(base, "libcudart.so.", 13) && base[13] >= '0' && base[13] <= '9')
			return atoi(base + 13);
	}
	return 0;
}

int cupti_locate(const struct cupti_locate_in *in, struct cupti_candidate *out, int max)
{
	struct list l = { out, 0, max };
	const char *root = in->root ? in->root : "";
	int majors[4], nm = 0, m, i, rt;
	char soname[32];

	if (in->override && *in->override) {
		/* The override is the user's word: no other candidate follows it. */
		snprintf(out[0].path, sizeof(out[0].path), "%s", in->override);
		out[0].major = cupti_locate__major(in->override);
		out[0].why = "GPUIO_CUPTI";
		out[0].exists = is_file(in->override);
		return max > 0 ? 1 : 0;
	}
	for (i = 0; in->loaded && in->loaded[i]; i++)
		if (cupti_locate__major(in->loaded[i]))
			add(&l, in->loaded[i], "already loaded in the process");

	/*
	 * The major of the process's own CUDA runtime first (PyTorch cu12 on a
	 * CUDA 13 driver wants CUPTI 12), then the driver's, then the other
	 * supported ones the driver can run, newest first.
	 */
	rt = runtime_major(in->loaded);
	if (rt && (!in->driver_major || rt <= in->driver_major))
		majors[nm++] = rt;
	if (in->driver_major && in->driver_major != rt)
		majors[nm++] = in->driver_major;
	for (m = 0; m < (int)ARRAY_SIZE(supported_majors); m++)
		if (supported_majors[m] != in->driver_major && supported_majors[m] != rt &&
		    (!in->driver_major || supported_majors[m] < in->driver_major))
			majors[nm++] = supported_majors[m];

	for (m = 0; m < nm; m++) {
		for (i = 0; in->loaded && in->loaded[i]; i++)
			add_beside(&l, in->loaded[i], majors[m]);
		snprintf(soname, sizeof(soname), "libcupti.so.%d", majors[m]);
		add(&l, soname, "the loader's search path");
		if (in->build_path && cupti_locate__major(in->build_path) == majors[m])
			add(&l, in->build_path, "found when gpuio was built");
		add_known(&l, root, majors[m]);
	}
	return l.n;
}

void cupti_locate__release(unsigned v, char *out, size_t len)
{
	/* cupti_version.h: v19 12.0 ... v24 12.6, v26 12.8, v27/28 12.9; then xxyyzz */
	static const char *const v12[] = { "12.0", "12.2", "12.3", "12.4", "12.5", "12.6",
					   "12.7", "12.8", "12.9", "12.9" };

	if (v >= 130000)
		snprintf(out, len, "%u.%u", v / 10000, v / 100 % 100);
	else if (v >= 19 && v <= 28)
		snprintf(out, len, "%s", v12[v - 19]);
	else if (v == 18)
		snprintf(out, len, "11.8");
	else
		snprintf(out, len, "?");
}
