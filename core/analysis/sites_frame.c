/* SPDX-License-Identifier: MIT */
/*
 * A stack's allocation site: the first frame that is neither the allocator
 * nor the probe. The probe drops its own frames when it records, so what
 * is left to skip is the code between the call and the hooked entry point:
 * operator new calling malloc, a CUDA runtime call above the driver's,
 * glibc's aliases. They are told by symbol name (the table below, the one
 * place that lists them) or, for the probe, by module.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cgtrace.h"
#include "export.h"
#include "symbols.h"

struct alloc_name {
	const char *name;
	bool prefix; /* matches every name that starts with it */
};

static const struct alloc_name allocator_names[] = {
    /* The C allocator and glibc's internal names of it. */
    {"malloc", false},
    {"calloc", false},
    {"realloc", false},
    {"reallocarray", false},
    {"free", false},
    {"memalign", false},
    {"aligned_alloc", false},
    {"posix_memalign", false},
    {"valloc", false},
    {"pvalloc", false},
    {"__libc_malloc", false},
    {"__libc_calloc", false},
    {"__libc_realloc", false},
    {"__libc_memalign", false},
    {"__libc_valloc", false},
    {"__libc_pvalloc", false},
    {"__posix_memalign", false},
    /* Copies that allocate for their caller. */
    {"strdup", false},
    {"strndup", false},
    {"__strdup", false},
    {"__strndup", false},
    /* operator new and new[], all their overloads (nothrow, align_val_t), mangled and not. */
    {"_Znwm", true},
    {"_Znam", true},
    {"_Znwj", true},
    {"_Znaj", true},
    {"operator new", true},
    /*
     * Runtimes' own allocation layers, whose callers are the sites users
     * mean: CPython's allocator API (and its internal names), and the CPU
     * allocator under every PyTorch tensor.
     */
    {"PyMem_Malloc", false},
    {"PyMem_Calloc", false},
    {"PyMem_Realloc", false},
    {"PyMem_RawMalloc", false},
    {"PyMem_RawCalloc", false},
    {"PyMem_RawRealloc", false},
    {"PyObject_Malloc", false},
    {"PyObject_Calloc", false},
    {"PyObject_Realloc", false},
    {"_PyMem_Raw", true},
    {"_PyObject_Malloc", true},
    {"_PyObject_Calloc", true},
    {"_PyObject_Realloc", true},
    {"pymalloc_", true},
    {"c10::alloc_cpu", true},
    /* The CUDA runtime's and driver's allocation calls. */
    {"cudaMalloc", true},
    {"cudaHostAlloc", true},
    {"cuMemAlloc", true},
    {"cuMemHostAlloc", true},
    {"cuMemCreate", true},
};

#define PROBE_LIBRARY "libcgprobe.so"

CG_EXPORT bool cgtrace_frame_is_allocator(const struct cgtrace_frame *f)
{
	if (f->module) {
		const char *base = strrchr(f->module, '/');
		base = base ? base + 1 : f->module;
		if (strncmp(base, PROBE_LIBRARY, strlen(PROBE_LIBRARY)) == 0)
			return true;
	}
	if (!f->function)
		return false;
	for (size_t i = 0; i < sizeof(allocator_names) / sizeof(allocator_names[0]); i++) {
		const struct alloc_name *a = &allocator_names[i];
		if (a->prefix ? strncmp(f->function, a->name, strlen(a->name)) == 0
		              : strcmp(f->function, a->name) == 0)
			return true;
	}
	return false;
}

CG_EXPORT int cgtrace_symbols_stack(struct cgtrace_symbols *s, const struct cgtrace_stack *st,
                                    struct cgtrace_resolved_stack *out)
{
	*out = (struct cgtrace_resolved_stack){0};
	size_t n = 0;
	/* Two passes over cached lookups: count, then fill an array of the right size. */
	for (size_t k = 0; k < st->n_frames; k++) {
		const struct cgtrace_frame *f;
		size_t m;
		int r = cgtrace_symbols_resolve(s, st->frames[k], st->defined_ns, &f, &m);
		if (r < 0)
			return r;
		n += m;
	}
	const struct cgtrace_frame **frames = cg_symbols_alloc(s, n * sizeof(*frames));
	if (!frames)
		return -ENOMEM;
	size_t at = 0;
	for (size_t k = 0; k < st->n_frames; k++) {
		const struct cgtrace_frame *f;
		size_t m;
		int r = cgtrace_symbols_resolve(s, st->frames[k], st->defined_ns, &f, &m);
		if (r < 0)
			return r;
		for (size_t j = 0; j < m; j++)
			frames[at++] = &f[j];
	}
	size_t site = 0;
	while (site < n && cgtrace_frame_is_allocator(frames[site]))
		site++;
	/* Nothing but allocator frames: the outermost is the best there is. */
	if (site == n && n)
		site = n - 1;
	*out = (struct cgtrace_resolved_stack){frames, n, site};
	return 0;
}
