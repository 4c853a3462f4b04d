/* SPDX-License-Identifier: MIT */
/* Sizes with their units (cli-size.h), one table of the units. */
#include "cli-size.h"

#include <string.h>

static const struct {
	const char *name;
	uint64_t factor;
} units[] = {
    {"", 1},
    {"B", 1},
    {"KiB", 1ull << 10},
    {"MiB", 1ull << 20},
    {"GiB", 1ull << 30},
    {"TiB", 1ull << 40},
    {"KB", 1000ull},
    {"MB", 1000000ull},
    {"GB", 1000000000ull},
    {"TB", 1000000000000ull},
};

bool cli_size_parse(const char *s, uint64_t *out)
{
	uint64_t whole = 0, frac = 0, frac_div = 1;
	const char *p = s;
	if (*p < '0' || *p > '9')
		return false;
	for (; *p >= '0' && *p <= '9'; p++) {
		uint64_t d = (uint64_t)(*p - '0');
		if (whole > (UINT64_MAX - d) / 10)
			return false;
		whole = whole * 10 + d;
	}
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9')
			return false;
		/* Nine decimals are more than any unit can tell apart from a byte. */
		for (; *p >= '0' && *p <= '9'; p++)
			if (frac_div < 1000000000ull) {
				frac = frac * 10 + (uint64_t)(*p - '0');
				frac_div *= 10;
			}
	}
	while (*p == ' ')
		p++;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(p, units[i].name) != 0)
			continue;
		uint64_t f = units[i].factor;
		if (whole > UINT64_MAX / f)
			return false;
		uint64_t v = whole * f;
		/* frac / frac_div of f, without overflow: f < 2^41, frac_div <= 10^9. */
		uint64_t part = (uint64_t)((unsigned __int128)frac * f / frac_div);
		if (v > UINT64_MAX - part)
			return false;
		*out = v + part;
		return true;
	}
	return false;
}
