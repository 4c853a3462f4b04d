/* SPDX-License-Identifier: MIT */
/*
 * Recorded allocations that are still live: address -> requested bytes and
 * category, so a free can carry the size of the allocation it ends. Only
 * the writer thread touches it (events reach it in time order), so there
 * is no lock anywhere a hook could find held. One open-addressing table of
 * 24-byte entries in mapped memory, 96 KiB at first, then between a quarter
 * and half full: 48 to 96 bytes per live recorded allocation, 144 while it
 * doubles (old and new tables both mapped). Every insert and remove is
 * counted in the live figures (figures.h).
 */
#ifndef CG_LIVE_H
#define CG_LIVE_H

#include <stdbool.h>
#include <stdint.h>

#include "event.h"
#include "figures.h"

struct cg_live {
	uint64_t size;    /* requested bytes, below 2^52 */
	uint8_t category; /* enum cgtrace_category */
	uint8_t device;   /* a device source's index, or CG_PROBE_HOST (heap and pinned memory) */
	uint64_t ord;     /* the compact encoder's ordinal of the alloc, for its free */
};

/* size: 52 bits of bytes, 8 of device, 4 of category. */
#define CG_LIVE_DEV_SHIFT 52
#define CG_LIVE_CAT_SHIFT 60
#define CG_LIVE_SIZE_MASK ((1ull << CG_LIVE_DEV_SHIFT) - 1)

struct cg_live_entry {
	uint64_t addr; /* 0 = empty */
	uint64_t size;
	uint64_t ord;
};

/* A virtual memory reservation's key: bit 63 keeps it apart from any address. */
#define CG_LIVE_VMM_KEY (1ull << 63)

/* The key an event's block has in the table. */
static inline uint64_t cg_live_key(const struct cg_event *e)
{
	return (e->kind & CG_PROBE_VMM) ? e->addr | CG_LIVE_VMM_KEY : e->addr;
}

/* Inline below: the writer looks up every event, and a call cost as much as the lookup. */
struct cg_live_table {
	struct cg_live_entry *slots;
	uint64_t mask; /* capacity - 1, 0 when no table yet */
	uint64_t count;
};
extern struct cg_live_table cg_live_t;

/*
 * Blocks of 64 slots (1.5 KiB of table, 24 cache lines) stand for 1 KiB
 * chunks of address space: the chunk number is Fibonacci-hashed to pick
 * the block, and the 16-byte offset in the chunk, turned by another part
 * of the same hash, picks the slot. Allocations made near each other in
 * memory, and so usually near each other in time, then share the table's
 * cache lines; with hundreds of thousands live, a scattering hash made
 * every insert and remove a trip to DRAM. Larger blocks kept more
 * locality but let busy chunks crowd each other in small tables. The
 * turn keeps addresses at the same offset in many chunks (page-aligned
 * blocks, large mmap()ed ones at +16) from piling up in one place.
 */
static inline uint64_t cg_live_slot(uint64_t addr, uint64_t mask)
{
	uint64_t h = (addr >> 10) * 0x9e3779b97f4a7c15ull;
	uint64_t offset = ((addr >> 4) + (h >> 56)) & 63;
	return (((h >> 24) << 6) | offset) & mask;
}

/* Doubles the table (the first one: 4096 slots); false when no memory could be had. */
bool cg_live_grow(void);

/*
 * Half full at most while the table stays cached; three quarters beyond,
 * where each probe is a trip to memory anyway and the next slots share
 * its lines: a framework's 330 k live allocations then take 12 MiB of
 * table, not 24, in a tool run to find out-of-memory.
 */
static inline bool cg_live_full(const struct cg_live_table *t)
{
	uint64_t cap = t->mask + 1, n = t->count + 1;
	return !t->mask || (cap <= (1u << 16) ? n * 2 > cap : n * 4 > cap * 3);
}

/* Puts key in a table with room for it. */
static inline void cg_live_put(struct cg_live_table *t, uint64_t key, const struct cg_live *v)
{
	uint64_t i = cg_live_slot(key, t->mask);
	/* An address is live once; an entry still there means a free we never saw. */
	while (t->slots[i].addr && t->slots[i].addr != key)
		i = (i + 1) & t->mask;
	if (!t->slots[i].addr)
		t->count++;
	else
		cg_figures_sub((uint8_t)(t->slots[i].size >> CG_LIVE_DEV_SHIFT), key,
			       t->slots[i].size & CG_LIVE_SIZE_MASK);
	cg_figures_add(v->device, key, v->size & CG_LIVE_SIZE_MASK);
	t->slots[i].addr = key;
	t->slots[i].size = (v->size & CG_LIVE_SIZE_MASK) |
	                   ((uint64_t)v->device << CG_LIVE_DEV_SHIFT) |
	                   ((uint64_t)(v->category & 15) << CG_LIVE_CAT_SHIFT);
	t->slots[i].ord = v->ord;
}

/* cg_live_insert into a table that must grow first. */
bool cg_live_insert_grown(uint64_t key, const struct cg_live *v);

/*
 * Returns false when no memory could be had for the table. The growth is
 * a call of its own: with it here, every insert saved and restored
 * registers for it.
 */
static inline bool cg_live_insert(uint64_t key, const struct cg_live *v)
{
	struct cg_live_table *t = &cg_live_t;
	if (__builtin_expect(cg_live_full(t), 0))
		return cg_live_insert_grown(key, v);
	cg_live_put(t, key, v);
	return true;
}

/*
 * Removes key; true with what was recorded for it. Inlined into the
 * writer's loop, where the slot was prefetched: with the figures' count
 * gcc made it a call, and the writer took a quarter longer an event with
 * two million blocks live (bench/live-bench).
 */
static inline __attribute__((always_inline)) bool cg_live_remove(uint64_t key,
								 struct cg_live *v)
{
	struct cg_live_table *t = &cg_live_t;
	if (!t->mask)
		return false;
	uint64_t i = cg_live_slot(key, t->mask);
	while (t->slots[i].addr != key) {
		if (!t->slots[i].addr)
			return false;
		i = (i + 1) & t->mask;
	}
	uint64_t size = t->slots[i].size;
	v->size = size & CG_LIVE_SIZE_MASK;
	v->device = (uint8_t)(size >> CG_LIVE_DEV_SHIFT);
	v->category = (uint8_t)(size >> CG_LIVE_CAT_SHIFT);
	v->ord = t->slots[i].ord;
	cg_figures_sub(v->device, key, v->size);
	/* Backward-shift deletion keeps probe chains intact without tombstones. */
	for (uint64_t j = i;;) {
		j = (j + 1) & t->mask;
		if (!t->slots[j].addr)
			break;
		uint64_t home = cg_live_slot(t->slots[j].addr, t->mask);
		if (((j - home) & t->mask) >= ((j - i) & t->mask)) {
			t->slots[i] = t->slots[j];
			i = j;
		}
	}
	t->slots[i].addr = 0;
	t->count--;
	return true;
}

/* Starts loading key's slot into the cache, ahead of an insert or remove. */
static inline void cg_live_prefetch(uint64_t key)
{
	if (cg_live_t.mask)
		__builtin_prefetch(&cg_live_t.slots[cg_live_slot(key, cg_live_t.mask)], 1);
}
/* Whether the table has outgrown the caches, so that prefetching pays. */
bool cg_live_large(void);
/* The table's bytes resident now. */
size_t cg_live_resident(void);
/* A new session starts with nothing live. */
void cg_live_clear(void);
/*
 * A fork child keeps only the host's blocks: device memory belongs to the
 * parent's context, which does not survive fork.
 */
void cg_live_keep_host(void);

#endif
