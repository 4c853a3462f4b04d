/* SPDX-License-Identifier: MIT */
/*
 * Call stacks and modules recorded by libcgprobe.so (docs/probe.md, "Call
 * stacks"): programs of tests/stacks/ with known call chains run under
 * the probe, in JSONL and in the compact encoding; their traces are read
 * back with the core reader, and the frames of each allocation resolved
 * with addr2line in the module the trace recorded for them (symbols are
 * not the probe's business: this only checks that the addresses are
 * right). Skipped (77) without addr2line.
 *
 * Environment (tests/meson.build): STACKS_TEST_PROBE, STACKS_TEST_BIN (the
 * programs), STACKS_TEST_CUDA (the fake CUDA fixtures, tests/cuda/).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgtrace.h"
#include "child.h"
#include "probe-run.h"
#include "test-main.h"

static const char *probe, *bin, *cuda;

static const char *format = "jsonl";

/* Runs bin/prog (or an absolute path) with args under the probe; reads its one trace. */
static struct probe_run *run(const char *prog, const char *const *args, const char *const *extra)
{
	/* A name ending .jsonl would make any trace JSONL: the suffix follows the format. */
	char *fmt = strf("CGPROBE_FORMAT=%s", format);
	const char *all[16] = {fmt};
	for (size_t i = 0; extra && extra[i] && i < 14; i++)
		all[i + 1] = extra[i];
	char *path = prog[0] == '/' ? strf("%s", prog) : strf("%s/%s", bin, prog);
	struct probe_run *r =
	    probe_run(probe, path, args, strcmp(format, "jsonl") ? "cgt" : "jsonl", all);
	free(path);
	free(fmt);
	return r;
}

/* The stack of the first allocation of exactly bytes; fails the test when there is none. */
static const struct cgtrace_stack *stack_of(const struct probe_run *r, uint64_t bytes, size_t nth)
{
	size_t n = cgtrace_doc_count(r->doc, CGTRACE_KIND_MEMORY), seen = 0;
	for (size_t i = 0; i < n; i++) {
		struct cgtrace_memory m;
		cgtrace_doc_memory(r->doc, i, &m);
		if (m.action != CGTRACE_ALLOC || m.bytes != bytes || seen++ != nth)
			continue;
		ck_assert_msg(m.stack_id != 0, "the %" PRIu64 "-byte allocation has no stack",
		              bytes);
		const struct cgtrace_stack *s = cgtrace_doc_stack(r->doc, m.stack_id);
		ck_assert_msg(s && s->n_frames > 0, "stack %" PRIu64 " not defined", m.stack_id);
		return s;
	}
	ck_abort_msg("no %" PRIu64 "-byte allocation #%zu in the trace", bytes, nth);
	return NULL;
}


/* The function of the call instruction before return address frame, by addr2line; "?" if unknown.
 */
static char *function_of(const struct probe_run *r, uint64_t frame)
{
	const struct cgtrace_module *m = probe_run_module_of(r, frame - 1);
	if (!m)
		return strf("?");
	char *cmd =
	    strf("addr2line -f -e '%s' 0x%" PRIx64 " 2>/dev/null", m->path, frame - 1 - m->base);
	FILE *p = popen(cmd, "r");
	char line[512] = "?";
	if (!p || !fgets(line, sizeof(line), p))
		strcpy(line, "?");
	if (p)
		pclose(p);
	line[strcspn(line, "\n")] = '\0';
	free(cmd);
	return strf("%s", line);
}

/* Frames from `from` on resolve to the functions named, in order. */
static void expect_frames(const struct probe_run *r, const struct cgtrace_stack *s, size_t from,
                          const char *const *names)
{
	for (size_t i = 0; names[i]; i++) {
		ck_assert_msg(from + i < s->n_frames,
		              "stack %" PRIu64 " has %zu frames, want %s at %zu", s->id,
		              s->n_frames, names[i], from + i);
		char *f = function_of(r, s->frames[from + i]);
		ck_assert_msg(strcmp(f, names[i]) == 0,
		              "stack %" PRIu64 " frame %zu (0x%" PRIx64 ") is in %s, not %s", s->id,
		              from + i, s->frames[from + i], f, names[i]);
		free(f);
	}
}

static const char *tag(const struct probe_run *r, const char *key)
{
	struct cgtrace_meta meta;
	cgtrace_doc_meta(r->doc, &meta);
	for (size_t i = 0; i < meta.n_tags; i++)
		if (strcmp(meta.tags[i].key, key) == 0)
			return meta.tags[i].value;
	return NULL;
}

/* Every allocation has a stack, no stack holds more than max frames. */
static void expect_all_stacked(const struct probe_run *r, size_t max)
{
	size_t n = cgtrace_doc_count(r->doc, CGTRACE_KIND_MEMORY);
	for (size_t i = 0; i < n; i++) {
		struct cgtrace_memory m;
		cgtrace_doc_memory(r->doc, i, &m);
		if (m.action == CGTRACE_ALLOC)
			ck_assert_msg(m.stack_id, "record %zu (%" PRIu64 " bytes) has no stack", i,
			              m.bytes);
	}
	for (size_t i = 0; i < cgtrace_doc_stack_count(r->doc); i++)
		ck_assert_uint_le(cgtrace_doc_stack_at(r->doc, i)->n_frames, max);
}

/* ------------------------------------------------------------------ */

START_TEST(test_chain)
{
	struct probe_run *r = run("stacks-chain", NULL, NULL);
	ck_assert_str_eq(tag(r, "cgprobe_stack_depth"), "32");
	const struct cgtrace_stack *a = stack_of(r, 4242, 0), *a2 = stack_of(r, 4242, 1);
	const struct cgtrace_stack *d = stack_of(r, 4343, 0);
	expect_frames(r, a, 0,
	              (const char *const[]){"c_inner", "b_middle", "a_outer", "main", NULL});
	expect_frames(r, d, 0, (const char *const[]){"c_inner", "d_other", "main", NULL});
	/* One call site twice: one stack; the same site through another caller: another. */
	ck_assert_uint_eq(a->id, a2->id);
	ck_assert_uint_ne(a->id, d->id);
	/* The program's module is recorded with its build id. */
	const struct cgtrace_module *m = probe_run_module_of(r, a->frames[0] - 1);
	ck_assert_ptr_nonnull(m);
	ck_assert_msg(strstr(m->path, "stacks-chain"), "module %s", m->path);
	ck_assert_ptr_nonnull(m->build_id);
	expect_all_stacked(r, 32);
	probe_run_free(r);
}
END_TEST

START_TEST(test_depth_limit)
{
	struct probe_run *r =
	    run("stacks-chain", NULL, (const char *const[]){"CGPROBE_STACK_DEPTH=2", NULL});
	ck_assert_str_eq(tag(r, "cgprobe_stack_depth"), "2");
	const struct cgtrace_stack *a = stack_of(r, 4242, 0);
	ck_assert_uint_eq(a->n_frames, 2);
	expect_frames(r, a, 0, (const char *const[]){"c_inner", "b_middle", NULL});
	expect_all_stacked(r, 2);
	probe_run_free(r);
}
END_TEST

START_TEST(test_depth_off)
{
	struct probe_run *r =
	    run("stacks-chain", NULL, (const char *const[]){"CGPROBE_STACK_DEPTH=0", NULL});
	ck_assert_str_eq(tag(r, "cgprobe_stack_depth"), "0");
	ck_assert_uint_eq(cgtrace_doc_stack_count(r->doc), 0);
	ck_assert_uint_eq(cgtrace_doc_module_count(r->doc), 0);
	size_t n = cgtrace_doc_count(r->doc, CGTRACE_KIND_MEMORY);
	ck_assert_uint_ge(n, 6);
	for (size_t i = 0; i < n; i++) {
		struct cgtrace_memory m;
		cgtrace_doc_memory(r->doc, i, &m);
		ck_assert_uint_eq(m.stack_id, 0);
	}
	probe_run_free(r);
}
END_TEST

START_TEST(test_depth_bad)
{
	struct probe_run *r =
	    run("stacks-chain", NULL, (const char *const[]){"CGPROBE_STACK_DEPTH=lots", NULL});
	ck_assert_str_eq(r->stderr_text,
	                 "cgprobe: CGPROBE_STACK_DEPTH=lots is not an integer from 0 "
	                 "to 256; using 32\n");
	ck_assert_str_eq(tag(r, "cgprobe_stack_depth"), "32");
	expect_frames(r, stack_of(r, 4242, 0), 0, (const char *const[]){"c_inner", NULL});
	probe_run_free(r);
	r = run("stacks-chain", NULL, (const char *const[]){"CGPROBE_STACK_DEPTH=257", NULL});
	ck_assert_msg(strstr(r->stderr_text, "CGPROBE_STACK_DEPTH=257 is not") &&
	                  !strchr(strchr(r->stderr_text, '\n') + 1, '\n'),
	              "stderr: %s", r->stderr_text);
	probe_run_free(r);
}
END_TEST

START_TEST(test_thread)
{
	struct probe_run *r = run("stacks-threads", NULL, NULL);
	expect_frames(r, stack_of(r, 6161, 0), 0,
	              (const char *const[]){"t_site", "thread_main", NULL});
	expect_frames(r, stack_of(r, 6262, 0), 0, (const char *const[]){"m_site", "main", NULL});
	probe_run_free(r);
}
END_TEST

START_TEST(test_cxx_new)
{
	if (access(strf("%s/stacks-cxxnew", bin), X_OK) != 0)
		return; /* no C++ compiler at build time */
	struct probe_run *r = run("stacks-cxxnew", NULL, NULL);
	const struct cgtrace_stack *s = stack_of(r, 5151, 0);
	/* Frame 0 is in operator new, which called malloc; its caller next. */
	const struct cgtrace_module *m = probe_run_module_of(r, s->frames[0] - 1);
	ck_assert_msg(m && strstr(m->path, "libstdc++"), "frame 0 in %s",
	              m ? m->path : "no module");
	size_t i = 1;
	while (i < s->n_frames && probe_run_module_of(r, s->frames[i] - 1) == m)
		i++;
	expect_frames(r, s, i, (const char *const[]){"_Z8cxx_sitem", "main", NULL});
	probe_run_free(r);
}
END_TEST

START_TEST(test_dlopen)
{
	char *lib = strf("%s/libstacks-lib.so", bin);
	struct probe_run *r = run("stacks-dlopen", (const char *const[]){lib, NULL}, NULL);
	const struct cgtrace_stack *ctor = stack_of(r, 7171, 0), *after = stack_of(r, 7272, 0);
	expect_frames(r, ctor, 0, (const char *const[]){"lib_ctor", NULL});
	expect_frames(r, after, 0, (const char *const[]){"lib_alloc", "main", NULL});
	const struct cgtrace_module *m = probe_run_module_of(r, after->frames[0] - 1);
	ck_assert_msg(m && strstr(m->path, "libstacks-lib.so"), "frame in %s",
	              m ? m->path : "no module");
	/* Recorded after the load, on a later record than the program's own modules. */
	ck_assert_uint_gt(m->recorded_ns, cgtrace_doc_module(r->doc, 0)->recorded_ns);
	probe_run_free(r);
	free(lib);
}
END_TEST

START_TEST(test_reload)
{
	char *lib = strf("%s/libstacks-lib.so", bin);
	struct probe_run *r = run("stacks-reload", (const char *const[]){lib, NULL}, NULL);
	const struct cgtrace_stack *a = stack_of(r, 7272, 0), *b = stack_of(r, 7272, 1);
	expect_frames(r, a, 0, (const char *const[]){"lib_alloc", "use", "main", NULL});
	expect_frames(r, b, 0, (const char *const[]){"lib_alloc", "use", "main", NULL});
	/*
	 * The same frames, but after the dlclose the same addresses may be
	 * other code: the second use is a stack of its own, defined after the
	 * library's second load.
	 */
	ck_assert_uint_eq(a->n_frames, b->n_frames);
	ck_assert_mem_eq(a->frames, b->frames, a->n_frames * sizeof(uint64_t));
	ck_assert_uint_ne(a->id, b->id);
	ck_assert_uint_gt(b->defined_ns, a->defined_ns);
	probe_run_free(r);
	free(lib);
}
END_TEST

START_TEST(test_no_frame_pointer)
{
	char *a = strf("%s/libstacks-nofp.so", bin), *b = strf("%s/libstacks-nounwind.so", bin);
	struct probe_run *r = run("stacks-nofp", (const char *const[]){a, b, NULL}, NULL);
	expect_frames(r, stack_of(r, 8181, 0), 0,
	              (const char *const[]){"cb_site", "nofp_call", "through", "main", NULL});
	/* Without unwind tables the frames past the library may be lost, but never the first. */
	expect_frames(r, stack_of(r, 8282, 0), 0, (const char *const[]){"cb_site", NULL});
	probe_run_free(r);
	free(a);
	free(b);
}
END_TEST

START_TEST(test_device)
{
	char *lib = strf("LD_LIBRARY_PATH=%s/lib", cuda);
	char *prog = strf("%s/drv-linked", cuda);
	struct probe_run *r = run(prog, NULL, (const char *const[]){lib, NULL});
	size_t n = cgtrace_doc_count(r->doc, CGTRACE_KIND_MEMORY), dev = 0;
	for (size_t i = 0; i < n; i++) {
		struct cgtrace_memory m;
		cgtrace_doc_memory(r->doc, i, &m);
		if (m.action != CGTRACE_ALLOC || strncmp(m.device, "cuda:", 5) != 0)
			continue;
		dev++;
		const struct cgtrace_stack *s = cgtrace_doc_stack(r->doc, m.stack_id);
		ck_assert_msg(s, "device allocation %zu has no stack", i);
		/* Frame 0: the program's call of the driver, not the probe's. */
		const struct cgtrace_module *mod = probe_run_module_of(r, s->frames[0] - 1);
		ck_assert_msg(mod && strstr(mod->path, "drv-linked"), "frame 0 in %s",
		              mod ? mod->path : "no module");
		char *f = function_of(r, s->frames[0]);
		ck_assert_msg(!strcmp(f, "alloc") || !strcmp(f, "main"), "frame 0 in %s", f);
		free(f);
	}
	ck_assert_uint_gt(dev, 0);
	probe_run_free(r);
	free(lib);
	free(prog);
}
END_TEST

TEST_SUITE(stacks_suite, "probe-stacks")
{
	test_case(s, "stacks:record", 120, test_chain, test_depth_limit, test_depth_off,
	          test_depth_bad, test_thread, test_cxx_new, test_dlopen, test_reload,
	          test_no_frame_pointer, test_device);
}

static int setup(int argc, char **argv)
{
	probe = getenv("STACKS_TEST_PROBE");
	bin = getenv("STACKS_TEST_BIN");
	cuda = getenv("STACKS_TEST_CUDA");
	if (getenv("STACKS_TEST_FORMAT"))
		format = getenv("STACKS_TEST_FORMAT");
	if (!probe || !bin || !cuda) {
		fprintf(stderr,
		        "STACKS_TEST_PROBE, STACKS_TEST_BIN and STACKS_TEST_CUDA must be set\n");
		return 1;
	}
	if (system("addr2line --version >/dev/null 2>&1") != 0) {
		fprintf(stderr, "no addr2line: skipped\n");
		return 77;
	}
	return TEST_GO_ON;
}

TEST_MAIN_SETUP(setup, stacks_suite);
