/* SPDX-License-Identifier: MIT */
/*
 * sampler.h — on-CPU samples (--sample-hz): a CPU-clock perf event on
 * every CPU at that rate, each running the loader's py_sample program
 * (bpf/trace/pystack.bpf.h), which keeps the ticks that land on a traced
 * Python thread, with its stack.
 */
#ifndef GPUIO_SAMPLER_H
#define GPUIO_SAMPLER_H

#include <stddef.h>

struct gpuio_loader;
struct sampler;

/*
 * Open and attach the sampler at hz on every online CPU. 0 and *out, or
 * -errno with why filled (no perf events here: perf_event_paranoid, a
 * sandbox). Says its rate as the samples layer's mode ("99Hz").
 */
int sampler__start(struct gpuio_loader *l, unsigned int hz, struct sampler **out, char *why,
		   size_t len);
void sampler__stop(struct sampler *s);

#endif /* GPUIO_SAMPLER_H */
