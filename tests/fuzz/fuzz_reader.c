// SPDX-License-Identifier: MIT
/*
 * fuzz_reader — libFuzzer target for the capture reader and the record
 * sanitizer alone: arbitrary bytes as a capture file (a memfd: no file
 * system), read to the end twice (rewind must restart cleanly), every record
 * handed out checked against what the reader promises (a whole record no
 * larger than GPUIO_REC_SIZE_MAX, lengths within their arrays after
 * gpuio_rec__sanitize, path strings built for every PATH record). Inputs
 * without the capture magic get a valid header in front, so mutations spend
 * their time on records. Build: tests/tests.mk; run: tests/t_fuzz.sh.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include "capture/capture.h"
#include "lib/file_io.h"
#include "lib/log.h"
#include "fuzz_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_init();
	return 0;
}

static void check_record(const struct gpuio_hdr *h)
{
	if (h->size < sizeof(*h) || h->size > GPUIO_REC_SIZE_MAX)
		abort();
	if (h->type == GPUIO_REC_PATH) {
		const struct gpuio_path_event *p = (const void *)h;
		size_t len;
		char *s;

		if (p->len > h->size - offsetof(struct gpuio_path_event, data))
			abort();
		s = gpuio_path__string(p, &len);
		if (s && strlen(s) > len)
			abort();
		free(s);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gpuio_cap_reader *r;
	const struct gpuio_hdr *h;
	char err[320];
	uint64_t n[2] = { 0, 0 };

	fuzz_input(data, size, false);
	if (gpuio_cap_reader__open(fuzz_in_path, &r, err, sizeof(err)) != 0)
		return 0;
	for (int pass = 0; pass < 2; pass++) {
		while (gpuio_cap_reader__next(r, &h) > 0) {
			check_record(h);
			n[pass]++;
		}
		if (gpuio_cap_reader__rewind(r) != 0)
			break;
	}
	/* the same bytes read twice give the same records */
	if (n[1] && n[0] != n[1])
		abort();
	gpuio_cap_reader__close(r);
	return 0;
}
