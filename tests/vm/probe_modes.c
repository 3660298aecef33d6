/*
 * probe_modes — statically linked libbpf program run inside the QEMU guest by
 * tests/vm/guest-tests.sh.  It loads probe_modes.bpf.c, attaches every program
 * (fentry/fexit vfs_read, kprobe/kretprobe vfs_write, tp_btf sys_enter and
 * block_rq_issue, raw_tp sys_exit, tracepoint syscalls/sys_enter_write), runs
 * a workload of known size on a file in DIR, and checks every counter exactly.
 *
 *   probe_modes [-v] [-n READS] [-r READ_SIZE] [-m WRITES] [-w WRITE_SIZE]
 *               [-k DIRECT_READS] [--break] DIR
 *
 * Phase 1: M write()s of W bytes, lseek, N read()s of R bytes (buffered).
 * Phase 2: fsync, then K O_DIRECT pread()s of 4096 bytes -> K block reads.
 * -v (or GPUIO_VM_VERBOSE=1) prints libbpf's debug log.
 * --break (or GPUIO_VM_BREAK=1 in the environment) expects one read too many:
 * the deliberate failure that proves a wrong count is caught.
 * Exit 0 when every attach worked and every count matched, else 1.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "probe_modes.h"
#include "probe_modes.skel.h"

#define DIRECT_SZ 4096

static int verbose;
static int failures;

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG && !verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static void expect(const char *what, unsigned long long got, unsigned long long want)
{
	int ok = got == want;

	printf("probe_modes: %-40s got %8llu want %8llu %s\n", what, got, want,
	       ok ? "ok" : "MISMATCH");
	if (!ok)
		failures++;
}

static int attach_one(struct bpf_program *prog, const char *mode)
{
	struct bpf_link *link = bpf_program__attach(prog);

	if (!link) {
		int err = -errno;

		printf("probe_modes: attach %-28s FAILED (%s)\n", mode, strerror(-err));
		failures++;
		return err;
	}
	printf("probe_modes: attach %-28s ok\n", mode);
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: probe_modes [-v] [-n READS] [-r READ_SIZE] [-m WRITES] "
		"[-w WRITE_SIZE] [-k DIRECT_READS] [--break] DIR\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "break", no_argument, NULL, 'B' },
		{ "verbose", no_argument, NULL, 'v' },
		{ 0 }
	};
	unsigned long n_reads = 32, r_size = 2048, n_writes = 16, w_size = 4096, k_direct = 8;
	int brk = getenv("GPUIO_VM_BREAK") && strcmp(getenv("GPUIO_VM_BREAK"), "0") != 0;
	const char *venv = getenv("GPUIO_VM_VERBOSE");
	struct probe_modes_bpf *skel = NULL;
	char path[4096], *buf = NULL, *dbuf = NULL;
	struct utsname uts;
	struct stat st;
	int opt, fd = -1, err;
	unsigned long i;

	while ((opt = getopt_long(argc, argv, "vn:r:m:w:k:", longopts, NULL)) != -1) {
		switch (opt) {
		case 'v': verbose = 1; break;
		case 'n': n_reads = strtoul(optarg, NULL, 0); break;
		case 'r': r_size = strtoul(optarg, NULL, 0); break;
		case 'm': n_writes = strtoul(optarg, NULL, 0); break;
		case 'w': w_size = strtoul(optarg, NULL, 0); break;
		case 'k': k_direct = strtoul(optarg, NULL, 0); break;
		case 'B': brk = 1; break;
		default: usage();
		}
	}
	if (optind != argc - 1)
		usage();
	if (venv && strcmp(venv, "0") != 0)
		verbose = 1;
	if (!r_size || !w_size || n_reads * r_size > n_writes * w_size ||
	    k_direct * DIRECT_SZ > n_writes * w_size) {
		fprintf(stderr, "probe_modes: reads must fit in what was written\n");
		return 2;
	}
	snprintf(path, sizeof(path), "%s/probe_modes.dat", argv[optind]);

	uname(&uts);
	printf("probe_modes: kernel %s, BTF %s\n", uts.release,
	       access("/sys/kernel/btf/vmlinux", R_OK) == 0 ? "present" : "MISSING");
	if (stat(argv[optind], &st) < 0) {
		fprintf(stderr, "probe_modes: %s: %s\n", argv[optind], strerror(errno));
		return 1;
	}
	libbpf_set_print(libbpf_print);

	skel = probe_modes_bpf__open();
	if (!skel) {
		fprintf(stderr, "probe_modes: open: %s\n", strerror(errno));
		return 1;
	}
	skel->rodata->target_pid = getpid();
	skel->rodata->target_tid = gettid();
	skel->rodata->target_dev = (major(st.st_dev) << 20) | minor(st.st_dev);
	err = probe_modes_bpf__load(skel);
	if (err) {
		fprintf(stderr, "probe_modes: load: %s\n", strerror(-err));
		goto out;
	}
	attach_one(skel->progs.fentry_vfs_read, "fentry/vfs_read");
	attach_one(skel->progs.fexit_vfs_read, "fexit/vfs_read");
	attach_one(skel->progs.kprobe_vfs_write, "kprobe/vfs_write");
	attach_one(skel->progs.kretprobe_vfs_write, "kretprobe/vfs_write");
	attach_one(skel->progs.tpbtf_sys_enter, "tp_btf/sys_enter");
	attach_one(skel->progs.rawtp_sys_exit, "raw_tp/sys_exit");
	attach_one(skel->progs.tp_sys_enter_write, "tracepoint/syscalls/sys_enter_write");
	attach_one(skel->progs.tpbtf_block_rq_issue, "tp_btf/block_rq_issue");
	if (failures)
		goto out;

	buf = malloc(r_size > w_size ? r_size : w_size);
	if (!buf || posix_memalign((void **)&dbuf, DIRECT_SZ, DIRECT_SZ)) {
		fprintf(stderr, "probe_modes: out of memory\n");
		failures++;
		goto out;
	}
	memset(buf, 'g', w_size);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		fprintf(stderr, "probe_modes: %s: %s\n", path, strerror(errno));
		failures++;
		goto out;
	}
	fflush(stdout);
	fflush(stderr);

	/* ---- phase 1: buffered; no other syscall in this thread while counting ---- */
	skel->bss->phase = 1;
	for (i = 0; i < n_writes; i++)
		if (write(fd, buf, w_size) != (ssize_t)w_size)
			break;
	skel->bss->phase = 0;
	if (i != n_writes) {
		fprintf(stderr, "probe_modes: short write\n");
		failures++;
		goto out;
	}
	lseek(fd, 0, SEEK_SET);
	skel->bss->phase = 1;
	for (i = 0; i < n_reads; i++)
		if (read(fd, buf, r_size) != (ssize_t)r_size)
			break;
	skel->bss->phase = 0;
	if (i != n_reads) {
		fprintf(stderr, "probe_modes: short read\n");
		failures++;
		goto out;
	}
	if (fsync(fd) < 0) {
		fprintf(stderr, "probe_modes: fsync: %s\n", strerror(errno));
		failures++;
		goto out;
	}
	close(fd);

	/* ---- phase 2: O_DIRECT, one block request per pread ---- */
	fd = open(path, O_RDONLY | O_DIRECT);
	if (fd < 0) {
		fprintf(stderr, "probe_modes: %s O_DIRECT: %s\n", path, strerror(errno));
		failures++;
		goto out;
	}
	skel->bss->phase = 2;
	for (i = 0; i < k_direct; i++)
		if (pread(fd, dbuf, DIRECT_SZ, i * DIRECT_SZ) != DIRECT_SZ)
			break;
	skel->bss->phase = 0;
	if (i != k_direct) {
		fprintf(stderr, "probe_modes: short O_DIRECT read\n");
		failures++;
		goto out;
	}

	printf("probe_modes: workload: %lu write(%lu), %lu read(%lu), %lu O_DIRECT pread(%d) on %s (dev %u:%u)%s\n",
	       n_writes, w_size, n_reads, r_size, k_direct, DIRECT_SZ, path,
	       major(st.st_dev), minor(st.st_dev),
	       brk ? "  [--break: expecting one read too many]" : "");
	{
		__u64 (*c)[PM_NCOUNT] = skel->bss->counts;
		unsigned long want_reads = n_reads + (brk ? 1 : 0);

		expect("fentry/vfs_read calls", c[1][PM_FENTRY_READ], want_reads);
		expect("fexit/vfs_read calls", c[1][PM_FEXIT_READ], n_reads);
		expect("fexit/vfs_read bytes", c[1][PM_FEXIT_READ_BYTES], n_reads * r_size);
		expect("kprobe/vfs_write calls", c[1][PM_KPROBE_WRITE], n_writes);
		expect("kprobe/vfs_write count bytes", c[1][PM_KPROBE_WRITE_BYTES], n_writes * w_size);
		expect("kretprobe/vfs_write bytes", c[1][PM_KRETPROBE_WRITE_BYTES], n_writes * w_size);
		expect("tp_btf/sys_enter read", c[1][PM_TPBTF_ENTER_READ], n_reads);
		expect("tp_btf/sys_enter write", c[1][PM_TPBTF_ENTER_WRITE], n_writes);
		expect("raw_tp/sys_exit read", c[1][PM_RAWTP_EXIT_READ], n_reads);
		expect("raw_tp/sys_exit read bytes", c[1][PM_RAWTP_EXIT_READ_BYTES], n_reads * r_size);
		expect("raw_tp/sys_exit write", c[1][PM_RAWTP_EXIT_WRITE], n_writes);
		expect("tracepoint/sys_enter_write calls", c[1][PM_TP_ENTER_WRITE], n_writes);
		expect("tracepoint/sys_enter_write bytes", c[1][PM_TP_ENTER_WRITE_BYTES], n_writes * w_size);
		expect("O_DIRECT: fentry/vfs_read calls", c[2][PM_FENTRY_READ], k_direct);
		expect("O_DIRECT: tp_btf/sys_enter pread64", c[2][PM_TPBTF_ENTER_PREAD], k_direct);
		expect("O_DIRECT: tp_btf/block_rq_issue reads", c[2][PM_BLOCK_READ_RQ], k_direct);
		expect("O_DIRECT: tp_btf/block_rq_issue bytes", c[2][PM_BLOCK_READ_BYTES], k_direct * DIRECT_SZ);
	}
out:
	if (fd >= 0)
		close(fd);
	unlink(path);
	probe_modes_bpf__destroy(skel);
	free(buf);
	free(dbuf);
	if (err)
		return 1;
	printf("probe_modes: %s\n", failures ? "FAIL" : "all counts exact");
	return failures ? 1 : 0;
}
