/* SPDX-License-Identifier: MIT */
/*
 * Analysis order of memory records: timestamp, then alloc before free, then
 * tensor_id bytewise; ties keep file order (a stable sort, as the format's rules ask).
 * Writers with several threads produce long sorted runs, so a natural merge
 * sort over 32-bit indices does little work and needs 8 bytes per record.
 */
#include "memory_order.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "doc.h"

static int mem_cmp(const struct cgtrace_doc *d, uint32_t ia, uint32_t ib)
{
	const struct cg_mem *a = CG_VEC_AT(&d->memory, struct cg_mem, ia);
	const struct cg_mem *b = CG_VEC_AT(&d->memory, struct cg_mem, ib);
	if (a->timestamp_ns != b->timestamp_ns)
		return a->timestamp_ns < b->timestamp_ns ? -1 : 1;
	uint8_t xa = cg_doc_class(d, a->cls)->action, xb = cg_doc_class(d, b->cls)->action;
	if (xa != xb)
		return xa < xb ? -1 : 1;
	return cg_strpool_cmp(&d->pool, a->tensor_id, b->tensor_id);
}

static void merge(const struct cgtrace_doc *d, const uint32_t *src, uint32_t *dst, size_t lo,
		  size_t mid, size_t hi)
{
	size_t i = lo, j = mid, k = lo;
	while (i < mid && j < hi)
		dst[k++] = mem_cmp(d, src[j], src[i]) < 0 ? src[j++] : src[i++];
	memcpy(dst + k, src + i, (mid - i) * sizeof(*dst));
	k += mid - i;
	memcpy(dst + k, src + j, (hi - j) * sizeof(*dst));
}

/* Run boundaries: runs[0] = 0 < runs[1] < ... < runs[n] = len. */
static size_t find_runs(const struct cgtrace_doc *d, size_t len, size_t *runs)
{
	size_t n = 0;
	runs[n++] = 0;
	for (size_t i = 1; i < len; i++)
		if (mem_cmp(d, (uint32_t)(i - 1), (uint32_t)i) > 0)
			runs[n++] = i;
	runs[n] = len;
	return n;
}

int cg_doc_memory_order(const struct cgtrace_doc *d, uint32_t **order)
{
	size_t len = d->memory.len;
	*order = NULL;
	if (len > UINT32_MAX)
		return -E2BIG;
	size_t n_runs = 0;
	for (size_t i = 1; i < len; i++)
		n_runs += mem_cmp(d, (uint32_t)(i - 1), (uint32_t)i) > 0;
	if (n_runs == 0)
		return 0;

	size_t *runs = malloc((n_runs + 2) * sizeof(*runs));
	uint32_t *a = malloc(len * sizeof(*a)), *b = malloc(len * sizeof(*b));
	if (!runs || !a || !b) {
		free(runs);
		free(a);
		free(b);
		return -ENOMEM;
	}
	for (size_t i = 0; i < len; i++)
		a[i] = (uint32_t)i;
	size_t n = find_runs(d, len, runs);
	while (n > 1) {
		size_t m = 0;
		for (size_t r = 0; r < n; r += 2) {
			if (r + 1 < n)
				merge(d, a, b, runs[r], runs[r + 1], runs[r + 2]);
			else
				memcpy(b + runs[r], a + runs[r], (runs[r + 1] - runs[r]) * sizeof(*a));
			runs[m++] = runs[r];
		}
		runs[m] = len;
		n = m;
		uint32_t *t = a;
		a = b;
		b = t;
	}
	free(runs);
	free(b);
	*order = a;
	return 0;
}
