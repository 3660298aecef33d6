// SPDX-License-Identifier: MIT
/* fuzz_common.c — see fuzz_common.h. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include "capture/capture.h"
#include "lib/file_io.h"
#include "lib/log.h"
#include "fuzz_common.h"

char fuzz_in_path[64];
static int in_fd = -1;

void fuzz_init(void)
{
	int null;

	gpuio_log_verbosity = -1;     /* no messages: most inputs are error cases */
	null = open("/dev/null", O_WRONLY);
	if (null >= 0) {
		dup2(null, STDOUT_FILENO);
		close(null);
	}
	in_fd = memfd_create("fuzz-capture", MFD_CLOEXEC);
	if (in_fd < 0) {
		perror("memfd_create");
		exit(1);
	}
	snprintf(fuzz_in_path, sizeof(fuzz_in_path), "/proc/self/fd/%d", in_fd);
}

const char *fuzz_out_dir(void)
{
	const char *dir = getenv("TMPDIR");

	if (dir && *dir)
		return dir;
	return access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
}

static void put(const void *p, size_t n)
{
	if (file_write_all(in_fd, p, n, NULL))
		abort();
}

static void valid_header(struct gpuio_cap_header *h, __u32 version)
{
	memset(h, 0, sizeof(*h));
	memcpy(h->magic, GPUIO_CAP_MAGIC, 8);
	h->version = version;
	h->header_size = sizeof(*h);
	h->realtime_ns = 1700000000000000000ull;
	h->monotonic_ns = 1000000000000ull;
	h->abi_version = GPUIO_ABI_VERSION;
	strcpy(h->vfs_mode, "tp_btf");
	strcpy(h->pagecache_mode, "tp_btf");
}

static unsigned char gpu_prefix[4096];
static size_t gpu_prefix_len;

static void put_rec(const void *rec, size_t len)
{
	if (gpu_prefix_len + len <= sizeof(gpu_prefix)) {
		memcpy(gpu_prefix + gpu_prefix_len, rec, len);
		gpu_prefix_len += len;
	}
}

static void hdr(struct gpuio_hdr *h, unsigned type, size_t size, unsigned tid, uint64_t ts)
{
	h->type = (uint16_t)type;
	h->size = (uint16_t)size;
	h->pid = 77;
	h->tid = tid;
	h->cpu = 0;
	h->ts = 1000000000000ull + ts;
}

/* a kernel, its API call, a uprobe duplicate, a sync with no thread, NVTX, a status */
static void build_gpu_prefix(void)
{
	struct gpuio_gpu_info info = { 0 };
	struct gpuio_gpu_kernel k = { 0 };
	struct gpuio_cuda_api api = { 0 }, up = { 0 };
	struct gpuio_gpu_sync sy = { 0 };
	struct gpuio_nvtx_range nv = { 0 };
	size_t ksize = (offsetof(struct gpuio_gpu_kernel, name) + 6 + 7) & ~(size_t)7;
	size_t nsize = (offsetof(struct gpuio_nvtx_range, name) + 4 + 7) & ~(size_t)7;

	hdr(&info.hdr, GPUIO_REC_GPU_INFO, sizeof(info), 0, 1);
	info.state = GPUIO_GPU_ON;
	put_rec(&info, sizeof(info));
	hdr(&k.hdr, GPUIO_REC_GPU_KERNEL, ksize, 0, 5000);
	k.end_ns = k.hdr.ts + 1000;
	k.correlation = 5;
	k.name_len = 6;
	memcpy(k.name, "kernel", 6);
	put_rec(&k, ksize);
	hdr(&api.hdr, GPUIO_REC_CUDA_API, sizeof(api), 77, 1000);
	api.end_ns = api.hdr.ts + 500;
	api.correlation = 5;
	api.source = GPUIO_API_RUNTIME;
	api.kind = GPUIO_API_LAUNCH;
	strcpy(api.name, "cudaLaunchKernel");
	put_rec(&api, sizeof(api));
	up = api;
	up.hdr.ts -= 100;
	up.end_ns += 100;
	up.correlation = 0;
	up.source = GPUIO_API_UPROBE_RT;
	up.func = 0x1000;
	put_rec(&up, sizeof(up));
	hdr(&sy.hdr, GPUIO_REC_GPU_SYNC, sizeof(sy), 0, 7000);
	sy.end_ns = sy.hdr.ts + 100;
	sy.correlation = 9;
	put_rec(&sy, sizeof(sy));
	hdr(&nv.hdr, GPUIO_REC_NVTX, nsize, 77, 900);
	nv.end_ns = nv.hdr.ts + 800;
	nv.name_len = 4;
	memcpy(nv.name, "step", 4);
	put_rec(&nv, nsize);
}

void fuzz_input(const uint8_t *data, size_t size, bool gpu)
{
	if (ftruncate(in_fd, 0) < 0 || lseek(in_fd, 0, SEEK_SET) < 0)
		abort();
	if (size && data[0] == FUZZ_V2_MARK) {
		struct gpuio_cap_header h;

		/* frames of version 2 (capture/compact.c) follow the marker */
		valid_header(&h, GPUIO_CAP_VERSION);
		put(&h, sizeof(h));
		data++;
		size--;
	} else if (size < 8 || memcmp(data, GPUIO_CAP_MAGIC, 8) != 0) {
		struct gpuio_cap_header h;

		/* records verbatim (version 1), after the GPU records when asked */
		valid_header(&h, GPUIO_CAP_VERSION_RAW);
		put(&h, sizeof(h));
		if (gpu) {
			if (!gpu_prefix_len)
				build_gpu_prefix();
			put(gpu_prefix, gpu_prefix_len);
		}
	}
	put(data, size);
}
