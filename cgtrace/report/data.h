/* SPDX-License-Identifier: MIT */
/* The report's data block: the view of a trace as one bounded JSON object (docs/report.md). */
#ifndef CGTRACE_REPORT_DATA_H
#define CGTRACE_REPORT_DATA_H

#include "cli.h"

/* A page's allocations live at the peak: its view keeps them (CGTRACE_PEAK_LARGEST at most). */
#define REPORT_BREAKDOWN 200

/*
 * Caps on what the data block lists one by one; the rest is counted. A
 * trace's own page has the first of each pair (report_limits); a job's
 * page of many processes gives each process less, down to the second.
 */
#define REPORT_LIMITS(X)                                                                    \
	X(breakdown, REPORT_BREAKDOWN, 20) /* allocations live at the peak */               \
	X(ops, 50, 10)                     /* op groups at the peak */                      \
	X(sites, 50, 10)                   /* rows of the top sites and the leaks tables */ \
	X(frames, 16, 8)                   /* frames of a site row, from the site outwards */ \
	X(spans, 200, 20)                  /* spans by bytes allocated */                   \
	X(step_spans, 500, 50)             /* step spans by highest live bytes */           \
	X(ooms, 1000, 50)                  /* out-of-memory checkpoints per device */       \
	X(updates, 2000, 100)              /* training updates (step-select.h's selection beyond) */

struct report_limits {
#define REPORT_LIMIT_MEMBER(name, page, least) size_t name;
	REPORT_LIMITS(REPORT_LIMIT_MEMBER)
#undef REPORT_LIMIT_MEMBER
};

/*
 * Processes of a job whose pages each get a trace's own caps; past them
 * every cap shrinks in proportion, to its least (docs/report.md, "A job").
 */
#define REPORT_FULL_PAGES 8

/* A page's share of full among `pages`: full up to REPORT_FULL_PAGES, past them less, to least. */
size_t report_share(size_t full, size_t least, size_t pages);
/* The caps of a page among `pages` (1: a trace's own). */
void report_limits(struct report_limits *out, size_t pages);

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
	const struct report_limits *lim;
	const struct cgtrace_view *v;
	const struct cgtrace_doc *doc; /* v->doc, may be NULL */
	bool stacks;                   /* sites below are open */
	struct cli_sites sites;
	struct report_names names;
};

/* What a page calls the trace at path: its file's name; "<stdin>" for "-". */
const char *report_trace_name(const char *path);
/* The data object's first members, a trace's page's or a job's: its format and generator. */
void report_json_head(struct cli_jw *w, const char *format);
/* Its categories' names and the palette, which both kinds of page draw with. */
void report_json_colours(struct cli_jw *w);

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

/* The member "grid": the view's start_ns, end_ns, bucket_ns and n (buckets). */
void report_json_grid(struct cli_jw *w, const struct cgtrace_view *v);
/* A device's name and figures: capacity, peak, peak_ns, allocation and free counts, bytes. */
void report_json_device_figures(struct cli_jw *w, const struct cgtrace_view_device *d);
/*
 * A device's live bytes as two columns, members "t" and "v": per bucket
 * of the view with records its highest (max_ns, max), then its end when
 * another; so the series' highest is the device's peak, at most two
 * samples a bucket.
 */
void report_json_series(struct cli_jw *w, const struct cgtrace_view *v,
                        const struct cgtrace_view_device *d);

/* Members of the data object: spans, steps, step spans and bands. */
int report_json_spans(struct report_ctx *c);
/* The member "updates": training updates, their figures per device, their marks (updates.c). */
int report_json_updates(struct report_ctx *c);
/*
 * The member "marks": the updates' starts and ends for the timeline, every
 * update when they are no more than v's buckets, else the first to start
 * in each bucket. 0 or -ENOMEM.
 */
int report_json_update_marks(struct cli_jw *w, const struct cgtrace_view *v,
                             const struct cgtrace_steps *st);

/* The run a page is compared with (cgtrace report --baseline BASE). */
struct report_base {
	const struct cgtrace_view *v;
	const char *name; /* what the page calls it */
};
/*
 * The members "baseline" (BASE's grid, each device's figures and live
 * bytes as samples, its updates' starts) and "diff" (the headline
 * figures, new against BASE, with signed differences) (baseline.c).
 */
int report_json_baseline(struct report_ctx *c, const struct report_base *base);
/*
 * BASE's view as a baseline draws it: vo's buckets, no allocations one by
 * one, no stacks; NULL with the error printed (one line naming BASE).
 */
struct cgtrace_view *report_base_load(const char *path, const struct cgtrace_view_options *vo);

/*
 * The whole data object of view v for the trace at path (name: what the
 * page calls it), lists capped by lim. Sites are resolved when the
 * document has stacks; a failure there, or memory running out, is printed
 * and returns CLI_FAIL; CLI_OK with the object in b. base: the baseline
 * the page is compared with, or NULL.
 */
int report_json(struct cli_buf *b, const struct cgtrace_view *v, const char *path,
                const char *name, const struct report_limits *lim, const struct report_base *base);

#endif
