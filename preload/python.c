/* SPDX-License-Identifier: MIT */
#include "python.h"

#include <dlfcn.h>
#include <link.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "options.h"
#include "py_codes.h"
#include "py_layout.h"
#include "warn.h"

bool cg_python_on;

/* A row of py_layout.h, its columns in order (docs/python-layouts.md); -1: the version has no such field. */
struct row {
	int minor;
	int ts_frame, ts_cframe, cframe_current_frame, ts_current_frame;
	int frame_back, frame_code, frame_lasti, lasti_units;
	int iframe_previous, iframe_code, iframe_instr, iframe_is_entry, iframe_owner;
	int owned_by_thread, owned_by_generator, owned_by_frame_object, owned_by_cstack;
	int code_firsttraceable, code_firstlineno, code_name, code_qualname, code_filename;
	int code_lnotab, code_linetable, code_adaptive, code_basicsize;
	int ascii_size, compact_size, ascii_state, ascii_length;
	int state_kind_shift, state_compact_bit, state_ascii_bit;
	int bytes_sval, bytes_size, ob_type;
};

static const struct row rows[] = {
#define ROW(...) {__VA_ARGS__},
    CG_PY_LAYOUTS(ROW)
#undef ROW
};

/* What the walk reads, one name for each version's field of that use. */
struct layout {
	int minor;
	int ts_frame, ts_cframe, cframe_current, ts_current_frame;
	int fr_previous, fr_code, fr_instr, fr_is_entry, fr_owner;
	int owner_generator, owner_cstack;
	int lasti_units;
	int co_firstlineno, co_name, co_qualname, co_filename, co_linetable, co_code_adaptive,
	    co_firsttraceable, co_basicsize;
	int uni_ascii_size, uni_compact_size, uni_state, uni_length;
	int kind_shift, compact_bit, ascii_bit;
	int bytes_size, bytes_sval;
	int ob_type;
};

static struct layout layout_of_row(const struct row *r)
{
	bool old = r->minor <= 10;
	return (struct layout){
	    .minor = r->minor,
	    .ts_frame = r->ts_frame,
	    .ts_cframe = r->ts_cframe,
	    .cframe_current = r->cframe_current_frame,
	    .ts_current_frame = r->ts_current_frame,
	    .fr_previous = old ? r->frame_back : r->iframe_previous,
	    .fr_code = old ? r->frame_code : r->iframe_code,
	    .fr_instr = old ? r->frame_lasti : r->iframe_instr,
	    .fr_is_entry = r->iframe_is_entry,
	    .fr_owner = r->iframe_owner,
	    .owner_generator = r->owned_by_generator,
	    .owner_cstack = r->owned_by_cstack,
	    .lasti_units = r->lasti_units,
	    .co_firstlineno = r->code_firstlineno,
	    .co_name = r->code_name,
	    .co_qualname = r->code_qualname,
	    .co_filename = r->code_filename,
	    .co_linetable = r->code_linetable >= 0 ? r->code_linetable : r->code_lnotab,
	    .co_code_adaptive = r->code_adaptive,
	    .co_firsttraceable = r->code_firsttraceable,
	    .co_basicsize = r->code_basicsize,
	    .uni_ascii_size = r->ascii_size,
	    .uni_compact_size = r->compact_size,
	    .uni_state = r->ascii_state,
	    .uni_length = r->ascii_length,
	    .kind_shift = r->state_kind_shift,
	    .compact_bit = r->state_compact_bit,
	    .ascii_bit = r->state_ascii_bit,
	    .bytes_size = r->bytes_size,
	    .bytes_sval = r->bytes_sval,
	    .ob_type = r->ob_type,
	};
}

static struct layout layout;
static const struct layout *L = &layout;
static void *(*this_thread_state)(void);
static const void *code_type, *str_type, *bytes_type;
/* _PyEval_EvalFrameDefault's code: a return address in it is an evaluation call's frame. */
static uintptr_t eval_lo, eval_hi;
static uint8_t line_format;

/*
 * The first walks read through process_vm_readv, which fails on an
 * address that is not mapped where a load would fault: a layout that does
 * not fit the interpreter (a patched build) turns Python frames off with
 * a warning instead of crashing the program. Past them, plain loads.
 */
#define CHECKED_WALKS 256
static _Atomic unsigned checked_left = CHECKED_WALKS;
static atomic_bool broken;

static inline __attribute__((always_inline)) bool peek(const void *at, void *out, size_t n, bool checked)
{
	if (!checked) {
		memcpy(out, at, n);
		return true;
	}
	struct iovec local = {out, n}, remote = {(void *)at, n};
	return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)n;
}

static inline __attribute__((always_inline)) bool ptr_at(const void *base, int off, const void **out, bool checked)
{
	if (off < 0 || !base)
		return false;
	return peek((const char *)base + off, out, sizeof(*out), checked);
}

static inline __attribute__((always_inline)) bool is_type(const void *obj, const void *type, bool checked)
{
	const void *t;
	return obj && ptr_at(obj, L->ob_type, &t, checked) && t == type;
}

/* A str object's text as UTF-8; 0 for anything but a compact str. */
static uint32_t str_utf8_checked(const void *s, char *out, uint32_t cap, bool checked)
{
	uint32_t state;
	int64_t len;
	if (!is_type(s, str_type, checked) ||
	    !peek((const char *)s + L->uni_state, &state, sizeof(state), checked) ||
	    !peek((const char *)s + L->uni_length, &len, sizeof(len), checked) || len < 0)
		return 0;
	unsigned kind = (state >> L->kind_shift) & 7;
	if (!((state >> L->compact_bit) & 1))
		return 0;
	bool ascii = (state >> L->ascii_bit) & 1;
	const unsigned char *data =
	    (const unsigned char *)s + (ascii ? L->uni_ascii_size : L->uni_compact_size);
	uint32_t w = 0;
	for (int64_t i = 0; i < len && w + 4 <= cap; i++) {
		uint32_t c;
		if (kind == 1) {
			uint8_t v;
			if (!peek(data + i, &v, 1, checked))
				return w;
			c = v;
		} else if (kind == 2) {
			uint16_t v;
			if (!peek(data + 2 * i, &v, 2, checked))
				return w;
			c = v;
		} else if (kind == 4) {
			if (!peek(data + 4 * i, &c, 4, checked))
				return w;
		} else {
			return w;
		}
		if (c < 0x80) {
			out[w++] = (char)c;
		} else if (c < 0x800) {
			out[w++] = (char)(0xc0 | c >> 6);
			out[w++] = (char)(0x80 | (c & 0x3f));
		} else if (c < 0x10000) {
			out[w++] = (char)(0xe0 | c >> 12);
			out[w++] = (char)(0x80 | ((c >> 6) & 0x3f));
			out[w++] = (char)(0x80 | (c & 0x3f));
		} else {
			out[w++] = (char)(0xf0 | c >> 18);
			out[w++] = (char)(0x80 | ((c >> 12) & 0x3f));
			out[w++] = (char)(0x80 | ((c >> 6) & 0x3f));
			out[w++] = (char)(0x80 | (c & 0x3f));
		}
	}
	return w;
}

/* Copies are made on the walks that check; by then the layout has held. */
static uint32_t str_utf8(const void *s, char *out, uint32_t cap)
{
	return str_utf8_checked(s, out, cap, atomic_load_explicit(&checked_left, memory_order_relaxed));
}

static uint32_t bytes_data(const void *b, const uint8_t **data)
{
	bool checked = atomic_load_explicit(&checked_left, memory_order_relaxed) != 0;
	int64_t n;
	if (!is_type(b, bytes_type, checked) ||
	    !peek((const char *)b + L->bytes_size, &n, sizeof(n), checked) || n < 0 ||
	    n > UINT32_MAX)
		return 0;
	*data = (const uint8_t *)b + L->bytes_sval;
	if (checked && n) {
		uint8_t last;
		if (!peek(*data + n - 1, &last, 1, true))
			return 0;
	}
	return (uint32_t)n;
}

/* A frame as the walk finds it. */
struct pyf {
	uint64_t word; /* CG_PY_FRAME | id << 32 | offset */
	bool entry;    /* the outermost frame of one evaluation call */
};

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h;
}

/* code's id in the code table, reading it by the layout; 0 when it cannot be read. */
static __attribute__((noinline)) uint32_t code_id(const void *code, bool checked)
{
	struct cg_py_code_src src = {.code = code, .format = line_format};
	if (!ptr_at(code, L->co_name, &src.name, checked) ||
	    !ptr_at(code, L->co_filename, &src.file, checked) ||
	    !ptr_at(code, L->co_linetable, &src.table, checked) ||
	    !peek((const char *)code + L->co_firstlineno, &src.first_line, sizeof(int32_t), checked))
		return 0;
	if (L->co_qualname >= 0 && !ptr_at(code, L->co_qualname, &src.qualname, checked))
		return 0;
	int64_t table_len = 0;
	if (src.table && !peek((const char *)src.table + L->bytes_size, &table_len,
			       sizeof(table_len), checked))
		return 0;
	uint64_t fp = mix(mix(mix(mix(mix((uint64_t)src.first_line, (uintptr_t)src.name),
				      (uintptr_t)src.qualname),
				  (uintptr_t)src.file),
			      (uintptr_t)src.table),
			  (uint64_t)table_len);
	return cg_py_code_id(&src, fp, str_utf8, bytes_data);
}

/*
 * A thread's last code objects met, direct-mapped by address: a hit
 * compares what the table's fingerprint is made of (the objects a line
 * depends on, read again now), so a code object freed and another made
 * where it was misses, and only a miss probes the shared table.
 */
#define CODE_CACHE 512
struct code_hit {
	const void *code, *name, *qualname, *file, *table;
	int32_t first_line;
	uint32_t id;
};
struct cg_py_cache {
	struct code_hit e[CODE_CACHE];
};

static inline __attribute__((always_inline)) uint32_t code_id_cached(struct cg_py_cache *c,
								     const void *code,
								     bool checked)
{
	if (checked || !c)
		return code_id(code, checked);
	const char *co = code;
	struct code_hit now;
	now.code = code;
	memcpy(&now.name, co + L->co_name, sizeof(void *));
	now.qualname = NULL;
	if (L->co_qualname >= 0)
		memcpy(&now.qualname, co + L->co_qualname, sizeof(void *));
	memcpy(&now.file, co + L->co_filename, sizeof(void *));
	memcpy(&now.table, co + L->co_linetable, sizeof(void *));
	memcpy(&now.first_line, co + L->co_firstlineno, sizeof(int32_t));
	struct code_hit *h = &c->e[((uintptr_t)code >> 4) * 0x9e3779b1u >> 23 & (CODE_CACHE - 1)];
	if (h->code == code && h->name == now.name && h->qualname == now.qualname &&
	    h->file == now.file && h->table == now.table && h->first_line == now.first_line)
		return h->id;
	now.id = code_id(code, false);
	if (now.id)
		*h = now;
	return now.id;
}

/* The byte offset of frame's instruction (code: its code object), below 0 before its first. */
static inline __attribute__((always_inline)) bool frame_offset(const void *frame, const void *code, int64_t *off, bool checked)
{
	if (L->minor <= 10) {
		int32_t lasti;
		if (!peek((const char *)frame + L->fr_instr, &lasti, sizeof(lasti), checked))
			return false;
		*off = (int64_t)lasti * L->lasti_units;
		return true;
	}
	const char *instr;
	if (!ptr_at(frame, L->fr_instr, (const void **)&instr, checked))
		return false;
	*off = (int64_t)((intptr_t)instr - (intptr_t)((const char *)code + L->co_code_adaptive));
	return true;
}

/* A 3.11+ frame the interpreter has pushed but not started: no frame of the program yet. */
static inline __attribute__((always_inline)) bool incomplete(const void *frame, const void *code, int64_t off, bool checked)
{
	if (L->minor <= 10 || L->co_firsttraceable < 0)
		return false;
	uint8_t owner = 0;
	if (L->fr_owner >= 0 && !peek((const char *)frame + L->fr_owner, &owner, 1, checked))
		return true;
	if ((int)owner == L->owner_generator)
		return false;
	int32_t first = 0;
	if (!peek((const char *)code + L->co_firsttraceable, &first, sizeof(first), checked))
		return true;
	return off < (int64_t)first * 2;
}

/* The frame where the thread state says the thread is now. */
static inline __attribute__((always_inline)) const void *innermost(const void *ts, bool checked)
{
	const void *f = NULL;
	if (L->ts_frame >= 0)
		ptr_at(ts, L->ts_frame, &f, checked);
	else if (L->ts_current_frame >= 0)
		ptr_at(ts, L->ts_current_frame, &f, checked);
	else {
		const void *cf = NULL;
		if (ptr_at(ts, L->ts_cframe, &cf, checked) && cf)
			ptr_at(cf, L->cframe_current, &f, checked);
	}
	return f;
}

/*
 * The thread's Python frames, innermost first, into out (room for max);
 * *cut when more were left out. Returns how many, 0 for a thread that
 * runs no Python.
 */
static inline __attribute__((always_inline)) unsigned walk(struct cg_py_cache *cache, struct pyf *out,
							      unsigned max, bool *cut, bool checked)
{
	*cut = false;
	const void *ts = this_thread_state();
	if (!ts)
		return 0;
	unsigned n = 0, hops = 0;
	for (const void *f = innermost(ts, checked); f; hops++) {
		if (hops > 4 * CG_PY_DEPTH_MAX + 64) {
			*cut = true;
			break;
		}
		const void *code = NULL, *prev = NULL;
		if (!ptr_at(f, L->fr_code, &code, checked) || !ptr_at(f, L->fr_previous, &prev, checked))
			return checked ? UINT32_MAX : n;
		uint8_t owner = 0;
		if (L->fr_owner >= 0 && !peek((const char *)f + L->fr_owner, &owner, 1, checked))
			return checked ? UINT32_MAX : n;
		if (L->owner_cstack >= 0 && owner == (uint8_t)L->owner_cstack) {
			/* A shim an evaluation call pushes: the frame inside it began that call. */
			if (n)
				out[n - 1].entry = true;
			f = prev;
			continue;
		}
		int64_t off;
		bool is_code = is_type(code, code_type, checked);
		if (!is_code || !frame_offset(f, code, &off, checked)) {
			if (checked && !is_code && L->minor < 13)
				return UINT32_MAX;
			f = prev;
			continue;
		}
		uint8_t entry = 1;
		if (L->fr_is_entry >= 0)
			peek((const char *)f + L->fr_is_entry, &entry, 1, checked);
		else if (L->minor >= 12)
			entry = 0;
		/* Only the innermost can be: a frame not started yet calls nothing. */
		if (!n && incomplete(f, code, off, checked)) {
			/* Not a frame of the program yet, but it may end its evaluation call's frames. */
			if (entry && n)
				out[n - 1].entry = true;
			f = prev;
			continue;
		}
		if (n == max) {
			*cut = true;
			break;
		}
		uint32_t id = code_id_cached(cache, code, checked);
		uint32_t at = off < 0 ? 0 : off > UINT32_MAX ? UINT32_MAX : (uint32_t)off;
		out[n++] = (struct pyf){id ? CG_PY_FRAME | (uint64_t)id << 32 | at : CG_PY_UNREADABLE,
					entry != 0};
		f = prev;
	}
	if (n)
		out[n - 1].entry = true;
	return n;
}

static bool in_eval(void *ret)
{
	uintptr_t a = (uintptr_t)ret - 1;
	return a >= eval_lo && a < eval_hi;
}

/* The walk twice over, so that the plain one is plain loads, the checked one system calls. */
static __attribute__((noinline)) unsigned walk_checked(struct pyf *out, bool *cut)
{
	return walk(NULL, out, CG_PY_DEPTH_MAX, cut, true);
}

static unsigned walk_plain(struct cg_py_cache *cache, struct pyf *out, bool *cut)
{
	return walk(cache, out, CG_PY_DEPTH_MAX, cut, false);
}

size_t cg_python_cache_len(void)
{
	return cg_python_on ? sizeof(struct cg_py_cache) : 0;
}

unsigned cg_python_merge(struct cg_py_cache *cache, void *const *f, unsigned n, uint64_t *out,
			 unsigned cap)
{
	struct pyf py[CG_PY_DEPTH_MAX];
	bool cut = false;
	unsigned m = 0;
	if (!atomic_load_explicit(&broken, memory_order_relaxed)) {
		unsigned left = atomic_load_explicit(&checked_left, memory_order_relaxed);
		m = left ? walk_checked(py, &cut) : walk_plain(cache, py, &cut);
		if (m == UINT32_MAX) {
			/* Once, whichever thread saw it first: the hooks go on with native frames. */
			if (!atomic_exchange(&broken, true))
				cg_warn("Python frames: this interpreter's frames do not read as "
					"expected; recording native frames only",
					NULL);
			m = 0;
			cut = false;
		} else if (left) {
			atomic_fetch_sub_explicit(&checked_left, 1, memory_order_relaxed);
		}
	}
	unsigned w = 0, k = 0;
	/* Each evaluation call in the native stack gets the Python frames it runs, above it. */
	for (unsigned i = 0; i < n && w < cap; i++) {
		while (k < m && w < cap && in_eval(f[i])) {
			bool entry = py[k].entry;
			out[w++] = py[k++].word;
			if (entry)
				break;
		}
		if (w < cap)
			out[w++] = (uint64_t)(uintptr_t)f[i];
	}
	/* Past the native frames kept (or with no evaluation call among them): the outer ones. */
	while (k < m && w < cap)
		out[w++] = py[k++].word;
	if (cut && w < cap)
		out[w++] = CG_PY_CUT;
	return w;
}

static bool layout_for(int minor)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		if (rows[i].minor == minor) {
			layout = layout_of_row(&rows[i]);
			return true;
		}
	return false;
}

/* The interpreter's version from Py_GetVersion ("3.11.2 (main, ...)"): the minor, -1 for none. */
static int version_minor(int *major)
{
	const char *(*get_version)(void) = (const char *(*)(void))dlsym(RTLD_DEFAULT, "Py_GetVersion");
	if (!get_version)
		return -1;
	const char *v = get_version();
	int a = 0, b = 0;
	if (!v || sscanf(v, "%d.%d", &a, &b) != 2)
		return -1;
	*major = a;
	return b;
}

/* The code object's size the headers gave against the running interpreter's PyCode_Type. */
static bool basicsize_fits(void)
{
	/* PyTypeObject: PyObject_VAR_HEAD, then tp_name, then tp_basicsize. */
	const char *t = code_type;
	intptr_t basic;
	memcpy(&basic, t + 4 * sizeof(void *), sizeof(basic));
	return layout.co_basicsize < 0 || basic == layout.co_basicsize;
}

static void eval_range(void)
{
	void *sym = dlsym(RTLD_DEFAULT, "_PyEval_EvalFrameDefault");
	Dl_info info;
	const ElfW(Sym) *es = NULL;
	if (sym && dladdr1(sym, &info, (void **)&es, RTLD_DL_SYMENT) && es && es->st_size) {
		eval_lo = (uintptr_t)sym;
		eval_hi = eval_lo + es->st_size;
	}
}

void cg_python_setup(void)
{
	/* Python frames ride on the native stacks: without those, none. */
	if (!cg_opt.stack_depth)
		cg_opt.python = CG_PYTHON_OFF;
	if (cg_opt.python == CG_PYTHON_OFF)
		return;
	bool asked = cg_opt.python == CG_PYTHON_ON;
	this_thread_state = (void *(*)(void))dlsym(RTLD_DEFAULT, "PyGILState_GetThisThreadState");
	code_type = dlsym(RTLD_DEFAULT, "PyCode_Type");
	str_type = dlsym(RTLD_DEFAULT, "PyUnicode_Type");
	bytes_type = dlsym(RTLD_DEFAULT, "PyBytes_Type");
	if (!this_thread_state || !code_type || !str_type || !bytes_type) {
		if (asked)
			cg_warn("CGPROBE_PYTHON=on: no Python interpreter in this process", NULL);
		cg_opt.python = CG_PYTHON_OFF;
		return;
	}
	int major = 0, minor = version_minor(&major);
	if (major != 3 || !layout_for(minor) || !basicsize_fits()) {
		char v[32];
		snprintf(v, sizeof(v), "%d.%d", major, minor);
		cg_warn("Python ", v, ": not an interpreter whose frames the probe knows how to read "
			"(CPython 3.8 to 3.13); recording native frames only", NULL);
		cg_opt.python = CG_PYTHON_OFF;
		return;
	}
	line_format = minor <= 9 ? 1 : minor == 10 ? 2 : 3;
	if (!cg_py_codes_setup()) {
		cg_warn("Python frames: no memory for the code table; recording native frames only",
			NULL);
		cg_opt.python = CG_PYTHON_OFF;
		return;
	}
	eval_range();
	cg_python_on = true;
}
