/* SPDX-License-Identifier: MIT */
/*
 * report_roles.h — what each file is to the job (data, code, checkpoint,
 * other: report_roles.c), decided from its path and from what the program
 * did to it. The path rules and the decision are pure functions so that the
 * unit tests (tests/unit/unit_report_roles.c) check them on their own.
 */
#ifndef GPUIO_REPORT_ROLES_H
#define GPUIO_REPORT_ROLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "report/report_model.h"

/* What a path alone says (bits of rpt_path_class). */
#define RPT_PATH_CODE    0x01   /* interpreter imports, libraries, system config */
#define RPT_PATH_PSEUDO  0x02   /* /proc, /sys, /dev, pipes, sockets, anon inodes, memfd */
#define RPT_PATH_SHM     0x04   /* /dev/shm: a tmpfs of real files (and IPC segments) */
#define RPT_PATH_CKPT    0x08   /* checkpoint-like name (ckpt, .pt, .safetensors, ...) */
#define RPT_PATH_LOG     0x10   /* log or text output name (.log, .txt, stdout, ...) */

unsigned rpt_path_class(const char *path, size_t len);

/* What the program did to one file (pass 1). */
struct rpt_role_facts {
	uint64_t rbytes, wbytes;
	uint32_t big_bursts;    /* write bursts >= RPT_CKPT_MIN_BYTES ended by fsync/close */
	uint32_t rewrites;      /* of those, the ones that started at offset 0 */
	bool read_after_write;  /* bytes read after bytes were written: a dataset */
	bool synced;            /* fsync, fdatasync or sync_file_range on it */
	bool stdio;             /* written through fd 1 or 2 */
	bool special;           /* a pipe, socket or character device */
	bool recurring;         /* other written files share its path pattern */
	bool exec_mapped;       /* an instruction fetch faulted on it: code */
};

enum rpt_role rpt_role_decide(unsigned path_class, const struct rpt_role_facts *x);

/* Like strcmp, but every run of digits equals every other: ckpt_0001.pt and
 * ckpt_0002.pt are one pattern (checkpoints written again and again). */
int rpt_path_pattern_cmp(const char *a, size_t alen, const char *b, size_t blen);

#endif /* GPUIO_REPORT_ROLES_H */
