/* SPDX-License-Identifier: MIT */
/*
 * The streaming reader: lines are parsed one at a time by the same parsers
 * and reported by the same code as the document reader (read_apply.c), but
 * a record lives only until the next one. The rules that reach across
 * records are kept in small state: a count of records before meta, and a
 * document that holds only the spans, so span ids are checked by the
 * document's own code and messages.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arena.h"
#include "cgtrace.h"
#include "doc.h"
#include "doc_pycodes.h"
#include "doc_life.h"
#include "doc_build.h"
#include "doc_rules.h"
#include "doc_stacks.h"
#include "export.h"
#include "parse.h"
#include "parse_fast.h"
#include "read_apply.h"
#include "read_compact.h"
#include "stream_read.h"
#include "trace_src.h"

struct cgtrace_reader {
	struct cg_src src;
	int fd; /* closed with the reader unless it is stdin or -1 */
	char *name;
	struct cgtrace_read_options opts;
	struct cg_read_ctx ctx;
	struct cg_parse parse;
	struct cg_rec scratch;
	struct cgtrace_doc *spans; /* the spans seen, for their rules; has_meta, truncated */
	uint64_t records;          /* records before the current one */
	int state;                 /* 1 reading, 0 ended, negative: the sticky error */
	struct cg_arena strs;      /* NUL-terminated copies for the public view */
	bool view_nomem;           /* a copy for the view failed */
	union {
		struct cgtrace_meta meta;
		struct cgtrace_span span;
		struct cgtrace_span_end span_end;
		struct cgtrace_op op;
		struct cgtrace_tensor tensor;
		struct cgtrace_memory memory;
		struct cgtrace_device_memory device_memory;
		struct cgtrace_gradient gradient;
		struct cgtrace_edge edge;
		struct cgtrace_device_info device_info;
	} view;
	/* The device identity the current memory or checkpoint record carries. */
	struct cgtrace_device_info ident;
	bool has_ident;
	char msg[1024];
};

static int reader_new(struct cgtrace_reader **out, const char *name,
		      const struct cgtrace_read_options *opts)
{
	struct cgtrace_reader *r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->fd = -1;
	r->src.lines.fd = -1;
	r->name = strdup(name);
	r->spans = cg_doc_new();
	if (!r->name || !r->spans) {
		free(r->name);
		cgtrace_doc_free(r->spans);
		free(r);
		return -ENOMEM;
	}
	if (opts)
		r->opts = *opts;
	r->ctx = (struct cg_read_ctx){.name = r->name, .opts = &r->opts, .doc = r->spans,
				      .err = r->msg, .errlen = sizeof(r->msg)};
	cg_parse_init(&r->parse);
	cg_arena_init(&r->strs);
	r->state = 1;
	*out = r;
	return 0;
}

CG_EXPORT void cgtrace_reader_close(struct cgtrace_reader *r)
{
	if (!r)
		return;
	cg_src_close(&r->src);
	if (r->fd > STDIN_FILENO)
		close(r->fd);
	cg_parse_fini(&r->parse);
	cg_arena_fini(&r->strs);
	cgtrace_doc_free(r->spans);
	free(r->name);
	free(r);
}

/*
 * Bytes that are no trace (none at all, or neither encoding) are the
 * reader's verdict, as a broken record is: the first cgtrace_reader_next
 * gives it, with its message. Only trouble reading fails the open.
 */
static int src_opened(struct cgtrace_reader *r, int ret)
{
	if (ret != -EBADMSG)
		return ret;
	r->state = ret;
	snprintf(r->msg, sizeof(r->msg), "%s: %s", r->name, r->src.err);
	return 0;
}

CG_EXPORT int cgtrace_reader_open_err(struct cgtrace_reader **out, const char *path,
				      const struct cgtrace_read_options *opts, char *err,
				      size_t errlen)
{
	const char *name;
	char why[1024];
	*out = NULL;
	if (!err || !errlen) {
		err = why;
		errlen = sizeof(why);
	}
	int fd = cg_src_open_path(path, &name, err, errlen);
	if (fd < 0)
		return fd;
	struct cgtrace_reader *r;
	int ret = reader_new(&r, name, opts);
	if (ret < 0) {
		if (fd != STDIN_FILENO)
			close(fd);
		snprintf(err, errlen, "%s: %s", name, strerror(-ret));
		return ret;
	}
	r->fd = fd;
	ret = src_opened(r, cg_src_open_fd(&r->src, fd));
	if (ret < 0) {
		snprintf(err, errlen, "%s: %s", r->name, r->src.err);
		cgtrace_reader_close(r);
		return ret;
	}
	*out = r;
	return 0;
}

CG_EXPORT int cgtrace_reader_open(struct cgtrace_reader **out, const char *path,
				  const struct cgtrace_read_options *opts)
{
	return cgtrace_reader_open_err(out, path, opts, NULL, 0);
}

CG_EXPORT int cgtrace_reader_open_mem(struct cgtrace_reader **out, const char *name,
				      const void *data, size_t len,
				      const struct cgtrace_read_options *opts)
{
	struct cgtrace_reader *r;
	*out = NULL;
	int ret = reader_new(&r, name, opts);
	if (ret < 0)
		return ret;
	ret = src_opened(r, cg_src_open_mem(&r->src, data, len));
	if (ret < 0) {
		cgtrace_reader_close(r);
		return ret;
	}
	*out = r;
	return 0;
}

CG_EXPORT const char *cgtrace_reader_message(const struct cgtrace_reader *r)
{
	return r->msg;
}

CG_EXPORT bool cgtrace_reader_truncated(const struct cgtrace_reader *r)
{
	return r->spans->truncated;
}

void cg_reader_clear_message(struct cgtrace_reader *r)
{
	r->msg[0] = '\0';
}

/* The rules across records: meta first and once, span ids, as the document applies them. */
static int check_rules(struct cgtrace_reader *r, const struct cg_rec *rec)
{
	char msg[320];
	int ret = 0;
	if (rec->kind == CGTRACE_KIND_META) {
		ret = cg_rule_meta(r->spans->has_meta, r->records, &rec->u.meta, msg, sizeof(msg));
		r->spans->has_meta = true;
		cg_doc_py_meta(r->spans, &rec->u.meta);
	} else if (rec->kind == CGTRACE_KIND_SPAN_START || rec->kind == CGTRACE_KIND_SPAN_END) {
		ret = cg_doc_add(r->spans, rec, msg, sizeof(msg));
	} else if (rec->kind == CGTRACE_KIND_MEMORY && cg_doc_stacks_in(&rec->u.memory)) {
		/* The stack table, for its rules: bounded by the distinct stacks. */
		uint32_t stack;
		ret = cg_doc_stacks_add(r->spans, &rec->u.memory, UINT64_MAX, &stack, msg,
					sizeof(msg));
		if (ret < 0 && ret != -EBADMSG)
			cg_rule_errno(ret, msg, sizeof(msg));
	}
	r->records++;
	return ret < 0 ? cg_read_fail(&r->ctx, ret, msg) : 0;
}

/* After the last line: the one rule of the whole stream, as the document reader words it. */
static int finish(struct cgtrace_reader *r)
{
	char msg[320];
	int ret = cg_rule_finish(r->spans, msg, sizeof(msg));
	if (ret < 0)
		snprintf(r->msg, sizeof(r->msg), "%s: %s", r->name, msg);
	return ret;
}

static int next_line(struct cgtrace_reader *r, const struct cg_rec **rec)
{
	for (;;) {
		const char *line;
		size_t len;
		bool terminated;
		int ret = cg_lines_next(&r->src.lines, &line, &len, &terminated);
		if (ret < 0) {
			snprintf(r->msg, sizeof(r->msg), "%s: %s", r->name,
				 r->src.lines.err[0] ? r->src.lines.err : strerror(-ret));
			return ret;
		}
		if (ret == 0)
			return finish(r);
		r->ctx.line_no = r->src.lines.line_no;
		if (cg_line_blank(line, len))
			continue;
		cg_arena_reset(&r->parse.arena);
		const struct cg_rec *fast = NULL;
		if (cg_parse_fast(&r->parse, line, len, &r->scratch) == 0)
			fast = &r->scratch;
		ret = cg_read_parse(&r->ctx, &r->parse, line, len, terminated, fast, &r->scratch,
				    rec);
		if (ret == 1)
			return finish(r);
		if (ret == 0)
			ret = check_rules(r, *rec);
		return ret < 0 ? ret : 1;
	}
}

static int next_compact(struct cgtrace_reader *r, const struct cg_rec **rec)
{
	int ret = cg_read_compact_next(&r->ctx, r->src.cdec, &r->parse, &r->scratch, rec);
	if (ret == 0)
		return finish(r);
	if (ret == 1)
		ret = check_rules(r, *rec);
	return ret < 0 ? ret : 1;
}

int cg_reader_next_rec(struct cgtrace_reader *r, const struct cg_rec **rec)
{
	if (r->state <= 0)
		return r->state;
	int ret = r->src.cdec ? next_compact(r, rec) : next_line(r, rec);
	if (ret <= 0)
		r->state = ret;
	return ret;
}

/* Strings of the view are NUL-terminated copies; NULL stays NULL (absent). */
static const char *cstr(struct cgtrace_reader *r, struct cg_sv s)
{
	if (!s.p)
		return NULL;
	char *p = cg_arena_alloc(&r->strs, (size_t)s.n + 1);
	if (!p) {
		r->view_nomem = true;
		return NULL;
	}
	memcpy(p, s.p, s.n);
	p[s.n] = '\0';
	return p;
}

static int tag_cmp(const void *a, const void *b)
{
	return strcmp(((const struct cgtrace_tag *)a)->key, ((const struct cgtrace_tag *)b)->key);
}

/* The cgprobe_device_* fields, which the public record views do not hold. */
static void view_ident(struct cgtrace_reader *r, struct cg_sv device, struct cg_sv uuid,
		       struct cg_sv name, bool has_total, uint64_t total)
{
	if (!uuid.p)
		return;
	r->ident = (struct cgtrace_device_info){
		.device = cstr(r, device),
		.uuid = cstr(r, uuid),
		.name = cstr(r, name),
		.has_total = has_total,
		.total_bytes = total,
	};
	r->has_ident = true;
}

static void view_meta(struct cgtrace_reader *r, const struct cg_rec_meta *m)
{
	struct cgtrace_tag *tags = cg_arena_alloc(&r->strs, (m->n_tags + 1) * sizeof(*tags));
	r->view_nomem |= !tags;
	for (uint32_t i = 0; tags && i < m->n_tags; i++)
		tags[i] = (struct cgtrace_tag){cstr(r, m->tags[i].key), cstr(r, m->tags[i].value)};
	if (tags && m->n_tags)
		qsort(tags, m->n_tags, sizeof(*tags), tag_cmp);
	r->view.meta = (struct cgtrace_meta){
		.schema = cstr(r, m->schema),
		.run_id = cstr(r, m->run_id),
		.correlation_id = cstr(r, m->correlation_id),
		.entrypoint = cstr(r, m->entrypoint),
		.phase = m->phase,
		.timestamp = cstr(r, m->timestamp),
		.capture_step = m->capture_step,
		.warmup_steps = m->warmup_steps,
		.device = cstr(r, m->device),
		.measured_region_device_synchronized = m->measured_region_device_synchronized,
		.timing_mode = m->timing_mode,
		.tags = tags,
		.n_tags = m->n_tags,
		.candle_version = cstr(r, m->candle_version),
	};
}

static const char *const *cstrs(struct cgtrace_reader *r, const struct cg_sv *v, uint32_t n)
{
	const char **out = cg_arena_alloc(&r->strs, (n + 1) * sizeof(*out));
	r->view_nomem |= !out;
	for (uint32_t i = 0; out && i < n; i++)
		out[i] = cstr(r, v[i]);
	return out;
}

/* The public view of a record, as the document's views show one. */
static void view(struct cgtrace_reader *r, const struct cg_rec *rec, struct cgtrace_record *out)
{
	const struct cg_rec_op *o = &rec->u.op;
	const struct cg_rec_tensor *t = &rec->u.tensor;
	const struct cg_rec_memory *m = &rec->u.memory;
	const struct cg_rec_device_memory *dm = &rec->u.device_memory;
	const struct cg_rec_gradient *g = &rec->u.gradient;
	const struct cg_rec_device_info *di = &rec->u.device_info;

	cg_arena_reset(&r->strs);
	r->has_ident = false;
	*out = (struct cgtrace_record){.kind = rec->kind, .line = r->ctx.line_no};
	switch (rec->kind) {
	case CGTRACE_KIND_META:
		view_meta(r, &rec->u.meta);
		out->u.meta = &r->view.meta;
		break;
	case CGTRACE_KIND_SPAN_START:
		r->view.span = (struct cgtrace_span){
			.id = cstr(r, rec->u.span_start.id),
			.parent_id = cstr(r, rec->u.span_start.parent_id),
			.name = cstr(r, rec->u.span_start.name),
			.kind = rec->u.span_start.span_kind,
			.measured = rec->u.span_start.measured,
			.start_ns = rec->u.span_start.start_ns,
			.step = rec->u.span_start.step,
			.has_thread = rec->u.span_start.has_thread,
			.thread = rec->u.span_start.cgprobe_thread,
			.thread_name = cstr(r, rec->u.span_start.cgprobe_thread_name),
		};
		out->u.span_start = &r->view.span;
		break;
	case CGTRACE_KIND_SPAN_END:
		r->view.span_end = (struct cgtrace_span_end){
			.id = cstr(r, rec->u.span_end.id),
			.duration_ns = rec->u.span_end.duration_ns,
		};
		out->u.span_end = &r->view.span_end;
		break;
	case CGTRACE_KIND_OP:
		r->view.op = (struct cgtrace_op){
			.span_id = cstr(r, o->span_id),
			.op_name = cstr(r, o->op_name),
			.inputs = cstrs(r, o->inputs, o->n_inputs),
			.n_inputs = o->n_inputs,
			.output = cstr(r, o->output),
			.shape = o->shape,
			.ndim = o->ndim,
			.dtype = cstr(r, o->dtype),
			.device = cstr(r, o->device),
			.duration_ns = o->duration_ns,
			.timestamp_ns = o->timestamp_ns,
			.storage_bytes = o->has_storage_bytes ? o->storage_bytes
							      : cgtrace_storage_bytes(o->shape, o->ndim,
										      o->dtype.p,
										      o->dtype.n),
			.input_storage_bytes = o->input_storage_bytes,
		};
		out->u.op = &r->view.op;
		break;
	case CGTRACE_KIND_TENSOR:
		r->view.tensor = (struct cgtrace_tensor){
			.span_id = cstr(r, t->span_id),
			.tensor_id = cstr(r, t->tensor_id),
			.shape = t->shape,
			.ndim = t->ndim,
			.dtype = cstr(r, t->dtype),
			.device = cstr(r, t->device),
			.requires_grad = t->requires_grad,
			.storage_bytes = t->has_storage_bytes ? t->storage_bytes
							      : cgtrace_storage_bytes(t->shape, t->ndim,
										      t->dtype.p,
										      t->dtype.n),
			.category = t->category,
		};
		out->u.tensor = &r->view.tensor;
		break;
	case CGTRACE_KIND_MEMORY:
		r->view.memory = (struct cgtrace_memory){
			.timestamp_ns = m->timestamp_ns,
			.tensor_id = cstr(r, m->tensor_id),
			.span_id = cstr(r, m->span_id),
			.op_name = cstr(r, m->op_name),
			.device = cstr(r, m->device),
			.bytes = m->bytes,
			.action = m->action,
			.shape = m->shape,
			.ndim = m->ndim,
			.dtype = cstr(r, m->dtype),
			.category = m->category,
			.managed = m->managed,
			.preexisting = m->cgprobe_preexisting,
			.stack_id = m->stack,
		};
		out->u.memory = &r->view.memory;
		view_ident(r, m->device, m->cgprobe_device_uuid, m->cgprobe_device_name,
			   m->has_device_total, m->cgprobe_device_total_bytes);
		break;
	case CGTRACE_KIND_DEVICE_MEMORY:
		r->view.device_memory = (struct cgtrace_device_memory){
			.timestamp_ns = dm->timestamp_ns,
			.device = cstr(r, dm->device),
			.used_bytes = dm->used_bytes,
			.free_bytes = dm->free_bytes,
			.has_reserved = dm->has_reserved,
			.reserved_bytes = dm->reserved_bytes,
			.has_oom_request = dm->has_oom_request,
			.oom_request_bytes = dm->oom_request_bytes,
			.has_allocated = dm->has_allocated,
			.cgprobe_allocated_bytes = dm->cgprobe_allocated_bytes,
		};
		out->u.device_memory = &r->view.device_memory;
		view_ident(r, dm->device, dm->cgprobe_device_uuid, dm->cgprobe_device_name,
			   dm->has_device_total, dm->cgprobe_device_total_bytes);
		break;
	case CGTRACE_KIND_GRADIENT:
		r->view.gradient = (struct cgtrace_gradient){
			.event_id = cstr(r, g->event_id),
			.root = cstr(r, g->root),
			.key = cstr(r, g->key),
			.state = g->state,
			.has_norm = g->has_norm,
			.norm = g->norm,
		};
		out->u.gradient = &r->view.gradient;
		break;
	case CGTRACE_KIND_EDGE:
		r->view.edge = (struct cgtrace_edge){
			.from_span = cstr(r, rec->u.edge.from_span),
			.to_span = cstr(r, rec->u.edge.to_span),
			.duration_ns = rec->u.edge.duration_ns,
		};
		out->u.edge = &r->view.edge;
		break;
	case CGTRACE_KIND_DEVICE_INFO:
		r->view.device_info = (struct cgtrace_device_info){
			.device = cstr(r, di->device),
			.uuid = cstr(r, di->uuid),
			.name = cstr(r, di->name),
			.has_total = di->has_total,
			.total_bytes = di->total_bytes,
		};
		out->u.device_info = &r->view.device_info;
		break;
	default:
		break;
	}
}

CG_EXPORT int cgtrace_reader_next(struct cgtrace_reader *r, struct cgtrace_record *rec)
{
	const struct cg_rec *x;
	int ret = cg_reader_next_rec(r, &x);
	if (ret != 1)
		return ret;
	r->view_nomem = false;
	view(r, x, rec);
	if (r->view_nomem)
		r->state = cg_read_fail(&r->ctx, -ENOMEM, "out of memory");
	return r->view_nomem ? r->state : 1;
}

CG_EXPORT bool cgtrace_reader_device_identity(const struct cgtrace_reader *r,
					      struct cgtrace_device_info *out)
{
	if (!r->has_ident || r->state != 1)
		return false;
	*out = r->ident;
	return true;
}
