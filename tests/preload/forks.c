/* SPDX-License-Identifier: MIT */
/*
 * New processes: fork (the child writes its own trace), fork then exec
 * (with and without allocating before it, and an exec that fails), vfork
 * then exec (and an exec that fails), posix_spawn (and one that fails), and
 * forks while another thread is busy inside malloc (no deadlock, no stray
 * records in the children).
 * Usage: forks MODE HELLO_PATH
 */
#define PROG "forks"
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>

#include "prog.h"

#define BUSY_MIN 5000
#define BUSY_SPAN 100
#define BUSY_FORKS 20

extern char **environ;

static atomic_int stop;
static atomic_int busy_started;

/* How a child ended, as an R line; a child that hangs is killed after 20 s. */
static void reap(pid_t pid, const char *what)
{
	int status = 0;
	for (int waited = 0;; waited++) {
		pid_t r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			break;
		if (r < 0) {
			say("R %s waitpid failed errno=%d", what, errno);
			return;
		}
		if (waited == 20000) {
			kill(pid, SIGKILL);
			say("R %s hung", what);
			waitpid(pid, &status, 0);
			return;
		}
		struct timespec ms = {0, 1000000};
		nanosleep(&ms, NULL);
	}
	if (WIFEXITED(status))
		say("R %s exited %d", what, WEXITSTATUS(status));
	else
		say("R %s killed %d", what, WTERMSIG(status));
}

static void *busy(void *arg)
{
	uint64_t n = 0;
	(void)arg;
	while (!atomic_load(&stop) || n < 1000) {
		size_t size = BUSY_MIN + n % BUSY_SPAN;
		char *p = malloc(size);
		if (!p)
			abort();
		p[0] = (char)n;
		free(p);
		if (++n == 100)
			atomic_store(&busy_started, 1);
	}
	say("S busy_allocs %llu", (unsigned long long)n);
	return NULL;
}

static int forks_while_busy(void)
{
	pthread_t t;
	if (pthread_create(&t, NULL, busy, NULL))
		return 90;
	while (!atomic_load(&busy_started))
		sched_yield();
	for (int i = 0; i < BUSY_FORKS; i++) {
		pid_t pid = fork();
		if (pid == 0) {
			char *q = got("malloc", malloc(2222), 2222);
			gone("free", q, 2222);
			free(q);
			exit(0);
		}
		if (pid < 0)
			return 91;
		reap(pid, "busy-child");
	}
	atomic_store(&stop, 1);
	pthread_join(t, NULL);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "fork";
	const char *hello = argc > 2 ? argv[2] : "hello";
	const char *missing = "/nonexistent/cgprobe-test/nothing";
	char *hello_argv[] = {"hello", "4", NULL};
	pid_t pid;

	char *p = got("malloc", malloc(1000), 1000);
	say("R mode %s", mode);

	if (!strcmp(mode, "fork")) {
		pid = fork();
		if (pid == 0) {
			char *q = got("malloc", malloc(2000), 2000);
			gone("free", q, 2000);
			free(q);
			/* The parent's block: not allocated here, so not in this trace. */
			gone("free", p, 1000);
			free(p);
			exit(12);
		}
		reap(pid, "child");
	} else if (!strcmp(mode, "fork-exec")) {
		pid = fork();
		if (pid == 0) {
			char *q = got("malloc", malloc(2500), 2500);
			memset(q, 0, 2500);
			execv(hello, hello_argv);
			_exit(127);
		}
		reap(pid, "child");
	} else if (!strcmp(mode, "fork-close-exec")) {
		/* As orterun and daemons do: every descriptor past stderr closed before exec. */
		pid = fork();
		if (pid == 0) {
			char *q = got("malloc", malloc(2500), 2500);
			memset(q, 0, 2500);
			for (int fd = 3; fd < 4096; fd++)
				close(fd);
			char *after = got("malloc", malloc(700), 700);
			memset(after, 1, 700);
			say("R child closed its descriptors");
			execv(hello, hello_argv);
			_exit(127);
		}
		reap(pid, "child");
	} else if (!strcmp(mode, "fork-exec-empty")) {
		/* Nothing allocated between fork and exec, as in timeout(1) or a shell. */
		pid = fork();
		if (pid == 0) {
			execv(hello, hello_argv);
			_exit(127);
		}
		reap(pid, "child");
	} else if (!strcmp(mode, "fork-exec-fail")) {
		pid = fork();
		if (pid == 0) {
			errno = 0;
			int r = execv(missing, hello_argv);
			say("R exec r=%d errno=%d", r, errno);
			char *q = got("malloc", malloc(2600), 2600);
			gone("free", q, 2600);
			free(q);
			exit(5);
		}
		reap(pid, "child");
	} else if (!strcmp(mode, "vfork-exec")) {
		pid = vfork();
		if (pid == 0) {
			execv(hello, hello_argv);
			_exit(127);
		}
		reap(pid, "child");
	} else if (!strcmp(mode, "vfork-execve")) {
		pid = vfork();
		if (pid == 0) {
			execve(hello, hello_argv, environ);
			_exit(127);
		}
		reap(pid, "child");
	} else if (!strcmp(mode, "vfork-exec-fail")) {
		/* The child's failed exec and _exit run in our memory: our trace goes on. */
		pid = vfork();
		if (pid == 0) {
			execve(missing, hello_argv, environ);
			_exit(126);
		}
		reap(pid, "child");
	} else if (!strcmp(mode, "spawn")) {
		int r = posix_spawn(&pid, hello, NULL, NULL, hello_argv, environ);
		say("R spawn r=%d", r);
		if (r == 0)
			reap(pid, "child");
	} else if (!strcmp(mode, "spawn-fail")) {
		int r = posix_spawn(&pid, missing, NULL, NULL, hello_argv, environ);
		say("R spawn r=%d", r);
		if (r == 0)
			reap(pid, "child");
	} else if (!strcmp(mode, "busy")) {
		int r = forks_while_busy();
		if (r)
			return r;
	} else {
		say("R unknown mode");
		return 2;
	}

	char *r = got("malloc", malloc(3000), 3000);
	gone("free", r, 3000);
	free(r);
	gone("free", p, 1000);
	free(p);
	return 0;
}
