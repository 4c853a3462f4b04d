/* SPDX-License-Identifier: MIT */
/*
 * Offline symbols through libdwfl. Each recorded module entry gets its own
 * Dwfl session, opened the first time one of its addresses is resolved: a
 * library unloaded and another loaded at the same addresses are two entries
 * that one session could not hold. The session reads the module's
 * function symbols once into a sorted table (symtab.h); libdw gives the
 * lines and the inlined frames. Each (module, address) is resolved once;
 * the frames live in an arena until the symbols are closed, as do the
 * strings libdw hands out (its sessions stay open as long).
 */
#include "symbols.h"

#include <dlfcn.h>
#include <pthread.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <dwarf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arena.h"
#include "export.h"
#include "hash.h"
#include "module_index.h"
#include "py_frames.h"
#include "symtab.h"
#include "u64map.h"
#include "vec.h"

enum { MOD_UNTRIED, MOD_OPEN, MOD_FAILED };

struct sym_module {
	const struct cgtrace_module *m; /* in info */
	Dwfl *dwfl;
	Dwfl_Module *mod;
	struct cg_symtab syms; /* its function symbols, once open */
	int state;
};

/*
 * A string of libdw's as frames carry it: a function name demangled, a
 * file name made absolute. libdw's strings stay where they are while the
 * sessions are open, so the raw pointers (and the unit's directory) are
 * the key: each name is demangled and copied once, however many
 * addresses reach the function.
 */
struct sym_string {
	const char *raw, *dir;
	const char *out; /* in the arena */
	bool is_file;
};

/* One resolved (module, address): its frames in the arena. */
struct sym_entry {
	uint64_t addr;
	long module;
	const struct cgtrace_frame *frames;
	size_t n;
};

struct cgtrace_symbols {
	struct cgtrace_module *info; /* the recorded modules, strings in the arena */
	struct sym_module *mods;
	size_t n_mods;
	struct cg_module_index index; /* over info */
	struct cg_arena arena;
	struct cg_vec entries;    /* struct sym_entry */
	struct cg_map cache;      /* hash of (module, address) -> entry index */
	struct cg_vec strings;    /* struct sym_string */
	struct cg_map string_map; /* hash of (raw, dir) -> strings index */
	char *debuginfo_path;
	Dwfl_Callbacks callbacks;
	void (*warn)(void *user, const char *line);
	void *user;
	uint64_t lookups; /* libdw lookups made: one per distinct (module, address) */
	struct cg_py_symbols py; /* the code objects Python frames name */
};

static void warnf(struct cgtrace_symbols *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void warnf(struct cgtrace_symbols *s, const char *fmt, ...)
{
	if (!s->warn)
		return;
	char line[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	s->warn(s->user, line);
}

/* CGTRACE_DEBUG_DIR's directories, then libdw's default; a leading ':' keeps the file's own. */
static const char *search_path(char *buf, size_t len)
{
	const char *env = getenv(CG_DEBUG_DIR_ENV);
	snprintf(buf, len, "%s%s:.debug:/usr/lib/debug", env && *env ? ":" : "", env && *env ? env : "");
	return buf;
}

/* Whether a debug-link file of name link exists where libdw looks for one, along path. */
static bool debuglink_here(const char *path, const char *file, const char *link)
{
	const char *slash = file ? strrchr(file, '/') : NULL;
	int dir_len = slash ? (int)(slash - file) : 0;
	char buf[4096];
	for (const char *p = path; p;) {
		const char *end = strchr(p, ':');
		int n = end ? (int)(end - p) : (int)strlen(p);
		/* "": the file's own directory; relative: under it; absolute: the file's directory under it. */
		if (n == 0)
			snprintf(buf, sizeof(buf), "%.*s/%s", dir_len, file, link);
		else if (p[0] != '/')
			snprintf(buf, sizeof(buf), "%.*s/%.*s/%s", dir_len, file, n, p, link);
		else
			snprintf(buf, sizeof(buf), "%.*s%.*s/%s", n, p, dir_len, file, link);
		if (access(buf, R_OK) == 0)
			return true;
		p = end ? end + 1 : NULL;
	}
	return false;
}

/*
 * A module's debug file: by build id first (as Debian's and Fedora's
 * packages lay them out), then libdw's standard search of the debug link,
 * and of debuginfod where DEBUGINFOD_URLS names servers. Without servers,
 * the standard search is only made where a debug-link file is there to
 * find: it would load the debuginfod client for nothing (curl and a TLS
 * stack, some 25 libraries read from disk, for libtorch alone).
 */
static int find_debuginfo(Dwfl_Module *mod, void **user, const char *modname, Dwarf_Addr base,
			  const char *file, const char *link, GElf_Word crc, char **name)
{
	int fd = dwfl_build_id_find_debuginfo(mod, user, modname, base, file, link, crc, name);
	if (fd >= 0)
		return fd;
	const char *urls = getenv("DEBUGINFOD_URLS");
	char path[4096];
	if ((urls && *urls) ||
	    (link && file && debuglink_here(search_path(path, sizeof(path)), file, link)))
		return dwfl_standard_find_debuginfo(mod, user, modname, base, file, link, crc, name);
	return -1;
}

/* The debug-file search path: CGTRACE_DEBUG_DIR's directories, then libdw's default. */
static int debug_path(struct cgtrace_symbols *s)
{
	char buf[4096];
	s->debuginfo_path = strdup(search_path(buf, sizeof(buf)));
	if (!s->debuginfo_path)
		return -ENOMEM;
	s->callbacks = (Dwfl_Callbacks){
	    .find_elf = dwfl_build_id_find_elf,
	    .find_debuginfo = find_debuginfo,
	    .debuginfo_path = &s->debuginfo_path,
	};
	return 0;
}

CG_EXPORT int cgtrace_symbols_open(struct cgtrace_symbols **out, const struct cgtrace_module *mods,
                                   size_t n, const struct cgtrace_read_options *opts)
{
	*out = NULL;
	struct cgtrace_symbols *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	cg_arena_init(&s->arena);
	s->mods = calloc(n ? n : 1, sizeof(*s->mods));
	s->info = calloc(n ? n : 1, sizeof(*s->info));
	int r = s->mods && s->info ? debug_path(s) : -ENOMEM;
	for (size_t i = 0; r == 0 && i < n; i++) {
		struct cgtrace_module *m = &s->info[i];
		s->mods[i].m = m;
		*m = mods[i];
		m->path = cg_arena_strdup(&s->arena, mods[i].path ? mods[i].path : "");
		m->build_id = cg_arena_strdup(&s->arena, mods[i].build_id);
		if (!m->path || (mods[i].build_id && !m->build_id))
			r = -ENOMEM;
		s->n_mods = i + 1;
	}
	if (r == 0)
		r = cg_module_index_build(&s->index, s->info, s->n_mods);
	if (r < 0) {
		cgtrace_symbols_close(s);
		return r;
	}
	if (opts) {
		s->warn = opts->warn;
		s->user = opts->user;
	}
	*out = s;
	return 0;
}

CG_EXPORT void cgtrace_symbols_close(struct cgtrace_symbols *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n_mods; i++) {
		cg_symtab_free(&s->mods[i].syms);
		if (s->mods[i].dwfl)
			dwfl_end(s->mods[i].dwfl);
	}
	cg_module_index_free(&s->index);
	cg_py_symbols_free(&s->py);
	free(s->mods);
	free(s->info);
	free(s->debuginfo_path);
	cg_vec_free(&s->entries, sizeof(struct sym_entry));
	cg_map_free(&s->cache);
	cg_vec_free(&s->strings, sizeof(struct sym_string));
	cg_map_free(&s->string_map);
	cg_arena_fini(&s->arena);
	free(s);
}

void *cg_symbols_alloc(struct cgtrace_symbols *s, size_t n)
{
	return cg_arena_alloc(&s->arena, n ? n : 1);
}

CG_EXPORT uint64_t cgtrace_symbols_lookups(const struct cgtrace_symbols *s)
{
	return s->lookups;
}

static void hex(char *out, const unsigned char *bits, int len)
{
	for (int i = 0; i < len; i++)
		sprintf(out + 2 * i, "%02x", bits[i]);
	out[2 * (len > 0 ? len : 0)] = '\0';
}

/*
 * Opens a module's session: the file on disk, checked against the
 * recorded build id, and its symbol table. -ENOMEM, else 0 (a module that
 * cannot be opened keeps module+offset frames).
 */
static int module_open(struct cgtrace_symbols *s, struct sym_module *sm)
{
	sm->state = MOD_FAILED;
	sm->dwfl = dwfl_begin(&s->callbacks);
	if (!sm->dwfl)
		return 0;
	dwfl_report_begin(sm->dwfl);
	sm->mod = dwfl_report_elf(sm->dwfl, sm->m->path, sm->m->path, -1, sm->m->base, false);
	dwfl_report_end(sm->dwfl, NULL, NULL);
	if (!sm->mod) {
		/* The vDSO and the like have no file to find: no warning for what is never there.
		 */
		if (sm->m->path[0] == '/')
			warnf(s, "%s: %s; its frames are shown as module+offset", sm->m->path,
			      dwfl_errmsg(-1));
		return 0;
	}
	if (sm->m->build_id) {
		const unsigned char *bits;
		GElf_Addr vaddr;
		int len = dwfl_module_build_id(sm->mod, &bits, &vaddr);
		char disk[2 * 64 + 1] = "";
		if (len > 0 && len <= 64)
			hex(disk, bits, len);
		if (strcmp(disk, sm->m->build_id) != 0) {
			warnf(s,
			      "%s: build id %s on disk, %s in the trace; its frames are shown as "
			      "module+offset",
			      sm->m->path, disk[0] ? disk : "(none)", sm->m->build_id);
			return 0;
		}
	}
	int r = cg_symtab_read(&sm->syms, sm->mod);
	if (r == 0)
		sm->state = MOD_OPEN;
	return r;
}

static const char *call_file(Dwarf_Die *cu, Dwarf_Die *die)
{
	Dwarf_Attribute a;
	Dwarf_Word idx;
	Dwarf_Files *files;
	size_t n;
	if (dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &a), &idx) != 0 ||
	    dwarf_getsrcfiles(cu, &files, &n) != 0 || idx >= n)
		return NULL;
	return dwarf_filesrc(files, idx, NULL, NULL);
}

static uint32_t call_line(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	Dwarf_Word v;
	if (dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &a), &v) != 0)
		return 0;
	return (uint32_t)v;
}

/* The most frames one address gives; below a deeper inline chain the middle is left out. */
#define MAX_INLINE 128

/* A DIE's string attribute, through its abstract origin and its specification. */
static const char *die_string(Dwarf_Die *die, unsigned int name)
{
	Dwarf_Attribute a;
	return dwarf_formstring(dwarf_attr_integrate(die, name, &a));
}

/*
 * The linkage name of a function's DIE, found through the abstract origin
 * of an inlined or cloned copy and the specification of an out-of-class
 * definition: it demangles to the qualified name with its parameters.
 */
static const char *die_linkage_name(Dwarf_Die *die)
{
	const char *name = die_string(die, DW_AT_linkage_name);
	return name ? name : die_string(die, DW_AT_MIPS_linkage_name);
}

/* In a C unit a function's DW_AT_name is its linkage name; in a C++ unit it is not. */
static bool unit_is_cxx(Dwarf_Die *cu)
{
	int lang = dwarf_srclang(cu);
	return lang == DW_LANG_C_plus_plus || lang == DW_LANG_C_plus_plus_03 ||
	       lang == DW_LANG_C_plus_plus_11 || lang == DW_LANG_C_plus_plus_14;
}

/*
 * A frame's function name: the DIE's linkage name, else its DW_AT_name.
 * But where pc is in a C++ function's own code (no inlined code around
 * it) and the function has no linkage name (main, extern "C"), the ELF
 * symbol, which also names the part pc is in (main.cold), as addr2line
 * prints it.
 */
static const char *frame_name(Dwarf_Die *cu, Dwarf_Die *die, bool own_code, const char *sym)
{
	const char *name = die_linkage_name(die);
	if (name)
		return name;
	if (own_code && sym && unit_is_cxx(cu))
		return sym;
	name = die_string(die, DW_AT_name);
	return name ? name : sym;
}

struct func_at {
	Dwarf_Addr pc;
	Dwarf_Die die;
	bool found;
};

static int func_at_pc(Dwarf_Die *die, void *arg)
{
	struct func_at *fa = arg;
	if (dwarf_haspc(die, fa->pc) <= 0)
		return DWARF_CB_OK;
	fa->die = *die;
	fa->found = true;
	return DWARF_CB_ABORT;
}

/* The child of die whose code holds pc and may hold a function's (inlined or nested) code. */
static bool child_at(Dwarf_Die *die, Dwarf_Addr pc, Dwarf_Die *child)
{
	if (dwarf_child(die, child) != 0)
		return false;
	do {
		int tag = dwarf_tag(child);
		if ((tag == DW_TAG_inlined_subroutine || tag == DW_TAG_lexical_block ||
		     tag == DW_TAG_subprogram) &&
		    dwarf_haspc(child, pc) > 0)
			return true;
	} while (dwarf_siblingof(child, child) == 0);
	return false;
}

/*
 * The functions around pc as they nest in the code, outermost first into
 * out (MAX_INLINE of them): the real function whose code holds pc, then
 * each inlined subroutine down to the innermost. Not dwarf_getscopes:
 * above an inlined subroutine it gives the scopes of the inlined
 * function's own definition instead, and none at all when that is in
 * another unit, as it is after link-time optimization. Inside a function
 * the scopes holding pc nest, so the descent needs no backtracking.
 */
static int nested_functions(Dwarf_Die *cu, Dwarf_Addr pc, Dwarf_Die *out)
{
	struct func_at fa = {.pc = pc};
	dwarf_getfuncs(cu, func_at_pc, &fa, 0);
	if (!fa.found)
		return 0;
	int n = 0;
	out[n++] = fa.die;
	Dwarf_Die cur = fa.die, child;
	while (child_at(&cur, pc, &child)) {
		cur = child;
		if (dwarf_tag(&child) == DW_TAG_lexical_block)
			continue;
		/* Past the last slot, the innermost replaces the one before it. */
		out[n < MAX_INLINE ? n++ : n - 1] = child;
	}
	return n;
}

static void frame_at(struct cgtrace_frame *f, const struct cgtrace_frame *proto,
                     const char *function, const char *file, int line, bool inlined)
{
	*f = *proto;
	f->function = function;
	f->file = file;
	f->line = file && line > 0 ? (uint32_t)line : 0;
	f->inlined = inlined;
}

/*
 * The frames of pc in an open module, innermost first: the function whose
 * code pc is in at the line table's line, then each function it was
 * inlined into, at the line of the call (the call file and line of the
 * inlined DIE it holds), ending with the real function, not inlined.
 * Without DWARF around pc, the ELF symbol.
 */
static size_t frames_dwarf(struct sym_module *sm, uint64_t pc, struct cgtrace_frame *f,
                           const struct cgtrace_frame *proto, const char **comp_dir)
{
	const char *sym = cg_symtab_find(&sm->syms, pc);
	const char *file = NULL;
	int line = 0;
	Dwarf_Addr bias;
	Dwarf_Die *cu = dwfl_module_addrdie(sm->mod, pc, &bias);
	/* libdwfl gives an address in no unit (a crt file's _start) to the unit before it. */
	if (cu && dwarf_haspc(cu, pc - bias) <= 0)
		cu = NULL;
	Dwarf_Attribute a;
	*comp_dir = cu ? dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &a)) : NULL;
	Dwfl_Line *dl = cu ? dwfl_module_getsrc(sm->mod, pc) : NULL;
	if (dl)
		file = dwfl_lineinfo(dl, NULL, &line, NULL, NULL, NULL);
	Dwarf_Die nest[MAX_INLINE];
	int nn = cu ? nested_functions(cu, pc - bias, nest) : 0;
	size_t n = 0;
	/* Innermost first; a nested function's enclosing ones are not its callers. */
	for (int i = nn - 1; i >= 0; i--) {
		bool inl = dwarf_tag(&nest[i]) == DW_TAG_inlined_subroutine;
		frame_at(&f[n], proto, frame_name(cu, &nest[i], !inl && n == 0, sym), file, line,
		         inl);
		n++;
		if (!inl)
			break;
		file = call_file(cu, &nest[i]);
		line = (int)call_line(&nest[i]);
	}
	/* No subprogram around pc (no DWARF, or a gap): the ELF symbol at the last line. */
	if (n == 0 || f[n - 1].inlined)
		frame_at(&f[n++], proto, sym, file, line, false);
	return n;
}

typedef char *(*demangle_fn)(const char *name, char *buf, size_t *len, int *status);

/*
 * C++ names demangled by the C++ runtime's own demangler when it can be
 * loaded (it is where a C++ program runs), else left mangled: the reader
 * is C and does not link it.
 */
static demangle_fn demangle_found;

static void demangler_load(void)
{
	void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
	if (h)
		*(void **)&demangle_found = dlsym(h, "__cxa_demangle");
}

/*
 * Once for all threads: traces read side by side (--jobs, diff's two
 * sides) must not see each other's load half done and go undemangled.
 */
static demangle_fn demangler(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, demangler_load);
	return demangle_found;
}

/* The function's name as it goes out: demangled, without a symbol version. */
static char *function_name(struct cg_arena *a, const char *name)
{
	if (!name)
		return NULL;
	char *dm = NULL;
	demangle_fn fn = strncmp(name, "_Z", 2) == 0 ? demangler() : NULL;
	int status = -1;
	if (fn)
		dm = fn(name, NULL, NULL, &status);
	char *out = cg_arena_strdup(a, dm && status == 0 ? dm : name);
	free(dm);
	/* A versioned symbol's "@@GLIBC_2.34" names no function of its own. */
	char *at = out ? strchr(out, '@') : NULL;
	if (at && at != out)
		*at = '\0';
	return out;
}

/* A unit's file name as addr2line gives it: relative ones under the unit's directory. */
static char *file_name(struct cg_arena *a, const char *dir, const char *file)
{
	if (file[0] == '/' || !dir || !dir[0])
		return cg_arena_strdup(a, file);
	size_t nd = strlen(dir), nf = strlen(file);
	char *out = cg_arena_alloc(a, nd + 1 + nf + 1);
	if (out) {
		memcpy(out, dir, nd);
		out[nd] = '/';
		memcpy(out + nd + 1, file, nf + 1);
	}
	return out;
}

/* raw as it goes out: a function name, or a file of the unit in dir; NULL: no memory. */
static const char *out_string(struct cgtrace_symbols *s, const char *raw, const char *dir,
                              bool is_file)
{
	uint64_t key = cg_hash_mix64((uint64_t)(uintptr_t)raw) ^
	               cg_hash_mix64((uint64_t)(uintptr_t)dir * 2 + is_file);
	uint32_t pos = UINT32_MAX, val;
	while (cg_map_next(&s->string_map, key, &pos, &val)) {
		const struct sym_string *e = CG_VEC_AT(&s->strings, struct sym_string, val);
		if (e->raw == raw && e->dir == dir && e->is_file == is_file)
			return e->out;
	}
	const char *out = is_file ? file_name(&s->arena, dir, raw) : function_name(&s->arena, raw);
	struct sym_string *e = out ? CG_VEC_PUSH(&s->strings, struct sym_string) : NULL;
	if (!e)
		return NULL;
	*e = (struct sym_string){raw, dir, out, is_file};
	if (cg_map_put(&s->string_map, key, (uint32_t)(s->strings.len - 1)) < 0) {
		s->strings.len--;
		return NULL;
	}
	return out;
}

CG_EXPORT int cgtrace_symbols_python(struct cgtrace_symbols *s, const struct cgtrace_py_code *codes,
				     size_t n)
{
	return cg_py_symbols_add(&s->py, &s->arena, codes, n);
}

static int resolve_new(struct cgtrace_symbols *s, uint64_t addr, long mi, struct sym_entry *e)
{
	if ((addr & CGTRACE_PY_FRAME) && s->py.on) {
		struct cgtrace_frame *f = cg_arena_alloc(&s->arena, sizeof(*f));
		if (!f)
			return -ENOMEM;
		cg_py_symbols_frame(&s->py, addr, f);
		*e = (struct sym_entry){addr, -1, f, 1};
		return 0;
	}
	uint64_t pc = addr ? addr - 1 : 0;
	struct cgtrace_frame proto = {.address = addr, .offset = pc};
	struct cgtrace_frame tmp[MAX_INLINE + 1]; /* and the ELF symbol */
	const char *dir = NULL;
	size_t n = 1;
	tmp[0] = proto;
	if (mi >= 0) {
		struct sym_module *sm = &s->mods[mi];
		proto.module = sm->m->path;
		proto.offset = pc - sm->m->base;
		tmp[0] = proto;
		int r = sm->state == MOD_UNTRIED ? module_open(s, sm) : 0;
		if (r < 0)
			return r;
		if (sm->state == MOD_OPEN) {
			s->lookups++;
			n = frames_dwarf(sm, pc, tmp, &proto, &dir);
		}
	}
	struct cgtrace_frame *f = cg_arena_alloc(&s->arena, n * sizeof(*f));
	if (!f)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		f[i] = tmp[i];
		f[i].function =
		    tmp[i].function ? out_string(s, tmp[i].function, NULL, false) : NULL;
		f[i].file = tmp[i].file ? out_string(s, tmp[i].file, dir, true) : NULL;
		if ((tmp[i].function && !f[i].function) || (tmp[i].file && !f[i].file))
			return -ENOMEM;
	}
	*e = (struct sym_entry){addr, mi, f, n};
	return 0;
}

CG_EXPORT const struct cgtrace_module *cgtrace_symbols_module(const struct cgtrace_symbols *s,
							      uint64_t addr, uint64_t defined_ns)
{
	long mi = (addr & CGTRACE_PY_FRAME) && s->py.on
		      ? -1
		      : cg_module_index_find(&s->index, addr ? addr - 1 : 0, defined_ns);
	return mi < 0 ? NULL : s->mods[mi].m;
}

CG_EXPORT int cgtrace_symbols_resolve(struct cgtrace_symbols *s, uint64_t addr, uint64_t defined_ns,
                                      const struct cgtrace_frame **out, size_t *n)
{
	long mi = (addr & CGTRACE_PY_FRAME) && s->py.on
		      ? -1
		      : cg_module_index_find(&s->index, addr ? addr - 1 : 0, defined_ns);
	uint64_t key = cg_hash_mix64(addr) ^ (uint64_t)(mi + 1);
	uint32_t pos = UINT32_MAX, val;
	while (cg_map_next(&s->cache, key, &pos, &val)) {
		const struct sym_entry *e = CG_VEC_AT(&s->entries, struct sym_entry, val);
		if (e->addr == addr && e->module == mi) {
			*out = e->frames;
			*n = e->n;
			return 0;
		}
	}
	struct sym_entry *e = CG_VEC_PUSH(&s->entries, struct sym_entry);
	if (!e)
		return -ENOMEM;
	int r = resolve_new(s, addr, mi, e);
	if (r == 0)
		r = cg_map_put(&s->cache, key, (uint32_t)(s->entries.len - 1));
	if (r < 0) {
		s->entries.len--;
		return r;
	}
	*out = e->frames;
	*n = e->n;
	return 0;
}
