// SPDX-License-Identifier: MIT
/*
 * cuda_stub_syms.c — names for launch stubs (the function symbol at the
 * stub's address, lib/elf_symtab.h): a SYM record per stub the capture
 * names.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include "capture/capture.h"
#include "trace/cuda_probes.h"
#include "lib/elf_symtab.h"

int cuda_probes__emit_sym(struct gpuio_cap_writer *w, pid_t pid, __u64 addr, __u64 ts)
{
	struct gpuio_gpu_sym rec;
	struct elf_where at;
	char name[sizeof(rec.name) + 1];
	size_t len;
	int err = elf_where(pid, addr, &at);

	if (err)
		return err;
	if (!elf_symtab__name(&at, name, sizeof(name)))
		return -ENOENT;
	memset(&rec, 0, offsetof(struct gpuio_gpu_sym, name));
	len = strnlen(name, sizeof(rec.name));
	memcpy(rec.name, name, len);
	rec.name_len = (__u16)len;
	rec.addr = addr;
	rec.hdr.type = GPUIO_REC_GPU_SYM;
	rec.hdr.size = (__u16)((offsetof(struct gpuio_gpu_sym, name) + len + 7) & ~(size_t)7);
	memset(rec.name + len, 0, rec.hdr.size - offsetof(struct gpuio_gpu_sym, name) - len);
	rec.hdr.pid = (__u32)pid;
	rec.hdr.ts = ts;
	return gpuio_cap_writer__append(w, &rec, rec.hdr.size);
}
