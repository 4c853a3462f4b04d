/* SPDX-License-Identifier: MIT */
/*
 * Memory per training update, as the reader tells it (docs/steps.md):
 * updates marked (cgprobe_update) or inferred from forward steps, phases,
 * each row's figures, the trend, growth, parameter marks turning live
 * memory into parameter from the mark on, where the peak fell, and the
 * rules on the new fields. Streamed and full reads agree.
 */
#include <math.h>
#include <unistd.h>

#include "memory_replay.h"
#include "memory_stream.h"
#include "steps.h"
#include "stream_window.h"
#include "test-gen.h"
#include "test-main.h"
#include "test-util.h"

/* ---- trace text ---- */

static void meta(struct text *t)
{
	put(t, "%s", META_LINE);
	put(t, "{\"kind\":\"span_start\",\"id\":\"s1\",\"name\":\"e\",\"start_ns\":0,"
	       "\"span_kind\":\"function\",\"measured\":false}\n");
}

/* A span start; extra: more members, ",\"step\":\"forward\"" and the like. */
static void start(struct text *t, const char *id, uint64_t ts, const char *extra)
{
	put(t, "{\"kind\":\"span_start\",\"id\":\"%s\",\"parent_id\":\"s1\",\"name\":\"%s\","
	       "\"start_ns\":%llu,\"span_kind\":\"function\",\"measured\":false%s}\n",
	    id, id, (unsigned long long)ts, extra);
}

static void end(struct text *t, const char *id, uint64_t start_ns, uint64_t ts)
{
	put(t, "{\"kind\":\"span_end\",\"id\":\"%s\",\"duration_ns\":%llu}\n", id,
	    (unsigned long long)(ts - start_ns));
}

/* A memory record of address addr; stack: 0, or a one-frame stack id defined here or before. */
static void mem(struct text *t, uint64_t ts, uint64_t addr, uint64_t bytes, bool alloc,
		const char *cat, const char *device, uint64_t stack, bool define)
{
	put(t, "{\"kind\":\"memory\",\"timestamp_ns\":%llu,\"tensor_id\":\"0x%llx\","
	       "\"span_id\":\"s1\",\"device\":\"%s\",\"bytes\":%llu,\"action\":\"%s\","
	       "\"dtype\":\"u8\",\"category\":\"%s\"",
	    (unsigned long long)ts, (unsigned long long)addr, device, (unsigned long long)bytes,
	    alloc ? "alloc" : "free", cat);
	if (stack)
		put(t, ",\"cgprobe_stack\":%llu", (unsigned long long)stack);
	if (stack && define)
		put(t, ",\"cgprobe_stack_frames\":[\"0x%llx\"]", 0x401000ull + stack * 16);
	put(t, "}\n");
}

static void alloc(struct text *t, uint64_t ts, uint64_t addr, uint64_t bytes, const char *cat)
{
	mem(t, ts, addr, bytes, true, cat, "cpu", 0, false);
}

static void release(struct text *t, uint64_t ts, uint64_t addr, uint64_t bytes)
{
	mem(t, ts, addr, bytes, false, "other", "cpu", 0, false);
}

/* One update of forward, backward, optimizer from t0: 100 ns each, 10 ns apart. */
static void update(struct text *t, int n, uint64_t t0, bool marked, uint64_t leak)
{
	char id[32], f[32], b[32], o[32], extra[64];
	snprintf(id, sizeof(id), "u%d", n);
	snprintf(f, sizeof(f), "f%d", n);
	snprintf(b, sizeof(b), "b%d", n);
	snprintf(o, sizeof(o), "o%d", n);
	snprintf(extra, sizeof(extra), ",\"cgprobe_update\":%d", n);
	if (marked)
		start(t, id, t0, extra);
	start(t, f, t0 + 10, ",\"step\":\"forward\"");
	alloc(t, t0 + 20, 0x100000, 4000, "activation"); /* freed in backward */
	if (leak)
		alloc(t, t0 + 30, 0x900000 + (uint64_t)n * 0x1000, leak, "activation");
	end(t, f, t0 + 10, t0 + 110);
	start(t, b, t0 + 120, ",\"step\":\"backward\"");
	alloc(t, t0 + 130, 0x200000, 2000, "gradient");
	release(t, t0 + 140, 0x100000, 4000);
	end(t, b, t0 + 120, t0 + 220);
	start(t, o, t0 + 230, ",\"step\":\"optimizer\"");
	release(t, t0 + 240, 0x200000, 2000);
	end(t, o, t0 + 230, t0 + 330);
	if (marked)
		end(t, id, t0, t0 + 340);
}

/* ---- reading ---- */

static char *write_trace(const struct text *t)
{
	char *path = strdup("/tmp/cg-updates-XXXXXX");
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, t->p, t->len), (ssize_t)t->len);
	close(fd);
	return path;
}

static struct cgtrace_steps *steps_of(const struct text *t, uint64_t warmup, bool phases,
				      bool growth, struct warn_log *w)
{
	char *path = write_trace(t), err[1024];
	const struct cgtrace_steps_options o = {.warmup = warmup, .phases = phases,
						.growth = growth};
	const struct cgtrace_read_options ro = {.warn = test_warn, .user = w};
	struct cgtrace_steps *st = NULL;
	int r = cgtrace_steps_read(path, w ? &ro : NULL, 0, &o, &st, err, sizeof(err));
	unlink(path);
	free(path);
	ck_assert_msg(r == 0, "steps: %s", err);
	return st;
}

/* The report's strings are its document's: the last one read is kept until the next. */
static struct cgtrace_doc *report_doc;

static void report_done(struct cgtrace_memory_report *rep)
{
	cgtrace_memory_report_free(rep);
	cgtrace_doc_free(report_doc);
	report_doc = NULL;
}

static struct cgtrace_memory_report *report_of(const struct text *t)
{
	char err[1024];
	struct cgtrace_doc *d = NULL;
	ck_assert_msg(cgtrace_doc_read_mem_flags("t.jsonl", t->p, t->len, NULL,
						 CGTRACE_READ_STREAM_MEMORY, &d, err,
						 sizeof(err)) == 0,
		      "%s", err);
	struct cgtrace_memory_report *rep = NULL;
	ck_assert_int_eq(cgtrace_memory_analyze(d, &rep), 0);
	report_doc = d;
	return rep;
}

static const struct cgtrace_step_row *row(const struct cgtrace_steps *st, size_t i)
{
	ck_assert_uint_lt(i, st->n_rows);
	return &st->rows[i];
}

static const struct cgtrace_step_figures *fig(const struct cgtrace_steps *st, size_t i)
{
	return &st->figures[0][i];
}

/* ---- updates ---- */

START_TEST(marked_rows)
{
	struct text t = {0};
	meta(&t);
	alloc(&t, 5, 0x10, 1000, "other");
	for (int n = 1; n <= 3; n++)
		update(&t, n, (uint64_t)n * 1000, true, 0);
	struct cgtrace_steps *st = steps_of(&t, 1, false, false, NULL);
	ck_assert_int_eq(st->from, CGTRACE_UPDATES_MARKED);
	ck_assert_uint_eq(st->updates, 3);
	ck_assert_uint_eq(st->n_rows, 3);
	ck_assert_uint_eq(st->n_devices, 1);
	ck_assert_str_eq(st->devices[0], "cpu");
	for (size_t i = 0; i < 3; i++) {
		const struct cgtrace_step_row *r = row(st, i);
		const struct cgtrace_step_figures *f = fig(st, i);
		ck_assert_uint_eq(r->update, i + 1);
		ck_assert(!r->is_phase && !r->open);
		ck_assert(r->warmup == (i == 0));
		ck_assert_uint_eq(r->start_ns, (i + 1) * 1000);
		ck_assert_uint_eq(r->end_ns, (i + 1) * 1000 + 340);
		ck_assert_uint_eq(f->start_bytes, 1000);
		ck_assert_uint_eq(f->end_bytes, 1000);
		/* 1000 + 4000 activation + 2000 gradient, at the gradient's alloc. */
		ck_assert_uint_eq(f->peak_bytes, 7000);
		ck_assert_uint_eq(f->peak_ns, (i + 1) * 1000 + 130);
		ck_assert_uint_eq(f->allocs, 2);
		ck_assert_uint_eq(f->peak_by_category[CGTRACE_CAT_ACTIVATION], 4000);
		ck_assert_uint_eq(f->peak_by_category[CGTRACE_CAT_GRADIENT], 2000);
		ck_assert_uint_eq(f->peak_by_category[CGTRACE_CAT_OTHER], 1000);
	}
	ck_assert_uint_eq(st->trends[0].fitted, 2);
	ck_assert(st->trends[0].steady);
	cgtrace_steps_free(st);
	free(t.p);
}
END_TEST

START_TEST(inferred_rows)
{
	struct text t = {0};
	meta(&t);
	for (int n = 1; n <= 3; n++)
		update(&t, n, (uint64_t)n * 1000, false, 0);
	/* After the last optimizer: teardown, which is no update's. */
	alloc(&t, 5000, 0x50, 99999, "other");
	struct cgtrace_steps *st = steps_of(&t, 1, false, false, NULL);
	ck_assert_int_eq(st->from, CGTRACE_UPDATES_INFERRED);
	ck_assert_uint_eq(st->n_rows, 3);
	/* One forward step to the next: update 1 runs into update 2's start. */
	ck_assert_uint_eq(row(st, 0)->start_ns, 1010);
	ck_assert_uint_eq(row(st, 0)->end_ns, 2010);
	/* The last ends when its optimizer ends, the teardown left out. */
	ck_assert_uint_eq(row(st, 2)->end_ns, 3330);
	ck_assert(!row(st, 2)->open);
	ck_assert_uint_eq(fig(st, 2)->peak_bytes, 6000);
	ck_assert_uint_eq(fig(st, 2)->end_bytes, 0);
	ck_assert_uint_eq(fig(st, 2)->allocs, 2);
	/* The teardown's peak is after the last update. */
	struct cgtrace_memory_report *rep = report_of(&t);
	ck_assert_uint_eq(rep->update_count, 3);
	ck_assert_uint_eq(rep->peak_timestamp_ns, 5000);
	ck_assert(rep->peak_moment.inferred);
	ck_assert_uint_eq(rep->peak_moment.update, 0);
	ck_assert_uint_eq(rep->peak_moment.after, 3);
	ck_assert_ptr_null(rep->peak_moment.phase);
	report_done(rep);
	cgtrace_steps_free(st);
	free(t.p);
}
END_TEST

START_TEST(peak_moment)
{
	struct text t = {0};
	meta(&t);
	update(&t, 1, 1000, true, 0);
	update(&t, 2, 2000, true, 0);
	/* Update 2's backward makes the peak: 4000 activation + 5000. */
	alloc(&t, 2125, 0x777000, 5000, "gradient");
	release(&t, 2126, 0x777000, 5000);
	struct cgtrace_memory_report *rep = report_of(&t);
	ck_assert_uint_eq(rep->peak_bytes, 9000);
	ck_assert_uint_eq(rep->peak_timestamp_ns, 2125);
	ck_assert_uint_eq(rep->update_count, 2);
	ck_assert(!rep->peak_moment.inferred);
	ck_assert_uint_eq(rep->peak_moment.update, 2);
	ck_assert_str_eq(rep->peak_moment.phase, "backward");
	ck_assert_uint_eq(rep->device_moments[0].update, 2);
	report_done(rep);
	free(t.p);
}
END_TEST

START_TEST(marked_in_sequence)
{
	struct text t = {0};
	meta(&t);
	/* Update 2 begins while 1 is open: 1 ends there, its own end later says nothing. */
	start(&t, "u1", 100, ",\"cgprobe_update\":1");
	alloc(&t, 150, 0x10, 100, "other");
	start(&t, "u2", 200, ",\"cgprobe_update\":2");
	alloc(&t, 250, 0x20, 100, "other");
	end(&t, "u1", 100, 300);
	alloc(&t, 350, 0x30, 100, "other");
	end(&t, "u2", 200, 400);
	struct cgtrace_steps *st = steps_of(&t, 0, false, false, NULL);
	ck_assert_uint_eq(st->n_rows, 2);
	ck_assert_uint_eq(row(st, 0)->end_ns, 200);
	ck_assert_uint_eq(fig(st, 0)->allocs, 1);
	ck_assert_uint_eq(fig(st, 1)->allocs, 2);
	ck_assert_uint_eq(fig(st, 1)->end_bytes, 300);
	cgtrace_steps_free(st);
	free(t.p);
}
END_TEST

START_TEST(open_update)
{
	struct text t = {0};
	meta(&t);
	update(&t, 1, 1000, true, 0);
	start(&t, "u2", 2000, ",\"cgprobe_update\":2");
	alloc(&t, 2050, 0x10, 100, "other");
	/* The process died: the update and the trace end here. */
	struct cgtrace_steps *st = steps_of(&t, 0, false, false, NULL);
	ck_assert_uint_eq(st->n_rows, 2);
	ck_assert(row(st, 1)->open);
	ck_assert_uint_eq(row(st, 1)->end_ns, 2050);
	ck_assert_uint_eq(fig(st, 1)->end_bytes, 100);
	/* An open update is not fitted. */
	ck_assert_uint_eq(st->trends[0].fitted, 1);
	cgtrace_steps_free(st);
	free(t.p);
}
END_TEST

START_TEST(no_updates)
{
	struct text t = {0};
	meta(&t);
	alloc(&t, 10, 0x10, 100, "other");
	start(&t, "x", 20, ",\"step\":\"backward\"");
	end(&t, "x", 20, 30);
	struct cgtrace_steps *st = steps_of(&t, 1, true, true, NULL);
	ck_assert_int_eq(st->from, CGTRACE_UPDATES_NONE);
	ck_assert_uint_eq(st->n_rows, 0);
	ck_assert_uint_eq(st->n_growth, 0);
	cgtrace_steps_free(st);
	struct cgtrace_memory_report *rep = report_of(&t);
	ck_assert_uint_eq(rep->update_count, 0);
	ck_assert_uint_eq(rep->peak_moment.update, 0);
	report_done(rep);
	free(t.p);
}
END_TEST

/* ---- phases ---- */

START_TEST(phase_rows)
{
	struct text t = {0};
	meta(&t);
	start(&t, "u1", 1000, ",\"cgprobe_update\":1");
	start(&t, "d1", 1005, ",\"cgprobe_phase\":\"data\"");
	alloc(&t, 1006, 0x500, 300, "other");
	end(&t, "d1", 1005, 1009);
	update(&t, 99, 1000, false, 0); /* forward, backward, optimizer from 1010 */
	alloc(&t, 1335, 0x600, 50, "other"); /* after the optimizer: in no phase */
	end(&t, "u1", 1000, 1340);
	struct cgtrace_steps *st = steps_of(&t, 0, true, false, NULL);
	ck_assert_uint_eq(st->updates, 1);
	const char *want[] = {NULL, "data", "forward", "backward", "optimizer"};
	ck_assert_uint_eq(st->n_rows, 1 + 5);
	ck_assert(!row(st, 0)->is_phase);
	ck_assert_uint_eq(fig(st, 0)->allocs, 4);
	/* Phase rows in the order each first began; no phase's first (at the update's start). */
	for (size_t i = 0; i < 5; i++) {
		const struct cgtrace_step_row *r = row(st, 1 + i);
		ck_assert(r->is_phase);
		ck_assert_uint_eq(r->update_row, 0);
		if (want[i])
			ck_assert_str_eq(r->phase, want[i]);
		else
			ck_assert_ptr_null(r->phase);
	}
	/* No phase: [1000, 1005), [1009, 1010), [1110, 1120), [1220, 1230), [1330, 1340). */
	ck_assert_uint_eq(row(st, 1)->time_ns, 5 + 1 + 10 + 10 + 10);
	ck_assert_uint_eq(fig(st, 1)->allocs, 1);
	ck_assert_uint_eq(row(st, 2)->time_ns, 4);
	ck_assert_uint_eq(fig(st, 2)->allocs, 1);
	ck_assert_uint_eq(fig(st, 2)->peak_bytes, 300);
	ck_assert_uint_eq(row(st, 3)->time_ns, 100);
	ck_assert_uint_eq(fig(st, 3)->start_bytes, 300);
	ck_assert_uint_eq(fig(st, 3)->peak_bytes, 4300);
	ck_assert_uint_eq(fig(st, 4)->peak_bytes, 6300);
	ck_assert_uint_eq(fig(st, 5)->end_bytes, 300);
	cgtrace_steps_free(st);
	free(t.p);
}
END_TEST

/* ---- trend and growth ---- */

START_TEST(trend_slope)
{
	struct text t = {0};
	meta(&t);
	for (int n = 1; n <= 10; n++)
		update(&t, n, (uint64_t)n * 1000, true, 1025);
	struct cgtrace_steps *st = steps_of(&t, 1, false, false, NULL);
	ck_assert_uint_eq(st->trends[0].fitted, 9);
	/* Steady is at most 1 KiB an update. */
	ck_assert(!st->trends[0].steady);
	ck_assert_msg(fabs(st->trends[0].bytes_per_update - 1025) < 1e-6, "slope %f",
		      st->trends[0].bytes_per_update);
	cgtrace_steps_free(st);
	free(t.p);

	struct text u = {0};
	meta(&u);
	for (int n = 1; n <= 10; n++)
		update(&u, n, (uint64_t)n * 1000, true, 1024);
	st = steps_of(&u, 1, false, false, NULL);
	ck_assert(st->trends[0].steady);
	cgtrace_steps_free(st);
	free(u.p);
}
END_TEST

START_TEST(growth_outlives)
{
	struct text t = {0};
	meta(&t);
	for (int n = 1; n <= 6; n++) {
		uint64_t t0 = (uint64_t)n * 1000;
		char id[16], extra[48];
		snprintf(id, sizeof(id), "u%d", n);
		snprintf(extra, sizeof(extra), ",\"cgprobe_update\":%d", n);
		start(&t, id, t0 + 1, extra);
		/* The leak: stack 1, kept until after the last update. */
		mem(&t, t0 + 10, 0x100000 + (uint64_t)n * 0x1000, 512, true, "other", "cpu", 1,
		    n == 1);
		/* A scratch buffer of update 3, freed in update 4: it outlived its own update only. */
		if (n == 3)
			mem(&t, t0 + 20, 0x800000, 1 << 20, true, "other", "cpu", 2, true);
		if (n == 4)
			release(&t, t0 + 20, 0x800000, 1 << 20);
		/* A temporary of every update, stack 3. */
		mem(&t, t0 + 30, 0x900000, 64, true, "other", "cpu", 3, n == 1);
		release(&t, t0 + 40, 0x900000, 64);
		end(&t, id, t0 + 1, t0 + 500);
		/* After the update, before the next: the loop's own list, stack 4, is its update's. */
		mem(&t, t0 + 600, 0x300000 + (uint64_t)n * 0x1000, 256, true, "other", "cpu", 4,
		    n == 1);
	}
	/* At exit: the leaks go. */
	for (int n = 1; n <= 6; n++) {
		release(&t, 9000 + (uint64_t)n, 0x100000 + (uint64_t)n * 0x1000, 512);
		release(&t, 9100 + (uint64_t)n, 0x300000 + (uint64_t)n * 0x1000, 256);
	}
	struct cgtrace_steps *st = steps_of(&t, 1, false, true, NULL);
	ck_assert(st->has_growth);
	/* Updates 2 to 5: after warm-up, before the last; by update, then stack. */
	ck_assert_uint_eq(st->n_growth, 8);
	for (size_t i = 0; i < 8; i++) {
		ck_assert_uint_eq(st->growth[i].update, i / 2 + 2);
		ck_assert_uint_eq(st->growth[i].stack_id, i % 2 ? 4 : 1);
		ck_assert_uint_eq(st->growth[i].bytes, i % 2 ? 256 : 512);
		ck_assert_uint_eq(st->growth[i].count, 1);
		ck_assert_str_eq(st->growth[i].device, "cpu");
	}
	cgtrace_steps_free(st);
	/* Warm-up 0: update 1's too. */
	st = steps_of(&t, 0, false, true, NULL);
	ck_assert_uint_eq(st->n_growth, 10);
	ck_assert_uint_eq(st->growth[0].update, 1);
	cgtrace_steps_free(st);
	free(t.p);
}
END_TEST

START_TEST(growth_still_live)
{
	struct text t = {0};
	meta(&t);
	for (int n = 1; n <= 4; n++)
		update(&t, n, (uint64_t)n * 1000, false, 100);
	/* Never freed: inferred updates, the leaks of 2 and 3 (1 is warm-up, 4 the last). */
	struct cgtrace_steps *st = steps_of(&t, 1, false, true, NULL);
	ck_assert_int_eq(st->from, CGTRACE_UPDATES_INFERRED);
	ck_assert_uint_eq(st->n_growth, 2);
	ck_assert_uint_eq(st->growth[0].update, 2);
	ck_assert_uint_eq(st->growth[1].update, 3);
	ck_assert_uint_eq(st->growth[0].stack_id, 0);
	cgtrace_steps_free(st);
	free(t.p);
}
END_TEST

/* ---- parameter marks ---- */

static void mark(struct text *t, const char *id, uint64_t ts, uint64_t addr, uint64_t len)
{
	char extra[96];
	snprintf(extra, sizeof(extra), ",\"cgprobe_parameters\":[\"0x%llx\",\"0x%llx\"]",
		 (unsigned long long)addr, (unsigned long long)len);
	start(t, id, ts, extra);
	end(t, id, ts, ts);
}

START_TEST(marks_make_parameters)
{
	struct text t = {0};
	meta(&t);
	alloc(&t, 10, 0x1000, 1000, "other");
	alloc(&t, 20, 0x5000, 500, "other");
	mark(&t, "p", 30, 0x1000, 1000);
	/* Inside the marked range: parameter though the record says other. */
	alloc(&t, 40, 0x1100, 100, "other");
	struct cgtrace_memory_report *rep = report_of(&t);
	ck_assert_uint_eq(rep->peak_bytes, 1600);
	ck_assert_uint_eq(rep->peak_by_category[CGTRACE_CAT_PARAMETER], 1100);
	ck_assert_uint_eq(rep->peak_by_category[CGTRACE_CAT_OTHER], 500);
	for (size_t i = 0; i < rep->n_breakdown; i++)
		ck_assert_int_eq(rep->peak_breakdown[i].category,
				 rep->peak_breakdown[i].bytes == 500 ? CGTRACE_CAT_OTHER
								     : CGTRACE_CAT_PARAMETER);
	report_done(rep);
	free(t.p);
}
END_TEST

START_TEST(marks_after_the_peak)
{
	struct text t = {0};
	meta(&t);
	alloc(&t, 10, 0x1000, 1000, "other");
	alloc(&t, 20, 0x5000, 500, "other");
	release(&t, 25, 0x5000, 500);
	mark(&t, "p", 30, 0x1000, 1000);
	struct cgtrace_memory_report *rep = report_of(&t);
	/* At the peak the block was not marked yet. */
	ck_assert_uint_eq(rep->peak_by_category[CGTRACE_CAT_OTHER], 1500);
	for (size_t i = 0; i < rep->n_breakdown; i++)
		ck_assert_int_eq(rep->peak_breakdown[i].category, CGTRACE_CAT_OTHER);
	report_done(rep);
	/* A later peak sees it marked. */
	alloc(&t, 40, 0x9000, 2000, "other");
	rep = report_of(&t);
	ck_assert_uint_eq(rep->peak_by_category[CGTRACE_CAT_PARAMETER], 1000);
	bool seen = false;
	for (size_t i = 0; i < rep->n_breakdown; i++)
		if (rep->peak_breakdown[i].bytes == 1000)
			seen = rep->peak_breakdown[i].category == CGTRACE_CAT_PARAMETER;
	ck_assert(seen);
	report_done(rep);
	free(t.p);
}
END_TEST

/* Frees of marked blocks leave the parameter bytes; what marks hold stays across encodings. */
START_TEST(marks_in_every_read)
{
	struct text t = {0};
	meta(&t);
	alloc(&t, 10, 0x1000, 1000, "other");
	mark(&t, "p", 30, 0x1000, 1000);
	alloc(&t, 40, 0x7000, 10, "other");
	release(&t, 50, 0x1000, 1000);
	char err[1024];
	struct cgtrace_doc *d = ck_read_ok(t.p);
	ck_assert_uint_eq(cgtrace_doc_count(d, CGTRACE_KIND_SPAN_START), 2);
	const uint64_t *ranges = NULL;
	size_t n = 0;
	for (size_t i = 0; i < 2 && !n; i++)
		n = cgtrace_doc_span_parameters(d, i, &ranges);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(ranges[0], 0x1000);
	ck_assert_uint_eq(ranges[1], 0x1000 + 1000);
	/* The compact encoding keeps the mark (as TEXT), and so its effect. */
	char path[] = "/tmp/cg-marks-XXXXXX";
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(cgtrace_doc_export_compact(d, fd, 1), 0);
	close(fd);
	cgtrace_doc_free(d);
	ck_assert_int_eq(cgtrace_doc_read_flags(path, NULL, CGTRACE_READ_STREAM_MEMORY, &d, err,
						sizeof(err)),
			 0);
	unlink(path);
	struct cgtrace_memory_report *rep;
	ck_assert_int_eq(cgtrace_memory_analyze(d, &rep), 0);
	ck_assert_uint_eq(rep->peak_bytes, 1010);
	ck_assert_uint_eq(rep->peak_by_category[CGTRACE_CAT_PARAMETER], 1000);
	ck_assert_uint_eq(rep->peak_by_category[CGTRACE_CAT_OTHER], 10);
	ck_assert_uint_eq(rep->by_device[0].final_bytes, 10);
	cgtrace_memory_report_free(rep);
	cgtrace_doc_free(d);
	free(t.p);
}
END_TEST

START_TEST(marks_strict_export)
{
	struct text t = {0};
	meta(&t);
	alloc(&t, 10, 0x1000, 1000, "other");
	mark(&t, "p", 30, 0x1000, 1000);
	struct cgtrace_doc *d = ck_read_ok(t.p);
	char path[] = "/tmp/cg-strict-XXXXXX", err[1024];
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(cgtrace_doc_export_jsonl_flags(d, fd, CGTRACE_EXPORT_STRICT), 0);
	close(fd);
	cgtrace_doc_free(d);
	ck_assert_int_eq(cgtrace_doc_read(path, NULL, &d, err, sizeof(err)), 0);
	unlink(path);
	struct cgtrace_memory_report *rep;
	ck_assert_int_eq(cgtrace_memory_analyze(d, &rep), 0);
	/* A strict reader keeps the records' own categories. */
	ck_assert_uint_eq(rep->peak_by_category[CGTRACE_CAT_PARAMETER], 0);
	ck_assert_uint_eq(rep->peak_by_category[CGTRACE_CAT_OTHER], 1000);
	cgtrace_memory_report_free(rep);
	cgtrace_doc_free(d);
	free(t.p);
}
END_TEST

/* ---- streamed and full reads ---- */

static bool same_steps(const struct cgtrace_steps *a, const struct cgtrace_steps *b)
{
	if (a->n_rows != b->n_rows || a->n_devices != b->n_devices || a->from != b->from ||
	    a->n_growth != b->n_growth)
		return false;
	for (size_t r = 0; r < a->n_rows; r++) {
		const struct cgtrace_step_row *x = &a->rows[r], *y = &b->rows[r];
		if (x->update != y->update || x->start_ns != y->start_ns || x->end_ns != y->end_ns ||
		    x->time_ns != y->time_ns || x->is_phase != y->is_phase || x->open != y->open)
			return false;
		for (size_t d = 0; d < a->n_devices; d++)
			if (memcmp(&a->figures[d][r], &b->figures[d][r], sizeof(a->figures[d][r])))
				return false;
	}
	for (size_t g = 0; g < a->n_growth; g++)
		if (a->growth[g].update != b->growth[g].update ||
		    a->growth[g].bytes != b->growth[g].bytes)
			return false;
	return true;
}

START_TEST(late_span_read_in_full)
{
	struct text t = {0};
	meta(&t);
	for (int n = 1; n <= 3; n++)
		update(&t, n, (uint64_t)n * 1000, true, 100);
	struct cgtrace_steps *a = steps_of(&t, 1, true, true, NULL);
	/* The same trace, update 2's optimizer told after later records. */
	struct text u = {0};
	meta(&u);
	update(&u, 1, 1000, true, 100);
	update(&u, 2, 2000, true, 100);
	char lines[2][512];
	const char *keys[] = {"{\"kind\":\"span_start\",\"id\":\"o2\"",
			      "{\"kind\":\"span_end\",\"id\":\"o2\""};
	for (int k = 0; k < 2; k++) {
		char *at = strstr(u.p, keys[k]);
		ck_assert_ptr_nonnull(at);
		const char *eol = strchr(at, '\n') + 1;
		snprintf(lines[k], sizeof(lines[k]), "%.*s", (int)(eol - at), at);
		memmove(at, eol, (size_t)(u.p + u.len - eol) + 1);
		u.len -= strlen(lines[k]);
	}
	update(&u, 3, 3000, true, 100);
	put(&u, "%s%s", lines[0], lines[1]);
	uint32_t window = cg_stream_window;
	cg_stream_window = 0;
	struct warn_log w = {0};
	struct cgtrace_steps *b = steps_of(&u, 1, true, true, &w);
	cg_stream_window = window;
	ck_assert_msg(strstr(w.text, "out of timestamp order") != NULL, "no note: %s", w.text);
	ck_assert(same_steps(a, b));
	cgtrace_steps_free(a);
	cgtrace_steps_free(b);
	free(t.p);
	free(u.p);
}
END_TEST

/* ---- rules ---- */

START_TEST(bad_fields)
{
	struct text t = {0};
	meta(&t);
	start(&t, "u", 10, ",\"cgprobe_update\":0");
	ck_read_fails(t.p, "t.jsonl:3: span `u`: cgprobe_update counts from 1");
	t.len = 0;
	meta(&t);
	start(&t, "p", 10, ",\"cgprobe_parameters\":[\"0x10\"]");
	ck_read_fails(t.p, "t.jsonl:3: span `p`: cgprobe_parameters holds address and length "
			   "pairs, not 1 values");
	t.len = 0;
	meta(&t);
	start(&t, "p", 10, ",\"cgprobe_parameters\":[\"0x10\",\"0x0\"]");
	ck_read_fails(t.p, "t.jsonl:3: span `p`: cgprobe_parameters range 0x10 + 0x0 is empty");
	t.len = 0;
	meta(&t);
	start(&t, "p", 10, ",\"cgprobe_phase\":\"\"");
	ck_read_fails(t.p, "t.jsonl:3: span `p`: cgprobe_phase is empty");
	free(t.p);
}
END_TEST

TEST_SUITE(updates_suite, "updates")
{
	test_case(s, "updates:rows", 30, marked_rows, inferred_rows, peak_moment,
		  marked_in_sequence, open_update, no_updates);
	test_case(s, "updates:phases", 30, phase_rows);
	test_case(s, "updates:trend-growth", 30, trend_slope, growth_outlives, growth_still_live);
	test_case(s, "updates:marks", 30, marks_make_parameters, marks_after_the_peak,
		  marks_in_every_read, marks_strict_export);
	test_case(s, "updates:reads", 30, late_span_read_in_full, bad_fields);
}

TEST_MAIN(updates_suite);
