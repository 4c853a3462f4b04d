/* SPDX-License-Identifier: MIT */
/*
 * The rows of top and leaks for a job (job-sites.c): each process read,
 * its rows summed as cli_site_rows sums them, folded into the job's table
 * by what the command prints (the site, or the stack's frames) and its
 * document freed. A job of hundreds of ranks holds one document per
 * reading thread and the table of its distinct sites.
 */
#ifndef CLI_JOB_SITES_H
#define CLI_JOB_SITES_H

#include "cli.h"

struct cli_job_sites_opts {
	const char *device; /* each process's device of that name only; NULL: every one */
	enum cli_by by;
	bool by_stack;   /* a row per stack as printed (top --full, leaks), else per site */
	bool full;       /* a stack printed whole (top --full), else from its site outwards */
	bool by_process; /* a row per process and site, else one per site across processes */
	bool frames;     /* keep each row's frames (JSON, printed stacks) */
	size_t keep;     /* by process: the rows shown, the most each process adds (0: all) */
	size_t jobs;     /* traces read at once */
};

/* A process of the job: its trace and who it is. */
struct cli_job_proc {
	const char *path;
	struct cgtrace_process process; /* its strings are "" but for what names it */
	bool read;                      /* false: unreadable, its error printed */
};

struct cli_job_row {
	const char *device; /* as its processes name it: "cuda:*" where they differ */
	const char *site;   /* the site as printed */
	bool preexisting;   /* blocks live before recording began, without a stack */
	struct cgtrace_stack_stat sum;
	size_t n_stacks, n_processes;
	size_t process;    /* by process its process, else the first process with the row */
	uint64_t stack_id; /* the row's first stack in that process (0: none) */
	/* The frames printed, every one shown (cli_print_frames' full); NULL: none kept. */
	const struct cgtrace_resolved_stack *stack;
};

struct cli_job_table;

struct cli_job_sites {
	struct cli_job_proc *procs; /* in the order of the paths */
	size_t n_procs, n_read;
	struct cli_job_row *rows; /* the largest first */
	size_t n_rows;
	/* Rows in all; by process with keep, those past each process's keep are summed in rest. */
	size_t n_total;
	struct cgtrace_stack_stat rest;
	struct cli_job_table *table; /* what the rows point into */
};

/*
 * Reads the traces at paths as one job's rows, opts->jobs at once: CLI_OK;
 * CLI_FAIL when a trace could not be read (its error printed, the rows of
 * the others kept); -ENOMEM, printed, with no rows.
 */
int cli_job_sites_read(struct cli_job_sites *js, char *const *paths, size_t n,
		       const struct cli_job_sites_opts *o);
void cli_job_sites_free(struct cli_job_sites *js);

#endif
