/* SPDX-License-Identifier: MIT */
/*
 * A bounded peak breakdown (CGTRACE_READ_PEAK_LARGEST): of the entries
 * live at the global peak, the largest few by bytes (then tensor id, the
 * breakdown's order), the others counted and summed, and all of them
 * grouped by op, without the array of every one.
 */
#ifndef CG_PEAK_LARGEST_H
#define CG_PEAK_LARGEST_H

#include <stddef.h>
#include <stdint.h>

#include "cgtrace.h"

struct cg_stream;

/* An entry's tensor id as the breakdown shows it: its string, the document's, or hex in buf. */
const char *cg_peak_entry_id(const struct cg_stream *s, uint32_t entry, char buf[19]);
/*
 * The entries live at the peak, at most max of them, the largest: into
 * *out (malloc'ed, in no order), their number in *n; rep's n_at_peak,
 * n_rest, rest_bytes, and, when some were left out, op_groups. 0 or -ENOMEM.
 */
int cg_peak_largest(const struct cg_stream *s, size_t max, uint32_t **out, size_t *n,
		    struct cgtrace_memory_report *rep);

#endif
