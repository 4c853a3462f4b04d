/* SPDX-License-Identifier: MIT */
/*
 * Export in file order: each record the streaming reader yields goes
 * straight through the JSONL formatter, so memory stays that of one line
 * and one output buffer whatever the trace's length.
 */
#include <errno.h>

#include "buf.h"
#include "cgtrace.h"
#include "export.h"
#include "jsonl_format.h"
#include "schema.h"
#include "stream_read.h"
#include "write_all.h"

#define FLUSH_AT (1u << 16)

CG_EXPORT int cgtrace_reader_export_jsonl_flags(struct cgtrace_reader *r, int fd, unsigned flags)
{
	struct cg_buf buf = {0};
	const struct cg_rec *rec;
	int ret, werr = 0;
	while ((ret = cg_reader_next_rec(r, &rec)) == 1) {
		struct cg_rec strict;
		if (flags & CGTRACE_EXPORT_STRICT) {
			if (cg_schema_kind_ext(rec->kind))
				continue;
			strict = *rec;
			cg_schema_strip_ext(&strict);
			rec = &strict;
		}
		cg_jsonl_format(&buf, rec);
		if (buf.err) {
			werr = buf.err;
			break;
		}
		if (buf.len >= FLUSH_AT) {
			werr = cg_write_all(fd, buf.p, buf.len);
			buf.len = 0;
			if (werr)
				break;
		}
	}
	if (ret == 0 && !werr && buf.len)
		werr = cg_write_all(fd, buf.p, buf.len);
	cg_buf_fini(&buf);
	if (werr) {
		cg_reader_clear_message(r);
		return werr;
	}
	return ret;
}

CG_EXPORT int cgtrace_reader_export_jsonl(struct cgtrace_reader *r, int fd)
{
	return cgtrace_reader_export_jsonl_flags(r, fd, 0);
}
