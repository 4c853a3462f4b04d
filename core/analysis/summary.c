/* SPDX-License-Identifier: MIT */
/*
 * The summary of the trace/6 format. Span depth is the number of distinct spans met
 * walking parent links (a parent that names no span counts once, a cycle
 * stops the walk); computed for all spans at once in linear time, without
 * recursion, since traces may hold 100,000-level chains or cycles.
 */
#include "summary.h"

#include <errno.h>
#include <stdlib.h>

#include "doc.h"
#include "doc_view.h"
#include "export.h"
#include "memory_analysis.h"
#include "sat.h"

enum { P_NONE = -1, P_DANGLING = -2 };

/* reach[i] = distinct spans on the parent walk starting at span i itself. */
static int span_reach(const struct cgtrace_doc *d, const long *parent, uint64_t *reach)
{
	size_t n = d->spans.len;
	size_t *stack = malloc((n ? n : 1) * sizeof(*stack));
	long *on_stack = malloc((n ? n : 1) * sizeof(*on_stack)); /* position + 1, 0 = no */
	if (!stack || !on_stack) {
		free(stack);
		free(on_stack);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		on_stack[i] = 0;
	for (size_t i = 0; i < n; i++) {
		if (reach[i])
			continue;
		size_t top = 0;
		long cur = (long)i;
		uint64_t base;
		for (;;) {
			if (cur == P_NONE) {
				base = 0;
				break;
			}
			if (cur == P_DANGLING) {
				base = 1;
				break;
			}
			if (reach[cur]) {
				base = reach[cur];
				break;
			}
			if (on_stack[cur]) {
				/* A cycle: each member reaches exactly the cycle. */
				size_t from = (size_t)on_stack[cur] - 1;
				uint64_t len = top - from;
				for (size_t k = from; k < top; k++)
					reach[stack[k]] = len;
				top = from;
				base = len;
				break;
			}
			on_stack[cur] = (long)top + 1;
			stack[top++] = (size_t)cur;
			cur = parent[cur];
		}
		while (top > 0) {
			size_t s = stack[--top];
			base += 1;
			reach[s] = base;
		}
	}
	free(stack);
	free(on_stack);
	return 0;
}

static int max_depth(const struct cgtrace_doc *d, uint64_t *out)
{
	size_t n = d->spans.len;
	long *parent = malloc((n ? n : 1) * sizeof(*parent));
	uint64_t *reach = calloc(n ? n : 1, sizeof(*reach));
	if (!parent || !reach) {
		free(parent);
		free(reach);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		const struct cg_span *s = CG_VEC_AT(&d->spans, struct cg_span, i);
		if (s->parent_id == CG_STR_NONE) {
			parent[i] = P_NONE;
		} else {
			long p = cg_doc_find_span(d, s->parent_id);
			parent[i] = p >= 0 ? p : P_DANGLING;
		}
	}
	int ret = span_reach(d, parent, reach);
	*out = 0;
	for (size_t i = 0; ret == 0 && i < n; i++) {
		uint64_t depth = parent[i] == P_NONE ? 0 : parent[i] == P_DANGLING ? 1 : reach[parent[i]];
		if (depth > *out)
			*out = depth;
	}
	free(parent);
	free(reach);
	return ret;
}

int cg_summary_from(const struct cgtrace_doc *d, const struct cgtrace_memory_report *rep,
		    struct cgtrace_summary *out)
{
	*out = (struct cgtrace_summary){
		.op_count = d->ops.len,
		.span_count = d->spans.len,
		.alloc_count = rep->alloc_count,
		.free_count = rep->free_count,
		.peak_bytes = rep->peak_bytes,
	};
	for (size_t i = 0; i < d->spans.len; i++) {
		const struct cg_span *s = CG_VEC_AT(&d->spans, struct cg_span, i);
		if (s->measured)
			out->total_ns = cg_sat_add(out->total_ns, s->duration_ns);
		out->root_span_count += s->parent_id == CG_STR_NONE;
	}
	return max_depth(d, &out->max_depth);
}

CG_EXPORT int cgtrace_doc_summary_report(const struct cgtrace_doc *d, struct cgtrace_summary *out,
				     struct cgtrace_memory_report **report)
{
	struct cgtrace_memory_report *rep;
	int ret = cg_memory_analyze(d, &rep, 0);
	if (ret < 0)
		return ret;
	ret = cg_summary_from(d, rep, out);
	if (ret < 0) {
		cgtrace_memory_report_free(rep);
		return ret;
	}
	*report = rep;
	return 0;
}

CG_EXPORT int cgtrace_doc_summary(const struct cgtrace_doc *d, struct cgtrace_summary *out)
{
	struct cgtrace_memory_report *rep;
	int ret = cg_memory_analyze(d, &rep, 0);
	if (ret < 0)
		return ret;
	ret = cg_summary_from(d, rep, out);
	cgtrace_memory_report_free(rep);
	return ret;
}
