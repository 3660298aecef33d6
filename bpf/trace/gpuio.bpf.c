// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * gpuio.bpf.c — all of gpuio's kernel programs in one object. Every program
 * is declared SEC("?…") (not loaded by default); the loader turns on one
 * variant per layer, chosen by trying the best first (user/trace/loader.c).
 */
#include "trace/common.bpf.h"
#include "trace/proc.bpf.h"
#include "trace/vfs.bpf.h"
#include "trace/vfs_syscall.bpf.h"
#include "trace/vfs_func.bpf.h"
#include "trace/iouring.bpf.h"
#include "trace/fault.bpf.h"
#include "trace/pagecache.bpf.h"
#include "trace/block.bpf.h"
#include "trace/cuda.bpf.h"
#include "trace/sched.bpf.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";
