/* SPDX-License-Identifier: MIT */
/* The report's data block: the view of a trace as one bounded JSON object (docs/report.md). */
#ifndef CGTRACE_REPORT_DATA_H
#define CGTRACE_REPORT_DATA_H

#include "cli.h"

/* Caps on what the data block lists one by one; the rest is counted. */
enum {
	REPORT_BREAKDOWN = 200,  /* allocations live at the peak */
	REPORT_OPS = 50,         /* op groups at the peak */
	REPORT_SITES = 50,       /* rows of the top sites and the leaks tables */
	REPORT_FRAMES = 16,      /* frames of a site row, from the site outwards */
	REPORT_SPANS = 200,      /* spans by bytes allocated */
	REPORT_STEP_SPANS = 500, /* step spans by highest live bytes */
	REPORT_OOMS = 1000,      /* out-of-memory checkpoints per device */
};

/* Site names, each written once in the data block and referred to by index. */
struct report_names {
	char **names;
	size_t n, cap;
	size_t *slots; /* open addressing over names: index + 1, 0 empty */
	size_t n_slots;
	bool err;
};

struct report_ctx {
	struct cli_buf *b;
	const struct cgtrace_view *v;
	const struct cgtrace_doc *doc; /* v->doc, may be NULL */
	bool stacks;                   /* sites below are open */
	struct cli_sites sites;
	struct report_names names;
};

/* The index of name in the table (added when new), -1 when memory ran out. */
long report_name(struct report_names *t, const char *name);
void report_names_free(struct report_names *t);
/* The site of a stack as an index in the names, -1 without one. */
long report_site(struct report_ctx *c, uint64_t stack_id);

/* n numbers as a JSON array. */
void report_json_u64s(struct cli_buf *b, const uint64_t *v, size_t n);

/* Members of the data object (each starts with a comma): spans, steps, step spans and bands. */
int report_json_spans(struct report_ctx *c);

/*
 * The whole data object of view v for the trace at path (name: what the
 * page calls it). Sites are resolved when the document has stacks; a
 * failure there is printed and returns CLI_FAIL. CLI_OK with the object
 * in b, or CLI_FAIL (b->err: out of memory).
 */
int report_json(struct cli_buf *b, const struct cgtrace_view *v, const char *path,
                const char *name);

#endif
