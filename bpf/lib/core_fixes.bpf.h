/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * core_fixes.bpf.h — kernel struct layouts that changed between the kernels
 * gpuio runs on, read through CO-RE flavors (libbpf's "___suffix" naming):
 * written once, for every BPF program here. Knows nothing of gpuio.
 */
#ifndef GPUIO_CORE_FIXES_BPF_H
#define GPUIO_CORE_FIXES_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>

/*
 * struct folio as kernels before memdesc_flags_t (6.1 … 6.17) lay it out:
 * flags a plain word, the order in its own byte. CO-RE matches "folio___old"
 * against the running kernel's struct folio and reports which fields fit.
 */
struct folio___old {
	unsigned long flags;
	unsigned char _folio_order;
} __attribute__((preserve_access_index));

/* Pages in a folio: 1, or 1 << order for a large folio. */
static __always_inline __u32 folio_pages(struct folio *folio)
{
	struct folio___old *old = (void *)folio;
	unsigned long flags = 0, flags1 = 0;
	unsigned char order = 0;
	int head = bpf_core_enum_value(enum pageflags, PG_head);

	if (bpf_core_field_exists(old->flags))
		bpf_core_read(&flags, sizeof(flags), &old->flags);
	else
		bpf_core_read(&flags, sizeof(flags), &folio->flags);
	if (!(flags & (1UL << (head & 63))))
		return 1;
	if (bpf_core_field_exists(old->_folio_order)) {
		bpf_core_read(&order, sizeof(order), &old->_folio_order);
		return 1U << (order & 0x1f);
	}
	/* newer kernels keep the order in the low byte of _flags_1 */
	bpf_core_read(&flags1, sizeof(flags1), &folio->_flags_1);
	return 1U << (flags1 & 0x1f);
}

#endif /* GPUIO_CORE_FIXES_BPF_H */
