/* SPDX-License-Identifier: MIT */
/* The core's hash functions: one for byte strings, one to mix 64-bit keys. */
#ifndef CG_HASH_H
#define CG_HASH_H

#include <stddef.h>
#include <stdint.h>

/* Never 0, so that tables may keep 0 for an empty slot. */
uint32_t cg_hash_bytes(const void *p, size_t n);

/* The murmur3 finalizer: every input bit reaches every output bit. */
static inline uint64_t cg_hash_mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

#endif
