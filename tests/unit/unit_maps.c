// SPDX-License-Identifier: MIT
/*
 * unit_maps — /proc/PID/maps lines (lib/proc_maps.c): file, anonymous,
 * [heap], deleted and space-holding paths, device numbers; and the real
 * /proc/self/maps, which must hold this program's own file (readlink of
 * /proc/self/exe) at an executable mapping containing main().
 */
#include <limits.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "lib/proc_maps.h"
#include "unit.h"

int main(void)
{
	char l1[] = "7f12a0000000-7f12a0021000 r-xp 00002000 fd:01 1234567    /usr/lib/libc.so.6\n";
	char l2[] = "55d0c0000000-55d0c0021000 rw-p 00000000 00:00 0                          [heap]\n";
	char l3[] = "7f0000000000-7f0000001000 rw-p 00000000 00:00 0\n";
	char l4[] = "7f0000001000-7f0000002000 r--s 00000000 00:01 99   /memfd:x (deleted)\n";
	char l5[] = "7f0000002000-7f0000003000 r--p 00001000 103:02 42   /data/my file.bin\n";
	char l6[] = "not a maps line\n";
	char exe[PATH_MAX];
	struct proc_maps it;
	struct proc_map m;
	bool found = false;
	ssize_t n;

	CHECK(proc_maps__parse_line(l1, &m), "l1");
	CHECK(m.lo == 0x7f12a0000000ull && m.hi == 0x7f12a0021000ull && m.offset == 0x2000, "l1 range");
	CHECK(!strcmp(m.perms, "r-xp") && m.maj == 0xfd && m.min == 1 && m.dev == (0xfdu << 20 | 1), "l1 dev");
	CHECK(m.ino == 1234567 && !strcmp(m.path, "/usr/lib/libc.so.6") && proc_map__is_file(&m), "l1 path '%s'", m.path);
	CHECK(proc_maps__parse_line(l2, &m) && !strcmp(m.path, "[heap]") && !proc_map__is_file(&m), "heap '%s'", m.path);
	CHECK(proc_maps__parse_line(l3, &m) && !strcmp(m.path, "") && m.ino == 0, "anonymous '%s'", m.path);
	CHECK(proc_maps__parse_line(l4, &m) && !strcmp(m.path, "/memfd:x (deleted)"), "deleted '%s'", m.path);
	CHECK(proc_maps__parse_line(l5, &m) && !strcmp(m.path, "/data/my file.bin") && m.maj == 0x103 && m.min == 2,
	      "spaces '%s' %x:%x", m.path, m.maj, m.min);
	CHECK(!proc_maps__parse_line(l6, &m), "junk accepted");

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	CHECK(n > 0, "readlink");
	exe[n > 0 ? n : 0] = 0;
	CHECK(proc_maps__open(&it, getpid()) == 0, "open self");
	while (proc_maps__next(&it, &m) > 0)
		if (!strcmp(m.path, exe) && strchr(m.perms, 'x') &&
		    (uint64_t)(uintptr_t)main >= m.lo && (uint64_t)(uintptr_t)main < m.hi) {
			struct stat st;

			found = stat(exe, &st) == 0 && st.st_ino == m.ino;
		}
	proc_maps__close(&it);
	CHECK(found, "this program (%s) holding main() not found in /proc/self/maps", exe);
	CHECK(proc_maps__open(&it, 0x7ffffff0) != 0, "a pid that cannot exist opened");
	return unit_done("unit_maps");
}
