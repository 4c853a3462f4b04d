/* SPDX-License-Identifier: MIT */
#include "unwind.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

/*
 * A frame larger than this is taken as a broken rule or stack rather than
 * walked: the same sanity bound keeps a corrupt rbp from sending the walk
 * across the address space.
 */
#define FRAME_MAX (256ull << 20)

#if CG_CFI_FAST
static __attribute__((noinline)) const struct cg_cfi_rule *fill(struct cg_unwind_slot *s,
                                                                uint64_t pc)
{
	struct cg_cfi_rule r;
	cg_cfi_rule(pc, &r);
	/*
	 * The key last: a signal handler on this thread that unwinds meanwhile
	 * sees the slot empty or whole, never a new key beside an old rule.
	 */
	s->pc = 0;
	atomic_signal_fence(memory_order_seq_cst);
	s->rule = r;
	atomic_signal_fence(memory_order_seq_cst);
	s->pc = pc;
	return &s->rule;
}

static inline const struct cg_cfi_rule *rule_of(struct cg_unwind_cache *c, uint64_t pc)
{
	struct cg_unwind_slot *s = &c->slot[(pc * 0x9e3779b97f4a7c15ull) >> 52];
	_Static_assert(CG_UNWIND_SLOTS == 1u << 12, "the slot is the hash's top 12 bits");
	if (__builtin_expect(s->pc == pc, 1))
		return &s->rule;
	return fill(s, pc);
}

static inline uint64_t word_at(uint64_t addr)
{
	uint64_t v;
	memcpy(&v, (const void *)(uintptr_t)addr, 8);
	return v;
}

/*
 * Whether every stack word the kept walk read past frame `from` holds
 * what it held then: independent loads, issued together.
 */
static inline bool tail_holds(const struct cg_unwind_walk *w, uint32_t from)
{
	uint64_t diff = 0;
	for (uint32_t i = from; i < w->n; i++) {
		const struct cg_unwind_frame *f = &w->f[i];
		diff |= word_at(f->cfa - 8) ^ f->ra;
		if (f->bp_off && f->bp_live)
			diff |= word_at(f->cfa + (uint64_t)(int64_t)f->bp_off) ^ f->bp;
	}
	return diff == 0;
}

/*
 * Whether a frame stepped to (cfa, ra, bp) is the kept frame k: the same
 * CFA and return address, and the same rbp where a later CFA depends on it.
 */
static inline bool same_frame(const struct cg_unwind_frame *k, uint64_t cfa, uint64_t ra,
			      uint64_t bp)
{
	return k->cfa == cfa && k->ra == ra && (k->bp == bp || !k->bp_live);
}

static void forget_walks(struct cg_unwind_cache *c, uint32_t epoch)
{
	memset(c->slot, 0, sizeof(c->slot));
	c->walk[0].n = c->walk[1].n = 0;
	c->epoch = epoch;
}

/* Which frames' rbp a later CFA depends on, from the outermost in. */
static void settle(struct cg_unwind_walk *w)
{
	bool live = false;
	for (uint32_t i = w->n; i-- > 0;) {
		w->f[i].bp_live = live;
		live = w->f[i].cfa_bp || (w->f[i].bp_off == 0 && live);
	}
}

/*
 * The walk being recorded (next, frames 0..k) meets the kept one (last)
 * at its frame j: next takes last's frames past j and becomes the kept
 * walk, unless it is last's very frames.
 */
static void join_walks(struct cg_unwind_cache *c, uint32_t k, uint32_t j)
{
	struct cg_unwind_walk *last = &c->walk[c->last], *next = &c->walk[c->last ^ 1];
	if (k == j) {
		uint32_t i = 0;
		while (i <= k && same_frame(&last->f[i], next->f[i].cfa, next->f[i].ra, next->f[i].bp))
			i++;
		if (i > k)
			return;
	}
	uint32_t tail = last->n - j - 1;
	if (k + 1 + tail > CG_UNWIND_KEPT)
		return;
	memcpy(&next->f[k + 1], &last->f[j + 1], tail * sizeof(*next->f));
	next->n = k + 1 + tail;
	settle(next);
	c->last ^= 1;
}
#endif

__attribute__((noinline)) int cg_unwind(void **out, int max, struct cg_unwind_cache *c,
                                        uint32_t epoch)
{
#if CG_CFI_FAST
	if (__builtin_expect(c->epoch != epoch, 0))
		forget_walks(c, epoch);
	uint64_t pc, sp, bp;
	/* This frame's own state: the rule at pc holds for sp and rbp as read here. */
	__asm__ volatile("lea 0(%%rip), %0\n\t"
	                 "mov %%rsp, %1\n\t"
	                 "mov %%rbp, %2"
	                 : "=&r"(pc), "=&r"(sp), "=&r"(bp));
	/* A walk interrupted by this one (a signal handler's) may be half recorded: no kept walks.
	 */
	bool recording = !(c->gen & 1), keep = recording;
	if (recording) {
		c->gen++;
		atomic_signal_fence(memory_order_seq_cst);
	}
	const struct cg_unwind_walk *last = &c->walk[c->last];
	struct cg_unwind_walk *next = &c->walk[c->last ^ 1];
	bool use = keep && last->n != 0;
	uint32_t j = 0;
	uint64_t key = pc;
	int n = 0, ret = -1;
	uint32_t kept = 0; /* frames of next to keep as the last walk; 0: keep last as it is */
	while (n < max) {
		const struct cg_cfi_rule *r = rule_of(c, key);
		if (__builtin_expect(r->kind != CG_CFI_STEP, 0)) {
			if (r->kind == CG_CFI_OUTERMOST) {
				ret = n;
				kept = (uint32_t)n;
			}
			break;
		}
		uint64_t cfa = (r->cfa_bp ? bp : sp) + (uint64_t)(int64_t)r->cfa_off;
		if (__builtin_expect(cfa <= sp || cfa - sp > FRAME_MAX || (cfa & 7), 0))
			break;
		uint64_t ra = word_at(cfa - 8);
		if (r->bp_off)
			bp = word_at(cfa + (uint64_t)(int64_t)r->bp_off);
		sp = cfa;
		if (keep && (uint32_t)n < CG_UNWIND_KEPT)
			next->f[n] = (struct cg_unwind_frame){cfa, ra, bp, r->bp_off, r->cfa_bp, 0};
		if (!ra) {
			/* The 0 read is part of the walk: a later one checks it too. */
			ret = n;
			kept = (uint32_t)n + 1;
			break;
		}
		out[n] = (void *)(uintptr_t)ra;
		if (use) {
			while (j < last->n && last->f[j].cfa < cfa)
				j++;
			if (j < last->n && same_frame(&last->f[j], cfa, ra, bp)) {
				/* One try: a failed check is not repeated frame after frame. */
				use = false;
				if (tail_holds(last, j + 1)) {
					uint32_t k = (uint32_t)n;
					for (uint32_t i = j + 1;
					     i < last->n && last->f[i].ra && n + 1 < max; i++)
						out[++n] = (void *)(uintptr_t)last->f[i].ra;
					if (keep && k < CG_UNWIND_KEPT)
						join_walks(c, k, j);
					ret = n + 1;
					keep = false; /* recorded */
					break;
				}
			}
		}
		n++;
		/* The call's own rule: a return address can be the first of the next function. */
		key = ra - 1;
	}
	if (n == max)
		ret = n;
	if (keep && kept && kept <= CG_UNWIND_KEPT) {
		next->n = kept;
		settle(next);
		c->last ^= 1;
	}
	if (recording) {
		atomic_signal_fence(memory_order_seq_cst);
		c->gen++;
	}
	return ret;
#else
	(void)out;
	(void)max;
	(void)c;
	(void)epoch;
	return -1;
#endif
}
