/* SPDX-License-Identifier: MIT */
/*
 * Memory per training update read from a trace (cgtrace_steps_read): one
 * streamed read whose analysis tells the builder (steps.h) of each record
 * and span event; a trace read in full instead is replayed to a new one.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgtrace.h"
#include "bigmem.h"
#include "doc.h"
#include "export.h"
#include "memory_read.h"
#include "memory_replay.h"
#include "steps.h"
#include "stream_sink.h"

/* The steps of a document read: its streamed analysis's, or a replay's. */
static int build(struct cg_steps *b, struct cgtrace_doc *doc, const struct cgtrace_steps_options *o,
		 struct cgtrace_steps **out)
{
	struct cg_stream *own = NULL;
	const struct cg_stream *s = cg_stream_of(doc);
	int ret = 0;
	if (!s) {
		/* Read in full after all: what the hooks saw of the first read goes. */
		cg_steps_free(b);
		ret = cg_steps_new(o, &b);
		const struct cg_stream_cfg cfg = {.hooks = &cg_steps_hooks, .hooks_user = b};
		if (ret == 0)
			ret = cg_replay_run(doc, &cfg, &own);
		if (ret != 0) {
			cg_steps_free(b);
			return ret > 0 ? -ECANCELED : ret;
		}
		s = own;
	}
	uint64_t lo, hi = 0;
	cg_stream_time(s, &lo, &hi);
	ret = cg_steps_finish(b, s, hi, out);
	cg_stream_free(own);
	return ret;
}

CG_EXPORT int cgtrace_steps_read(const char *path, const struct cgtrace_read_options *read,
				 unsigned flags, const struct cgtrace_steps_options *opts,
				 struct cgtrace_steps **out, char *err, size_t errlen)
{
	static const struct cgtrace_steps_options none = {.warmup = 1};
	if (!opts)
		opts = &none;
	*out = NULL;
	if (errlen)
		err[0] = '\0';
	if (opts->growth && (flags & CGTRACE_READ_SKIP_STACKS))
		flags &= ~(unsigned)CGTRACE_READ_SKIP_STACKS;
	struct cg_steps *b;
	int ret = cg_steps_new(opts, &b);
	if (ret < 0)
		return ret;
	struct cgtrace_doc *doc = NULL;
	ret = cg_read_hooked(path, read, flags, &cg_steps_hooks, b, &doc, err, errlen);
	/* A hook stopped the read: out of memory. */
	if (ret > 0)
		ret = -ENOMEM;
	if (ret == 0)
		ret = build(b, doc, opts, out);
	else
		cg_steps_free(b);
	if (ret < 0) {
		if (errlen && !err[0])
			snprintf(err, errlen, "%s: %s", path, strerror(-ret));
		cgtrace_doc_free(doc);
		return ret;
	}
	(*out)->doc = doc;
	return 0;
}

CG_EXPORT void cgtrace_steps_free(struct cgtrace_steps *st)
{
	if (!st)
		return;
	struct cg_steps_owned *own = (struct cg_steps_owned *)st;
	for (size_t d = 0; st->figures && own->figs_cap && d < st->n_devices; d++)
		cg_big_free(st->figures[d], own->figs_cap[d] * sizeof(**st->figures));
	free(own->figs_cap);
	free(st->figures);
	free(st->devices);
	cg_big_free(st->rows, own->rows_cap * sizeof(*st->rows));
	free(st->trends);
	free(st->growth);
	cgtrace_doc_free(st->doc);
	free(st);
}
