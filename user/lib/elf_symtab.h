/* SPDX-License-Identifier: MIT */
/*
 * elf_symtab.h — which function of a running process an address is in:
 * the process's mapping of it (/proc/PID/maps), the mapped file's function
 * symbols (its symbol table, then its dynamic ones), loaded once per file
 * and cached, searched by address, C++ names demangled when libstdc++'s
 * demangler is at hand. For the CUDA launch stubs' names and the native
 * frames of stacks.
 */
#ifndef GPUIO_LIB_ELF_SYMTAB_H
#define GPUIO_LIB_ELF_SYMTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <limits.h>
#include <sys/types.h>

/* Where an address of a process lies: the file mapped there */
struct elf_where {
	char path[PATH_MAX];            /* as the process names it */
	char open_path[PATH_MAX + 32];  /* through /proc/PID/root: a container's own file */
	uint64_t foff;                  /* the address's offset in the file */
	uint64_t dev, ino;              /* the file's identity (the symbol cache's key) */
};

/* The file mapping that holds addr in pid: 0, -ENOENT (anonymous or none), -ESRCH */
int elf_where(pid_t pid, uint64_t addr, struct elf_where *w);

/*
 * The function of w's file that holds its offset: its name (demangled when
 * it can be) into buf, true; false when no symbol covers it.
 */
bool elf_symtab__name(const struct elf_where *w, char *buf, size_t len);
/*
 * Whether the instruction before w's offset is a call: the address is a
 * return address (x86-64 and arm64; elsewhere always true).
 */
bool elf_symtab__after_call(const struct elf_where *w);
/* The cached symbol tables, freed */
void elf_symtab__cache_free(void);

#endif /* GPUIO_LIB_ELF_SYMTAB_H */
