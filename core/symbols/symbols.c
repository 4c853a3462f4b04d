/* SPDX-License-Identifier: MIT */
/*
 * Offline symbols through libdwfl. Each recorded module entry gets its own
 * Dwfl session, opened the first time one of its addresses is resolved: a
 * library unloaded and another loaded at the same addresses are two entries
 * that one session could not hold. Each (module, address) is resolved once;
 * the frames live in an arena until the symbols are closed, as do the
 * strings libdw hands out (its sessions stay open as long).
 */
#include "symbols.h"

#include <dlfcn.h>
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

#include "arena.h"
#include "export.h"
#include "hash.h"
#include "u64map.h"
#include "vec.h"

enum { MOD_UNTRIED, MOD_OPEN, MOD_FAILED };

struct sym_module {
	const struct cgtrace_module *m; /* in info */
	Dwfl *dwfl;
	Dwfl_Module *mod;
	int state;
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
	struct cg_arena arena;
	struct cg_vec entries; /* struct sym_entry */
	struct cg_map cache;   /* hash of (module, address) -> entry index */
	char *debuginfo_path;
	Dwfl_Callbacks callbacks;
	void (*warn)(void *user, const char *line);
	void *user;
	uint64_t lookups; /* libdw lookups made: one per distinct (module, address) */
};

static char *arena_strdup(struct cg_arena *a, const char *s)
{
	if (!s)
		return NULL;
	size_t n = strlen(s) + 1;
	char *p = cg_arena_alloc(a, n);
	if (p)
		memcpy(p, s, n);
	return p;
}

long cg_module_for(const struct cgtrace_module *mods, size_t n, uint64_t pc, uint64_t defined_ns)
{
	long before = -1, after = -1;
	for (size_t i = 0; i < n; i++) {
		if (pc < mods[i].start || pc >= mods[i].end)
			continue;
		if (mods[i].recorded_ns <= defined_ns)
			before = (long)i;
		else if (after < 0)
			after = (long)i;
	}
	return before >= 0 ? before : after;
}

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

/* The debug-file search path: CGTRACE_DEBUG_DIR's directories, then libdw's default. */
static int debug_path(struct cgtrace_symbols *s)
{
	const char *env = getenv(CG_DEBUG_DIR_ENV);
	const char *tail = ":.debug:/usr/lib/debug";
	size_t n = (env ? strlen(env) + 1 : 0) + strlen(tail) + 1;
	s->debuginfo_path = malloc(n);
	if (!s->debuginfo_path)
		return -ENOMEM;
	/* A leading ':' keeps libdw's search of the file's own directory. */
	snprintf(s->debuginfo_path, n, "%s%s%s", env && *env ? ":" : "", env && *env ? env : "",
	         tail);
	s->callbacks = (Dwfl_Callbacks){
	    .find_elf = dwfl_build_id_find_elf,
	    .find_debuginfo = dwfl_standard_find_debuginfo,
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
		m->path = arena_strdup(&s->arena, mods[i].path ? mods[i].path : "");
		m->build_id = arena_strdup(&s->arena, mods[i].build_id);
		if (!m->path || (mods[i].build_id && !m->build_id))
			r = -ENOMEM;
		s->n_mods = i + 1;
	}
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
	for (size_t i = 0; i < s->n_mods; i++)
		if (s->mods[i].dwfl)
			dwfl_end(s->mods[i].dwfl);
	free(s->mods);
	free(s->info);
	free(s->debuginfo_path);
	cg_vec_free(&s->entries, sizeof(struct sym_entry));
	cg_map_free(&s->cache);
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

/* Opens a module's session: the file on disk, checked against the recorded build id. */
static void module_open(struct cgtrace_symbols *s, struct sym_module *sm)
{
	sm->state = MOD_FAILED;
	sm->dwfl = dwfl_begin(&s->callbacks);
	if (!sm->dwfl)
		return;
	dwfl_report_begin(sm->dwfl);
	sm->mod = dwfl_report_elf(sm->dwfl, sm->m->path, sm->m->path, -1, sm->m->base, false);
	dwfl_report_end(sm->dwfl, NULL, NULL);
	if (!sm->mod) {
		/* The vDSO and the like have no file to find: no warning for what is never there.
		 */
		if (sm->m->path[0] == '/')
			warnf(s, "%s: %s; its frames are shown as module+offset", sm->m->path,
			      dwfl_errmsg(-1));
		return;
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
			return;
		}
	}
	sm->state = MOD_OPEN;
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

#define MAX_INLINE 64

/*
 * The frames of pc in an open module: each inlined subroutine around it,
 * innermost first, at the line it reached, then the function it was
 * inlined into, at the line of the call.
 */
static size_t frames_dwarf(struct sym_module *sm, uint64_t pc, struct cgtrace_frame *f,
                           const struct cgtrace_frame *proto)
{
	const char *sym =
	    dwfl_module_addrinfo(sm->mod, pc, &(GElf_Off){0}, &(GElf_Sym){0}, NULL, NULL, NULL);
	const char *file = NULL;
	int line = 0;
	Dwfl_Line *dl = dwfl_module_getsrc(sm->mod, pc);
	if (dl)
		file = dwfl_lineinfo(dl, NULL, &line, NULL, NULL, NULL);
	size_t n = 0;
	Dwarf_Addr bias;
	Dwarf_Die *cu = dwfl_module_addrdie(sm->mod, pc, &bias);
	Dwarf_Die *scopes = NULL;
	int ns = cu ? dwarf_getscopes(cu, pc - bias, &scopes) : 0;
	for (int i = 0; i < ns && n + 1 < MAX_INLINE; i++) {
		int tag = dwarf_tag(&scopes[i]);
		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
			continue;
		bool inl = tag == DW_TAG_inlined_subroutine;
		f[n] = *proto;
		f[n].function = inl || !sym ? dwarf_diename(&scopes[i]) : sym;
		f[n].file = file;
		f[n].line = file ? (uint32_t)line : 0;
		f[n].inlined = inl;
		n++;
		if (!inl)
			break;
		file = call_file(cu, &scopes[i]);
		line = (int)call_line(&scopes[i]);
	}
	free(scopes);
	if (n == 0 || f[n - 1].inlined) {
		/* No subprogram scope (no DWARF, or a gap): the ELF symbol and the line table. */
		f[n] = *proto;
		f[n].function = sym;
		f[n].file = file;
		f[n].line = file ? (uint32_t)line : 0;
		n++;
	}
	return n;
}

typedef char *(*demangle_fn)(const char *name, char *buf, size_t *len, int *status);

/*
 * C++ names demangled by the C++ runtime's own demangler when it can be
 * loaded (it is where a C++ program runs), else left mangled: the reader
 * is C and does not link it.
 */
static demangle_fn demangler(void)
{
	static demangle_fn fn;
	static bool tried;
	if (!tried) {
		tried = true;
		void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
		if (h)
			*(void **)&fn = dlsym(h, "__cxa_demangle");
	}
	return fn;
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
	char *out = arena_strdup(a, dm && status == 0 ? dm : name);
	free(dm);
	/* A versioned symbol's "@@GLIBC_2.34" names no function of its own. */
	char *at = out ? strchr(out, '@') : NULL;
	if (at && at != out)
		*at = '\0';
	return out;
}

static int resolve_new(struct cgtrace_symbols *s, uint64_t addr, long mi, struct sym_entry *e)
{
	uint64_t pc = addr ? addr - 1 : 0;
	struct cgtrace_frame proto = {.address = addr, .offset = pc};
	struct cgtrace_frame tmp[MAX_INLINE];
	size_t n = 1;
	tmp[0] = proto;
	if (mi >= 0) {
		struct sym_module *sm = &s->mods[mi];
		proto.module = sm->m->path;
		proto.offset = pc - sm->m->base;
		tmp[0] = proto;
		if (sm->state == MOD_UNTRIED)
			module_open(s, sm);
		if (sm->state == MOD_OPEN) {
			s->lookups++;
			n = frames_dwarf(sm, pc, tmp, &proto);
		}
	}
	struct cgtrace_frame *f = cg_arena_alloc(&s->arena, n * sizeof(*f));
	if (!f)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		f[i] = tmp[i];
		/* Copied: a failed module's session may be ended, and libdw's strings with it. */
		f[i].function = function_name(&s->arena, tmp[i].function);
		f[i].file = arena_strdup(&s->arena, tmp[i].file);
		if ((tmp[i].function && !f[i].function) || (tmp[i].file && !f[i].file))
			return -ENOMEM;
	}
	*e = (struct sym_entry){addr, mi, f, n};
	return 0;
}

CG_EXPORT int cgtrace_symbols_resolve(struct cgtrace_symbols *s, uint64_t addr, uint64_t defined_ns,
                                      const struct cgtrace_frame **out, size_t *n)
{
	long mi = cg_module_for(s->info, s->n_mods, addr ? addr - 1 : 0, defined_ns);
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
