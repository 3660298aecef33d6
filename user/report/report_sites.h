/* SPDX-License-Identifier: MIT */
/*
 * report_sites.h — where in the program things happened (the capture's
 * Python stacks, model/stacks.h), as the report counts them: a call site
 * is the innermost frame of a stack that is the program's own code — not
 * the interpreter's standard library, not an installed package — or the
 * innermost frame when every frame is library code; its whole stack is
 * kept as one example (the chain).
 *
 * Pass 1 links each traced call to the stack its thread had at that call
 * (STACK_AT records come just before the call's own record: a few are
 * kept per thread) and folds calls by (file, stack); sleeps, preemptions
 * and samples are kept per thread in time order for the loop analysis.
 * Memory: the distinct (file, stack) pairs, and one entry per switch-out
 * or sample of a Python thread (the thread states already hold more).
 */
#ifndef GPUIO_REPORT_SITES_H
#define GPUIO_REPORT_SITES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rpt_model;
struct model_stack_at;
struct rpt_sites;

/* A call site: file:line function, interned once. */
struct rpt_site {
	const char *file;               /* the session's strings */
	const char *func;
	int line;                       /* -1 unknown */
	bool library;                   /* no frame of the program's own: the innermost */
};

/* A sleep, preemption or sample of a thread, with its stack */
struct rpt_stack_ev {
	uint64_t ts;
	uint32_t tid;
	uint32_t ref;                   /* model_session__stack's reference, 0: none */
	uint8_t what;                   /* enum gpuio_stack_what */
};

/* Time, bytes and count folded by site */
struct rpt_site_sum {
	int site;                       /* rpt_sites__get's index */
	uint32_t ref;                   /* one stack that had it (its chain) */
	uint64_t n, bytes, ns;
};

/* ---- pass 1 (report_load.c) ---- */
int rpt_sites__stack_at(struct rpt_model *m, const struct model_stack_at *a);
/* The stack of tid's call numbered seq over [ts, end] (0: none), taken
 * once; else the stack of a sleep inside it */
uint32_t rpt_sites__call_stack(struct rpt_model *m, uint32_t tid, uint32_t seq, uint64_t ts,
			       uint64_t end);
/* A traced call of a thread with its stack: its start and end for the loop
 * analysis; fetch: it fetched data (reads, faults, receives). 0 or -ENOMEM. */
int rpt_sites__call(struct rpt_model *m, uint32_t pid, uint32_t tid, uint64_t ts, uint64_t end,
		    uint32_t ref, bool fetch, uint64_t bytes);
/* Fold a call on file (files[] index) with its stack. 0 or -ENOMEM. */
int rpt_sites__file_call(struct rpt_model *m, size_t file, uint32_t ref, uint64_t bytes,
			 uint64_t ns);

/* ---- after pass 1 ---- */
int rpt_sites__finish(struct rpt_model *m);
void rpt_sites__free(struct rpt_model *m);
bool rpt_sites__any(const struct rpt_model *m);          /* the capture has stacks */
/* The call site of a stack reference, -1 none (no stack, or not checked) */
int rpt_sites__of(const struct rpt_model *m, uint32_t ref);
const struct rpt_site *rpt_sites__get(const struct rpt_model *m, int site);
/* Frame i of a stack as a site (its own line), -1 none */
int rpt_sites__frame(const struct rpt_model *m, uint32_t ref, unsigned i);
/* Where thread tid was over [s, e): the site of the stack it held longest
 * there (each stack seen in it holds until the next), -1 none seen */
int rpt_sites__held(const struct rpt_model *m, uint32_t tid, uint64_t s, uint64_t e);
/* The Python function a stack was in (its innermost Python frame, the line
 * left out; native frames are not counted), -1 none */
int rpt_sites__func_of(const struct rpt_model *m, uint32_t ref);
/* "file:line function" of a site (buf of at least 64 bytes) */
const char *rpt_sites__text(const struct rpt_model *m, int site, char *buf, size_t len);
/* The frames of a stack as "file:line function" lines joined by " <- "
 * (innermost first; a native frame as "function file") */
size_t rpt_sites__chain(const struct rpt_model *m, uint32_t ref, char *buf, size_t len);
/* A file's calls by site, most time first (*n of them) */
const struct rpt_site_sum *rpt_sites__file(const struct rpt_model *m, size_t file, size_t *n);
/* A thread's data fetches and samples by stack */
struct rpt_thread_stack {
	uint32_t pid, tid, ref;
	uint64_t fetches, bytes, ns;    /* its reads, faults, receives at this stack */
	uint64_t samples;               /* its on-CPU samples at this stack */
};
/* Every (thread, stack) pair, by thread (*n of them) */
const struct rpt_thread_stack *rpt_sites__thread_stacks(const struct rpt_model *m, size_t *n);
/* The sampler's rate (samples a second), 0: no samples */
unsigned rpt_sites__sample_hz(const struct rpt_model *m);
/* A thread's sleeps, preemptions, samples and calls (start and end) in time order (*n) */
const struct rpt_stack_ev *rpt_sites__thread(const struct rpt_model *m, uint32_t tid, size_t *n);

/*
 * Folding by site (the loop analysis' tables): add to out (a growing array
 * of *n, capacity *cap) and sort it by ns, then bytes, then n.
 */
int rpt_sites__add(struct rpt_site_sum **out, size_t *n, size_t *cap, int site, uint32_t ref,
		   uint64_t count, uint64_t bytes, uint64_t ns);
void rpt_sites__sort(struct rpt_site_sum *v, size_t n);

#endif /* GPUIO_REPORT_SITES_H */
