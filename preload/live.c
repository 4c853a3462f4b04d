/* SPDX-License-Identifier: MIT */
#include "live.h"

#include <stddef.h>
#include <string.h>
#include <sys/mman.h>

/* size: 52 bits of bytes, 8 of device, 4 of category. */
#define DEV_SHIFT 52
#define CAT_SHIFT 60
#define SIZE_MASK ((1ull << DEV_SHIFT) - 1)

struct entry {
	uint64_t addr; /* 0 = empty */
	uint64_t size;
	uint64_t ord;
};

static struct {
	struct entry *slots;
	uint64_t mask; /* capacity - 1, 0 when no table yet */
	uint64_t count;
} t;

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
static inline uint64_t slot_of(uint64_t addr, uint64_t mask)
{
	uint64_t h = (addr >> 10) * 0x9e3779b97f4a7c15ull;
	uint64_t offset = ((addr >> 4) + (h >> 56)) & 63;
	return (((h >> 24) << 6) | offset) & mask;
}

/* Mapped, not malloc'ed: the writer must not need malloc while a crashing thread holds it. */
static bool grow(void)
{
	uint64_t cap = t.mask ? (t.mask + 1) * 2 : 4096;
	/*
	 * Populated up front: a lookup that reads an untouched page maps the
	 * zero page, and the insert that follows then copies it on write,
	 * which flushes the TLB of every CPU running the program (an IPI
	 * each, a tenth of the time with millions live).
	 */
	struct entry *n = mmap(NULL, cap * sizeof(*n), PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (n == MAP_FAILED)
		return false;
	for (uint64_t i = 0; t.mask && i <= t.mask; i++) {
		if (!t.slots[i].addr)
			continue;
		uint64_t j = slot_of(t.slots[i].addr, cap - 1);
		while (n[j].addr)
			j = (j + 1) & (cap - 1);
		n[j] = t.slots[i];
	}
	if (t.mask)
		munmap(t.slots, (t.mask + 1) * sizeof(*t.slots));
	t.slots = n;
	t.mask = cap - 1;
	return true;
}

bool cg_live_insert(uint64_t addr, const struct cg_live *v)
{
	if ((!t.mask || (t.count + 1) * 2 > t.mask + 1) && !grow())
		return false;
	uint64_t i = slot_of(addr, t.mask);
	/* An address is live once; an entry still there means a free we never saw. */
	while (t.slots[i].addr && t.slots[i].addr != addr)
		i = (i + 1) & t.mask;
	if (!t.slots[i].addr)
		t.count++;
	t.slots[i].addr = addr;
	t.slots[i].size = (v->size & SIZE_MASK) | ((uint64_t)v->device << DEV_SHIFT) |
			  ((uint64_t)(v->category & 15) << CAT_SHIFT);
	t.slots[i].ord = v->ord;
	return true;
}

bool cg_live_remove(uint64_t addr, struct cg_live *v)
{
	if (!t.mask)
		return false;
	uint64_t i = slot_of(addr, t.mask);
	while (t.slots[i].addr != addr) {
		if (!t.slots[i].addr)
			return false;
		i = (i + 1) & t.mask;
	}
	v->size = t.slots[i].size & SIZE_MASK;
	v->device = (uint8_t)(t.slots[i].size >> DEV_SHIFT);
	v->category = (uint8_t)(t.slots[i].size >> CAT_SHIFT);
	v->ord = t.slots[i].ord;
	/* Backward-shift deletion keeps probe chains intact without tombstones. */
	for (uint64_t j = i;;) {
		j = (j + 1) & t.mask;
		if (!t.slots[j].addr)
			break;
		uint64_t home = slot_of(t.slots[j].addr, t.mask);
		if (((j - home) & t.mask) >= ((j - i) & t.mask)) {
			t.slots[i] = t.slots[j];
			i = j;
		}
	}
	t.slots[i].addr = 0;
	t.count--;
	return true;
}

void cg_live_prefetch(uint64_t addr)
{
	if (t.mask)
		__builtin_prefetch(&t.slots[slot_of(addr, t.mask)], 1);
}

/* 1.5 MiB of table: beyond what stays cached beside the output buffer. */
bool cg_live_large(void)
{
	return t.mask >= (1u << 16);
}

void cg_live_clear(void)
{
	if (t.mask)
		munmap(t.slots, (t.mask + 1) * sizeof(*t.slots));
	memset(&t, 0, sizeof(t));
}
