/* SPDX-License-Identifier: MIT */
/*
 * LEB128 varints and zigzag, as the compact encoding spells them
 * (docs/compact-format.md): 7 bits a byte, low bits first, the top bit set
 * on every byte but the last, at most 10 bytes for 64 bits.
 */
#ifndef CG_VARINT_H
#define CG_VARINT_H

#include <stddef.h>
#include <stdint.h>

#define CG_VARINT_MAX 10

/* Writes v at w (room for CG_VARINT_MAX bytes); returns the end. */
static inline uint8_t *cg_varint_put(uint8_t *w, uint64_t v)
{
	while (v >= 0x80) {
		*w++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*w++ = (uint8_t)v;
	return w;
}

/*
 * Reads a varint from [*p, end): 0 with *v and *p advanced, -1 when the
 * input ends inside it, -2 when it is longer than 10 bytes or overflows.
 */
static inline int cg_varint_get(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	const uint8_t *s = *p;
	uint64_t x = 0;
	for (unsigned shift = 0;; shift += 7) {
		if (s == end)
			return -1;
		uint8_t b = *s++;
		if (shift == 63 && b > 1)
			return -2;
		x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			break;
		if (shift == 63)
			return -2;
	}
	*p = s;
	*v = x;
	return 0;
}

static inline uint64_t cg_zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t cg_unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

#endif
