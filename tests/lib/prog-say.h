/* SPDX-License-Identifier: MIT */
/*
 * The line writer of the programs the preload and CUDA suites run:
 * say("A malloc %p %zu", ...) writes "PID NAME A malloc ..." with one
 * write(2) from a stack buffer, so lines of several threads and processes
 * never mix and the writer itself puts nothing on the heap (stdio would,
 * and add records the program never asked for). Define SAY_NAME, an
 * expression giving the program's name, before including this.
 */
#ifndef CG_TEST_PROG_SAY_H
#define CG_TEST_PROG_SAY_H

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <unistd.h>

#ifndef SAY_NAME
#error "define SAY_NAME, the program's name, before including prog-say.h"
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

__attribute__((format(printf, 1, 2))) static void say(const char *fmt, ...)
{
	char line[512];
	int saved = errno;
	int at = snprintf(line, sizeof(line), "%d %s ", (int)getpid(), SAY_NAME);
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

#endif
