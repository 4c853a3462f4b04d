/* SPDX-License-Identifier: MIT */
/*
 * Output of the CUDA test programs, in the line format of the preload suite
 * (tests/preload/prog.h) so the same test code can read both. Lines go out
 * with write(2) from a stack buffer: no heap use of our own in the traces.
 *
 * Every line is "PID PROG KIND REST", PROG being the program's file name:
 *   A OP PTR BYTES WHERE [EXTRA]  a block the program got: OP the function it
 *                                 called (the exported symbol), PTR as %p prints
 *                                 it, WHERE `cuda:N` or `cpu`, EXTRA `managed`
 *                                 (managed memory) or `pinned` (page-locked host
 *                                 memory) and key=value details
 *   F OP PTR BYTES WHERE [EXTRA]  a block it ends, BYTES the size it was given
 *   E OP BYTES ERROR untouched|clobbered
 *                                 an allocation that failed with ERROR and left
 *                                 (or not) the program's output variable as it was
 *   V WHAT ...                    virtual memory management (drv-dlopen):
 *                                 `V create HANDLE BYTES cuda:N`, `V reserve PTR BYTES`,
 *                                 `V map PTR BYTES HANDLE OFFSET`, `V unmap PTR BYTES`,
 *                                 `V release HANDLE`, `V free-va PTR BYTES`
 *   R TEXT                        a result that must not change under the probe
 *   S KEY VALUE                   a value that may differ between runs or machines
 * A program exits 0 when everything went as the CUDA documentation says,
 * allocations failing for lack of memory included; 1 when not.
 */
#ifndef CG_TEST_CUDA_PROG_H
#define CG_TEST_CUDA_PROG_H

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char *prog_name = "?";
static int prog_failed;

static void prog_init(const char *argv0)
{
	const char *slash = strrchr(argv0, '/');
	prog_name = slash ? slash + 1 : argv0;
}

#define SAY_NAME prog_name
#include "../lib/prog-say.h"

/* A check that failed: an R line the tests will not expect, and exit status 1. */
__attribute__((format(printf, 1, 2))) static inline void fail(const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	say("R FAILED %s", msg);
	prog_failed = 1;
}

/* A device address as glibc's %p prints a pointer. */
static inline const char *hex(unsigned long long v, char buf[32])
{
	if (!v)
		snprintf(buf, 32, "(nil)");
	else
		snprintf(buf, 32, "0x%llx", v);
	return buf;
}

#endif
