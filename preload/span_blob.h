/* SPDX-License-Identifier: MIT */
/*
 * What a span start event carries (event.h: its addr): one allocation the
 * hook makes through cg_real.malloc (spans.c) and the writer frees once
 * the record is written (format.c reads it). Flags in the event's
 * category byte say which parts follow the name:
 *
 *   name\0
 *   thread name\0            CG_SPAN_NAMED: the opening thread's, once per thread
 *   phase\0                  CG_SPAN_PHASE: a phase other than the three steps
 *   struct cg_span_extra     CG_SPAN_EXTRA: at the next multiple of 8 from the start
 */
#ifndef CG_SPAN_BLOB_H
#define CG_SPAN_BLOB_H

#include <stddef.h>
#include <stdint.h>

#define CG_SPAN_MEASURED 1u /* trace/6 `measured` */
#define CG_SPAN_NAMED 2u
#define CG_SPAN_PHASE 4u
#define CG_SPAN_EXTRA 8u

/* The update a span stands for, the process's rank it tells, and the parameter ranges it marks. */
struct cg_span_extra {
	uint64_t update;     /* cgprobe_update, 0: none */
	uint64_t rank;       /* cgprobe_rank + 1, 0: none */
	uint64_t world_size; /* cgprobe_world_size, 0: none */
	uint64_t n_values;   /* cgprobe_parameters: address and length pairs, two values a range */
	uint64_t values[];
};

/* What a span start says beyond its name, step and kind; zero: nothing. */
struct cg_span_info {
	uint64_t update;   /* the update the span stands for (1, 2, ...) */
	const char *phase; /* a valid phase name (stepmap.h) */
	/* n_ranges ranges of parameters, [ptrs[i], ptrs[i] + bytes[i]), in this order */
	const void *const *ptrs;
	const uint64_t *bytes;
	size_t n_ranges;
	/* the process's rank in its job, + 1 (0: none), and the job's size (0: unknown) */
	uint64_t rank, world_size;
};

/* A span's name is cut here; a thread's name and a phase are shorter already. */
#define CG_SPAN_NAME_MAX 4096

/*
 * The blob for a span named name, with the thread's name when thread is
 * not NULL, and what info says (NULL: nothing); *flags gets the parts'
 * flags added. NULL when memory runs out.
 */
char *cg_span_blob_make(const char *name, const char *thread, const struct cg_span_info *info,
                        unsigned *flags);

/* A blob read back: the parts its flags say it holds, NULL for the others. */
struct cg_span_view {
	const char *name, *thread, *phase;
	const struct cg_span_extra *extra;
};
void cg_span_blob_read(const char *blob, unsigned flags, struct cg_span_view *v);

#endif
