/* SPDX-License-Identifier: MIT */
/*
 * Training steps told to the probe (docs/probe.md, "Annotations" and
 * "NVTX ranges"): tests/steps/api.c through the header's _opt forms and
 * tests/steps/nvtx.c through NVTX ranges run with and without the probe;
 * their traces read back with the reader: spans per thread, steps that
 * apply to the whole process, categories, autograd_retained_bytes,
 * gradient and device checkpoint records, unbalanced ends. The training
 * fields (docs/steps.md) through tests/steps/training.c: update spans,
 * phases and parameter marks, whole and in a capture window; and tests/steps/nvtx-training.c: update
 * ranges, alone and nested with the API's updates.
 *
 * Environment (tests/meson.build): STEPS_TEST_PROBE, STEPS_TEST_BIN.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <check.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgtrace.h"
#include "child.h"
#include "rundir.h"
#include "test-main.h"

static const char *probe, *bin;

struct run {
	char dir[RUNDIR_MAX], cwd[RUNDIR_MAX + 16], out[RUNDIR_MAX + 16];
	int status;
	char *stdout_text, *stderr_text;
	char *trace_text; /* JSONL runs: the trace as written */
	char *trace_path; /* the trace, read back by cgtrace_steps_read */
	struct cgtrace_doc *doc;
};

/* Runs bin/prog, under the probe when with_probe, with extra environment; reads its trace. */
static struct run *run(const char *prog, bool with_probe, const char *format,
                       const char *const *extra)
{
	struct run *r = calloc(1, sizeof(*r));
	rundir_make(r->dir, r->cwd, r->out, "steps");
	char *owned[16] = {0};
	if (with_probe)
		rundir_probe_env(owned, probe, r->out);
	char *fmt = strf("CGPROBE_FORMAT=%s", format);
	char *output = strf("CGPROBE_OUTPUT=%s/trace.%%p.%s", r->out,
	                    strcmp(format, "jsonl") ? "cgt" : "jsonl");
	const char *all[16] = {fmt, output};
	for (size_t i = 0; extra && extra[i] && i < 12; i++)
		all[i + 2] = extra[i];
	static const char *const drop[] = {CHILD_ENV_DROP_PROBE, "NVTX_INJECTION64_PATH=", NULL};
	char **env = child_env(drop, owned, all);
	char *path = strf("%s/%s", bin, prog);
	const char *args[] = {NULL};
	pid_t pid = rundir_spawn(r->dir, r->cwd, path, args, env);
	r->status = child_wait(pid, 60000, path);
	rundir_read_output(r->dir, &r->stdout_text, &r->stderr_text);
	ck_assert_msg(WIFEXITED(r->status) && WEXITSTATUS(r->status) == 0, "%s: %s; stderr: %s",
	              path, status_text(r->status), r->stderr_text);
	char *files[4];
	size_t k = rundir_files(r->out, files, 4);
	ck_assert_msg(k == (with_probe ? 1u : 0u), "%s left %zu traces", path, k);
	if (k == 1) {
		char err[1024];
		int rc = cgtrace_doc_read(files[0], NULL, &r->doc, err, sizeof(err));
		ck_assert_msg(rc == 0, "%s: %s", files[0], err);
		if (!strcmp(format, "jsonl"))
			r->trace_text = read_file(files[0], NULL);
		r->trace_path = files[0];
	}
	free(path);
	free(env);
	free(fmt);
	free(output);
	for (size_t i = 0; owned[i]; i++)
		free(owned[i]);
	return r;
}

static void run_free(struct run *r)
{
	if (r->doc)
		cgtrace_doc_free(r->doc);
	remove_tree(r->dir);
	free(r->trace_path);
	free(r->stdout_text);
	free(r->stderr_text);
	free(r->trace_text);
	free(r);
}

/* The value the program printed for key. */
static long long said(const struct run *r, const char *key)
{
	size_t n = strlen(key);
	for (const char *p = r->stdout_text; p && *p;) {
		if (!strncmp(p, key, n) && p[n] == ' ')
			return strtoll(p + n + 1, NULL, 10);
		const char *nl = strchr(p, '\n');
		p = nl ? nl + 1 : NULL;
	}
	ck_abort_msg("the program printed no %s; stdout: %s", key, r->stdout_text);
	return 0;
}

static bool find_span(const struct run *r, const char *name, struct cgtrace_span *out)
{
	size_t n = cgtrace_doc_count(r->doc, CGTRACE_KIND_SPAN_START);
	for (size_t i = 0; i < n; i++) {
		cgtrace_doc_span(r->doc, i, out);
		if (!strcmp(out->name, name))
			return true;
	}
	return false;
}

static void expect_span(const struct run *r, const char *name, const char *parent,
                        enum cgtrace_step step, enum cgtrace_span_kind kind)
{
	struct cgtrace_span s;
	ck_assert_msg(find_span(r, name, &s), "no span %s", name);
	ck_assert_str_eq(s.parent_id, parent);
	ck_assert_int_eq(s.step, step);
	ck_assert_int_eq(s.kind, kind);
	ck_assert_msg(s.closed, "span %s not closed", name);
}

static char *sid(long long id)
{
	return strf("s%lld", id);
}

/* The allocation of exactly bytes: its span and category. */
static void expect_alloc(const struct run *r, uint64_t bytes, const char *span,
                         enum cgtrace_category cat)
{
	size_t n = cgtrace_doc_count(r->doc, CGTRACE_KIND_MEMORY);
	for (size_t i = 0; i < n; i++) {
		struct cgtrace_memory m;
		cgtrace_doc_memory(r->doc, i, &m);
		if (m.action != CGTRACE_ALLOC || m.bytes != bytes)
			continue;
		if (span)
			ck_assert_msg(!strcmp(m.span_id, span), "%" PRIu64 " bytes in %s, not %s",
			              bytes, m.span_id, span);
		ck_assert_msg(m.category == cat, "%" PRIu64 " bytes: %s, not %s", bytes,
		              cgtrace_category_name(m.category), cgtrace_category_name(cat));
		return;
	}
	ck_abort_msg("no allocation of %" PRIu64 " bytes", bytes);
}

/* ------------------------------------------------------------------ */
/* Training: updates                                                   */
/* ------------------------------------------------------------------ */

/* The span named name whose cgprobe_update is n (0: none). */
static bool find_update(const struct run *r, const char *name, uint64_t n, struct cgtrace_span *out)
{
	size_t k = cgtrace_doc_count(r->doc, CGTRACE_KIND_SPAN_START);
	for (size_t i = 0; i < k; i++) {
		uint64_t u;
		cgtrace_doc_span(r->doc, i, out);
		cgtrace_doc_span_training(r->doc, i, &u, NULL);
		if (!strcmp(out->name, name) && u == n)
			return true;
	}
	return false;
}

static size_t count_named(const struct run *r, const char *name)
{
	size_t k = cgtrace_doc_count(r->doc, CGTRACE_KIND_SPAN_START), n = 0;
	for (size_t i = 0; i < k; i++) {
		struct cgtrace_span s;
		cgtrace_doc_span(r->doc, i, &s);
		n += !strcmp(s.name, name);
	}
	return n;
}

/* Update n's span: named update, beside the stack under parent, closed, carrying n. */
static struct cgtrace_span expect_update(const struct run *r, uint64_t n, const char *parent)
{
	struct cgtrace_span u;
	ck_assert_msg(find_update(r, "update", n, &u), "no span of update %" PRIu64, n);
	ck_assert_str_eq(u.parent_id, parent);
	ck_assert_int_eq(u.step, CGTRACE_STEP_NONE);
	ck_assert_int_eq(u.kind, CGTRACE_SPAN_FUNCTION);
	ck_assert_msg(u.closed && u.duration_ns > 0, "update %" PRIu64 ": closed %d, %" PRIu64 " ns",
	              n, u.closed, u.duration_ns);
	return u;
}

/* inner lies within outer's start and end. */
static void expect_within(const struct run *r, const struct cgtrace_span *outer, const char *inner)
{
	struct cgtrace_span s;
	ck_assert_msg(find_span(r, inner, &s), "no span %s", inner);
	ck_assert_msg(s.closed && outer->start_ns <= s.start_ns &&
	                  s.start_ns + s.duration_ns <= outer->start_ns + outer->duration_ns,
	              "%s [%" PRIu64 ", +%" PRIu64 "] outside %s [%" PRIu64 ", +%" PRIu64 "]", inner,
	              s.start_ns, s.duration_ns, outer->id, outer->start_ns, outer->duration_ns);
}

static struct run *run_training(const char *format, bool window)
{
	const char *extra[] = {"CGPROBE_CAPTURE=update", "CGPROBE_CAPTURE_STEP=2", NULL};
	struct run *r = run("steps-training", true, format, window ? extra : NULL);
	ck_assert_str_eq(r->stderr_text, "");
	return r;
}

static void check_updates(const struct run *r)
{
	ck_assert_int_eq(said(r, "update-1"), 1);
	ck_assert_int_eq(said(r, "update-2"), 2);
	ck_assert_int_eq(said(r, "update-2-end"), 0);
	ck_assert_int_eq(said(r, "update-3"), 3);
	ck_assert_int_eq(said(r, "update-3-end"), 0);
	ck_assert_int_eq(said(r, "update-end-none"), -22);
	ck_assert_int_eq(said(r, "update-4"), 4);
	ck_assert_uint_eq(count_named(r, "update"), 4);
	expect_update(r, 4, "s1");
	struct cgtrace_span u1 = expect_update(r, 1, "s1"), u2 = expect_update(r, 2, "s1");
	char *epoch = sid(said(r, "epoch"));
	struct cgtrace_span u3 = expect_update(r, 3, epoch);
	free(epoch);
	expect_within(r, &u1, "in-1");
	expect_within(r, &u2, "in-2");
	expect_within(r, &u3, "in-3");
	/* The begin of update 2 ended update 1; update 2 ended (on another thread) before "between". */
	ck_assert_uint_le(u1.start_ns + u1.duration_ns, u2.start_ns);
	struct cgtrace_span b;
	ck_assert(find_span(r, "between", &b));
	ck_assert_uint_le(u2.start_ns + u2.duration_ns, b.start_ns);
	ck_assert(u1.has_thread && u1.thread == b.thread);
}

/* The phase of the span named name (NULL: none); *out gets the span. */
static const char *phase_of(const struct run *r, const char *name, struct cgtrace_span *out)
{
	size_t k = cgtrace_doc_count(r->doc, CGTRACE_KIND_SPAN_START);
	for (size_t i = 0; i < k; i++) {
		const char *phase;
		cgtrace_doc_span(r->doc, i, out);
		cgtrace_doc_span_training(r->doc, i, NULL, &phase);
		if (!strcmp(out->name, name))
			return phase;
	}
	ck_abort_msg("no span %s", name);
	return NULL;
}

/* CGPROBE_SPAN_PHASE: a phase named after the span, unless a step is set or named. */
static void check_phases(const struct run *r)
{
	static const char *const opened[] = {"phase-data", "phase-stepped", "phase-backward",
	                                     "phase-none", "phase-longest"};
	for (size_t i = 0; i < sizeof(opened) / sizeof(opened[0]); i++)
		ck_assert_msg(said(r, opened[i]) > 0, "%s not opened", opened[i]);
	ck_assert_int_eq(said(r, "phase-space"), 0);
	ck_assert_int_eq(said(r, "phase-long"), 0);
	ck_assert_int_eq(said(r, "phase-empty"), 0);
	struct cgtrace_span s;
	ck_assert_str_eq(phase_of(r, "data", &s), "data");
	ck_assert_int_eq(s.step, CGTRACE_STEP_NONE);
	char *data = sid(said(r, "phase-data"));
	ck_assert_str_eq(s.id, data);
	expect_alloc(r, 4001, data, CGTRACE_CAT_OTHER);
	free(data);
	ck_assert_ptr_null(phase_of(r, "fwd", &s));
	ck_assert_int_eq(s.step, CGTRACE_STEP_FORWARD);
	ck_assert_ptr_null(phase_of(r, "backward", &s));
	ck_assert_int_eq(s.step, CGTRACE_STEP_BACKWARD);
	ck_assert_ptr_null(phase_of(r, "none", &s));
	ck_assert_int_eq(s.step, CGTRACE_STEP_NONE);
	ck_assert_str_eq(phase_of(r, "a-phase-name-of-thirty-one-byte", &s),
	                 "a-phase-name-of-thirty-one-byte");
	ck_assert(!find_span(r, "load batch", &s) && !find_span(r, "", &s));
}

/*
 * The mark whose first range starts at addr (none: 0): *out gets its span,
 * *ranges its ranges as [start, end) pairs; returns how many.
 */
static size_t mark_at(const struct run *r, uint64_t addr, struct cgtrace_span *out,
                      const uint64_t **ranges)
{
	size_t k = cgtrace_doc_count(r->doc, CGTRACE_KIND_SPAN_START);
	for (size_t i = 0; i < k; i++) {
		size_t n = cgtrace_doc_span_parameters(r->doc, i, ranges);
		if (n && (*ranges)[0] == addr) {
			cgtrace_doc_span(r->doc, i, out);
			return n;
		}
	}
	return 0;
}

/* A mark: a span "parameters" under parent, ended at once, holding exactly want (pairs). */
static void expect_mark(const struct run *r, const char *parent, const uint64_t *want, size_t n)
{
	struct cgtrace_span s;
	const uint64_t *got;
	ck_assert_uint_eq(mark_at(r, want[0], &s, &got), n);
	ck_assert_str_eq(s.name, "parameters");
	ck_assert_str_eq(s.parent_id, parent);
	ck_assert_int_eq(s.step, CGTRACE_STEP_NONE);
	ck_assert(s.closed);
	ck_assert_uint_eq(s.duration_ns, 0);
	for (size_t i = 0; i < 2 * n; i++)
		ck_assert_msg(got[i] == want[i], "mark at 0x%" PRIx64 ": value %zu 0x%" PRIx64
		              ", not 0x%" PRIx64, want[0], i, got[i], want[i]);
}

static const uint64_t mark_one[] = {0x2000, 0x2040};
static const uint64_t mark_n[] = {0x3000, 0x3010, 0x5000, 0x5020, 0x4000, 0x4030};

/* The marks update 2 made, and none of the calls refused. */
static void check_marks_in_2(const struct run *r)
{
	ck_assert_int_eq(said(r, "mark-one"), 0);
	ck_assert_int_eq(said(r, "mark-n"), 0);
	static const char *const refused[] = {"mark-null-ptrs", "mark-null-bytes", "mark-none",
	                                      "mark-n-empty",   "mark-n-wraps",    "mark-empty",
	                                      "mark-wraps"};
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		ck_assert_msg(said(r, refused[i]) == -22, "%s: %lld", refused[i], said(r, refused[i]));
	struct cgtrace_span s, u;
	ck_assert(find_span(r, "load", &s));
	char *load = strf("%s", s.id);
	expect_mark(r, load, mark_one, 1);
	free(load);
	expect_mark(r, "s1", mark_n, 3);
	const uint64_t *got;
	ck_assert_uint_eq(mark_at(r, 0x6000, &s, &got), 0);
	ck_assert(find_update(r, "update", 2, &u));
	ck_assert(mark_at(r, 0x2000, &s, &got) && u.start_ns <= s.start_ns &&
	          s.start_ns <= u.start_ns + u.duration_ns);
}

/* Marks in a whole run: before the updates, in update 2, and one past the table's room. */
static void check_marks(const struct run *r)
{
	ck_assert_int_eq(said(r, "mark-early"), 0);
	check_marks_in_2(r);
	ck_assert_int_eq(said(r, "mark-big"), -7);
	ck_assert_int_eq(said(r, "mark-max"), -28);
	ck_assert_int_eq(said(r, "mark-full"), -28);
	expect_mark(r, "s1", (const uint64_t[]){0x1000, 0x1100}, 1);
	expect_mark(r, "s1", (const uint64_t[]){0x8000000, 0x8000010}, 1);
	/*
	 * The table full, the spans hold every range given, in order: 512 a
	 * span (a reader's bound on an array of hex), spans in start order.
	 */
	ck_assert_uint_eq(count_named(r, "parameters"), 4 + 128);
	unsigned long long last = 0;
	for (uint64_t j = 0; j < 128; j++) {
		uint64_t base = 0x100000 + 0x20 * 512 * j;
		struct cgtrace_span s;
		const uint64_t *got;
		ck_assert_uint_eq(mark_at(r, base, &s, &got), 512);
		ck_assert(s.closed && s.duration_ns == 0 && !strcmp(s.parent_id, "s1"));
		ck_assert_uint_gt(strtoull(s.id + 1, NULL, 10), last);
		last = strtoull(s.id + 1, NULL, 10);
		for (uint64_t i = 0; i < 512; i++)
			ck_assert_msg(got[2 * i] == base + 0x20 * i && got[2 * i + 1] == got[2 * i] + 0x10,
			              "range %" PRIu64 ": [0x%" PRIx64 ", 0x%" PRIx64 ")", 512 * j + i,
			              got[2 * i], got[2 * i + 1]);
	}
}

START_TEST(test_updates)
{
	struct run *r = run_training("jsonl", false);
	check_updates(r);
	check_phases(r);
	check_marks(r);
	ck_assert_ptr_nonnull(strstr(r->trace_text, "\"cgprobe_parameters\":[\"0x1000\",\"0x100\"]"));
	ck_assert_ptr_nonnull(strstr(r->trace_text, "\"cgprobe_parameters\":[\"0x3000\",\"0x10\","
	                                            "\"0x5000\",\"0x20\",\"0x4000\",\"0x30\"]"));
	ck_assert_ptr_nonnull(strstr(r->trace_text, "\"name\":\"update\""));
	ck_assert_ptr_nonnull(strstr(r->trace_text, "\"cgprobe_update\":3"));
	ck_assert_ptr_nonnull(strstr(r->trace_text, "\"name\":\"data\""));
	ck_assert_ptr_nonnull(strstr(r->trace_text, "\"cgprobe_phase\":\"data\""));
	run_free(r);
	r = run_training("compact", false);
	check_updates(r);
	check_phases(r);
	check_marks(r);
	run_free(r);
}
END_TEST

/* The window of update 2: its span is the window's first, s2, closed inside it. */
START_TEST(test_updates_window)
{
	static const char *const formats[] = {"jsonl", "compact"};
	for (int f = 0; f < 2; f++) {
		struct run *r = run_training(formats[f], true);
		ck_assert_uint_eq(count_named(r, "update"), 1);
		struct cgtrace_span u = expect_update(r, 2, "s1");
		ck_assert_str_eq(u.id, "s2");
		expect_within(r, &u, "in-2");
		struct cgtrace_span s;
		ck_assert(!find_span(r, "in-1", &s) && !find_span(r, "between", &s));
		ck_assert(!find_span(r, "data", &s));
		/* Marks made outside the window went into the table alone. */
		check_marks_in_2(r);
		ck_assert_uint_eq(count_named(r, "parameters"), 2);
		run_free(r);
	}
}
END_TEST

START_TEST(test_updates_without_probe)
{
	struct run *r = run("steps-training", false, "jsonl", NULL);
	ck_assert_str_eq(r->stderr_text, "");
	ck_assert_int_eq(said(r, "update-1"), 0);
	ck_assert_int_eq(said(r, "update-end-none"), 0);
	run_free(r);
}
END_TEST

/* ------------------------------------------------------------------ */
/* The C API                                                           */
/* ------------------------------------------------------------------ */

struct id_start {
	uint64_t id, start;
};

static int by_id(const void *a, const void *b)
{
	const struct id_start *x = a, *y = b;
	return x->id < y->id ? -1 : x->id > y->id;
}

static void check_api_trace(const struct run *r)
{
	char *f = sid(said(r, "forward")), *lin = sid(said(r, "linear"));
	char *w = sid(said(r, "work")), *b = sid(said(r, "backward"));
	char *o = sid(said(r, "optimizer"));
	/* s2 is update 1's span, opened first. */
	ck_assert_int_eq(said(r, "forward"), 3);
	expect_span(r, "forward", "s1", CGTRACE_STEP_FORWARD, CGTRACE_SPAN_MODULE);
	expect_span(r, "linear", f, CGTRACE_STEP_NONE, CGTRACE_SPAN_OP);
	/* A thread's first span hangs under the root, whatever other threads have open. */
	expect_span(r, "work", "s1", CGTRACE_STEP_NONE, CGTRACE_SPAN_FUNCTION);
	expect_span(r, "backward", "s1", CGTRACE_STEP_BACKWARD, CGTRACE_SPAN_FUNCTION);
	struct cgtrace_span m, m2;
	/* The opening threads, named once each on their first span: main's is update 1's. */
	ck_assert(find_update(r, "update", 1, &m));
	ck_assert(find_span(r, "work", &m2));
	ck_assert(m.has_thread && m2.has_thread);
	ck_assert_uint_ne(m.thread, m2.thread);
	ck_assert_str_eq(m.thread_name, "trainer");
	ck_assert_str_eq(m2.thread_name, "loader");
	ck_assert(find_span(r, "backward", &m2));
	ck_assert(m2.has_thread && m2.thread == m.thread);
	ck_assert_ptr_null(m2.thread_name);
	ck_assert(find_span(r, "forward", &m2));
	ck_assert(m2.has_thread && m2.thread == m.thread);
	ck_assert_ptr_null(m2.thread_name);
	ck_assert(find_span(r, "measured", &m));
	ck_assert(m.measured);
	ck_assert(find_span(r, "forward", &m));
	ck_assert(!m.measured);

	expect_alloc(r, 1001, f, CGTRACE_CAT_ACTIVATION);
	expect_alloc(r, 1002, lin, CGTRACE_CAT_ACTIVATION);
	/* Another thread, no step of its own: forward open on main applies. */
	expect_alloc(r, 1003, "s1", CGTRACE_CAT_ACTIVATION);
	expect_alloc(r, 1004, w, CGTRACE_CAT_ACTIVATION);
	expect_alloc(r, 1005, "s1", CGTRACE_CAT_GRADIENT);
	expect_alloc(r, 1007, b, CGTRACE_CAT_GRADIENT);
	expect_alloc(r, 1006, o, CGTRACE_CAT_OPTIMIZER);
	expect_alloc(r, 1008, "s1", CGTRACE_CAT_OTHER);
	expect_alloc(r, 1010, "s1", CGTRACE_CAT_PARAMETER);

	struct cgtrace_memory_report *rep;
	ck_assert_int_eq(cgtrace_memory_analyze(r->doc, &rep), 0);
	/* Live activations when backward's first record came: 1001 + 1003 + 1004. */
	ck_assert_uint_eq(rep->autograd_retained_bytes, 3008);
	cgtrace_memory_report_free(rep);

	/* Ids in start order across threads (the racers' 8000 spans among them). */
	size_t n = cgtrace_doc_count(r->doc, CGTRACE_KIND_SPAN_START), races = 0;
	struct id_start *v = calloc(n, sizeof(*v));
	for (size_t i = 0; i < n; i++) {
		struct cgtrace_span s;
		cgtrace_doc_span(r->doc, i, &s);
		v[i] = (struct id_start){strtoull(s.id + 1, NULL, 10), s.start_ns};
		races += !strcmp(s.name, "race");
	}
	qsort(v, n, sizeof(*v), by_id);
	for (size_t i = 1; i < n; i++) {
		ck_assert_uint_gt(v[i].id, v[i - 1].id);
		ck_assert_msg(v[i].start >= v[i - 1].start, "s%" PRIu64 " starts before s%" PRIu64,
		              v[i].id, v[i - 1].id);
	}
	free(v);
	ck_assert_uint_eq(races, 8000);

	ck_assert_uint_eq(cgtrace_doc_count(r->doc, CGTRACE_KIND_GRADIENT), 2);
	struct cgtrace_gradient g;
	cgtrace_doc_gradient(r->doc, 0, &g);
	ck_assert_str_eq(g.root, "model");
	ck_assert_str_eq(g.key, "w1");
	ck_assert_int_eq(g.state, CGTRACE_GRAD_PRESENT);
	ck_assert(g.has_norm && g.norm == 1.5);
	cgtrace_doc_gradient(r->doc, 1, &g);
	ck_assert_str_eq(g.key, "w2");
	ck_assert_int_eq(g.state, CGTRACE_GRAD_MISSING);
	ck_assert(!g.has_norm);
	ck_assert_str_ne(g.event_id, "");

	ck_assert_uint_eq(cgtrace_doc_count(r->doc, CGTRACE_KIND_DEVICE_MEMORY), 2);
	struct cgtrace_device_memory d;
	cgtrace_doc_device_memory(r->doc, 0, &d);
	ck_assert_str_eq(d.device, "cuda:0");
	ck_assert_uint_eq(d.used_bytes, 100);
	ck_assert_uint_eq(d.free_bytes, 900);
	ck_assert(d.has_reserved && d.reserved_bytes == 500);
	ck_assert(d.has_allocated && d.cgprobe_allocated_bytes == 300);
	cgtrace_doc_device_memory(r->doc, 1, &d);
	ck_assert_str_eq(d.device, "cuda:1");
	ck_assert(!d.has_reserved && !d.has_allocated);
	free(f);
	free(lin);
	free(w);
	free(b);
	free(o);
}

static void check_api_results(const struct run *r)
{
	ck_assert_int_eq(said(r, "thread-name"), 0);
	ck_assert_int_eq(said(r, "update"), 1);
	ck_assert_int_eq(said(r, "gradient"), 0);
	ck_assert_int_eq(said(r, "checkpoint"), 0);
	ck_assert_int_eq(said(r, "end-outer-first"), -22);
	ck_assert_int_eq(said(r, "end-outer-again"), -22);
	ck_assert_int_eq(said(r, "end-inner"), 0);
	ck_assert_int_eq(said(r, "end-outer"), 0);
	ck_assert_int_eq(said(r, "end-none"), -22);
	ck_assert_int_eq(said(r, "update-end"), 0);
	ck_assert_int_eq(said(r, "update-end-again"), -22);
	ck_assert_int_eq(said(r, "update-2"), 2);
	ck_assert_int_eq(said(r, "update-2-end"), 0);
	ck_assert_int_eq(said(r, "mark"), 0);
	ck_assert_int_eq(said(r, "mark-empty"), -22);
	ck_assert_int_eq(said(r, "flush"), 0);
	/* Three bad ends, one line. */
	ck_assert_str_eq(r->stderr_text, "cgprobe: a span ended that is not its thread's innermost "
	                                 "open span; such ends are ignored (warned once)\n");
}

/* Memory per training update of a run's trace (docs/steps.md), as cgtrace steps reads it. */
static struct cgtrace_steps *steps_of(const struct run *r)
{
	char err[1024];
	const struct cgtrace_steps_options o = {.warmup = 1, .phases = true};
	struct cgtrace_steps *st = NULL;
	ck_assert_msg(cgtrace_steps_read(r->trace_path, NULL, 0, &o, &st, err, sizeof(err)) == 0,
	              "%s", err);
	return st;
}

/* The C API alone: the updates it marks, the first one's steps as its phases. */
static void check_api_steps(const struct run *r)
{
	struct cgtrace_steps *st = steps_of(r);
	ck_assert_int_eq(st->from, CGTRACE_UPDATES_MARKED);
	ck_assert_uint_eq(st->updates, 2);
	ck_assert_uint_eq(st->rows[0].update, (uint64_t)said(r, "update"));
	bool second = false;
	for (size_t i = 1; i < st->n_rows; i++)
		second |= !st->rows[i].is_phase && st->rows[i].update == (uint64_t)said(r, "update-2");
	ck_assert(second);
	const char *want[] = {"forward", "backward", "optimizer"};
	for (size_t k = 0; k < 3; k++) {
		bool seen = false;
		for (size_t i = 1; i < st->n_rows; i++)
			seen |= st->rows[i].phase && !strcmp(st->rows[i].phase, want[k]);
		ck_assert_msg(seen, "no %s row in update 1", want[k]);
	}
	ck_assert_uint_gt(st->figures[0][0].allocs, 0);
	cgtrace_steps_free(st);
}

START_TEST(test_api_jsonl)
{
	struct run *r = run("steps-api", true, "jsonl", NULL);
	check_api_results(r);
	check_api_trace(r);
	/* The opening thread on each span; names once per thread, the program's or set. */
	ck_assert_ptr_nonnull(strstr(r->trace_text, "\"name\":\"forward\""));
	ck_assert_ptr_nonnull(strstr(r->trace_text, "\"cgprobe_thread_name\":\"trainer\""));
	ck_assert_ptr_nonnull(strstr(r->trace_text, "\"cgprobe_thread_name\":\"loader\""));
	ck_assert_ptr_null(strstr(strstr(r->trace_text, "\"cgprobe_thread_name\":\"trainer\"") + 1,
	                          "\"cgprobe_thread_name\":\"trainer\""));
	ck_assert_ptr_nonnull(strstr(r->trace_text, "\"cgprobe_allocated_bytes\":300"));
	const char *fwd = strstr(r->trace_text, "\"name\":\"forward\"");
	const char *work = strstr(r->trace_text, "\"name\":\"work\"");
	const char *t1 = strstr(fwd, "\"cgprobe_thread\":"),
	           *t2 = strstr(work, "\"cgprobe_thread\":");
	ck_assert_ptr_nonnull(t1);
	ck_assert_ptr_nonnull(t2);
	ck_assert_uint_gt(strtoull(t1 + 17, NULL, 10), 0);
	ck_assert_uint_ne(strtoull(t1 + 17, NULL, 10), strtoull(t2 + 17, NULL, 10));
	run_free(r);
}
END_TEST

START_TEST(test_api_compact)
{
	struct run *r = run("steps-api", true, "compact", NULL);
	check_api_results(r);
	check_api_trace(r);
	check_api_steps(r);
	run_free(r);
}
END_TEST

START_TEST(test_api_without_probe)
{
	struct run *r = run("steps-api", false, "jsonl", NULL);
	ck_assert_str_eq(r->stderr_text, "");
	ck_assert_int_eq(said(r, "forward"), 0);
	ck_assert_int_eq(said(r, "update"), 0);
	ck_assert_int_eq(said(r, "end-outer-first"), 0);
	ck_assert_int_eq(said(r, "done"), 0);
	run_free(r);
}
END_TEST

TEST_SUITE(api_suite, "steps-api")
{
	test_case(s, "api", 60, test_api_jsonl, test_api_compact, test_api_without_probe);
	test_case(s, "training", 60, test_updates, test_updates_window, test_updates_without_probe);
}

/* ------------------------------------------------------------------ */
/* NVTX ranges                                                         */
/* ------------------------------------------------------------------ */

static const char *span_id_of(const struct run *r, const char *name)
{
	static struct cgtrace_span s;
	ck_assert_msg(find_span(r, name, &s), "no span %s", name);
	return s.id;
}

static const char *tag(const struct run *r, const char *key)
{
	struct cgtrace_meta m;
	cgtrace_doc_meta(r->doc, &m);
	for (size_t i = 0; i < m.n_tags; i++)
		if (!strcmp(m.tags[i].key, key))
			return m.tags[i].value;
	return NULL;
}

static struct run *run_nvtx(const char *prog, const char *format, const char *steps)
{
	char *inject = strf("NVTX_INJECTION64_PATH=%s", probe);
	const char *extra[] = {inject, steps, NULL};
	struct run *r = run(prog, true, format, extra);
	free(inject);
	ck_assert_str_eq(r->stderr_text, "");
	return r;
}

static void check_nvtx(const struct run *r)
{
	expect_span(r, "model.forward", "s1", CGTRACE_STEP_FORWARD, CGTRACE_SPAN_FUNCTION);
	char *fwd = strf("%s", span_id_of(r, "model.forward"));
	expect_span(r, "lin\u00e9aire", fwd, CGTRACE_STEP_NONE, CGTRACE_SPAN_FUNCTION);
	expect_span(r, "loss.backward", "s1", CGTRACE_STEP_BACKWARD, CGTRACE_SPAN_FUNCTION);
	/* Started on main, ended on the helper thread. */
	expect_span(r, "optimizer", "s1", CGTRACE_STEP_OPTIMIZER, CGTRACE_SPAN_FUNCTION);
	expect_span(r, "Optimizer.step#SGD.step", "s1", CGTRACE_STEP_OPTIMIZER,
	            CGTRACE_SPAN_FUNCTION);
	expect_span(r, "registered", "s1", CGTRACE_STEP_NONE, CGTRACE_SPAN_FUNCTION);
	expect_span(r, "epoch", "s1", CGTRACE_STEP_NONE, CGTRACE_SPAN_FUNCTION);

	expect_alloc(r, 2001, fwd, CGTRACE_CAT_ACTIVATION);
	expect_alloc(r, 2002, span_id_of(r, "lin\u00e9aire"), CGTRACE_CAT_ACTIVATION);
	expect_alloc(r, 2003, "s1", CGTRACE_CAT_GRADIENT);
	expect_alloc(r, 2004, "s1", CGTRACE_CAT_OPTIMIZER);
	expect_alloc(r, 2005, "s1", CGTRACE_CAT_OTHER);
	expect_alloc(r, 2006, span_id_of(r, "Optimizer.step#SGD.step"), CGTRACE_CAT_OPTIMIZER);
	expect_alloc(r, 2007, "s1", CGTRACE_CAT_OTHER);
	free(fwd);
}

/* NVTX ranges alone, no update range: one update inferred from its forward step. */
static void check_nvtx_steps(const struct run *r)
{
	struct cgtrace_steps *st = steps_of(r);
	ck_assert_int_eq(st->from, CGTRACE_UPDATES_INFERRED);
	ck_assert_uint_eq(st->updates, 1);
	bool backward = false;
	for (size_t i = 1; i < st->n_rows; i++)
		backward |= st->rows[i].phase && !strcmp(st->rows[i].phase, "backward");
	ck_assert(backward);
	cgtrace_steps_free(st);
}

START_TEST(test_nvtx_ranges)
{
	struct run *r = run_nvtx("steps-nvtx", "jsonl", NULL);
	check_nvtx(r);
	check_nvtx_steps(r);
	ck_assert_ptr_nonnull(tag(r, "cgprobe_steps"));
	ck_assert_ptr_nonnull(strstr(tag(r, "cgprobe_steps"), "backward=*backward*"));
	run_free(r);
	r = run_nvtx("steps-nvtx", "compact", NULL);
	check_nvtx(r);
	run_free(r);
}
END_TEST

START_TEST(test_nvtx_steps_option)
{
	struct run *r = run_nvtx("steps-nvtx", "jsonl", "CGPROBE_STEPS=backward=model.*:optimizer=Opt*");
	ck_assert_str_eq(tag(r, "cgprobe_steps"), "backward=model.*:optimizer=Opt*");
	expect_span(r, "model.forward", "s1", CGTRACE_STEP_BACKWARD, CGTRACE_SPAN_FUNCTION);
	expect_span(r, "loss.backward", "s1", CGTRACE_STEP_NONE, CGTRACE_SPAN_FUNCTION);
	expect_alloc(r, 2001, NULL, CGTRACE_CAT_GRADIENT);
	expect_alloc(r, 2006, NULL, CGTRACE_CAT_OPTIMIZER);
	run_free(r);

	/* Another name is a phase: every range is one, and no step. */
	r = run_nvtx("steps-nvtx", "jsonl", "CGPROBE_STEPS=sideways=*");
	ck_assert_str_eq(tag(r, "cgprobe_steps"), "sideways=*");
	struct cgtrace_span s;
	ck_assert_str_eq(phase_of(r, "model.forward", &s), "sideways");
	ck_assert_int_eq(s.step, CGTRACE_STEP_NONE);
	expect_alloc(r, 2001, NULL, CGTRACE_CAT_OTHER);
	run_free(r);

	/* Mappings that do not parse: one warning each, the default. */
	static const char *const bad[] = {
	    "CGPROBE_STEPS=side/ways=*",
	    "CGPROBE_STEPS=a-phase-name-of-thirty-two-bytes=*",
	    "CGPROBE_STEPS==*",
	};
	char *inject = strf("NVTX_INJECTION64_PATH=%s", probe);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *extra[] = {inject, bad[i], NULL};
		r = run("steps-nvtx", true, "jsonl", extra);
		char *want = strf("%s is not", bad[i]);
		ck_assert_msg(strstr(r->stderr_text, want), "%s: stderr %s", bad[i], r->stderr_text);
		free(want);
		check_nvtx(r);
		run_free(r);
	}
	free(inject);
}
END_TEST

/* Under the probe without the injection, and with neither: ranges are no spans. */
START_TEST(test_nvtx_without_injection)
{
	struct run *r = run("steps-nvtx", true, "jsonl", NULL);
	ck_assert_uint_eq(cgtrace_doc_count(r->doc, CGTRACE_KIND_SPAN_START), 1);
	expect_alloc(r, 2001, "s1", CGTRACE_CAT_OTHER);
	expect_alloc(r, 2003, "s1", CGTRACE_CAT_OTHER);
	run_free(r);
	r = run("steps-nvtx", false, "jsonl", NULL);
	ck_assert_str_eq(r->stderr_text, "");
	ck_assert_int_eq(said(r, "done"), 0);
	run_free(r);
}
END_TEST

/* Updates from ranges and the API together: each counted once, on the span that began it. */
static void check_nvtx_updates(const struct run *r)
{
	ck_assert_int_eq(said(r, "api-in-1"), 1);
	ck_assert_int_eq(said(r, "api-in-1-end"), 0);
	ck_assert_int_eq(said(r, "api-3"), 3);
	ck_assert_int_eq(said(r, "api-3-end"), 0);
	ck_assert_int_eq(said(r, "api-5"), 5);
	ck_assert_int_eq(said(r, "api-5-end"), 0);
	ck_assert_int_eq(said(r, "api-end-none"), -22);
	size_t k = cgtrace_doc_count(r->doc, CGTRACE_KIND_SPAN_START), with = 0;
	for (size_t i = 0; i < k; i++) {
		uint64_t u;
		cgtrace_doc_span_training(r->doc, i, &u, NULL);
		with += u != 0;
	}
	ck_assert_uint_eq(with, 5);
	static const char *const began[] = {NULL,     "ProfilerStep#1", "ProfilerStep#2",
	                                    "update", "train_batch",    "update"};
	struct cgtrace_span u[6], s;
	for (uint64_t n = 1; n <= 5; n++) {
		ck_assert_msg(find_update(r, began[n], n, &u[n]), "update %" PRIu64 " not on %s", n,
		              began[n]);
		ck_assert(u[n].closed);
	}
	/* The ranges that joined an open update carry no number. */
	ck_assert(find_update(r, "train_step", 0, &s) && find_update(r, "optimizer_step", 0, &s));
	expect_within(r, &u[1], "in-1");
	expect_within(r, &u[2], "in-2");
	expect_within(r, &u[2], "train_step");
	expect_within(r, &u[3], "optimizer_step");
	expect_within(r, &u[4], "in-4");
}

#define DATA_LOADER "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"

START_TEST(test_nvtx_training)
{
	static const char *const formats[] = {"jsonl", "compact"};
	for (int f = 0; f < 2; f++) {
		struct run *r = run_nvtx("steps-nvtx-training", formats[f], NULL);
		check_nvtx_updates(r);
		/* The default's last rule: PyTorch's DataLoader ranges are the phase data. */
		struct cgtrace_span s;
		ck_assert_str_eq(phase_of(r, DATA_LOADER, &s), "data");
		ck_assert_int_eq(s.step, CGTRACE_STEP_NONE);
		expect_alloc(r, 5001, s.id, CGTRACE_CAT_OTHER);
		ck_assert_ptr_null(phase_of(r, "load.batch", &s));
		const char *steps = tag(r, "cgprobe_steps");
		ck_assert_ptr_nonnull(steps);
		size_t n = strlen(steps);
		ck_assert(n > 18 && !strcmp(steps + n - 18, ":data=*DataLoader*"));
		if (f == 0)
			ck_assert_ptr_nonnull(strstr(r->trace_text, "\"cgprobe_phase\":\"data\""));
		run_free(r);
	}
}
END_TEST

/* A phase of the program's own in CGPROBE_STEPS: its ranges carry it, and no step. */
START_TEST(test_nvtx_phase_rule)
{
	struct run *r = run_nvtx("steps-nvtx-training", "compact",
	                         "CGPROBE_STEPS=io=load.*:optimizer=optimizer_step");
	check_nvtx_updates(r);
	ck_assert_str_eq(tag(r, "cgprobe_steps"), "io=load.*:optimizer=optimizer_step");
	struct cgtrace_span s;
	ck_assert_str_eq(phase_of(r, "load.batch", &s), "io");
	ck_assert_int_eq(s.step, CGTRACE_STEP_NONE);
	ck_assert_ptr_null(phase_of(r, DATA_LOADER, &s));
	ck_assert_ptr_null(phase_of(r, "optimizer_step", &s));
	ck_assert_int_eq(s.step, CGTRACE_STEP_OPTIMIZER);
	run_free(r);
}
END_TEST

TEST_SUITE(nvtx_suite, "steps-nvtx")
{
	test_case(s, "nvtx", 60, test_nvtx_ranges, test_nvtx_steps_option,
	          test_nvtx_without_injection);
	test_case(s, "nvtx-training", 60, test_nvtx_training, test_nvtx_phase_rule);
}

static int steps_setup(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	probe = getenv("STEPS_TEST_PROBE");
	bin = getenv("STEPS_TEST_BIN");
	if (!probe || !bin) {
		fprintf(stderr, "STEPS_TEST_PROBE and STEPS_TEST_BIN must be set\n");
		return 1;
	}
	const char *only = getenv("CK_RUN_SUITE");
	if (only && !strcmp(only, "steps-nvtx") && !getenv("STEPS_TEST_NVTX")) {
		fprintf(stderr, "no NVTX headers (nvtx3/nvToolsExt.h): skipped\n");
		return 77;
	}
	return TEST_GO_ON;
}

TEST_MAIN_SETUP(steps_setup, api_suite, nvtx_suite);
