/* SPDX-License-Identifier: MIT */
/*
 * Growable arrays for the reader's big tables. Page faults dominate once a
 * trace holds millions of records (each 4 KiB page is zeroed on first use),
 * so arrays past 2 MiB live in their own mapping with transparent huge
 * pages requested and grow with mremap, which moves no bytes.
 */
#ifndef CG_BIGMEM_H
#define CG_BIGMEM_H

#include <stddef.h>

/* Like realloc for blocks made by cg_big_realloc; old is the current size in bytes. */
void *cg_big_realloc(void *p, size_t old, size_t n);
void cg_big_free(void *p, size_t size);

#endif
