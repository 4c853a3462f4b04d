/* SPDX-License-Identifier: MIT */
/* The summary, computed over a memory analysis already made. */
#ifndef CG_SUMMARY_H
#define CG_SUMMARY_H

#include "cgtrace.h"

/* rep may come with or without the peak's live set. */
int cg_summary_from(const struct cgtrace_doc *d, const struct cgtrace_memory_report *rep,
		    struct cgtrace_summary *out);

#endif
