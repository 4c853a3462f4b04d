/* SPDX-License-Identifier: MIT */
#include "format.h"

#include <stdlib.h>
#include <string.h>

#include "fmt_num.h"
#include "jsonl_format.h"
#include "jsonl_heap.h"
#include "record.h"

const char *const cg_op_names[CG_OP_COUNT] = {
	[CG_OP_MALLOC] = "malloc",
	[CG_OP_CALLOC] = "calloc",
	[CG_OP_REALLOC] = "realloc",
	[CG_OP_REALLOCARRAY] = "reallocarray",
	[CG_OP_POSIX_MEMALIGN] = "posix_memalign",
	[CG_OP_ALIGNED_ALLOC] = "aligned_alloc",
	[CG_OP_MEMALIGN] = "memalign",
	[CG_OP_VALLOC] = "valloc",
	[CG_OP_PVALLOC] = "pvalloc",
	[CG_OP_FREE] = "free",
};

static struct cg_sv span_id(char out[24], uint64_t id)
{
	out[0] = 's';
	return (struct cg_sv){out, (uint32_t)(1 + cg_fmt_u64(out + 1, id))};
}

static void format_memory(struct cg_buf *b, const struct cg_event *e, uint64_t ts)
{
	struct cg_heap_rec r = {
		.timestamp_ns = ts,
		.addr = e->addr,
		.span = e->span,
		.op_name = e->op < CG_OP_COUNT ? cg_op_names[e->op] : "malloc",
		.bytes = e->size,
		.action = e->kind == CG_EV_ALLOC ? CGTRACE_ALLOC : CGTRACE_FREE,
		.category = (enum cgtrace_category)e->category,
	};
	cg_jsonl_format_heap(b, &r);
}

static void format_span(struct cg_buf *b, const struct cg_event *e, uint64_t ts, uint64_t start)
{
	char id[24], parent[24];
	struct cg_rec r;
	if (e->kind == CG_EV_SPAN_END) {
		r.kind = CGTRACE_KIND_SPAN_END;
		r.u.span_end = (struct cg_rec_span_end){.id = span_id(id, e->span),
							.duration_ns = ts > start ? ts - start : 0};
		cg_jsonl_format(b, &r);
		return;
	}
	char *name = (char *)(uintptr_t)e->addr;
	r.kind = CGTRACE_KIND_SPAN_START;
	r.u.span_start = (struct cg_rec_span_start){
		.id = span_id(id, e->span),
		.parent_id = span_id(parent, e->size),
		.name = cg_sv_c(name ? name : "?"),
		.start_ns = ts,
		.span_kind = CGTRACE_SPAN_FUNCTION,
		.step = e->step,
	};
	cg_jsonl_format(b, &r);
	free(name);
}

void cg_format_event(struct cg_buf *b, const struct cg_event *e, uint64_t ts_ns, uint64_t start_ns)
{
	if (e->kind == CG_EV_ALLOC || e->kind == CG_EV_FREE)
		format_memory(b, e, ts_ns);
	else
		format_span(b, e, ts_ns, start_ns);
}

void cg_format_root_end(struct cg_buf *b, uint64_t duration_ns)
{
	struct cg_rec r = {.kind = CGTRACE_KIND_SPAN_END};
	r.u.span_end = (struct cg_rec_span_end){.id = CG_SV_LIT("s1"), .duration_ns = duration_ns};
	cg_jsonl_format(b, &r);
}
