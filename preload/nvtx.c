/* SPDX-License-Identifier: MIT */
/*
 * libcgprobe.so as an NVTX injection library (NVTX_INJECTION64_PATH): the
 * program's first NVTX call loads it and calls InitializeInjectionNvtx2,
 * which fills the core modules' function tables with the callbacks below.
 * Push/pop ranges become spans on the thread's stack; start/end ranges
 * spans beside it, which may overlap and end on any thread. CGPROBE_STEPS
 * (stepmap.h) maps range names to steps and phases, CGPROBE_UPDATE_RANGE
 * to updates (updates.h). The NVTX ABI is stable: the few types used are
 * spelled here, so the probe builds without its headers.
 */
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <wchar.h>

#include "capture.h"
#include "cgtrace.h"
#include "probe.h"
#include "real.h"
#include "span_blob.h"
#include "spans.h"
#include "state.h"
#include "stepmap.h"
#include "thread.h"
#include "updates.h"

/* nvtxTypes.h and nvToolsExt.h, version 3. */
typedef void (*nvtx_fn)(void);
typedef nvtx_fn **nvtx_table;
enum { ETID_CALLBACKS = 1 };
enum { MODULE_CORE = 1, MODULE_CORE2 = 5 };
enum {
	CORE_RANGE_START_EX = 4,
	CORE_RANGE_START_A = 5,
	CORE_RANGE_START_W = 6,
	CORE_RANGE_END = 7,
	CORE_RANGE_PUSH_EX = 8,
	CORE_RANGE_PUSH_A = 9,
	CORE_RANGE_PUSH_W = 10,
	CORE_RANGE_POP = 11,
};
enum {
	CORE2_RANGE_START_EX = 2,
	CORE2_RANGE_END = 3,
	CORE2_RANGE_PUSH_EX = 4,
	CORE2_RANGE_POP = 5,
	CORE2_REGISTER_STRING_A = 10,
	CORE2_REGISTER_STRING_W = 11,
	CORE2_CREATE_A = 12,
	CORE2_CREATE_W = 13,
};
enum { MSG_ASCII = 1, MSG_UNICODE = 2, MSG_REGISTERED = 3 };

struct export_callbacks {
	size_t struct_size;
	int (*get_module_table)(int module, nvtx_table *out, unsigned *out_size);
};

struct event_attributes {
	uint16_t version, size;
	uint32_t category;
	int32_t color_type;
	uint32_t color;
	int32_t payload_type, reserved0;
	uint64_t payload;
	int32_t message_type;
	union {
		const char *ascii;
		const wchar_t *unicode;
		const void *registered;
	} message;
};

/* A name in UTF-8, cut to fit. */
#define NAME_MAX_BYTES 512

static const char *from_wide(const wchar_t *w, char out[NAME_MAX_BYTES])
{
	size_t n = 0;
	for (; w && *w && n + 4 < NAME_MAX_BYTES; w++) {
		uint32_t c = (uint32_t)*w;
		if (c > 0x10ffff || (c >= 0xd800 && c < 0xe000))
			c = 0xfffd;
		if (c < 0x80) {
			out[n++] = (char)c;
		} else if (c < 0x800) {
			out[n++] = (char)(0xc0 | c >> 6);
			out[n++] = (char)(0x80 | (c & 0x3f));
		} else if (c < 0x10000) {
			out[n++] = (char)(0xe0 | c >> 12);
			out[n++] = (char)(0x80 | ((c >> 6) & 0x3f));
			out[n++] = (char)(0x80 | (c & 0x3f));
		} else {
			out[n++] = (char)(0xf0 | c >> 18);
			out[n++] = (char)(0x80 | ((c >> 12) & 0x3f));
			out[n++] = (char)(0x80 | ((c >> 6) & 0x3f));
			out[n++] = (char)(0x80 | (c & 0x3f));
		}
	}
	out[n] = '\0';
	return out;
}

/* Registered strings and domains are copies kept for the process's life, as NVTX's are. */
static const char *keep(const char *s)
{
	size_t n = strnlen(s ? s : "", NAME_MAX_BYTES - 1);
	char *p = cg_real.malloc(n + 1);
	if (!p)
		return "?";
	memcpy(p, s ? s : "", n);
	p[n] = '\0';
	return p;
}

static const char *attr_name(const struct event_attributes *a, char buf[NAME_MAX_BYTES])
{
	if (!a)
		return "?";
	switch (a->message_type) {
	case MSG_ASCII:
		return a->message.ascii ? a->message.ascii : "?";
	case MSG_UNICODE:
		return from_wide(a->message.unicode, buf);
	case MSG_REGISTERED:
		return a->message.registered ? (const char *)a->message.registered : "?";
	}
	return "?";
}

/* Whether a range is a training update's (CGPROBE_UPDATE_RANGE's globs, capture.c). */
static bool is_update(const char *name)
{
	return cg_capture_is_update_range(name);
}

/*
 * The push/pop range of this thread that opened the update open now: its
 * depth and the update's number (0: none). One at most: a range begun
 * while an update is open joins it (updates.h).
 */
static __thread struct {
	int depth;
	uint64_t n;
} owner __attribute__((tls_model("initial-exec")));

static int push(const char *name)
{
	if (!cg_recording())
		return -1;
	cg_self.guard++;
	const char *phase;
	uint8_t step = cg_stepmap_find(name, &phase);
	int d = cg_self.depth;
	uint64_t n = is_update(name) ? cg_update_range_begin() : 0;
	struct cg_span_info info = {.update = n, .phase = phase};
	uint64_t id = cg_span_begin(name, step, CGTRACE_SPAN_FUNCTION, 0, &info);
	if (n && id) {
		owner.depth = d;
		owner.n = n;
	} else if (n) {
		cg_update_range_end(n); /* not recorded after all: nothing will end it */
	}
	cg_self.guard--;
	return id ? d : -1;
}

static int pop(void)
{
	cg_self.guard++;
	int before = cg_self.depth;
	uint64_t id = cg_span_pop();
	int d = cg_self.depth;
	/* The span ends first, then the update: the window's trace holds the end. */
	if (d < before && owner.n && d == owner.depth) {
		uint64_t n = owner.n;
		owner.n = 0;
		cg_update_range_end(n);
	}
	cg_self.guard--;
	return id ? d : -1;
}

/*
 * Start/end ranges open: the start's stamp and step in a table whose slot
 * is claimed with a compare-and-swap and freed at the range's end. The
 * range id NVTX hands the program is the span's number and the slot
 * (SLOT_BITS bits). Past LOOSE_SLOTS open at once a range is a span
 * without a step whose end is not recorded.
 */
#define LOOSE_SLOTS 4096
#define CLAIMING UINT64_MAX
#define SLOT_BITS 13 /* a slot, or LOOSE_SLOTS for none */
static struct {
	_Atomic uint64_t id; /* 0: free */
	uint64_t ticks;
	uint8_t step;
	uint64_t update; /* the update the range opened, 0: none */
} loose[LOOSE_SLOTS];

static size_t claim(uint64_t hint)
{
	for (size_t k = 0; k < LOOSE_SLOTS; k++) {
		size_t i = (hint + k) % LOOSE_SLOTS;
		uint64_t want = 0;
		if (atomic_load_explicit(&loose[i].id, memory_order_relaxed) == 0 &&
		    atomic_compare_exchange_strong(&loose[i].id, &want, CLAIMING))
			return i;
	}
	return LOOSE_SLOTS;
}

static uint64_t start(const char *name)
{
	if (!cg_recording())
		return 0;
	cg_self.guard++;
	static atomic_uint_fast64_t hint;
	size_t i = claim(atomic_fetch_add_explicit(&hint, 1, memory_order_relaxed));
	bool kept = i < LOOSE_SLOTS;
	const char *phase = NULL;
	uint8_t step = kept ? cg_stepmap_find(name, &phase) : CGTRACE_STEP_NONE;
	uint64_t n = kept && is_update(name) ? cg_update_range_begin() : 0;
	uint64_t ticks;
	struct cg_span_info info = {.update = n, .phase = phase};
	uint64_t id = cg_span_start_loose(name, step, &info, &ticks);
	if (n && !id) { /* not recorded after all: the update ends with nothing kept */
		cg_update_range_end(n);
		n = 0;
	}
	if (kept) {
		loose[i].ticks = ticks;
		loose[i].step = step;
		loose[i].update = n;
		atomic_store_explicit(&loose[i].id, id, memory_order_release);
	}
	cg_self.guard--;
	return id ? id << SLOT_BITS | i : 0;
}

static void end(uint64_t range)
{
	uint64_t id = range >> SLOT_BITS, want = id;
	size_t i = range & ((1u << SLOT_BITS) - 1);
	if (!id || i >= LOOSE_SLOTS)
		return;
	cg_self.guard++;
	uint64_t ticks = loose[i].ticks;
	uint8_t step = loose[i].step;
	uint64_t update = loose[i].update;
	if (atomic_compare_exchange_strong(&loose[i].id, &want, 0)) {
		cg_span_end_loose(id, step, ticks);
		cg_update_range_end(update);
	}
	cg_self.guard--;
}

static int range_push_a(const char *m)
{
	return push(m ? m : "?");
}

static int range_push_w(const wchar_t *m)
{
	char buf[NAME_MAX_BYTES];
	return push(from_wide(m, buf));
}

static int range_push_ex(const struct event_attributes *a)
{
	char buf[NAME_MAX_BYTES];
	return push(attr_name(a, buf));
}

static uint64_t range_start_a(const char *m)
{
	return start(m ? m : "?");
}

static uint64_t range_start_w(const wchar_t *m)
{
	char buf[NAME_MAX_BYTES];
	return start(from_wide(m, buf));
}

static uint64_t range_start_ex(const struct event_attributes *a)
{
	char buf[NAME_MAX_BYTES];
	return start(attr_name(a, buf));
}

/* Named domains: their ranges are spans like the default domain's. */
static int domain_push_ex(const void *domain, const struct event_attributes *a)
{
	(void)domain;
	return range_push_ex(a);
}

static int domain_pop(const void *domain)
{
	(void)domain;
	return pop();
}

static uint64_t domain_start_ex(const void *domain, const struct event_attributes *a)
{
	(void)domain;
	return range_start_ex(a);
}

static void domain_end(const void *domain, uint64_t id)
{
	(void)domain;
	end(id);
}

static const void *domain_create_a(const char *name)
{
	cg_self.guard++;
	const char *d = keep(name);
	cg_self.guard--;
	return d;
}

static const void *domain_create_w(const wchar_t *name)
{
	char buf[NAME_MAX_BYTES];
	return domain_create_a(from_wide(name, buf));
}

static const void *register_string_a(const void *domain, const char *s)
{
	(void)domain;
	return domain_create_a(s);
}

static const void *register_string_w(const void *domain, const wchar_t *s)
{
	(void)domain;
	return domain_create_w(s);
}

static void set(nvtx_table t, unsigned size, unsigned slot, nvtx_fn fn)
{
	if (slot < size && t[slot])
		*t[slot] = fn;
}

/* Returns 1: NVTX keeps the callbacks; 0 when the tables cannot be had. */
CG_PROBE_EXPORT int InitializeInjectionNvtx2(const void *(*get_export_table)(uint32_t id));
CG_PROBE_EXPORT int InitializeInjectionNvtx2(const void *(*get_export_table)(uint32_t id))
{
	const struct export_callbacks *cb =
	    get_export_table ? get_export_table(ETID_CALLBACKS) : NULL;
	nvtx_table core, core2;
	unsigned n_core, n_core2;
	if (!cb || cb->struct_size < sizeof(*cb) || !cb->get_module_table ||
	    !cb->get_module_table(MODULE_CORE, &core, &n_core) ||
	    !cb->get_module_table(MODULE_CORE2, &core2, &n_core2))
		return 0;
	set(core, n_core, CORE_RANGE_PUSH_A, (nvtx_fn)range_push_a);
	set(core, n_core, CORE_RANGE_PUSH_W, (nvtx_fn)range_push_w);
	set(core, n_core, CORE_RANGE_PUSH_EX, (nvtx_fn)range_push_ex);
	set(core, n_core, CORE_RANGE_POP, (nvtx_fn)pop);
	set(core, n_core, CORE_RANGE_START_A, (nvtx_fn)range_start_a);
	set(core, n_core, CORE_RANGE_START_W, (nvtx_fn)range_start_w);
	set(core, n_core, CORE_RANGE_START_EX, (nvtx_fn)range_start_ex);
	set(core, n_core, CORE_RANGE_END, (nvtx_fn)end);
	set(core2, n_core2, CORE2_RANGE_PUSH_EX, (nvtx_fn)domain_push_ex);
	set(core2, n_core2, CORE2_RANGE_POP, (nvtx_fn)domain_pop);
	set(core2, n_core2, CORE2_RANGE_START_EX, (nvtx_fn)domain_start_ex);
	set(core2, n_core2, CORE2_RANGE_END, (nvtx_fn)domain_end);
	set(core2, n_core2, CORE2_CREATE_A, (nvtx_fn)domain_create_a);
	set(core2, n_core2, CORE2_CREATE_W, (nvtx_fn)domain_create_w);
	set(core2, n_core2, CORE2_REGISTER_STRING_A, (nvtx_fn)register_string_a);
	set(core2, n_core2, CORE2_REGISTER_STRING_W, (nvtx_fn)register_string_w);
	return 1;
}
