// SPDX-License-Identifier: MIT
/*
 * fuzz_capture — libFuzzer target: arbitrary bytes as a capture file, through
 * the reader, the JSON and protobuf exporters and `gpuio info` (text and --json).
 *
 * An input that starts with the capture magic is used as the whole file; any
 * other input is appended to a valid header, so that mutations spend their
 * time on records rather than on the magic. Outputs go to a scratch file
 * (removed at exit) and stdout is /dev/null. Build: tests/tests.mk.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include "capture.h"
#include "commands.h"
#include "export.h"
#include "log.h"

static int in_fd = -1;
static char in_path[64], out_json[256], out_gz[256], out_pb[256];

static void cleanup(void)
{
	unlink(out_json);
	unlink(out_gz);
	unlink(out_pb);
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gpuio_export_stats st;
	struct gpuio_cap_reader *r;
	const struct gpuio_hdr *h;
	char err[320];
	char *info_argv[] = { "info", in_path, NULL };
	char *info_json_argv[] = { "info", "--json", in_path, NULL };

	if (ftruncate(in_fd, 0) < 0 || lseek(in_fd, 0, SEEK_SET) < 0)
		abort();
	if (size < 8 || memcmp(data, GPUIO_CAP_MAGIC, 8) != 0) {
		struct gpuio_cap_header hdr;

		valid_header(&hdr);
		write_all(&hdr, sizeof(hdr));
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

	gpuio_export_json(in_path, size & 1 ? out_gz : out_json, NULL, &st);
	gpuio_export_pftrace(in_path, out_pb, NULL, &st);
	cmd_info(2, info_argv);
	cmd_info(3, info_json_argv);
	return 0;
}
