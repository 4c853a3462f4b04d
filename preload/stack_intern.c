/* SPDX-License-Identifier: MIT */
#include "stack_intern.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>

#include "event.h"


/*
 * Open addressing, at most half full: 1 M distinct stacks in a trace. The
 * frames go to an arena of words, each stack's count first. Past either
 * limit a new stack is not interned and its allocations carry none.
 */
#define TABLE_BITS 21
#define TABLE_SLOTS (1u << TABLE_BITS)
#define ARENA_WORDS (1u << 25) /* 256 MiB of frames */

struct slot {
	uint64_t hash;
	uint32_t word; /* arena index of the frame count, + 1; 0: empty */
	uint32_t id;   /* trace id, 0 until first used; FAILED when it could not be */
	uint32_t gen;  /* the unload generation it was defined in: only its own matches */
	uint32_t pad;
};
#define FAILED UINT32_MAX

static struct {
	struct slot *slots;
	uint64_t *arena;
	uint32_t *map; /* transport id -> slot + 1 */
	uint32_t count, next_id, map_hi, gen;
	uint64_t words;
	bool ok;
} t;

static void *reserve(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
	               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

/* Back to zero pages: what the last trace touched costs nothing any more. */
static void clear(void *p, size_t len)
{
	if (len)
		madvise(p, len, MADV_DONTNEED);
}

int cg_intern_reset(void)
{
	if (!t.slots) {
		t.slots = reserve(TABLE_SLOTS * sizeof(struct slot));
		t.arena = reserve(ARENA_WORDS * sizeof(uint64_t));
		t.map = reserve(((size_t)CG_STACK_IDS_MAX + 1) * sizeof(uint32_t));
		t.ok = t.slots && t.arena && t.map;
		if (!t.ok)
			return -ENOMEM;
	} else if (t.ok) {
		clear(t.slots, TABLE_SLOTS * sizeof(struct slot));
		clear(t.arena, t.words * sizeof(uint64_t));
		clear(t.map, ((size_t)t.map_hi + 1) * sizeof(uint32_t));
	}
	t.count = t.next_id = t.map_hi = t.gen = 0;
	t.words = 0;
	return t.ok ? 0 : -ENOMEM;
}

static bool same(const struct slot *s, const uint64_t *frames, uint32_t n)
{
	const uint64_t *w = &t.arena[s->word - 1];
	return w[0] == n && memcmp(w + 1, frames, n * sizeof(uint64_t)) == 0;
}

void cg_intern_define(uint32_t tid, uint64_t hash, const uint64_t *frames, uint32_t n)
{
	if (!t.ok || tid == 0 || tid > CG_STACK_IDS_MAX || n == 0)
		return;
	uint32_t i = (uint32_t)(hash >> (64 - TABLE_BITS));
	for (;; i = (i + 1) & (TABLE_SLOTS - 1)) {
		struct slot *s = &t.slots[i];
		if (!s->word)
			break;
		/* Frames, not the hash alone, decide: two stacks never share an id. */
		if (s->hash == hash && s->gen == t.gen && same(s, frames, n)) {
			t.map[tid] = i + 1;
			goto mapped;
		}
	}
	if (t.count >= TABLE_SLOTS / 2 || t.words + 1 + n > ARENA_WORDS)
		return;
	t.arena[t.words] = n;
	memcpy(&t.arena[t.words + 1], frames, n * sizeof(uint64_t));
	t.slots[i] = (struct slot){hash, (uint32_t)t.words + 1, 0, t.gen, 0};
	t.words += 1 + n;
	t.count++;
	t.map[tid] = i + 1;
mapped:
	if (tid > t.map_hi)
		t.map_hi = tid;
}

struct cg_stack_use cg_intern_use(uint32_t tid)
{
	struct cg_stack_use u = {0, NULL, 0};
	if (!t.ok || tid == 0 || tid > t.map_hi || !t.map[tid])
		return u;
	struct slot *s = &t.slots[t.map[tid] - 1];
	if (s->id == FAILED)
		return u;
	if (!s->id) {
		s->id = ++t.next_id;
		u.frames = &t.arena[s->word];
		u.n_frames = (uint32_t)t.arena[s->word - 1];
	}
	u.id = s->id;
	return u;
}

void cg_intern_unload(void)
{
	t.gen++;
}

void cg_intern_failed(uint64_t id)
{
	/* Rare enough (a definition the encoder refused) for a scan. */
	for (uint32_t i = 0; i < TABLE_SLOTS && id; i++)
		if (t.slots[i].word && t.slots[i].id == id) {
			t.slots[i].id = FAILED;
			return;
		}
}
