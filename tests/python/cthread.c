/* SPDX-License-Identifier: MIT */
/*
 * A thread that Python never started: made with pthread_create in C, it
 * takes the GIL with PyGILState_Ensure and calls a Python function, as a
 * C library's worker calling back into Python does (tests/python/frames.py
 * --cthread). Built without Python's headers: the interpreter that loads
 * it exports the few functions declared here.
 */
#include <pthread.h>
#include <stddef.h>

int PyGILState_Ensure(void);
void PyGILState_Release(int state);
void *PyObject_CallObject(void *callable, void *args);
void Py_DecRef(void *obj);

int cg_test_call_in_c_thread(void *callable);

static void *call(void *callable)
{
	int state = PyGILState_Ensure();
	void *r = PyObject_CallObject(callable, NULL);
	if (r)
		Py_DecRef(r);
	PyGILState_Release(state);
	return r;
}

int cg_test_call_in_c_thread(void *callable)
{
	pthread_t t;
	void *r = NULL;
	if (pthread_create(&t, NULL, call, callable) || pthread_join(t, &r))
		return -1;
	return r ? 0 : -1;
}
