/* SPDX-License-Identifier: MIT */
/*
 * A module's ELF symbol table on a real library (tests/symbols/sym-hidden.c:
 * a static and a visibility-hidden function, each past the end of an
 * export before it, and padding after each function), loaded here, its
 * points resolved from copies
 * objcopy makes: as built (.symtab and DWARF), without DWARF (.symtab
 * alone), stripped to .dynsym, and stripped with its debug part found by
 * build id under CGTRACE_DEBUG_DIR. Where no symbol covers an address (a
 * hidden function of the stripped copy, the padding) the frame stays
 * module+offset, never the export before it. Skipped (77) without
 * objcopy.
 *
 * Environment (tests/meson.build): SYMBOLS_ELF_LIB, the library.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <check.h>
#include <dlfcn.h>
#include <elf.h>
#include <inttypes.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "binutils.h"
#include "cgtrace.h"
#include "child.h"
#include "rundir.h"
#include "sym-hidden.h"
#include "symbols.h"
#include "test-main.h"

static const char *lib;

/* The library as loaded here: its points, its exports' ranges, its bias. */
static struct loaded {
	struct sym_hidden h;
	uintptr_t export_start[2], export_end[2]; /* sym_first, sym_points */
	uintptr_t first_end, base;
} L;

/* The copies of the library a test resolves from, in a run's directory. */
enum copy_kind { AS_BUILT, NO_DWARF, STRIPPED, DEBUG_FILE, N_KINDS };

struct copies {
	char dir[RUNDIR_MAX], cwd[RUNDIR_MAX + 16], out[RUNDIR_MAX + 16];
	char *path;      /* the copy resolved from */
	char *debug_dir; /* DEBUG_FILE: what CGTRACE_DEBUG_DIR names */
	char build_id[129];
};

static int load(int argc, char **argv)
{
	lib = getenv("SYMBOLS_ELF_LIB");
	if (!lib) {
		fprintf(stderr, "SYMBOLS_ELF_LIB must be set\n");
		return 1;
	}
	if (!binutil_present("objcopy")) {
		fprintf(stderr, "no objcopy: skipped\n");
		return 77;
	}
	void *handle = dlopen(lib, RTLD_NOW);
	void (*points)(struct sym_hidden *) = NULL;
	if (handle)
		*(void **)&points = dlsym(handle, "sym_points");
	struct link_map *map = NULL;
	if (!points || dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0) {
		fprintf(stderr, "%s: %s\n", lib, dlerror());
		return 1;
	}
	points(&L.h);
	L.base = map->l_addr;
	/* The exports' ranges by their .dynsym entries, as the dynamic linker reads them. */
	static const char *const exports[2] = {"sym_first", "sym_points"};
	for (int i = 0; i < 2; i++) {
		Dl_info info;
		const ElfW(Sym) *sym = NULL;
		void *at = dlsym(handle, exports[i]);
		if (!at || !dladdr1(at, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym) {
			fprintf(stderr, "%s: %s has no .dynsym entry\n", lib, exports[i]);
			return 1;
		}
		L.export_start[i] = (uintptr_t)at;
		L.export_end[i] = (uintptr_t)at + sym->st_size;
	}
	L.first_end = L.export_end[0];
	return TEST_GO_ON;
}

/* The build id of file, from its note section, in lowercase hex. */
static void read_build_id(struct copies *c, const char *file)
{
	char *note = strf("%s/build-id.note", c->dir), *scratch = strf("%s/scratch", c->dir);
	char *args = strf("--dump-section .note.gnu.build-id='%s'", note);
	objcopy_to(args, file, scratch);
	size_t len;
	unsigned char *bits = (unsigned char *)read_file(note, &len);
	ck_assert_ptr_nonnull(bits);
	/* namesz, descsz, type, "GNU\0", then the id. */
	ck_assert_uint_gt(len, 16);
	ck_assert_uint_le(len - 16, 64);
	for (size_t i = 16; i < len; i++)
		sprintf(c->build_id + 2 * (i - 16), "%02x", bits[i]);
	free(bits);
	free(args);
	free(scratch);
	free(note);
}

/* The copy of the library of kind k, made in a fresh run's directory. */
static void make_copy(struct copies *c, enum copy_kind k)
{
	rundir_make(c->dir, c->cwd, c->out, "symbols-elf");
	c->path = strf("%s/libsym-hidden.so", c->dir);
	c->debug_dir = NULL;
	read_build_id(c, lib);
	switch (k) {
	case AS_BUILT:
		objcopy_to("", lib, c->path);
		break;
	case NO_DWARF:
		objcopy_to("--strip-debug", lib, c->path);
		break;
	case STRIPPED:
		objcopy_to("--strip-all", lib, c->path);
		break;
	case DEBUG_FILE: {
		/* DIR/.build-id/xx/rest.debug, as libdw looks for it. */
		c->debug_dir = strf("%s/debug", c->dir);
		char *sub = strf("%s/.build-id", c->debug_dir);
		char *xx = strf("%s/%.2s", sub, c->build_id);
		char *debug = strf("%s/%s.debug", xx, c->build_id + 2);
		ck_assert_int_eq(mkdir(c->debug_dir, 0755), 0);
		ck_assert_int_eq(mkdir(sub, 0755), 0);
		ck_assert_int_eq(mkdir(xx, 0755), 0);
		objcopy_to("--only-keep-debug", lib, debug);
		objcopy_to("--strip-all", lib, c->path);
		free(debug);
		free(xx);
		free(sub);
		break;
	}
	default:
		ck_abort();
	}
}

static void free_copies(struct copies *c)
{
	remove_tree(c->dir);
	free(c->path);
	free(c->debug_dir);
}

/* Symbols for the copy, as loaded here; debug_dir (or none) is CGTRACE_DEBUG_DIR. */
static struct cgtrace_symbols *open_copy(const struct copies *c, const char *debug_dir)
{
	struct cgtrace_module m = {c->path, L.base, L.base, L.base + (1u << 20), c->build_id, 0};
	if (debug_dir)
		ck_assert_int_eq(setenv(CG_DEBUG_DIR_ENV, debug_dir, 1), 0);
	else
		ck_assert_int_eq(unsetenv(CG_DEBUG_DIR_ENV), 0);
	struct cgtrace_symbols *s;
	ck_assert_int_eq(cgtrace_symbols_open(&s, &m, 1, NULL), 0);
	unsetenv(CG_DEBUG_DIR_ENV);
	return s;
}

/* The one frame (the functions here inline nothing) of return address a. */
static const struct cgtrace_frame *frame_of(struct cgtrace_symbols *s, uintptr_t a)
{
	const struct cgtrace_frame *f;
	size_t n;
	ck_assert_int_eq(cgtrace_symbols_resolve(s, a, 0, &f, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(f->offset, a - 1 - L.base);
	return f;
}

static void ck_named(const struct cgtrace_frame *f, const char *want, int line)
{
	ck_assert_msg(want ? f->function && strcmp(f->function, want) == 0 : !f->function,
	              "+0x%" PRIx64 ": %s, not %s", f->offset, f->function ? f->function : "(none)",
	              want ? want : "(none)");
	if (line) {
		ck_assert_ptr_nonnull(f->file);
		ck_assert_str_eq(base_name(f->file), "sym-hidden.c");
		ck_assert_int_eq(f->line, line);
	} else {
		ck_assert_ptr_null(f->file);
	}
}

/* What each copy names each point by (NULL: module+offset), and whether lines come with them. */
static const struct {
	enum copy_kind kind;
	const char *name[SYM_POINTS];
	bool lines;
} kinds[N_KINDS] = {
    {AS_BUILT, {"sym_first", "in_static", "in_hidden", "sym_points"}, true},
    {NO_DWARF, {"sym_first", "in_static", "in_hidden", "sym_points"}, false},
    {STRIPPED, {"sym_first", NULL, NULL, "sym_points"}, false},
    {DEBUG_FILE, {"sym_first", "in_static", "in_hidden", "sym_points"}, true},
};

START_TEST(library_layout)
{
	/* Each export's point is its own; each hidden one lies past the end of an export. */
	for (int i = 0; i < 2; i++) {
		uintptr_t pc = (uintptr_t)L.h.point[i ? SYM_IN_LAST : SYM_IN_FIRST] - 1;
		ck_assert(L.export_start[i] <= pc && pc < L.export_end[i]);
	}
	for (int p = SYM_IN_STATIC; p <= SYM_IN_HIDDEN; p++) {
		uintptr_t pc = (uintptr_t)L.h.point[p] - 1, before = 0;
		for (int i = 0; i < 2; i++)
			if (L.export_start[i] <= pc && L.export_start[i] > before)
				before = L.export_start[i];
		ck_assert_msg(before, "point %d before every export", p);
		ck_assert_uint_le(before == L.export_start[0] ? L.export_end[0] : L.export_end[1],
		                  pc);
	}
	/* Padding after sym_first, whatever follows it starting 64-aligned. */
	ck_assert_uint_ne(L.first_end % 64, 0);
}
END_TEST

START_TEST(points_by_copy)
{
	struct copies c;
	make_copy(&c, kinds[_i].kind);
	struct cgtrace_symbols *s = open_copy(&c, c.debug_dir);
	for (int p = 0; p < SYM_POINTS; p++) {
		const struct cgtrace_frame *f = frame_of(s, (uintptr_t)L.h.point[p]);
		ck_assert_str_eq(f->module, c.path);
		ck_named(f, kinds[_i].name[p], kinds[_i].lines ? L.h.line[p] : 0);
	}
	/* sym_first's last byte is its own; the padding after it is nobody's. */
	ck_assert_str_eq(frame_of(s, L.first_end)->function, "sym_first");
	ck_assert_ptr_null(frame_of(s, L.first_end + 1)->function);
	cgtrace_symbols_close(s);
	free_copies(&c);
}
END_TEST

START_TEST(debug_file_by_build_id)
{
	/* The same stripped copy without the directory: the names were the debug file's. */
	struct copies c;
	make_copy(&c, DEBUG_FILE);
	struct cgtrace_symbols *s = open_copy(&c, NULL);
	ck_assert_ptr_null(frame_of(s, (uintptr_t)L.h.point[SYM_IN_STATIC])->function);
	ck_assert_str_eq(frame_of(s, (uintptr_t)L.h.point[SYM_IN_LAST])->function, "sym_points");
	cgtrace_symbols_close(s);
	s = open_copy(&c, c.debug_dir);
	const struct cgtrace_frame *f = frame_of(s, (uintptr_t)L.h.point[SYM_IN_HIDDEN]);
	ck_named(f, "in_hidden", L.h.line[SYM_IN_HIDDEN]);
	cgtrace_symbols_close(s);
	free_copies(&c);
}
END_TEST

TEST_SUITE(suite, "symbols-elf")
{
	test_case(s, "symtab:layout", 30, library_layout);
	test_rows(s, "symtab:copies", 60, points_by_copy, 0, N_KINDS);
	test_case(s, "symtab:debug-file", 60, debug_file_by_build_id);
}

TEST_MAIN_SETUP(load, suite);
