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
 * From the pseudo ids up: the thread of the spans recorded without one,
 * the devices' pseudo-processes and, after them, the thread of the
 * training updates.
 */
#define PSEUDO_BASE CLI_PERFETTO_PSEUDO_BASE
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
                         uint64_t pid, const char *name)
{
	const struct cgtrace_view_device *dev = &v->devices[d];
	uint64_t last = 0;
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
                               uint64_t pid, const char *name)
{
	for (size_t k = 0; k < dev->n_checkpoints; k++) {
		const struct cgtrace_view_checkpoint *c = &dev->checkpoints[k];
		struct cli_jw *w = &o->w;
		perfetto_event(o, 'C', pid, pid, c->timestamp_ns, name);
		perfetto_args_begin(w);
		cli_jw_key_u64(w, "used", c->used_bytes);
		cli_jw_key_u64(w, "free", c->free_bytes);
		if (c->has_reserved)
			cli_jw_key_u64(w, "reserved", c->reserved_bytes);
		perfetto_args_end(w);
	}
}

static void device_instants(struct perfetto_out *o, const struct cgtrace_view_device *dev,
                            uint64_t pid, const char *peak_name, const char *oom_name)
{
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

/* A device's tracks: a pseudo-process of its own, or in a job the process's own tracks. */
static int device_events(struct perfetto_out *o, const struct cgtrace_view *v, size_t d,
                         const struct perfetto_place *pl)
{
	const struct cgtrace_view_device *dev = &v->devices[d];
	char *proc = device_name(dev->device, "memory"), *live = device_name(dev->device, "live");
	char *ck = device_name(dev->device, "device"), *peak = device_name(dev->device, "peak");
	char *oom = device_name(dev->device, "out of memory");
	int ret = proc && live && ck && peak && oom ? 0 : -ENOMEM;
	uint64_t pid = pl->in_job ? pl->pid : DEVICE_PID(d);
	if (ret == 0) {
		if (!pl->in_job) {
			perfetto_name_event(o, "process_name", pid, pid, proc);
			perfetto_sort_event(o, pid, 1 + (uint64_t)d);
		}
		live_counter(o, v, d, pid, live);
		checkpoint_counter(o, dev, pid, ck);
		device_instants(o, dev, pid, peak, oom);
	}
	free(proc);
	free(live);
	free(ck);
	free(peak);
	free(oom);
	return ret;
}

/* ---- the file ---- */

uint64_t cli_perfetto_program_pid(const struct cgtrace_doc *doc)
{
	const char *tag = doc ? cli_tag(doc, "pid") : NULL;
	char *end;
	unsigned long long v = tag && *tag >= '0' && *tag <= '9' ? strtoull(tag, &end, 10) : 0;
	return v && !*end && v < PSEUDO_BASE ? (uint64_t)v : 1;
}

static void program_events(struct perfetto_out *o, const struct cgtrace_view *v,
                           const struct perfetto_place *pl)
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
	uint64_t pid = pl->pid;
	perfetto_name_event(o, "process_name", pid, pid,
	                    pl->name ? pl->name : name.err ? "trace" : name.p);
	cli_buf_fini(&name);
	perfetto_sort_event(o, pid, pl->sort_index);
	/* One process's window is no window of the whole job's. */
	const char *scope = pl->in_job ? "p" : "g";
	if (v->has_capture) {
		perfetto_instant(o, pid, v->capture_begin_ns, "capture window begins", scope);
		cli_jw_end_object(&o->w);
		perfetto_instant(o, pid, v->capture_end_ns, "capture window ends", scope);
		cli_jw_end_object(&o->w);
	}
}

/* What the file leaves out, in words: the spans, out-of-memory failures and updates not written. */
static void note_left_out(struct cli_jw *w, const struct cgtrace_view *v,
                          const struct perfetto_kept *k)
{
	struct cli_buf note = {0};
	char t[160];
	size_t updates_kept = k->updates_kept;
	if (k->spans_kept < k->spans) {
		snprintf(t, sizeof(t), "%zu of %zu spans kept: the longest", k->spans_kept, k->spans);
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

void perfetto_view_meta(struct cli_jw *w, const struct cgtrace_view *v,
                        const struct perfetto_kept *k)
{
	struct cgtrace_meta m = {0};
	if (v->doc)
		cgtrace_doc_meta(v->doc, &m);
	cli_jw_key_str(w, "schema", m.schema);
	cli_jw_key_str(w, "run_id", m.run_id);
	cli_jw_key_str(w, "entrypoint", m.entrypoint);
	cli_jw_key_u64(w, "buckets", v->n_buckets);
	cli_jw_key_u64(w, "bucket_ns", v->bucket_ns);
	cli_jw_key_u64(w, "spans", k->spans);
	cli_jw_key_u64(w, "spans_kept", k->spans_kept);
	cli_jw_key_str(w, "updates_from",
	               cli_updates_from_name(v->steps ? v->steps->from : CGTRACE_UPDATES_NONE));
	cli_jw_key_u64(w, "updates", v->steps ? v->steps->updates : 0);
	cli_jw_key_u64(w, "updates_kept", k->updates_kept);
	note_left_out(w, v, k);
}

int perfetto_view_events(struct perfetto_out *o, const struct cgtrace_view *v,
                         const struct perfetto_place *pl, size_t max_spans,
                         struct perfetto_kept *kept)
{
	struct spans s = {0};
	*kept = (struct perfetto_kept){0};
	int ret = spans_load(v, pl->pid, &s);
	if (ret == 0)
		ret = spans_nest(&s);
	if (ret == 0) {
		spans_cap(&s, max_spans);
		program_events(o, v, pl);
		thread_names(o, &s, pl->pid);
		span_events(o, &s, pl->pid);
		ret = perfetto_updates(o, v, pl->pid, UPDATES_TID(v), &kept->updates_kept);
	}
	for (size_t d = 0; ret == 0 && d < v->n_devices; d++)
		ret = device_events(o, v, d, pl);
	kept->spans = s.n;
	kept->spans_kept = s.kept;
	free(s.v);
	return ret;
}

void perfetto_begin(struct perfetto_out *o)
{
	cli_jw_init(&o->w, &o->b);
	cli_jw_begin_object(&o->w);
	cli_jw_key_str(&o->w, "displayTimeUnit", "ns");
	cli_jw_key(&o->w, "traceEvents");
	cli_jw_begin_array(&o->w);
}

void perfetto_metadata_begin(struct perfetto_out *o)
{
	struct cli_jw *w = &o->w;
	cli_jw_newline(w);
	cli_jw_end_array(w);
	cli_jw_newline(w);
	cli_jw_key(w, "metadata");
	cli_jw_begin_object(w);
	cli_jw_key_str(w, "source", "cgtrace export --format perfetto");
	cli_jw_key_str(w, "cgtrace_version", CGTRACE_VERSION);
}

int perfetto_end(struct perfetto_out *o)
{
	cli_jw_end_object(&o->w);
	cli_jw_end_object(&o->w);
	cli_buf_putc(&o->b, '\n');
	int ret = cli_jw_finish(&o->w);
	if (ret == 0)
		perfetto_flush(o, true);
	return ret;
}

int cli_perfetto_write(FILE *f, const struct cgtrace_view *view,
                       const struct cli_perfetto_options *opts)
{
	struct perfetto_out o = {.f = f};
	const struct perfetto_place pl = {.pid = cli_perfetto_program_pid(view->doc)};
	struct perfetto_kept kept;
	perfetto_begin(&o);
	int ret = perfetto_view_events(&o, view, &pl, opts->max_spans, &kept);
	if (ret == 0) {
		perfetto_metadata_begin(&o);
		perfetto_view_meta(&o.w, view, &kept);
		ret = perfetto_end(&o);
	}
	cli_buf_fini(&o.b);
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
