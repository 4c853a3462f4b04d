/* SPDX-License-Identifier: MIT */
/*
 * The binutils the symbol suites (test-symbols, test-symbols-cxx,
 * test-symbols-elf) hold cgtrace's symbols against and make their files
 * with: addr2line's frames for an address, and a copy of an ELF file made
 * by objcopy (stripped, or its debug part alone). Failures are Check
 * assertions: these run inside a test.
 */
#ifndef CG_TEST_BINUTILS_H
#define CG_TEST_BINUTILS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define A2L_MAX_CHAIN 64

/* One frame as addr2line prints it: the function, then FILE:LINE. */
struct a2l_frame {
	char function[8192];
	char file[8192];
	unsigned line; /* 0: "?" or 0, no line */
};

/*
 * addr2line's frames for one address of module, `addr2line -f FLAGS -e
 * MODULE OFFSET` ("-i -C", "" ...), into out (A2L_MAX_CHAIN of them); how
 * many. One process per address: addr2line remembers a name it looked up
 * for one address, and may give it to the next.
 */
size_t a2l(const char *flags, const char *module, uint64_t offset, struct a2l_frame *out);

/* Runs `objcopy ARGS IN OUT` ("--strip-debug", "--only-keep-debug" ...); it must succeed. */
void objcopy_to(const char *args, const char *in, const char *out);

/* True when the tool (addr2line, objcopy) runs: the suites are skipped (77) without it. */
bool binutil_present(const char *tool);

#endif
