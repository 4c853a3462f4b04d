/* SPDX-License-Identifier: MIT */
/* Marked parameter memory (param_ranges.h). */
#include "param_ranges.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The first range whose end is past addr. */
static size_t lower(const struct cg_param_ranges *p, uint64_t addr)
{
	size_t lo = 0, hi = p->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->r[2 * mid + 1] <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int add_one(struct cg_param_ranges *p, uint64_t start, uint64_t end)
{
	/* Ranges that touch [start, end) are merged into it: from i up to j. */
	size_t i = p->n ? lower(p, start) : 0;
	if (i > 0 && p->r[2 * (i - 1) + 1] == start)
		i--;
	size_t j = i;
	while (j < p->n && p->r[2 * j] <= end) {
		if (p->r[2 * j] < start)
			start = p->r[2 * j];
		if (p->r[2 * j + 1] > end)
			end = p->r[2 * j + 1];
		j++;
	}
	if (j == i && p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 16;
		uint64_t *r = realloc(p->r, 2 * cap * sizeof(*r));
		if (!r)
			return -ENOMEM;
		p->r = r;
		p->cap = cap;
	}
	memmove(&p->r[2 * (i + 1)], &p->r[2 * j], 2 * (p->n - j) * sizeof(*p->r));
	p->r[2 * i] = start;
	p->r[2 * i + 1] = end;
	p->n = p->n - (j - i) + 1;
	return 0;
}

int cg_param_ranges_add(struct cg_param_ranges *p, const uint64_t *pairs, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		int r = add_one(p, pairs[2 * k], pairs[2 * k + 1]);
		if (r < 0)
			return r;
	}
	return 0;
}

bool cg_param_ranges_has(const struct cg_param_ranges *p, uint64_t addr, uint64_t bytes)
{
	size_t i = lower(p, addr);
	if (i >= p->n)
		return false;
	uint64_t rs = p->r[2 * i], re = p->r[2 * i + 1];
	return rs == addr || (rs <= addr && bytes <= re - addr);
}

void cg_param_ranges_free(struct cg_param_ranges *p)
{
	free(p->r);
	*p = (struct cg_param_ranges){0};
}

bool cg_param_addr(const char *id, uint64_t *addr)
{
	if (!id || id[0] != '0' || (id[1] != 'x' && id[1] != 'X'))
		return false;
	uint64_t v = 0;
	size_t n = 0;
	for (const char *c = id + 2; *c; c++, n++) {
		unsigned d;
		if (*c >= '0' && *c <= '9')
			d = (unsigned)(*c - '0');
		else if (*c >= 'a' && *c <= 'f')
			d = (unsigned)(*c - 'a' + 10);
		else if (*c >= 'A' && *c <= 'F')
			d = (unsigned)(*c - 'A' + 10);
		else
			return false;
		if (n == 16)
			return false;
		v = v << 4 | d;
	}
	*addr = v;
	return n > 0;
}
