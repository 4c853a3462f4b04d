/* SPDX-License-Identifier: MIT */
/*
 * Recorded allocations that are still live: address -> requested bytes and
 * category, so a free can carry the size of the allocation it ends. Only
 * the writer thread touches it (events reach it in time order), so there
 * is no lock anywhere a hook could find held. One open-addressing table of
 * 24-byte entries in mapped memory, 96 KiB at first, then between a quarter
 * and half full: 48 to 96 bytes per live recorded allocation, 144 while it
 * doubles (old and new tables both mapped).
 */
#ifndef CG_LIVE_H
#define CG_LIVE_H

#include <stdbool.h>
#include <stdint.h>

struct cg_live {
	uint64_t size;    /* requested bytes, below 2^52 */
	uint8_t category; /* enum cgtrace_category */
	uint8_t device;   /* a device source's index, or CG_PROBE_HOST (heap and pinned memory) */
	uint64_t ord;     /* the compact encoder's ordinal of the alloc, for its free */
};

/* Returns false when no memory could be had for the table. */
bool cg_live_insert(uint64_t key, const struct cg_live *v);
/* Removes key; true with what was recorded for it. */
bool cg_live_remove(uint64_t key, struct cg_live *v);
/* Starts loading key's slot into the cache, ahead of an insert or remove. */
void cg_live_prefetch(uint64_t key);
/* Whether the table has outgrown the caches, so that prefetching pays. */
bool cg_live_large(void);
/* A new session (fork child) starts with nothing live. */
void cg_live_clear(void);

#endif
