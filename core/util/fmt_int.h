/* SPDX-License-Identifier: MIT */
/*
 * Integer digits, inline: the hot heap line formats four numbers, and
 * with the length of each known up front the compiler overlaps their
 * work instead of chaining four calls through the write pointer.
 */
#ifndef CG_FMT_INT_H
#define CG_FMT_INT_H

#include <stdint.h>
#include <string.h>

extern const char cg_digits2[200];      /* "00" .. "99" */
extern const uint64_t cg_pow10_u64[20]; /* 10^0 .. 10^19 */
extern const char cg_hex_pairs[513];    /* "00" .. "ff" */

/* Number of decimal digits of v (1 for 0). */
static inline unsigned cg_dec_len(uint64_t v)
{
	/* bits * log10(2) estimates the length; one comparison corrects it. */
	unsigned bits = 64 - (unsigned)__builtin_clzll(v | 1);
	unsigned n = (bits * 1233) >> 12;
	return v ? n + (v >= cg_pow10_u64[n]) : 1;
}

/* Writes exactly 8 digits of v < 10^8 ending just before end. */
static inline void cg_put_digits8(char *end, uint32_t v)
{
	for (int k = 0; k < 4; k++) {
		uint32_t q = v / 100;
		end -= 2;
		memcpy(end, cg_digits2 + 2 * (v - q * 100), 2);
		v = q;
	}
}

/*
 * Writes the n = cg_dec_len(v) digits of v ending just before end. Eight
 * digits are split off with one 64-bit division, the rest is 32-bit
 * arithmetic, which is markedly cheaper than 64-bit steps of two digits.
 */
static inline void cg_put_digits(char *end, uint64_t v)
{
	while (v > UINT32_MAX) {
		uint64_t q = v / 100000000;
		cg_put_digits8(end, (uint32_t)(v - q * 100000000));
		end -= 8;
		v = q;
	}
	uint32_t w = (uint32_t)v;
	while (w >= 100) {
		uint32_t q = w / 100;
		end -= 2;
		memcpy(end, cg_digits2 + 2 * (w - q * 100), 2);
		w = q;
	}
	if (w >= 10) {
		end -= 2;
		memcpy(end, cg_digits2 + 2 * w, 2);
	} else {
		*--end = (char)('0' + w);
	}
}

/* Number of hex digits of v (1 for 0). */
static inline unsigned cg_hex_len(uint64_t v)
{
	return v ? (64 - (unsigned)__builtin_clzll(v) + 3) / 4 : 1;
}

/* Writes the n = cg_hex_len(v) lowercase hex digits of v at out. */
static inline void cg_put_hex(char *out, uint64_t v, unsigned n)
{
	unsigned i = n;
	while (i >= 2) {
		memcpy(out + i - 2, cg_hex_pairs + 2 * (v & 0xff), 2);
		v >>= 8;
		i -= 2;
	}
	if (i)
		out[0] = cg_hex_pairs[2 * (v & 0xf) + 1];
}

#endif
