/* SPDX-License-Identifier: MIT */
/*
 * Conversions of JSON number tokens with the reference reader's (serde_json's)
 * semantics: integers are exact, doubles correctly rounded, and neither
 * depends on the process locale.
 */
#ifndef CG_NUM_SCAN_H
#define CG_NUM_SCAN_H

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
 * s[0..n) need not be NUL-terminated. Returns 0 with the correctly rounded
 * value (underflow gives 0 or a subnormal, `-0` gives -0.0), -ERANGE when the
 * value overflows to infinity (serde_json rejects 1e400), -EINVAL when s is not
 * a valid JSON number, or -ENOMEM. *out is only written on success. Thread-safe.
 */
int cg_scan_f64(const char *s, size_t n, double *out);

#endif
