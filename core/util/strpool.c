/* SPDX-License-Identifier: MIT */
#include "strpool.h"

#include "bigmem.h"
#include "hash.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void cg_strpool_init(struct cg_strpool *p)
{
	memset(p, 0, sizeof(*p));
}

void cg_strpool_fini(struct cg_strpool *p)
{
	cg_big_free(p->data, p->data_cap);
	cg_big_free(p->offsets, (size_t)p->offsets_cap * sizeof(*p->offsets));
	cg_big_free(p->slots, p->mask ? ((size_t)p->mask + 1) * sizeof(*p->slots) : 0);
	memset(p, 0, sizeof(*p));
}

static int grow_slots(struct cg_strpool *p)
{
	uint32_t n = p->mask ? (p->mask + 1) * 2 : 1024;
	size_t bytes = (size_t)n * sizeof(uint64_t);
	uint64_t *slots = cg_big_realloc(NULL, 0, bytes);
	if (!slots)
		return -ENOMEM;
	if (bytes < (2u << 20))
		memset(slots, 0, bytes); /* fresh mappings are zero already */
	for (uint32_t i = 0; p->mask && i <= p->mask; i++) {
		uint64_t e = p->slots[i];
		if (!e)
			continue;
		uint32_t j = (uint32_t)(e >> 32) & (n - 1);
		while (slots[j])
			j = (j + 1) & (n - 1);
		slots[j] = e;
	}
	cg_big_free(p->slots, p->mask ? ((size_t)p->mask + 1) * sizeof(*p->slots) : 0);
	p->slots = slots;
	p->mask = n - 1;
	return 0;
}

static int reserve(struct cg_strpool *p, size_t bytes)
{
	if (p->count + 1 >= p->offsets_cap) {
		uint32_t cap = p->offsets_cap ? p->offsets_cap * 2 : 1024;
		if (cap <= p->offsets_cap)
			return -ENOMEM;
		uint32_t *o = cg_big_realloc(p->offsets, (size_t)p->offsets_cap * sizeof(*o),
					     (size_t)cap * sizeof(*o));
		if (!o)
			return -ENOMEM;
		p->offsets = o;
		p->offsets_cap = cap;
		if (p->count == 0)
			p->offsets[p->count++] = 0;
	}
	if (p->data_cap - p->data_len < bytes) {
		size_t cap = p->data_cap ? p->data_cap : 4096;
		while (cap - p->data_len < bytes)
			cap *= 2;
		/* Offsets are 32-bit: 4 GiB of distinct strings is the documented limit. */
		if (cap > UINT32_MAX)
			cap = UINT32_MAX;
		if (cap - p->data_len < bytes)
			return -E2BIG;
		char *d = cg_big_realloc(p->data, p->data_cap, cap);
		if (!d)
			return -ENOMEM;
		p->data = d;
		p->data_cap = cap;
	}
	/* Keep the table at most 5/8 full so probes stay short. */
	if (!p->mask || (uint64_t)p->count * 8 >= (uint64_t)(p->mask + 1) * 5)
		return grow_slots(p);
	return 0;
}

uint32_t cg_strpool_intern(struct cg_strpool *p, struct cg_sv s)
{
	if (!s.p || p->err)
		return CG_STR_NONE;
	uint32_t h = cg_hash_bytes(s.p, s.n);
	if (p->mask) {
		for (uint32_t i = h & p->mask;; i = (i + 1) & p->mask) {
			uint64_t e = p->slots[i];
			if (!e)
				break;
			if ((uint32_t)(e >> 32) != h)
				continue;
			uint32_t id = (uint32_t)e;
			const char *q = p->data + p->offsets[id];
			uint32_t n;
			memcpy(&n, q - 4, 4);
			if (n == s.n && memcmp(q, s.p, s.n) == 0)
				return id;
		}
	}
	int r = reserve(p, (size_t)s.n + 5);
	if (r < 0) {
		p->err = r;
		return CG_STR_NONE;
	}
	char *w = p->data + p->data_len;
	memcpy(w, &s.n, 4);
	memcpy(w + 4, s.p, s.n);
	w[4 + s.n] = '\0';
	uint32_t id = p->count++;
	p->offsets[id] = (uint32_t)(p->data_len + 4);
	p->data_len += (size_t)s.n + 5;
	uint32_t i = h & p->mask;
	while (p->slots[i])
		i = (i + 1) & p->mask;
	p->slots[i] = ((uint64_t)h << 32) | id;
	return id;
}

int cg_strpool_cmp(const struct cg_strpool *p, uint32_t a, uint32_t b)
{
	if (a == b)
		return 0;
	uint32_t na = cg_strpool_len(p, a), nb = cg_strpool_len(p, b);
	const char *sa = cg_strpool_get(p, a), *sb = cg_strpool_get(p, b);
	int c = memcmp(sa ? sa : "", sb ? sb : "", na < nb ? na : nb);
	if (c)
		return c;
	return na < nb ? -1 : na > nb;
}
