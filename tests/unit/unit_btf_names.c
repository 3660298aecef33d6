// SPDX-License-Identifier: MIT
/*
 * unit_btf_names — trace/btf_names.c's quick look-up against libbpf's whole
 * parse of the same kernel BTF (the ground truth): every btf_trace_* typedef
 * libbpf finds is found, and a few names that are not whole strings there
 * (a prefix, an invented tracepoint) are not. Skipped, with the reason,
 * where the kernel has no BTF.
 */
#include <string.h>
#include <unistd.h>
#include <linux/btf.h>
#include <bpf/btf.h>
#include "trace/btf_names.h"
#include "unit.h"

int main(void)
{
	struct btf *btf;
	unsigned n, tps = 0, missed = 0;
	const char *first_missed = "";

	if (access("/sys/kernel/btf/vmlinux", R_OK) != 0) {
		printf("unit_btf_names: skipped: no /sys/kernel/btf/vmlinux on this kernel\n");
		return 0;
	}
	btf = btf__load_vmlinux_btf();
	CHECK(btf != NULL, "libbpf parses the kernel BTF");
	if (!btf)
		return unit_done("unit_btf_names");
	n = btf__type_cnt(btf);
	for (unsigned id = 1; id < n; id++) {
		const struct btf_type *t = btf__type_by_id(btf, id);
		const char *name = btf__name_by_offset(btf, t->name_off);

		if (btf_kind(t) != BTF_KIND_TYPEDEF || !name || strncmp(name, "btf_trace_", 10))
			continue;
		tps++;
		if (btf_names__has(name) != 1 && !missed++)
			first_missed = name;
	}
	CHECK(tps > 100, "the kernel has tracepoints in its BTF (%u)", tps);
	CHECK(missed == 0, "%u of %u btf_trace_* typedefs not found (first: %s)", missed, tps,
	      first_missed);
	CHECK(btf__find_by_name_kind(btf, "btf_trace_sched_switch", BTF_KIND_TYPEDEF) > 0 &&
	      btf_names__has("btf_trace_sched_switch") == 1, "sched_switch, in both");
	CHECK(btf_names__has("btf_trace_sched_swi") == 0, "a prefix is not a name");
	CHECK(btf_names__has("btf_trace_gpuio_no_such_tracepoint") == 0, "an invented tracepoint");
	CHECK(btf__find_by_name_kind(btf, "vfs_read", BTF_KIND_FUNC) > 0 &&
	      btf_names__has("vfs_read") == 1, "a function's name (not a tracepoint's)");
	btf__free(btf);
	return unit_done("unit_btf_names");
}
