/* SPDX-License-Identifier: MIT */
/*
 * Export to the compact encoding (docs/compact-format.md): the same
 * records the JSONL exports write, in the same orders, through the compact
 * encoder, which packs what fits and sends the rest as their JSONL text.
 * With stats asked for, the records also go through one encoder per field
 * with that field ablated, so one pass tells what each field costs after
 * zstd.
 */
#include <errno.h>
#include <stdlib.h>

#include "cgtrace.h"
#include "compact_enc.h"
#include "doc_records.h"
#include "export.h"
#include "stream_read.h"
#include "write_all.h"

/* The field names of the public stats, in CG_CENC_FIELDS order. */
_Static_assert(CG_CENC_F_COUNT == CGTRACE_COMPACT_FIELDS, "one public slot per field");

struct fd_sink {
	int fd;
};

static int write_fd(void *user, const void *p, size_t n)
{
	return cg_write_all(((struct fd_sink *)user)->fd, p, n);
}

static int count_only(void *user, const void *p, size_t n)
{
	*(uint64_t *)user += n;
	return 0;
}

struct cexp {
	struct cg_cenc *main;
	struct fd_sink sink;
	/* With stats: the encoders with one field ablated each, and their sizes. */
	struct cg_cenc *abl[CG_CENC_F_COUNT];
	uint64_t abl_bytes[CG_CENC_F_COUNT];
};

static int cexp_open(struct cexp *x, int fd, const struct cgtrace_compact_options *opts)
{
	x->sink.fd = fd;
	struct cg_cenc_opts o = {.zstd_level = opts->zstd_level,
				 .block_raw = opts->block_raw,
				 .write = write_fd,
				 .user = &x->sink,
				 .track_live = true};
	int ret = cg_cenc_new(&x->main, &o);
	for (int f = 0; ret == 0 && opts->stats && f < CG_CENC_F_COUNT; f++) {
		o.write = count_only;
		o.user = &x->abl_bytes[f];
		o.ablate = f + 1;
		ret = cg_cenc_new(&x->abl[f], &o);
	}
	return ret;
}

static int cexp_rec(void *user, const struct cg_rec *r)
{
	struct cexp *x = user;
	int ret = cg_cenc_rec(x->main, r);
	for (int f = 0; ret == 0 && f < CG_CENC_F_COUNT && x->abl[f]; f++)
		ret = cg_cenc_rec(x->abl[f], r);
	return ret;
}

/* Ends the encoders; fills stats when asked. */
static int cexp_close(struct cexp *x, int ret, struct cgtrace_compact_stats *stats)
{
	if (x->main && ret == 0)
		ret = cg_cenc_flush(x->main);
	struct cg_cenc_stats st = {0};
	if (x->main)
		cg_cenc_stats(x->main, &st);
	int c = cg_cenc_close(x->main);
	if (ret == 0)
		ret = c;
	for (int f = 0; f < CG_CENC_F_COUNT; f++)
		if (x->abl[f]) {
			cg_cenc_close(x->abl[f]);
			if (stats)
				stats->ablated_bytes[f] = x->abl_bytes[f];
		}
	if (stats) {
		stats->records = st.records;
		stats->blocks = st.blocks;
		stats->raw_bytes = st.raw_bytes;
		stats->stored_bytes = st.stored_bytes;
		uint64_t raw[] = {
#define RAW(f) st.f,
		    CG_CENC_FIELDS(RAW)};
		for (int f = 0; f < CG_CENC_F_COUNT; f++)
			stats->field_raw_bytes[f] = raw[f];
	}
	return ret;
}

CG_EXPORT const char *cgtrace_compact_field_name(unsigned field)
{
	static const char *const names[] = {
#define NAME(f) #f,
	    CG_CENC_FIELDS(NAME)};
	return field < CG_CENC_F_COUNT ? names[field] : NULL;
}

CG_EXPORT int cgtrace_reader_export_compact_opts(struct cgtrace_reader *r, int fd,
						 const struct cgtrace_compact_options *opts,
						 struct cgtrace_compact_stats *stats)
{
	struct cexp x = {0};
	int werr = cexp_open(&x, fd, opts), ret = 0;
	const struct cg_rec *rec;
	while (werr == 0 && (ret = cg_reader_next_rec(r, &rec)) == 1)
		werr = cexp_rec(&x, rec);
	/* As the JSONL export: the last block goes out only when the trace read whole. */
	werr = cexp_close(&x, werr < 0 ? werr : ret < 0 ? ret : 0, stats);
	if (ret < 0)
		return ret;
	if (werr < 0) {
		cg_reader_clear_message(r);
		return werr;
	}
	return ret;
}

CG_EXPORT int cgtrace_reader_export_compact(struct cgtrace_reader *r, int fd, int zstd_level)
{
	struct cgtrace_compact_options o = {.zstd_level = zstd_level};
	return cgtrace_reader_export_compact_opts(r, fd, &o, NULL);
}

CG_EXPORT int cgtrace_doc_export_compact_opts(const struct cgtrace_doc *doc, int fd,
					      const struct cgtrace_compact_options *opts,
					      struct cgtrace_compact_stats *stats)
{
	struct cexp x = {0};
	int ret = cexp_open(&x, fd, opts);
	if (ret == 0)
		ret = cg_doc_records(doc, cexp_rec, &x);
	return cexp_close(&x, ret, stats);
}

CG_EXPORT int cgtrace_doc_export_compact(const struct cgtrace_doc *doc, int fd, int zstd_level)
{
	struct cgtrace_compact_options o = {.zstd_level = zstd_level};
	return cgtrace_doc_export_compact_opts(doc, fd, &o, NULL);
}
