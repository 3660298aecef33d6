/* SPDX-License-Identifier: MIT */
/*
 * convert.h — CUPTI activity records -> gpuio GPU records (bpf/gpuio_abi.h).
 *
 * CUPTI records hold pointers (kernel names, NVTX strings) that mean nothing
 * outside the process, and timestamps on CUPTI's clock: the converter copies
 * the strings (kernel names demangled), moves timestamps to MONOTONIC with
 * the current offset, drops noisy API calls (list in convert.c) and pairs
 * NVTX start/end markers into ranges. Buffers are walked only with
 * cuptiActivityGetNextRecord (from the cupti_api table); each record is read
 * through the struct version of the loaded libcupti (record_layout.h).
 *
 * Not thread-safe: the collector serialises calls.
 */
#ifndef GPUIO_CUPTI_CONVERT_H
#define GPUIO_CUPTI_CONVERT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "cupti_api.h"
#include "record_layout.h"

struct convert;

/* Receives each converted record (hdr.size bytes, a multiple of 8). */
typedef int (*convert_emit_fn)(void *arg, const void *rec, size_t len);

struct convert_stats {
	uint64_t converted;   /* gpuio records emitted */
	uint64_t filtered;    /* API records dropped as noise */
	uint64_t ignored;     /* CUPTI records of kinds we do not convert */
	uint64_t nvtx_lost;   /* NVTX ends without a start, starts with no room */
};

struct convert *convert__new(const struct cupti_api *api, pid_t pid);
void convert__free(struct convert *c);
void convert__set_pid(struct convert *c, pid_t pid);
/* MONOTONIC - CUPTI clock, added to every timestamp from now on. */
void convert__set_offset(struct convert *c, int64_t offset_ns);
/* Convert one record. Returns the number of gpuio records emitted, or the emit error. */
int convert__record(struct convert *c, const CUpti_Activity *rec,
		    convert_emit_fn emit, void *arg);
/* Convert every record of a completed buffer. Returns records emitted. */
long convert__buffer(struct convert *c, uint8_t *buf, size_t valid,
		     convert_emit_fn emit, void *arg);
const struct convert_stats *convert__stats(const struct convert *c);
/* The record structs this converter decodes (from the libcupti's cuptiGetVersion). */
enum cupti_layout convert__layout(const struct convert *c);

/* Classify a CUDA API by name (enum gpuio_api_kind); sets *memcpy_kind when the name says. */
int convert__api_kind(const char *name, uint8_t *memcpy_kind);
/* Is this API (base name, "_v3020"/"_ptsz" suffixes ignored) on the noise list? */
int convert__api_filtered(const char *name);
/* Call fn(cbid) for each noisy cbid of the domain (to disable them at the source). */
void convert__each_filtered(const struct cupti_api *api, CUpti_CallbackDomain dom,
			    void (*fn)(void *arg, uint32_t cbid), void *arg);

#endif /* GPUIO_CUPTI_CONVERT_H */
