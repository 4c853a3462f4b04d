/* SPDX-License-Identifier: MIT */
/*
 * Allocation sites for top, leaks, memory and the folded export: the
 * per-stack figures of a streamed read, each stack resolved once through
 * the recorded modules (site-rows.c ranks them).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/*
 * The rankings: their names, with what each means for cgtrace top's help,
 * and which figure each ranks by, described once.
 */
const struct cli_choice cli_by_choices[] = {
    [CLI_BY_PEAK] = {"peak", "bytes each site held at its device's peak (the default)"},
    [CLI_BY_TOTAL] = {"total", "bytes allocated in all"},
    [CLI_BY_COUNT] = {"count", "allocations made"},
    [CLI_BY_LEAKED] = {"leaked", "bytes never freed"},
    [CLI_BY_TEMPORARY] = {"temporary", "allocations freed right after they were made, no other\n"
				       "allocation or free in between (as heaptrack counts)"},
    {NULL, NULL},
};

static const struct {
	size_t value; /* offset in struct cgtrace_stack_stat */
	bool bytes;
} by_table[] = {
    [CLI_BY_PEAK] = {offsetof(struct cgtrace_stack_stat, peak_bytes), true},
    [CLI_BY_TOTAL] = {offsetof(struct cgtrace_stack_stat, total_bytes), true},
    [CLI_BY_COUNT] = {offsetof(struct cgtrace_stack_stat, count), false},
    [CLI_BY_LEAKED] = {offsetof(struct cgtrace_stack_stat, leaked_bytes), true},
    [CLI_BY_TEMPORARY] = {offsetof(struct cgtrace_stack_stat, temporary_count), false},
};

_Static_assert(sizeof(cli_by_choices) / sizeof(cli_by_choices[0]) ==
		       sizeof(by_table) / sizeof(by_table[0]) + 1,
	       "one name per ranking");
/* --by is a CLI_OPT_CHOICE: the parser stores the index as an int. */
_Static_assert(sizeof(enum cli_by) == sizeof(int), "enum cli_by is stored as an int");

bool cli_by_parse(const char *name, enum cli_by *out)
{
	int i = cli_choice_find(cli_by_choices, name);
	if (i < 0)
		return false;
	*out = (enum cli_by)i;
	return true;
}

const char *cli_by_name(enum cli_by by)
{
	return cli_by_choices[by].name;
}

uint64_t cli_by_value(const struct cgtrace_stack_stat *s, enum cli_by by)
{
	uint64_t v;
	memcpy(&v, (const char *)s + by_table[by].value, sizeof(v));
	return v;
}

bool cli_by_bytes(enum cli_by by)
{
	return by_table[by].bytes;
}

const struct cli_choice cli_site_choices[] = {
    {"python", "a stack with Python frames has its site among them: the\n"
               "innermost in the user's code, else the innermost (the default)"},
    {"native", "the first native frame in the user's code, Python frames\npassed over"},
    {NULL, NULL},
};
enum cli_site cli_site_mode = CLI_SITE_PYTHON;

/* The warnings said so far: the ranks of a job share their modules, and one line says it. */
#define WARNINGS_KEPT 256
static pthread_mutex_t warned_lock = PTHREAD_MUTEX_INITIALIZER;
static char *warned[WARNINGS_KEPT];
static size_t n_warned;

static void print_warning(void *user, const char *line)
{
	(void)user;
	pthread_mutex_lock(&warned_lock);
	bool again = false;
	for (size_t i = 0; i < n_warned && !again; i++)
		again = strcmp(warned[i], line) == 0;
	if (!again && n_warned < WARNINGS_KEPT && (warned[n_warned] = strdup(line)))
		n_warned++;
	if (!again)
		fprintf(stderr, "cgtrace: %s\n", line);
	pthread_mutex_unlock(&warned_lock);
}

/* Symbols for the document's modules; stacks are resolved when asked for. */
static int open_symbols(struct cli_sites *s)
{
	size_t nm = cgtrace_doc_module_count(s->doc);
	struct cgtrace_module *mods = calloc(nm ? nm : 1, sizeof(*mods));
	if (!mods)
		return -ENOMEM;
	for (size_t i = 0; i < nm; i++)
		mods[i] = *cgtrace_doc_module(s->doc, i);
	struct cgtrace_read_options o = {.warn = print_warning};
	int r = cgtrace_symbols_open(&s->syms, mods, nm, &o);
	free(mods);
	if (r < 0)
		return r;
	s->addrs = malloc(CLI_STACK_FRAMES_MAX * sizeof(*s->addrs));
	if (!s->addrs)
		return -ENOMEM;
	s->python = cgtrace_doc_python(s->doc);
	if (!s->python)
		return 0;
	size_t np = cgtrace_doc_py_code_count(s->doc);
	struct cgtrace_py_code *codes = calloc(np ? np : 1, sizeof(*codes));
	if (!codes)
		return -ENOMEM;
	for (size_t i = 0; i < np; i++)
		codes[i] = *cgtrace_doc_py_code_at(s->doc, i);
	r = cgtrace_symbols_python(s->syms, codes, np);
	free(codes);
	return r;
}

static size_t ref_slot(const struct cli_sites *s, uint64_t id)
{
	size_t i = (size_t)((id * 0x9e3779b97f4a7c15ull) >> 20) & (s->cap_refs - 1);
	while (s->refs[i].id && s->refs[i].id != id)
		i = (i + 1) & (s->cap_refs - 1);
	return i;
}

static int refs_grow(struct cli_sites *s)
{
	size_t cap = s->cap_refs ? s->cap_refs * 2 : 1024;
	struct cli_stack_ref *old = s->refs, *neu = calloc(cap, sizeof(*neu));
	if (!neu)
		return -ENOMEM;
	size_t old_cap = s->cap_refs;
	s->refs = neu;
	s->cap_refs = cap;
	for (size_t i = 0; i < old_cap; i++)
		if (old[i].id)
			s->refs[ref_slot(s, old[i].id)] = old[i];
	free(old);
	return 0;
}

static size_t code_slot(const struct cli_sites *s, const struct cgtrace_frame *f)
{
	size_t i = (size_t)(((uintptr_t)f * 0x9e3779b97f4a7c15ull) >> 24) & (s->cap_codes - 1);
	while (s->codes[i].frame && s->codes[i].frame != f)
		i = (i + 1) & (s->cap_codes - 1);
	return i;
}

/*
 * The frame's code, matched against the rules once per frame: a
 * framework's hundreds of thousands of stacks share some 10^5 frames.
 */
static enum cgtrace_code code_of(struct cli_sites *s, const struct cgtrace_frame *f)
{
	if ((s->n_codes + 1) * 2 > s->cap_codes) {
		struct cli_frame_code *old = s->codes;
		size_t old_cap = s->cap_codes, cap = old_cap ? old_cap * 2 : 1024;
		struct cli_frame_code *codes = calloc(cap, sizeof(*codes));
		if (!codes)
			return cgtrace_frame_code(f);
		s->codes = codes;
		s->cap_codes = cap;
		for (size_t i = 0; i < old_cap; i++)
			if (old[i].frame)
				s->codes[code_slot(s, old[i].frame)] = old[i];
		free(old);
	}
	size_t i = code_slot(s, f);
	if (!s->codes[i].frame) {
		s->codes[i] = (struct cli_frame_code){f, cgtrace_frame_code(f)};
		s->n_codes++;
	}
	return s->codes[i].code;
}

/*
 * The first of the n addresses of s->addrs with a frame in the user's
 * code, and that frame in *site (n and NULL: none). It passes, without
 * resolving them, the addresses of modules whose frames are never the
 * user's (the C library under malloc, whose debug information alone is
 * 12 MB to read): most stacks reach a frame of the user's before the end.
 */
static bool py_word(const struct cli_sites *s, uint64_t a)
{
	return s->python && (a & CGTRACE_PY_FRAME) && CGTRACE_PY_FRAME_CODE(a);
}

/*
 * A stack with Python frames (--site python): the first of them in the
 * user's code, else the first; n when the stack has none. Python frames
 * resolve without a module, so this reads no native symbols at all.
 */
static size_t python_site(struct cli_sites *s, size_t n, uint64_t ns,
			  const struct cgtrace_frame **site)
{
	size_t first = n;
	for (size_t k = 0; k < n; k++) {
		if (!py_word(s, s->addrs[k]))
			continue;
		const struct cgtrace_frame *f;
		size_t nf;
		if (cgtrace_symbols_resolve(s->syms, s->addrs[k], ns, &f, &nf) < 0)
			return n;
		if (code_of(s, f) == CGTRACE_CODE_USER) {
			*site = f;
			return k;
		}
		if (first == n) {
			first = k;
			*site = f;
		}
	}
	return first;
}

static size_t site_address(struct cli_sites *s, size_t n, uint64_t ns,
			   const struct cgtrace_frame **site)
{
	*site = NULL;
	if (cli_site_mode == CLI_SITE_PYTHON && s->python) {
		size_t k = python_site(s, n, ns, site);
		if (k < n)
			return k;
	}
	for (size_t k = 0; k < n; k++) {
		if (py_word(s, s->addrs[k]))
			continue;
		const struct cgtrace_module *m = cgtrace_symbols_module(s->syms, s->addrs[k], ns);
		if (m && !cgtrace_module_may_be_user_code(m->path))
			continue;
		const struct cgtrace_frame *f;
		size_t nf;
		if (cgtrace_symbols_resolve(s->syms, s->addrs[k], ns, &f, &nf) < 0)
			return n;
		for (size_t j = 0; j < nf; j++)
			if (code_of(s, &f[j]) == CGTRACE_CODE_USER) {
				*site = &f[j];
				return k;
			}
	}
	return n;
}

/* Stack id's frames resolved into a new array, with its site. */
static int resolve(struct cli_sites *s, uint64_t id, struct cgtrace_resolved_stack *out)
{
	uint64_t ns = 0;
	size_t n = cgtrace_doc_stack_frames(s->doc, id, s->addrs, CLI_STACK_FRAMES_MAX, &ns);
	/* From the site outward only: the frames below it are never looked at then. */
	const struct cgtrace_frame *site;
	size_t k0 = s->from_site ? site_address(s, n, ns, &site) : 0;
	if (k0 == n)
		k0 = 0;
	const uint64_t *addrs = s->addrs + k0;
	n -= k0;
	long m = n ? cgtrace_symbols_frames(s->syms, addrs, n, ns, NULL, 0) : 0;
	if (m < 0)
		return (int)m;
	const struct cgtrace_frame **f = malloc((m ? (size_t)m : 1) * sizeof(*f));
	if (!f)
		return -ENOMEM;
	if (m)
		cgtrace_symbols_frames(s->syms, addrs, n, ns, f, (size_t)m);
	size_t at = cli_site_mode == CLI_SITE_NATIVE ? cgtrace_frames_site_native(f, (size_t)m)
						     : cgtrace_frames_site(f, (size_t)m);
	*out = (struct cgtrace_resolved_stack){f, (size_t)m, at};
	return 0;
}

const struct cgtrace_resolved_stack *cli_sites_stack(struct cli_sites *s, uint64_t id)
{
	if (!id || !s->syms)
		return NULL;
	if (s->cap_refs) {
		size_t i = ref_slot(s, id);
		if (s->refs[i].id)
			return s->refs[i].st;
	}
	if ((s->n_refs + 1) * 2 > s->cap_refs && refs_grow(s) < 0)
		return NULL;
	struct cgtrace_resolved_stack *st = malloc(sizeof(*st));
	if (!st || resolve(s, id, st) < 0) {
		free(st);
		return NULL;
	}
	size_t i = ref_slot(s, id);
	s->refs[i] = (struct cli_stack_ref){id, st};
	s->n_refs++;
	return st;
}

/*
 * cgtrace_frames_site without resolving the whole stack: address by
 * address from the innermost, stopping at the first frame in the user's
 * code, which most stacks reach within a few frames.
 */
const struct cgtrace_frame *cli_sites_site(struct cli_sites *s, uint64_t id)
{
	uint64_t ns = 0;
	size_t n = id ? cgtrace_doc_stack_frames(s->doc, id, s->addrs, CLI_STACK_FRAMES_MAX, &ns) : 0;
	const struct cgtrace_frame *site;
	site_address(s, n, ns, &site);
	if (site)
		return site;
	/* None: the first frame outside the allocator, else the outermost. */
	const struct cgtrace_frame *outside = NULL, *last = NULL;
	for (size_t a = 0; a < n; a++) {
		const struct cgtrace_frame *f;
		size_t m;
		if (cgtrace_symbols_resolve(s->syms, s->addrs[a], ns, &f, &m) < 0)
			return NULL;
		for (size_t j = 0; j < m; j++) {
			if (py_word(s, f[j].address))
				continue;
			enum cgtrace_code c = code_of(s, &f[j]);
			if (c == CGTRACE_CODE_USER)
				return &f[j];
			if (c != CGTRACE_CODE_ALLOCATOR && !outside)
				outside = &f[j];
			last = &f[j];
		}
	}
	return outside ? outside : last;
}

int cli_sites_attach(struct cli_sites *s, struct cgtrace_doc *doc, const char *path)
{
	*s = (struct cli_sites){.doc = doc};
	int r = open_symbols(s);
	if (r < 0) {
		fprintf(stderr, "%s: %s\n", path, strerror(-r));
		cli_sites_close(s);
		return CLI_FAIL;
	}
	return CLI_OK;
}

int cli_sites_open(struct cli_sites *s, const char *path)
{
	struct cgtrace_doc *doc = cli_load_flags(path, CGTRACE_READ_STREAM_MEMORY);
	if (!doc || cli_sites_attach(s, doc, path) != CLI_OK) {
		cgtrace_doc_free(doc);
		return CLI_FAIL;
	}
	s->owns_doc = true;
	return CLI_OK;
}

void cli_sites_close(struct cli_sites *s)
{
	for (size_t i = 0; i < s->cap_refs; i++)
		if (s->refs[i].id) {
			free((void *)s->refs[i].st->frames);
			free(s->refs[i].st);
		}
	free(s->refs);
	free(s->codes);
	free(s->addrs);
	cgtrace_symbols_close(s->syms);
	if (s->owns_doc)
		cgtrace_doc_free(s->doc);
	*s = (struct cli_sites){0};
}

const struct cgtrace_frame cli_site_preexisting;

const struct cgtrace_frame *cli_alloc_site(struct cli_sites *s, uint64_t stack_id,
					   bool preexisting)
{
	if (stack_id)
		return cli_sites_site(s, stack_id);
	return preexisting ? &cli_site_preexisting : NULL;
}

const char *cli_frame_name(char *buf, size_t len, const struct cgtrace_frame *f)
{
	if (!f || f == &cli_site_preexisting) {
		snprintf(buf, len, f ? "(live before recording began)" : "(no stack)");
		return buf;
	}
	const char *mod = f->module ? strrchr(f->module, '/') : NULL;
	mod = mod ? mod + 1 : f->module;
	if (f->function && f->file) {
		const char *file = strrchr(f->file, '/');
		snprintf(buf, len, "%s (%s:%" PRIu32 ")", f->function, file ? file + 1 : f->file,
		         f->line);
	} else if (f->function && mod) {
		snprintf(buf, len, "%s (%s+0x%" PRIx64 ")", f->function, mod, f->offset);
	} else if (mod) {
		snprintf(buf, len, "%s+0x%" PRIx64, mod, f->offset);
	} else if (f->function) {
		snprintf(buf, len, "%s", f->function);
	} else {
		snprintf(buf, len, "0x%" PRIx64, f->address);
	}
	return buf;
}

void cli_json_frame(struct cli_jw *w, const struct cgtrace_frame *f)
{
	char hex[24];
	cli_jw_begin_object(w);
	snprintf(hex, sizeof(hex), "0x%" PRIx64, f->address);
	cli_jw_key_str(w, "address", hex);
	cli_jw_key_str(w, "function", f->function);
	cli_jw_key_str(w, "file", f->file);
	cli_jw_key(w, "line");
	cli_jw_u64_or_null(w, f->file != NULL, f->line);
	cli_jw_key_str(w, "module", f->module);
	snprintf(hex, sizeof(hex), "0x%" PRIx64, f->offset);
	cli_jw_key_str(w, "offset", hex);
	cli_jw_key_bool(w, "inlined", f->inlined);
	cli_jw_end_object(w);
}

/*
 * Without --full, a stack with Python frames reads in its Python frames:
 * the interpreter's evaluation calls that run them are left out.
 */
static bool shown(const struct cgtrace_resolved_stack *st, size_t i, bool full, bool python)
{
	if (!python)
		return true;
	const struct cgtrace_frame *f = st->frames[i];
	return full || !python || !f->function || strcmp(f->function, "_PyEval_EvalFrameDefault");
}

static bool has_python(const struct cgtrace_resolved_stack *st)
{
	for (size_t i = 0; st && i < st->n_frames; i++)
		if ((st->frames[i]->address & CGTRACE_PY_FRAME) && !st->frames[i]->module &&
		    st->frames[i]->function)
			return true;
	return false;
}

bool cli_frame_shown(const struct cgtrace_resolved_stack *st, size_t i, bool full)
{
	return shown(st, i, full, !full && has_python(st));
}

void cli_json_frames(struct cli_jw *w, const struct cgtrace_resolved_stack *st, bool full)
{
	bool py = has_python(st);
	cli_jw_begin_array(w);
	for (size_t i = st && !full ? st->site : 0; st && i < st->n_frames; i++)
		if (shown(st, i, full, py))
			cli_json_frame(w, st->frames[i]);
	cli_jw_end_array(w);
}

void cli_print_frames(const struct cgtrace_resolved_stack *st, bool full, const char *indent)
{
	char name[600];
	if (!st || !st->n_frames) {
		printf("%s(no stack recorded)\n", indent);
		return;
	}
	bool py = has_python(st);
	for (size_t i = full ? 0 : st->site; i < st->n_frames; i++)
		if (shown(st, i, full, py))
			printf("%s%s%s\n", indent, cli_frame_name(name, sizeof(name), st->frames[i]),
			       st->frames[i]->inlined ? " [inlined]" : "");
}

void cli_json_stat(struct cli_jw *w, const struct cgtrace_stack_stat *s)
{
	static const struct cli_jw_field members[] = {
	    CLI_JW_U64(struct cgtrace_stack_stat, count),
	    CLI_JW_U64(struct cgtrace_stack_stat, total_bytes),
	    CLI_JW_U64(struct cgtrace_stack_stat, peak_count),
	    CLI_JW_U64(struct cgtrace_stack_stat, peak_bytes),
	    CLI_JW_U64(struct cgtrace_stack_stat, leaked_count),
	    CLI_JW_U64(struct cgtrace_stack_stat, leaked_bytes),
	    CLI_JW_U64(struct cgtrace_stack_stat, temporary_count),
	};
	cli_jw_u64_fields(w, s, members, sizeof(members) / sizeof(members[0]));
	if (s->preexisting)
		cli_jw_key_bool(w, "preexisting", true);
}

void cli_print_site_frames(const struct cgtrace_resolved_stack *st, bool preexisting, bool full,
			   const char *indent)
{
	if (preexisting)
		printf("%s(live before recording began: no stack)\n", indent);
	else
		cli_print_frames(st, full, indent);
}

void cli_print_row_frames(struct cli_sites *s, const struct cli_site_row *r, bool full,
			  const char *indent)
{
	bool pre = r->site == &cli_site_preexisting;
	cli_print_site_frames(pre ? NULL : cli_sites_stack(s, r->stack_id), pre, full, indent);
}

int cli_sites_open_rows(struct cli_sites *s, const char *path, const char *device, bool by_stack,
			enum cli_by by, struct cli_site_row **rows, size_t *n)
{
	if (cli_sites_open(s, path) != CLI_OK)
		return CLI_FAIL;
	if (cli_site_rows(s, device, by_stack, by, rows, n) < 0) {
		fprintf(stderr, "%s: out of memory\n", path);
		cli_sites_close(s);
		return CLI_FAIL;
	}
	return CLI_OK;
}
