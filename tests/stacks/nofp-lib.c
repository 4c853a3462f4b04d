/* SPDX-License-Identifier: MIT */
/*
 * Built twice (tests/meson.build): with -fomit-frame-pointer (unwind
 * tables kept, as every distribution builds), and also without unwind
 * tables, so the unwinder has to guess its way through nofp_call.
 */
#include <stddef.h>

__attribute__((noinline)) void *nofp_call(void *(*cb)(size_t), size_t n)
{
	volatile char pad[64];
	pad[0] = (char)n;
	void *p = cb(n + (size_t)pad[0] * 0);
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}
