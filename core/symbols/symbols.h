/* SPDX-License-Identifier: MIT */
/*
 * Offline symbols: the recorded return addresses of a trace's stacks
 * resolved after the run through elfutils' libdw, from the modules the
 * trace recorded (path, load bias, address range, build id). Defines the
 * cgtrace_symbols_* functions of cgtrace.h; this header adds what the
 * analyses use inside the library.
 */
#ifndef CG_SYMBOLS_H
#define CG_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

#include "cgtrace.h"

/* Where separate debug files are looked for by build id, besides /usr/lib/debug. */
#define CG_DEBUG_DIR_ENV "CGTRACE_DEBUG_DIR"

/* n bytes that live as long as the symbols (the analyses' resolved stacks); NULL: no memory. */
void *cg_symbols_alloc(struct cgtrace_symbols *s, size_t n);

#endif
