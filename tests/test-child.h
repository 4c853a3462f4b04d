/* SPDX-License-Identifier: MIT */
/*
 * Small pieces both program-running suites (test-preload, test-cuda) need
 * to start a child with a chosen environment.
 */
#ifndef CG_TEST_CHILD_H
#define CG_TEST_CHILD_H

#include <check.h>
#include <stdbool.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static char *strf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline char *strf(const char *fmt, ...)
{
	char *s = NULL;
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(&s, fmt, ap);
	va_end(ap);
	ck_assert_int_ge(n, 0);
	return s;
}

static inline const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

static inline void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/* Sets "KEY=VALUE" in a NULL-terminated environment, or removes KEY when the entry has no '='. */
static inline void env_put(char **env, size_t *n, char *entry)
{
	const char *eq = strchr(entry, '=');
	size_t klen = eq ? (size_t)(eq - entry) : strlen(entry);
	for (size_t i = 0; i < *n; i++) {
		if (!strncmp(env[i], entry, klen) && env[i][klen] == '=') {
			if (eq) {
				env[i] = entry;
			} else {
				env[i] = env[--*n];
				env[*n] = NULL;
			}
			return;
		}
	}
	if (eq) {
		env[(*n)++] = entry;
		env[*n] = NULL;
	}
}

/* Variables of the test's own environment that would change what the probe does. */
#define CHILD_ENV_DROP_PROBE                                                             \
	"CGPROBE_", "LD_PRELOAD=", "UBSAN_OPTIONS=", "RANK=", "LOCAL_RANK=", "WORLD_SIZE=", \
	    "SLURM_PROCID=", "OMPI_COMM_WORLD_RANK="

static inline bool child_env_dropped(const char *e, const char *const *drop)
{
	for (const char *const *d = drop; *d; d++)
		if (!strncmp(e, *d, strlen(*d)))
			return true;
	return false;
}

/*
 * A child's environment: ours without the variables whose names start
 * with one of drop (NULL-terminated), then each entry of set, then the
 * test's extra entries, which may replace any of them. The array is the
 * caller's to free; the strings stay the callers'.
 */
extern char **environ;
static inline char **child_env(const char *const *drop, char *const *set, const char *const *extra)
{
	size_t n = 0, cap = 1;
	for (char **e = environ; *e; e++)
		cap++;
	for (char *const *e = set; e && *e; e++)
		cap++;
	for (const char *const *e = extra; e && *e; e++)
		cap++;
	char **env = calloc(cap, sizeof(*env));
	ck_assert_ptr_nonnull(env);
	for (char **e = environ; *e; e++)
		if (!child_env_dropped(*e, drop))
			env[n++] = *e;
	for (char *const *e = set; e && *e; e++)
		env_put(env, &n, *e);
	for (const char *const *e = extra; e && *e; e++)
		env_put(env, &n, (char *)*e);
	return env;
}

/*
 * The children's deaths by signal are what the suites look at, so a
 * sanitizer runtime in them must leave those signals alone.
 */
static inline char *child_ubsan_options(void)
{
	const char *ubsan = getenv("UBSAN_OPTIONS");
	return strf("UBSAN_OPTIONS=%s%shandle_segv=0:handle_sigbus=0:handle_sigfpe=0:"
		    "handle_sigill=0:handle_abort=0",
		    ubsan ? ubsan : "", ubsan && *ubsan ? ":" : "");
}

/*
 * Programs still running when a test ends early (a failed assertion exits
 * the test's process): killed at its exit, they are in groups of their own.
 */
static pid_t child_started[64];
static size_t child_n_started;

static inline void child_kill_started(void)
{
	for (size_t i = 0; i < child_n_started; i++)
		kill(-child_started[i], SIGKILL);
}

static inline void child_track(pid_t pid)
{
	if (child_n_started == 0)
		atexit(child_kill_started);
	if (child_n_started < sizeof(child_started) / sizeof(child_started[0]))
		child_started[child_n_started++] = pid;
}

/*
 * Starts path with argv (argv[0] included, NULL-terminated) and env in
 * cwd, in a process group of its own that dies with the test: stdin from
 * /dev/null, stdout and stderr appended to the files named (opened here,
 * so they exist as soon as the program runs), default signal handling
 * and no core dumps, so that deaths by signal are the program's own.
 */
static inline pid_t child_spawn(const char *path, const char *const *argv, char **env,
				const char *cwd, const char *out_path, const char *err_path)
{
	int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
	int err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
	ck_assert_int_ge(out, 0);
	ck_assert_int_ge(err, 0);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct rlimit no_core = {0, 0};
		sigset_t none;
		setpgid(0, 0);
		setrlimit(RLIMIT_CORE, &no_core);
		for (int sig = 1; sig < 32; sig++)
			if (sig != SIGKILL && sig != SIGSTOP)
				signal(sig, SIG_DFL);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		int in = open("/dev/null", O_RDONLY);
		if (in < 0 || chdir(cwd) < 0)
			_exit(126);
		dup2(in, 0);
		dup2(out, 1);
		dup2(err, 2);
		execve(path, (char *const *)argv, env);
		_exit(127);
	}
	setpgid(pid, pid);
	child_track(pid);
	close(out);
	close(err);
	return pid;
}

#endif
