/* SPDX-License-Identifier: MIT */
/*
 * Optional annotations for programs profiled by libcgprobe.so.
 *
 * Nothing has to change in a program for the probe to record its heap and
 * GPU memory. A program that wants memory attributed to training steps
 * (forward/backward/optimizer, giving the categories activation, gradient
 * and optimizer) can open spans around them. Define CGPROBE_OPTIONAL before
 * including this header to declare the functions weak: the program then
 * runs unchanged without the probe, where the functions are NULL.
 *
 *	#define CGPROBE_OPTIONAL
 *	#include <cgprobe.h>
 *	uint64_t id = cgprobe_span_begin ? cgprobe_span_begin("forward", CGPROBE_STEP_FORWARD) : 0;
 *	...
 *	if (cgprobe_span_end)
 *		cgprobe_span_end(id);
 */
#ifndef CGPROBE_H
#define CGPROBE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifdef CGPROBE_OPTIONAL
#define CGPROBE_DECL __attribute__((weak))
#else
#define CGPROBE_DECL
#endif

enum cgprobe_step {
	CGPROBE_STEP_NONE = 0,
	CGPROBE_STEP_FORWARD = 1,
	CGPROBE_STEP_BACKWARD = 2,
	CGPROBE_STEP_OPTIMIZER = 3,
};

/*
 * Opens a span on the calling thread under its innermost open span (the
 * process's root span s1 when none). Returns the span's number (2, 3, ...)
 * or 0 when the process is not being recorded.
 */
CGPROBE_DECL uint64_t cgprobe_span_begin(const char *name, enum cgprobe_step step);
/* Closes the calling thread's innermost span, which must be id: 0 or -EINVAL. */
CGPROBE_DECL int cgprobe_span_end(uint64_t id);
/* Writes everything recorded so far to the trace file: 0 or a negative errno. */
CGPROBE_DECL int cgprobe_flush(void);

#ifdef __cplusplus
}
#endif

#endif
