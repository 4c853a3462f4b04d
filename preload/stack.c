/* SPDX-License-Identifier: MIT */
#include "stack.h"

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include <elf.h>
#include <link.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>

#include "event.h"
#include "options.h"
#include "push.h"
#include "python.h"
#include "ring.h"
#include "unwind.h"
#include "warn.h"

/*
 * The unwinders: the probe's own (unwind.h: each frame stepped by its
 * DWARF CFA rule, read once per thread through _dl_find_object, which
 * takes no lock; the thread's last walk reused where its stack words are
 * read back unchanged), and libunwind's unw_backtrace for any stack with
 * a frame the probe's does not take. Measured on the options
 * (docs/probe.md): 15 to 42 ns a capture at 5 to 20 frames against
 * libunwind's 34 to 165, where a frame-pointer walk costs under 1 ns a
 * frame but gives wrong frames (or faults) through any function that uses
 * rbp as a plain register, which no module can be known not to have, and
 * an unw_step loop costs 530 ns a frame.
 *
 * Locks, on libunwind's path. libunwind's DWARF cache (UNW_CACHE_GLOBAL, and the per-thread
 * policy too in builds without __thread, such as Debian's 1.6) takes a
 * mutex and then, on a miss, dl_iterate_phdr's loader lock: a thread in a
 * dl_iterate_phdr callback that allocates would take them in the other
 * order. UNW_CACHE_NONE takes no libunwind lock on a miss; the fast path's
 * own per-thread cache is unaffected. So a hook takes, at most, the
 * loader's dl_load_write_lock (recursively, inside dl_iterate_phdr, when
 * an address is new to the thread), and holds no probe lock then. That is
 * safe because whoever holds that lock and calls malloc meets one of two
 * things in our hook: the same recursive lock, or a wait for ring room,
 * which only the writer thread ends, and the writer never takes a loader
 * lock (no dl_iterate_phdr, dladdr, dlopen, dynamic TLS: writer.h). A
 * thread in dlopen (dl_load_lock, held while constructors run) never
 * waits for us either. What libunwind allocates (its per-thread cache,
 * once) reaches malloc with the guard held: a plain call, not recorded.
 */

unsigned cg_stack_depth;

/* The probe's own code: frames from the innermost out until the first outside it are dropped. */
static uintptr_t self_lo, self_hi;

/*
 * Code ranges a dlclose unmapped (cg_stack_unloaded): libunwind's fast path
 * would unwind new code mapped there by the old code's layouts, so a stack
 * with a frame in one is taken again by the slow path, which reads the
 * unwind tables of what is mapped now. Written by dlclose wrappers only:
 * an entry is reserved, filled, then marked ready.
 */
#define UNLOADED_MAX 64
static struct {
	uintptr_t lo, hi;
	atomic_int ready;
} unloaded[UNLOADED_MAX];
static atomic_uint n_unloaded;
static atomic_bool unloaded_all; /* past the table: every stack goes the slow way */
/* Bumped by each trace: cache entries of another trace are not sent stacks. */
static atomic_uint epoch = 1;

/*
 * Stacks this thread (or one before it on the same ring) sent: a
 * direct-mapped table, entries compared frame by frame, never by hash
 * alone, so a hit is always the same stack. An entry's slot is the
 * stack's name in the ring (event.h): sending a stack into a slot
 * replaces what the slot named, for the writer too.
 */
#define CACHE_SLOTS CG_STACK_CACHE_SLOTS
struct entry {
	uint64_t hash;
	uint32_t epoch;
	uint32_t n;
	uint64_t frames[];
};

struct cg_stack_cache {
	size_t stride; /* bytes per entry, for cg_stack_depth frames */
	/*
	 * The slot a device hook captured, 1-based (0: none): its event is
	 * pushed after the device call, and what the thread allocates
	 * meanwhile must not take the slot over (the spare slot carries it).
	 */
	uint32_t held;
	struct cg_py_cache *py; /* the thread's code objects (python.h), after the slots */
	struct cg_unwind_cache unwind;
	/* Entries start with a u64: the slots are aligned for one. */
	_Alignas(uint64_t) unsigned char slots[];
};

/*
 * Each frame multiplied by a constant of its own position, then summed: no
 * chain of multiplications from frame to frame (a chained hash took a
 * third of this file's time on bench/alloc-bench), and no rotation to
 * compute per frame either (a load of the constant instead). Only the
 * cache's slot and a first test come of it; hits compare the frames.
 */
static uint64_t mult[CG_STACK_DEPTH_MAX];

static void mult_setup(void)
{
	uint64_t x = 0x9e3779b97f4a7c15ull;
	for (unsigned i = 0; i < CG_STACK_DEPTH_MAX; i++) {
		/* splitmix64: odd constants whose bits look independent */
		uint64_t z = (x += 0x9e3779b97f4a7c15ull);
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		mult[i] = (z ^ (z >> 31)) | 1;
	}
}

static inline uint64_t hash_end(uint64_t h)
{
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 32);
}

/*
 * Frames as bytes, 8 a frame: the unwinder's void * as they are (no copy),
 * or the u64s with Python's merged in; each read by memcpy, a plain load.
 * cg_stack_name compares and copies them the same way.
 */
_Static_assert(sizeof(void *) == sizeof(uint64_t), "a frame is a word");
static inline uint64_t hash_frames(const void *f, unsigned n)
{
	uint64_t h = n;
	for (unsigned i = 0; i < n; i++) {
		uint64_t x;
		memcpy(&x, (const unsigned char *)f + 8 * (size_t)i, 8);
		h += x * mult[i];
	}
	return hash_end(h);
}

static int find_self(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	uintptr_t me = (uintptr_t)arg;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
		if (me >= lo && me < hi) {
			self_lo = lo;
			self_hi = hi;
			return 1;
		}
	}
	return 0;
}

/*
 * Both unwinders on the stack set-up runs on: the fast one is used only
 * where they agree here. The first frame is each call's own return
 * address, so it is left out; the frames past the probe's few are the
 * loader's start-up code, which the fast one may leave to libunwind.
 */
static __attribute__((noinline)) bool unwinders_agree(void)
{
	struct cg_unwind_cache *c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE,
					 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (c == MAP_FAILED)
		return false;
	void *fast[3], *ref[3];
	int n = cg_unwind(fast, 3, c, 1);
	int m = unw_backtrace(ref, 3);
	munmap(c, sizeof(*c));
	return n == 3 && m == 3 && memcmp(fast + 1, ref + 1, 2 * sizeof(*fast)) == 0;
}

void cg_stack_setup(void)
{
	unsigned d = (unsigned)cg_opt.stack_depth;
	if (!d)
		return;
	unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_NONE);
	mult_setup();
	dl_iterate_phdr(find_self, (void *)(uintptr_t)&cg_stack_setup);
	/* Once here, so that libunwind's one-time set-up (its own lock) is never done in a hook. */
	void *probe[4];
	if (!self_hi || unw_backtrace(probe, 4) <= 0) {
		cg_warn("cannot unwind the stack here; recording without call stacks", NULL);
		cg_opt.stack_depth = 0;
		return;
	}
	if (cg_opt.unwind == CG_UNWIND_AUTO && !unwinders_agree())
		cg_opt.unwind = CG_UNWIND_LIBUNWIND;
	cg_stack_depth = d;
}

void cg_stack_session_start(void)
{
	atomic_fetch_add(&epoch, 1);
}

void cg_stack_unloaded(uintptr_t lo, uintptr_t hi)
{
	unsigned n = atomic_load(&n_unloaded);
	for (unsigned i = 0; i < n && i < UNLOADED_MAX; i++)
		if (atomic_load(&unloaded[i].ready) && unloaded[i].lo == lo && unloaded[i].hi == hi)
			return; /* the same library unloaded again */
	unsigned i = atomic_fetch_add(&n_unloaded, 1);
	if (i >= UNLOADED_MAX) {
		atomic_store(&unloaded_all, true);
		return;
	}
	unloaded[i].lo = lo;
	unloaded[i].hi = hi;
	atomic_store_explicit(&unloaded[i].ready, 1, memory_order_release);
}

void cg_stack_unload_done(void)
{
	if (!cg_stack_depth)
		return;
	atomic_fetch_add(&epoch, 1);
	struct cg_event e = {cg_stamp(false), 0, 0, 0, CG_EV_UNLOAD, 0, 0, 0};
	cg_push_n(&e, 1);
}

/* Whether a frame lies in code a dlclose unmapped. */
static bool through_unloaded(void *const *f, unsigned n)
{
	if (atomic_load_explicit(&unloaded_all, memory_order_relaxed))
		return true;
	unsigned k = atomic_load_explicit(&n_unloaded, memory_order_acquire);
	if (k > UNLOADED_MAX)
		k = UNLOADED_MAX;
	for (unsigned j = 0; j < k; j++) {
		if (!atomic_load_explicit(&unloaded[j].ready, memory_order_acquire))
			continue;
		for (unsigned i = 0; i < n; i++) {
			uintptr_t a = (uintptr_t)f[i] - 1;
			if (a >= unloaded[j].lo && a < unloaded[j].hi)
				return true;
		}
	}
	return false;
}

/* libunwind's unw_step loop: no per-address cache, the unwind tables of what is mapped now. */
static __attribute__((noinline)) int slow_backtrace(void **out, int max)
{
	unw_context_t uc;
	unw_cursor_t c;
	if (unw_getcontext(&uc) < 0 || unw_init_local(&c, &uc) < 0)
		return 0;
	int n = 0;
	while (n < max && unw_step(&c) > 0) {
		unw_word_t ip;
		if (unw_get_reg(&c, UNW_REG_IP, &ip) < 0 || !ip)
			break;
		out[n++] = (void *)ip;
	}
	return n;
}

/* The words a stack takes at most: its native frames, with Python's merged in. */
static unsigned words_max(void)
{
	unsigned w = cg_stack_depth;
	if (cg_python_on)
		w += CG_PY_DEPTH_MAX + 1;
	return w < CG_STACK_DEPTH_MAX ? w : CG_STACK_DEPTH_MAX;
}

static struct cg_stack_cache *cache_of(struct cg_ring *r)
{
	if (__builtin_expect(r->stacks != NULL, 1))
		return r->stacks;
	size_t stride = sizeof(struct entry) + words_max() * sizeof(uint64_t);
	size_t slots_len = sizeof(struct cg_stack_cache) + CACHE_SLOTS * stride;
	size_t py_len = cg_python_cache_len();
	size_t len = (slots_len + 63) / 64 * 64 + py_len;
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	struct cg_stack_cache *c = p;
	c->stride = stride;
	c->py = py_len ? (struct cg_py_cache *)((char *)p + (slots_len + 63) / 64 * 64) : NULL;
	r->stacks = c;
	return c;
}

/* The definition and its frames, in one push: the writer sees all of it or nothing. */
static __attribute__((noinline)) bool send(uint32_t slot, uint64_t hash, const uint64_t *f, unsigned n)
{
	struct cg_event
	    ev[1 + (CG_STACK_DEPTH_MAX + CG_EV_FRAMES_PER_SLOT - 1) / CG_EV_FRAMES_PER_SLOT];
	ev[0] = (struct cg_event){cg_stamp(false), hash, n, slot, CG_EV_STACK, 0, 0, 0};
	unsigned slots = 1;
	for (unsigned i = 0; i < n; i += CG_EV_FRAMES_PER_SLOT) {
		uint64_t g[CG_EV_FRAMES_PER_SLOT] = {0};
		for (unsigned k = 0; k < CG_EV_FRAMES_PER_SLOT && i + k < n; k++)
			g[k] = f[i + k];
		ev[slots++] = (struct cg_event){g[0], g[1], g[2], 0, CG_EV_FRAMES, 0, 0, 0};
	}
	return cg_push_n(ev, slots);
}

/* A count of the ring's (ring.h), which only its thread adds to: no locked add on the hook's path. */
static inline void count(struct cg_ring *r, int kind)
{
	atomic_uint_fast64_t *n = &r->unwinds[kind];
	atomic_store_explicit(n, atomic_load_explicit(n, memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

/* Frames of raw[0..n) before the first outside the probe. */
static int probe_frames(void *const *raw, int n)
{
	int s = 0;
	while (s < n && (uintptr_t)raw[s] - self_lo < self_hi - self_lo)
		s++;
	return s;
}

/*
 * CGPROBE_UNWIND=check: libunwind's unwind of the same stack, from one
 * probe frame deeper (this function's: one more asked for). The program's
 * frames must be the same; where the fast unwind stopped at want, its
 * frames must be libunwind's first. raw gets libunwind's when they are not.
 * Out of line: its buffer stays off the hooks' stacks otherwise.
 */
static __attribute__((noinline)) int checked(struct cg_ring *r, void **raw, int n, int want)
{
	void *ref[CG_STACK_DEPTH_MAX + CG_STACK_SKIP_MAX + 1];
	int m = unw_backtrace(ref, want + 1);
	int i = probe_frames(raw, n), j = probe_frames(ref, m);
	int mine = n - i, theirs = m - j;
	bool same = (n == want ? theirs >= mine : theirs == mine) &&
		    memcmp(raw + i, ref + j, (size_t)mine * sizeof(*raw)) == 0;
	if (same)
		return n;
	count(r, CG_RING_UNWOUND_DIFFERED);
	int keep = theirs < want - i ? theirs : want - i;
	memmove(raw + i, ref + j, (size_t)keep * sizeof(*raw));
	return i + keep;
}

/*
 * The calling thread's return addresses, from the caller of the hook's
 * unwind out: the fast unwinder's, or libunwind's where it declined (or
 * by CGPROBE_UNWIND). Inline in its callers, so that both unwinders start
 * in the same probe frame.
 */
static inline __attribute__((always_inline)) int backtrace(void **raw, int want,
							  struct cg_ring *r)
{
	struct cg_stack_cache *c = r->stacks;
	if (cg_opt.unwind != CG_UNWIND_LIBUNWIND) {
		uint32_t ep = atomic_load_explicit(&epoch, memory_order_relaxed);
		int n = cg_unwind(raw, want, &c->unwind, ep);
		if (__builtin_expect(n >= 0, 1)) {
			count(r, CG_RING_UNWOUND_FAST);
			return cg_opt.unwind == CG_UNWIND_CHECK ? checked(r, raw, n, want) : n;
		}
	}
	count(r, CG_RING_UNWOUND_LIBUNWIND);
	return unw_backtrace(raw, want);
}

/* What backtrace unwound, named: raw holds got frames, asked for want. */
static uint32_t name_stack(struct cg_ring *r, void **raw, int got, int want, bool hold)
{
	struct cg_stack_cache *c = r->stacks;
	unsigned depth = cg_stack_depth;
	if (__builtin_expect(atomic_load_explicit(&n_unloaded, memory_order_relaxed) != 0, 0) &&
	    through_unloaded(raw, got > 0 ? (unsigned)got : 0)) {
		got = slow_backtrace(raw, (int)(depth + CG_STACK_SKIP_MAX));
		want = (int)(depth + CG_STACK_SKIP_MAX);
	}
	int s = probe_frames(raw, got);
	/*
	 * A full buffer with fewer than depth frames past the probe's: more
	 * probe frames than the caller expected, the program's outermost cut
	 * off. Taken again, from here, with the whole margin.
	 */
	if (__builtin_expect(got == want && got - s < (int)depth && want < (int)(depth + CG_STACK_SKIP_MAX), 0)) {
		want = (int)(depth + CG_STACK_SKIP_MAX);
		return name_stack(r, raw, backtrace(raw, want, r), want, hold);
	}
	unsigned n = got > s ? (unsigned)(got - s) : 0;
	if (n > depth)
		n = depth;
	if (!n)
		return 0;
	uint64_t merged[CG_STACK_DEPTH_MAX];
	const void *f = raw + s;
	if (cg_python_on) {
		n = cg_python_merge(c->py, raw + s, n, merged, words_max());
		f = merged;
	}
	uint64_t h = hash_frames(f, n);
	uint32_t ep = atomic_load_explicit(&epoch, memory_order_relaxed);
	uint32_t slot = (uint32_t)(h >> 54) + 1;
	struct entry *e = (struct entry *)(c->slots + (slot - 1) * c->stride);
	_Static_assert(CACHE_SLOTS == 1u << 10, "the slot is the hash's top 10 bits");
	/* Every frame compared, never the hash alone: a hit is the same stack. */
	if (e->hash == h && e->epoch == ep && e->n == n && memcmp(e->frames, f, n * 8) == 0) {
		if (hold)
			c->held = slot;
		return slot;
	}
	uint64_t words[CG_STACK_DEPTH_MAX];
	memcpy(words, f, n * 8);
	/* The slot a device call holds stays as it is: this stack goes in the spare one. */
	if (!hold && slot == c->held)
		return send(CG_STACK_SLOTS, h, words, n) ? CG_STACK_SLOTS : 0;
	if (!send(slot, h, words, n))
		return 0;
	e->hash = h;
	e->epoch = ep;
	e->n = n;
	memcpy(e->frames, words, n * sizeof(*words));
	if (hold)
		c->held = slot;
	return slot;
}

uint32_t cg_stack_take(bool hold)
{
	struct cg_ring *r = cg_push_ring();
	struct cg_stack_cache *c = r ? cache_of(r) : NULL;
	if (!c)
		return 0;
	void *raw[CG_STACK_DEPTH_MAX + CG_STACK_SKIP_MAX];
	int want = (int)(cg_stack_depth + (hold ? CG_STACK_SKIP_MAX : CG_STACK_SKIP_HEAP));
	return name_stack(r, raw, backtrace(raw, want, r), want, hold);
}

void cg_stack_unhold(void)
{
	struct cg_ring *r = cg_self.ring;
	if (r && r->stacks)
		r->stacks->held = 0;
}

size_t cg_stack_cache_len(const struct cg_stack_cache *c)
{
	if (!c)
		return 0;
	size_t slots_len = sizeof(struct cg_stack_cache) + CACHE_SLOTS * c->stride;
	return (slots_len + 63) / 64 * 64 + (c->py ? cg_python_cache_len() : 0);
}
