/* SPDX-License-Identifier: MIT */
/*
 * Python frames in call stacks (docs/python-frames.md). Where the process
 * runs CPython 3.8 to 3.13, a hook reads the allocating thread's own frame
 * chain: only that thread changes it, and it is inside the allocator, so
 * the chain holds still while it is read, with or without the GIL, which
 * is never taken. Nothing runs on a Python call or return. The frames are
 * merged into the native stack in place of the interpreter's evaluation
 * calls that run them, as tagged words (CG_PY_FRAME below), so the stack
 * table, the tree and both encodings carry them as they carry addresses.
 */
#ifndef CG_PYTHON_H
#define CG_PYTHON_H

#include <stdbool.h>
#include <stdint.h>

#include "py_codes.h"

/* Whether hooks read Python frames (an interpreter was found, CGPROBE_PYTHON not off). */
extern bool cg_python_on;

/*
 * At probe start, outside hooks, after cg_stack_setup: finds the
 * interpreter by its exported C API and its version's layout; one warning
 * when CGPROBE_PYTHON=on finds none, or a version it does not know.
 */
void cg_python_setup(void);

/* A thread's cache of the code objects it met (python.c): this many bytes, 0 when off. */
struct cg_py_cache;
size_t cg_python_cache_len(void);
/*
 * In a hook: the native frames f[0..n) (innermost first) with the calling
 * thread's Python frames merged in, into out (room for cap words);
 * returns the words written. Without Python frames on this thread, the
 * native frames as they are. cache: the thread's (zeroed memory of
 * cg_python_cache_len bytes), NULL for none.
 */
unsigned cg_python_merge(struct cg_py_cache *cache, void *const *f, unsigned n, uint64_t *out,
			 unsigned cap);

#endif
