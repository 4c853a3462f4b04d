/* SPDX-License-Identifier: MIT */
#include "live.h"

#include <stdatomic.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>

#define SHARDS 256
#define CAT_SHIFT 60
#define SIZE_MASK ((1ull << CAT_SHIFT) - 1)

struct entry {
	uint64_t addr; /* 0 = empty */
	uint64_t size; /* requested bytes, category in the top 4 bits */
};

struct shard {
	_Alignas(64) atomic_flag lock;
	uint32_t count;
	uint32_t mask; /* capacity - 1, 0 when no table yet */
	struct entry *slots;
};

static struct shard shards[SHARDS];

static inline uint64_t mix(uint64_t a)
{
	a ^= a >> 33;
	a *= 0xff51afd7ed558ccdull;
	a ^= a >> 29;
	return a;
}

static inline struct shard *shard_of(uint64_t h)
{
	return &shards[h & (SHARDS - 1)];
}

static inline void lock(struct shard *s)
{
	while (atomic_flag_test_and_set_explicit(&s->lock, memory_order_acquire))
		__builtin_ia32_pause();
}

static inline void unlock(struct shard *s)
{
	atomic_flag_clear_explicit(&s->lock, memory_order_release);
}

static void put(struct entry *slots, uint32_t mask, uint64_t addr, uint64_t size)
{
	uint32_t i = (uint32_t)(mix(addr) >> 8) & mask;
	while (slots[i].addr)
		i = (i + 1) & mask;
	slots[i].addr = addr;
	slots[i].size = size;
}

static bool grow(struct shard *s)
{
	uint32_t cap = s->mask ? (s->mask + 1) * 2 : 256;
	struct entry *n = mmap(NULL, (size_t)cap * sizeof(*n), PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (n == MAP_FAILED)
		return false;
	for (uint32_t i = 0; s->mask && i <= s->mask; i++)
		if (s->slots[i].addr)
			put(n, cap - 1, s->slots[i].addr, s->slots[i].size);
	if (s->mask)
		munmap(s->slots, ((size_t)s->mask + 1) * sizeof(*s->slots));
	s->slots = n;
	s->mask = cap - 1;
	return true;
}

bool cg_live_insert(uint64_t addr, uint64_t size, uint8_t category)
{
	struct shard *s = shard_of(mix(addr));
	bool ok = true;
	lock(s);
	if ((s->count + 1) * 2 > s->mask + 1 || !s->mask)
		ok = grow(s);
	if (ok) {
		/* An address can only be live once; a stale entry (a free we missed) is replaced. */
		uint32_t i = (uint32_t)(mix(addr) >> 8) & s->mask;
		while (s->slots[i].addr && s->slots[i].addr != addr)
			i = (i + 1) & s->mask;
		if (!s->slots[i].addr)
			s->count++;
		s->slots[i].addr = addr;
		s->slots[i].size = (size & SIZE_MASK) | ((uint64_t)category << CAT_SHIFT);
	}
	unlock(s);
	return ok;
}

bool cg_live_remove(uint64_t addr, uint64_t *size, uint8_t *category)
{
	struct shard *s = shard_of(mix(addr));
	bool found = false;
	lock(s);
	uint32_t i = s->mask ? (uint32_t)(mix(addr) >> 8) & s->mask : 0;
	while (s->mask && s->slots[i].addr) {
		if (s->slots[i].addr == addr) {
			found = true;
			break;
		}
		i = (i + 1) & s->mask;
	}
	if (found) {
		*size = s->slots[i].size & SIZE_MASK;
		*category = (uint8_t)(s->slots[i].size >> CAT_SHIFT);
		/* Backward-shift deletion keeps probe chains intact without tombstones. */
		uint32_t j = i;
		for (;;) {
			j = (j + 1) & s->mask;
			if (!s->slots[j].addr)
				break;
			uint32_t home = (uint32_t)(mix(s->slots[j].addr) >> 8) & s->mask;
			if (((j - home) & s->mask) >= ((j - i) & s->mask)) {
				s->slots[i] = s->slots[j];
				i = j;
			}
		}
		s->slots[i].addr = 0;
		s->count--;
	}
	unlock(s);
	return found;
}

void cg_live_lock_all(void)
{
	for (int i = 0; i < SHARDS; i++)
		lock(&shards[i]);
}

void cg_live_unlock_all(void)
{
	for (int i = 0; i < SHARDS; i++)
		unlock(&shards[i]);
}

void cg_live_clear(void)
{
	for (int i = 0; i < SHARDS; i++) {
		struct shard *s = &shards[i];
		if (s->mask)
			munmap(s->slots, ((size_t)s->mask + 1) * sizeof(*s->slots));
		s->slots = NULL;
		s->mask = 0;
		s->count = 0;
	}
}
