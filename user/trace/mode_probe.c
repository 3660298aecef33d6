// SPDX-License-Identifier: MIT
/*
 * mode_probe.c — the function-hook modes asked of the kernel with empty
 * programs (mode_probe.h): a load the kernel refuses (EPERM: no
 * trampolines) and an attach it cannot do (ENOENT: no kprobes) both show.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "mode_probe.skel.h"
#include "cuda/cuda_lib.h"
#include "trace/btf_names.h"
#include "trace/mode_probe.h"

/* BPF_TRACE_UPROBE_MULTI (48; libbpf 1.1's headers predate it) */
#define ATTACH_UPROBE_MULTI_TYPE 48

static int probe_uprobe_multi(struct mode_probe_bpf *sk, char *why, size_t len)
{
	struct bpf_program *p = sk->progs.probe_uprobe_multi;
	int err;

	bpf_program__set_autoload(p, true);
	bpf_program__set_expected_attach_type(p, ATTACH_UPROBE_MULTI_TYPE);
	err = mode_probe_bpf__load(sk);
	if (err) {
		snprintf(why, len, "uprobe.multi program: %s", strerror(-err));
		return err;
	}
	return cuda_uprobe_multi_probe(bpf_program__fd(p), why, len);
}

/*
 * fentry and fexit on vfs_read, as two-instruction programs loaded with the
 * BTF the loader has parsed already: through the skeleton, libbpf parsed
 * the kernel's BTF once more for them (~5 ms of the start).
 */
static int probe_fentry_raw(const struct btf *vmlinux, char *why, size_t len)
{
	static const struct bpf_insn ret0[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	static const char *const what[2] = { "fentry on vfs_read", "fexit on vfs_read" };
	static const enum bpf_attach_type type[2] = { BPF_TRACE_FENTRY, BPF_TRACE_FEXIT };
	int id = btf__find_by_name_kind(vmlinux, "vfs_read", BTF_KIND_FUNC);
	int fd[2] = { -1, -1 }, ln[2] = { -1, -1 }, err = 0;

	if (id <= 0) {
		snprintf(why, len, "%s: no vfs_read in the kernel's BTF", what[0]);
		return -ENOENT;
	}
	for (int i = 0; i < 2 && !err; i++) {
		LIBBPF_OPTS(bpf_prog_load_opts, o, .expected_attach_type = type[i],
			    .attach_btf_id = (__u32)id);

		fd[i] = bpf_prog_load(BPF_PROG_TYPE_TRACING, "gpuio_probe", "GPL", ret0, 2, &o);
		if (fd[i] < 0) {
			err = -errno;
			snprintf(why, len, "%s: %s", what[i], strerror(-err));
			break;
		}
		ln[i] = bpf_raw_tracepoint_open(NULL, fd[i]);
		if (ln[i] < 0) {
			err = -errno;
			snprintf(why, len, "attach %s: %s", what[i], strerror(-err));
		}
	}
	for (int i = 0; i < 2; i++) {
		if (ln[i] >= 0)
			close(ln[i]);
		if (fd[i] >= 0)
			close(fd[i]);
	}
	return err;
}

int mode_probe(enum mode_probe_kind kind, char *why, size_t len)
{
	struct mode_probe_bpf *sk;
	static const char *const what[][2] = {
		[MODE_PROBE_FENTRY] = { "fentry on vfs_read", "fexit on vfs_read" },
		[MODE_PROBE_KPROBE] = { "kprobe on vfs_read", "kretprobe on vfs_read" },
	};
	struct bpf_program *p[2];
	struct bpf_link *ln[2] = { NULL, NULL };
	int err = 0, i;

	if (kind == MODE_PROBE_FENTRY && btf_names__vmlinux())
		return probe_fentry_raw(btf_names__vmlinux(), why, len);
	sk = mode_probe_bpf__open();
	if (!sk) {
		err = -errno;
		snprintf(why, len, "cannot open the probe object: %s", strerror(-err));
		return err;
	}
	if (kind == MODE_PROBE_UPROBE_MULTI) {
		err = probe_uprobe_multi(sk, why, len);
		mode_probe_bpf__destroy(sk);
		return err;
	}
	p[0] = kind == MODE_PROBE_FENTRY ? sk->progs.probe_fentry : sk->progs.probe_kprobe;
	p[1] = kind == MODE_PROBE_FENTRY ? sk->progs.probe_fexit : sk->progs.probe_kretprobe;
	for (i = 0; i < 2; i++)
		bpf_program__set_autoload(p[i], true);
	err = mode_probe_bpf__load(sk);
	if (err) {
		snprintf(why, len, "%s: %s", what[kind][0], strerror(-err));
		goto out;
	}
	for (i = 0; i < 2 && !err; i++) {
		ln[i] = bpf_program__attach(p[i]);
		if (!ln[i]) {
			err = -errno;
			snprintf(why, len, "attach %s: %s", what[kind][i], strerror(-err));
		}
	}
out:
	for (i = 0; i < 2; i++)
		bpf_link__destroy(ln[i]);
	mode_probe_bpf__destroy(sk);
	return err;
}
