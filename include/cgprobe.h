/* SPDX-License-Identifier: MIT */
/*
 * Optional annotations for programs profiled by libcgprobe.so.
 *
 * Nothing has to change in a program for the probe to record its heap and
 * GPU memory. A program that wants memory attributed to training steps
 * (forward/backward/optimizer, giving the categories activation, gradient
 * and optimizer) can open spans around them. The cgprobe_*_opt() forms at
 * the end find the probe at first use and do nothing without it:
 *
 *	uint64_t id = cgprobe_span_begin_opt("forward", CGPROBE_STEP_FORWARD);
 *	...
 *	cgprobe_span_end_opt(id);
 *
 * Or define CGPROBE_OPTIONAL before including this header to declare the
 * functions weak: the program then runs unchanged without the probe, where
 * the functions are NULL.
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

#include <stddef.h>
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

/*
 * The functions below return 0 (or an id) when the process is not being
 * recorded, and a negative errno for bad arguments.
 */
enum cgprobe_span_kind { CGPROBE_KIND_FUNCTION = 0, CGPROBE_KIND_OP = 1, CGPROBE_KIND_MODULE = 2 };
/* flags: the span is the trace's one measured region (trace/6 `measured`). */
#define CGPROBE_SPAN_MEASURED 1u
/*
 * flags: with step CGPROBE_STEP_NONE, the span is a phase of training
 * other than the three steps, named after the span (cgprobe_phase: its
 * name), such as "data" around loading a batch. A phase's name is 1 to 31
 * bytes of [A-Za-z0-9_.-]; "forward", "backward" and "optimizer" are the
 * steps themselves, "none" no phase; another name is a bad argument (the
 * span is not opened: 0). With a step set the flag is ignored: the step
 * is the phase.
 */
#define CGPROBE_SPAN_PHASE 2u
/* cgprobe_span_begin with a span kind and flags; the span ends with cgprobe_span_end. */
CGPROBE_DECL uint64_t cgprobe_span_begin_ex(const char *name, enum cgprobe_step step,
					    enum cgprobe_span_kind kind, unsigned flags);

enum cgprobe_grad_state {
	CGPROBE_GRAD_PRESENT = 0,
	CGPROBE_GRAD_MISSING = 1,
	CGPROBE_GRAD_ZERO = 2,
	CGPROBE_GRAD_NON_FINITE = 3,
};
/* A `gradient` record: parameter key under root, its state and norm (NaN: none). */
CGPROBE_DECL int cgprobe_gradient(const char *root, const char *key,
				  enum cgprobe_grad_state state, double norm);
/*
 * A `device_memory` record for device ("cuda:0"); reserved and allocated:
 * UINT64_MAX when absent. allocated_bytes (a caching allocator's bytes in
 * live tensors) rides as the extension field cgprobe_allocated_bytes.
 */
CGPROBE_DECL int cgprobe_device_checkpoint(const char *device, uint64_t used_bytes,
					   uint64_t free_bytes, uint64_t reserved_bytes,
					   uint64_t allocated_bytes);
/*
 * Training updates, numbered 1, 2, ... in begin order across the process:
 * begin returns the update's number (0 when not recorded) and opens a span
 * `update` carrying it (cgprobe_update), beside the calling thread's stack
 * like an NVTX start/end range; end closes the one open and its span, from
 * any thread (-EINVAL when none is). A begin while one is open ends that
 * one first; inside an update an NVTX range marks (ProfilerStep#N), begin
 * joins it: its number, no span of its own, and the next end ends nothing.
 */
CGPROBE_DECL uint64_t cgprobe_update_begin(void);
CGPROBE_DECL int cgprobe_update_end(void);
/*
 * Memory [ptr, ptr + bytes) holds model parameters: allocations inside it,
 * and the allocation starting at ptr, are categorized `parameter`. The
 * mark also travels in the trace, as a span `parameters` under the
 * calling thread's innermost span, ended at once, whose start carries the
 * range (cgprobe_parameters), so a reader counts the bytes as parameter
 * from the mark on; a mark made while the process is not recorded (a
 * capture window still to come) is kept for the categories alone.
 * -EINVAL for an empty or wrapping range; -ENOSPC when the probe's table
 * of ranges (thousands, merged where they touch) is full: the categories
 * miss the range, the trace still has it.
 */
CGPROBE_DECL int cgprobe_mark_parameters(const void *ptr, uint64_t bytes);
/*
 * n ranges at once, [ptrs[i], ptrs[i] + bytes[i]), in one span that lists
 * them in call order: a model's parameters told in one call. -EINVAL for
 * NULL arrays, n 0, or any empty or wrapping range, -E2BIG for n above
 * 65536 (nothing is marked then); -ENOSPC as cgprobe_mark_parameters.
 */
CGPROBE_DECL int cgprobe_mark_parameters_n(const void *const *ptrs, const uint64_t *bytes,
					   size_t n);
/* Names the calling thread in the trace (threads are otherwise named from their comm). */
CGPROBE_DECL int cgprobe_thread_name(const char *name);
/*
 * The process's rank in its job of many processes, and the job's size
 * (world_size 0 or less: unknown), for a rank known only once the program
 * runs (torch.multiprocessing.spawn, init_process_group(rank=...)) rather
 * than from a launcher's variables: a span `process_group` under the
 * calling thread's innermost span, ended at once, whose start carries
 * cgprobe_rank and, when known, cgprobe_world_size (docs/jobs.md).
 * -EINVAL for a negative rank, or one not below a known world_size.
 */
CGPROBE_DECL int cgprobe_process_rank(int64_t rank, int64_t world_size);

/*
 * Live figures, for a program that checks its own memory as it runs (the
 * pytest plugin, docs/pytest.md) without reading the trace. For each
 * device (named as the trace names it: "cpu", "cuda:0"), the bytes of the
 * allocations recorded and not freed now, and the highest they reached
 * since the last mark. The probe's writer thread keeps them as it applies
 * every thread's events in order, so each call first waits for it to
 * apply everything pushed so far (microseconds when idle, a few
 * milliseconds under load): "now" is exact at the call, and the peak is
 * the exact maximum of live bytes over the events applied since the mark,
 * not a sample. The allocation hooks do no more work for them.
 * Allocations the trace leaves out (--min-bytes) count nowhere. These
 * return -ENODEV when the process is not being recorded, -ETIMEDOUT when
 * the writer did not answer within 5 s.
 */
struct cgprobe_memory_figures {
	uint64_t live_bytes;       /* recorded and not freed now */
	uint64_t live_count;       /* the allocations those are */
	uint64_t peak_bytes;       /* the highest live_bytes since the mark */
	uint64_t mark_bytes;       /* live_bytes when the mark was made */
	uint64_t mark;             /* the mark peak_bytes counts from; 0: since the trace began */
	/*
	 * The allocation the peak is put down to: the largest of those that
	 * raised peak_bytes since the mark, unless it was freed before a
	 * later one raised it; 0: none since the mark.
	 */
	uint64_t peak_alloc_bytes;
	/*
	 * An allocation made since the mark and still live, which a leak is
	 * put down to: the largest made since the last one of those was
	 * freed; 0: none live. Its site: cgprobe_memory_kept_site.
	 */
	uint64_t kept_alloc_bytes;
};
/*
 * A mark: every device's peak starts again from its live bytes now. Marks
 * are numbered 1, 2, ... across the process (*mark, when mark is not NULL):
 * one mark for all devices and callers, so a caller that needs its own
 * window compares the mark in the figures with the one it made.
 */
CGPROBE_DECL int cgprobe_memory_mark(uint64_t *mark);
/*
 * Device's figures into out, of size bytes (sizeof(*out); fields appended
 * later are left out for an older caller). -ENOENT for a device with no
 * allocation recorded yet (its figures are zero), -EINVAL for NULL.
 */
CGPROBE_DECL int cgprobe_memory_now(const char *device, struct cgprobe_memory_figures *out,
				    size_t size);
/*
 * The devices with allocations recorded, "cpu" first, comma-separated
 * into buf (len bytes, NUL-terminated): their count, -ENOSPC when it does
 * not fit.
 */
CGPROBE_DECL int cgprobe_memory_devices(char *buf, size_t len);
/*
 * Where device's peak since the mark comes from: the innermost Python
 * frame (CPython 3.8 to 3.13, docs/python-frames.md) of the allocation
 * it is put down to, the one of peak_alloc_bytes. Native frames are not
 * resolved in the process: -ENOENT when that stack has no Python frame,
 * when call stacks are off (CGPROBE_STACK_DEPTH=0) or no allocation
 * raised the peak since the mark. The file is its tail when longer.
 */
struct cgprobe_memory_site {
	char file[1024];
	char function[256]; /* the qualified name from 3.11 */
	int64_t line;       /* the code's first line when its table gives that instruction none */
};
CGPROBE_DECL int cgprobe_memory_site(const char *device, struct cgprobe_memory_site *out,
				     size_t size);
/* The same for the allocation of kept_alloc_bytes: where a leak since the mark comes from. */
CGPROBE_DECL int cgprobe_memory_kept_site(const char *device, struct cgprobe_memory_site *out,
					  size_t size);

/*
 * The same functions found at first use: cgprobe_x_opt(...) looks up
 * cgprobe_x once with dlsym and does nothing (returns 0) when the probe is
 * not loaded, so a program needs no link dependency on the probe and no
 * weak symbols (glibc before 2.34 wants -ldl for dlsym). Each costs one
 * load and a call when the probe is there, one load and a compare when it
 * is not. Define CGPROBE_NO_OPT to leave them out.
 */
#ifndef CGPROBE_NO_OPT
#include <dlfcn.h>
#ifndef RTLD_DEFAULT /* glibc names it only with _GNU_SOURCE; its value is NULL */
#define RTLD_DEFAULT ((void *)0)
#endif

/* The function, or NULL when absent; the slot holds its own address for "looked, absent". */
static inline void *cgprobe_opt_find_(void **slot, const char *name)
{
	void *p = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
	if (__builtin_expect(p == (void *)0, 0)) {
		p = dlsym(RTLD_DEFAULT, name);
		if (!p)
			p = (void *)slot;
		__atomic_store_n(slot, p, __ATOMIC_RELEASE);
	}
	return p == (void *)slot ? (void *)0 : p;
}

#define CGPROBE_OPT_(ret, name, params, args)                                                   \
	static inline ret name##_opt params                                                    \
	{                                                                                      \
		static void *slot;                                                             \
		ret(*fn) params;                                                               \
		*(void **)&fn = cgprobe_opt_find_(&slot, #name);                               \
		return fn ? fn args : (ret)0;                                                  \
	}

CGPROBE_OPT_(uint64_t, cgprobe_span_begin, (const char *name, enum cgprobe_step step),
	     (name, step))
CGPROBE_OPT_(int, cgprobe_span_end, (uint64_t id), (id))
CGPROBE_OPT_(int, cgprobe_flush, (void), ())
CGPROBE_OPT_(uint64_t, cgprobe_span_begin_ex,
	     (const char *name, enum cgprobe_step step, enum cgprobe_span_kind kind,
	      unsigned flags),
	     (name, step, kind, flags))
CGPROBE_OPT_(int, cgprobe_gradient,
	     (const char *root, const char *key, enum cgprobe_grad_state state, double norm),
	     (root, key, state, norm))
CGPROBE_OPT_(int, cgprobe_device_checkpoint,
	     (const char *device, uint64_t used_bytes, uint64_t free_bytes,
	      uint64_t reserved_bytes, uint64_t allocated_bytes),
	     (device, used_bytes, free_bytes, reserved_bytes, allocated_bytes))
CGPROBE_OPT_(uint64_t, cgprobe_update_begin, (void), ())
CGPROBE_OPT_(int, cgprobe_update_end, (void), ())
CGPROBE_OPT_(int, cgprobe_mark_parameters, (const void *ptr, uint64_t bytes), (ptr, bytes))
CGPROBE_OPT_(int, cgprobe_mark_parameters_n,
	     (const void *const *ptrs, const uint64_t *bytes, size_t n), (ptrs, bytes, n))
CGPROBE_OPT_(int, cgprobe_thread_name, (const char *name), (name))
CGPROBE_OPT_(int, cgprobe_process_rank, (int64_t rank, int64_t world_size), (rank, world_size))
CGPROBE_OPT_(int, cgprobe_memory_mark, (uint64_t *mark), (mark))
CGPROBE_OPT_(int, cgprobe_memory_now,
	     (const char *device, struct cgprobe_memory_figures *out, size_t size),
	     (device, out, size))
CGPROBE_OPT_(int, cgprobe_memory_devices, (char *buf, size_t len), (buf, len))
CGPROBE_OPT_(int, cgprobe_memory_site,
	     (const char *device, struct cgprobe_memory_site *out, size_t size),
	     (device, out, size))
CGPROBE_OPT_(int, cgprobe_memory_kept_site,
	     (const char *device, struct cgprobe_memory_site *out, size_t size),
	     (device, out, size))
#undef CGPROBE_OPT_
#endif

#ifdef __cplusplus
}
#endif

#endif
