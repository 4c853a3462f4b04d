/* SPDX-License-Identifier: MIT */
/*
 * A recording session: a trace/6 writer for annotated programs.
 *
 * The session writes the meta record and the root span `s1` when it opens,
 * keeps a stack of open spans (id, start time, step) whose top is the
 * parent of the next span and decides the AUTO memory categories, and
 * closes `s1` when it finishes. Every line goes through cg_jsonl_format
 * into a cg_sink, whose first write error is sticky.
 *
 * A session is not thread-safe: it must be used by one thread at a time
 * (callers sharing one across threads serialise the calls themselves). It
 * takes no locks because the probe's hot paths already hold their own.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cgtrace.h"
#include "export.h"
#include "fmt_num.h"
#include "jsonl_format.h"
#include "names.h"
#include "record.h"
#include "run_meta.h"
#include "sink.h"

/* "s" or "gradient-" and a u64, with room to spare. */
#define ID_MAX 32

struct span_frame {
	uint64_t id;
	uint64_t start_ns;
	uint8_t step;
};

struct cgtrace_session {
	struct cg_sink sink;
	uint64_t t0_ns; /* CLOCK_MONOTONIC at open */
	struct span_frame *stack;
	size_t depth;
	size_t cap;
	uint64_t last_span;  /* the highest span number handed out */
	uint64_t last_event; /* gradient events */
	struct cg_sv *inputs; /* scratch for op inputs */
	size_t inputs_cap;
};

/* ------------------------------------------------------------------ */
/* Small helpers                                                       */
/* ------------------------------------------------------------------ */

static uint64_t clock_ns(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	if (ts.tv_sec < 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A required string as a view: -EINVAL when NULL or longer than a view can hold. */
static int req_sv(const char *s, struct cg_sv *out)
{
	if (!s)
		return -EINVAL;
	size_t n = strlen(s);
	if (n > UINT32_MAX)
		return -EINVAL;
	*out = (struct cg_sv){s, (uint32_t)n};
	return 0;
}

/* An optional string: NULL stays absent. */
static int opt_sv(const char *s, struct cg_sv *out)
{
	if (!s) {
		*out = CG_SV_NONE;
		return 0;
	}
	return req_sv(s, out);
}

/* Writes prefix followed by n in decimal into buf (ID_MAX bytes). */
static struct cg_sv id_sv(char buf[ID_MAX], const char *prefix, uint64_t n)
{
	size_t len = strlen(prefix);
	memcpy(buf, prefix, len);
	len += cg_fmt_u64(buf + len, n);
	return (struct cg_sv){buf, (uint32_t)len};
}

/* Formats one record and hands it to the sink; a failed sink drops it. */
static int emit(struct cgtrace_session *s, const struct cg_rec *r)
{
	if (s->sink.err)
		return s->sink.err;
	cg_jsonl_format(&s->sink.buf, r);
	return cg_sink_commit(&s->sink);
}

static const struct span_frame *top(const struct cgtrace_session *s)
{
	return &s->stack[s->depth - 1];
}

/* The step of the innermost open span that has one. */
static enum cgtrace_step current_step(const struct cgtrace_session *s)
{
	for (size_t i = s->depth; i-- > 0;)
		if (s->stack[i].step != CGTRACE_STEP_NONE)
			return (enum cgtrace_step)s->stack[i].step;
	return CGTRACE_STEP_NONE;
}

/* Resolves AUTO; -EINVAL for a value that is neither AUTO nor a category. */
static int resolve_category(const struct cgtrace_session *s, enum cgtrace_category c,
			    bool requires_grad, uint8_t *out)
{
	if (c == CGTRACE_CAT_AUTO)
		c = cg_category_for_step(current_step(s), requires_grad);
	else if ((unsigned)c >= CGTRACE_CAT_COUNT)
		return -EINVAL;
	*out = (uint8_t)c;
	return 0;
}

/* Records name spans by number; any span handed out so far (open or closed) is valid. */
static bool span_known(const struct cgtrace_session *s, uint64_t span)
{
	return span >= 1 && span <= s->last_span;
}

static int stack_reserve(struct cgtrace_session *s)
{
	if (s->depth < s->cap)
		return 0;
	size_t cap = s->cap ? s->cap * 2 : 16;
	struct span_frame *p = realloc(s->stack, cap * sizeof(*p));
	if (!p)
		return -ENOMEM;
	s->stack = p;
	s->cap = cap;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Run metadata                                                        */
/* ------------------------------------------------------------------ */

/* `<entrypoint>/update-<capture_step>`, malloc'ed. */
static char *default_correlation(const struct cgtrace_run *run)
{
	static const char mid[] = "/update-";
	size_t len = strlen(run->entrypoint);
	char *p = malloc(len + sizeof(mid) - 1 + CG_FMT_U64_MAX + 1);
	if (!p)
		return NULL;
	memcpy(p, run->entrypoint, len);
	memcpy(p + len, mid, sizeof(mid) - 1);
	len += sizeof(mid) - 1;
	len += cg_fmt_u64(p + len, run->capture_step);
	p[len] = '\0';
	return p;
}

struct tag_ref {
	const struct cgtrace_tag *tag;
	size_t index;
};

/* By key, then by position so the last of equal keys sorts last. */
static int tag_ref_cmp(const void *a, const void *b)
{
	const struct tag_ref *x = a, *y = b;
	int c = strcmp(x->tag->key, y->tag->key);
	if (c)
		return c;
	return (x->index > y->index) - (x->index < y->index);
}

/*
 * The run's tags sorted by key, a repeated key keeping its last value (as
 * the format's rules ask). Returns a malloc'ed array (NULL when there
 * are none) and its length, or an error.
 */
static int sorted_tags(const struct cgtrace_run *run, struct cg_tagv **out, uint32_t *n_out)
{
	size_t n = run->n_tags;
	*out = NULL;
	*n_out = 0;
	if (!n)
		return 0;

	struct tag_ref *refs = malloc(n * sizeof(*refs));
	struct cg_tagv *tags = malloc(n * sizeof(*tags));
	if (!refs || !tags) {
		free(refs);
		free(tags);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		refs[i] = (struct tag_ref){&run->tags[i], i};
	qsort(refs, n, sizeof(*refs), tag_ref_cmp);

	uint32_t k = 0;
	int err = 0;
	for (size_t i = 0; i < n && !err; i++) {
		if (i + 1 < n && strcmp(refs[i].tag->key, refs[i + 1].tag->key) == 0)
			continue;
		err = req_sv(refs[i].tag->key, &tags[k].key);
		if (!err)
			err = req_sv(refs[i].tag->value, &tags[k].value);
		k++;
	}
	free(refs);
	if (err) {
		free(tags);
		return err;
	}
	*out = tags;
	*n_out = k;
	return 0;
}

/* Everything open needs from run, checked before any file is created. */
static int check_run(const struct cgtrace_run *run)
{
	if (!run || !run->entrypoint || !run->device)
		return -EINVAL;
	/* One-based: the format's rules reject a zero capture step. */
	if (run->capture_step == 0)
		return -EINVAL;
	if ((unsigned)run->phase >= CG_PHASE_COUNT || (unsigned)run->timing_mode >= CG_TIMING_COUNT)
		return -EINVAL;
	if (run->n_tags && !run->tags)
		return -EINVAL;
	if (run->n_tags > UINT32_MAX)
		return -EINVAL;
	for (size_t i = 0; i < run->n_tags; i++)
		if (!run->tags[i].key || !run->tags[i].value)
			return -EINVAL;
	return 0;
}

static int write_meta(struct cgtrace_session *s, const struct cgtrace_run *run)
{
	char id_buf[64], ts_buf[64];
	uint64_t now = clock_ns(CLOCK_REALTIME);
	struct cg_rec r = {.kind = CGTRACE_KIND_META};
	struct cg_rec_meta *m = &r.u.meta;
	char *corr = NULL;
	struct cg_tagv *tags = NULL;
	int err;

	if (!run->correlation_id) {
		corr = default_correlation(run);
		if (!corr)
			return -ENOMEM;
	}
	err = sorted_tags(run, &tags, &m->n_tags);
	if (!err)
		err = req_sv(run->correlation_id ? run->correlation_id : corr, &m->correlation_id);
	if (!err)
		err = req_sv(run->entrypoint, &m->entrypoint);
	if (!err)
		err = req_sv(run->device, &m->device);
	if (!err)
		err = opt_sv(run->candle_version, &m->candle_version);
	if (!err) {
		m->schema = CG_SV_LIT(CGTRACE_SCHEMA);
		m->run_id = (struct cg_sv){id_buf, (uint32_t)cg_run_id(id_buf, now)};
		m->timestamp = (struct cg_sv){ts_buf, (uint32_t)cg_iso8601_utc(ts_buf, now)};
		m->phase = (uint8_t)run->phase;
		m->timing_mode = (uint8_t)run->timing_mode;
		m->measured_region_device_synchronized = run->measured_region_device_synchronized;
		m->capture_step = run->capture_step;
		m->warmup_steps = run->warmup_steps_set ? run->warmup_steps : run->capture_step - 1;
		m->tags = tags;
		err = emit(s, &r);
	}
	free(tags);
	free(corr);
	return err;
}

/* ------------------------------------------------------------------ */
/* Open and finish                                                     */
/* ------------------------------------------------------------------ */

/*
 * Opens a span under the current one (none for the root) and writes its
 * start. Fails only when the span could not be opened; a write error is
 * left in the sink, sticky, for the next record, flush or finish.
 */
static int push_span(struct cgtrace_session *s, struct cg_sv name, enum cgtrace_span_kind kind,
		     enum cgtrace_step step, bool measured, uint64_t *id)
{
	char id_buf[ID_MAX], parent_buf[ID_MAX];
	int err = stack_reserve(s);
	if (err)
		return err;

	uint64_t span = ++s->last_span;
	/* The root opens the session's clock, so its start is 0 by definition. */
	uint64_t start = s->depth ? cgtrace_session_elapsed_ns(s) : 0;
	struct cg_rec r = {.kind = CGTRACE_KIND_SPAN_START};
	r.u.span_start = (struct cg_rec_span_start){
		.id = id_sv(id_buf, "s", span),
		.parent_id = s->depth ? id_sv(parent_buf, "s", top(s)->id) : CG_SV_NONE,
		.name = name,
		.start_ns = start,
		.span_kind = (uint8_t)kind,
		.step = (uint8_t)step,
		.measured = measured,
	};
	s->stack[s->depth++] = (struct span_frame){span, start, (uint8_t)step};
	if (id)
		*id = span;
	emit(s, &r);
	return 0;
}

/* Pops the innermost span and writes its end; the span is closed even when the write fails. */
static int pop_span(struct cgtrace_session *s)
{
	char id_buf[ID_MAX];
	struct span_frame f = s->stack[--s->depth];
	uint64_t now = cgtrace_session_elapsed_ns(s);
	struct cg_rec r = {.kind = CGTRACE_KIND_SPAN_END};
	r.u.span_end.id = id_sv(id_buf, "s", f.id);
	r.u.span_end.duration_ns = now > f.start_ns ? now - f.start_ns : 0;
	return emit(s, &r);
}

static void session_free(struct cgtrace_session *s)
{
	free(s->stack);
	free(s->inputs);
	free(s);
}

/* The body of both opens; on failure the caller still owns fd. */
static int session_start(struct cgtrace_session **out, int fd, const struct cgtrace_run *run)
{
	struct cgtrace_session *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	cg_sink_init(&s->sink, fd);
	s->t0_ns = clock_ns(CLOCK_MONOTONIC);

	struct cg_sv name;
	int err = req_sv(run->entrypoint, &name);
	if (!err)
		err = write_meta(s, run);
	if (!err)
		err = push_span(s, name, CGTRACE_SPAN_FUNCTION, CGTRACE_STEP_NONE, false, NULL);
	if (!err)
		err = s->sink.err;
	if (err) {
		cg_buf_fini(&s->sink.buf);
		session_free(s);
		return err;
	}
	*out = s;
	return 0;
}

CG_EXPORT int cgtrace_session_open_fd(struct cgtrace_session **out, int fd,
				      const struct cgtrace_run *run)
{
	if (!out)
		return -EINVAL;
	*out = NULL;
	if (fd < 0)
		return -EBADF;
	int err = check_run(run);
	if (err)
		return err;
	return session_start(out, fd, run);
}

CG_EXPORT int cgtrace_session_open(struct cgtrace_session **out, const char *path,
				   const struct cgtrace_run *run)
{
	if (!out || !path)
		return -EINVAL;
	*out = NULL;
	/* Check first, so that a bad run never leaves a file behind. */
	int err = check_run(run);
	if (err)
		return err;

	int fd;
	err = cg_sink_create_path(path, &fd);
	if (err)
		return err;
	err = session_start(out, fd, run);
	if (err) {
		/* Only a regular file can be one this call created (O_EXCL). */
		struct stat st;
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
			unlink(path);
		close(fd);
	}
	return err;
}

CG_EXPORT int cgtrace_session_finish(struct cgtrace_session *s)
{
	if (!s)
		return -EINVAL;
	/* Nested spans stay unclosed: their durations would be made up. */
	bool busy = s->depth > 1;
	s->depth = 1;
	pop_span(s);
	int err = cg_sink_close(&s->sink);
	session_free(s);
	if (err)
		return err;
	return busy ? -EBUSY : 0;
}

CG_EXPORT int cgtrace_session_flush(struct cgtrace_session *s)
{
	if (!s)
		return -EINVAL;
	return cg_sink_flush(&s->sink);
}

/* ------------------------------------------------------------------ */
/* Spans                                                               */
/* ------------------------------------------------------------------ */

CG_EXPORT uint64_t cgtrace_session_elapsed_ns(const struct cgtrace_session *s)
{
	if (!s)
		return 0;
	uint64_t now = clock_ns(CLOCK_MONOTONIC);
	return now > s->t0_ns ? now - s->t0_ns : 0;
}

CG_EXPORT int cgtrace_session_begin_span(struct cgtrace_session *s, const char *name,
					 enum cgtrace_span_kind kind, enum cgtrace_step step,
					 bool measured, uint64_t *id)
{
	struct cg_sv n;
	if (!s || req_sv(name, &n) || (unsigned)kind >= CG_SPAN_KIND_COUNT ||
	    (unsigned)step >= CG_STEP_COUNT)
		return -EINVAL;
	/*
	 * 0 means the span is open and must be ended, even on a broken trace:
	 * a write error only surfaces later, at flush or finish.
	 */
	return push_span(s, n, kind, step, measured, id);
}

CG_EXPORT int cgtrace_session_end_span(struct cgtrace_session *s, uint64_t id)
{
	/* Only the innermost nested span may end; the root belongs to finish. */
	if (!s || s->depth <= 1 || top(s)->id != id)
		return -EINVAL;
	return pop_span(s);
}

CG_EXPORT uint64_t cgtrace_session_current_span(const struct cgtrace_session *s)
{
	return s && s->depth ? top(s)->id : 0;
}

/* ------------------------------------------------------------------ */
/* Records                                                             */
/* ------------------------------------------------------------------ */

/* Shape pointer and rank as a view; NULL is fine for a scalar. */
static int shape_ok(const uint64_t *shape, size_t ndim)
{
	return (ndim && !shape) || ndim > UINT32_MAX ? -EINVAL : 0;
}

static int inputs_view(struct cgtrace_session *s, const char *const *inputs, size_t n)
{
	if ((n && !inputs) || n > UINT32_MAX)
		return -EINVAL;
	if (n > s->inputs_cap) {
		struct cg_sv *p = realloc(s->inputs, n * sizeof(*p));
		if (!p)
			return -ENOMEM;
		s->inputs = p;
		s->inputs_cap = n;
	}
	for (size_t i = 0; i < n; i++)
		if (req_sv(inputs[i], &s->inputs[i]))
			return -EINVAL;
	return 0;
}

CG_EXPORT int cgtrace_session_record_op(struct cgtrace_session *s, uint64_t span,
					const struct cgtrace_op_record *op)
{
	char span_buf[ID_MAX];
	struct cg_rec r = {.kind = CGTRACE_KIND_OP};
	struct cg_rec_op *o = &r.u.op;

	if (!s || !op || !span_known(s, span))
		return -EINVAL;
	if (req_sv(op->op_name, &o->op_name) || opt_sv(op->output, &o->output) ||
	    req_sv(op->dtype, &o->dtype) || req_sv(op->device, &o->device) ||
	    shape_ok(op->shape, op->ndim))
		return -EINVAL;
	int err = inputs_view(s, op->inputs, op->n_inputs);
	if (err)
		return err;

	o->span_id = id_sv(span_buf, "s", span);
	o->inputs = s->inputs;
	o->n_inputs = (uint32_t)op->n_inputs;
	o->shape = op->shape;
	o->ndim = (uint32_t)op->ndim;
	o->duration_ns = op->duration_ns;
	o->timestamp_ns = op->timestamp_ns ? op->timestamp_ns : cgtrace_session_elapsed_ns(s);
	/* The size is always written, derived from shape x dtype when not given. */
	o->has_storage_bytes = true;
	o->storage_bytes = op->has_storage_bytes
				   ? op->storage_bytes
				   : cgtrace_storage_bytes(op->shape, op->ndim, o->dtype.p, o->dtype.n);
	o->input_storage_bytes = op->input_storage_bytes;
	return emit(s, &r);
}

CG_EXPORT int cgtrace_session_record_tensor(struct cgtrace_session *s, uint64_t span,
					    const struct cgtrace_tensor_record *t)
{
	char span_buf[ID_MAX];
	struct cg_rec r = {.kind = CGTRACE_KIND_TENSOR};
	struct cg_rec_tensor *x = &r.u.tensor;

	if (!s || !t || !span_known(s, span))
		return -EINVAL;
	if (req_sv(t->tensor_id, &x->tensor_id) || req_sv(t->dtype, &x->dtype) ||
	    req_sv(t->device, &x->device) || shape_ok(t->shape, t->ndim) ||
	    resolve_category(s, t->category, t->requires_grad, &x->category))
		return -EINVAL;

	x->span_id = id_sv(span_buf, "s", span);
	x->shape = t->shape;
	x->ndim = (uint32_t)t->ndim;
	x->requires_grad = t->requires_grad;
	x->has_storage_bytes = true;
	x->storage_bytes = t->has_storage_bytes
				   ? t->storage_bytes
				   : cgtrace_storage_bytes(t->shape, t->ndim, x->dtype.p, x->dtype.n);
	return emit(s, &r);
}

static int record_memory(struct cgtrace_session *s, uint64_t span,
			 const struct cgtrace_memory_record *m, enum cgtrace_action action)
{
	char span_buf[ID_MAX];
	struct cg_rec r = {.kind = CGTRACE_KIND_MEMORY};
	struct cg_rec_memory *x = &r.u.memory;

	if (!s || !m || !span_known(s, span))
		return -EINVAL;
	if (req_sv(m->tensor_id, &x->tensor_id) || opt_sv(m->op_name, &x->op_name) ||
	    req_sv(m->device, &x->device) || req_sv(m->dtype, &x->dtype) ||
	    shape_ok(m->shape, m->ndim) || resolve_category(s, m->category, false, &x->category))
		return -EINVAL;

	x->timestamp_ns = m->has_timestamp ? m->timestamp_ns : cgtrace_session_elapsed_ns(s);
	x->span_id = id_sv(span_buf, "s", span);
	x->bytes = m->bytes;
	x->action = (uint8_t)action;
	x->shape = m->shape;
	x->ndim = (uint32_t)m->ndim;
	return emit(s, &r);
}

CG_EXPORT int cgtrace_session_record_alloc(struct cgtrace_session *s, uint64_t span,
					   const struct cgtrace_memory_record *m)
{
	return record_memory(s, span, m, CGTRACE_ALLOC);
}

CG_EXPORT int cgtrace_session_record_free(struct cgtrace_session *s, uint64_t span,
					  const struct cgtrace_memory_record *m)
{
	return record_memory(s, span, m, CGTRACE_FREE);
}

CG_EXPORT int cgtrace_session_record_device_memory(struct cgtrace_session *s,
						   const char *device, uint64_t used_bytes,
						   uint64_t free_bytes,
						   const uint64_t *reserved_bytes,
						   const uint64_t *timestamp_ns)
{
	struct cg_rec r = {.kind = CGTRACE_KIND_DEVICE_MEMORY};
	struct cg_rec_device_memory *d = &r.u.device_memory;

	if (!s || req_sv(device, &d->device))
		return -EINVAL;
	d->timestamp_ns = timestamp_ns ? *timestamp_ns : cgtrace_session_elapsed_ns(s);
	d->used_bytes = used_bytes;
	d->free_bytes = free_bytes;
	d->has_reserved = reserved_bytes != NULL;
	d->reserved_bytes = reserved_bytes ? *reserved_bytes : 0;
	return emit(s, &r);
}

CG_EXPORT int cgtrace_session_record_gradient(struct cgtrace_session *s, const char *root,
					      const char *key, enum cgtrace_grad_state state,
					      const double *norm)
{
	char id_buf[ID_MAX];
	struct cg_rec r = {.kind = CGTRACE_KIND_GRADIENT};
	struct cg_rec_gradient *g = &r.u.gradient;

	if (!s || req_sv(root, &g->root) || req_sv(key, &g->key) ||
	    (unsigned)state >= CG_GRAD_STATE_COUNT)
		return -EINVAL;
	g->event_id = id_sv(id_buf, "gradient-", ++s->last_event);
	g->state = (uint8_t)state;
	/* JSON has no NaN or infinity, so such a norm is left out. */
	g->has_norm = norm && isfinite(*norm);
	g->norm = g->has_norm ? *norm : 0.0;
	return emit(s, &r);
}
