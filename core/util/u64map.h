/* SPDX-License-Identifier: MIT */
/*
 * A small open-addressing multimap from a 64-bit key to a 32-bit value.
 * Several values may share one key: hash-consing tables store hashes as
 * keys and compare the candidates themselves.
 */
#ifndef CG_U64MAP_H
#define CG_U64MAP_H

#include <stdbool.h>
#include <stdint.h>

#include "hash.h"

struct cg_map {
	uint64_t *keys; /* key + 1, 0 = empty */
	uint32_t *vals;
	uint32_t mask;
	uint32_t count;
};

/* Adds val under key (never replaces); 0 or -ENOMEM. */
int cg_map_put(struct cg_map *m, uint64_t key, uint32_t val);
void cg_map_free(struct cg_map *m);

/*
 * Iterates the values stored under key: *pos starts at UINT32_MAX. Inline:
 * the document builder looks up every record's device, shape and class.
 */
static inline bool cg_map_next(const struct cg_map *m, uint64_t key, uint32_t *pos,
			       uint32_t *val)
{
	if (!m->mask)
		return false;
	uint32_t i = *pos == UINT32_MAX ? (uint32_t)cg_hash_mix64(key) & m->mask
					: (*pos + 1) & m->mask;
	for (;; i = (i + 1) & m->mask) {
		if (!m->keys[i])
			return false;
		if (m->keys[i] == key + 1) {
			*pos = i;
			*val = m->vals[i];
			return true;
		}
	}
}

#endif
