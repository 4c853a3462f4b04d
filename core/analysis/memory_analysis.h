/* SPDX-License-Identifier: MIT */
/* The memory analysis behind cgtrace_memory_analyze, with the peak's live set optional. */
#ifndef CG_MEMORY_ANALYSIS_H
#define CG_MEMORY_ANALYSIS_H

#include <stdbool.h>

#include "cgtrace.h"

struct cg_stream;

/* breakdown false leaves peak_breakdown empty: the summary needs only the peak. */
int cg_memory_analyze(const struct cgtrace_doc *d, struct cgtrace_memory_report **out,
		      bool breakdown);
/* The report of an analysis that has taken all its records and finished. */
int cg_memory_report(const struct cg_stream *s, struct cgtrace_memory_report **out,
		     bool breakdown);

#endif
