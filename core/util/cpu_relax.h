/* SPDX-License-Identifier: MIT */
/* A spin-wait's pause: the core told it waits, so its sibling thread runs and the bus rests. */
#ifndef CG_CPU_RELAX_H
#define CG_CPU_RELAX_H

static inline void cg_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield");
#endif
}

#endif
