/* SPDX-License-Identifier: MIT */
/*
 * A run's directory, as test-preload and test-cuda lay it out: DIR, fresh
 * under $TMPDIR, holds cwd/ (the program's working directory), out/ (where
 * its traces go by default) and the program's stdout and stderr files.
 */
#ifndef CG_TEST_RUNDIR_H
#define CG_TEST_RUNDIR_H

#include <stddef.h>
#include <sys/types.h>

#define RUNDIR_MAX 1024

/* Makes DIR (from "$TMPDIR/PREFIX-XXXXXX") and DIR/cwd; cwd and out get their paths. */
void rundir_make(char dir[RUNDIR_MAX], char cwd[RUNDIR_MAX + 16], char out[RUNDIR_MAX + 16],
		 const char *prefix);

/*
 * The probe's part of a child's environment, appended to owned (which the
 * caller frees): sanitizer options that leave signals alone, the probe
 * preloaded when probe is not NULL, traces into out_dir. Returns how
 * many entries it added; owned stays NULL-terminated.
 */
size_t rundir_probe_env(char **owned, const char *probe, const char *out_dir);

/* Starts path with args (NULL-terminated) in cwd, its stdout and stderr into dir's files. */
pid_t rundir_spawn(const char *dir, const char *cwd, const char *path, const char *const *args,
		   char **env);

/* Reads (again) what the program wrote so far to dir's stdout and stderr files. */
void rundir_read_output(const char *dir, char **out_text, char **err_text);

/*
 * The regular files in dir, in name order, at most max of them (more fail
 * the test): their paths, each the caller's to free. None when dir is not
 * there.
 */
size_t rundir_files(const char *dir, char **paths, size_t max);

#endif
