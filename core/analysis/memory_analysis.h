/* SPDX-License-Identifier: MIT */
/* The memory analysis behind cgtrace_memory_analyze, with the peak's live set optional. */
#ifndef CG_MEMORY_ANALYSIS_H
#define CG_MEMORY_ANALYSIS_H

#include <stdbool.h>

#include <stdint.h>

#include "cgtrace.h"

struct cg_stream;

/* A whole peak breakdown; a number below keeps that many largest (peak_largest.h). */
#define CG_BREAKDOWN_ALL SIZE_MAX

/* breakdown 0 leaves peak_breakdown empty: the summary needs only the peak. */
int cg_memory_analyze(const struct cgtrace_doc *d, struct cgtrace_memory_report **out,
		      size_t breakdown);
/* The report of an analysis that has taken all its records and finished. */
int cg_memory_report(const struct cg_stream *s, struct cgtrace_memory_report **out,
		     size_t breakdown);

#endif
