/* SPDX-License-Identifier: MIT */
/*
 * Eight bytes at a time: the scanners and the formatter skip the plain run
 * of a JSON string (printable ASCII other than `"` and `\`) a word at a time.
 */
#ifndef CG_SWAR_H
#define CG_SWAR_H

#include <stdint.h>

#define CG_SWAR_ONES 0x0101010101010101ull
#define CG_SWAR_HIGHS 0x8080808080808080ull

/*
 * The high bit of each byte of w (read little-endian) that is below 0x20,
 * `"`, `\` or 0x80 and above; 0 when all eight are plain. Borrows of the
 * "has a byte below n" tests only run upwards, so the lowest flagged byte
 * is exact (a flag above it may be spurious): callers take the lowest.
 */
static inline uint64_t cg_swar_special(uint64_t w)
{
	uint64_t q = w ^ (CG_SWAR_ONES * '"');
	uint64_t b = w ^ (CG_SWAR_ONES * '\\');
	uint64_t t = ((w - CG_SWAR_ONES * 0x20) & ~w) | ((q - CG_SWAR_ONES) & ~q) |
		     ((b - CG_SWAR_ONES) & ~b) | w;
	return t & CG_SWAR_HIGHS;
}

#endif
