/* SPDX-License-Identifier: MIT */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "child.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
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

extern char **environ;

char *strf(const char *fmt, ...)
{
	char *s = NULL;
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(&s, fmt, ap);
	va_end(ap);
	ck_assert_int_ge(n, 0);
	return s;
}

const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/* Sets "KEY=VALUE" in a NULL-terminated environment, or removes KEY when the entry has no '='. */
static void env_put(char **env, size_t *n, char *entry)
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

static bool env_dropped(const char *e, const char *const *drop)
{
	for (const char *const *d = drop; *d; d++)
		if (!strncmp(e, *d, strlen(*d)))
			return true;
	return false;
}

char **child_env(const char *const *drop, char *const *set, const char *const *extra)
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
		if (!env_dropped(*e, drop))
			env[n++] = *e;
	for (char *const *e = set; e && *e; e++)
		env_put(env, &n, *e);
	for (const char *const *e = extra; e && *e; e++)
		env_put(env, &n, (char *)*e);
	return env;
}

void child_env_free(char **env, char **owned, size_t n)
{
	free(env);
	for (size_t i = 0; i < n; i++)
		free(owned[i]);
}

char *child_ubsan_options(void)
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
static pid_t started[64];
static size_t n_started;

static void kill_started(void)
{
	for (size_t i = 0; i < n_started; i++)
		kill(-started[i], SIGKILL);
}

static void track(pid_t pid)
{
	if (n_started == 0)
		atexit(kill_started);
	if (n_started < sizeof(started) / sizeof(started[0]))
		started[n_started++] = pid;
}

pid_t child_spawn(const char *path, const char *const *argv, char **env, const char *cwd,
		  const char *out_path, const char *err_path)
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
	track(pid);
	close(out);
	close(err);
	return pid;
}

int child_wait(pid_t pid, long timeout_ms, const char *what)
{
	int status = 0;
	for (long waited = 0;; waited++) {
		pid_t w = waitpid(pid, &status, WNOHANG);
		if (w == pid)
			break;
		ck_assert_int_eq(w, 0);
		if (waited >= timeout_ms) {
			kill(-pid, SIGKILL);
			waitpid(pid, &status, 0);
			ck_abort_msg("%s: still running after %ld ms (hung?)", what, timeout_ms);
		}
		sleep_ms(1);
	}
	kill(-pid, SIGKILL);
	return status;
}

char *read_file(const char *path, size_t *len)
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

char *status_text(int status)
{
	if (WIFEXITED(status))
		return strf("exit %d", WEXITSTATUS(status));
	if (WIFSIGNALED(status))
		return strf("signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
	return strf("status 0x%x", status);
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	chmod(path, 0755);
	return remove(path);
}

void remove_tree(const char *dir)
{
	nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}
