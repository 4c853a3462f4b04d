/* SPDX-License-Identifier: MIT */
#include "stack_intern.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>

#include "event.h"
#include "hash.h"
#include "options.h"
#include "resident.h"

/*
 * Memory, about 12 to 16 bytes a node: the nodes in an array by id (the
 * index of their address in a table of distinct addresses, and their
 * parent), and an open-addressing index of node ids keyed by (parent,
 * address), at most three quarters full; a slot keeps 7 bits of the hash
 * beside the id, so a probe seldom reads a node that is not the one. The
 * addresses have a table and an index of their own, far smaller (a
 * program has far fewer call sites than stacks).
 */
#define NODE_BITS 25
#define NODES_MAX CG_INTERN_NODES_MAX
#define NIDX_BITS_MIN 16
#define NIDX_BITS_MAX (NODE_BITS + 1)

#define ADDR_BITS 24
#define ADDRS_MAX ((1u << ADDR_BITS) - 2) /* an index + 1 fits ADDR_BITS */
#define AIDX_BITS_MIN 12
#define AIDX_BITS_MAX (ADDR_BITS + 1)

/* A node's parent: a node id, or ROOT and the unload generation for an outermost frame. */
#define ROOT (1u << 31)
/* In a node's address: its definition was never written, so nothing may name it. */
#define FAILED (1u << 31)

/*
 * A slot's word (ring.h): a node id, or PENDING and a pending stack's
 * index: one whose new frames wait for the stack's first record, which
 * makes its nodes. A hook sends a stack before its record and may send
 * others between the two (a device call's), so until that record the
 * frames are kept here, at most PEND_MAX stacks at a time (each slot's
 * last only); past that a new stack's records carry none.
 */
#define PENDING (1u << 31)
#define PEND_MAX 16384u

struct node {
	uint32_t addr;   /* index in the address table; FAILED */
	uint32_t parent; /* a node id, or ROOT | gen */
};

struct pend {
	uint32_t next; /* on the free list: the next free one + 1 */
	uint32_t from; /* the deepest node the stack had when it came, or ROOT | gen */
	uint32_t n;    /* frames below it, innermost first */
	uint32_t pad;
	uint64_t frames[CG_STACK_DEPTH_MAX];
};

struct index {
	uint32_t *slot;
	uint32_t bits;
};

#define NODES_RESERVE (((size_t)NODES_MAX + 1) * sizeof(struct node))
#define NIDX_RESERVE (((size_t)1 << NIDX_BITS_MAX) * sizeof(uint32_t))
#define ADDRS_RESERVE ((size_t)ADDRS_MAX * sizeof(uint64_t))
#define AIDX_RESERVE (((size_t)1 << AIDX_BITS_MAX) * sizeof(uint32_t))
#define PEND_RESERVE ((size_t)PEND_MAX * sizeof(struct pend))

static struct {
	struct node *nodes; /* by id; 0 is none */
	struct index nidx;
	uint64_t *addrs;
	struct index aidx;
	struct pend *pend;
	uint32_t count, naddrs;
	uint32_t pend_hi, pend_free; /* pend_free: the first free + 1, 0 for none */
	uint32_t gen;
	/* The last definition given, in case it cannot be written. */
	uint32_t *last_names;
	uint32_t last_slot, last_leaf, last_n;
	uint64_t def[CG_STACK_DEPTH_MAX];
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

static size_t index_len(const struct index *x)
{
	return ((size_t)1 << x->bits) * sizeof(uint32_t);
}

int cg_intern_reset(void)
{
	if (!t.nodes) {
		t.nodes = reserve(NODES_RESERVE);
		t.nidx.slot = reserve(NIDX_RESERVE);
		t.addrs = reserve(ADDRS_RESERVE);
		t.aidx.slot = reserve(AIDX_RESERVE);
		t.pend = reserve(PEND_RESERVE);
		t.ok = t.nodes && t.nidx.slot && t.addrs && t.aidx.slot && t.pend;
		if (!t.ok)
			return -ENOMEM;
	} else if (t.ok) {
		clear(t.nodes, ((size_t)t.count + 1) * sizeof(struct node));
		clear(t.nidx.slot, index_len(&t.nidx));
		clear(t.addrs, (size_t)t.naddrs * sizeof(uint64_t));
		clear(t.aidx.slot, index_len(&t.aidx));
		clear(t.pend, (size_t)t.pend_hi * sizeof(struct pend));
	}
	t.nidx.bits = NIDX_BITS_MIN;
	t.aidx.bits = AIDX_BITS_MIN;
	t.count = t.naddrs = t.pend_hi = t.pend_free = t.gen = 0;
	t.last_names = NULL;
	t.last_leaf = 0;
	return t.ok ? 0 : -ENOMEM;
}

/* ---- the addresses ---- */

static inline uint64_t addr_hash(uint64_t addr)
{
	return cg_hash_mix64(addr);
}

/* The index + 1 of addr in the table, 0 when it is not there; *at: its slot or where it goes. */
static inline uint32_t addr_find(uint64_t addr, uint64_t h, uint32_t *at)
{
	uint32_t mask = (1u << t.aidx.bits) - 1, tag = (uint32_t)(h >> 56) << ADDR_BITS;
	for (uint32_t i = (uint32_t)h & mask;; i = (i + 1) & mask) {
		uint32_t s = t.aidx.slot[i];
		if (!s) {
			*at = i;
			return 0;
		}
		uint32_t a = s & ((1u << ADDR_BITS) - 1);
		if ((s & ~((1u << ADDR_BITS) - 1)) == tag && t.addrs[a - 1] == addr)
			return a;
	}
}

/* Past three quarters full, twice the slots, filled again from the table. */
static void addr_grow(void)
{
	if ((uint64_t)(t.naddrs + 1) * 4 <= (3ull << t.aidx.bits) || t.aidx.bits == AIDX_BITS_MAX)
		return;
	t.aidx.bits++;
	memset(t.aidx.slot, 0, index_len(&t.aidx));
	for (uint32_t a = 1; a <= t.naddrs; a++) {
		uint32_t at = 0;
		uint64_t h = addr_hash(t.addrs[a - 1]);
		addr_find(t.addrs[a - 1], h, &at);
		t.aidx.slot[at] = a | (uint32_t)(h >> 56) << ADDR_BITS;
	}
}

/* The index + 1 of addr, added when new; the caller made sure there is room. */
static uint32_t addr_intern(uint64_t addr)
{
	uint32_t at = 0;
	uint64_t h = addr_hash(addr);
	uint32_t a = addr_find(addr, h, &at);
	if (a)
		return a;
	t.addrs[t.naddrs] = addr;
	a = ++t.naddrs;
	t.aidx.slot[at] = a | (uint32_t)(h >> 56) << ADDR_BITS;
	addr_grow();
	return a;
}

/* ---- the nodes ---- */

static inline uint64_t node_hash(uint32_t parent, uint32_t addr)
{
	return cg_hash_mix64((uint64_t)parent << 32 | addr);
}

/* The node (parent, addr), 0 when there is none; *at: its slot or where it goes. */
static inline uint32_t node_find(uint32_t parent, uint32_t addr, uint64_t h, uint32_t *at)
{
	uint32_t mask = (1u << t.nidx.bits) - 1, tag = (uint32_t)(h >> 57) << NODE_BITS;
	for (uint32_t i = (uint32_t)h & mask;; i = (i + 1) & mask) {
		uint32_t s = t.nidx.slot[i];
		if (!s) {
			*at = i;
			return 0;
		}
		uint32_t id = s & NODES_MAX;
		const struct node *x = &t.nodes[id];
		if ((s & ~NODES_MAX) == tag && x->parent == parent && (x->addr & ~FAILED) == addr)
			return id;
	}
}

static void node_grow(void)
{
	if ((uint64_t)(t.count + 1) * 4 <= (3ull << t.nidx.bits) || t.nidx.bits == NIDX_BITS_MAX)
		return;
	t.nidx.bits++;
	memset(t.nidx.slot, 0, index_len(&t.nidx));
	for (uint32_t id = 1; id <= t.count; id++) {
		const struct node *x = &t.nodes[id];
		uint32_t at = 0, addr = x->addr & ~FAILED;
		uint64_t h = node_hash(x->parent, addr);
		node_find(x->parent, addr, h, &at);
		t.nidx.slot[at] = id | (uint32_t)(h >> 57) << NODE_BITS;
	}
}

/* The child of parent at the frame addr, 0 when there is none yet. */
static inline uint32_t child(uint32_t parent, uint64_t addr)
{
	uint32_t at = 0, a = addr_find(addr, addr_hash(addr), &at);
	if (!a)
		return 0;
	return node_find(parent, a - 1, node_hash(parent, a - 1), &at);
}

/* A new node; the caller made sure there is room. */
static uint32_t node_add(uint32_t parent, uint64_t frame)
{
	uint32_t at = 0, a = addr_intern(frame) - 1;
	uint64_t h = node_hash(parent, a);
	node_find(parent, a, h, &at);
	uint32_t id = ++t.count;
	t.nodes[id] = (struct node){a, parent};
	t.nidx.slot[at] = id | (uint32_t)(h >> 57) << NODE_BITS;
	node_grow();
	return id;
}

/*
 * From node *at down the frames f[n-1] ... f[0] (outermost first), as far
 * as nodes exist: *at becomes the deepest, and the frames left are
 * returned. A node whose definition failed ends the walk: *failed.
 */
static uint32_t walk(uint32_t *at, const uint64_t *f, uint32_t n, bool *failed)
{
	uint32_t node = *at;
	while (n) {
		uint32_t c = child(node, f[n - 1]);
		if (!c)
			break;
		if (t.nodes[c].addr & FAILED) {
			*failed = true;
			break;
		}
		node = c;
		n--;
	}
	*at = node;
	return n;
}

/* ---- the pending stacks ---- */

static struct pend *pend_new(uint32_t *index)
{
	uint32_t i;
	if (t.pend_free) {
		i = t.pend_free - 1;
		t.pend_free = t.pend[i].next;
	} else if (t.pend_hi < PEND_MAX) {
		i = t.pend_hi++;
	} else {
		return NULL;
	}
	*index = i;
	return &t.pend[i];
}

static void pend_drop(uint32_t i)
{
	t.pend[i].next = t.pend_free;
	t.pend_free = i + 1;
}

/* ---- the calls ---- */

void cg_intern_define(uint32_t *names, uint32_t slot, uint64_t hash, const uint64_t *frames,
		      uint32_t n)
{
	(void)hash;
	if (slot == 0 || slot > CG_STACK_SLOTS)
		return;
	/* What the slot named before is gone from its ring: a stack waiting there is dropped. */
	if (names[slot] & PENDING)
		pend_drop(names[slot] & ~PENDING);
	names[slot] = 0;
	if (!t.ok || n == 0 || n > CG_STACK_DEPTH_MAX)
		return;
	uint32_t at = ROOT | t.gen;
	bool failed = false;
	uint32_t left = walk(&at, frames, n, &failed);
	if (failed)
		return;
	if (!left) {
		names[slot] = at;
		return;
	}
	uint32_t i;
	struct pend *p = pend_new(&i);
	if (!p)
		return;
	p->from = at;
	p->n = left;
	memcpy(p->frames, frames, left * sizeof(uint64_t));
	names[slot] = PENDING | i;
}

/* A pending stack's first record: its nodes, and the definition that record carries. */
static struct cg_stack_use make(uint32_t *names, uint32_t slot)
{
	struct cg_stack_use u = {0, 0, NULL, 0};
	uint32_t i = names[slot] & ~PENDING;
	struct pend *p = &t.pend[i];
	names[slot] = 0;
	/* Other stacks may have made some of its nodes since it came. */
	uint32_t at = p->from;
	bool failed = false;
	uint32_t left = walk(&at, p->frames, p->n, &failed);
	if (failed || left > NODES_MAX - t.count || left > ADDRS_MAX - t.naddrs) {
		pend_drop(i);
		return u;
	}
	if (left) {
		u.parent = at & ROOT ? 0 : at;
		for (uint32_t k = left; k > 0; k--)
			at = node_add(at, p->frames[k - 1]);
		memcpy(t.def, p->frames, left * sizeof(uint64_t));
		u.frames = t.def;
		u.n_frames = left;
		t.last_names = names;
		t.last_slot = slot;
		t.last_leaf = at;
		t.last_n = left;
	}
	pend_drop(i);
	names[slot] = at;
	u.id = at;
	return u;
}

struct cg_stack_use cg_intern_use(uint32_t *names, uint32_t slot)
{
	struct cg_stack_use u = {0, 0, NULL, 0};
	if (!t.ok || slot == 0 || slot > CG_STACK_SLOTS)
		return u;
	uint32_t v = names[slot];
	if (__builtin_expect(v & PENDING, 0))
		return make(names, slot);
	u.id = v;
	return u;
}

void cg_intern_unload(void)
{
	t.gen = (t.gen + 1) & ~ROOT;
}

void cg_intern_failed(uint64_t id)
{
	if (!id || id != t.last_leaf)
		return;
	for (uint32_t k = 0; k < t.last_n; k++)
		t.nodes[t.last_leaf - k].addr |= FAILED;
	if (t.last_names && t.last_names[t.last_slot] == t.last_leaf)
		t.last_names[t.last_slot] = 0;
	t.last_leaf = 0;
}

void cg_intern_stats(struct cg_intern_stats *out)
{
	*out = (struct cg_intern_stats){t.count, t.naddrs, 0};
	if (!t.ok)
		return;
	/* Only what this trace may have touched: the rest was given back (clear). */
	out->resident = cg_resident(t.nodes, ((size_t)t.count + 1) * sizeof(struct node)) +
			cg_resident(t.nidx.slot, index_len(&t.nidx)) +
			cg_resident(t.addrs, (size_t)t.naddrs * sizeof(uint64_t)) +
			cg_resident(t.aidx.slot, index_len(&t.aidx)) +
			cg_resident(t.pend, (size_t)t.pend_hi * sizeof(struct pend));
}
