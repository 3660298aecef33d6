// SPDX-License-Identifier: MIT
/*
 * elf_syms.c — named symbols of an ELF file (elf_syms.h), with libelf.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <string.h>
#include <unistd.h>
#include "lib/elf_syms.h"

static int scan(Elf *elf, Elf64_Word type, struct elf_sym_req *reqs, int n, int found)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn)) && found < n) {
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type || !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && i < sh.sh_size / sh.sh_entsize && found < n; i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF)
				continue;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			for (int k = 0; name && k < n; k++)
				if (!reqs[k].found && !strcmp(name, reqs[k].name)) {
					reqs[k].value = sym.st_value;
					reqs[k].size = sym.st_size;
					reqs[k].found = true;
					found++;
				}
		}
	}
	return found;
}

int elf_syms__lookup(const char *path, struct elf_sym_req *reqs, int n, struct elf_info *info)
{
	GElf_Ehdr eh;
	size_t nph;
	int fd, found = 0;
	Elf *elf;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh)) {
		if (elf)
			elf_end(elf);
		close(fd);
		return -ENOEXEC;
	}
	for (int k = 0; k < n; k++)
		reqs[k].found = false;
	info->pie = eh.e_type == ET_DYN;
	info->first_vaddr = UINT64_MAX;
	if (!elf_getphdrnum(elf, &nph))
		for (size_t i = 0; i < nph; i++) {
			GElf_Phdr ph;

			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
			    ph.p_vaddr < info->first_vaddr)
				info->first_vaddr = ph.p_vaddr & ~0xfffull;
		}
	if (info->first_vaddr == UINT64_MAX)
		info->first_vaddr = 0;
	found = scan(elf, SHT_DYNSYM, reqs, n, found);
	found = scan(elf, SHT_SYMTAB, reqs, n, found);
	elf_end(elf);
	close(fd);
	return found;
}
