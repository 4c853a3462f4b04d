/* SPDX-License-Identifier: MIT */
#include "span_blob.h"

#include <stdbool.h>
#include <string.h>

#include "real.h"

/* Where the trailer begins after len bytes of strings: 8-aligned, as malloc's blocks are. */
static size_t extra_at(size_t len)
{
	return (len + 7) & ~(size_t)7;
}

/* Appends s (n bytes) and its NUL at w; returns the end. */
static char *put(char *w, const char *s, size_t n)
{
	memcpy(w, s, n);
	w[n] = '\0';
	return w + n + 1;
}

char *cg_span_blob_make(const char *name, const char *thread, const struct cg_span_info *info,
                        unsigned *flags)
{
	static const struct cg_span_info none;
	if (!info)
		info = &none;
	size_t n = strnlen(name, CG_SPAN_NAME_MAX), t = thread ? strlen(thread) : 0;
	size_t p = info->phase ? strnlen(info->phase, CG_SPAN_NAME_MAX) : 0;
	size_t len = n + 1 + (thread ? t + 1 : 0) + (info->phase ? p + 1 : 0);
	bool extra = info->update || info->rank || info->n_ranges;
	size_t total = extra ? extra_at(len) + sizeof(struct cg_span_extra) +
	                           2 * info->n_ranges * sizeof(uint64_t)
	                     : len;
	char *blob = cg_real.malloc(total);
	if (!blob)
		return NULL;
	char *w = put(blob, name, n);
	if (thread) {
		w = put(w, thread, t);
		*flags |= CG_SPAN_NAMED;
	}
	if (info->phase) {
		w = put(w, info->phase, p);
		*flags |= CG_SPAN_PHASE;
	}
	if (extra) {
		struct cg_span_extra *x = (void *)(blob + extra_at(len));
		x->update = info->update;
		x->rank = info->rank;
		x->world_size = info->rank ? info->world_size : 0;
		x->n_values = 2 * info->n_ranges;
		for (size_t i = 0; i < info->n_ranges; i++) {
			x->values[2 * i] = (uint64_t)(uintptr_t)info->ptrs[i];
			x->values[2 * i + 1] = info->bytes[i];
		}
		*flags |= CG_SPAN_EXTRA;
	}
	return blob;
}

void cg_span_blob_read(const char *blob, unsigned flags, struct cg_span_view *v)
{
	*v = (struct cg_span_view){blob, NULL, NULL, NULL};
	const char *r = blob + strlen(blob) + 1;
	if (flags & CG_SPAN_NAMED) {
		v->thread = r;
		r += strlen(r) + 1;
	}
	if (flags & CG_SPAN_PHASE) {
		v->phase = r;
		r += strlen(r) + 1;
	}
	if (flags & CG_SPAN_EXTRA)
		v->extra = (const void *)(blob + extra_at((size_t)(r - blob)));
}
