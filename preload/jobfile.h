/* SPDX-License-Identifier: MIT */
/*
 * A job's folder (CGPROBE_OUTPUT=DIR/, docs/jobs.md): its manifest,
 * DIR/cgprobe.job, gets a JSON line for each trace made there and one for
 * each the probe removes again. Each line is one write(2) to the file
 * opened O_APPEND, so that the lines of processes writing at once stay
 * whole. Trouble with the manifest changes nothing else.
 */
#ifndef CG_JOBFILE_H
#define CG_JOBFILE_H

#include <stdint.h>
#include <sys/types.h>

/* The manifest's name in the folder: no trace's ending (.cgt, .jsonl, .zst). */
#define CG_JOB_MANIFEST "cgprobe.job"

/*
 * The trace at path (absolute) was created: its line, with the process's
 * pid, parent, host, the fork's parent (0: none), the rank its
 * environment gives (launch_env.h), the wall-clock time of the trace's
 * time 0, and its executable and command line. Also makes the line that
 * cg_job_trace_removed writes.
 */
void cg_job_trace_made(const char *path, pid_t forked_from, uint64_t start_realtime_ns);
/*
 * The trace cg_job_trace_made named last was removed (nothing recorded
 * before an exec): its line. Allocates nothing, for the exit paths.
 */
void cg_job_trace_removed(void);

#endif
