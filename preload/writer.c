/* SPDX-License-Identifier: MIT */
#include "writer.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "encoder.h"
#include "figures.h"
#include "live.h"
#include "options.h"
#include "params.h"
#include "py_codes.h"
#include "park.h"
#include "real.h"
#include "ring.h"
#include "stack_intern.h"
#include "state.h"
#include "thread.h"
#include "warn.h"

static struct {
	pthread_t thread;
	bool running;
	struct cg_out *out;
	const struct cg_encoder_ops *enc; /* the trace's encoder, chosen when it opened */
	const bool *full;                 /* the encoder's lines want writing out */
	const char *path;                 /* the trace's, for messages */
	bool stats;
	uint64_t events;    /* records past the head */
	atomic_int wake;
	atomic_int requests;
	atomic_uint done; /* futex word: bumped after each request round */
	atomic_bool finished; /* a CG_REQ_FINISH was done: the file is closed */
	bool root_closed;
	uint8_t gate;     /* enum cg_writer_gate: what reaches the trace */
	bool head_later;  /* the head is not written yet: nothing may go out */
	uint64_t base_ns; /* the trace's t=0, on the session's clock (a capture window's begin) */
	uint32_t span_first; /* spans numbered below it began before the window: records go to s1 */
	uint32_t span_seen;  /* the highest span number seen while gated */
	bool dropped;  /* CG_REQ_DROP_EMPTY found nothing to keep */
	bool joinable; /* a finished thread waits to be joined */
	bool warned;
	void (*end_figures)(struct cg_enc_end *v);
	struct cg_enc_end end; /* the last figures given, for the stats */
	struct cg_clock_map clock;
	uint64_t last_ns; /* the latest record's time */
	uint64_t rings_full; /* cg_rings_full() when the trace began: its own count is past it */
	/* Identities announced but not yet on a record, by device index. */
	struct cg_device_ident ident[256];
	/* Module lists received, whose modules not yet on a record are pend (docs/stacks.md). */
	struct cg_modules *lists[64];
	unsigned n_lists, n_pend;
	struct cg_modv pend[512];
	/* The code objects the stack being written names first in this trace (py_codes.h). */
	struct cg_pycodev py[CG_STACK_DEPTH_MAX];
} w;

/* Modules already written in this trace, by a hash of what they are: each goes once. */
#define MOD_SEEN_BITS 14
static uint64_t mod_seen[1u << MOD_SEEN_BITS];

static long futex(atomic_int *addr, int op, int val, const struct timespec *ts)
{
	return syscall(SYS_futex, addr, op, val, ts, NULL, 0);
}

void cg_writer_wake(void)
{
	/* A plain load first: while a wake is pending, nobody writes the shared line. */
	if (atomic_load_explicit(&w.wake, memory_order_relaxed) == 0 &&
	    atomic_exchange_explicit(&w.wake, 1, memory_order_release) == 0)
		futex(&w.wake, FUTEX_WAKE_PRIVATE, 1, NULL);
}

bool cg_writer_dropped(void)
{
	return w.dropped;
}

/* A failed write stops recording for good, with one warning. */
static void check_output(void)
{
	if (!w.out->err || w.warned)
		return;
	w.warned = true;
	cg_warn("writing ", w.path, ": ",
		w.out->closed_by_program ? "the program closed the trace's file descriptor"
					 : strerror(-w.out->err),
		"; recording stopped, the program goes on", NULL);
	cg_recording_stop();
}

static uint64_t thread_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The lines the encoder buffered go out (encoder.h: full). */
static void emit_buffer(void)
{
	w.enc->write_out();
	check_output();
}

/* Threads alive at once that have allocated; BSS pages are touched only as needed. */
#define MAX_RINGS 65536

struct cursor {
	struct cg_ring *r;
	uint64_t pos, end;
};

static struct cursor cursors[MAX_RINGS];
/* The rings of the drain under way; 0 outside one. */
static size_t n_cursors;

/* Every event taken so far goes back to its ring: the live table then holds exactly what they did. */
static void release_all(void)
{
	for (size_t i = 0; i < n_cursors; i++)
		cg_ring_release(cursors[i].r, cursors[i].pos);
}

/* Between two events of a drain: a fork waiting takes the rings as they are, applied up to here. */
static void fork_point(void)
{
	if (n_cursors && cg_park_pending()) {
		release_all();
		cg_park_point(false);
	}
}

/*
 * Between events, work that leaves the live table and the rings alone (a
 * write, a block's compression): a fork may go on meanwhile, and finds in
 * the rings exactly the events not applied yet (inherit.h).
 */
static void outside_table(void (*work)(void))
{
	release_all();
	cg_park_outside_begin();
	work();
	cg_park_outside_end();
}

/* How many events ahead the table slot of an event is fetched. */
#define LOOKAHEAD 8

/*
 * Frees get the size, category and device of the allocation they end;
 * frees of anything never recorded are dropped.
 */
static bool match_free(struct cg_event *ev, uint8_t *device, uint64_t *ord)
{
	struct cg_live v;
	if (!cg_live_remove(cg_live_key(ev), &v))
		return false;
	ev->size = v.size;
	ev->category = v.category;
	*device = v.device;
	*ord = v.ord;
	return true;
}

/* The identity waiting for the device's first record, if any. */
static const struct cg_device_ident *ident_of(uint8_t device)
{
	return w.ident[device].strings ? &w.ident[device] : NULL;
}

/* Once on a record, the identity is not repeated on the device's later ones. */
static void ident_drop(uint8_t device)
{
	if (!w.ident[device].strings)
		return;
	cg_real.free(w.ident[device].strings);
	w.ident[device].strings = NULL;
}

static uint64_t module_hash(const struct cg_modv *m)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (uint32_t i = 0; i < m->path.n; i++)
		h = (h ^ (uint8_t)m->path.p[i]) * 0x100000001b3ull;
	h = (h ^ m->base) * 0x9e3779b97f4a7c15ull;
	h = (h ^ m->start) * 0x9e3779b97f4a7c15ull;
	h = (h ^ m->end) * 0x9e3779b97f4a7c15ull;
	/* A file rebuilt and mapped where the old one was is another module. */
	for (uint32_t i = 0; m->build_id.p && i < m->build_id.n; i++)
		h = (h ^ (uint8_t)m->build_id.p[i]) * 0x100000001b3ull;
	return h | 1;
}

/* True when m is new to the trace (and now marked seen); a full table takes nothing more. */
static bool module_new(const struct cg_modv *m)
{
	uint64_t h = module_hash(m);
	size_t mask = (1u << MOD_SEEN_BITS) - 1;
	for (size_t i = h >> (64 - MOD_SEEN_BITS), k = 0; k < 64; i = (i + 1) & mask, k++) {
		if (mod_seen[i] == h)
			return false;
		if (!mod_seen[i]) {
			mod_seen[i] = h;
			return true;
		}
	}
	return false;
}

/* A module list: the modules not written yet wait for the next memory record. */
static void modules_arrive(struct cg_modules *m)
{
	unsigned before = w.n_pend;
	if (w.n_lists < sizeof(w.lists) / sizeof(w.lists[0]))
		for (uint32_t i = 0; i < m->count && w.n_pend < sizeof(w.pend) / sizeof(w.pend[0]); i++)
			if (module_new(&m->mod[i]))
				w.pend[w.n_pend++] = m->mod[i];
	if (w.n_pend == before) {
		cg_modules_release(m);
		return;
	}
	w.lists[w.n_lists++] = m;
}

/* Once a record carried the pending modules, their lists go. */
static void modules_written(void)
{
	for (unsigned i = 0; i < w.n_lists; i++)
		cg_modules_release(w.lists[i]);
	w.n_lists = w.n_pend = 0;
}

static void modules_reset(void)
{
	modules_written();
	memset(mod_seen, 0, sizeof(mod_seen));
}

/* A stack's definition: its frames from the slots after it, into the table. */
static void define_stack(struct cg_ring *r, uint64_t pos)
{
	const struct cg_event *e = &r->ev[pos % CG_RING_EVENTS];
	uint64_t frames[CG_STACK_DEPTH_MAX];
	uint32_t n = e->size <= CG_STACK_DEPTH_MAX ? (uint32_t)e->size : 0;
	for (uint32_t i = 0; i < n; i++) {
		const struct cg_event *f = &r->ev[(pos + 1 + i / 3) % CG_RING_EVENTS];
		frames[i] = i % 3 == 0 ? f->ts : i % 3 == 1 ? f->addr : f->size;
	}
	cg_intern_define(r->stack_names, e->span, frames, n);
}

/* The code objects of a definition's Python frames not written yet in this trace, into w.py. */
static uint32_t py_codes_of(const uint64_t *frames, uint32_t n)
{
	uint32_t k = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (!(frames[i] & CG_PY_FRAME))
			continue;
		uint32_t id = (uint32_t)(frames[i] >> 32) & 0x7fffffffu;
		struct cg_py_code c;
		if (!id || !cg_py_code_first_use(id) || !cg_py_code_get(id, &c))
			continue;
		w.py[k++] = (struct cg_pycodev){
		    .id = id,
		    .line = c.first_line,
		    .name = {c.name, c.name_len},
		    .qualname = c.qualname_len ? (struct cg_sv){c.qualname, c.qualname_len}
					       : CG_SV_NONE,
		    .file = {c.file, c.file_len},
		    .table = c.table,
		    .table_len = c.table_len,
		    .format = c.format,
		};
	}
	return k;
}

/* A stack slot's name, when it is one (stacks on): a call, and the code objects it brings. */
static __attribute__((noinline)) void stack_named(struct cg_enc_stack *st, struct cg_ring *r,
						 uint32_t slot)
{
	struct cg_stack_use u = cg_intern_use(r->stack_names, slot);
	st->id = u.id;
	st->parent = u.parent;
	st->frames = u.frames;
	st->n_frames = u.n_frames;
	if (__builtin_expect(u.frames != NULL, 0) && (st->n_py_codes = py_codes_of(u.frames, u.n_frames)))
		st->py_codes = w.py;
}

/*
 * An allocation's stack, from the slot named beside its event (event.h);
 * with the pending modules when there are some (rare: the compact encoder
 * sends such a record as TEXT). Filled in place: with stacks off, most
 * records, it is the zeroes and two tests.
 */
static inline void stack_of(struct cg_enc_stack *st, struct cg_ring *r, uint64_t pos, bool alloc)
{
	*st = (struct cg_enc_stack){0};
	if (__builtin_expect(w.n_pend != 0, 0)) {
		st->modules = w.pend;
		st->n_modules = w.n_pend;
	}
	uint32_t slot = alloc ? r->stack[pos % CG_RING_EVENTS] : 0;
	if (slot)
		stack_named(st, r, slot);
}

/* An event's time on the trace's clock: t=0 is base_ns. */
static inline uint64_t trace_ns(uint64_t ticks)
{
	uint64_t ns = cg_clock_map_ns(&w.clock, ticks);
	return ns > w.base_ns ? ns - w.base_ns : 0;
}

/*
 * The snapshot: an alloc record, marked pre-existing, for every block the
 * live table holds, at ns, in the root span; each entry gets the ordinal
 * its free names. Memory the program marked as parameters is `parameter`.
 */
/*
 * The order of records with one timestamp in a trace's canonical order:
 * by tensor_id, bytewise ("0x10" before "0x9", all before "vmm:"). A
 * streaming reader keeps a snapshot larger than its window in order only
 * when it comes sorted so. The hex digits left-aligned, then their count,
 * give that order as numbers.
 */
struct snap_key {
	uint64_t hi; /* bit 63 for vmm, below it the address left-aligned by nibbles */
	uint64_t slot;
};

static uint64_t snap_order(uint64_t key)
{
	uint64_t addr = key & ~CG_LIVE_VMM_KEY;
	unsigned digits = 1;
	while (digits < 16 && addr >> (4 * digits))
		digits++;
	/* 14 nibbles left-aligned hold any user-space or device address; the count breaks ties. */
	uint64_t left = digits > 14 ? addr >> (4 * (digits - 14)) : addr << (4 * (14 - digits));
	return (key & CG_LIVE_VMM_KEY) | left << 5 | digits;
}

static bool snap_less(const struct snap_key *a, const struct snap_key *b)
{
	return a->hi < b->hi;
}

/* Heapsort: the writer thread allocates nothing (qsort may). */
static void snap_sift(struct snap_key *k, size_t i, size_t n)
{
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= n)
			return;
		if (c + 1 < n && snap_less(&k[c], &k[c + 1]))
			c++;
		if (!snap_less(&k[i], &k[c]))
			return;
		struct snap_key x = k[i];
		k[i] = k[c];
		k[c] = x;
		i = c;
	}
}

static void snap_sort(struct snap_key *k, size_t n)
{
	for (size_t i = n / 2; i-- > 0;)
		snap_sift(k, i, n);
	for (size_t end = n; end > 1; end--) {
		struct snap_key x = k[0];
		k[0] = k[end - 1];
		k[end - 1] = x;
		snap_sift(k, 0, end - 1);
	}
}

static void snapshot_entry(struct cg_live_entry *s, uint64_t ns);

static void snapshot(uint64_t ns)
{
	struct cg_live_table *t = &cg_live_t;
	if (!t->mask || !t->count)
		return;
	/* Mapped, not malloc'ed, as the table is; without it the records go in table order. */
	size_t n = 0, len = t->count * sizeof(struct snap_key);
	struct snap_key *k = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (k == MAP_FAILED) {
		for (uint64_t i = 0; i <= t->mask; i++)
			if (t->slots[i].addr)
				snapshot_entry(&t->slots[i], ns);
		return;
	}
	for (uint64_t i = 0; i <= t->mask && n < t->count; i++)
		if (t->slots[i].addr)
			k[n++] = (struct snap_key){snap_order(t->slots[i].addr), i};
	snap_sort(k, n);
	for (size_t i = 0; i < n; i++) {
		snapshot_entry(&t->slots[k[i].slot], ns);
		if ((i + 1) % 512 == 0) {
			/* A fork child's snapshot, made in a drain: a fork of its own need not wait it out. */
			fork_point();
			w.enc->room();
		}
	}
	munmap(k, len);
}

/* One block's record; a device identity waiting for the device's first record rides on it. */
static void snapshot_entry(struct cg_live_entry *s, uint64_t ns)
{
	uint64_t bytes = s->size & CG_LIVE_SIZE_MASK, addr = s->addr & ~CG_LIVE_VMM_KEY;
	uint8_t device = (uint8_t)(s->size >> CG_LIVE_DEV_SHIFT);
	uint8_t cat = (uint8_t)(s->size >> CG_LIVE_CAT_SHIFT);
	bool vmm = s->addr & CG_LIVE_VMM_KEY;
	if (cg_params_contains(addr, bytes))
		cat = CGTRACE_CAT_PARAMETER;
	const struct cg_device_ident *id = device == CG_PROBE_HOST ? NULL : ident_of(device);
	uint64_t ord = w.enc->preexisting(ns, addr, bytes, device, cat, vmm, id);
	if (id)
		ident_drop(device);
	s->size = (s->size & ~(15ull << CG_LIVE_CAT_SHIFT)) | ((uint64_t)cat << CG_LIVE_CAT_SHIFT);
	s->ord = ord;
	w.events++;
	if (*w.full)
		emit_buffer();
}

/*
 * Outside the window (enum cg_writer_gate) the live table is kept and
 * nothing is written; a fork child's first own allocation brings the
 * snapshot first. Returns the slots taken, or 0 when the event goes on
 * to be recorded.
 */
static unsigned gated(struct cg_ring *r, const struct cg_event *e, unsigned kind)
{
	struct cg_live v;
	switch (kind) {
	case CG_EV_ALLOC:
	case CG_EV_DEV_ALLOC:
		if (w.gate == CG_GATE_FIRST_ALLOC) {
			uint64_t ns = trace_ns(e->ts);
			if (ns < w.last_ns)
				ns = w.last_ns;
			snapshot(ns);
			w.gate = CG_GATE_OPEN;
			return 0;
		}
		cg_live_insert(kind == CG_EV_ALLOC ? e->addr : cg_live_key(e),
			       &(struct cg_live){e->size, e->category,
						 kind == CG_EV_ALLOC ? CG_PROBE_HOST : e->step,
						 CG_ENC_NO_ORD});
		return 1;
	case CG_EV_FREE:
	case CG_EV_DEV_FREE:
		/* Before the child's snapshot: the block is simply not in it. */
		cg_live_remove(cg_live_key(e), &v);
		return 1;
	case CG_EV_DEV_INFO:
		return 0;
	default:
		break;
	}
	/* A fork child's other records before its first allocation go out, not counted. */
	if (w.gate == CG_GATE_FIRST_ALLOC)
		return 0;
	if (kind == CG_EV_SPAN_START && e->span > w.span_seen)
		w.span_seen = e->span;
	if (kind == CG_EV_DEV_MEMINFO)
		r->has_pending_oom = false;
	cg_event_discard(e);
	return 1;
}

/*
 * In a window: spans begun before it are not in the trace; their records
 * go to s1, and the window's own spans are numbered from s2.
 */
static inline uint32_t window_span(uint32_t s)
{
	return s < w.span_first ? 1 : s - w.span_first + 2;
}

/* Returns false for an event of a span the trace does not hold. */
static bool renumber(struct cg_event *e, unsigned kind)
{
	if (kind == CG_EV_SPAN_START || kind == CG_EV_SPAN_END) {
		if (e->span < w.span_first) {
			cg_event_discard(e);
			return false;
		}
		if (kind == CG_EV_SPAN_START)
			e->size = window_span((uint32_t)e->size);
		e->span = window_span(e->span);
	} else if (kind == CG_EV_ALLOC || kind == CG_EV_FREE || kind == CG_EV_DEV_ALLOC ||
		   kind == CG_EV_DEV_FREE) {
		e->span = window_span(e->span);
	}
	return true;
}

/* A module list went on a memory record: its modules are written. */
static inline void modules_carried(const struct cg_enc_stack *st)
{
	if (__builtin_expect(st->n_modules != 0, 0))
		modules_written();
}

/* A record went out without the stack it was to define: it is never named again. */
static inline void stack_carried(const struct cg_enc_stack *st)
{
	if (__builtin_expect(st->refused, 0))
		cg_intern_failed(st->id);
}

static inline void heap_alloc(struct cg_ring *r, uint64_t pos, const struct cg_event *e,
			      uint64_t ns)
{
	struct cg_enc_stack st;
	stack_of(&st, r, pos, true);
	uint64_t ord = w.enc->alloc(e, ns, &st);
	stack_carried(&st);
	cg_live_insert(e->addr, &(struct cg_live){e->size, e->category, CG_PROBE_HOST, ord});
	cg_figures_stack(st.id);
	modules_carried(&st);
}

static inline void device_alloc(struct cg_ring *r, uint64_t pos, const struct cg_event *e,
				uint64_t ns)
{
	uint8_t device = e->step;
	struct cg_enc_stack st;
	stack_of(&st, r, pos, true);
	uint64_t ord = w.enc->device_alloc(e, ns, &st, ident_of(device));
	stack_carried(&st);
	cg_live_insert(cg_live_key(e), &(struct cg_live){e->size, e->category, device, ord});
	cg_figures_stack(st.id);
	ident_drop(device);
	modules_carried(&st);
}

/*
 * A free, given the size, category and device of the allocation it ends;
 * false for one of a block never recorded. A host free can end device
 * memory (pinned memory through free()), a device source's free host
 * memory (its pinned memory, device cpu): both are the source's records.
 */
static inline bool free_record(struct cg_ring *r, uint64_t pos, const struct cg_event *e,
			       unsigned kind, uint64_t ns)
{
	struct cg_event ev = *e;
	uint8_t device;
	uint64_t ord;
	if (!match_free(&ev, &device, &ord))
		return false;
	struct cg_enc_stack st;
	stack_of(&st, r, pos, false);
	if (kind == CG_EV_FREE && device == CG_PROBE_HOST) {
		w.enc->free(&ev, ns, ord, &st);
	} else {
		w.enc->device_free(&ev, ns, device, ord, &st, ident_of(device));
		ident_drop(device);
	}
	modules_carried(&st);
	return true;
}

static void device_memory(struct cg_ring *r, const struct cg_event *e, uint64_t ns)
{
	uint8_t device = e->step;
	w.enc->device_memory(e, ns, r->has_pending_oom ? &r->pending_oom : NULL, ident_of(device));
	r->has_pending_oom = false;
	ident_drop(device);
}

/*
 * An event at ns becomes its record; false for one that is none (a free
 * of a block never recorded, what a later record carries).
 */
static inline bool record(struct cg_ring *r, uint64_t pos, const struct cg_event *e,
			  unsigned kind, uint64_t ns)
{
	/* Host heap records first: the bulk of any trace, tested before the jump table. */
	if (kind == CG_EV_ALLOC) {
		heap_alloc(r, pos, e, ns);
		return true;
	}
	if (kind == CG_EV_FREE || kind == CG_EV_DEV_FREE)
		return free_record(r, pos, e, kind, ns);
	switch (kind) {
	case CG_EV_DEV_ALLOC:
		device_alloc(r, pos, e, ns);
		return true;
	case CG_EV_DEV_OOM:
		r->pending_oom = e->addr;
		r->has_pending_oom = true;
		return false;
	case CG_EV_DEV_MEMINFO:
		device_memory(r, e, ns);
		return true;
	case CG_EV_DEV_INFO:
		/* Announced once per device per trace, ahead of its first event. */
		ident_drop(e->step);
		w.ident[e->step] = (struct cg_device_ident){(char *)(uintptr_t)e->addr, e->size};
		return false;
	case CG_EV_SPAN_START:
		w.enc->span_start(e, ns, (uint64_t)r->tid);
		break;
	case CG_EV_GRADIENT:
		w.enc->gradient(e);
		break;
	case CG_EV_CHECKPOINT:
		w.enc->checkpoint(e, ns);
		break;
	default: {
		uint64_t start = e->size ? trace_ns(e->size) : ns;
		w.enc->span_end(e->span, ns > start ? ns - start : 0);
		return true;
	}
	}
	/* The name or blob the event carried is written. */
	cg_event_discard(e);
	return true;
}

/* The slots the event at pos takes, applied. */
static unsigned process(struct cg_ring *r, uint64_t pos)
{
	const struct cg_event *e = &r->ev[pos % CG_RING_EVENTS];
	unsigned kind = e->kind & CG_EV_KIND_MASK;
	/* Not records: what the records after them carry (never a heap event's kinds). */
	_Static_assert(CG_EV_ALLOC < CG_EV_STACK && CG_EV_FREE < CG_EV_STACK &&
			   CG_EV_STACK < CG_EV_MODULES && CG_EV_STACK < CG_EV_UNLOAD,
		       "heap events skip the carried kinds' tests");
	if (__builtin_expect(kind >= CG_EV_STACK, 0)) {
		if (kind == CG_EV_STACK) {
			define_stack(r, pos);
			return cg_event_slots(e);
		}
		if (kind == CG_EV_MODULES) {
			modules_arrive((struct cg_modules *)(uintptr_t)e->addr);
			return 1;
		}
		if (kind == CG_EV_UNLOAD) {
			cg_intern_unload();
			return 1;
		}
	}
	bool counted = true;
	if (__builtin_expect(w.gate != CG_GATE_OPEN, 0)) {
		unsigned n = gated(r, e, kind);
		if (n)
			return n;
		counted = w.gate == CG_GATE_OPEN;
	}
	/* The writer owns the slot until it is released: the window's numbers go in place. */
	if (__builtin_expect(w.span_first != 0, 0) && !renumber((struct cg_event *)e, kind))
		return 1;
	/*
	 * Threads' stamps can disagree by a few ns: the trace's times never go
	 * back (a packed record carries a delta from the one before it), and a
	 * thread's own stay strictly increasing.
	 */
	uint64_t ns = trace_ns(e->ts);
	if (ns < w.last_ns)
		ns = w.last_ns;
	if (ns <= r->last_ns)
		ns = r->last_ns + 1;
	r->last_ns = ns;
	w.last_ns = ns;
	if (record(r, pos, e, kind, ns))
		w.events += counted;
	return 1;
}

/*
 * Events are applied in time order across threads, which is what lets one
 * thread own the live table. A round takes only events stamped before
 * `safe`, read before the heads: any event that happened before one of
 * those was pushed before its stamp, so it is in this round too, and the
 * address an event names cannot be reused before its event is applied.
 */
static void drain(bool all)
{
	uint64_t safe = all ? UINT64_MAX : cg_clock_ticks();
	size_t n = 0;
	for (struct cg_ring *r = cg_rings_first(); r && n < MAX_RINGS; r = r->next) {
		cursors[n] =
		    (struct cursor){r, atomic_load_explicit(&r->tail, memory_order_relaxed),
				    atomic_load_explicit(&r->head, memory_order_acquire)};
		n++;
	}
	n_cursors = n;
	cg_clock_map_anchor(&w.clock);
	bool prefetch = cg_live_large();
	for (;;) {
		/* The earliest head of line, and the one after it: take a run up to that. */
		struct cursor *best = NULL;
		uint64_t best_ts = UINT64_MAX, next_ts = UINT64_MAX;
		for (size_t i = 0; i < n; i++) {
			struct cursor *c = &cursors[i];
			if (c->pos == c->end)
				continue;
			uint64_t ts = c->r->ev[c->pos % CG_RING_EVENTS].ts;
			if (ts < best_ts) {
				next_ts = best_ts;
				best_ts = ts;
				best = c;
			} else if (ts < next_ts) {
				next_ts = ts;
			}
		}
		if (!best || best_ts >= safe)
			break;
		/* The run's last stamp: up to the next head of line, before safe (one compare an event). */
		uint64_t last = next_ts < safe ? next_ts : safe - 1;
		w.enc->thread((uint64_t)best->r->tid);
		/* The run's ring and place in locals: the cursor is written back where others read it. */
		struct cg_ring *r = best->r;
		uint64_t pos = best->pos, end = best->end;
		do {
			/*
			 * With many allocations live, the table is far larger than
			 * the cache and each lookup a miss: start them early, so
			 * several are in flight at once. A small table is cached,
			 * and there the lookahead is only extra work.
			 */
			if (prefetch && end - pos > LOOKAHEAD)
				cg_live_prefetch(cg_live_key(&r->ev[(pos + LOOKAHEAD) % CG_RING_EVENTS]));
			uint64_t was = pos;
			pos += process(r, pos);
			if (__builtin_expect(*w.full, 0)) {
				best->pos = pos;
				outside_table(emit_buffer);
			}
			/* Room as it is made: a producer waiting on a full ring need not wait out
			 * the round. */
			if (__builtin_expect((pos ^ was) >= 512, 0)) {
				best->pos = pos;
				cg_ring_release(r, pos);
				fork_point();
				/* Far more than 512 events' items: blocks end only here and per
				 * round. */
				if (w.enc->block_due())
					outside_table(w.enc->end_block);
			}
		} while (pos != end && r->ev[pos % CG_RING_EVENTS].ts <= last);
		best->pos = pos;
	}
	release_all();
	n_cursors = 0;
}

static void close_root(void)
{
	if (w.root_closed)
		return;
	uint64_t now = cg_clock_now(), duration = now > w.base_ns ? now - w.base_ns : 0;
	/*
	 * Under the TSC, records' times come from ticks through the anchors'
	 * rate, which can run a few hundred ns ahead of the kernel's clock
	 * read here: the root span still ends no earlier than its last record.
	 */
	if (duration < w.last_ns)
		duration = w.last_ns;
	w.enc->span_end(1, duration);
	w.root_closed = true;
}

/* CGPROBE_STATS=1: where the writer's time went, one line on stderr (even when quiet). */
static void print_stats(void)
{
	uint64_t total = thread_ns();
	/* The head's two records, the root's end: what an encoder that counts none has. */
	struct cg_enc_stats s = {.records = w.events + 2 + w.root_closed};
	w.enc->stats(&s);
	uint64_t compress = s.compress_ns, wrote = s.write_ns;
	uint64_t rest = total > compress + wrote ? total - compress - wrote : 0;
	struct cg_intern_stats is;
	cg_intern_stats(&is);
	uint64_t unwinds[CG_RING_UNWIND_KINDS];
	cg_rings_unwinds(unwinds);
	char line[896];
	int n = snprintf(line, sizeof(line),
			 "cgprobe: stats: %s: %s, %llu events, %llu records, %llu bytes (%llu raw), "
			 "%llu blocks; writer CPU %.1f ms: %s %.1f, compress %.1f, write %.1f ms; "
			 "%.1f ns/event; stacks %llu sent, %llu nodes, %llu addresses; memory: probe %.1f MiB "
			 "(stack tables %.1f, writer's tree %.1f), process peak %.1f MiB; "
			 "threads waited for ring room %llu times; unwinds %llu fast, %llu libunwind, "
			 "%llu differed\n",
			 w.path, s.name, (unsigned long long)w.events,
			 (unsigned long long)s.records, (unsigned long long)w.out->written,
			 (unsigned long long)s.raw_bytes, (unsigned long long)s.blocks,
			 (double)total / 1e6, s.work, (double)rest / 1e6,
			 (double)compress / 1e6, (double)wrote / 1e6,
			 w.events ? (double)total / (double)w.events : 0.0,
			 (unsigned long long)is.sent, (unsigned long long)is.nodes,
			 (unsigned long long)is.addresses,
			 (double)w.end.probe / 1048576.0, (double)w.end.stacks / 1048576.0,
			 (double)is.resident / 1048576.0, (double)w.end.peak_rss / 1048576.0,
			 (unsigned long long)(cg_rings_full() - w.rings_full),
			 (unsigned long long)unwinds[CG_RING_UNWOUND_FAST],
			 (unsigned long long)unwinds[CG_RING_UNWOUND_LIBUNWIND],
			 (unsigned long long)unwinds[CG_RING_UNWOUND_DIFFERED]);
	if (n > 0)
		(void)!write(STDERR_FILENO, line,
			     (size_t)n < sizeof(line) ? (size_t)n : sizeof(line));
}

/* The trace ends (or its process execs): its head gets the figures it ends with. */
static void end_head(void)
{
	if (!w.end_figures || w.dropped)
		return;
	w.end_figures(&w.end);
	w.enc->end_head(&w.end);
}

/* A round hold is answered after a round that drained for it; a fork hold after any. */
static void round_end(int req)
{
	cg_park_point((req & CG_REQ_PARK) != 0);
}

/* One round: drain, honour requests, flush. Returns false when finished. */
static bool round_trip(void)
{
	int req = atomic_exchange(&w.requests, 0);
	drain(req != 0);
	if (req & CG_REQ_WINDOW_END) {
		/* The window's end ends the trace's root span; later records stay out. */
		close_root();
		w.gate = CG_GATE_AFTER;
	}
	/* Until its head is written the trace gets nothing; it is closed as it is. */
	if (w.head_later) {
		if (req & CG_REQ_FINISH) {
			cg_out_close(w.out);
			atomic_store(&w.finished, true);
		}
		if (req) {
			atomic_fetch_add(&w.done, 1);
			futex((atomic_int *)&w.done, FUTEX_WAKE_PRIVATE, INT_MAX, NULL);
		}
		round_end(req);
		return !(req & CG_REQ_FINISH);
	}
	/* Before the root's end goes in: any record but the head's is one of the program's. */
	if ((req & CG_REQ_DROP_EMPTY) && w.events == 0) {
		/* Without a file nothing can be recorded: hooks must not wait on the rings. */
		cg_recording_stop();
		w.dropped = true;
		req |= CG_REQ_FINISH;
	}
	if (req & (CG_REQ_CLOSE_ROOT | CG_REQ_FINISH))
		close_root();
	/* The drain applied and released every event it took: a fork may go on meanwhile. */
	cg_park_outside_begin();
	w.enc->round_end((req & ~CG_REQ_PARK) != 0);
	cg_park_outside_end();
	check_output();
	if (req & (CG_REQ_CLOSE_ROOT | CG_REQ_FINISH))
		end_head();
	if (req & CG_REQ_FINISH) {
		/* The encoder stays allocated: freeing could meet a malloc lock a crash left held.
		 */
		cg_out_close(w.out);
		w.enc->close();
		if (w.stats && !w.dropped)
			print_stats();
		atomic_store(&w.finished, true);
	} else if (req & CG_REQ_CLOSE_ROOT) {
		cg_out_trim(w.out); /* before exec: the file may never be closed by us */
	}
	if (req) {
		atomic_fetch_add(&w.done, 1);
		futex((atomic_int *)&w.done, FUTEX_WAKE_PRIVATE, INT_MAX, NULL);
	}
	round_end(req);
	return !(req & CG_REQ_FINISH);
}

static void *writer_main(void *arg)
{
	(void)arg;
	/* The writer's own allocations are not the program's: keep them out. */
	cg_self.guard = 1;
	/* Begun outside the table by cg_writer_start: a fork under way holds it here. */
	cg_park_outside_end();
	for (;;) {
		/* Until the encoder wants a round (a compact block: a flush period after the last). */
		uint64_t wait = w.enc->due_in();
		struct timespec ts = {(time_t)(wait / 1000000000u), (long)(wait % 1000000000u)};
		/* Waiting, the writer holds nothing a fork needs. */
		cg_park_outside_begin();
		if (atomic_load(&w.wake) == 0 && atomic_load(&w.requests) == 0)
			futex(&w.wake, FUTEX_WAIT_PRIVATE, 0, &ts);
		cg_park_outside_end();
		atomic_store(&w.wake, 0);
		if (!round_trip())
			break;
		cg_rings_reclaim();
	}
	/* Finished, it touches the table no more: forks need not wait for it. */
	cg_park_outside_begin();
	return NULL;
}

int cg_writer_start(struct cg_out *out, const struct cg_writer_opts *o)
{
	w.out = out;
	w.enc = o->enc;
	w.full = o->enc->full;
	w.path = o->path;
	/* The rings' consumer: a full or half-full ring wakes the writer. */
	cg_rings_set_wake(cg_writer_wake);
	w.stats = o->stats;
	w.rings_full = cg_rings_full();
	w.end_figures = o->end_figures;
	w.end = (struct cg_enc_end){0, 0, 0};
	w.events = 0;
	/* A session before this one (an exec that failed) may have ended the thread. */
	if (w.joinable)
		pthread_join(w.thread, NULL);
	w.joinable = false;
	w.root_closed = false;
	w.gate = o->gate;
	w.head_later = o->head_later;
	w.base_ns = 0;
	w.span_first = w.span_seen = 0;
	w.dropped = false;
	w.warned = false;
	atomic_store(&w.finished, false);
	cg_park_reset();
	cg_clock_map_start(&w.clock);
	/* A fork child keeps what it inherited, for its snapshot. */
	cg_figures_new_trace(o->keep_live);
	if (!o->keep_live)
		cg_live_clear();
	else
		cg_live_keep_host();
	modules_reset();
	/* Without the table a trace simply has no stacks. */
	if (o->stacks)
		(void)cg_intern_reset();
	cg_py_codes_new_trace();
	/* An identity the last trace never wrote belongs to it: this trace announces anew. */
	for (size_t i = 0; i < sizeof(w.ident) / sizeof(w.ident[0]); i++)
		ident_drop((uint8_t)i);
	w.last_ns = 0;
	/* What the slots named belongs to the last trace: every thread sends its stacks anew. */
	for (struct cg_ring *r = cg_rings_first(); r; r = r->next) {
		r->last_ns = 0;
		memset(r->stack_names, 0, sizeof(r->stack_names));
	}
	/*
	 * Until the new thread runs it has touched nothing: a fork meanwhile
	 * (a fork child forking at once, a thread not scheduled yet under load)
	 * need not wait for it to be scheduled.
	 */
	cg_park_outside_begin();
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int r = pthread_create(&w.thread, NULL, writer_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	w.running = r == 0;
	return -r;
}

int cg_writer_request(int req, int timeout_ms)
{
	if (!w.out)
		return 0;
	if (!w.running) {
		atomic_fetch_or(&w.requests, req);
		round_trip();
		if ((req & CG_REQ_FINISH) || w.dropped)
			w.out = NULL;
		return 0;
	}
	unsigned seen = atomic_load(&w.done);
	atomic_fetch_or(&w.requests, req);
	cg_writer_wake();
	uint64_t deadline = cg_clock_raw() + (uint64_t)timeout_ms * 1000000u;
	while (atomic_load(&w.done) == seen) {
		uint64_t now = cg_clock_raw();
		if (now >= deadline)
			return -ETIMEDOUT;
		struct timespec ts = {0, 10000000};
		futex((atomic_int *)&w.done, FUTEX_WAIT_PRIVATE, (int)seen, &ts);
	}
	/* No join: this may run in a signal handler, and the thread ends by itself. */
	if ((req & CG_REQ_FINISH) || w.dropped) {
		w.running = false;
		w.joinable = true;
		w.out = NULL;
	}
	return 0;
}

void cg_writer_wait_finished(int timeout_ms)
{
	uint64_t deadline = cg_clock_raw() + (uint64_t)timeout_ms * 1000000u;
	while (w.running && !atomic_load(&w.finished) && cg_clock_raw() < deadline) {
		struct timespec ms = {0, 1000000};
		nanosleep(&ms, NULL);
	}
}

void cg_writer_forget(void)
{
	cg_park_reset();
	w.running = false;
	w.joinable = false;
	w.out = NULL;
	atomic_store(&w.requests, 0);
	atomic_store(&w.wake, 0);
}

/* A round hold: the next round drains every ring for it. */
static void ask_round(void)
{
	atomic_fetch_or(&w.requests, CG_REQ_PARK);
	cg_writer_wake();
}

int cg_writer_hold(enum cg_park_kind kind, int timeout_ms, uint32_t *ticket)
{
	*ticket = 0;
	if (!w.running)
		return 0;
	/* A fork hold needs no round: a waiting writer answers it as it waits. */
	return cg_park_hold(kind, timeout_ms, kind == CG_PARK_ROUND ? ask_round : NULL, ticket);
}

void cg_writer_release(uint32_t ticket)
{
	if (ticket)
		cg_park_release(ticket);
}

void cg_writer_head_written(void)
{
	w.head_later = false;
}

void cg_writer_window_begin(uint64_t base_ns)
{
	w.last_ns = 0;
	for (struct cg_ring *r = cg_rings_first(); r; r = r->next)
		r->last_ns = 0;
	w.span_first = w.span_seen + 1 > 2 ? w.span_seen + 1 : 2;
	w.head_later = false;
	snapshot(0);
	/*
	 * Times start again from the window's begin, which its head anchors
	 * on the other clocks (cgprobe_clock_*): the update's own records
	 * follow the snapshot the thread that began it waited for.
	 */
	w.base_ns = base_ns;
	w.gate = CG_GATE_OPEN;
}
