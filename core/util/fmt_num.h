/* SPDX-License-Identifier: MIT */
/*
 * Number formatting for the JSONL writer: no locale, no allocation, no
 * printf, so it is safe and fast inside the preload probe.
 */
#ifndef CG_FMT_NUM_H
#define CG_FMT_NUM_H

#include <stddef.h>
#include <stdint.h>

/* Longest outputs, for callers sizing buffers. */
#define CG_FMT_U64_MAX 20
#define CG_FMT_F64_MAX 32

/* Writes v in decimal (no NUL) and returns the number of bytes written. */
size_t cg_fmt_u64(char out[CG_FMT_U64_MAX], uint64_t v);

/*
 * Writes the shortest decimal that strtod reads back as exactly x, spelled
 * like serde_json/ryu: `0.42`, `1.0`, `-0.0`, `1e20`, `1.5e300`, `5e-324`.
 * Scientific notation when the decimal exponent is < -5 or >= 16; always
 * a valid JSON number that reads as a float. x must be finite. No NUL is
 * written; returns the number of bytes (at most 24).
 */
size_t cg_fmt_f64(char out[CG_FMT_F64_MAX], double x);

/* Writes v in lowercase hex without leading zeros ("0" for 0, no "0x"); returns the length. */
#define CG_FMT_HEX_MAX 16
size_t cg_fmt_hex(char out[CG_FMT_HEX_MAX], uint64_t v);

#endif
