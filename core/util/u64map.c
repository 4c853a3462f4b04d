/* SPDX-License-Identifier: MIT */
#include "u64map.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int map_grow(struct cg_map *m)
{
	uint32_t n = m->mask ? (m->mask + 1) * 2 : 64;
	uint64_t *keys = calloc(n, sizeof(*keys));
	uint32_t *vals = malloc((size_t)n * sizeof(*vals));
	if (!keys || !vals) {
		free(keys);
		free(vals);
		return -ENOMEM;
	}
	for (uint32_t i = 0; m->mask && i <= m->mask; i++) {
		if (!m->keys[i])
			continue;
		uint32_t j = (uint32_t)cg_hash_mix64(m->keys[i] - 1) & (n - 1);
		while (keys[j])
			j = (j + 1) & (n - 1);
		keys[j] = m->keys[i];
		vals[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = keys;
	m->vals = vals;
	m->mask = n - 1;
	return 0;
}

void cg_map_free(struct cg_map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

int cg_map_put(struct cg_map *m, uint64_t key, uint32_t val)
{
	if (!m->mask || (m->count + 1) * 4 >= (m->mask + 1) * 3) {
		int r = map_grow(m);
		if (r < 0)
			return r;
	}
	uint32_t i = (uint32_t)cg_hash_mix64(key) & m->mask;
	while (m->keys[i])
		i = (i + 1) & m->mask;
	m->keys[i] = key + 1;
	m->vals[i] = val;
	m->count++;
	return 0;
}
