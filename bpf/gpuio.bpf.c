// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * gpuio.bpf.c — all of gpuio's kernel programs in one object. Every program
 * is declared SEC("?…") (not loaded by default); the loader turns on one
 * variant per layer, chosen by trying the best first (user/loader.c).
 */
#include "common.bpf.h"
#include "proc.bpf.h"
#include "vfs.bpf.h"
#include "vfs_syscall.bpf.h"
#include "vfs_func.bpf.h"
#include "iouring.bpf.h"
#include "pagecache.bpf.h"
#include "block.bpf.h"
#include "cuda.bpf.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";
