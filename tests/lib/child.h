/* SPDX-License-Identifier: MIT */
/*
 * Small pieces both program-running suites (test-preload, test-cuda) need:
 * starting a child with a chosen environment, and reading back what it
 * wrote.
 */
#ifndef CG_TEST_CHILD_H
#define CG_TEST_CHILD_H

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdbool.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
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

/* A file's whole contents, NUL-terminated (length in *len if asked), or NULL if it cannot be opened. */
static inline char *read_file(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	size_t cap = 4096, n = 0;
	char *p = malloc(cap);
	ck_assert_ptr_nonnull(p);
	for (;;) {
		if (n + 1 >= cap) {
			cap *= 2;
			p = realloc(p, cap);
			ck_assert_ptr_nonnull(p);
		}
		ssize_t got = read(fd, p + n, cap - n - 1);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		n += (size_t)got;
	}
	close(fd);
	p[n] = '\0';
	if (len)
		*len = n;
	return p;
}

/* "exit N" or "signal N (name)", for messages; the caller frees it. */
static inline char *status_text(int status)
{
	if (WIFEXITED(status))
		return strf("exit %d", WEXITSTATUS(status));
	if (WIFSIGNALED(status))
		return strf("signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
	return strf("status 0x%x", status);
}

/* nftw callback that removes a run's directory, read-only parts included. */
static inline int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	chmod(path, 0755);
	return remove(path);
}

static inline TCase *tcase(Suite *s, const char *name)
{
	TCase *tc = tcase_create(name);
	tcase_set_timeout(tc, 120);
	suite_add_tcase(s, tc);
	return tc;
}

/*
 * One line a test program wrote with say() (prog-say.h): "PID PROG KIND
 * REST". next_pline steps *cursor through text, skipping lines of another
 * shape; false at the end.
 */
struct pline {
	long pid;
	char prog[64];
	char kind;
	char rest[1024];
};

static inline bool next_pline(const char **cursor, struct pline *l)
{
	while (**cursor) {
		const char *s = *cursor;
		const char *nl = strchr(s, '\n');
		size_t len = nl ? (size_t)(nl - s) : strlen(s);
		char buf[1200];
		int at = 0;
		*cursor = nl ? nl + 1 : s + len;
		if (len >= sizeof(buf))
			continue;
		memcpy(buf, s, len);
		buf[len] = '\0';
		if (sscanf(buf, "%ld %63s %c %n", &l->pid, l->prog, &l->kind, &at) < 3 || at == 0)
			continue;
		snprintf(l->rest, sizeof(l->rest), "%s", buf + at);
		return true;
	}
	return false;
}

#endif
