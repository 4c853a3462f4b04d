/* SPDX-License-Identifier: MIT */
#include "live.h"

#include <stddef.h>
#include <string.h>
#include <sys/mman.h>

#include "probe.h"
#include "resident.h"

struct cg_live_table cg_live_t;
#define t cg_live_t

/* Mapped, not malloc'ed: the writer must not need malloc while a crashing thread holds it. */
bool cg_live_grow(void)
{
	uint64_t cap = t.mask ? (t.mask + 1) * 2 : 4096;
	/*
	 * Populated up front: a lookup that reads an untouched page maps the
	 * zero page, and the insert that follows then copies it on write,
	 * which flushes the TLB of every CPU running the program (an IPI
	 * each, a tenth of the time with millions live).
	 */
	struct cg_live_entry *n = mmap(NULL, cap * sizeof(*n), PROT_READ | PROT_WRITE,
	                               MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (n == MAP_FAILED)
		return false;
	for (uint64_t i = 0; t.mask && i <= t.mask; i++) {
		if (!t.slots[i].addr)
			continue;
		uint64_t j = cg_live_slot(t.slots[i].addr, cap - 1);
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

bool cg_live_insert_grown(uint64_t key, const struct cg_live *v)
{
	if (!cg_live_grow())
		return false;
	cg_live_put(&t, key, v);
	return true;
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

void cg_live_keep_host(void)
{
	struct cg_live v;
	/* A removal shifts a later entry into slot i: look at it again. */
	for (uint64_t i = 0; t.mask && i <= t.mask;) {
		if (t.slots[i].addr &&
		    (uint8_t)(t.slots[i].size >> CG_LIVE_DEV_SHIFT) != CG_PROBE_HOST) {
			cg_live_remove(t.slots[i].addr, &v);
			continue;
		}
		i++;
	}
}

size_t cg_live_resident(void)
{
	return t.mask ? cg_resident(t.slots, (t.mask + 1) * sizeof(*t.slots)) : 0;
}
