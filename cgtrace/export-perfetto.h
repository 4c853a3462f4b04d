/* SPDX-License-Identifier: MIT */
/* cgtrace export --format perfetto: a view as Chrome Trace Event JSON (docs/perfetto.md). */
#ifndef CGTRACE_EXPORT_PERFETTO_H
#define CGTRACE_EXPORT_PERFETTO_H

#include <stddef.h>
#include <stdio.h>

#include "cgtrace.h"
#include "export-perfetto-out.h"

/* The defaults of --buckets and --max-spans. */
#define CLI_PERFETTO_BUCKETS 10000
#define CLI_PERFETTO_MAX_SPANS 100000

/*
 * Kernel thread ids stay under PID_MAX_LIMIT (2^22): the ids the file
 * makes up itself (threads without one, the devices' pseudo-processes, a
 * job's) are from here up, so they never meet a real one.
 */
#define CLI_PERFETTO_PSEUDO_BASE (UINT64_C(1) << 22)

struct cli_perfetto_options {
	size_t max_spans; /* spans kept, the longest first */
};

/*
 * Writes the view (spans, names and meta from view->doc when it is not
 * NULL) to f; 0 or -ENOMEM. Write errors are left to the caller's ferror.
 */
int cli_perfetto_write(FILE *f, const struct cgtrace_view *view,
                       const struct cli_perfetto_options *opts);

/*
 * Where a view's events go: the file of one trace, or one process of a
 * job's file (export-perfetto-job.c), its times shifted by the output's
 * shift_ns.
 */
struct perfetto_place {
	uint64_t pid;        /* the program's process */
	uint64_t sort_index; /* its process_sort_index */
	const char *name;    /* its process_name; NULL: "ENTRYPOINT (RUN_ID)" */
	/*
	 * One process of a job: its devices are counters of its own process,
	 * not processes of their own (whose pseudo pids another process's
	 * devices would take too), and its capture window is marked on its
	 * process, not across the whole file.
	 */
	bool in_job;
};

/* What a view's events hold of its spans and updates, for the metadata. */
struct perfetto_kept {
	size_t spans, spans_kept, updates_kept;
};

/* The pid the program gets alone: the trace's pid tag when a plain number under the pseudo ids, else 1. */
uint64_t cli_perfetto_program_pid(const struct cgtrace_doc *doc);
/* The events of view v (the program's, its spans, updates and devices) placed at pl; -ENOMEM. */
int perfetto_view_events(struct perfetto_out *o, const struct cgtrace_view *v,
                         const struct perfetto_place *pl, size_t max_spans,
                         struct perfetto_kept *kept);
/* The view's members of a metadata object: schema, run_id, ... updates_kept, cgtrace_note. */
void perfetto_view_meta(struct cli_jw *w, const struct cgtrace_view *v,
                        const struct perfetto_kept *k);
/* The file's frame: the object and its traceEvents opened ... */
void perfetto_begin(struct perfetto_out *o);
/* ... traceEvents closed and metadata opened with its source and cgtrace_version ... */
void perfetto_metadata_begin(struct perfetto_out *o);
/* ... and both closed, the rest written out: 0, -ENOMEM or -EINVAL (a writer's error). */
int perfetto_end(struct perfetto_out *o);

/* Reads the view of path and writes it to output (NULL or "-": stdout); CLI_OK or CLI_FAIL. */
int cli_export_perfetto(const char *path, const char *output, size_t buckets, size_t max_spans);

#endif
