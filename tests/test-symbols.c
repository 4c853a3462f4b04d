/* SPDX-License-Identifier: MIT */
/*
 * Offline symbols (core/symbols): the known call chains of
 * tests/symbols/sym-target.c resolved to their functions and lines, inlined
 * frames included (a chain of two, each at its own call line, across two
 * files); one lookup per distinct address; the module rule, by a scan and
 * by the index over overlapping entries; a missing file and a build-id
 * mismatch keep module+offset with one warning. The rules of a module's
 * symbol table (sizes, aliases, nested symbols) on a made-up table, and
 * every frame as addr2line gives it, with DWARF and from a copy with the
 * ELF symbols alone (when addr2line and objcopy are there).
 */
#include <check.h>
#include <elf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binutils.h"
#include "cgtrace.h"
#include "child.h"
#include "module_index.h"
#include "rundir.h"
#include "symtab.h"
#include "test-main.h"
#include "xorshift.h"

#define MAX_MODS 32
#define MAX_FRAMES 32

/* What sym-target printed: its modules, its four stacks, the lines expected. */
static struct target {
	struct cgtrace_module mods[MAX_MODS];
	char paths[MAX_MODS][4096], ids[MAX_MODS][129];
	size_t n_mods;
	uint64_t stack[5][MAX_FRAMES];
	size_t depth[5];
	char file[256], inl_file[256];
	int take_in_helper, helper_in_twice, twice_in_a, twice_in_b, take_in_leak;
	int take_in_leaf, leaf_in_mid, mid_in_outer;
	bool binutils; /* addr2line and objcopy run */
} T;

static int load_target(int argc, char **argv)
{
	const char *bin = getenv("SYMBOLS_TEST_BIN");
	if (!bin)
		return 77;
	FILE *p = popen(bin, "r");
	if (!p)
		return 1;
	char line[8192];
	while (fgets(line, sizeof(line), p)) {
		if (strncmp(line, "module ", 7) == 0 && T.n_mods < MAX_MODS) {
			size_t i = T.n_mods++;
			struct cgtrace_module *m = &T.mods[i];
			unsigned long base, start, end;
			if (sscanf(line, "module %4095s 0x%lx 0x%lx 0x%lx %128s", T.paths[i], &base,
			           &start, &end, T.ids[i]) != 5)
				return 1;
			*m = (struct cgtrace_module){
			    T.paths[i], base, start, end, strcmp(T.ids[i], "-") ? T.ids[i] : NULL,
			    0};
		} else if (strncmp(line, "stack ", 6) == 0) {
			char *s = line + 6, *end;
			unsigned long id = strtoul(s, &end, 10);
			if (id < 1 || id > 4)
				return 1;
			for (s = end; T.depth[id] < MAX_FRAMES; s = end) {
				uint64_t a = strtoull(s, &end, 16);
				if (end == s)
					break;
				T.stack[id][T.depth[id]++] = a;
			}
		} else if (sscanf(line, "expect %255s %d %d %d %d %d", T.file, &T.take_in_helper,
		                  &T.helper_in_twice, &T.twice_in_a, &T.twice_in_b,
		                  &T.take_in_leak) == 6) {
			char *slash = strrchr(T.file, '/');
			if (slash)
				memmove(T.file, slash + 1, strlen(slash));
		} else {
			sscanf(line, "deep %255s %d %d %d", T.inl_file, &T.take_in_leaf,
			       &T.leaf_in_mid, &T.mid_in_outer);
		}
	}
	T.binutils = binutil_present("addr2line") && binutil_present("objcopy");
	if (!T.binutils)
		fprintf(stderr, "no addr2line or objcopy: symbols:as-addr2line left out\n");
	return pclose(p) == 0 && T.n_mods && T.depth[3] && T.depth[4] && T.mid_in_outer ? TEST_GO_ON
	                                                                                : 1;
}

struct warns {
	int count;
	char last[1024];
};

static void on_warn(void *user, const char *line)
{
	struct warns *w = user;
	w->count++;
	snprintf(w->last, sizeof(w->last), "%s", line);
}

static struct cgtrace_symbols *open_syms(const struct cgtrace_module *mods, size_t n,
                                         struct warns *w)
{
	struct cgtrace_read_options o = {.warn = on_warn, .user = w};
	struct cgtrace_symbols *s;
	ck_assert_int_eq(cgtrace_symbols_open(&s, mods, n, &o), 0);
	return s;
}

/* The frames of address a in s, checked to resolve; how many there are. */
static size_t resolve(struct cgtrace_symbols *s, uint64_t a, const struct cgtrace_frame **f)
{
	size_t n;
	ck_assert_int_eq(cgtrace_symbols_resolve(s, a, 0, f, &n), 0);
	return n;
}

/* sym-target's symbols, opened before each test of symbols:resolve (a checked fixture). */
static struct cgtrace_symbols *syms;
static struct warns warned;

static void open_target(void)
{
	warned = (struct warns){0};
	syms = open_syms(T.mods, T.n_mods, &warned);
}

static void close_target(void)
{
	cgtrace_symbols_close(syms);
	syms = NULL;
}

static void ck_frame_in(const struct cgtrace_frame *f, const char *function, const char *file,
                        int line, bool inlined)
{
	ck_assert_ptr_nonnull(f->function);
	ck_assert_str_eq(f->function, function);
	ck_assert_ptr_nonnull(f->file);
	const char *base = strrchr(f->file, '/');
	ck_assert_str_eq(base ? base + 1 : f->file, file);
	ck_assert_int_eq(f->line, line);
	ck_assert_int_eq(f->inlined, inlined);
	ck_assert_str_eq(f->module, T.mods[0].path);
}

static void ck_frame(const struct cgtrace_frame *f, const char *function, int line, bool inlined)
{
	ck_frame_in(f, function, T.file, line, inlined);
}

START_TEST(resolve_inlined_chain)
{
	const struct cgtrace_frame *f;
	ck_assert_uint_eq(resolve(syms, T.stack[1][0], &f), 2);
	ck_frame(&f[0], "inl_helper", T.take_in_helper, true);
	ck_frame(&f[1], "alloc_twice", T.helper_in_twice, false);
	ck_assert_uint_eq(f[0].address, T.stack[1][0]);
	ck_assert_uint_eq(f[0].offset, T.stack[1][0] - 1 - T.mods[0].base);
	ck_assert_int_eq(warned.count, 0);
}
END_TEST

START_TEST(resolve_inlined_two_files)
{
	const struct cgtrace_frame *f;
	/* Each frame at the line where it calls the one inside it, in its own file. */
	ck_assert_uint_eq(resolve(syms, T.stack[4][0], &f), 3);
	ck_frame_in(&f[0], "inl_leaf", T.inl_file, T.take_in_leaf, true);
	ck_frame_in(&f[1], "inl_mid", T.inl_file, T.leaf_in_mid, true);
	ck_frame(&f[2], "deep_outer", T.mid_in_outer, false);
	/* The file is the unit's, made absolute as addr2line prints it. */
	ck_assert_msg(f[0].file[0] == '/' && f[2].file[0] == '/', "%s %s", f[0].file, f[2].file);
}
END_TEST

START_TEST(resolve_callers)
{
	const struct cgtrace_frame *f;
	ck_assert_uint_eq(resolve(syms, T.stack[1][1], &f), 1);
	ck_frame(&f[0], "fill_a", T.twice_in_a, false);
	resolve(syms, T.stack[2][1], &f);
	ck_frame(&f[0], "fill_b", T.twice_in_b, false);
	resolve(syms, T.stack[3][0], &f);
	ck_frame(&f[0], "leak_one", T.take_in_leak, false);
	size_t n = resolve(syms, T.stack[3][1], &f);
	ck_assert_str_eq(f[n - 1].function, "main");
}
END_TEST

START_TEST(each_address_once)
{
	struct cgtrace_symbols *s = syms;
	const struct cgtrace_frame *f, *g;
	for (int round = 0; round < 3; round++)
		for (int id = 1; id <= 3; id++)
			for (size_t k = 0; k < T.depth[id]; k++)
				resolve(s, T.stack[id][k], &f);
	/* Stacks 1 and 2 share their first frame and everything above main. */
	size_t distinct = 0;
	uint64_t seen[3 * MAX_FRAMES];
	for (int id = 1; id <= 3; id++)
		for (size_t k = 0; k < T.depth[id]; k++) {
			bool dup = false;
			for (size_t j = 0; j < distinct; j++)
				dup |= seen[j] == T.stack[id][k];
			if (!dup)
				seen[distinct++] = T.stack[id][k];
		}
	ck_assert_uint_le(cgtrace_symbols_lookups(s), distinct);
	ck_assert_uint_ge(cgtrace_symbols_lookups(s), 4);
	resolve(s, T.stack[1][0], &f);
	resolve(s, T.stack[2][0], &g);
	ck_assert_ptr_eq(f, g);
}
END_TEST

START_TEST(outside_every_module)
{
	const struct cgtrace_frame *f;
	ck_assert_uint_eq(resolve(syms, 0x10, &f), 1);
	ck_assert_ptr_null(f[0].module);
	ck_assert_ptr_null(f[0].function);
	ck_assert_uint_eq(f[0].offset, 0xf);
}
END_TEST

/* Which entry holds pc for a stack defined at ns, by the scan and by the index: both must agree. */
static long module_of(const struct cgtrace_module *m, size_t n, uint64_t pc, uint64_t ns)
{
	struct cg_module_index ix;
	ck_assert_int_eq(cg_module_index_build(&ix, m, n), 0);
	long scan = cg_module_for(m, n, pc, ns), indexed = cg_module_index_find(&ix, pc, ns);
	cg_module_index_free(&ix);
	ck_assert_msg(scan == indexed, "0x%llx at %llu: scan %ld, index %ld",
	              (unsigned long long)pc, (unsigned long long)ns, scan, indexed);
	return scan;
}

START_TEST(module_rule)
{
	/* Two entries over the same range: recorded at 10 and at 50. */
	struct cgtrace_module m[3] = {
	    {"/a", 0x1000, 0x1000, 0x2000, NULL, 10},
	    {"/b", 0x1000, 0x1000, 0x2000, NULL, 50},
	    {"/c", 0x5000, 0x5000, 0x6000, NULL, 90},
	};
	ck_assert_int_eq(module_of(m, 3, 0x1800, 10), 0);
	ck_assert_int_eq(module_of(m, 3, 0x1800, 49), 0);
	ck_assert_int_eq(module_of(m, 3, 0x1800, 50), 1);
	ck_assert_int_eq(module_of(m, 3, 0x1800, 1000), 1);
	/* Defined before any: a constructor's allocation, before dlopen returned. */
	ck_assert_int_eq(module_of(m, 3, 0x5000, 5), 2);
	ck_assert_int_eq(module_of(m, 3, 0x1800, 5), 0);
	ck_assert_int_eq(module_of(m, 3, 0x2000, 100), -1);
	ck_assert_int_eq(module_of(m, 3, 0x0fff, 100), -1);
	ck_assert_int_eq(module_of(m, 0, 0x1800, 100), -1);
}
END_TEST

START_TEST(module_index_overlaps)
{
	/*
	 * A library unloaded (0) and another mapped over part of its range
	 * (1), a third inside both (2), the first mapped again (3), an
	 * empty range (4): at each address the index gives the scan's entry.
	 */
	struct cgtrace_module m[5] = {
	    {"/a", 0x1000, 0x1000, 0x4000, NULL, 10}, {"/b", 0x2000, 0x2000, 0x6000, NULL, 20},
	    {"/c", 0x3000, 0x3000, 0x3800, NULL, 30}, {"/a", 0x1000, 0x1000, 0x4000, NULL, 40},
	    {"/e", 0x3400, 0x3400, 0x3400, NULL, 5},
	};
	ck_assert_int_eq(module_of(m, 5, 0x3400, 35), 2);
	ck_assert_int_eq(module_of(m, 5, 0x3400, 45), 3);
	ck_assert_int_eq(module_of(m, 5, 0x3400, 15), 0);
	ck_assert_int_eq(module_of(m, 5, 0x3400, 1), 0);
	ck_assert_int_eq(module_of(m, 5, 0x5fff, 1), 1);
	ck_assert_int_eq(module_of(m, 5, 0x3800, 1000), 3);
	ck_assert_int_eq(module_of(m, 5, 0x6000, 1000), -1);
	/* Random entries, many overlapping, against the scan at every bound and between. */
	uint64_t x = XORSHIFT_SEED;
	enum { N = 200 };
	static struct cgtrace_module r[N];
	for (size_t i = 0; i < N; i++) {
		uint64_t start = (xorshift64(&x) % 64) * 0x1000, len = (xorshift64(&x) % 9) * 0x800;
		uint64_t ns = xorshift64(&x) % 1000;
		r[i] = (struct cgtrace_module){"/r", start, start, start + len, NULL, ns};
	}
	struct cg_module_index ix;
	ck_assert_int_eq(cg_module_index_build(&ix, r, N), 0);
	size_t held = 0;
	for (uint64_t pc = 0; pc < 0x44000; pc += 0x400)
		for (uint64_t ns = 0; ns < 1100; ns += 50) {
			long want = cg_module_for(r, N, pc - (pc & 0x400 ? 1 : 0), ns);
			ck_assert_int_eq(cg_module_index_find(&ix, pc - (pc & 0x400 ? 1 : 0), ns),
			                 want);
			held += want >= 0;
		}
	cg_module_index_free(&ix);
	ck_assert_uint_gt(held, 1000);
}
END_TEST

/*
 * A made-up symbol table, in the ELF table's order: aliases at 0x1040
 * (the LOCAL first, as a .symtab lists them), one of them longer; a
 * sized label beside a typed symbol; symbols that never name an address
 * (no size, data, no name); functions nested in another; an IFUNC; one
 * whose size runs past the top of the address space.
 */
static const struct cg_sym_in table_syms[] = {
    {0x1000, 0x40, "first", STB_GLOBAL, STT_FUNC},
    {0x1040, 0x20, "local_alias", STB_LOCAL, STT_FUNC},
    {0x1040, 0x20, "weak_alias", STB_WEAK, STT_FUNC},
    {0x1040, 0x20, "global_alias", STB_GLOBAL, STT_FUNC},
    {0x1040, 0x20, "global_later", STB_GLOBAL, STT_FUNC},
    {0x1040, 0x60, "long_alias", STB_LOCAL, STT_FUNC},
    {0x1100, 0x10, "label", STB_GLOBAL, STT_NOTYPE},
    {0x1100, 0x10, "typed", STB_LOCAL, STT_FUNC},
    {0x1200, 0, "sizeless", STB_GLOBAL, STT_FUNC},
    {0x1280, 0, "sizeless_label", STB_LOCAL, STT_NOTYPE},
    {0x1300, 0x20, "data", STB_GLOBAL, STT_OBJECT},
    {0x1340, 0x20, "", STB_GLOBAL, STT_FUNC},
    {0x1480, 0x10, "inner2", STB_LOCAL, STT_FUNC},
    {0x1400, 0x100, "outer", STB_GLOBAL, STT_FUNC},
    {0x1420, 0x10, "inner", STB_LOCAL, STT_FUNC},
    {0x1600, 0x20, "ifunc", STB_GLOBAL, STT_GNU_IFUNC},
    {0x1700, 0x10, "asm_sized", STB_LOCAL, STT_NOTYPE},
    {UINT64_MAX - 0x10, 0x100, "wraps", STB_GLOBAL, STT_FUNC},
};

static const struct {
	uint64_t pc;
	const char *name; /* NULL: module+offset */
} table_rows[] = {
    {0x0fff, NULL},
    {0x1000, "first"},
    {0x103f, "first"},
    /* GLOBAL over WEAK over LOCAL, then the table's order. */
    {0x1040, "global_alias"},
    {0x105f, "global_alias"},
    /* The longer alias names what the preferred one does not reach. */
    {0x1060, "long_alias"},
    {0x109f, "long_alias"},
    /* Past every symbol's size: no name, not the one before. */
    {0x10a0, NULL},
    {0x10ff, NULL},
    {0x1100, "typed"},
    {0x1110, NULL},
    {0x1200, NULL},
    {0x1201, NULL},
    {0x1290, NULL},
    {0x1300, NULL},
    {0x1340, NULL},
    {0x1400, "outer"},
    {0x1420, "inner"},
    {0x142f, "inner"},
    /* Past a nested symbol, back in the one around it. */
    {0x1430, "outer"},
    {0x1485, "inner2"},
    {0x1490, "outer"},
    {0x14ff, "outer"},
    {0x1500, NULL},
    {0x1600, "ifunc"},
    {0x1700, "asm_sized"},
    {0x1710, NULL},
    {UINT64_MAX - 0x10, "wraps"},
    {UINT64_MAX - 1, "wraps"},
};

START_TEST(table_rule)
{
	struct cg_sym_in in[sizeof(table_syms) / sizeof(table_syms[0])];
	memcpy(in, table_syms, sizeof(in));
	struct cg_symtab t;
	ck_assert_int_eq(cg_symtab_build(&t, in, sizeof(in) / sizeof(in[0])), 0);
	const char *got = cg_symtab_find(&t, table_rows[_i].pc);
	const char *want = table_rows[_i].name;
	ck_assert_msg(want ? got && strcmp(got, want) == 0 : !got, "0x%" PRIx64 ": %s, not %s",
	              table_rows[_i].pc, got ? got : "(none)", want ? want : "(none)");
	cg_symtab_free(&t);
}
END_TEST

START_TEST(table_empty)
{
	struct cg_symtab t;
	struct cg_sym_in only_data = {0x1000, 0x100, "data", STB_GLOBAL, STT_OBJECT};
	ck_assert_int_eq(cg_symtab_build(&t, &only_data, 1), 0);
	ck_assert_uint_eq(t.n, 0);
	ck_assert_ptr_null(cg_symtab_find(&t, 0x1000));
	cg_symtab_free(&t);
	ck_assert_int_eq(cg_symtab_build(&t, NULL, 0), 0);
	ck_assert_ptr_null(cg_symtab_find(&t, 0));
	cg_symtab_free(&t);
}
END_TEST

/* Each distinct address of sym-target's stacks, once, with its module; how many. */
static size_t target_addresses(uint64_t *out, long *mod, size_t max)
{
	size_t n = 0;
	for (int id = 1; id <= 4; id++)
		for (size_t k = 0; k < T.depth[id]; k++) {
			uint64_t a = T.stack[id][k];
			bool dup = false;
			for (size_t j = 0; j < n && !dup; j++)
				dup = out[j] == a;
			if (dup)
				continue;
			ck_assert_uint_lt(n, max);
			mod[n] = cg_module_for(T.mods, T.n_mods, a - 1, 0);
			out[n++] = a;
		}
	return n;
}

/*
 * Every frame of every address as `addr2line -i -f` gives it, in every
 * module: the function, and the line where addr2line has one. An address
 * we name by no function is past its symbol's size, where addr2line gives
 * the symbol before (docs/symbols.md): the C library's hidden functions
 * on a system without its debug file.
 */
START_TEST(frames_as_addr2line)
{
	uint64_t addrs[5 * MAX_FRAMES];
	long mod[5 * MAX_FRAMES];
	size_t n = target_addresses(addrs, mod, 5 * MAX_FRAMES), compared = 0, in_target = 0;
	for (size_t i = 0; i < n; i++) {
		const struct cgtrace_frame *f;
		size_t nf = resolve(syms, addrs[i], &f);
		if (mod[i] < 0 || !f[nf - 1].function)
			continue;
		const struct cgtrace_module *m = &T.mods[mod[i]];
		static struct a2l_frame want[A2L_MAX_CHAIN];
		size_t k = a2l("-i", m->path, addrs[i] - 1 - m->base, want);
		ck_assert_msg(nf == k, "0x%" PRIx64 " in %s: %zu frames, addr2line %zu", addrs[i],
		              m->path, nf, k);
		for (size_t j = 0; j < nf; j++) {
			ck_assert_msg(f[j].function && strcmp(f[j].function, want[j].function) == 0,
			              "0x%" PRIx64 " frame %zu: %s, addr2line %s", addrs[i], j,
			              f[j].function ? f[j].function : "??", want[j].function);
			if (want[j].line)
				ck_assert_uint_eq(f[j].line, want[j].line);
		}
		compared++;
		in_target += mod[i] == 0;
	}
	/* sym-target's own frames are all named: fill_a ... main, _start. */
	ck_assert_uint_ge(in_target, 7);
	ck_assert_uint_ge(compared, in_target);
}
END_TEST

/*
 * The ELF symbol table alone: sym-target copied without its DWARF
 * (objcopy --strip-debug keeps .symtab and the build id); each address
 * in it gives one frame, named as `addr2line -f` names it in the copy.
 */
START_TEST(elf_symbols_as_addr2line)
{
	char dir[RUNDIR_MAX], cwd[RUNDIR_MAX + 16], out[RUNDIR_MAX + 16];
	rundir_make(dir, cwd, out, "symbols-elf");
	char *copy = strf("%s/sym-target", dir);
	objcopy_to("--strip-debug", T.mods[0].path, copy);
	struct cgtrace_module mods[MAX_MODS];
	memcpy(mods, T.mods, T.n_mods * sizeof(mods[0]));
	mods[0].path = copy;
	struct warns w = {0};
	struct cgtrace_symbols *s = open_syms(mods, T.n_mods, &w);
	uint64_t addrs[5 * MAX_FRAMES];
	long mod[5 * MAX_FRAMES];
	size_t n = target_addresses(addrs, mod, 5 * MAX_FRAMES), compared = 0;
	for (size_t i = 0; i < n; i++) {
		if (mod[i] != 0)
			continue;
		const struct cgtrace_frame *f;
		ck_assert_uint_eq(resolve(s, addrs[i], &f), 1);
		ck_assert_ptr_null(f[0].file);
		static struct a2l_frame want[A2L_MAX_CHAIN];
		ck_assert_uint_ge(a2l("", copy, addrs[i] - 1 - mods[0].base, want), 1);
		ck_assert_msg(f[0].function && strcmp(f[0].function, want[0].function) == 0,
		              "0x%" PRIx64 ": %s, addr2line %s", addrs[i],
		              f[0].function ? f[0].function : "??", want[0].function);
		compared++;
	}
	/* The inlined helper's address is named by the function it was inlined into. */
	const struct cgtrace_frame *f;
	resolve(s, T.stack[1][0], &f);
	ck_assert_str_eq(f[0].function, "alloc_twice");
	ck_assert_uint_ge(compared, 7);
	ck_assert_int_eq(w.count, 0);
	cgtrace_symbols_close(s);
	remove_tree(dir);
	free(copy);
}
END_TEST

START_TEST(missing_file_warns_once)
{
	struct cgtrace_module m = T.mods[0];
	m.path = "/nonexistent/sym-target";
	struct warns w = {0};
	struct cgtrace_symbols *s = open_syms(&m, 1, &w);
	const struct cgtrace_frame *f;
	resolve(s, T.stack[1][0], &f);
	ck_assert_uint_eq(resolve(s, T.stack[3][0], &f), 1);
	ck_assert_ptr_null(f[0].function);
	ck_assert_str_eq(f[0].module, "/nonexistent/sym-target");
	ck_assert_uint_eq(f[0].offset, T.stack[3][0] - 1 - m.base);
	ck_assert_int_eq(w.count, 1);
	ck_assert_msg(strncmp(w.last, "/nonexistent/sym-target: ", 25) == 0, "%s", w.last);
	cgtrace_symbols_close(s);
}
END_TEST

START_TEST(build_id_mismatch_warns_once)
{
	struct cgtrace_module m = T.mods[0];
	ck_assert_ptr_nonnull(m.build_id);
	char other[129];
	snprintf(other, sizeof(other), "%s", m.build_id);
	other[0] = other[0] == '0' ? '1' : '0';
	m.build_id = other;
	struct warns w = {0};
	struct cgtrace_symbols *s = open_syms(&m, 1, &w);
	const struct cgtrace_frame *f;
	for (int id = 1; id <= 3; id++) {
		ck_assert_uint_eq(resolve(s, T.stack[id][0], &f), 1);
		ck_assert_ptr_null(f[0].function);
		ck_assert_ptr_null(f[0].file);
		ck_assert_uint_eq(f[0].offset, T.stack[id][0] - 1 - m.base);
	}
	ck_assert_int_eq(w.count, 1);
	ck_assert_msg(strstr(w.last, "build id") && strstr(w.last, other), "%s", w.last);
	ck_assert_uint_eq(cgtrace_symbols_lookups(s), 0);
	cgtrace_symbols_close(s);
}
END_TEST

START_TEST(allocator_frames_by_name)
{
	static const struct {
		const char *function, *module;
		bool skip;
	} cases[] = {
	    {"malloc", "/lib/libc.so.6", true},
	    {"malloc_trim", "/lib/libc.so.6", false},
	    {"__libc_calloc", NULL, true},
	    {"_Znwm", "/lib/libstdc++.so.6", true},
	    {"_ZnamRKSt9nothrow_t", NULL, true},
	    {"_ZnwmSt11align_val_t", NULL, true},
	    {"operator new[]", NULL, true},
	    {"cudaMallocAsync", "/x/libcudart.so.12", true},
	    {"cuMemAlloc_v2", NULL, true},
	    {"freedom", NULL, false},
	    {NULL, "/build/preload/libcgprobe.so", true},
	    {NULL, "/x/libcgprobe.so.0", true},
	    {NULL, "/x/libc.so.6", false},
	    {"fill_a", NULL, false},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cgtrace_frame f = {.function = cases[i].function, .module = cases[i].module};
		ck_assert_msg(cgtrace_frame_is_allocator(&f) == cases[i].skip, "%s %s",
		              cases[i].function ? cases[i].function : "-",
		              cases[i].module ? cases[i].module : "-");
	}
}
END_TEST

START_TEST(user_code_by_rules)
{
	enum { U = CGTRACE_CODE_USER, R = CGTRACE_CODE_RUNTIME, A = CGTRACE_CODE_ALLOCATOR };
	static const struct {
		const char *function, *file, *module;
		int code;
	} cases[] = {
	    /* A template function's name starts with its return type. */
	    {"void std::vector<Widget, std::allocator<Widget> >::_M_realloc_insert<>(__gnu_cxx::"
	     "__normal_iterator<Widget*, std::vector<Widget, std::allocator<Widget> > >)",
	     "/usr/include/c++/12/bits/vector.tcc", "/p/hot", R},
	    {"Widget& std::vector<Widget, std::allocator<Widget> >::emplace_back<>()", NULL,
	     "/p/hot", R},
	    {"std::__new_allocator<Widget>::allocate(unsigned long, void const*)", NULL, "/p/hot",
	     R},
	    {"__gnu_cxx::__normal_iterator<int*, std::vector<int> >::operator++()", NULL, NULL, R},
	    {"std::basic_ostream<char, std::char_traits<char> >& std::operator<< "
	     "<std::char_traits<char> >(std::basic_ostream<char, std::char_traits<char> >&, char "
	     "const*)",
	     NULL, NULL, R},
	    {"_ZNSt6vectorIiSaIiEE17_M_realloc_insertIJRKiEEEvN9__gnu_cxx17__normal_iteratorIPiS1_"
	     "EEDpOT_",
	     NULL, NULL, R},
	    /* Not qualified (a lambda's template), but in libstdc++'s headers. */
	    {"_M_create<const run(int)::<lambda(int)>&>", "/usr/include/c++/12/bits/std_function.h",
	     "/p/rich", R},
	    {NULL, NULL, "/lib/x86_64-linux-gnu/libstdc++.so.6", R},
	    {"_M_mutate", NULL, "/lib/x86_64-linux-gnu/libstdc++.so.6", R},
	    {"__cxa_allocate_exception", NULL, NULL, R},
	    {"fopen", NULL, "/lib/x86_64-linux-gnu/libc.so.6", R},
	    {"_dl_new_object", NULL, "/lib64/ld-linux-x86-64.so.2", R},
	    {"__libc_start_call_main", NULL, NULL, R},
	    /* The allocator wins over the runtime it is in; glibc's __GI_ aliases are its names. */
	    {"operator new(unsigned long)", NULL, "/lib/x86_64-linux-gnu/libstdc++.so.6", A},
	    {"__GI___strdup", "./string/strdup.c", "/lib/x86_64-linux-gnu/libc.so.6", A},
	    {"__GI___libc_malloc", NULL, "/lib/x86_64-linux-gnu/libc.so.6", A},
	    {NULL, NULL, "/b/preload/libcgprobe.so", A},
	    /* The user's: names in their own namespaces, with std types in them. */
	    {"Widget::Widget()", "/p/hot.cpp", "/p/hot", U},
	    {"main", "/p/hot.cpp", "/p/hot", U},
	    {"Point* pool::Arena<Point>::make<int&, int>(int&, int&&)", "/p/t.cc", "/p/t", U},
	    {"store(std::__cxx11::basic_string<char, std::char_traits<char>, "
	     "std::allocator<char> > const&)",
	     "/p/s.cc", "/p/s", U},
	    {"std_like()", NULL, NULL, U},
	    {"void (anonymous namespace)::fill<std::vector<int> >(std::vector<int>&)", NULL, NULL,
	     U},
	    {"app::Pool::operator new(unsigned long)", NULL, NULL, U},
	    {"cooperator()", NULL, NULL, U},
	    {NULL, NULL, "/p/libcruncher.so", U},
	    {NULL, NULL, NULL, U},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cgtrace_frame f = {.function = cases[i].function,
		                          .file = cases[i].file,
		                          .module = cases[i].module};
		ck_assert_msg((int)cgtrace_frame_code(&f) == cases[i].code, "%s %s: %d, not %d",
		              cases[i].function ? cases[i].function : "-",
		              cases[i].module ? cases[i].module : "-", (int)cgtrace_frame_code(&f),
		              cases[i].code);
		/* A module that rules its frames out rules out every one, whatever its name. */
		if (!cgtrace_module_may_be_user_code(cases[i].module))
			ck_assert_int_ne(cases[i].code, U);
	}
	ck_assert(!cgtrace_module_may_be_user_code("/lib/x86_64-linux-gnu/libc.so.6"));
	ck_assert(!cgtrace_module_may_be_user_code("/lib/x86_64-linux-gnu/libstdc++.so.6"));
	ck_assert(!cgtrace_module_may_be_user_code("/b/preload/libcgprobe.so"));
	ck_assert(!cgtrace_module_may_be_user_code("/lib64/ld-linux-x86-64.so.2"));
	ck_assert(cgtrace_module_may_be_user_code("/p/hot"));
	ck_assert(cgtrace_module_may_be_user_code("/usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13"));
	ck_assert(cgtrace_module_may_be_user_code(NULL));
}
END_TEST

START_TEST(stack_resolved_with_site)
{
	struct warns w = {0};
	struct cgtrace_symbols *s = open_syms(T.mods, T.n_mods, &w);
	struct cgtrace_stack st = {1, T.stack[1], T.depth[1], 0};
	struct cgtrace_resolved_stack rs;
	ck_assert_int_eq(cgtrace_symbols_stack(s, &st, &rs), 0);
	/* One more frame than addresses: inl_helper is inlined into alloc_twice. */
	ck_assert_uint_eq(rs.n_frames, T.depth[1] + 1);
	ck_assert_uint_eq(rs.site, 0);
	ck_frame(rs.frames[0], "inl_helper", T.take_in_helper, true);
	ck_frame(rs.frames[2], "fill_a", T.twice_in_a, false);
	struct cgtrace_stack empty = {9, NULL, 0, 0};
	ck_assert_int_eq(cgtrace_symbols_stack(s, &empty, &rs), 0);
	ck_assert_uint_eq(rs.n_frames, 0);
	ck_assert_uint_eq(rs.site, 0);
	cgtrace_symbols_close(s);
}
END_TEST

TEST_SUITE(suite, "symbols")
{
	TCase *tc = test_case(s, "symbols:resolve", 30, resolve_inlined_chain,
	                      resolve_inlined_two_files, resolve_callers, each_address_once,
	                      outside_every_module);
	tcase_add_checked_fixture(tc, open_target, close_target);
	test_case(s, "symbols:modules", 30, module_rule, module_index_overlaps,
	          missing_file_warns_once, build_id_mismatch_warns_once);
	test_rows(s, "symbols:table", 30, table_rule, 0,
	          (int)(sizeof(table_rows) / sizeof(table_rows[0])));
	test_case(s, "symbols:table-empty", 30, table_empty);
	if (T.binutils) {
		tc = test_case(s, "symbols:as-addr2line", 60, frames_as_addr2line,
		               elf_symbols_as_addr2line);
		tcase_add_checked_fixture(tc, open_target, close_target);
	}
	test_case(s, "symbols:sites", 30, allocator_frames_by_name, user_code_by_rules,
	          stack_resolved_with_site);
}

TEST_MAIN_SETUP(load_target, suite);
