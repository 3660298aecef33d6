/* probe_modes.h — counters shared by probe_modes.bpf.c and probe_modes.c. */
#ifndef PROBE_MODES_H
#define PROBE_MODES_H

/* phase 0 = not counting; 1 = buffered read()/write(); 2 = O_DIRECT pread();
 * 3 unused (a power of two lets the BPF side bound the index with a mask) */
#define PM_PHASES 4

enum pm_counter {
	PM_FENTRY_READ,
	PM_FEXIT_READ,
	PM_FEXIT_READ_BYTES,
	PM_KPROBE_WRITE,
	PM_KPROBE_WRITE_BYTES,
	PM_KRETPROBE_WRITE_BYTES,
	PM_TPBTF_ENTER_READ,
	PM_TPBTF_ENTER_WRITE,
	PM_TPBTF_ENTER_PREAD,
	PM_RAWTP_EXIT_READ,
	PM_RAWTP_EXIT_READ_BYTES,
	PM_RAWTP_EXIT_WRITE,
	PM_TP_ENTER_WRITE,
	PM_TP_ENTER_WRITE_BYTES,
	PM_BLOCK_READ_RQ,
	PM_BLOCK_READ_BYTES,
	PM_NCOUNT
};

/* x86_64 syscall numbers (the guest is x86_64) */
#define PM_NR_read	0
#define PM_NR_write	1
#define PM_NR_pread64	17

/* enum req_op: REQ_OP_READ = 0 in the low 8 bits of cmd_flags (stable since 4.10) */
#define PM_REQ_OP_MASK	0xff
#define PM_REQ_OP_READ	0

#endif
