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
 * Memory, about 5 to 7 bytes a node. A node is 3 bytes in an array by
 * id: the index of its return address in a table of distinct addresses
 * (a program has far fewer call sites than stacks), and whether its
 * parent is the node made just before it. That is so for every node of a
 * definition but its outermost (a definition makes its nodes one after
 * the other, outermost first), which is why ids are handed out so: a
 * stack's chain of frames is a run of consecutive words, walked without
 * a lookup. The other nodes, one a definition at most, are found through
 * an open-addressing index of (parent, id) keyed by (parent, address), at
 * most three quarters full, a slot keeping 7 bits of the hash beside the
 * id, so a probe seldom reads a node that is not the one.
 *
 * Caps: NODES_MAX nodes, LINKS_MAX definitions (so as many distinct
 * stacks at least), ADDRS_MAX distinct addresses; past any of them a new
 * stack's records carry none.
 */
#define NODE_BITS 25
#define NODES_MAX CG_INTERN_NODES_MAX
#define LINKS_MAX ((1u << 23) - 1)
/*
 * The links' index is sized to its count, not a power of two (a slot is
 * the hash scaled to the size): half as large again at four fifths
 * full, so 8 to 12 bytes a link, where doubling at three quarters would
 * make it 10.7 to 21.3.
 */
#define LIDX_MIN 4096u
#define LIDX_MAX (1u << 24)
#define ADDRS_MAX ((1u << 23) - 1) /* their index, below ADDR_ROOT */
#define AIDX_BITS_MIN 12
#define AIDX_BITS_MAX 24
#define ADDR_IDX_BITS 24 /* an address index + 1 in an address slot, its tag above */

/* A node's 24 bits: the address's index, and CHAINED: its parent is id - 1. */
#define CHAINED (1u << 23)
#define ADDR_MASK (CHAINED - 1)
/* The node the outermost frames hang from after an unload (0 before any): no frame's. */
#define ADDR_ROOT ADDR_MASK
#define NO_ROOT UINT32_MAX
/*
 * Definitions that could not be written (cg_intern_failed), as ranges of
 * ids: nothing may name them, nor a stack through them. An encoder
 * refuses none of the probe's, so a few ranges are plenty; past them no
 * new stack is taken (root NO_ROOT), nor made.
 */
#define FAILED_MAX 16

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

struct link {
	uint32_t parent;
	uint32_t id; /* the node | 7 bits of the hash above NODE_BITS; 0: empty */
};

struct pend {
	uint32_t next; /* on the free list: the next free one + 1 */
	uint32_t from; /* the deepest node the stack had when it came, or a root */
	uint32_t n;    /* frames below it, innermost first */
	uint32_t pad;
	uint64_t frames[CG_STACK_DEPTH_MAX];
};

#define NODE_BYTES 3
#define NODES_RESERVE (((size_t)NODES_MAX + 1) * NODE_BYTES + 1)
/* A doubling copies the old half past the new table first: room for one and a half. */
#define LIDX_RESERVE ((size_t)2 * LIDX_MAX * sizeof(struct link))
#define ADDRS_RESERVE ((size_t)ADDRS_MAX * sizeof(uint64_t))
#define AIDX_RESERVE (((size_t)1 << AIDX_BITS_MAX) * sizeof(uint32_t))
#define PEND_RESERVE ((size_t)PEND_MAX * sizeof(struct pend))

static struct {
	uint8_t *nodes; /* NODE_BYTES by id; 0 is the first root */
	struct link *links;
	uint32_t lsize, nlinks;
	uint64_t *addrs;
	uint32_t *aidx;
	uint32_t abits, naddrs;
	struct pend *pend;
	uint32_t count;
	uint64_t sent;
	uint32_t pend_hi, pend_free; /* pend_free: the first free + 1, 0 for none */
	uint32_t root;               /* the outermost frames' parent now */
	struct id_range {
		uint32_t lo, hi;
	} failed[FAILED_MAX];
	uint32_t n_failed;
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

static size_t links_len(void)
{
	return (size_t)t.lsize * sizeof(struct link);
}

static size_t aidx_len(void)
{
	return ((size_t)1 << t.abits) * sizeof(uint32_t);
}

int cg_intern_reset(void)
{
	if (!t.nodes) {
		t.nodes = reserve(NODES_RESERVE);
		t.links = reserve(LIDX_RESERVE);
		t.addrs = reserve(ADDRS_RESERVE);
		t.aidx = reserve(AIDX_RESERVE);
		t.pend = reserve(PEND_RESERVE);
		t.ok = t.nodes && t.links && t.addrs && t.aidx && t.pend;
		if (!t.ok)
			return -ENOMEM;
	} else if (t.ok) {
		clear(t.nodes, ((size_t)t.count + 1) * NODE_BYTES);
		clear(t.links, links_len());
		clear(t.addrs, (size_t)t.naddrs * sizeof(uint64_t));
		clear(t.aidx, aidx_len());
		clear(t.pend, (size_t)t.pend_hi * sizeof(struct pend));
	}
	t.lsize = LIDX_MIN;
	t.abits = AIDX_BITS_MIN;
	t.count = t.nlinks = t.naddrs = t.pend_hi = t.pend_free = t.root = t.n_failed = 0;
	t.sent = 0;
	t.last_names = NULL;
	t.last_leaf = 0;
	return t.ok ? 0 : -ENOMEM;
}

/* ---- the addresses ---- */

#define NO_ADDR UINT32_MAX

/* addr's index in the table, NO_ADDR when it is not there; *at: its slot or where it goes. */
static inline uint32_t addr_find(uint64_t addr, uint64_t h, uint32_t *at)
{
	uint32_t mask = (1u << t.abits) - 1, tag = (uint32_t)(h >> 56) << ADDR_IDX_BITS;
	for (uint32_t i = (uint32_t)h & mask;; i = (i + 1) & mask) {
		uint32_t s = t.aidx[i];
		if (!s) {
			*at = i;
			return NO_ADDR;
		}
		uint32_t a = (s & ((1u << ADDR_IDX_BITS) - 1)) - 1;
		if ((s & ~((1u << ADDR_IDX_BITS) - 1)) == tag && t.addrs[a] == addr)
			return a;
	}
}

static inline uint32_t addr_slot(uint32_t a, uint64_t h)
{
	return (a + 1) | (uint32_t)(h >> 56) << ADDR_IDX_BITS;
}

/* Past three quarters full, twice the slots, filled again from the table. */
static void addr_grow(void)
{
	if ((uint64_t)(t.naddrs + 1) * 4 <= (3ull << t.abits) || t.abits == AIDX_BITS_MAX)
		return;
	t.abits++;
	memset(t.aidx, 0, aidx_len());
	for (uint32_t a = 0; a < t.naddrs; a++) {
		uint32_t at = 0;
		uint64_t h = cg_hash_mix64(t.addrs[a]);
		addr_find(t.addrs[a], h, &at);
		t.aidx[at] = addr_slot(a, h);
	}
}

/* The index of addr, added when new; the caller made sure there is room. */
static uint32_t addr_intern(uint64_t addr)
{
	uint32_t at = 0;
	uint64_t h = cg_hash_mix64(addr);
	uint32_t a = addr_find(addr, h, &at);
	if (a != NO_ADDR)
		return a;
	a = t.naddrs++;
	t.addrs[a] = addr;
	t.aidx[at] = addr_slot(a, h);
	addr_grow();
	return a;
}

/* ---- the nodes ---- */

static inline uint32_t node_at(uint32_t id)
{
	const uint8_t *b = t.nodes + (size_t)id * NODE_BYTES;
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16;
}

static inline void node_set(uint32_t id, uint32_t v)
{
	uint8_t *b = t.nodes + (size_t)id * NODE_BYTES;
	b[0] = (uint8_t)v;
	b[1] = (uint8_t)(v >> 8);
	b[2] = (uint8_t)(v >> 16);
}

static bool failed_node(uint32_t id)
{
	for (uint32_t i = 0; i < t.n_failed; i++)
		if (id >= t.failed[i].lo && id <= t.failed[i].hi)
			return true;
	return false;
}

static inline uint64_t link_hash(uint32_t parent, uint32_t addr)
{
	return cg_hash_mix64((uint64_t)parent << 32 | addr);
}

/* The linked node (parent, addr), 0 when there is none; *at: its slot or where it goes. */
static inline uint32_t link_find(uint32_t parent, uint32_t addr, uint64_t h, uint32_t *at)
{
	uint32_t size = t.lsize, tag = (uint32_t)(h >> 57) << NODE_BITS;
	for (uint32_t i = (uint32_t)(((h & 0xffffffffu) * size) >> 32);;
	     i = i + 1 == size ? 0 : i + 1) {
		const struct link *l = &t.links[i];
		if (!l->id) {
			*at = i;
			return 0;
		}
		uint32_t id = l->id & NODES_MAX;
		if (l->parent == parent && (l->id & ~NODES_MAX) == tag &&
		    (node_at(id) & ADDR_MASK) == addr)
			return id;
	}
}

static void link_put(uint32_t parent, uint32_t id)
{
	uint32_t at = 0, addr = node_at(id) & ADDR_MASK;
	uint64_t h = link_hash(parent, addr);
	link_find(parent, addr, h, &at);
	t.links[at] = (struct link){parent, id | (uint32_t)(h >> 57) << NODE_BITS};
}

/* Past four fifths full, half as many slots again: the old ones are copied past them, put back. */
static void link_grow(void)
{
	if ((uint64_t)(t.nlinks + 1) * 5 <= (uint64_t)t.lsize * 4 || t.lsize == LIDX_MAX)
		return;
	size_t old = t.lsize;
	struct link *copy = t.links + LIDX_MAX;
	memcpy(copy, t.links, old * sizeof(struct link));
	t.lsize = old + old / 2 < LIDX_MAX ? (uint32_t)(old + old / 2) : LIDX_MAX;
	memset(t.links, 0, links_len());
	for (size_t i = 0; i < old; i++)
		if (copy[i].id)
			link_put(copy[i].parent, copy[i].id & NODES_MAX);
	clear(copy, old * sizeof(struct link));
}

/*
 * The child of node parent at the return address frame, 0 when there is
 * none yet. The node made after parent first: when it hangs from parent
 * (most steps of a walk, which then reads the node array in order) its
 * address alone decides, with no lookup of the frame.
 */
static inline uint32_t child(uint32_t parent, uint64_t frame)
{
	uint32_t next = parent + 1, at = 0;
	if (next <= t.count) {
		uint32_t w = node_at(next);
		if ((w & CHAINED) && t.addrs[w & ADDR_MASK] == frame)
			return next;
	}
	uint32_t a = addr_find(frame, cg_hash_mix64(frame), &at);
	return a == NO_ADDR ? 0 : link_find(parent, a, link_hash(parent, a), &at);
}

/* A new node; the caller made sure there is room. */
static uint32_t node_add(uint32_t parent, uint64_t frame)
{
	uint32_t a = addr_intern(frame), id = ++t.count;
	if (parent == id - 1) {
		node_set(id, a | CHAINED);
		return id;
	}
	node_set(id, a);
	link_put(parent, id);
	t.nlinks++;
	link_grow();
	return id;
}

static bool is_root(uint32_t node)
{
	return node == 0 || (node_at(node) & ADDR_MASK) == ADDR_ROOT;
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
		if (__builtin_expect(t.n_failed != 0, 0) && failed_node(c)) {
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

void cg_intern_define(uint32_t *names, uint32_t slot, const uint64_t *frames, uint32_t n)
{
	if (slot == 0 || slot > CG_STACK_SLOTS)
		return;
	/* What the slot named before is gone from its ring: a stack waiting there is dropped. */
	if (names[slot] & PENDING)
		pend_drop(names[slot] & ~PENDING);
	names[slot] = 0;
	if (!t.ok || n == 0 || n > CG_STACK_DEPTH_MAX || t.root == NO_ROOT)
		return;
	t.sent++;
	uint32_t at = t.root;
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
	bool failed = t.root == NO_ROOT || (t.n_failed && failed_node(at));
	uint32_t left = failed ? 0 : walk(&at, p->frames, p->n, &failed);
	/* A definition links one node at most, its outermost. */
	if (failed || left > NODES_MAX - t.count || left > ADDRS_MAX - t.naddrs ||
	    t.nlinks >= LINKS_MAX) {
		pend_drop(i);
		return u;
	}
	if (left) {
		u.parent = is_root(at) ? 0 : at;
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

/* The parent of a node made with a link (not chained): its link's. */
static uint32_t link_parent(uint32_t id)
{
	for (uint32_t i = 0; i < t.lsize; i++)
		if (t.links[i].id && (t.links[i].id & NODES_MAX) == id)
			return t.links[i].parent;
	return 0;
}

uint32_t cg_intern_frames(uint64_t id, uint64_t *frames, uint32_t max)
{
	uint32_t n = 0;
	if (!t.ok || id == 0 || id > t.count)
		return 0;
	for (uint32_t node = (uint32_t)id; n < max && !is_root(node);) {
		uint32_t w = node_at(node);
		frames[n++] = t.addrs[w & ADDR_MASK];
		node = (w & CHAINED) ? node - 1 : link_parent(node);
	}
	return n;
}

/* A new root, which no stack defined before reaches; its id is never named. */
void cg_intern_unload(void)
{
	if (!t.ok || t.root == NO_ROOT || t.count == NODES_MAX) {
		t.root = NO_ROOT;
		return;
	}
	t.root = ++t.count;
	node_set(t.root, ADDR_ROOT);
}

void cg_intern_failed(uint64_t id)
{
	if (!id || id != t.last_leaf)
		return;
	if (t.n_failed == FAILED_MAX)
		t.root = NO_ROOT;
	else
		t.failed[t.n_failed++] = (struct id_range){t.last_leaf - t.last_n + 1, t.last_leaf};
	if (t.last_names && t.last_names[t.last_slot] == t.last_leaf)
		t.last_names[t.last_slot] = 0;
	t.last_leaf = 0;
}

void cg_intern_stats(struct cg_intern_stats *out)
{
	*out = (struct cg_intern_stats){t.count, t.naddrs, t.nlinks, t.sent, 0};
	if (!t.ok)
		return;
	/* Only what this trace may have touched: the rest was given back (clear). */
	out->resident = cg_resident(t.nodes, ((size_t)t.count + 1) * NODE_BYTES) +
	                cg_resident(t.links, links_len()) +
	                cg_resident(t.addrs, (size_t)t.naddrs * sizeof(uint64_t)) +
	                cg_resident(t.aidx, aidx_len()) +
	                cg_resident(t.pend, (size_t)t.pend_hi * sizeof(struct pend));
}
