/* SPDX-License-Identifier: MIT */
/* What the cgtrace subcommands share: loading, number formatting, sites, output files. */
#ifndef CGTRACE_CLI_H
#define CGTRACE_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "cli-buf.h"
#include "cgtrace.h"
#include "cli-opts.h"
#include "json-out.h"

/* --bytes, as the commands that print sizes take it: exact counts into the bool member. */
#define CLI_OPT_BYTES(type, member)                                                          \
	{.name = "bytes", .offset = offsetof(type, member),                                 \
	 .help = "exact byte counts instead of KiB/MiB/GiB"}

/*
 * --site: where a stack with Python frames has its site (docs/symbols.md):
 * among them (python, the default) or by the native frames alone.
 */
enum cli_site { CLI_SITE_PYTHON, CLI_SITE_NATIVE };
extern const struct cli_choice cli_site_choices[];
/* The choice in effect for the process's one command (cli_sites_* read it). */
extern enum cli_site cli_site_mode;
#define CLI_OPT_SITE(type, member)                                                           \
	{.name = "site", .kind = CLI_OPT_CHOICE, .offset = offsetof(type, member),          \
	 .choices = cli_site_choices}

/* The trace's name in messages: "<stdin>" for "-", as the library names it. */
const char *cli_path_name(const char *path);
/* Reads a trace; prints the error on stderr and returns NULL on failure. */
struct cgtrace_doc *cli_load(const char *path);
/* The same with CGTRACE_READ_* flags (summary, memory, validate stream the memory records). */
struct cgtrace_doc *cli_load_flags(const char *path, unsigned flags);

/*
 * An unlinked temporary file in $TMPDIR (else /tmp), to read and write:
 * a spool of standard input, a job's timeline rows. -1 with errno; *dir
 * is the folder either way, for the message.
 */
int cli_temp_fd(const char **dir);

/* "1.5 MiB" (binary units), or exact bytes when exact is set. */
const char *cli_bytes(char buf[32], uint64_t bytes, bool exact);
/* "+512.0 KiB", "-1.2 MiB", "+12 B": a signed size (a change, a slope). */
const char *cli_signed_bytes(char buf[40], double v, bool exact);
/* "1.234 ms" and friends for nanosecond timestamps. */
const char *cli_ns(char buf[32], uint64_t ns);
/* Thousands separators: 1,234,567. */
const char *cli_count(char buf[32], uint64_t n);
/* The peak's op groups (cgtrace_memory_peak_by_op) as an array of {op_key, count, bytes}. */
void cli_json_op_groups(struct cli_jw *w, const struct cgtrace_op_group *g, size_t n,
			const char *op_key);

/*
 * Where a moment fell in training (docs/steps.md), to follow a peak's
 * time: ", update 20, optimizer", ", after update 30", ", update 3
 * (inferred)"; "" when the trace has no updates and the moment no phase.
 */
const char *cli_moment(char *buf, size_t len, const struct cgtrace_memory_report *rep,
		       const struct cgtrace_moment *m);
/* The same as members of the object being written: "<prefix>update" (null: none), "<prefix>phase". */
void cli_json_moment(struct cli_jw *w, const char *prefix, const struct cgtrace_moment *m);

/* The probe's settings recorded in meta (probe-settings.c). */
/* A meta tag's value, or NULL when the trace has no such tag. */
const char *cli_tag(const struct cgtrace_doc *doc, const char *key);
enum cli_note_style {
	CLI_NOTE_FULL,  /* summary and memory */
	CLI_NOTE_BRIEF, /* summary --brief, read through the cgprobe wrapper */
};
/*
 * The note that allocations under the probe's CGPROBE_MIN_BYTES are not in
 * the trace, so its peaks and totals are low; false (buf untouched) when the
 * trace recorded every size or the tag is malformed.
 */
/*
 * CGPROBE_CAPTURE=update whose window never came (tag cgprobe_capture_reached
 * no): the one line saying so.
 */
bool cli_capture_note(char *buf, size_t len, const struct cgtrace_doc *doc);
/*
 * A fork child whose fork could not wait for the probe's writer
 * (cgprobe_inherited partial): the line saying its inherited blocks are
 * missing.
 */
bool cli_inherited_note(char *buf, size_t len, const struct cgtrace_doc *doc);
bool cli_min_bytes_note(char *buf, size_t len, const struct cgtrace_doc *doc, bool exact,
			enum cli_note_style style);

/* Allocation sites (sites.c): what top, leaks, memory and the folded export share. */

/* What sites are ranked by: `--by NAME`. */
enum cli_by { CLI_BY_PEAK, CLI_BY_TOTAL, CLI_BY_COUNT, CLI_BY_LEAKED, CLI_BY_TEMPORARY };
/* Their names, in enum order, with their help rows in cgtrace top's help; NULL-ended. */
extern const struct cli_choice cli_by_choices[];
/* false when name is none of them. */
bool cli_by_parse(const char *name, enum cli_by *out);
const char *cli_by_name(enum cli_by by);
/* The names, "peak|total|count|leaked|temporary", for usage lines. */
#define CLI_BY_NAMES "peak|total|count|leaked|temporary"
/* The figure ranked by: bytes, or a count for count and temporary. */
uint64_t cli_by_value(const struct cgtrace_stack_stat *s, enum cli_by by);
bool cli_by_bytes(enum cli_by by);

/* A resolved stack by id. */
/* The most frames one stack has (docs/stacks.md). */
#define CLI_STACK_FRAMES_MAX 1024

/* A resolved frame's code (cgtrace_frame_code), worked out once per frame. */
struct cli_frame_code {
	const struct cgtrace_frame *frame; /* NULL: an empty slot */
	enum cgtrace_code code;
};

/* A stack resolved on demand, by id (sites.c's table). */
struct cli_stack_ref {
	uint64_t id; /* 0: an empty slot */
	/* Its own allocation: callers keep it while the table grows (the massif export, many). */
	struct cgtrace_resolved_stack *st;
};

/*
 * A streamed trace, its stacks' sites worked out as the rows are summed
 * (cli_site_rows), and the stacks asked for resolved: one resolution per
 * distinct address, one array of frames per stack that is printed, none
 * for the others.
 */
struct cli_sites {
	struct cgtrace_doc *doc;
	bool owns_doc;
	struct cgtrace_symbols *syms;
	bool several_devices;               /* cli_site_rows saw figures of two devices or more */
	bool from_site;                     /* stacks resolved from their site outward only */
	bool python;                        /* the trace's bit-63 frames are Python frames */
	struct cli_stack_ref *refs;         /* open addressing by id */
	size_t n_refs, cap_refs;
	uint64_t *addrs;                    /* room for one stack's return addresses */
	struct cli_frame_code *codes;       /* open addressing by frame: each one's code */
	size_t n_codes, cap_codes;
};

/* Reads path (streamed), the figures, the stacks; prints what failed and returns CLI_FAIL. */
int cli_sites_open(struct cli_sites *s, const char *path);
/* Only the stacks of a document the caller keeps (cgtrace memory); CLI_FAIL printed. */
int cli_sites_attach(struct cli_sites *s, struct cgtrace_doc *doc, const char *path);
void cli_sites_close(struct cli_sites *s);
/* The stack of id resolved and kept (valid until cli_sites_close), NULL: none, or out of memory. */
const struct cgtrace_resolved_stack *cli_sites_stack(struct cli_sites *s, uint64_t id);
/*
 * Whether frame i of st is printed: without full, a stack with Python
 * frames leaves out the interpreter's evaluation calls that run them.
 */
bool cli_frame_shown(const struct cgtrace_resolved_stack *st, size_t i, bool full);
/* The site frame of stack id, NULL when it has none; resolves only up to the site. */
const struct cgtrace_frame *cli_sites_site(struct cli_sites *s, uint64_t id);

/* One row: a site (or, by stack, a whole stack) on one device, the figures summed. */
struct cli_site_row {
	const char *device;
	uint64_t stack_id;                 /* the first stack of the row (cli_sites_stack) */
	const struct cgtrace_frame *site;  /* its site, NULL: none */
	struct cgtrace_stack_stat sum;
	size_t n_stacks;
};

/*
 * The rows of device (NULL: every device) with a non-zero figure by, the
 * largest first: one per site, or per stack when by_stack. *rows is
 * malloc'ed; -ENOMEM.
 */
int cli_site_rows(struct cli_sites *s, const char *device, bool by_stack, enum cli_by by,
		  struct cli_site_row **rows, size_t *n);
/*
 * cli_sites_open, then cli_site_rows: CLI_OK with both to free, or
 * CLI_FAIL, printed, with nothing left open.
 */
int cli_sites_open_rows(struct cli_sites *s, const char *path, const char *device, bool by_stack,
			enum cli_by by, struct cli_site_row **rows, size_t *n);
/* s's figures added to to's, each saturating: one row's sums of several stacks or processes. */
void cli_stat_add(struct cgtrace_stack_stat *to, const struct cgtrace_stack_stat *s);
/* "function (file:line)", "function (module+0xoffset)", "module+0xoffset" or "0xaddress". */
const char *cli_frame_name(char *buf, size_t len, const struct cgtrace_frame *f);
/*
 * The site of a stat's allocations without a stack that were live before
 * the recording began (a fork child's inherited heap): a frame of no code,
 * which cli_frame_name calls "(live before recording began)".
 */
extern const struct cgtrace_frame cli_site_preexisting;
/*
 * The site of allocations of stack stack_id (0: none), pre-existing or
 * not: the stack's, cli_site_preexisting, or NULL (none).
 */
const struct cgtrace_frame *cli_alloc_site(struct cli_sites *s, uint64_t stack_id,
					   bool preexisting);
/* The frames of a stack, one a line after indent, from the site outwards (all when full). */
void cli_print_frames(const struct cgtrace_resolved_stack *st, bool full, const char *indent);
/* A stack as cli_print_frames prints it; pre-existing allocations (no stack) say so. */
void cli_print_site_frames(const struct cgtrace_resolved_stack *st, bool preexisting, bool full,
			   const char *indent);
/* A row's stack as cli_print_site_frames prints it. */
void cli_print_row_frames(struct cli_sites *s, const struct cli_site_row *r, bool full,
			  const char *indent);
/* A row's figures as members of the object being written: count, total_bytes, ... */
void cli_json_stat(struct cli_jw *w, const struct cgtrace_stack_stat *s);
/* {"address", "function", "file", "line", "module", "offset", "inlined"} */
void cli_json_frame(struct cli_jw *w, const struct cgtrace_frame *f);
/* [frame, ...] from the site outwards (all frames when full). */
void cli_json_frames(struct cli_jw *w, const struct cgtrace_resolved_stack *st, bool full);

/* The output file of a view or an export (output.c). */
struct cli_out {
	FILE *f;
	const char *path;
	char *target; /* the regular file replaced: path, or the file its links name */
	char *tmp;    /* written here, renamed to target on success */
	mode_t mode;  /* the replaced file's permissions, or a new file's */
};
/*
 * Opens path to write: "-", or a name of standard output (/dev/stdout),
 * is standard output; a regular file, or none, is written to a temporary
 * file beside it and replaces it in one rename once complete; a FIFO or
 * character device is written as it is; a directory or any other kind of
 * file is refused. CLI_FAIL printed.
 */
int cli_out_open(struct cli_out *o, const char *path);
/* Ends the output: ok, it replaces path; else the temporary file goes. CLI_FAIL printed. */
int cli_out_close(struct cli_out *o, bool ok);
/* The paragraph the help of each command with -o FILE ends with: what cli_out_open does. */
#define CLI_OUT_HELP                                                                              \
	"-o FILE: a regular file is written beside its name and renamed over it once\n"         \
	"complete, so it is never half-written and a failed run leaves the old one\n"            \
	"(through a symbolic link, the file it names); - or /dev/stdout is standard\n"           \
	"output; a FIFO or character device is written as it is.\n"
/* The view of path (cgtrace_view_read); prints the error and returns NULL. */
struct cgtrace_view *cli_view_load(const char *path, const struct cgtrace_view_options *opts,
				   unsigned flags);

extern const struct cli_cmd cli_summary, cli_memory, cli_validate, cli_timeline, cli_export,
	cli_top, cli_leaks, cli_plot, cli_report, cli_steps, cli_diff, cli_check;

#endif
