/* SPDX-License-Identifier: MIT */
/*
 * A stack's allocation site: the first frame in the user's code, as the
 * table of user_code.c tells it. The probe drops its own frames when it
 * records; what is left between the call and the user's code (operator new
 * calling malloc, std::vector's allocator templates inlined into the
 * program, libstdc++'s string growth) is skipped.
 */
#include <errno.h>

#include "cgtrace.h"
#include "export.h"
#include "symbols.h"

/* A Python frame as the symbols resolve one: no module, a function (cgtrace_symbols_python). */
static bool python_frame(const struct cgtrace_frame *f)
{
	return (f->address & CGTRACE_PY_FRAME) && CGTRACE_PY_FRAME_CODE(f->address) && f->function &&
	       !f->module;
}

/*
 * A stack with Python frames: the innermost of them in the user's code,
 * else the innermost (docs/symbols.md); n when there is none.
 */
static size_t python_site(const struct cgtrace_frame *const *frames, size_t n)
{
	size_t first = n;
	for (size_t i = 0; i < n; i++) {
		if (!python_frame(frames[i]))
			continue;
		if (cgtrace_frame_code(frames[i]) == CGTRACE_CODE_USER)
			return i;
		if (first == n)
			first = i;
	}
	return first;
}

/*
 * The site among n frames: the Python rule where there are Python
 * frames; else the first in the user's code; without one, the first
 * outside the allocator (a runtime's own allocation, such as libstdc++'s
 * start-up), else the outermost.
 */
CG_EXPORT size_t cgtrace_frames_site(const struct cgtrace_frame *const *frames, size_t n)
{
	size_t py = python_site(frames, n);
	if (py < n)
		return py;
	return cgtrace_frames_site_native(frames, n);
}

CG_EXPORT size_t cgtrace_frames_site_native(const struct cgtrace_frame *const *frames, size_t n)
{
	size_t outside = n;
	for (size_t i = 0; i < n; i++) {
		if (python_frame(frames[i]))
			continue;
		enum cgtrace_code c = cgtrace_frame_code(frames[i]);
		if (c == CGTRACE_CODE_USER)
			return i;
		if (c != CGTRACE_CODE_ALLOCATOR && outside == n)
			outside = i;
	}
	return outside < n ? outside : n ? n - 1 : 0;
}

/*
 * The frames of st's addresses, each address's inlined ones first: how
 * many in *n, and into frames unless it is NULL (a first pass counts).
 */
static int stack_frames(struct cgtrace_symbols *s, const struct cgtrace_stack *st,
                        const struct cgtrace_frame **frames, size_t *n)
{
	*n = 0;
	for (size_t k = 0; k < st->n_frames; k++) {
		const struct cgtrace_frame *f;
		size_t m;
		int r = cgtrace_symbols_resolve(s, st->frames[k], st->defined_ns, &f, &m);
		if (r < 0)
			return r;
		for (size_t j = 0; frames && j < m; j++)
			frames[*n + j] = &f[j];
		*n += m;
	}
	return 0;
}

CG_EXPORT long cgtrace_symbols_frames(struct cgtrace_symbols *s, const uint64_t *addresses,
				      size_t n, uint64_t defined_ns,
				      const struct cgtrace_frame **out, size_t max)
{
	size_t got = 0;
	for (size_t k = 0; k < n; k++) {
		const struct cgtrace_frame *f;
		size_t m;
		int r = cgtrace_symbols_resolve(s, addresses[k], defined_ns, &f, &m);
		if (r < 0)
			return r;
		for (size_t j = 0; j < m; j++, got++)
			if (got < max)
				out[got] = &f[j];
	}
	return (long)got;
}

CG_EXPORT int cgtrace_symbols_stack(struct cgtrace_symbols *s, const struct cgtrace_stack *st,
                                    struct cgtrace_resolved_stack *out)
{
	*out = (struct cgtrace_resolved_stack){0};
	size_t n;
	/* Two passes over cached lookups: count, then fill an array of the right size. */
	int r = stack_frames(s, st, NULL, &n);
	if (r < 0)
		return r;
	const struct cgtrace_frame **frames = cg_symbols_alloc(s, n * sizeof(*frames));
	if (!frames)
		return -ENOMEM;
	r = stack_frames(s, st, frames, &n);
	if (r < 0)
		return r;
	*out = (struct cgtrace_resolved_stack){frames, n, cgtrace_frames_site(frames, n)};
	return 0;
}
