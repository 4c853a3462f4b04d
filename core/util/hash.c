/* SPDX-License-Identifier: MIT */
#include "hash.h"

#include <string.h>

/* 32-bit FNV-1a over 8-byte words: cheap for the 2-20 byte strings of a trace. */
uint32_t cg_hash_bytes(const void *data, size_t n)
{
	const unsigned char *s = data;
	uint64_t h = 0xcbf29ce484222325ull ^ n;
	while (n >= 8) {
		uint64_t w;
		memcpy(&w, s, 8);
		h = (h ^ w) * 0x100000001b3ull;
		h ^= h >> 29;
		s += 8;
		n -= 8;
	}
	uint64_t w = 0;
	memcpy(&w, s, n);
	h = (h ^ w) * 0x100000001b3ull;
	h ^= h >> 32;
	h *= 0x9e3779b97f4a7c15ull;
	return (uint32_t)(h >> 32) | 1u;
}
