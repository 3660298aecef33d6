/* SPDX-License-Identifier: MIT */
/*
 * findings.h — what the report found, in the shape the exporters draw it:
 * per training loop a track of its steps, per GPU (and process) a track of
 * its idle gaps, each slice with its time by kind. The report fills it
 * (report/report_findings.c), the timeline walks it (timeline/walk.c), so
 * opening an export shows the report's answer without running the report.
 * Plain data: the names are the report's own tables (static strings).
 */
#ifndef GPUIO_MODEL_FINDINGS_H
#define GPUIO_MODEL_FINDINGS_H

#include <stddef.h>
#include <stdint.h>

#define FINDING_KINDS_MAX 16

enum finding_track_kind {
	FINDING_STEPS,          /* a loop's steps: pid, tid = the loop thread */
	FINDING_GPU_GAPS,       /* a GPU's idle gaps in one process: pid, device */
};

struct finding_slice {
	uint64_t s, e;                          /* capture clock */
	uint32_t index;                         /* a step's number, from 1 */
	uint32_t launcher_tid;                  /* a gap: who launched the work that ended it */
	uint64_t wait_ns, rest_ns;              /* a step: waiting for data, the rest */
	const char *cause;                      /* the largest kind (a static name) */
	uint64_t ns[FINDING_KINDS_MAX];         /* time by kind: track's names[] */
	uint64_t ns2[FINDING_KINDS_MAX];        /* a gap: the launcher's state, names2[] */
};

struct finding_track {
	enum finding_track_kind kind;
	uint32_t pid, tid, device;
	uint32_t loop;                          /* a step track: the report's loop index */
	const char *thread;                     /* the loop thread's name ("" unknown) */
	char files[256];                        /* a step track: the data files it waited on */
	char peers[256];                        /* ... and the peers ("" none) */
	const char *const *names;               /* keys of ns[] */
	unsigned nnames;
	const char *ns_key;                     /* the arg that holds ns[] */
	const char *const *names2;              /* keys of ns2[] (gaps) */
	unsigned nnames2;
	struct finding_slice *v;
	size_t n, cap;
};

struct findings {
	struct finding_track *t;
	size_t n;
	uint64_t gap_min_ns;                    /* gaps shorter than this are left out... */
	unsigned gap_top;                       /* ...unless among the largest gap_top */
};

/* A new track, empty; NULL when out of memory. */
struct finding_track *findings__track(struct findings *f, enum finding_track_kind kind);
/* A new slice of t, zeroed; NULL when out of memory. */
struct finding_slice *findings__slice(struct finding_track *t);
void findings__free(struct findings *f);

#endif /* GPUIO_MODEL_FINDINGS_H */
