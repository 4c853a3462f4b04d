/* SPDX-License-Identifier: MIT */
/*
 * One program run under the probe in a run's directory (rundir.h), its
 * one trace read back as a document: what the suites that look at the
 * stacks a program recorded (test-probe-stacks, test-symbols-cxx) share.
 * Failures are Check assertions: these run inside a test.
 */
#ifndef CG_TEST_PROBE_RUN_H
#define CG_TEST_PROBE_RUN_H

#include <stdint.h>

#include "cgtrace.h"
#include "rundir.h"

struct probe_run {
	char dir[RUNDIR_MAX], cwd[RUNDIR_MAX + 16], out[RUNDIR_MAX + 16];
	char *path; /* the program */
	int status;
	char *stdout_text, *stderr_text;
	struct cgtrace_doc *doc;
};

/*
 * Runs path with args (NULL-terminated, argv[0] included, or NULL) under
 * probe, its trace written to DIR/out/trace.PID.SUFFIX, with the extra
 * environment entries (NULL-terminated, or NULL); fails the test unless it
 * exits 0 and leaves exactly one trace, which is read.
 */
struct probe_run *probe_run(const char *probe, const char *path, const char *const *args,
			    const char *suffix, const char *const *extra);
void probe_run_free(struct probe_run *r);

/* The module the trace recorded for an address (the latest one covering it), or NULL. */
const struct cgtrace_module *probe_run_module_of(const struct probe_run *r, uint64_t a);

#endif
