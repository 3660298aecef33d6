// SPDX-License-Identifier: MIT
/*
 * fuzz_capture — libFuzzer target: arbitrary bytes as a capture file, through
 * the reader, the JSON and protobuf exporters and `gpuio info` (text and --json).
 *
 * An input that starts with the capture magic is used as the whole file; any
 * other input is appended to a valid header and a few valid GPU records (a
 * kernel, its API call, a uprobe duplicate, a sync with no thread, NVTX, a
 * collector status), so that mutations spend their time on records rather
 * than on the magic, and every input goes through the GPU layout (dedup,
 * correlation, nesting) together with whatever the mutations add. Outputs go to a scratch file
 * (removed at exit) and stdout is /dev/null. Build: tests/tests.mk.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include "capture/capture.h"
#include "cmd/commands.h"
#include "export/export.h"
#include "lib/log.h"

static int in_fd = -1;
static char in_path[64], out_json[256], out_gz[256], out_pb[256], out_html[256];

static void cleanup(void)
{
	unlink(out_json);
	unlink(out_gz);
	unlink(out_pb);
	unlink(out_html);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = getenv("TMPDIR");
	int null;

	gpuio_log_verbosity = -1;     /* no messages: every input is an error case */
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
	snprintf(in_path, sizeof(in_path), "/proc/self/fd/%d", in_fd);
	if (!dir || !*dir)
		dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	snprintf(out_json, sizeof(out_json), "%s/gpuio-fuzz-%d.json", dir, (int)getpid());
	snprintf(out_gz, sizeof(out_gz), "%s/gpuio-fuzz-%d.json.gz", dir, (int)getpid());
	snprintf(out_pb, sizeof(out_pb), "%s/gpuio-fuzz-%d.pftrace", dir, (int)getpid());
	snprintf(out_html, sizeof(out_html), "%s/gpuio-fuzz-%d.html", dir, (int)getpid());
	atexit(cleanup);
	return 0;
}

static void write_all(const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t k = write(in_fd, c, n);

		if (k <= 0)
			abort();
		c += k;
		n -= (size_t)k;
	}
}

static void valid_header(struct gpuio_cap_header *h)
{
	memset(h, 0, sizeof(*h));
	memcpy(h->magic, GPUIO_CAP_MAGIC, 8);
	h->version = GPUIO_CAP_VERSION;
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gpuio_export_stats st;
	struct gpuio_cap_reader *r;
	const struct gpuio_hdr *h;
	char err[320];
	char *info_argv[] = { "info", in_path, NULL };
	char *info_json_argv[] = { "info", "--json", in_path, NULL };
	char *report_argv[] = { "report", in_path, NULL };
	char *report_json_argv[] = { "report", "--json", in_path, NULL };
	char *report_html_argv[] = { "report", "--html", out_html, in_path, NULL };

	if (ftruncate(in_fd, 0) < 0 || lseek(in_fd, 0, SEEK_SET) < 0)
		abort();
	if (size < 8 || memcmp(data, GPUIO_CAP_MAGIC, 8) != 0) {
		struct gpuio_cap_header hdr;

		valid_header(&hdr);
		write_all(&hdr, sizeof(hdr));
		if (!gpu_prefix_len)
			build_gpu_prefix();
		write_all(gpu_prefix, gpu_prefix_len);
	}
	write_all(data, size);

	/* the reader alone, twice (rewind must restart cleanly) */
	if (gpuio_cap_reader__open(in_path, &r, err, sizeof(err)) == 0) {
		for (int pass = 0; pass < 2; pass++) {
			while (gpuio_cap_reader__next(r, &h) > 0) {
				if (h->size < sizeof(*h))
					abort();
			}
			gpuio_cap_reader__rewind(r);
		}
		gpuio_cap_reader__close(r);
	}

	gpuio_export(in_path, size & 1 ? out_gz : out_json, NULL, &st);
	gpuio_export(in_path, out_pb, NULL, &st);
	cmd_info(2, info_argv);
	cmd_info(3, info_json_argv);
	cmd_report(2, report_argv);
	cmd_report(3, report_json_argv);
	cmd_report(4, report_html_argv);
	return 0;
}
