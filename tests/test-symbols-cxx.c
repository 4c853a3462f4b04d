/* SPDX-License-Identifier: MIT */
/*
 * Inlined frames as the compiler wrote them: the -O2 C++ programs of
 * tests/symbols/ (cxx-*.cc: a vector of objects with string members that
 * grows, a chain of the program's own inline functions across two files,
 * a member function template) run under the probe; every frame their
 * stacks recorded in the program and in libstdc++ is resolved with
 * cgtrace_symbols_resolve and compared, frame for frame, with what
 * `addr2line -i -f -C` prints for the same address - 1: the function, the
 * file and the line (without "(discriminator N)"); then the program's
 * frames again from a copy without DWARF, named by the ELF symbol table
 * alone as `addr2line -f -C` names them there. Skipped (77) without the
 * programs (no C++ compiler), addr2line or objcopy.
 *
 * Environment (tests/meson.build): SYMBOLS_CXX_PROBE, SYMBOLS_CXX_BIN.
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

#include "binutils.h"
#include "cgtrace.h"
#include "child.h"
#include "probe-run.h"
#include "test-main.h"

static const char *probe, *bin;

#define MAX_ADDRS 4096

/* Runs bin/prog under the probe and reads its one trace. */
static struct probe_run *run(const char *prog)
{
	char *path = strf("%s/%s", bin, prog);
	struct probe_run *r = probe_run(probe, path, NULL, "cgt", NULL);
	free(path);
	return r;
}

/* The program's own frames and libstdc++'s are compared; the C library's depend on the system. */
static bool compared(const struct probe_run *r, const struct cgtrace_module *m)
{
	return m && (strcmp(base_name(m->path), base_name(r->path)) == 0 ||
	             strstr(base_name(m->path), "libstdc++"));
}

static void ck_same_frame(const struct cgtrace_frame *f, const struct a2l_frame *want,
                          uint64_t address, size_t i)
{
	const char *fn = f->function ? f->function : "??";
	ck_assert_msg(strcmp(fn, want->function) == 0,
	              "0x%" PRIx64 " frame %zu: function\n  ours      %s\n  addr2line %s", address,
	              i, fn, want->function);
	/* Without a line, addr2line may still name a file from the ELF symbol table. */
	if (!want->line) {
		ck_assert_msg(f->line == 0, "0x%" PRIx64 " frame %zu (%s): line %u, addr2line none",
		              address, i, fn, f->line);
		return;
	}
	ck_assert_msg(f->file && strcmp(f->file, want->file) == 0 && f->line == want->line,
	              "0x%" PRIx64 " frame %zu (%s): place\n  ours      %s:%u\n  addr2line %s:%u",
	              address, i, fn, f->file ? f->file : "??", f->line, want->file, want->line);
}

struct tally {
	uint64_t seen[MAX_ADDRS];
	size_t n_seen, compared, deepest;
	bool found[8];
};

/* One recorded return address, once: our frames against addr2line's, frame for frame. */
static void compare_address(struct cgtrace_symbols *syms, const struct probe_run *r,
                            const struct cgtrace_stack *st, uint64_t address,
                            const char *const *expect, struct tally *t)
{
	for (size_t i = 0; i < t->n_seen; i++)
		if (t->seen[i] == address)
			return;
	ck_assert_uint_lt(t->n_seen, MAX_ADDRS);
	t->seen[t->n_seen++] = address;
	const struct cgtrace_module *m = probe_run_module_of(r, address - 1);
	if (!compared(r, m))
		return;
	const struct cgtrace_frame *f;
	size_t n;
	ck_assert_int_eq(cgtrace_symbols_resolve(syms, address, st->defined_ns, &f, &n), 0);
	static struct a2l_frame want[A2L_MAX_CHAIN];
	size_t k = a2l("-i -C", m->path, address - 1 - m->base, want);
	ck_assert_msg(n == k, "0x%" PRIx64 " in %s: %zu frames, addr2line %zu (innermost %s)",
	              address, m->path, n, k, k ? want[0].function : "-");
	for (size_t i = 0; i < n; i++) {
		ck_same_frame(&f[i], &want[i], address, i);
		ck_assert_int_eq(f[i].inlined, i + 1 < n);
		for (size_t e = 0; expect[e]; e++)
			if (f[i].function && strstr(f[i].function, expect[e]))
				t->found[e] = true;
	}
	t->compared++;
	if (n > t->deepest)
		t->deepest = n;
}

/*
 * The ELF symbol table alone: prog copied without its DWARF (objcopy
 * --strip-debug keeps .symtab and the build id) and each of its recorded
 * addresses resolved from the copy, one frame named as `addr2line -f -C`
 * names it there. Returns how many addresses were compared.
 */
static size_t compare_elf_symbols(const struct probe_run *r, struct cgtrace_module *mods,
                                  size_t n_mods)
{
	char *copy = strf("%s/nodebug-%s", r->dir, base_name(r->path));
	objcopy_to("--strip-debug", r->path, copy);
	for (size_t i = 0; i < n_mods; i++)
		if (strcmp(base_name(mods[i].path), base_name(r->path)) == 0)
			mods[i].path = copy;
	struct cgtrace_symbols *syms;
	ck_assert_int_eq(cgtrace_symbols_open(&syms, mods, n_mods, NULL), 0);
	static uint64_t seen[MAX_ADDRS];
	size_t n_seen = 0;
	for (size_t i = 0; i < cgtrace_doc_stack_count(r->doc); i++) {
		const struct cgtrace_stack *st = cgtrace_doc_stack_at(r->doc, i);
		for (size_t k = 0; k < st->n_frames; k++) {
			uint64_t a = st->frames[k];
			const struct cgtrace_module *m = probe_run_module_of(r, a - 1);
			bool dup = false;
			for (size_t j = 0; j < n_seen && !dup; j++)
				dup = seen[j] == a;
			if (dup || !m || strcmp(base_name(m->path), base_name(r->path)) != 0)
				continue;
			ck_assert_uint_lt(n_seen, MAX_ADDRS);
			seen[n_seen++] = a;
			const struct cgtrace_frame *f;
			size_t n;
			ck_assert_int_eq(cgtrace_symbols_resolve(syms, a, st->defined_ns, &f, &n),
			                 0);
			static struct a2l_frame want[A2L_MAX_CHAIN];
			ck_assert_uint_ge(a2l("-C", copy, a - 1 - m->base, want), 1);
			ck_assert_uint_eq(n, 1);
			ck_assert_ptr_null(f[0].file);
			ck_assert_msg(f[0].function && strcmp(f[0].function, want[0].function) == 0,
			              "0x%" PRIx64 " without DWARF: ours %s, addr2line %s", a,
			              f[0].function ? f[0].function : "??", want[0].function);
		}
	}
	cgtrace_symbols_close(syms);
	free(copy);
	return n_seen;
}

/*
 * Every frame of every stack of prog compared, with DWARF and with the
 * ELF symbols alone; expect (NULL-terminated, 8 at most) are names some
 * frame must have, and deepest the longest inline chain at least one
 * address must give: the comparison is not of nothing.
 */
static void compare_program(const char *prog, const char *const *expect, size_t deepest)
{
	struct probe_run *r = run(prog);
	size_t n_mods = cgtrace_doc_module_count(r->doc);
	struct cgtrace_module *mods = calloc(n_mods ? n_mods : 1, sizeof(*mods));
	for (size_t i = 0; i < n_mods; i++)
		mods[i] = *cgtrace_doc_module(r->doc, i);
	struct cgtrace_symbols *syms;
	ck_assert_int_eq(cgtrace_symbols_open(&syms, mods, n_mods, NULL), 0);
	static struct tally t;
	memset(&t, 0, sizeof(t));
	for (size_t i = 0; i < cgtrace_doc_stack_count(r->doc); i++) {
		const struct cgtrace_stack *st = cgtrace_doc_stack_at(r->doc, i);
		for (size_t k = 0; k < st->n_frames; k++)
			compare_address(syms, r, st, st->frames[k], expect, &t);
	}
	ck_assert_msg(t.compared > 0, "%s: no frame compared", prog);
	ck_assert_msg(t.deepest >= deepest, "%s: the longest inline chain has %zu frames, not %zu",
	              prog, t.deepest, deepest);
	for (size_t e = 0; expect[e]; e++)
		ck_assert_msg(t.found[e], "%s: no frame in %s", prog, expect[e]);
	cgtrace_symbols_close(syms);
	ck_assert_msg(compare_elf_symbols(r, mods, n_mods) > 0, "%s: no frame without DWARF", prog);
	free(mods);
	probe_run_free(r);
}

START_TEST(vector_of_strings)
{
	compare_program("symbols-cxx-widgets", (const char *const[]){"Widget::Widget()", NULL}, 6);
}
END_TEST

START_TEST(own_inline_chain)
{
	compare_program("symbols-cxx-chain",
	                (const char *const[]){"shapes::grab(", "shapes::make_row(", "build", NULL},
	                3);
}
END_TEST

START_TEST(member_template)
{
	compare_program("symbols-cxx-template",
	                (const char *const[]){"pool::Arena<Point>::make<", "fill", NULL}, 3);
}
END_TEST

TEST_SUITE(suite, "symbols-cxx")
{
	test_case(s, "symbols:as-addr2line", 120, vector_of_strings, own_inline_chain,
	          member_template);
}

static int setup(int argc, char **argv)
{
	probe = getenv("SYMBOLS_CXX_PROBE");
	bin = getenv("SYMBOLS_CXX_BIN");
	if (!probe || !bin) {
		fprintf(stderr, "SYMBOLS_CXX_PROBE and SYMBOLS_CXX_BIN must be set\n");
		return 1;
	}
	/* No Check assertions here (strf has one): no test runs yet. */
	char prog[4096];
	snprintf(prog, sizeof(prog), "%s/symbols-cxx-widgets", bin);
	if (access(prog, X_OK) != 0) {
		fprintf(stderr, "no C++ programs (no C++ compiler): skipped\n");
		return 77;
	}
	if (!binutil_present("addr2line") || !binutil_present("objcopy")) {
		fprintf(stderr, "no addr2line or objcopy: skipped\n");
		return 77;
	}
	return TEST_GO_ON;
}

TEST_MAIN_SETUP(setup, suite);
