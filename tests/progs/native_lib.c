// SPDX-License-Identifier: MIT
/*
 * native_lib.c — a shared library built with frame pointers, called from
 * Python through ctypes (tests/progs/native_frames.py, t_native_frames.sh):
 * native_outer -> native_mid -> native_leaf_read, the last making read(2)
 * by its own syscall instruction (x86-64), so that each of the three is a
 * frame of the user stack at the read, at known functions of a known file.
 * Built -fno-omit-frame-pointer -fno-optimize-sibling-calls
 * (tests/tests.mk): no frame is skipped.
 */
#include <unistd.h>
#include <sys/syscall.h>

/* called after the read: native_leaf_read is no leaf, and keeps its frame
 * (a leaf without one hides its caller: docs/stacks.md) */
__attribute__((noinline)) void native_after(void *buf)
{
	__asm__ volatile("" : : "r"(buf) : "memory");
}

__attribute__((noinline)) long native_leaf_read(int fd, void *buf, long n)
{
	long r;

#if defined(__x86_64__)
	__asm__ volatile("syscall" : "=a"(r) : "0"((long)SYS_read), "D"((long)fd), "S"(buf), "d"(n)
			 : "rcx", "r11", "memory");
#else
	r = syscall(SYS_read, fd, buf, n);
#endif
	native_after(buf);
	return r;
}

__attribute__((noinline)) long native_mid(int fd, void *buf, long n)
{
	long r = native_leaf_read(fd, buf, n);

	__asm__ volatile("" ::: "memory");      /* a call, not a jump: its frame stays */
	return r;
}

__attribute__((noinline)) long native_outer(int fd, void *buf, long n)
{
	long r = native_mid(fd, buf, n);

	__asm__ volatile("" ::: "memory");
	return r;
}
