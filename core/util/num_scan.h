/* SPDX-License-Identifier: MIT */
/*
 * Conversions of JSON number tokens with the reference reader's (serde_json's)
 * semantics: integers are exact, doubles correctly rounded, and neither
 * depends on the process locale.
 */
#ifndef CG_NUM_SCAN_H
#define CG_NUM_SCAN_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * s[0..n) need not be NUL-terminated. Returns 0, or -EINVAL for anything but a
 * plain non-negative integer literal without leading zeros (`-0`, `-1`, `1.0`,
 * `1e3` and `01` are all -EINVAL), or -ERANGE above 18446744073709551615.
 * *out is only written on success.
 */
int cg_scan_u64(const char *s, size_t n, uint64_t *out);

/*
 * A tensor id as cgprobe writes addresses: `0x` and lowercase hex digits
 * without leading zeros (`0x0` for 0), after `vmm:` when *vmm is set on
 * return. False for anything else (the id is then a plain string). The
 * compact encoding packs exactly these (docs/compact-format.md).
 */
bool cg_scan_hex_id(const char *s, size_t n, bool *vmm, uint64_t *out);

/*
 * The digits at the start of [p, e), as cg_scan_u64 reads them, for scanners
 * that find the token's end as they go: *end is set past the digits. 0 with
 * *out set, -EINVAL without a digit or with a leading zero before another
 * digit, -ERANGE above 2^64 - 1. Inline: the fast parser reads four numbers
 * per record.
 */
static inline int cg_scan_u64_prefix(const char *p, const char *e, uint64_t *out,
				     const char **end)
{
	const char *s = p;
	uint64_t v = 0;
	bool over = false;

	while (p < e && (unsigned char)(*p - '0') < 10) {
		over |= __builtin_mul_overflow(v, 10, &v) ||
			__builtin_add_overflow(v, (uint64_t)(*p - '0'), &v);
		p++;
	}
	*end = p;
	if (p == s || (*s == '0' && p - s > 1))
		return -EINVAL;
	if (over)
		return -ERANGE;
	*out = v;
	return 0;
}

/*
 * s[0..n) need not be NUL-terminated. Returns 0 with the correctly rounded
 * value (underflow gives 0 or a subnormal, `-0` gives -0.0), -ERANGE when the
 * value overflows to infinity (serde_json rejects 1e400), -EINVAL when s is not
 * a valid JSON number, or -ENOMEM. *out is only written on success. Thread-safe.
 */
int cg_scan_f64(const char *s, size_t n, double *out);

#endif
