/* SPDX-License-Identifier: MIT */
/*
 * Recorded allocations that are still live: address -> requested bytes and
 * category, so a free can carry the size of the allocation it ends. 256
 * shards, each an open-addressing table under its own spinlock held for a
 * few instructions; no global lock. Tables are mapped memory, at most half
 * full: at most 64 bytes per live recorded allocation.
 */
#ifndef CG_LIVE_H
#define CG_LIVE_H

#include <stdbool.h>
#include <stdint.h>

/* Returns false when no memory could be had for the table (nothing recorded then). */
bool cg_live_insert(uint64_t addr, uint64_t size, uint8_t category);
/* Removes addr; true with its size and category when it was there. */
bool cg_live_remove(uint64_t addr, uint64_t *size, uint8_t *category);
/* Fork: the prepare handler takes every shard lock, parent and child release. */
void cg_live_lock_all(void);
void cg_live_unlock_all(void);
/* In the child after fork: forget everything (the child's trace starts empty). */
void cg_live_clear(void);

#endif
