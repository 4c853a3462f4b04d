/* SPDX-License-Identifier: MIT */
/* The report's data block: the view of a trace as one bounded JSON object (docs/report.md). */
#ifndef CGTRACE_REPORT_DATA_H
#define CGTRACE_REPORT_DATA_H

#include "cli.h"

/* Caps on what the data block lists one by one; the rest is counted. */
enum {
	REPORT_BREAKDOWN = 200,  /* allocations live at the peak (CGTRACE_PEAK_LARGEST at most) */
	REPORT_OPS = 50,         /* op groups at the peak */
	REPORT_SITES = 50,       /* rows of the top sites and the leaks tables */
	REPORT_FRAMES = 16,      /* frames of a site row, from the site outwards */
	REPORT_SPANS = 200,      /* spans by bytes allocated */
	REPORT_STEP_SPANS = 500, /* step spans by highest live bytes */
	REPORT_OOMS = 1000,      /* out-of-memory checkpoints per device */
	REPORT_UPDATES = 2000,   /* training updates (step-select.h's selection beyond) */
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
	struct cli_jw *w;
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

/* a + b, or UINT64_MAX where it would wrap: totals of figures that may be huge. */
static inline uint64_t report_sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

/* Members of the data object: spans, steps, step spans and bands. */
int report_json_spans(struct report_ctx *c);
/* The member "updates": training updates, their figures per device, their marks (updates.c). */
int report_json_updates(struct report_ctx *c);

/*
 * The whole data object of view v for the trace at path (name: what the
 * page calls it). Sites are resolved when the document has stacks; a
 * failure there, or memory running out, is printed and returns CLI_FAIL;
 * CLI_OK with the object in b.
 */
int report_json(struct cli_buf *b, const struct cgtrace_view *v, const char *path,
                const char *name);

#endif
