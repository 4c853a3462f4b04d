/* SPDX-License-Identifier: MIT */
/*
 * The floor of the profile-function way of keeping Python frames: a C
 * profile function that does nothing, installed on the calling thread by
 * cg_floor_install() (loaded with ctypes.PyDLL, so the GIL is held). Any
 * per-call shadow stack costs at least this. The interpreter's C API is
 * looked up in the process, as the probe does: no libpython is linked.
 */
#include <dlfcn.h>

/* PyEval_SetProfile(Py_tracefunc, PyObject *): the types as opaque pointers. */
typedef int (*trace_fn)(void *obj, void *frame, int what, void *arg);
typedef void (*set_profile_fn)(trace_fn fn, void *obj);

static int nothing(void *obj, void *frame, int what, void *arg)
{
	(void)obj;
	(void)frame;
	(void)what;
	(void)arg;
	return 0;
}

__attribute__((visibility("default"))) int cg_floor_install(void);

int cg_floor_install(void)
{
	set_profile_fn set = (set_profile_fn)dlsym(RTLD_DEFAULT, "PyEval_SetProfile");
	if (!set)
		return -1;
	set(nothing, (void *)0);
	return 0;
}
