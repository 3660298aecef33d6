/* SPDX-License-Identifier: MIT */
/*
 * elf_syms.h — the addresses of a few named symbols of an ELF file (its
 * dynamic symbols, then its symbol table when not stripped), and how the
 * file is placed when mapped: what a caller needs to find a variable in a
 * running process.
 */
#ifndef GPUIO_LIB_ELF_SYMS_H
#define GPUIO_LIB_ELF_SYMS_H

#include <stdbool.h>
#include <stdint.h>

struct elf_sym_req {
	const char *name;
	uint64_t value;         /* out: its st_value (a link-time address) */
	uint64_t size;          /* out: its st_size */
	bool found;             /* out */
};

struct elf_info {
	bool pie;               /* ET_DYN: mapped at a base chosen at run time */
	uint64_t first_vaddr;   /* the lowest PT_LOAD p_vaddr, page-aligned down */
};

/*
 * Look up reqs[0..n) in the ELF file at path (each found once; the first
 * definition wins). Returns how many were found, or -errno (-ENOEXEC: not
 * an ELF file).
 */
int elf_syms__lookup(const char *path, struct elf_sym_req *reqs, int n, struct elf_info *info);

#endif /* GPUIO_LIB_ELF_SYMS_H */
