/* SPDX-License-Identifier: MIT */
/*
 * Shared by the programs the preload suite runs under libcgprobe.so. Output
 * goes out with write(2) from a stack buffer: stdio would put its buffer on
 * the heap and add records the program never asked for.
 *
 * Every line starts with "PID PROG " and then one of:
 *   A OP PTR BYTES          the program got a block (PTR as %p prints it)
 *   F OP PTR BYTES          it ended a block: free, or the old block of a realloc
 *   C PTR ACTION SPAN CAT   the record for PTR must carry span sSPAN and category CAT
 *   R TEXT                  a result that must not change under the probe
 *   S KEY VALUE             a number for the test that may differ between runs
 * tests/test-preload.c turns the A and F lines into the records it expects.
 */
#ifndef CG_TEST_PROG_H
#define CG_TEST_PROG_H

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifndef PROG
#error "define PROG, the program's name, before including prog.h"
#endif

#define SAY_NAME PROG
#include "../lib/prog-say.h"

/* Reports a block the program got (nothing for NULL) and hands it back. */
static inline void *got(const char *op, void *p, size_t n)
{
	if (p)
		say("A %s %p %zu", op, p, n);
	return p;
}

/* Reports a block the program is about to end; call it before the free. */
static inline void gone(const char *op, void *p, size_t n)
{
	if (p)
		say("F %s %p %zu", op, p, n);
}

static inline void where(void *p, const char *action, uint64_t span, const char *category)
{
	say("C %p %s %llu %s", p, action, (unsigned long long)span, category);
}

/* Keeps the compiler from proving anything about a value. */
static inline size_t opaque(size_t v)
{
	volatile size_t x = v;
	return x;
}

/* Same for a pointer: a block a failed realloc left live is still the program's. */
static inline void *opaque_ptr(void *p)
{
	void *volatile x = p;
	return x;
}

#endif
