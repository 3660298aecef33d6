// SPDX-License-Identifier: MIT
/*
 * sampler.c — the on-CPU sampler (sampler.h): one CPU-clock perf event a
 * CPU, in frequency mode, the BPF program attached to each.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "capture/cap_layers.h"
#include "trace/loader.h"
#include "trace/sampler.h"

struct sampler {
	int n;
	int *fds;
	struct bpf_link **links;
};

static int perf_open(int cpu, unsigned int hz)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(a),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.freq = 1,
		.sample_freq = hz,
		.exclude_idle = 1,
	};

	return (int)syscall(__NR_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

void sampler__stop(struct sampler *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->n; i++) {
		bpf_link__destroy(s->links[i]);
		if (s->fds[i] >= 0)
			close(s->fds[i]);
	}
	free(s->links);
	free(s->fds);
	free(s);
}

int sampler__start(struct gpuio_loader *l, unsigned int hz, struct sampler **out, char *why,
		   size_t len)
{
	struct bpf_program *prog = gpuio_loader__sample_prog(l);
	int ncpu = libbpf_num_possible_cpus();
	struct sampler *s;
	char mode[16];

	*out = NULL;
	if (!prog) {
		snprintf(why, len, "the sampler's program did not load here");
		return -ENOTSUP;
	}
	s = calloc(1, sizeof(*s));
	if (!s || ncpu <= 0 || !(s->fds = calloc((size_t)ncpu, sizeof(int))) ||
	    !(s->links = calloc((size_t)ncpu, sizeof(*s->links)))) {
		sampler__stop(s);
		snprintf(why, len, "out of memory");
		return -ENOMEM;
	}
	for (int cpu = 0; cpu < ncpu; cpu++) {
		int fd = perf_open(cpu, hz);

		if (fd < 0) {
			if (errno == ENODEV)    /* a possible CPU that is not online */
				continue;
			snprintf(why, len, "perf_event_open on CPU %d: %s", cpu, strerror(errno));
			sampler__stop(s);
			return -errno;
		}
		s->fds[s->n] = fd;
		s->links[s->n] = bpf_program__attach_perf_event(prog, fd);
		if (!s->links[s->n]) {
			int err = -errno;

			close(fd);
			snprintf(why, len, "attach to CPU %d's perf event: %s", cpu, strerror(-err));
			sampler__stop(s);
			return err;
		}
		s->n++;
	}
	snprintf(mode, sizeof(mode), "%uHz", hz);
	gpuio_loader__set_mode(l, GPUIO_LAYER_SAMPLE, mode);
	*out = s;
	return 0;
}
