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
/* Same for a pointer: a block a failed realloc left live is still the program's. */
static inline void *opaque_ptr(void *p)
{
	void *volatile x = p;
	return x;
}

#endif

static void write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}

/* One line, one write(2): lines of several threads and processes never mix. */
__attribute__((format(printf, 1, 2))) static void say(const char *fmt, ...)
{
	char line[512];
	int saved = errno;
	int at = snprintf(line, sizeof(line), "%d %s ", (int)getpid(), PROG);
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line + at, sizeof(line) - (size_t)at - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	at += n;
	if ((size_t)at > sizeof(line) - 2)
		at = (int)sizeof(line) - 2;
	line[at++] = '\n';
	write_all(STDOUT_FILENO, line, (size_t)at);
	errno = saved;
}

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
