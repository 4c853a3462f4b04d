/* SPDX-License-Identifier: MIT */
/*
 * Small pieces both program-running suites (test-preload, test-cuda) need:
 * starting a child with a chosen environment, and reading back what it
 * wrote. Failures are Check assertions: these run inside a test.
 */
#ifndef CG_TEST_CHILD_H
#define CG_TEST_CHILD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* A vasprintf()ed string, the caller's to free. */
char *strf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

const char *base_name(const char *path);
void sleep_ms(long ms);

/* A file's whole contents, NUL-terminated (length in *len if asked), or NULL if it cannot be opened. */
char *read_file(const char *path, size_t *len);

/* "exit N" or "signal N (name)", for messages; the caller frees it. */
char *status_text(int status);

/* Removes a run's directory and all below it, read-only parts included. */
void remove_tree(const char *dir);

/*
 * Variables of the test's own environment that would change what the probe
 * does: its own, and the launchers' it records (a CI job under Slurm has
 * SLURM_JOB_ID; preload/launch_env.c).
 */
#define CHILD_ENV_DROP_PROBE                                                             \
	"CGPROBE_", "LD_PRELOAD=", "UBSAN_OPTIONS=", "RANK=", "LOCAL_RANK=", "WORLD_SIZE=", \
	    "SLURM_PROCID=", "OMPI_COMM_WORLD_RANK=", "GROUP_RANK=", "LOCAL_WORLD_SIZE=",   \
	    "TORCHELASTIC_RESTART_COUNT=", "TORCHELASTIC_RUN_ID=", "OMPI_COMM_WORLD_SIZE=",  \
	    "OMPI_COMM_WORLD_LOCAL_RANK=", "OMPI_COMM_WORLD_LOCAL_SIZE=", "PMI_RANK=",       \
	    "PMI_SIZE=", "PMIX_RANK=", "SLURM_LOCALID=", "SLURM_NTASKS=", "SLURM_JOB_ID="

/*
 * A child's environment: ours without the variables whose names start
 * with one of drop (NULL-terminated), then each entry of set, then the
 * test's extra entries, which may replace any of them; an entry without
 * '=' removes the variable. The array is the caller's to free; the
 * strings stay the callers'.
 */
char **child_env(const char *const *drop, char *const *set, const char *const *extra);

/* An environment of child_env freed, with the n strings of owned its set came from. */
void child_env_free(char **env, char **owned, size_t n);

/*
 * "UBSAN_OPTIONS=..." for a child (the caller frees it): the children's
 * deaths by signal are what the suites look at, so a sanitizer runtime in
 * them must leave those signals alone.
 */
char *child_ubsan_options(void);

/*
 * Starts path with argv (argv[0] included, NULL-terminated) and env in
 * cwd, in a process group of its own that dies with the test: stdin from
 * /dev/null, stdout and stderr appended to the files named (opened here,
 * so they exist as soon as the program runs), default signal handling
 * and no core dumps, so that deaths by signal are the program's own.
 */
pid_t child_spawn(const char *path, const char *const *argv, char **env, const char *cwd,
		  const char *out_path, const char *err_path);

/*
 * Waits for pid, killing its group after timeout_ms (then failing the
 * test, naming what), and kills the group once it has exited too: nothing
 * a program started may outlive it. Returns the wait status.
 */
int child_wait(pid_t pid, long timeout_ms, const char *what);

#endif
