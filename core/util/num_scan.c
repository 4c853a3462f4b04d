/* SPDX-License-Identifier: MIT */
#include "num_scan.h"

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Tokens up to this length convert without a heap copy (strtod needs a NUL). */
#define CG_NUM_INLINE 64

static inline bool cg_num_digit(char c)
{
	return (unsigned char)(c - '0') < 10;
}

static size_t cg_num_digits(const char *s, size_t p, size_t n)
{
	while (p < n && cg_num_digit(s[p]))
		p++;
	return p;
}

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? exactly. */
static bool cg_is_json_number(const char *s, size_t n)
{
	size_t p = 0, q;

	if (p < n && s[p] == '-')
		p++;
	if (p >= n || !cg_num_digit(s[p]))
		return false;
	q = s[p] == '0' ? p + 1 : cg_num_digits(s, p, n);
	p = q;
	if (p < n && s[p] == '.') {
		q = cg_num_digits(s, p + 1, n);
		if (q == p + 1)
			return false;
		p = q;
	}
	if (p < n && (s[p] == 'e' || s[p] == 'E')) {
		p++;
		if (p < n && (s[p] == '+' || s[p] == '-'))
			p++;
		q = cg_num_digits(s, p, n);
		if (q == p)
			return false;
		p = q;
	}
	return p == n;
}

int cg_scan_u64(const char *s, size_t n, uint64_t *out)
{
	const char *end;
	uint64_t v;
	int ret = cg_scan_u64_prefix(s, s + n, &v, &end);

	/* Trailing bytes make it no integer at all, before any overflow counts. */
	if (end != s + n)
		return -EINVAL;
	if (ret == 0)
		*out = v;
	return ret;
}

static _Atomic(locale_t) cg_c_loc;

/*
 * Created once and never freed: an application's setlocale() must not change
 * how a trace reads (a `,` decimal point would break every double).
 */
static locale_t cg_c_locale(void)
{
	locale_t loc = atomic_load_explicit(&cg_c_loc, memory_order_acquire);
	locale_t mine, expected = (locale_t)0;

	if (loc)
		return loc;
	mine = newlocale(LC_ALL_MASK, "C", (locale_t)0);
	if (!mine)
		return (locale_t)0;
	if (atomic_compare_exchange_strong_explicit(&cg_c_loc, &expected, mine,
	                                            memory_order_acq_rel, memory_order_acquire))
		return mine;
	freelocale(mine);
	return expected;
}

int cg_scan_f64(const char *s, size_t n, double *out)
{
	char small[CG_NUM_INLINE], *buf = small, *end;
	locale_t loc;
	double v;
	bool whole;

	if (!cg_is_json_number(s, n))
		return -EINVAL;
	loc = cg_c_locale();
	if (!loc)
		return -ENOMEM;
	if (n >= sizeof(small)) {
		buf = malloc(n + 1);
		if (!buf)
			return -ENOMEM;
	}
	memcpy(buf, s, n);
	buf[n] = '\0';
	v = strtod_l(buf, &end, loc);
	whole = end == buf + n;
	if (buf != small)
		free(buf);
	/* The grammar above is a subset of strtod's, so this only guards against libc surprises. */
	if (!whole)
		return -EINVAL;
	if (isinf(v))
		return -ERANGE;
	*out = v;
	return 0;
}

bool cg_scan_hex_id(const char *s, size_t n, bool *vmm, uint64_t *out)
{
	if (!s)
		return false;
	*vmm = n > 4 && memcmp(s, "vmm:", 4) == 0;
	if (*vmm)
		s += 4, n -= 4;
	if (n < 3 || n > 18 || s[0] != '0' || s[1] != 'x' || (s[2] == '0' && n > 3))
		return false;
	uint64_t v = 0;
	for (size_t i = 2; i < n; i++) {
		char c = s[i];
		unsigned d;
		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			d = (unsigned)(c - 'a' + 10);
		else
			return false;
		v = v << 4 | d;
	}
	*out = v;
	return true;
}
