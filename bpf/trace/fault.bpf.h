/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * fault.bpf.h — the fault layer: page faults of traced threads on file
 * mappings, as I/O (mmap'ed data read by touching it).
 *
 * exceptions:page_fault_user fires at a fault's entry and nothing fires at
 * its end. The kernel accounts a fault in the task's own counters (maj_flt,
 * min_flt) as it finishes (mm_account_fault, end of handle_mm_fault), so a
 * fault is in flight while they have not moved. It is settled by the
 * thread's next event that can look: its next fault, its switch back in
 * (fault_switch_in, called by the scheduler layer), a page it adds or a bio
 * it submits, its exit, or the end of the trace (the fault_flush iterator).
 *
 * While in flight the fault holds a call number (seq) of the thread, so its
 * block requests name it like a read's (block.bpf.h), and the pages it adds
 * to the page cache are counted (pagecache.bpf.h). Settled, it is:
 *  - counted per (process, file) in fault_counts, minor or major as the
 *    kernel counted it; userspace writes the counts (FAULT_COUNT records);
 *  - emitted as a page_fault VFS record when it made the thread wait: the
 *    kernel counted it major, or it brought pages in, or the thread slept
 *    in it (a page another fault's readahead was still reading).
 * Which file a fault is on: where the kernel has them (6.11+), its own
 * filemap events inside the fault (mm_filemap_fault, with the page;
 * mm_filemap_map_pages, fault-around) name the mapping, so the entry does
 * no lookup and a fault of anonymous memory costs a few stores; elsewhere
 * the entry looks the mapping up (bpf_find_vma). Anonymous memory, and files
 * that are neither regular nor block devices (device mappings, /dev/zero),
 * are not file I/O: ignored.
 */
#ifndef GPUIO_FAULT_BPF_H
#define GPUIO_FAULT_BPF_H
#include "trace/vfs.bpf.h"
#include "lib/core_fixes.bpf.h"

#define FAULT_PAGE_SHIFT 12     /* x86_64, like the syscall table */

/* the layer is loaded (set before load): elsewhere its hooks in the other
 * layers (a switch in, a page added) fold away */
const volatile bool fault_layer = false;

/* gpuio's own executable (set before load): a launched command's child runs
 * gpuio's code between fork and exec, and its faults there are not its own */
const volatile __u64 self_exe_ino = 0;
const volatile __u32 self_exe_dev = 0;
#define X86_PF_WRITE_ 0x2       /* error_code bits: a write access, */
#define X86_PF_INSTR_ 0x10      /* an instruction fetch */

struct fault_key {
	__u32 pid;
	__u32 dev;
	__u64 ino;
};

struct fault_cnt {
	__u64 minor, major;
	__u32 flags;            /* GPUIO_FC_* */
	__u32 pad;
};

/* faults per (process, file), read by userspace (user/trace/fault_counts.c) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 32768);
	__type(key, struct fault_key);
	__type(value, struct fault_cnt);
} fault_counts SEC(".maps");

static __always_inline void fault_count(__u32 pid, __u32 dev, __u64 ino, bool major, bool exec)
{
	struct fault_key k = { .pid = pid, .dev = dev, .ino = ino };
	struct fault_cnt *v, n = { .minor = !major, .major = major,
				   .flags = exec ? GPUIO_FC_EXEC : 0 };

	v = bpf_map_lookup_elem(&fault_counts, &k);
	if (v) {
		if (major)
			__sync_fetch_and_add(&v->major, 1);
		else
			__sync_fetch_and_add(&v->minor, 1);
		if (exec)
			v->flags = GPUIO_FC_EXEC;       /* only ever set: no race to lose */
		return;
	}
	/* another CPU may have added it meanwhile: then count there */
	if (bpf_map_update_elem(&fault_counts, &k, &n, BPF_NOEXIST) == 0)
		return;
	v = bpf_map_lookup_elem(&fault_counts, &k);
	if (!v) {
		stat_inc(GPUIO_STAT_MAP_FULL_FAULT);
		return;
	}
	if (major)
		__sync_fetch_and_add(&v->major, 1);
	else
		__sync_fetch_and_add(&v->minor, 1);
	if (exec)
		v->flags = GPUIO_FC_EXEC;
}

/*
 * Settle f if the task's counters (maj, min now) say it is over, or when
 * force (a new fault, the task exits, the trace ends): counted, and
 * emitted when the thread waited in it; one not over is cut now.
 */
static __always_inline void fault_settle(struct fault_state *f, __u64 maj, __u64 min,
					 __u32 pid, __u32 tid, bool force)
{
	bool major = maj != f->maj, done = major || min != f->min;
	struct gpuio_vfs_event *e;
	__u64 end;

	if (!f->ts || (!done && !force))
		return;
	if (!f->ino)
		goto out;               /* anonymous memory, or a file we do not read */
	if (done)
		fault_count(pid, f->dev, f->ino, major, f->exec);
	/* one that did not make the thread wait is a count only; one that
	 * failed (SIGSEGV, SIGBUS) not even that */
	if (!major && !f->pages && !f->slept)
		goto out;
	end = done ? f->end : bpf_ktime_get_ns();
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		stat_inc(GPUIO_STAT_RB_DROP_FAULT);
		goto out;
	}
	fill_hdr(&e->hdr, GPUIO_REC_VFS, sizeof(*e), pid, tid, f->ts);
	e->dur_ns = end > f->ts ? end - f->ts : 0;
	e->ret = (__s64)f->pages << FAULT_PAGE_SHIFT;
	e->requested = (__u64)f->pages << FAULT_PAGE_SHIFT;
	e->offset = f->off;
	e->offset2 = f->lo;
	e->ino = f->ino;
	e->ino2 = 0;
	e->dev = f->dev;
	e->dev2 = 0;
	e->fd = -1;
	e->fd2 = -1;
	e->seq = f->seq;
	e->cache_miss_pages = f->pages;
	e->flags = (major ? GPUIO_PF_MAJOR : 0) | (f->slept ? GPUIO_PF_SLEPT : 0) |
		   (f->write ? GPUIO_PF_WRITE : 0) | (done ? 0 : GPUIO_PF_CUT);
	e->call = GPUIO_CALL_PAGE_FAULT;
	e->ftype = f->ftype;
	e->ftype2 = 0;
	bpf_ringbuf_submit(e, rb_wakeup_flag());
out:
	f->ts = 0;
}

/* The current task's fault, settled if it is over; true while still in flight. */
static __always_inline bool fault_current_active(struct call_state *cs)
{
	struct task_struct *t = bpf_get_current_task_btf();
	__u64 id;

	if (!cs->fault.ts)
		return false;
	if (t->maj_flt == cs->fault.maj && t->min_flt == cs->fault.min)
		return true;
	id = bpf_get_current_pid_tgid();
	fault_settle(&cs->fault, t->maj_flt, t->min_flt, id >> 32, (__u32)id, false);
	return false;
}

/* A page the current task adds to the page cache (pagecache.bpf.h, no call in flight). */
static __always_inline void fault_page_added(struct call_state *cs, struct folio *folio)
{
	struct fault_state *f = &cs->fault;
	__s64 off;

	if (!fault_current_active(cs) || !f->ino)
		return;
	/* only the mapped file's own pages, as for reads */
	if (BPF_CORE_READ(folio, mapping, host, i_ino) != f->ino)
		return;
	f->pages += folio_pages(folio);
	off = (__s64)BPF_CORE_READ(folio, index) << FAULT_PAGE_SHIFT;
	if (f->lo < 0 || off < f->lo)
		f->lo = off;
	f->end = bpf_ktime_get_ns();
}

/* A bio the current task submits (block.bpf.h, no call in flight): the fault's. */
static __always_inline void fault_bio_owner(struct call_state *cs, __u32 *seq, __u64 *ino,
					    __u32 *dev)
{
	if (!fault_current_active(cs) || !cs->fault.ino)
		return;
	*seq = cs->fault.seq;
	*ino = cs->fault.ino;
	*dev = cs->fault.dev;
}

/*
 * The scheduler layer's switch of a traced next onto a CPU: inside a fault
 * (counters unchanged) the thread runs again there, after a sleep if its
 * voluntary switches moved (a preemption is not a wait for the page);
 * otherwise the fault it had is over. raw_tp passes next as a plain number,
 * which task storage does not take: there faults end at the thread's other
 * events.
 */
static __always_inline void fault_switch_in(struct task_struct *next, const bool btf)
{
	struct call_state *cs;
	__u64 maj, min;

	if (!btf || !fault_layer)
		return;
	cs = bpf_task_storage_get(&calls, next, NULL, 0);
	if (!cs || !cs->fault.ts)
		return;
	maj = next->maj_flt;
	min = next->min_flt;
	if (maj == cs->fault.maj && min == cs->fault.min) {
		cs->fault.end = bpf_ktime_get_ns();
		if (next->nvcsw != cs->fault.nvcsw)
			cs->fault.slept = 1;
		return;
	}
	fault_settle(&cs->fault, maj, min, next->tgid, next->pid, false);
}

/* A fault begins: its file is not known yet (fault_file). */
static __always_inline void fault_open(struct call_state *cs, struct task_struct *t,
				       unsigned long addr, unsigned long error_code)
{
	__u64 now = bpf_ktime_get_ns();

	cs->fault.ts = now;
	cs->fault.end = now;
	cs->fault.addr = addr;
	cs->fault.ino = 0;
	cs->fault.dev = 0;
	cs->fault.seq = 0;
	cs->fault.off = -1;
	cs->fault.lo = -1;
	cs->fault.maj = t->maj_flt;
	cs->fault.min = t->min_flt;
	cs->fault.nvcsw = t->nvcsw;
	cs->fault.pages = 0;
	cs->fault.slept = 0;
	cs->fault.write = !!(error_code & X86_PF_WRITE_);
	cs->fault.exec = !!(error_code & X86_PF_INSTR_);
}

/*
 * The open fault's file is (dev, ino): it takes a call number of the
 * thread (its bios will name it) and is named once. file: the mapping's
 * struct file when known, else looked up (only for a file not named yet).
 */
static __always_inline void fault_file(struct call_state *cs, __u64 ino, __u32 dev, __u8 ftype,
				       __s64 off, struct file *file)
{
	struct path_key key = { .ino = ino, .dev = dev };
	struct file_vma v = { .addr = cs->fault.addr };
	__u64 pid_tgid = bpf_get_current_pid_tgid();

	if (!cs->fault.ino) {
		/* device mappings, /dev/zero, sockets: memory, not file I/O */
		if ((ftype != GPUIO_FT_REG && ftype != GPUIO_FT_BLK) ||
		    (ino == self_exe_ino && dev == self_exe_dev)) {
			cs->fault.ts = 0;
			return;
		}
		cs->fault.ino = ino;
		cs->fault.dev = dev;
		cs->fault.ftype = ftype;
		cs->seq++;
		cs->fault.seq = cs->seq;
		/* the line whose access faulted (--stacks): the thread is in it now */
		if (py_stacks)
			py_stack_at(pid_tgid >> 32, (__u32)pid_tgid, GPUIO_SA_CALL, cs->seq,
				    cs->fault.ts);
	}
	if (off >= 0)
		cs->fault.off = off;
	/* a file mapped but never read by a call (a library, an mmap'ed
	 * dataset): named here, once */
	if (ino == cs->named_ino && dev == cs->named_dev)
		return;
	if (!bpf_map_lookup_elem(&paths_sent, &key)) {
		if (!file) {
			/* faults on files not named yet only: interrupts are on
			 * here, the lock is let go at once (no irq_work) */
			bpf_find_vma(bpf_get_current_task_btf(), cs->fault.addr, file_vma_cb, &v, 0);
			if (v.ino != ino || v.dev != dev)
				return;         /* not now: at its next fault */
			file = (struct file *)v.file;
		}
		/* a BTF pointer, which emit_path_of (global) takes only as a
		 * number: copied as one (once per file) */
		__u64 fp = 0;

		bpf_probe_read_kernel(&fp, sizeof(fp), &file);
		emit_path_of(fp, ino, dev, pid_tgid, cs->fault.ts);
	}
	cs->named_ino = ino;
	cs->named_dev = dev;
}

/*
 * A user fault of the current task at addr. vma: look its mapping up here
 * (kernels without the filemap events): interrupts are off at this
 * tracepoint, so bpf_find_vma hands the lock's release to an irq_work —
 * a self-interrupt per fault, costly in a VM. Otherwise the filemap
 * events inside the fault say which file it is (on_fmap).
 */
static __always_inline int on_fault(unsigned long addr, unsigned long error_code, const bool vma)
{
	struct file_vma v = { .addr = addr };
	struct task_struct *t;
	struct call_state *cs;
	__u64 pid_tgid;

	/* task storage first: an untraced task has none, or says no */
	cs = current_traced();
	if (!cs)
		return 0;
	t = bpf_get_current_task_btf();
	pid_tgid = bpf_get_current_pid_tgid();
	/* the thread's previous fault is over: a new one has begun */
	if (cs->fault.ino)
		fault_settle(&cs->fault, t->maj_flt, t->min_flt, pid_tgid >> 32, (__u32)pid_tgid,
			     true);
	if (!vma) {
		fault_open(cs, t, addr, error_code);
		return 0;
	}
	if (bpf_find_vma(t, addr, file_vma_cb, &v, 0) == -16 /* EBUSY */) {
		stat_inc(GPUIO_STAT_FAULT_NO_VMA);
		return 0;
	}
	if (!v.file)
		return 0;               /* anonymous memory */
	fault_open(cs, t, addr, error_code);
	fault_file(cs, v.ino, v.dev, v.ftype, v.off, (struct file *)v.file);
	return 0;
}

/*
 * filemap_fault or filemap_map_pages (fault-around) of the current task's
 * open fault: its file (the mapping's), and the faulting page (index; -1
 * for fault-around, which maps a range around it). A kernel-mode fault (a
 * syscall copying to a mapped buffer) after the user fault ended settles
 * that one first (fault_current_active) and is not ours.
 */
static __always_inline int on_fmap(struct address_space *mapping, __s64 index, const bool btf)
{
	struct call_state *cs = bpf_task_storage_get(&calls, bpf_get_current_task_btf(), NULL, 0);
	struct inode *host;
	__u64 ino;
	__u32 dev;
	__u8 ftype;

	if (!cs || !cs->fault.ts || !fault_current_active(cs))
		return 0;
	/* tp_btf: a trusted pointer, plain loads */
	host = btf ? mapping->host : BPF_CORE_READ(mapping, host);
	if (!host)
		return 0;
	if (btf) {
		ino = host->i_ino;
		dev = host->i_sb->s_dev;
		ftype = (host->i_mode & S_IFMT_) >> 12;
	} else {
		ino = BPF_CORE_READ(host, i_ino);
		dev = inode_dev(host);
		ftype = (BPF_CORE_READ(host, i_mode) & S_IFMT_) >> 12;
	}
	fault_file(cs, ino, dev, ftype, index >= 0 ? index << FAULT_PAGE_SHIFT : -1, NULL);
	return 0;
}

/* The task exits: a fault still open was cut short (a fatal signal). */
static __always_inline int on_fault_exit(void)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct call_state *cs = bpf_task_storage_get(&calls, t, NULL, 0);
	__u64 id = bpf_get_current_pid_tgid();

	if (cs && cs->fault.ts)
		fault_settle(&cs->fault, t->maj_flt, t->min_flt, id >> 32, (__u32)id, true);
	return 0;
}

/* the filemap events (6.11+) name the file; the fault's entry does the rest */
SEC("?tp_btf/page_fault_user")
int BPF_PROG(fault_user_btf, unsigned long address, struct pt_regs *regs, unsigned long error_code)
{ return on_fault(address, error_code, false); }
SEC("?tp_btf/mm_filemap_fault")
int BPF_PROG(fault_fmap_btf, struct address_space *mapping, unsigned long index)
{ return on_fmap(mapping, (__s64)index, true); }
SEC("?tp_btf/mm_filemap_map_pages")
int BPF_PROG(fault_fpages_btf, struct address_space *mapping, unsigned long start,
	     unsigned long last)
{ return on_fmap(mapping, -1, true); }
SEC("?tp_btf/sched_process_exit")
int BPF_PROG(fault_exit_btf, struct task_struct *p)
{ return on_fault_exit(); }
/* older kernels: the mapping looked up at the fault's entry */
SEC("?tp_btf/page_fault_user")
int BPF_PROG(fault_user_vma_btf, unsigned long address, struct pt_regs *regs,
	     unsigned long error_code)
{ return on_fault(address, error_code, true); }

SEC("?raw_tp/page_fault_user")
int BPF_PROG(fault_user_raw, unsigned long address, struct pt_regs *regs, unsigned long error_code)
{ return on_fault(address, error_code, false); }
SEC("?raw_tp/mm_filemap_fault")
int BPF_PROG(fault_fmap_raw, struct address_space *mapping, unsigned long index)
{ return on_fmap(mapping, (__s64)index, false); }
SEC("?raw_tp/mm_filemap_map_pages")
int BPF_PROG(fault_fpages_raw, struct address_space *mapping, unsigned long start,
	     unsigned long last)
{ return on_fmap(mapping, -1, false); }
SEC("?raw_tp/sched_process_exit")
int BPF_PROG(fault_exit_raw, struct task_struct *p)
{ return on_fault_exit(); }
SEC("?raw_tp/page_fault_user")
int BPF_PROG(fault_user_vma_raw, unsigned long address, struct pt_regs *regs,
	     unsigned long error_code)
{ return on_fault(address, error_code, true); }

/*
 * The end of the trace (userspace reads this iterator once): the faults
 * still open, settled — finished ones as they were, ones the thread is
 * still in cut at now.
 */
SEC("?iter/task")
int fault_flush(struct bpf_iter__task *ctx)
{
	struct task_struct *t = ctx->task;
	struct call_state *cs;

	if (!t)
		return 0;
	cs = bpf_task_storage_get(&calls, t, NULL, 0);
	if (cs && cs->fault.ts)
		fault_settle(&cs->fault, t->maj_flt, t->min_flt, t->tgid, t->pid, true);
	return 0;
}

#endif
