/* SPDX-License-Identifier: MIT */
/*
 * The Perfetto export: a view as Chrome Trace Event JSON, object form. Its
 * size follows the view's grid and the span cap, never the record count
 * (docs/perfetto.md): two counter samples per bucket and device at most,
 * one checkpoint per bucket, the longest spans, the training updates
 * (export-perfetto-updates.c).
 */
#include "export-perfetto.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "export-perfetto-out.h"
#include "export-perfetto-updates.h"
#include "step-text.h"

/*
 * Kernel thread ids stay under PID_MAX_LIMIT (2^22): the thread of the
 * spans recorded without one, the devices' pseudo-processes and, after
 * them, the thread of the training updates take ids from there, so they
 * never meet a real thread.
 */
#define PSEUDO_BASE (UINT64_C(1) << 22)
#define SPANS_TID PSEUDO_BASE
#define DEVICE_PID(d) (PSEUDO_BASE + 1 + (uint64_t)(d))
#define UPDATES_TID(view) DEVICE_PID((view)->n_devices)

/* ---- spans ---- */

struct span {
	const struct cgtrace_view_span *s;
	size_t idx; /* in view->all_spans */
	uint64_t tid, end;
	bool clamped, kept;
};

struct spans {
	struct span *v;
	size_t n, kept;
	uint64_t spans_tid; /* the thread of the spans recorded without one */
};

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

/* Per thread, by start; the enclosing span (longer) before what it holds. */
static int by_thread(const void *a, const void *b)
{
	const struct span *x = a, *y = b;
	int c = cmp_u64(x->tid, y->tid);
	if (!c)
		c = cmp_u64(x->s->start_ns, y->s->start_ns);
	if (!c)
		c = cmp_u64(y->end, x->end);
	return c ? c : cmp_u64(x->idx, y->idx);
}

/* The longest first, the earlier among equals. */
static int by_length(const void *a, const void *b)
{
	const struct span *x = a, *y = b;
	int c = cmp_u64(y->end - y->s->start_ns, x->end - x->s->start_ns);
	if (!c)
		c = cmp_u64(x->s->start_ns, y->s->start_ns);
	return c ? c : cmp_u64(x->idx, y->idx);
}

/* The spans on their threads, a span never closed drawn to the trace's end (the view's). */
static int spans_load(const struct cgtrace_view *view, uint64_t pid, struct spans *s)
{
	size_t n = view->n_all_spans;
	s->v = calloc(n ? n : 1, sizeof(*s->v));
	if (!s->v)
		return -ENOMEM;
	s->n = n;
	bool threads = false;
	for (size_t i = 0; i < n; i++)
		threads |= view->all_spans[i].has_thread;
	/* Without any thread in the trace, every span is the process's main thread's. */
	s->spans_tid = threads ? SPANS_TID : pid;
	for (size_t i = 0; i < n; i++) {
		const struct cgtrace_view_span *sp = &view->all_spans[i];
		s->v[i] = (struct span){
		    .s = sp,
		    .idx = i,
		    .tid = sp->has_thread ? sp->thread : s->spans_tid,
		    .end = sp->end_ns,
		};
	}
	return 0;
}

/*
 * The complete events of a thread must nest: a span that would outlive the
 * one it is in (left open, so drawn to the trace's end, or a trace's odd
 * clock) ends with it. The probe's own spans nest per thread already.
 */
static int spans_nest(struct spans *s)
{
	qsort(s->v, s->n, sizeof(*s->v), by_thread);
	uint64_t *stack = malloc((s->n ? s->n : 1) * sizeof(*stack));
	if (!stack)
		return -ENOMEM;
	size_t depth = 0;
	for (size_t i = 0; i < s->n; i++) {
		struct span *sp = &s->v[i];
		if (i && sp->tid != s->v[i - 1].tid)
			depth = 0;
		while (depth && stack[depth - 1] <= sp->s->start_ns && stack[depth - 1] < sp->end)
			depth--;
		if (depth && sp->end > stack[depth - 1]) {
			sp->end = stack[depth - 1];
			sp->clamped = true;
		}
		stack[depth++] = sp->end;
	}
	free(stack);
	return 0;
}

/* At most max spans, the longest; then back in thread order. */
static void spans_cap(struct spans *s, size_t max)
{
	if (s->n > max)
		qsort(s->v, s->n, sizeof(*s->v), by_length);
	s->kept = s->n > max ? max : s->n;
	for (size_t i = 0; i < s->kept; i++)
		s->v[i].kept = true;
	if (s->n > max)
		qsort(s->v, s->n, sizeof(*s->v), by_thread);
}

/* A thread's name: the last its spans gave (a thread named again gives the new name later). */
static void thread_names(struct perfetto_out *o, const struct spans *s, uint64_t pid)
{
	char fallback[48];
	for (size_t i = 0; i < s->n;) {
		size_t j = i;
		bool kept = false;
		const char *name = NULL;
		for (; j < s->n && s->v[j].tid == s->v[i].tid; j++) {
			kept |= s->v[j].kept;
			name = s->v[j].s->thread_name ? s->v[j].s->thread_name : name;
		}
		if (kept) {
			uint64_t tid = s->v[i].tid;
			snprintf(fallback, sizeof(fallback), "thread %" PRIu64, tid);
			perfetto_name_event(o, "thread_name", pid, tid,
			                    tid == s->spans_tid ? "spans"
			                    : name              ? name
			                                        : fallback);
		}
		i = j;
	}
}

static void span_events(struct perfetto_out *o, const struct spans *s, uint64_t pid)
{
	for (size_t i = 0; i < s->n; i++) {
		const struct span *v = &s->v[i];
		if (!v->kept)
			continue;
		const struct cgtrace_view_span *sp = v->s;
		struct cli_jw *w = &o->w;
		perfetto_event(o, 'X', pid, v->tid, sp->start_ns, sp->name);
		perfetto_key_us(w, "dur", v->end - sp->start_ns);
		cli_jw_key_str(w, "cat", cgtrace_span_kind_name(sp->kind));
		perfetto_args_begin(w);
		cli_jw_key_str(w, "span_id", sp->id);
		cli_jw_key_str(w, "kind", cgtrace_span_kind_name(sp->kind));
		if (cgtrace_step_name(sp->step))
			cli_jw_key_str(w, "step", cgtrace_step_name(sp->step));
		if (!sp->closed)
			cli_jw_key_str(w, "unclosed", "never closed: drawn to the trace's end");
		if (v->clamped)
			cli_jw_key_str(w, "clamped", "ends with the span it is in");
		perfetto_args_end(w);
	}
}

/* ---- devices ---- */

/* "DEVICE WHAT", for the names of a device's process and tracks. */
static char *device_name(const char *device, const char *what)
{
	size_t n = strlen(device) + strlen(what) + 2;
	char *p = malloc(n);
	if (p)
		snprintf(p, n, "%s %s", device, what);
	return p;
}

/* A counter event's args, its values by category, and its end. */
static void categories(struct cli_jw *w, const uint64_t *by_category)
{
	perfetto_args_begin(w);
	for (int c = 0; c < CGTRACE_CAT_COUNT; c++)
		cli_jw_key_u64(w, cgtrace_category_name((enum cgtrace_category)c), by_category[c]);
	perfetto_args_end(w);
}

/*
 * Live bytes by category, per bucket at the instant the device's total is
 * highest in it, then after its last record when that differs: the stacked
 * chart's highest point is the true peak. A sample that would share its
 * instant with the one before goes 1 ns after it (a counter has one value
 * per instant).
 */
static void live_counter(struct perfetto_out *o, const struct cgtrace_view *v, size_t d,
                         const char *name)
{
	const struct cgtrace_view_device *dev = &v->devices[d];
	uint64_t pid = DEVICE_PID(d), last = 0;
	bool any = false;
	for (size_t i = 0; i < v->n_buckets; i++) {
		const struct cgtrace_view_bucket *bk = &dev->buckets[i];
		if (!bk->records)
			continue; /* carried: the value holds from the sample before */
		uint64_t t = any && bk->max_ns <= last ? last + 1 : bk->max_ns;
		perfetto_event(o, 'C', pid, pid, t, name);
		categories(&o->w, bk->max_by_category);
		last = t;
		any = true;
		if (bk->end_bytes == bk->max_bytes && bk->end_ns <= bk->max_ns &&
		    memcmp(bk->end_by_category, bk->max_by_category, sizeof(bk->end_by_category)) ==
		        0)
			continue;
		t = bk->end_ns > last ? bk->end_ns : last + 1;
		perfetto_event(o, 'C', pid, pid, t, name);
		categories(&o->w, bk->end_by_category);
		last = t;
	}
}

/* The device's own figures (device_memory checkpoints), one per bucket. */
static void checkpoint_counter(struct perfetto_out *o, const struct cgtrace_view_device *dev,
                               size_t d, const char *name)
{
	for (size_t k = 0; k < dev->n_checkpoints; k++) {
		const struct cgtrace_view_checkpoint *c = &dev->checkpoints[k];
		struct cli_jw *w = &o->w;
		perfetto_event(o, 'C', DEVICE_PID(d), DEVICE_PID(d), c->timestamp_ns, name);
		perfetto_args_begin(w);
		cli_jw_key_u64(w, "used", c->used_bytes);
		cli_jw_key_u64(w, "free", c->free_bytes);
		if (c->has_reserved)
			cli_jw_key_u64(w, "reserved", c->reserved_bytes);
		perfetto_args_end(w);
	}
}

static void device_instants(struct perfetto_out *o, const struct cgtrace_view_device *dev, size_t d,
                            const char *peak_name, const char *oom_name)
{
	uint64_t pid = DEVICE_PID(d);
	struct cli_jw *w = &o->w;
	if (dev->peak_bytes) {
		char h[32];
		perfetto_instant(o, pid, dev->peak_ns, peak_name, "p");
		perfetto_args_begin(w);
		cli_jw_key_u64(w, "bytes", dev->peak_bytes);
		cli_jw_key_str(w, "live", cli_bytes(h, dev->peak_bytes, false));
		perfetto_args_end(w);
	}
	for (size_t k = 0; k < dev->n_ooms_kept; k++) {
		const struct cgtrace_view_checkpoint *c = &dev->ooms[k];
		perfetto_instant(o, pid, c->timestamp_ns, oom_name, "p");
		perfetto_args_begin(w);
		cli_jw_key_u64(w, "request_bytes", c->oom_request_bytes);
		cli_jw_key_u64(w, "used_bytes", c->used_bytes);
		cli_jw_key_u64(w, "free_bytes", c->free_bytes);
		perfetto_args_end(w);
	}
}

static int device_events(struct perfetto_out *o, const struct cgtrace_view *v, size_t d)
{
	const struct cgtrace_view_device *dev = &v->devices[d];
	char *proc = device_name(dev->device, "memory"), *live = device_name(dev->device, "live");
	char *ck = device_name(dev->device, "device"), *peak = device_name(dev->device, "peak");
	char *oom = device_name(dev->device, "out of memory");
	int ret = proc && live && ck && peak && oom ? 0 : -ENOMEM;
	if (ret == 0) {
		perfetto_name_event(o, "process_name", DEVICE_PID(d), DEVICE_PID(d), proc);
		perfetto_sort_event(o, DEVICE_PID(d), 1 + (uint64_t)d);
		live_counter(o, v, d, live);
		checkpoint_counter(o, dev, d, ck);
		device_instants(o, dev, d, peak, oom);
	}
	free(proc);
	free(live);
	free(ck);
	free(peak);
	free(oom);
	return ret;
}

/* ---- the file ---- */

/* The program's pid: the trace's pid tag when it is a plain number under the pseudo ids. */
static uint64_t program_pid(const struct cgtrace_doc *doc)
{
	const char *tag = doc ? cli_tag(doc, "pid") : NULL;
	char *end;
	unsigned long long v = tag && *tag >= '0' && *tag <= '9' ? strtoull(tag, &end, 10) : 0;
	return v && !*end && v < PSEUDO_BASE ? (uint64_t)v : 1;
}

static void program_events(struct perfetto_out *o, const struct cgtrace_view *v, uint64_t pid)
{
	struct cgtrace_meta m = {0};
	if (v->doc)
		cgtrace_doc_meta(v->doc, &m);
	struct cli_buf name = {0};
	cli_buf_puts(&name, m.entrypoint ? m.entrypoint : "trace");
	if (m.run_id) {
		cli_buf_lit(&name, " (");
		cli_buf_puts(&name, m.run_id);
		cli_buf_putc(&name, ')');
	}
	cli_buf_putc(&name, '\0');
	perfetto_name_event(o, "process_name", pid, pid, name.err ? "trace" : name.p);
	cli_buf_fini(&name);
	perfetto_sort_event(o, pid, 0);
	if (v->has_capture) {
		perfetto_instant(o, pid, v->capture_begin_ns, "capture window begins", "g");
		cli_jw_end_object(&o->w);
		perfetto_instant(o, pid, v->capture_end_ns, "capture window ends", "g");
		cli_jw_end_object(&o->w);
	}
}

/* What the file leaves out, in words: the spans, out-of-memory failures and updates not written. */
static void note_left_out(struct cli_jw *w, const struct cgtrace_view *v, const struct spans *s,
                          size_t updates_kept)
{
	struct cli_buf note = {0};
	char t[160];
	if (s->kept < s->n) {
		snprintf(t, sizeof(t), "%zu of %zu spans kept: the longest", s->kept, s->n);
		cli_buf_puts(&note, t);
	}
	for (size_t d = 0; d < v->n_devices; d++) {
		const struct cgtrace_view_device *dev = &v->devices[d];
		if (dev->n_ooms <= dev->n_ooms_kept)
			continue;
		snprintf(t, sizeof(t), "%s%zu of %" PRIu64 " out-of-memory failures on ",
		         note.len ? "; " : "", dev->n_ooms_kept, dev->n_ooms);
		cli_buf_puts(&note, t);
		cli_buf_puts(&note, dev->device);
		cli_buf_lit(&note, " marked: the first");
	}
	if (v->steps && updates_kept < v->steps->updates) {
		snprintf(t, sizeof(t),
		         "%s%zu of %" PRIu64 " updates kept: the first, the last, each device's "
		         "highest peaks and an even sample",
		         note.len ? "; " : "", updates_kept, v->steps->updates);
		cli_buf_puts(&note, t);
	}
	if (note.len) {
		cli_buf_putc(&note, '\0');
		cli_jw_key_str(w, "cgtrace_note", note.err ? "some events left out" : note.p);
	}
	cli_buf_fini(&note);
}

static void metadata(struct perfetto_out *o, const struct cgtrace_view *v, const struct spans *s,
                     size_t updates_kept)
{
	struct cgtrace_meta m = {0};
	if (v->doc)
		cgtrace_doc_meta(v->doc, &m);
	struct cli_jw *w = &o->w;
	cli_jw_key(w, "metadata");
	cli_jw_begin_object(w);
	cli_jw_key_str(w, "source", "cgtrace export --format perfetto");
	cli_jw_key_str(w, "cgtrace_version", CGTRACE_VERSION);
	cli_jw_key_str(w, "schema", m.schema);
	cli_jw_key_str(w, "run_id", m.run_id);
	cli_jw_key_str(w, "entrypoint", m.entrypoint);
	cli_jw_key_u64(w, "buckets", v->n_buckets);
	cli_jw_key_u64(w, "bucket_ns", v->bucket_ns);
	cli_jw_key_u64(w, "spans", s->n);
	cli_jw_key_u64(w, "spans_kept", s->kept);
	cli_jw_key_str(w, "updates_from",
	               cli_updates_from_name(v->steps ? v->steps->from : CGTRACE_UPDATES_NONE));
	cli_jw_key_u64(w, "updates", v->steps ? v->steps->updates : 0);
	cli_jw_key_u64(w, "updates_kept", updates_kept);
	note_left_out(w, v, s, updates_kept);
	cli_jw_end_object(w);
}

int cli_perfetto_write(FILE *f, const struct cgtrace_view *view,
                       const struct cli_perfetto_options *opts)
{
	struct perfetto_out o = {.f = f};
	struct spans s = {0};
	size_t updates_kept = 0;
	uint64_t pid = program_pid(view->doc);
	cli_jw_init(&o.w, &o.b);
	int ret = spans_load(view, pid, &s);
	if (ret == 0)
		ret = spans_nest(&s);
	if (ret == 0) {
		spans_cap(&s, opts->max_spans);
		cli_jw_begin_object(&o.w);
		cli_jw_key_str(&o.w, "displayTimeUnit", "ns");
		cli_jw_key(&o.w, "traceEvents");
		cli_jw_begin_array(&o.w);
		program_events(&o, view, pid);
		thread_names(&o, &s, pid);
		span_events(&o, &s, pid);
		ret = perfetto_updates(&o, view, pid, UPDATES_TID(view), &updates_kept);
	}
	for (size_t d = 0; ret == 0 && d < view->n_devices; d++)
		ret = device_events(&o, view, d);
	if (ret == 0) {
		cli_jw_newline(&o.w);
		cli_jw_end_array(&o.w);
		cli_jw_newline(&o.w);
		metadata(&o, view, &s, updates_kept);
		cli_jw_end_object(&o.w);
		cli_buf_putc(&o.b, '\n');
		ret = cli_jw_finish(&o.w);
	}
	if (ret == 0)
		perfetto_flush(&o, true);
	cli_buf_fini(&o.b);
	free(s.v);
	return ret;
}

int cli_export_perfetto(const char *path, const char *output, size_t buckets, size_t max_spans)
{
	struct cli_out o;
	if (cli_out_open(&o, output) != CLI_OK)
		return CLI_FAIL;
	struct cgtrace_view_options vo = {.buckets = buckets};
	struct cgtrace_view *v = cli_view_load(path, &vo, CGTRACE_READ_SKIP_STACKS);
	int ret =
	    v ? cli_perfetto_write(o.f, v, &(struct cli_perfetto_options){max_spans}) : -EINVAL;
	if (v && ret < 0)
		fprintf(stderr, "%s: %s\n", cli_path_name(path), strerror(-ret));
	int status = cli_out_close(&o, ret == 0);
	cgtrace_view_free(v);
	return ret < 0 ? CLI_FAIL : status;
}
