/* SPDX-License-Identifier: MIT */
#include "doc_pycodes.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cgtrace.h"
#include "doc.h"
#include "doc_stacks.h"
#include "export.h"
#include "py_lines.h"

struct doc_pycode {
	struct cgtrace_py_code c; /* first: the public view points here */
	uint64_t rec;
};

#define FAIL(...) (snprintf(err, errlen, __VA_ARGS__), -EBADMSG)

static const struct doc_pycode *at(const struct cgtrace_doc *d, size_t i)
{
	return CG_VEC_AT(&d->py_codes, struct doc_pycode, i);
}

static long find(const struct cgtrace_doc *d, uint64_t id)
{
	uint32_t pos = UINT32_MAX, val;
	while (cg_map_next(&d->py_code_map, id, &pos, &val))
		if (at(d, val)->c.id == id)
			return val;
	return -1;
}

static int add_one(struct cgtrace_doc *d, const struct cg_pycodev *v, uint64_t rec, char *err,
		   size_t errlen)
{
	if (find(d, v->id) >= 0)
		return FAIL("Python code %llu defined twice", (unsigned long long)v->id);
	if (v->id > 0x7fffffffu)
		return FAIL("Python code %llu: ids go up to 2147483647", (unsigned long long)v->id);
	const char *why = NULL;
	if (v->format && cg_py_lt_check((enum cg_py_lt)v->format, v->table, v->table_len, &why) < 0)
		return FAIL("Python code %llu: its line table: %s", (unsigned long long)v->id,
			    why ? why : "malformed");
	struct doc_pycode o = {.c = {.id = v->id, .first_line = v->line, .format = v->format},
			       .rec = rec};
	if (cg_doc_copy_sv(d, v->name, &o.c.name) < 0 || cg_doc_copy_sv(d, v->qualname, &o.c.qualname) < 0 ||
	    cg_doc_copy_sv(d, v->file, &o.c.file) < 0)
		return -ENOMEM;
	if (v->table_len) {
		uint8_t *t = cg_arena_alloc(&d->stack_mem, v->table_len);
		if (!t)
			return -ENOMEM;
		memcpy(t, v->table, v->table_len);
		o.c.table = t;
		o.c.table_len = v->table_len;
	}
	struct doc_pycode *slot = CG_VEC_PUSH(&d->py_codes, struct doc_pycode);
	if (!slot)
		return -ENOMEM;
	*slot = o;
	return cg_map_put(&d->py_code_map, v->id, (uint32_t)(d->py_codes.len - 1));
}

int cg_doc_py_codes_add(struct cgtrace_doc *d, const struct cg_rec_memory *m, uint64_t rec,
			char *err, size_t errlen)
{
	d->py_frames = true;
	for (uint32_t i = 0; i < m->n_py_codes; i++) {
		int r = add_one(d, &m->py_codes[i], rec, err, errlen);
		if (r < 0)
			return r;
	}
	return 0;
}

int cg_doc_py_frames_check(const struct cgtrace_doc *d, uint64_t stack, const uint64_t *frames,
			   uint32_t n, char *err, size_t errlen)
{
	for (uint32_t i = 0; d->py_frames && i < n; i++) {
		uint64_t f = frames[i];
		if (!(f & CGTRACE_PY_FRAME))
			continue;
		uint64_t code = CGTRACE_PY_FRAME_CODE(f);
		if (!code && CGTRACE_PY_FRAME_OFFSET(f) > 1)
			return FAIL("stack %llu: frame %u is Python code 0 at offset %u, which marks "
				    "nothing (0: cut, 1: unreadable)",
				    (unsigned long long)stack, i, CGTRACE_PY_FRAME_OFFSET(f));
		if (code && find(d, code) < 0)
			return FAIL("stack %llu: frame %u names Python code %llu, not defined",
				    (unsigned long long)stack, i, (unsigned long long)code);
	}
	return 0;
}

void cg_doc_py_meta(struct cgtrace_doc *d, const struct cg_rec_meta *m)
{
	/* A probe that reads Python frames says so (cgprobe_python auto or on). */
	for (uint32_t i = 0; i < m->n_tags; i++)
		if (cg_sv_eq(m->tags[i].key, CG_SV_LIT("cgprobe_python")) &&
		    (cg_sv_eq(m->tags[i].value, CG_SV_LIT("auto")) ||
		     cg_sv_eq(m->tags[i].value, CG_SV_LIT("on"))))
			d->py_frames = true;
}

uint64_t cg_doc_py_code_rec(const struct cgtrace_doc *d, size_t i)
{
	return i < d->py_codes.len ? at(d, i)->rec : UINT64_MAX;
}

void cg_doc_py_codes_free(struct cgtrace_doc *d)
{
	cg_vec_free(&d->py_codes, sizeof(struct doc_pycode));
	cg_map_free(&d->py_code_map);
}

CG_EXPORT bool cgtrace_doc_python(const struct cgtrace_doc *d)
{
	return d->py_frames;
}

CG_EXPORT size_t cgtrace_doc_py_code_count(const struct cgtrace_doc *d)
{
	return d->py_codes.len;
}

CG_EXPORT const struct cgtrace_py_code *cgtrace_doc_py_code_at(const struct cgtrace_doc *d,
								size_t i)
{
	return i < d->py_codes.len ? &at(d, i)->c : NULL;
}

CG_EXPORT const struct cgtrace_py_code *cgtrace_doc_py_code(const struct cgtrace_doc *d,
							     uint64_t id)
{
	long i = find(d, id);
	return i < 0 ? NULL : &at(d, (size_t)i)->c;
}
