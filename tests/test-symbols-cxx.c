/* SPDX-License-Identifier: MIT */
/*
 * Inlined frames as the compiler wrote them: the -O2 C++ programs of
 * tests/symbols/ (cxx-*.cc: a vector of objects with string members that
 * grows, a chain of the program's own inline functions across two files,
 * a member function template) run under the probe; every frame their
 * stacks recorded in the program and in libstdc++ is resolved with
 * cgtrace_symbols_resolve and compared, frame for frame, with what
 * `addr2line -i -f -C` prints for the same address - 1: the function, the
 * file and the line (without "(discriminator N)"). Skipped (77) without
 * the programs (no C++ compiler) or without addr2line.
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

#include "cgtrace.h"
#include "child.h"
#include "probe-run.h"
#include "test-main.h"

static const char *probe, *bin;

#define MAX_CHAIN 64
#define MAX_ADDRS 4096

/* One frame as addr2line prints it: the function, then FILE:LINE. */
struct a2l_frame {
	char function[8192];
	char file[8192];
	unsigned line; /* 0: "?" or 0, no line */
};

/* Runs bin/prog under the probe and reads its one trace. */
static struct probe_run *run(const char *prog)
{
	char *path = strf("%s/%s", bin, prog);
	struct probe_run *r = probe_run(probe, path, NULL, "cgt", NULL);
	free(path);
	return r;
}

/* "FILE:LINE" or "FILE:LINE (discriminator N)" split; "??:0", "??:?", "FILE:?" have no line. */
static void a2l_place(char *text, struct a2l_frame *f)
{
	char *d = strstr(text, " (discriminator ");
	if (d)
		*d = '\0';
	char *colon = strrchr(text, ':');
	f->line = 0;
	if (colon) {
		*colon = '\0';
		f->line = (unsigned)strtoul(colon + 1, NULL, 10);
	}
	snprintf(f->file, sizeof(f->file), "%s", text);
}

/*
 * addr2line's frames for one address, one process per address: addr2line
 * remembers a name it looked up for one address, and may give it to the
 * next.
 */
static size_t a2l(const char *module, uint64_t offset, struct a2l_frame *out)
{
	char *cmd = strf("addr2line -i -f -C -e '%s' 0x%" PRIx64 " 2>/dev/null", module, offset);
	FILE *p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	size_t n = 0;
	static char fn[8192], place[8192];
	while (n < MAX_CHAIN && fgets(fn, sizeof(fn), p) && fgets(place, sizeof(place), p)) {
		fn[strcspn(fn, "\n")] = '\0';
		place[strcspn(place, "\n")] = '\0';
		snprintf(out[n].function, sizeof(out[n].function), "%s", fn);
		a2l_place(place, &out[n]);
		n++;
	}
	ck_assert_int_eq(pclose(p), 0);
	free(cmd);
	return n;
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
	static struct a2l_frame want[MAX_CHAIN];
	size_t k = a2l(m->path, address - 1 - m->base, want);
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
 * Every frame of every stack of prog compared; expect (NULL-terminated, 8
 * at most) are names some frame must have, and deepest the longest inline
 * chain at least one address must give: the comparison is not of nothing.
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
	if (system("addr2line --version >/dev/null 2>&1") != 0) {
		fprintf(stderr, "no addr2line: skipped\n");
		return 77;
	}
	return TEST_GO_ON;
}

TEST_MAIN_SETUP(setup, suite);
