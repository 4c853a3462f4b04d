/* SPDX-License-Identifier: MIT */
/*
 * A job: the traces of many processes read as one (docs/jobs.md). Each
 * trace is read on its own, streamed, into the figures of its process and
 * the live bytes over time of its devices other than the host; those
 * series, placed on one time axis, are summed per physical device.
 */
#ifndef CG_JOB_H
#define CG_JOB_H

#include <stdbool.h>
#include <stdint.h>

#include "arena.h"
#include "cgtrace.h"
#include "vec.h"

/*
 * A device's live bytes after each moment they changed, on the trace's own
 * time, and of them the pre-existing bytes (a fork child's are its
 * parent's): varints of differences (job_series.c).
 */
struct cg_job_series {
	uint16_t dev;      /* the reading document's device number */
	size_t device;     /* index among the process's devices, once known */
	struct cg_vec buf; /* uint8_t: the moments not yet in the file, the last one's at last_off */
	size_t n, last_off;
	int fd;            /* the spill file (unlinked) of the moments before buf's; -1: none yet */
	bool no_spill;     /* no file to be had, or a write failed: the rest stays in memory */
	uint64_t spilled;  /* bytes in it */
	uint64_t prev_t, prev_live, prev_pre; /* the moment before the last */
	uint64_t t, live, pre;                /* the last */
};

struct cg_series_cursor {
	const struct cg_job_series *s;
	const uint8_t *p, *end;
	uint8_t *chunk;     /* the spill file read a piece at a time */
	uint64_t file_at;   /* the file's bytes read into chunk so far */
	bool in_memory;     /* past the file: reading buf */
	uint64_t t, live, pre;
};

int cg_series_put(struct cg_job_series *s, uint64_t t, uint64_t live, uint64_t pre);
/* 0, or -ENOMEM for the cursor's buffer; cg_series_end after. */
int cg_series_begin(const struct cg_job_series *s, struct cg_series_cursor *c);
/* The next moment into c's t, live and pre; false after the last (or a failed read). */
bool cg_series_next(struct cg_series_cursor *c);
void cg_series_end(struct cg_series_cursor *c);
void cg_series_free(struct cg_job_series *s);

/* While reading, per device number: pre-existing bytes live, and at the device's peak. */
struct cg_job_dev {
	uint8_t kind; /* 0: not seen yet, 1: the host (cpu), 2: another */
	uint64_t pre_live, max_live, pre_at_max;
};

/* What the job keeps of one process besides its public figures. */
struct cg_job_proc {
	struct cg_arena arena; /* the process's strings and arrays */
	struct cg_vec series;  /* struct cg_job_series, devices other than the host */
	/* While reading: devices, and the pre-existing bytes of each live-table entry. */
	struct cg_vec devs;      /* struct cg_job_dev by device number */
	struct cg_vec pre_entry; /* uint64_t by entry */
	int err;                 /* a hook's out of memory */
};

/* A device of a process that shares in a physical device: its series. */
struct cg_job_member {
	size_t proc, device, series;
};

struct cg_job {
	struct cgtrace_job pub; /* first: the public job is this */
	struct cg_job_proc *procs;
	struct cg_arena arena;  /* the job's own strings and arrays */
	/* Each physical device's members, in pub.gpus' order. */
	struct cg_job_member **gpu_members;
	size_t *gpu_n;
};

/* Reads the trace of process i into its figures and series (job_proc.c). */
void cg_job_read_one(struct cg_job *j, size_t i, const struct cgtrace_job_options *o);
/* The time axis, the process tree and the machines' sums (job_tree.c). */
int cg_job_place(struct cg_job *j);
/* The physical devices' sums from the series on the time axis (job_gpu.c). */
int cg_job_gpus(struct cg_job *j);

#endif
