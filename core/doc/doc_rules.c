/* SPDX-License-Identifier: MIT */
/* The rules of the trace/6 format a document checks as it is built, with their messages. */
#include "doc_rules.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cgtrace.h"
#include "doc.h"

#define FAIL(...) (snprintf(err, errlen, __VA_ARGS__), -EBADMSG)

int cg_rule_meta(bool has_meta, size_t records_before, const struct cg_rec_meta *m, char *err,
		 size_t errlen)
{
	if (has_meta)
		return FAIL("duplicate meta record; only one meta record is allowed");
	if (records_before > 0)
		return FAIL("meta record must be the first non-empty trace record");
	if (!cg_sv_eq(m->schema, CG_SV_LIT(CGTRACE_SCHEMA)))
		return FAIL("unsupported trace schema \"%.*s\"; expected \"%s\"",
			    (int)(m->schema.n > 200 ? 200 : m->schema.n), m->schema.p,
			    CGTRACE_SCHEMA);
	return 0;
}

int cg_rule_span_start(const struct cg_rec_span_start *s, char *err, size_t errlen)
{
	return FAIL("duplicate span_start id `%.*s`", (int)s->id.n, s->id.p);
}

int cg_rule_span_training(const struct cg_rec_span_start *s, char *err, size_t errlen)
{
	if (s->has_update && s->cgprobe_update == 0)
		return FAIL("span `%.*s`: cgprobe_update counts from 1", (int)s->id.n, s->id.p);
	if (s->cgprobe_phase.p && s->cgprobe_phase.n == 0)
		return FAIL("span `%.*s`: cgprobe_phase is empty", (int)s->id.n, s->id.p);
	if (s->n_parameters % 2)
		return FAIL("span `%.*s`: cgprobe_parameters holds address and length pairs, "
			    "not %u values",
			    (int)s->id.n, s->id.p, (unsigned)s->n_parameters);
	if (s->has_world_size && !s->has_rank)
		return FAIL("span `%.*s`: cgprobe_world_size without cgprobe_rank", (int)s->id.n,
			    s->id.p);
	if (s->has_world_size && s->cgprobe_world_size == 0)
		return FAIL("span `%.*s`: cgprobe_world_size counts from 1", (int)s->id.n, s->id.p);
	if (s->has_rank && s->has_world_size && s->cgprobe_rank >= s->cgprobe_world_size)
		return FAIL("span `%.*s`: cgprobe_rank %llu is not below cgprobe_world_size %llu",
			    (int)s->id.n, s->id.p, (unsigned long long)s->cgprobe_rank,
			    (unsigned long long)s->cgprobe_world_size);
	for (uint32_t i = 0; i < s->n_parameters; i += 2) {
		uint64_t a = s->parameters[i], n = s->parameters[i + 1];
		if (n == 0 || a + n < a)
			return FAIL("span `%.*s`: cgprobe_parameters range 0x%llx + 0x%llx is %s",
				    (int)s->id.n, s->id.p, (unsigned long long)a,
				    (unsigned long long)n, n ? "past the end of memory" : "empty");
	}
	return 0;
}

int cg_rule_span_end(const struct cg_rec_span_end *e, const struct cg_span *sp, char *err,
		     size_t errlen)
{
	if (!sp)
		return FAIL("span_end for unknown span `%.*s`", (int)e->id.n, e->id.p);
	if (sp->closed)
		return FAIL("duplicate span_end for `%.*s`", (int)e->id.n, e->id.p);
	return 0;
}

int cg_rule_stack(const struct cg_rec_memory *m, bool defined, char *err, size_t errlen)
{
	unsigned long long id = m->stack;
	if (m->has_stack_parent && !m->n_stack_frames)
		return FAIL("cgprobe_stack_parent without cgprobe_stack_frames");
	if (!m->stack)
		return m->n_stack_frames ? FAIL("cgprobe_stack_frames without cgprobe_stack") : 0;
	if (m->action == CGTRACE_FREE)
		return FAIL("cgprobe_stack on a free (a free belongs to its allocation's stack)");
	if (m->n_stack_frames && defined)
		return FAIL("stack %llu defined twice", id);
	if (!m->n_stack_frames && !defined)
		return FAIL("stack %llu not defined", id);
	return 0;
}

int cg_rule_kind(char *err, size_t errlen)
{
	return FAIL("unknown record kind");
}

int cg_rule_finish(const struct cgtrace_doc *d, char *err, size_t errlen)
{
	if (!d->has_meta)
		return FAIL("trace stream is missing a meta record with run metadata");
	return 0;
}

int cg_rule_errno(int ret, char *err, size_t errlen)
{
	if (ret == -E2BIG)
		snprintf(err, errlen, "trace exceeds a reader limit (65535 devices, 4 GiB of "
				      "distinct strings or shapes)");
	else if (ret < 0)
		snprintf(err, errlen, "%s", strerror(-ret));
	return ret;
}
