/* SPDX-License-Identifier: MIT */
#include "spans.h"

#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/prctl.h>

#include "push.h"
#include "real.h"
#include "run_meta.h"
#include "span_blob.h"
#include "state.h"
#include "thread.h"
#include "warn.h"

/*
 * Span numbers: s1 is the root, annotations count from s2 across all
 * threads, in start order: the number and the start's stamp are taken
 * together, under a spin lock held for those two reads only. A thread that
 * re-enters from a signal handler while it holds the lock gets no span.
 */
static uint32_t next_span = 2;
static atomic_flag id_lock = ATOMIC_FLAG_INIT;
static __thread bool taking_id __attribute__((tls_model("initial-exec")));

static bool next_id(uint32_t *id, uint64_t *ts)
{
	if (taking_id)
		return false;
	taking_id = true;
	while (atomic_flag_test_and_set_explicit(&id_lock, memory_order_acquire))
		;
	*id = next_span++;
	*ts = cg_stamp(false);
	atomic_flag_clear_explicit(&id_lock, memory_order_release);
	taking_id = false;
	return true;
}
static atomic_uint_fast32_t next_gradient = 1;

/*
 * The open steps of the whole process: a 16-bit count per step (forward,
 * backward, optimizer) and, in bits 48-49, the step opened last among
 * those still open, which stands for the innermost.
 */
static _Atomic uint64_t step_word;

#define STEP_SHIFT(s) (16u * ((unsigned)(s)-1u))
#define STEP_COUNT(w, s) (((w) >> STEP_SHIFT(s)) & 0xffffu)
#define STEP_LAST(w) ((uint8_t)(((w) >> 48) & 3u))

static void steps_open(uint8_t s)
{
	if (s == CGTRACE_STEP_NONE)
		return;
	uint64_t w = atomic_load_explicit(&step_word, memory_order_relaxed), nw;
	do {
		if (STEP_COUNT(w, s) == 0xffffu)
			return;
		nw = ((w + (1ull << STEP_SHIFT(s))) & ~(3ull << 48)) | (uint64_t)s << 48;
	} while (!atomic_compare_exchange_weak_explicit(&step_word, &w, nw, memory_order_relaxed,
	                                                memory_order_relaxed));
}

static void steps_close(uint8_t s)
{
	if (s == CGTRACE_STEP_NONE)
		return;
	uint64_t w = atomic_load_explicit(&step_word, memory_order_relaxed), nw;
	do {
		if (STEP_COUNT(w, s) == 0)
			return;
		nw = w - (1ull << STEP_SHIFT(s));
		uint8_t last = STEP_LAST(nw);
		/* The last one closed: the latest of training's order still open stands in. */
		if (last && STEP_COUNT(nw, last) == 0) {
			last = 0;
			for (uint8_t t = CGTRACE_STEP_OPTIMIZER; t >= CGTRACE_STEP_FORWARD && !last;
			     t--)
				if (STEP_COUNT(nw, t))
					last = t;
		}
		nw = (nw & ~(3ull << 48)) | (uint64_t)last << 48;
	} while (!atomic_compare_exchange_weak_explicit(&step_word, &w, nw, memory_order_relaxed,
	                                                memory_order_relaxed));
}

uint8_t cg_steps_open_anywhere(void)
{
	return STEP_LAST(atomic_load_explicit(&step_word, memory_order_relaxed));
}

uint8_t cg_thread_category(void)
{
	int d = cg_self.depth < CG_MAX_SPAN_DEPTH ? cg_self.depth : CG_MAX_SPAN_DEPTH;
	for (int i = d - 1; i >= 0; i--)
		if (cg_self.step[i] != CGTRACE_STEP_NONE)
			return (uint8_t)cg_category_for_step((enum cgtrace_step)cg_self.step[i],
			                                     false);
	uint8_t s = cg_steps_open_anywhere();
	return s ? (uint8_t)cg_category_for_step((enum cgtrace_step)s, false) : CGTRACE_CAT_OTHER;
}

void cg_spans_after_fork(void)
{
	/* Another thread may have held it at the fork: it is gone. */
	atomic_flag_clear(&id_lock);
	taking_id = false;
	cg_self.depth = 0;
	cg_self.name_sent = false;
	atomic_store(&step_word, 0);
}

/* The thread's name when no span_start carried it yet (it rides once), else NULL. */
static const char *thread_name_due(void)
{
	if (cg_self.name_sent)
		return NULL;
	/* Named by the program, else by its comm (at most 16 bytes with the NUL). */
	if (!cg_self.name[0])
		(void)prctl(PR_GET_NAME, cg_self.name, 0, 0, 0);
	cg_self.name[sizeof(cg_self.name) - 1] = '\0';
	return cg_self.name[0] ? cg_self.name : NULL;
}

/* The blob of a span the calling thread opens, its flags added (span_blob.h); NULL: no memory. */
static char *blob_for(const char *name, const struct cg_span_info *info, unsigned *flags)
{
	return cg_span_blob_make(name, thread_name_due(), info, flags);
}

/* The start's event, with its blob (NULL: a name "?"), which the writer frees. */
static uint64_t push_blob(char *blob, uint8_t step, uint8_t kind, unsigned flags, uint32_t id,
			  uint32_t parent, uint64_t ts)
{
	if (!blob)
		flags = 0;
	if (flags & CG_SPAN_NAMED)
		cg_self.name_sent = true;
	struct cg_event e = {
	    ts,  (uint64_t)(uintptr_t)blob, parent, id, CG_EV_SPAN_START, kind, (uint8_t)flags,
	    step};
	cg_push(&e, 0);
	return id;
}

static uint64_t push_start(const char *name, uint8_t step, uint8_t kind, unsigned flags,
			   const struct cg_span_info *info, uint32_t id, uint32_t parent, uint64_t ts)
{
	char *blob = blob_for(name, info, &flags);
	return push_blob(blob, step, kind, flags, id, parent, ts);
}

uint64_t cg_span_begin(const char *name, uint8_t step, uint8_t kind, unsigned flags,
		       const struct cg_span_info *info)
{
	if (!cg_recording() || !name || step > CGTRACE_STEP_OPTIMIZER ||
	    kind > CGTRACE_SPAN_MODULE)
		return 0;
	uint32_t parent = cg_thread_span(), id;
	uint64_t ts;
	if (!next_id(&id, &ts))
		return 0;
	int d = cg_self.depth++;
	if (d < CG_MAX_SPAN_DEPTH) {
		cg_self.span[d] = id;
		cg_self.step[d] = step;
		cg_self.start[d] = ts;
		steps_open(step);
	}
	return push_start(name, step, kind, flags & CG_SPAN_MEASURED, info, id, parent, ts);
}

/* The innermost span ends (d > 0): its step closes, its end is recorded. */
static void end_innermost(uint64_t id)
{
	int d = cg_self.depth--;
	uint64_t start = 0;
	if (d <= CG_MAX_SPAN_DEPTH) {
		steps_close(cg_self.step[d - 1]);
		start = cg_self.start[d - 1];
	}
	if (!cg_recording())
		return;
	uint64_t ts = cg_stamp(false);
	/* The writer turns the start's ticks into the duration; past the depth it is unknown. */
	struct cg_event e = {ts, 0, start, (uint32_t)id, CG_EV_SPAN_END, 0, 0, 0};
	cg_push(&e, 0);
}

int cg_span_end(uint64_t id)
{
	int d = cg_self.depth;
	/* Past the tracked depth ids cannot be checked; their duration is unknown (0). */
	if (d <= 0 || (d <= CG_MAX_SPAN_DEPTH && cg_self.span[d - 1] != id)) {
		static atomic_int warned;
		if (id != 0 && cg_recording() && !atomic_exchange(&warned, 1))
			cg_warn("a span ended that is not its thread's innermost open span; "
			        "such ends are ignored (warned once)",
			        NULL);
		return -EINVAL;
	}
	end_innermost(id);
	return 0;
}

uint64_t cg_span_pop(void)
{
	int d = cg_self.depth;
	if (d <= 0)
		return 0;
	uint64_t id = d <= CG_MAX_SPAN_DEPTH ? cg_self.span[d - 1] : 0;
	end_innermost(id);
	return id;
}

uint64_t cg_span_start_loose(const char *name, uint8_t step, const struct cg_span_info *info,
			     uint64_t *start_ticks)
{
	*start_ticks = 0;
	if (!cg_recording() || !name || step > CGTRACE_STEP_OPTIMIZER)
		return 0;
	uint32_t id;
	uint64_t ts;
	if (!next_id(&id, &ts))
		return 0;
	*start_ticks = ts;
	steps_open(step);
	return push_start(name, step, CGTRACE_SPAN_FUNCTION, 0, info, id, cg_thread_span(), ts);
}

void cg_span_end_loose(uint64_t id, uint8_t step, uint64_t start_ticks)
{
	steps_close(step);
	if (!cg_recording() || id == 0)
		return;
	uint64_t ts = cg_stamp(false);
	struct cg_event e = {ts,
	                     0,
	                     start_ticks && start_ticks < ts ? start_ticks : ts,
	                     (uint32_t)id,
	                     CG_EV_SPAN_END,
	                     0,
	                     0,
	                     0};
	cg_push(&e, 0);
}

int cg_span_instant(const char *name, const struct cg_span_info *info)
{
	if (!cg_recording() || !name)
		return 0;
	/* Made before the span has a number: one without its blob would say nothing. */
	unsigned flags = 0;
	char *blob = blob_for(name, info, &flags);
	if (!blob)
		return -ENOMEM;
	uint32_t id;
	uint64_t ts;
	if (!next_id(&id, &ts)) {
		cg_real.free(blob);
		return 0;
	}
	push_blob(blob, CGTRACE_STEP_NONE, CGTRACE_SPAN_FUNCTION, flags, id, cg_thread_span(), ts);
	/* Ended where it began: no start ticks, a duration of 0 (event.h). */
	struct cg_event e = {ts, 0, 0, id, CG_EV_SPAN_END, 0, 0, 0};
	cg_push(&e, 0);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Records of their own                                                */
/* ------------------------------------------------------------------ */

int cg_gradient(const char *root, const char *key, uint8_t state, double norm)
{
	if (!root || !key || state > CGTRACE_GRAD_NON_FINITE)
		return -EINVAL;
	if (!cg_recording())
		return 0;
	size_t a = strnlen(root, 4096), b = strnlen(key, 4096);
	struct cg_grad_blob *g = cg_real.malloc(sizeof(*g) + a + b + 2);
	if (!g)
		return -ENOMEM;
	g->norm = norm;
	g->state = state;
	memcpy(g->strings, root, a);
	g->strings[a] = '\0';
	memcpy(g->strings + a + 1, key, b);
	g->strings[a + 1 + b] = '\0';
	uint32_t n = (uint32_t)atomic_fetch_add(&next_gradient, 1);
	struct cg_event e = {
	    cg_stamp(false), (uint64_t)(uintptr_t)g, 0, n, CG_EV_GRADIENT, 0, 0, 0};
	cg_push(&e, 0);
	return 0;
}

int cg_checkpoint(const char *device, uint64_t used, uint64_t free_bytes, uint64_t reserved,
                  uint64_t allocated)
{
	if (!device || !*device)
		return -EINVAL;
	if (!cg_recording())
		return 0;
	size_t n = strnlen(device, 256);
	struct cg_ckpt_blob *c = cg_real.malloc(sizeof(*c) + n + 1);
	if (!c)
		return -ENOMEM;
	*c = (struct cg_ckpt_blob){used, free_bytes, reserved, allocated};
	memcpy(c->device, device, n);
	c->device[n] = '\0';
	struct cg_event e = {
	    cg_stamp(false), (uint64_t)(uintptr_t)c, 0, 0, CG_EV_CHECKPOINT, 0, 0, 0};
	cg_push(&e, 0);
	return 0;
}

int cg_thread_set_name(const char *name)
{
	if (!name)
		return -EINVAL;
	size_t n = strnlen(name, sizeof(cg_self.name) - 1);
	memcpy(cg_self.name, name, n);
	cg_self.name[n] = '\0';
	cg_self.name_sent = false;
	return 0;
}
