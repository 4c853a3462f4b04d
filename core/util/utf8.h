/* SPDX-License-Identifier: MIT */
/* UTF-8 well-formedness (Unicode table 3-7), shared by the scanner and the formatter. */
#ifndef CG_UTF8_H
#define CG_UTF8_H

#include <stddef.h>
#include <stdint.h>

/*
 * Length of the well-formed sequence at s[0..n), n >= 1: no overlong forms,
 * no surrogates, nothing above U+10FFFF. Returns 0 for an ill-formed one and
 * sets *bad, when not NULL, to the length of its maximal ill-formed prefix
 * (Unicode's "maximal subpart", at least 1), which a writer replaces by
 * one U+FFFD.
 */
static inline size_t cg_utf8_seq(const uint8_t *s, size_t n, size_t *bad)
{
	uint8_t c = s[0], lo = 0x80, hi = 0xbf; /* range of the second byte */
	size_t len, i;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		if (c == 0xe0)
			lo = 0xa0; /* overlong below U+0800 */
		else if (c == 0xed)
			hi = 0x9f; /* surrogates U+D800..U+DFFF */
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		if (c == 0xf0)
			lo = 0x90; /* overlong below U+10000 */
		else if (c == 0xf4)
			hi = 0x8f; /* above U+10FFFF */
	} else {
		/* Continuation byte, overlong lead C0/C1 or F5..FF. */
		if (bad)
			*bad = 1;
		return 0;
	}
	for (i = 1; i < len && i < n; i++) {
		if (s[i] < lo || s[i] > hi)
			break;
		lo = 0x80;
		hi = 0xbf;
	}
	if (i == len)
		return len;
	if (bad)
		*bad = i;
	return 0;
}

#endif
