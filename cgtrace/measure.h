/* SPDX-License-Identifier: MIT */
/*
 * The measures of one side of a comparison (measure.c): a trace or a job
 * read into the figures that diff compares and check holds to limits,
 * per process and device, per physical GPU, per training update and
 * phase, and the sites by the bytes they held at the peak, named by their
 * symbolized frames (docs/compare.md). Each trace is read once, streamed
 * (its steps, its memory report and its sites from that one read), and
 * only the figures are kept: the document goes when its process is done.
 */
#ifndef CGTRACE_MEASURE_H
#define CGTRACE_MEASURE_H

#include <string.h>

#include "cli.h"

/* A site on one device of one process: its frame's name as top prints it. */
struct cli_msite {
	char *name;
	const char *device; /* its process's device's name (cli_mdev.device) */
	uint64_t peak_bytes, leaked_bytes, count;
};

/* A device of one process. */
struct cli_mdev {
	char *device;
	char *uuid; /* the physical device's identity; NULL: none recorded */
	uint64_t peak_bytes, peak_ns, alloc_count, free_count, final_bytes;
	uint64_t leaked_bytes;      /* never freed, blocks live before recording began left out */
	struct cgtrace_moment when; /* of the peak; phase owned */
	/* Bytes by category at the peak: known for the device of the process's peak. */
	bool has_categories;
	uint64_t categories[CGTRACE_CAT_COUNT];
	struct cgtrace_step_trend trend;
	/* One per row of the process (its steps' figures); NULL: none. */
	const struct cgtrace_step_figures *figures;
	char *growth_site; /* the site that grew most (growth asked); NULL: none */
	uint64_t growth_per_update;
};

struct cli_mproc {
	char *path;
	bool read;         /* false: unreadable, its error printed */
	int64_t pid, rank; /* rank: -1 unknown, or a fork child (which inherits its parent's) */
	char *executable;
	char who[64];  /* "rank 1 (pid 4102)", "pid 4102" */
	char name[48]; /* "rank 1", "pid 4102" */
	uint64_t alloc_count, free_count, leaked_bytes;
	struct cli_mdev *devs; /* sorted by name */
	size_t n_devs;
	enum cgtrace_updates_from from;
	uint64_t warmup;
	/*
	 * The steps read, kept without their document: the rows (updates in
	 * start order, each followed by its phases) and each device's figures,
	 * their phases' names copied into phases.
	 */
	struct cgtrace_steps *steps;
	const struct cgtrace_step_row *rows;
	size_t n_rows;
	char **phases;
	size_t n_phases;
	/* The most bytes at the peak first, then by name: those with bytes at the peak, or all. */
	struct cli_msite *sites;
	size_t n_sites;
};

/* A physical GPU: its processes' bytes summed on the job's axis (cgtrace_job_gpu). */
struct cli_mgpu {
	char *key; /* "gpu:UUID", or "gpu:HOST/DEVICE" when recorded without one */
	uint64_t peak_bytes, peak_ns, total_bytes;
	size_t n_processes;
	long top_process; /* the process of the largest share at the peak; -1: none */
	char *top_device; /* its name for the device there */
};

struct cli_measure {
	bool job;                /* several traces, or a folder */
	struct cli_mproc *procs; /* in the order of the paths */
	size_t n_procs, n_unread;
	struct cli_mgpu *gpus;
	size_t n_gpus;
};

struct cli_measure_opts {
	size_t jobs;     /* traces read at once */
	uint64_t warmup; /* updates left out of the trend (as cgtrace steps --warmup) */
	bool growth;     /* each device's growth site (cgtrace steps --growth) */
	/*
	 * Every site with allocations (their leaked bytes and counts), not
	 * only those holding bytes at the peak: the stacks of every
	 * allocation resolved, where top's ranking by peak resolves few.
	 */
	bool all_sites;
	bool job; /* even one trace is a job (summary --job) */
	/*
	 * Sites named by function and file, their lines summed: a commit that
	 * moves code shifts every line below the change, and sites matched
	 * by line would then read as gone and new (diff --by function).
	 */
	bool by_function;
};

/*
 * Measures the traces args name (a trace, several, a folder: one side):
 * CLI_OK; CLI_FAIL when some trace could not be read (its line printed,
 * the others measured); -ENOMEM (printed) with nothing measured. Free
 * with cli_measure_free either way.
 */
int cli_measure_read(struct cli_measure *m, const char *const *args, size_t n_args,
                     const struct cli_measure_opts *o);
void cli_measure_free(struct cli_measure *m);
/* Device name of process p, or NULL. */
const struct cli_mdev *cli_mproc_dev(const struct cli_mproc *p, const char *device);
/* Two sites (struct cli_msite) by their key, device then name: how sides match them (qsort's order). */
static inline int cli_msite_key_cmp(const void *a, const void *b)
{
	const struct cli_msite *x = a, *y = b;
	int c = strcmp(x->device, y->device);
	return c ? c : strcmp(x->name, y->name);
}
/* The site of p on device (NULL: any) with the most of the figure at offset (in cli_msite). */
const struct cli_msite *cli_mproc_top_site(const struct cli_mproc *p, const char *device,
                                           size_t offset);

#endif
