// SPDX-License-Identifier: MIT
/*
 * percpu_btf.c — the per-CPU offsets of the run queue and of the preempt
 * count, from the kernel's BTF (.data..percpu's variables). x86 keeps the
 * preempt count in __preempt_count (before 6.2 and from 6.15) or in
 * pcpu_hot.preempt_count (6.2-6.14); both are looked for.
 */
#include <errno.h>
#include <string.h>
#include <bpf/btf.h>
#include "lib/percpu_btf.h"

/* the offset of member name in struct id, in bytes; -1 if none */
static int64_t member_off(const struct btf *btf, int id, const char *name)
{
	const struct btf_type *t = btf__type_by_id(btf, (uint32_t)id);
	const struct btf_member *m;

	if (!t || !btf_is_struct(t))
		return -1;
	m = btf_members(t);
	for (int i = 0; i < btf_vlen(t); i++, m++)
		if (!strcmp(btf__name_by_offset(btf, m->name_off), name))
			return btf_member_bit_offset(t, (uint32_t)i) / 8;
	return -1;
}

int percpu_btf__offsets(const struct btf *btf, struct percpu_btf_offs *o)
{
	const struct btf_var_secinfo *v;
	const struct btf_type *sec;
	int64_t rq = -1, pc = -1;
	int id;

	memset(o, 0, sizeof(*o));
	if (!btf)
		return -ENOENT;
	id = btf__find_by_name_kind(btf, ".data..percpu", BTF_KIND_DATASEC);
	sec = id > 0 ? btf__type_by_id(btf, (uint32_t)id) : NULL;
	for (int i = 0; sec && i < btf_vlen(sec); i++) {
		const struct btf_type *var;
		const char *name;

		v = btf_var_secinfos(sec) + i;
		var = btf__type_by_id(btf, v->type);
		name = var ? btf__name_by_offset(btf, var->name_off) : NULL;
		if (!name)
			continue;
		if (!strcmp(name, "runqueues")) {
			rq = v->offset;
		} else if (!strcmp(name, "__preempt_count")) {
			pc = v->offset;
		} else if (!strcmp(name, "pcpu_hot") && pc < 0) {
			int64_t m = member_off(btf, (int)btf__resolve_type(btf, var->type), "preempt_count");

			if (m >= 0)
				pc = v->offset + m;
		}
	}
	/* 0 is "unknown" to the BPF side: a real offset of 0 is not usable */
	if (rq <= 0 || pc <= 0)
		return -ENOENT;
	o->rq = (uint64_t)rq;
	o->preempt = (uint64_t)pc;
	return 0;
}
