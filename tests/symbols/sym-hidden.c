/* SPDX-License-Identifier: MIT */
/*
 * A shared library whose exports have functions between them that no
 * .dynsym lists (one static, one visibility-hidden), for the symbol-table
 * tests (test-symbols-elf.c), built -O2 -g with a build id, the
 * functions in the order written (GCC's -fno-toplevel-reorder). Each
 * function starts 64-aligned and is shorter than that, so padding follows
 * each, and records a return address inside itself, as a stack the probe
 * records holds them, and the line of that call.
 */
#include "sym-hidden.h"

/* Not inlined, not cloned, 64-aligned: each point is in code of its own, padding after it. */
#if defined(__clang__)
#define ALONE __attribute__((noinline, aligned(64)))
#else
#define ALONE __attribute__((noipa, aligned(64)))
#endif

/* The caller's return address: a point inside the caller. */
static ALONE void *here(void)
{
	return __builtin_return_address(0);
}

#define MARK(h, i) ((h)->line[i] = __LINE__, (h)->point[i] = here())

ALONE void sym_first(struct sym_hidden *h);
ALONE void sym_first(struct sym_hidden *h)
{
	MARK(h, SYM_IN_FIRST);
}

static ALONE void in_static(struct sym_hidden *h)
{
	MARK(h, SYM_IN_STATIC);
}

__attribute__((visibility("hidden"))) ALONE void in_hidden(struct sym_hidden *h);
__attribute__((visibility("hidden"))) ALONE void in_hidden(struct sym_hidden *h)
{
	MARK(h, SYM_IN_HIDDEN);
}

ALONE void sym_points(struct sym_hidden *h)
{
	sym_first(h);
	in_static(h);
	in_hidden(h);
	MARK(h, SYM_IN_LAST);
}
