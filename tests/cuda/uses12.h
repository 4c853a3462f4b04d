/* SPDX-License-Identifier: MIT */
/*
 * libuses12.so: a library linked against the second copy of the fake
 * runtime, libcudart.so.12, for a program that links libcudart.so.13 itself
 * (rt-two-copies.c). Each function prints cuda-prog.h's lines under the
 * program's name PROG.
 */
#ifndef USES12_H
#define USES12_H

#include <stddef.h>
#include <stdint.h>

/* Which fake runtime's memory p is in, from the addresses of fake-cudart.c. */
static inline const char *runtime_copy_of(const void *p)
{
	uintptr_t a = (uintptr_t)p >> 40;
	if (a >= 0x30 && a <= 0x32)
		return "libcudart.so.13";
	if (a >= 0x33 && a <= 0x35)
		return "libcudart.so.12";
	return "unknown";
}

/*
 * Makes DEVICE current in its runtime, then: cudaMalloc of bytes (A line,
 * *out the block), cudaMemGetInfo (S meminfo, R used), cudaMallocAsync +
 * cudaFreeAsync of 65536 bytes on the default stream (A, F). Returns 0, or
 * 1 when a call failed (R FAILED line).
 */
int uses12_alloc(const char *prog, int device, size_t bytes, void **out);
/* cudaFree of a block of its runtime (F line first). */
int uses12_free(void *p, size_t bytes, int device);
/* cudaFree of a block its runtime never gave: prints `R lib cudaFree(foreign) ERR`. */
void uses12_free_foreign(void *p);

typedef int (*uses12_alloc_fn)(const char *, int, size_t, void **);
typedef int (*uses12_free_fn)(void *, size_t, int);
typedef void (*uses12_free_foreign_fn)(void *);

#endif
