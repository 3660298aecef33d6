/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * pystack.bpf.h — the Python stack of the current thread, read from its
 * interpreter's own frames (no restart, no debug symbols, no frame
 * pointers): for a traced call, a page fault, a sleep or an on-CPU sample.
 *
 * A thread's frames come from its own PyThreadState — found in the
 * interpreter's list by thread_id, which is the thread's pthread_t, its fs
 * base on x86-64 glibc — not from "the current thread state": a thread
 * blocked in I/O has released the GIL and another one holds it. The state
 * found is kept per thread and checked again (one read) before each use.
 * Each frame gives its code object (checked to be one: its type is
 * PyCode_Type) and the instruction it is at; userspace turns those into
 * file:line:function once per code object (user/python/py_lines.c).
 *
 * A stack is named by a hash of its frames and sent once per process
 * (py_stacks_seen); each code object once per process (py_codes_seen),
 * with its file name, name and line table copied while it is alive — a
 * DataLoader worker may be gone by the time the collector reads. Every use
 * is a gpuio_stack_at record. Reads that fail (paged out, torn by a
 * concurrent call) cut the stack (GPUIO_PYS_BAD) and are counted: a stack
 * is never made of frames that were not read.
 */
#ifndef GPUIO_PYSTACK_BPF_H
#define GPUIO_PYSTACK_BPF_H
#include "trace/common.bpf.h"

/* Set before load: stacks on traced calls and faults (--stacks), on
 * sleeps (the default); the collector looks for interpreters (any stacks) */
const volatile bool py_stacks = false;
const volatile bool py_sleeps = false;
const volatile bool py_wanted = false;
/* native frames before the Python ones (frame pointers; --no-native-frames) */
const volatile bool py_native = false;

/* The interpreters of traced processes (user/python/ fills, fork copies) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, struct gpuio_py_layout);
} py_procs SEC(".maps");

/* A thread's own PyThreadState, as last found */
struct py_thread {
	__u64 tstate;
	__u64 fsbase;
};
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 32768);
	__type(key, __u32);                     /* tid */
	__type(value, struct py_thread);
} py_threads SEC(".maps");

struct py_seen_key {
	__u32 tgid;
	__u32 pad;
	__u64 id;                               /* a stack id, or a code object's address */
};
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct py_seen_key);
	__type(value, __u8);
} py_stacks_seen SEC(".maps");
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct py_seen_key);
	__type(value, __u8);
} py_codes_seen SEC(".maps");

#define PY_FRAME_WIN 128                /* room for a frame's fields, read at once */
#define PY_FRAME_NEW 72                 /* the fields read of a 3.11+ frame */
#ifndef PY_DSTACK_WIN
#define PY_DSTACK_WIN 1024              /* a piece of a 3.11+ thread's data stack, read at once */
#endif
#define PY_STR_WIN   64                 /* a string object's header: every field read is in it */
#define PY_CODE_WIN  256                /* a code object's head: its type, names, first line */
#define PY_CODES_PER_WALK 4             /* code objects sent per walk at most (the rest: later) */
/* indexes are masked for the verifier: the masks must be these sizes */
_Static_assert((GPUIO_PY_FRAMES_MAX & (GPUIO_PY_FRAMES_MAX - 1)) == 0, "a power of two");
_Static_assert((PY_CODES_PER_WALK & (PY_CODES_PER_WALK - 1)) == 0, "a power of two");

/* Per-CPU room: the stack being built, a frame's bytes, a code record;
 * each record's variable part right after its header, as sent */
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wgnu-variable-sized-type-not-at-end"
struct py_scratch {
	struct gpuio_py_stack st;
	struct gpuio_py_frame frames[GPUIO_PY_FRAMES_MAX];
	__u8 win[PY_FRAME_WIN];
	__u8 dwin[PY_DSTACK_WIN];               /* the data stack's bytes [dlo, dhi) */
	__u64 dlo, dhi;                         /* dlo 0: none read in this walk */
	__u8 cwin[PY_CODE_WIN];
	__u8 str[PY_STR_WIN];
	__u64 new_codes[PY_CODES_PER_WALK];     /* addresses */
	__u64 new_ids[PY_CODES_PER_WALK];       /* and their identities (py_code_id) */
	__u32 nnative;                          /* frames[0..nnative): native ones */
	__u8 why;                               /* py_stack_id's reason for no stack */
	/* the walks' counters: here, not in a bpf_loop's context on the stack,
	 * so that the verifier sees an unknown number, not 0, 1, 2, ... as
	 * many states of the loop (py_stack_id: 40,000 instructions checked
	 * for each program that calls it, then 10,000) */
	__u32 wn;                               /* frames[] filled so far */
	__u32 nnew;                             /* new_codes[] filled */
	struct gpuio_py_code code;
	__u8 code_data[GPUIO_PY_FILE_MAX + GPUIO_PY_NAME_MAX + GPUIO_PY_LINES_MAX + 8];
};
#pragma clang diagnostic pop
/* slot 0 for the event hooks, slot 1 for the sampler: a sample (an NMI)
 * may land inside a hook's walk on the same CPU */
#define PY_SLOT_EVENT  0
#define PY_SLOT_SAMPLE 1
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct py_scratch);
} py_scratch SEC(".maps");

static __always_inline __u64 py_read_u64(__u64 addr)
{
	__u64 v = 0;

	if (bpf_probe_read_user(&v, sizeof(v), (void *)addr))
		return 0;
	return v;
}

/* A field of the frame window (offsets are the layout's, < PY_FRAME_WIN) */
static __always_inline __u64 win_u64(const __u8 *win, __u16 off)
{
	return *(const __u64 *)(win + (off & (PY_FRAME_WIN - 8)));
}

static __always_inline __s32 win_s32(const __u8 *win, __u16 off)
{
	return *(const __s32 *)(win + (off & (PY_FRAME_WIN - 4)));
}

static __always_inline __u8 win_u8(const __u8 *win, __u16 off)
{
	return win[off & (PY_FRAME_WIN - 1)];
}

static __always_inline __u64 task_fsbase(struct task_struct *t)
{
#if defined(__TARGET_ARCH_x86)
	return BPF_CORE_READ(t, thread.fsbase);
#else
	return 0;
#endif
}

/* The thread's own PyThreadState: the cached one if it is still its, else a scan. */
#define PY_THREADS_SCAN 256
struct py_scan_ctx {
	const struct gpuio_py_layout *L;
	__u64 ts, fsbase, found;
};

static long py_scan_step(__u32 i, void *arg)
{
	struct py_scan_ctx *c = arg;

	if (!c->ts)
		return 1;
	if (py_read_u64(c->ts + c->L->ts_thread_id) == c->fsbase) {
		c->found = c->ts;
		return 1;
	}
	c->ts = py_read_u64(c->ts + c->L->ts_next);
	return 0;
}

static __always_inline __u64 py_tstate(const struct gpuio_py_layout *L, __u32 tid, __u64 fsbase)
{
	struct py_thread *c = bpf_map_lookup_elem(&py_threads, &tid), n;
	struct py_scan_ctx sc = { .L = L, .fsbase = fsbase };
	__u64 interp;

	if (!fsbase)
		return 0;
	if (c && c->fsbase == fsbase && c->tstate &&
	    py_read_u64(c->tstate + L->ts_thread_id) == fsbase)
		return c->tstate;
	interp = py_read_u64(L->runtime + L->interp_head);
	if (!interp)
		return 0;
	sc.ts = py_read_u64(interp + L->threads_head);
	bpf_loop(PY_THREADS_SCAN, py_scan_step, &sc, 0);
	if (sc.found) {
		n.tstate = sc.found;
		n.fsbase = fsbase;
		bpf_map_update_elem(&py_threads, &tid, &n, BPF_ANY);
	}
	return sc.found;
}

static __always_inline __u64 py_mix(__u64 h, __u64 v)
{
	h ^= v;
	h *= 0x100000001b3ull;
	return h ^ (h >> 29);
}

/* Is this code object (its identity id, at code) new to the process?
 * Remembered for later sending. */
static __always_inline void py_note_code(struct py_scratch *s, __u32 tgid, __u64 code, __u64 id,
					 bool *more)
{
	struct py_seen_key k = { .tgid = tgid, .id = id };
	__u32 n = s->nnew;

	if (bpf_map_lookup_elem(&py_codes_seen, &k))
		return;
	for (int i = 0; i < PY_CODES_PER_WALK; i++)       /* twice in one stack: once */
		if (i < n && s->new_ids[i] == id)
			return;
	if (n >= PY_CODES_PER_WALK) {
		*more = true;                           /* sent by a later walk */
		return;
	}
	s->new_codes[n & (PY_CODES_PER_WALK - 1)] = code;
	s->new_ids[n & (PY_CODES_PER_WALK - 1)] = id;
	s->nnew = n + 1;
}

_Static_assert((PY_DSTACK_WIN & (PY_DSTACK_WIN - 1)) == 0 && PY_DSTACK_WIN >= 256, "a power of two");

/*
 * The fields of the frame at f into s->win. 3.11+ frames of plain calls
 * lie one after the other in the thread's data stack, each caller below
 * its callee: one read brings the piece of it that ends with f, never
 * below f's page (the chunk's own start is mapped), and the frames found
 * in it are copied out with plain loads instead of a helper call each
 * (generators' frames, elsewhere, start a piece of their own).
 */
static __always_inline bool py_frame_fields(const struct gpuio_py_layout *L, struct py_scratch *s,
					    __u64 f)
{
	__u64 lo, fo, size;

	if (L->minor <= 10)
		return !bpf_probe_read_user(s->win, 104, (void *)f);
	if (!s->dlo || f < s->dlo || f + PY_FRAME_NEW > s->dhi) {
		lo = f + PY_FRAME_NEW - PY_DSTACK_WIN;
		if (lo < (f & ~0xfffull))
			lo = f & ~0xfffull;
		size = f + PY_FRAME_NEW - lo;
		s->dlo = 0;
		if (size > PY_DSTACK_WIN || size < PY_FRAME_NEW ||
		    bpf_probe_read_user(s->dwin, size, (void *)lo))
			return !bpf_probe_read_user(s->win, PY_FRAME_NEW, (void *)f);
		s->dlo = lo;
		s->dhi = lo + size;
	}
	fo = f - s->dlo;
	for (int k = 0; k < PY_FRAME_NEW / 8; k++)
		*(__u64 *)(s->win + k * 8) = *(const __u64 *)(s->dwin + ((fo + k * 8) & (PY_DSTACK_WIN - 8)));
	return true;
}

/* The walk's state, one frame a step (bpf_loop: the verifier sees one step) */
struct py_walk_ctx {
	const struct gpuio_py_layout *L;
	struct py_scratch *s;
	__u64 frame, h;
};

/*
 * One frame: kept (its code and instruction), skipped (owned by the C
 * stack: a 3.12+ shim; pushed but not started), or the end of the walk (no
 * frame, too deep, unreadable). Whether its code is one is checked later,
 * for stacks not seen before (py_check_step): a seen stack's frames were.
 */
static long py_frame_step(__u32 i, void *arg)
{
	struct py_walk_ctx *c = arg;
	const struct gpuio_py_layout *L = c->L;
	struct py_scratch *s = c->s;
	__u64 code, instr;
	__s32 lasti;
	__u32 n = s->wn;

	if (!c->frame)
		return 1;
	if (n >= GPUIO_PY_FRAMES_MAX) {
		s->st.flags |= GPUIO_PYS_CUT;
		return 1;
	}
	/* its fields, no further: a frame may end its stack chunk */
	if (!py_frame_fields(L, s, c->frame)) {
		s->st.flags |= GPUIO_PYS_BAD;
		return 1;
	}
	code = win_u64(s->win, L->f_code);
	c->frame = win_u64(s->win, L->f_prev);
	if (L->f_owner != GPUIO_PY_NONE && L->owner_cstack != 0xff &&
	    win_u8(s->win, L->f_owner) == L->owner_cstack)
		return 0;
	if (!code) {
		s->st.flags |= GPUIO_PYS_BAD;
		return 1;
	}
	if (L->minor <= 10) {
		lasti = win_s32(s->win, L->f_instr);
	} else {
		instr = win_u64(s->win, L->f_instr) - (code + L->co_code);
		lasti = (__s64)instr < 0 ? -1 : (__s32)(instr >> 1);
	}
	if (lasti < 0)          /* pushed, not started: not a place in the program yet */
		return 0;
	s->frames[n & (GPUIO_PY_FRAMES_MAX - 1)].code = code;
	s->frames[n & (GPUIO_PY_FRAMES_MAX - 1)].lasti = lasti;
	s->frames[n & (GPUIO_PY_FRAMES_MAX - 1)].pad = 0;
	c->h = py_mix(py_mix(c->h, code), (__u64)(__u32)lasti);
	s->wn = n + 1;
	return 0;
}

#define PY_HASH_SEED 0xcbf29ce484222325ull

/*
 * The native frames (py_native): the user stack by frame pointers, from
 * the registers saved at kernel entry, up to the first address inside the
 * interpreter (gpuio_abi.h), into frames[0..k). Walked here, as the
 * kernel's perf walk does (the saved ip, then each frame's return
 * address), but one step a bpf_loop iteration that stops at the
 * interpreter: most sleeps are 1-3 frames from it, and bpf_get_task_stack
 * walked all GPUIO_PY_NATIVE_MAX each time (~0.9 us of a 2.7 us switch).
 * A frame pointer is followed only up the thread's stack (above the saved
 * sp, each one above the last, within PY_NATIVE_SPAN of sp): code built
 * without frame pointers leaves anything in that register, and a chain
 * read out of a heap runs to 8 junk frames that the collector cuts anyway
 * (+0.7 us a stack of a 4 KiB pread when it was walked).
 */
#define PY_NATIVE_SPAN (8ull << 20)     /* glibc's default thread stack */
struct py_native_ctx {
	const struct gpuio_py_layout *L;
	struct py_scratch *s;
	__u64 ip, fp;           /* the next address; the frame it returns from */
	__u64 sp;               /* the user stack pointer at kernel entry */
	__u64 h;                /* (the count: s->nnative, off the stack that 6.1 limits) */
};

/* fp can be a frame of this stack above lo (the last frame, or sp) */
static __always_inline bool py_native_fp_ok(const struct py_native_ctx *c, __u64 fp, __u64 lo)
{
	return fp > lo && fp - c->sp < PY_NATIVE_SPAN && !(fp & 7);
}

_Static_assert((GPUIO_PY_NATIVE_MAX & (GPUIO_PY_NATIVE_MAX - 1)) == 0, "a power of two");
_Static_assert(GPUIO_PY_NATIVE_MAX <= GPUIO_PY_FRAMES_MAX, "room in frames[]");

static long py_native_step(__u32 i, void *arg)
{
	struct py_native_ctx *c = arg;
	struct py_scratch *s = c->s;
	__u32 j = i & (GPUIO_PY_NATIVE_MAX - 1);
	__u64 ip = c->ip, fr[2];        /* a frame: the caller's fp, the return address */

	if (i >= GPUIO_PY_NATIVE_MAX || !ip || (ip >= c->L->text_lo && ip < c->L->text_hi))
		return 1;
	s->frames[j].code = ip;
	s->frames[j].lasti = GPUIO_PY_LASTI_NATIVE;
	s->frames[j].pad = 0;
	c->h = py_mix(py_mix(c->h, ip), (__u32)GPUIO_PY_LASTI_NATIVE);
	s->nnative = i + 1;
	if (!c->fp || bpf_probe_read_user(fr, sizeof(fr), (void *)c->fp))
		return 1;
	c->ip = fr[1];
	c->fp = py_native_fp_ok(c, fr[0], c->fp) ? fr[0] : 0;
	return 0;
}

static __always_inline int py_native_frames(const struct gpuio_py_layout *L, struct py_scratch *s,
					    struct task_struct *task, __u64 *h)
{
	struct py_native_ctx c = { .L = L, .s = s, .h = *h };

	s->nnative = 0;
	if (!py_native)
		return 0;
#if defined(__TARGET_ARCH_x86)
	{
		struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);

		c.ip = regs->ip;
		c.sp = regs->sp;
		c.fp = py_native_fp_ok(&c, regs->bp, c.sp - 1) ? regs->bp : 0;
	}
#endif
	bpf_loop(GPUIO_PY_NATIVE_MAX, py_native_step, &c, 0);
	*h = c.h;
	return s->nnative <= GPUIO_PY_NATIVE_MAX ? s->nnative : 0;
}

/* Walk the frames into s->st (after the native ones): returns the number
 * of Python frames (0: none). */
static __always_inline int py_walk(const struct gpuio_py_layout *L, struct py_scratch *s,
				   __u64 tstate, struct task_struct *task)
{
	struct py_walk_ctx c = { .L = L, .s = s, .h = PY_HASH_SEED };
	int k = py_native_frames(L, s, task, &c.h);

	c.frame = py_read_u64(tstate + L->ts_frame);
	if (L->cframe_frame != GPUIO_PY_NONE && c.frame)
		c.frame = py_read_u64(c.frame + L->cframe_frame);
	s->st.flags = 0;
	s->wn = k;
	s->nnative = k;
	s->dlo = 0;
	bpf_loop(GPUIO_PY_FRAMES_MAX + 8, py_frame_step, &c, 0);
	s->st.nframes = s->wn;
	s->st.id = c.h ? c.h : 1;
	if (s->st.flags)
		stat_inc(GPUIO_STAT_PY_CUT);
	return (int)s->wn - k;
}

/* A new stack's check, one frame a step: its code is a code object (else
 * the stack ends before it, renamed), and the process's new code objects */
struct py_check_ctx {
	const struct gpuio_py_layout *L;
	struct py_scratch *s;
	__u64 h;
	__u32 tgid;
	int n;
	bool more;
};

static __always_inline __u64 cwin_u64(const __u8 *w, __u16 off)
{
	return *(const __u64 *)(w + (off & (PY_CODE_WIN - 8)));
}

static long py_check_step(__u32 i, void *arg)
{
	struct py_check_ctx *c = arg;
	const struct gpuio_py_layout *L = c->L;
	struct py_scratch *s = c->s;
	struct gpuio_py_frame *f = &s->frames[i & (GPUIO_PY_FRAMES_MAX - 1)];
	__u64 code, id;

	if ((int)i >= c->n)
		return 1;
	code = f->code;
	if (f->lasti == GPUIO_PY_LASTI_NATIVE) {        /* an address: named by the collector */
		c->h = py_mix(py_mix(c->h, code), (__u32)GPUIO_PY_LASTI_NATIVE);
		return 0;
	}
	if (bpf_probe_read_user(s->cwin, L->code_win & (PY_CODE_WIN - 8), (void *)code) ||
	    cwin_u64(s->cwin, 8) != L->code_type) {                /* ob_type */
		if (!(s->st.flags & GPUIO_PYS_BAD))
			stat_inc(GPUIO_STAT_PY_CUT);
		s->st.flags |= GPUIO_PYS_BAD;
		c->n = i;
		return 1;
	}
	c->h = py_mix(py_mix(c->h, code), (__u64)(__u32)f->lasti);
	/* its identity: a freed code object's address is reused by another */
	id = py_mix(py_mix(py_mix(code, cwin_u64(s->cwin, L->co_name)),
			   cwin_u64(s->cwin, L->co_filename)),
		    (__u32)*(const __s32 *)(s->cwin + (L->co_firstlineno & (PY_CODE_WIN - 4))));
	f->code = id;
	py_note_code(s, c->tgid, code, id, &c->more);
	return 0;
}

/*
 * A str object's bytes into dst (at most max): ASCII and Latin-1 as they
 * are, other strings as their cached UTF-8 when there is one, else their
 * 2- or 4-byte units (kind says which). Returns the bytes copied.
 */
static __always_inline __u32 py_str(const struct gpuio_py_layout *L, struct py_scratch *s, __u64 obj,
				    __u8 *dst, __u32 max, __u8 *kind, bool *cut)
{
	__u64 len, data, ulen;
	__u8 st;
	__u32 k;

	*kind = GPUIO_PYSTR_UTF8;
	if (!obj || bpf_probe_read_user(s->str, PY_STR_WIN, (void *)obj))
		return 0;
	st = s->str[L->str_state & (PY_STR_WIN - 1)];
	len = *(__u64 *)(s->str + (L->str_len & (PY_STR_WIN - 8)));
	if (!(st & 0x20))               /* not compact: a legacy string, left out */
		return 0;
	k = (st >> 2) & 7;
	if (st & 0x40) {                /* ASCII */
		data = obj + L->str_ascii_size;
	} else if ((ulen = *(__u64 *)(s->str + (L->str_utf8_len & (PY_STR_WIN - 8)))) &&
		   (data = *(__u64 *)(s->str + (L->str_utf8 & (PY_STR_WIN - 8))))) {
		len = ulen;             /* its UTF-8, cached by the interpreter */
	} else {
		data = obj + L->str_compact_size;
		*kind = k == 1 ? GPUIO_PYSTR_LATIN1 : k == 2 ? GPUIO_PYSTR_UCS2 : GPUIO_PYSTR_UCS4;
		len *= k ? k : 1;
	}
	if (len > max) {
		*cut = true;
		len = max;
	}
	if (!len || bpf_probe_read_user(dst, len & 0xfff, (void *)data))
		return 0;
	return len;
}

/* Send one code object of the process: its file, name, first line and line table. */
static __always_inline void py_send_code(const struct gpuio_py_layout *L, struct py_scratch *s,
					 __u32 tgid, __u32 tid, __u64 code, __u64 id)
{
	struct gpuio_py_code *c = &s->code;
	struct py_seen_key k = { .tgid = tgid, .id = id };
	__u64 fname, name, lt, ltlen;
	__u32 at = 0, n, size;
	bool cut = false;
	__u8 one = 1;

	fname = py_read_u64(code + L->co_filename);
	name = py_read_u64(code + L->co_name);
	lt = py_read_u64(code + L->co_linetable);
	c->firstlineno = 0;
	bpf_probe_read_user(&c->firstlineno, sizeof(c->firstlineno), (void *)(code + L->co_firstlineno));
	c->code = id;
	c->minor = L->minor;
	c->flags = 0;
	n = py_str(L, s, fname, s->code_data, GPUIO_PY_FILE_MAX, &c->file_kind, &cut);
	if (cut)
		c->flags |= GPUIO_PYC_FILE_CUT;
	c->file_len = n;
	at = n & (GPUIO_PY_FILE_MAX * 2 - 1);
	cut = false;
	if (at > GPUIO_PY_FILE_MAX)
		return;
	n = py_str(L, s, name, s->code_data + at, GPUIO_PY_NAME_MAX, &c->name_kind, &cut);
	if (cut)
		c->flags |= GPUIO_PYC_NAME_CUT;
	c->name_len = n;
	at += n & (GPUIO_PY_NAME_MAX * 2 - 1);
	ltlen = lt ? py_read_u64(lt + 16) : 0;             /* PyVarObject.ob_size */
	if (ltlen > GPUIO_PY_LINES_MAX) {
		ltlen = GPUIO_PY_LINES_MAX;
		c->flags |= GPUIO_PYC_LINES_CUT;
	}
	if (at > GPUIO_PY_FILE_MAX + GPUIO_PY_NAME_MAX)
		return;
	if (ltlen && bpf_probe_read_user(s->code_data + at, ltlen & (GPUIO_PY_LINES_MAX * 2 - 1),
					 (void *)(lt + 32)))          /* PyBytesObject.ob_sval */
		ltlen = 0;
	c->lines_len = ltlen;
	at += ltlen;
	size = (sizeof(*c) + at + 7) & ~7u;
	if (size > sizeof(*c) + sizeof(s->code_data))
		return;
	fill_hdr(&c->hdr, GPUIO_REC_PY_CODE, size, tgid, tid, bpf_ktime_get_ns());
	if (bpf_ringbuf_output(&events, c, size, 0)) {
		stat_inc(GPUIO_STAT_RB_DROP_STACK);
		return;
	}
	bpf_map_update_elem(&py_codes_seen, &k, &one, BPF_ANY);
}

struct py_codes_ctx {
	const struct gpuio_py_layout *L;
	struct py_scratch *s;
	__u32 tgid, tid;
	int n;
};

static long py_code_step(__u32 i, void *arg)
{
	struct py_codes_ctx *c = arg;

	if ((int)i >= c->n)
		return 1;
	py_send_code(c->L, c->s, c->tgid, c->tid, c->s->new_codes[i & (PY_CODES_PER_WALK - 1)],
		     c->s->new_ids[i & (PY_CODES_PER_WALK - 1)]);
	return 0;
}

/*
 * The current thread's Python stack: sent when new to the process, its
 * code objects with it; returns its id, 0 with the slot's why set when
 * there is none. A global function: the verifier checks it once, apart
 * from its callers' states (static, it was checked within each caller's:
 * 82,000 instructions and 145 ms for the switch hook alone).
 */
__noinline __u64 py_stack_id(__u32 tgid, __u32 tid, __u32 slot)
{
	struct gpuio_py_layout *L = bpf_map_lookup_elem(&py_procs, &tgid);
	struct task_struct *task = bpf_get_current_task_btf();
	struct py_seen_key k = { .tgid = tgid };
	struct py_check_ctx cc = {};
	__u32 size;
	struct py_scratch *s;
	int n;
	__u64 tstate;
	__u8 one = 1;

	s = bpf_map_lookup_elem(&py_scratch, &slot);
	if (!s)
		return 0;
	s->why = GPUIO_STACK_NONE_NOPY;
	if (!L)
		return 0;
	tstate = py_tstate(L, tid, task_fsbase(task));
	if (!tstate) {
		s->why = GPUIO_STACK_NONE_TSTATE;
		stat_inc(GPUIO_STAT_PY_NO_TSTATE);
		return 0;
	}
	if (!py_walk(L, s, tstate, task)) {
		s->why = GPUIO_STACK_NONE_EMPTY;
		return 0;
	}
	n = s->st.nframes;
	k.id = s->st.id;
	if (bpf_map_lookup_elem(&py_stacks_seen, &k))
		return k.id;            /* seen: its frames were checked, its codes sent */
	cc.L = L, cc.s = s, cc.h = PY_HASH_SEED, cc.tgid = tgid, cc.n = n;
	s->nnew = 0;
	bpf_loop(GPUIO_PY_FRAMES_MAX, py_check_step, &cc, 0);
	if ((n = cc.n) <= (int)s->nnative) {     /* no Python frame stood its check */
		s->why = GPUIO_STACK_NONE_EMPTY;
		return 0;
	}
	s->st.nframes = n;
	k.id = s->st.id = cc.h ? cc.h : 1;
	if (s->nnew) {
		struct py_codes_ctx sc = { .L = L, .s = s, .tgid = tgid, .tid = tid, .n = s->nnew };

		bpf_loop(PY_CODES_PER_WALK, py_code_step, &sc, 0);
	}
	size = sizeof(s->st) + (__u32)n * sizeof(s->frames[0]);
	fill_hdr(&s->st.hdr, GPUIO_REC_PY_STACK, size, tgid, tid, bpf_ktime_get_ns());
	s->st.pad = 0;
	if (size > sizeof(s->st) + sizeof(s->frames) ||
	    bpf_ringbuf_output(&events, &s->st, size, 0)) {
		stat_inc(GPUIO_STAT_RB_DROP_STACK);
		return k.id;            /* its uses still name it; the collector counts it unknown */
	}
	if (!cc.more)           /* else sent again, with the codes left, next time */
		bpf_map_update_elem(&py_stacks_seen, &k, &one, BPF_ANY);
	return k.id;
}

/* A stack use: the current thread's stack at a call (seq), a sleep or a sample. */
static __always_inline void py_stack_at_slot(__u32 tgid, __u32 tid, __u8 what, __u32 seq, __u64 ts,
					     __u32 slot)
{
	struct gpuio_stack_at *e;
	struct py_scratch *s;
	__u8 why = GPUIO_STACK_NONE_NOPY;
	__u64 id;

	if (!bpf_map_lookup_elem(&py_procs, &tgid))
		return;                 /* not a Python process: nothing to say per event */
	if (rb_shed(GPUIO_STAT_SHED_STACK))
		return;                 /* nor its walk: the ring is for file calls now */
	id = py_stack_id(tgid, tid, slot);
	if (!id && (s = bpf_map_lookup_elem(&py_scratch, &slot)))
		why = s->why;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		stat_inc(GPUIO_STAT_RB_DROP_STACK);
		return;
	}
	fill_hdr(&e->hdr, GPUIO_REC_STACK_AT, sizeof(*e), tgid, tid, ts);
	e->id = id;
	e->seq = seq;
	e->what = what;
	e->why = id ? 0 : why;
	e->pad = 0;
	bpf_ringbuf_submit(e, rb_wakeup_flag());
}
#define py_stack_at(tgid, tid, what, seq, ts) py_stack_at_slot(tgid, tid, what, seq, ts, PY_SLOT_EVENT)

/*
 * On-CPU samples (--sample-hz): gpuio opens a CPU-clock perf event per CPU
 * at that rate (user/trace/sampler.c); each tick on a traced Python thread
 * is a sample with its stack.
 */
SEC("?perf_event")
int py_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id;

	if (!tid || !tgid_traced(tgid))
		return 0;
	py_stack_at_slot(tgid, tid, GPUIO_SA_SAMPLE, 0, bpf_ktime_get_ns(), PY_SLOT_SAMPLE);
	return 0;
}

/* A forked child runs its parent's interpreter, at the same addresses. */
static __always_inline void py_fork(__u32 parent, __u32 child)
{
	struct gpuio_py_layout *L = bpf_map_lookup_elem(&py_procs, &parent);

	if (L)
		bpf_map_update_elem(&py_procs, &child, L, BPF_ANY);
}

/* exec replaces the image; exit ends it: userspace finds the new one */
static __always_inline void py_forget(__u32 tgid)
{
	bpf_map_delete_elem(&py_procs, &tgid);
}

#endif /* GPUIO_PYSTACK_BPF_H */
