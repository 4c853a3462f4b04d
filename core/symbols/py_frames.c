/* SPDX-License-Identifier: MIT */
#include "py_frames.h"

#include <errno.h>
#include <string.h>

#include "export.h"
#include "py_lines.h"

CG_EXPORT int64_t cgtrace_py_code_line(const struct cgtrace_py_code *c, uint32_t offset)
{
	int line = c->format ? cg_py_lt_line((enum cg_py_lt)c->format, (int)c->first_line, c->table,
					     c->table_len, offset)
			     : -1;
	return line >= 0 ? line : c->first_line;
}

int cg_py_symbols_add(struct cg_py_symbols *p, struct cg_arena *a, const struct cgtrace_py_code *codes,
		      size_t n)
{
	p->on = true;
	for (size_t i = 0; i < n; i++) {
		struct cgtrace_py_code c = codes[i];
		c.name = cg_arena_strdup(a, codes[i].name);
		c.qualname = cg_arena_strdup(a, codes[i].qualname);
		c.file = cg_arena_strdup(a, codes[i].file);
		uint8_t *t = c.table_len ? cg_arena_alloc(a, c.table_len) : NULL;
		if ((codes[i].name && !c.name) || (codes[i].qualname && !c.qualname) ||
		    (codes[i].file && !c.file) || (c.table_len && !t))
			return -ENOMEM;
		if (t)
			memcpy(t, codes[i].table, c.table_len);
		c.table = t;
		struct cgtrace_py_code *slot = CG_VEC_PUSH(&p->codes, struct cgtrace_py_code);
		if (!slot)
			return -ENOMEM;
		*slot = c;
		if (cg_map_put(&p->by_id, c.id, (uint32_t)(p->codes.len - 1)) < 0)
			return -ENOMEM;
	}
	return 0;
}

static const struct cgtrace_py_code *find(const struct cg_py_symbols *p, uint64_t id)
{
	uint32_t pos = UINT32_MAX, val;
	while (cg_map_next(&p->by_id, id, &pos, &val)) {
		const struct cgtrace_py_code *c = CG_VEC_AT(&p->codes, struct cgtrace_py_code, val);
		if (c->id == id)
			return c;
	}
	return NULL;
}

void cg_py_symbols_frame(const struct cg_py_symbols *p, uint64_t addr, struct cgtrace_frame *f)
{
	uint64_t id = CGTRACE_PY_FRAME_CODE(addr);
	uint32_t off = CGTRACE_PY_FRAME_OFFSET(addr);
	*f = (struct cgtrace_frame){.address = addr, .offset = off};
	if (!id) {
		/* Marks read as what they mark, in angle brackets as the interpreter names its own. */
		f->function = off ? "<Python frame not readable>" : "<outer Python frames cut>";
		return;
	}
	const struct cgtrace_py_code *c = find(p, id);
	if (!c)
		return;
	f->function = c->qualname ? c->qualname : c->name;
	f->file = c->file;
	int64_t line = cgtrace_py_code_line(c, off);
	f->line = line > 0 && line <= UINT32_MAX ? (uint32_t)line : 0;
}

void cg_py_symbols_free(struct cg_py_symbols *p)
{
	cg_vec_free(&p->codes, sizeof(struct cgtrace_py_code));
	cg_map_free(&p->by_id);
}
