/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * cuda.bpf.h — CUDA API calls seen by uprobes on libcudart / libcuda.so.1.
 *
 * One generic entry/return pair serves every probed function: the attach
 * cookie is a slot of cuda_specs, which says which arguments hold the byte
 * count, stream, kernel and copy direction, and names the function. Per
 * thread, a small stack (task storage) holds the calls in flight, because
 * the runtime calls the driver from inside its own calls (cudaMemcpy ->
 * cuMemcpy...): both are recorded, each with its own interval. A call nested
 * in a call of the *same* library is that library's internals (CUDA 13's
 * __cudaLaunchKernel tail-jumps into cudaLaunchKernel): only the outermost
 * is recorded.
 *
 * These are separate programs: the VFS hot path is untouched.
 */
#ifndef GPUIO_CUDA_BPF_H
#define GPUIO_CUDA_BPF_H
#include "trace/common.bpf.h"
#include "trace/cuda_spec.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, CUDA_SPEC_MAX);
	__type(key, __u32);
	__type(value, struct cuda_spec);
} cuda_specs SEC(".maps");

struct cuda_frame {
	__u64 ts;
	__u64 bytes;
	__u64 stream;
	__u64 func;
	__u16 spec;
	__u8  source;
	__u8  inner;               /* nested in a call of the same library: not emitted */
	__u8  mk;
	__u8  pad[3];
};

struct cuda_tstate {
	__u32 depth;               /* calls in flight; > CUDA_DEPTH: overflowed, not kept */
	__u32 pad;
	struct cuda_frame f[CUDA_DEPTH];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct cuda_tstate);
} cuda_calls SEC(".maps");

/* Argument i of a SysV x86-64 call, at function entry (sp -> return address). */
static __always_inline __u64 cuda_arg(struct pt_regs *ctx, __u32 i)
{
	__u64 v = 0;

	switch (i) {
	case 0: return PT_REGS_PARM1(ctx);
	case 1: return PT_REGS_PARM2(ctx);
	case 2: return PT_REGS_PARM3(ctx);
	case 3: return PT_REGS_PARM4(ctx);
	case 4: return PT_REGS_PARM5(ctx);
	case 5: return ctx->r9;     /* no PT_REGS_PARM6 in libbpf 1.1 */
	}
	if (i > 12)
		return 0;
	bpf_probe_read_user(&v, sizeof(v), (void *)(PT_REGS_SP(ctx) + 8 * (i - 5)));
	return v;
}

/* Value of an operand; *ok = false when absent or unreadable. */
static __always_inline __u64 cuda_operand(struct pt_regs *ctx, const struct cuda_operand *o,
					  bool *ok)
{
	__u64 v;

	*ok = false;
	if (o->arg == CUDA_ARG_NONE)
		return 0;
	v = cuda_arg(ctx, o->arg);
	if (o->off >= 0) {
		__u64 p = v + (__u64)o->off;

		v = 0;
		if (!p || bpf_probe_read_user(&v, sizeof(v), (void *)p))
			return 0;
	}
	*ok = true;
	return o->size == 4 ? (__u32)v : v;
}

/* cudaMemcpyKind (0 HtoH, 1 HtoD, 2 DtoH, 3 DtoD, 4 default) -> gpuio kind. */
static __always_inline __u8 mk_from_rt(__u64 k)
{
	switch (k) {
	case 0: return GPUIO_MEMCPY_HTOH;
	case 1: return GPUIO_MEMCPY_HTOD;
	case 2: return GPUIO_MEMCPY_DTOH;
	case 3: return GPUIO_MEMCPY_DTOD;
	}
	return GPUIO_MEMCPY_UNKNOWN;
}

/* CUmemorytype pair (1 host, 2 device, 3 array, 4 unified) -> gpuio kind. */
static __always_inline __u8 mk_from_drv(__u64 src, __u64 dst)
{
	if (src == 1 && dst == 2) return GPUIO_MEMCPY_HTOD;
	if (src == 2 && dst == 1) return GPUIO_MEMCPY_DTOH;
	if (src == 2 && dst == 2) return GPUIO_MEMCPY_DTOD;
	if (src == 1 && dst == 1) return GPUIO_MEMCPY_HTOH;
	if (src == 1 && dst == 3) return GPUIO_MEMCPY_HTOA;
	if (src == 3 && dst == 1) return GPUIO_MEMCPY_ATOH;
	if (src == 3 && dst == 3) return GPUIO_MEMCPY_ATOA;
	if (src == 3 && dst == 2) return GPUIO_MEMCPY_ATOD;
	if (src == 2 && dst == 3) return GPUIO_MEMCPY_DTOA;
	return GPUIO_MEMCPY_UNKNOWN;
}

static __always_inline void cuda_read_args(struct pt_regs *ctx, const struct cuda_spec *s,
					   struct cuda_frame *f)
{
	__u64 bytes = 0, v;
	bool ok, any = false;

	for (int i = 0; i < 3; i++) {
		v = cuda_operand(ctx, &s->bytes[i], &ok);
		if (!ok)
			continue;
		bytes = any ? bytes * v : v;
		any = true;
	}
	f->bytes = any ? bytes * (s->bytes_mult ? s->bytes_mult : 1) : 0;
	f->stream = cuda_operand(ctx, &s->stream, &ok);
	f->func = cuda_operand(ctx, &s->func, &ok);
	switch (s->mk_how) {
	case CUDA_MK_RT_ENUM:
		v = cuda_operand(ctx, &s->mk, &ok);
		f->mk = ok ? mk_from_rt(v) : GPUIO_MEMCPY_UNKNOWN;
		break;
	case CUDA_MK_DRV_TYPES: {
		__u64 src = cuda_operand(ctx, &s->mk, &ok);
		__u64 dst = cuda_operand(ctx, &s->mk2, &ok);

		f->mk = mk_from_drv(src, dst);
		break;
	}
	default:
		f->mk = s->mk_fixed;
	}
}

static __always_inline int cuda_entry(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 idx = (__u32)bpf_get_attach_cookie(ctx);
	const struct cuda_spec *s;
	struct cuda_tstate *t;
	struct cuda_frame *f;
	__u32 d;

	if (!tgid_traced(id >> 32))
		return 0;
	s = bpf_map_lookup_elem(&cuda_specs, &idx);
	if (!s)
		return 0;
	t = bpf_task_storage_get(&cuda_calls, bpf_get_current_task_btf(), NULL,
				 BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!t) {
		stat_inc(GPUIO_STAT_MAP_FULL_TASK);
		return 0;
	}
	d = t->depth;
	/* a return never seen (longjmp, exception unwinding) leaves stale
	 * frames: the return side unwinds to its own frame */
	t->depth = d + 1;
	if (d >= CUDA_DEPTH) {
		stat_inc(GPUIO_STAT_CUDA_DEPTH);
		return 0;
	}
	f = &t->f[d];
	f->ts = bpf_ktime_get_ns();
	f->spec = (__u16)idx;
	f->source = s->source;
	f->inner = d > 0 && t->f[(d - 1) & (CUDA_DEPTH - 1)].source == s->source;
	if (f->inner)
		return 0;
	cuda_read_args(ctx, s, f);
	return 0;
}

static __always_inline int cuda_return(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), now = bpf_ktime_get_ns();
	__u32 idx = (__u32)bpf_get_attach_cookie(ctx);
	const struct cuda_spec *s;
	struct gpuio_cuda_api *e;
	struct cuda_tstate *t;
	struct cuda_frame *f = NULL;
	__u32 d, top = 0;

	if (!tgid_traced(id >> 32))
		return 0;
	t = bpf_task_storage_get(&cuda_calls, bpf_get_current_task_btf(), NULL, 0);
	if (!t || !t->depth)
		return 0;
	d = t->depth;
	if (d > CUDA_DEPTH) {
		t->depth = d - 1;      /* an overflowed call (counted at entry) */
		return 0;
	}
	/* normally the top frame; deeper when a return was missed */
	for (int i = CUDA_DEPTH - 1; i >= 0; i--) {
		if ((__u32)i < d && t->f[i].spec == idx) {
			f = &t->f[i];
			top = i;
			break;
		}
	}
	if (!f)
		return 0;          /* entry not seen (it ran before the trace) */
	t->depth = top;
	if (f->inner)
		return 0;
	s = bpf_map_lookup_elem(&cuda_specs, &idx);
	if (!s)
		return 0;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		stat_inc(GPUIO_STAT_RB_DROP_CUDA);
		return 0;
	}
	fill_hdr(&e->hdr, GPUIO_REC_CUDA_API, sizeof(*e), id >> 32, (__u32)id, f->ts);
	e->end_ns = now;
	/* cudaError_t / CUresult: an int enum, the upper half of rax is junk */
	e->ret = (__s32)PT_REGS_RC(ctx);
	e->bytes = f->bytes;
	e->stream = f->stream;
	e->func = f->func;
	e->correlation = 0;
	e->cbid = 0;
	e->source = s->source;
	e->kind = s->kind;
	e->memcpy_kind = f->mk;
	__builtin_memset(e->pad, 0, sizeof(e->pad));
	__builtin_memcpy(e->name, s->name, sizeof(e->name));
	e->name[sizeof(e->name) - 1] = 0;
	bpf_ringbuf_submit(e, rb_wakeup_flag());
	return 0;
}

/*
 * Two attach flavours of the same code. uprobe.multi (kernel >= 6.6): one
 * link per library and direction, detached with one grace period; the
 * loader loads these with expected_attach_type BPF_TRACE_UPROBE_MULTI
 * (libbpf 1.1 has no "uprobe.multi" section). Classic perf-event uprobes
 * (6.1): one link per function and direction.
 */
SEC("?uprobe")
int cuda_multi_entry(struct pt_regs *ctx)
{
	return cuda_entry(ctx);
}

SEC("?uprobe")
int cuda_multi_return(struct pt_regs *ctx)
{
	return cuda_return(ctx);
}

SEC("?uprobe")
int cuda_api_entry(struct pt_regs *ctx)
{
	return cuda_entry(ctx);
}

SEC("?uretprobe")
int cuda_api_return(struct pt_regs *ctx)
{
	return cuda_return(ctx);
}

#endif
