/* SPDX-License-Identifier: MIT */
/*
 * The extensions a trace uses: each extension field or kind once, where it
 * first appears and on how many records. A handful of entries, found by a
 * scan; only a read that asks for them (CGTRACE_READ_EXTENSIONS) pays.
 */
#include "doc_ext.h"

#include <errno.h>

#include "doc.h"
#include "export.h"
#include "schema.h"

static int note(struct cgtrace_doc *d, uint8_t kind, int8_t field, uint64_t where)
{
	for (size_t i = 0; i < d->exts.len; i++) {
		struct cg_doc_ext *e = CG_VEC_AT(&d->exts, struct cg_doc_ext, i);
		if (e->kind == kind && e->field == field) {
			e->records++;
			return 0;
		}
	}
	struct cg_doc_ext *e = CG_VEC_PUSH(&d->exts, struct cg_doc_ext);
	if (!e)
		return -ENOMEM;
	*e = (struct cg_doc_ext){.kind = kind, .field = field, .first = where, .records = 1};
	return 0;
}

int cg_doc_note_ext(struct cgtrace_doc *d, const struct cg_rec *r, uint64_t where, bool numbered)
{
	const struct cg_kind_desc *desc = cg_schema_kind_of(r->kind);
	if (!desc)
		return 0;
	d->ext_numbered = numbered;
	if (cg_schema_kind_ext(r->kind))
		return note(d, (uint8_t)r->kind, -1, where);
	for (int i = 0; i < desc->n_fields; i++) {
		const struct cg_field *f = &desc->fields[i];
		if (cg_schema_field_ext(f) && cg_schema_field_set(f, r)) {
			int ret = note(d, (uint8_t)r->kind, (int8_t)i, where);
			if (ret < 0)
				return ret;
		}
	}
	return 0;
}

CG_EXPORT size_t cgtrace_doc_extension_count(const struct cgtrace_doc *d)
{
	return d->exts.len;
}

CG_EXPORT void cgtrace_doc_extension(const struct cgtrace_doc *d, size_t i,
                                     struct cgtrace_extension *out)
{
	const struct cg_doc_ext *e = CG_VEC_AT(&d->exts, struct cg_doc_ext, i);
	const struct cg_kind_desc *desc = cg_schema_kind_of((enum cgtrace_kind)e->kind);
	*out = (struct cgtrace_extension){
	    .kind = (enum cgtrace_kind)e->kind,
	    .kind_name = desc->name,
	    .field = e->field >= 0 ? desc->fields[e->field].name : NULL,
	    .first = e->first,
	    .first_is_record = d->ext_numbered,
	    .records = e->records,
	};
}
