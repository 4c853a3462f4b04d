/* SPDX-License-Identifier: MIT */
/*
 * Every way out of a process. Each mode first leaves one block live and
 * frees another, then ends as its name says; the trace must be complete
 * and the exit status or death signal the same as without the probe.
 * Usage: exits MODE [HELLO_PATH]
 */
#define PROG "exits"
#include <fcntl.h>
#include <sys/stat.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "prog.h"

extern char **environ;

static void on_term(int sig)
{
	static const char msg[] = "handler ran\n";
	(void)sig;
	write_all(STDOUT_FILENO, msg, sizeof(msg) - 1);
	_exit(9);
}

static void *exit_from_thread(void *arg)
{
	(void)arg;
	got("malloc", malloc(3333), 3333);
	exit(5);
}

static const char *disposition(int sig)
{
	struct sigaction old;
	if (sigaction(sig, NULL, &old) < 0)
		return "error";
	if (old.sa_flags & SA_SIGINFO)
		return "siginfo";
	if (old.sa_handler == SIG_DFL)
		return "default";
	return old.sa_handler == SIG_IGN ? "ignore" : "handler";
}

/* What the program sees of dispositions the probe stands in for. */
static int query(void)
{
	struct sigaction act;
	say("R segv %s", disposition(SIGSEGV));
	say("R term %s", disposition(SIGTERM));
	say("R int-old %s", signal(SIGINT, SIG_IGN) == SIG_DFL ? "default" : "other");
	say("R int %s", disposition(SIGINT));
	say("R int-back %s", signal(SIGINT, SIG_DFL) == SIG_IGN ? "ignore" : "other");
	memset(&act, 0, sizeof(act));
	act.sa_handler = SIG_DFL;
	say("R usr1-set %d", sigaction(SIGUSR1, &act, NULL));
	say("R usr1 %s", disposition(SIGUSR1));
	errno = 0;
	int r = sigaction(0, NULL, &act);
	say("R bad-signal %d errno=%d", r, errno);
	return 0;
}

static int run_exec(const char *variant, const char *hello)
{
	char *argv[] = {"hello", "3", NULL};
	int r = -1;
	if (!strcmp(variant, "execv"))
		r = execv(hello, argv);
	else if (!strcmp(variant, "execve"))
		r = execve(hello, argv, environ);
	else if (!strcmp(variant, "execl"))
		r = execl(hello, "hello", "3", (char *)NULL);
	else if (!strcmp(variant, "execle"))
		r = execle(hello, "hello", "3", (char *)NULL, environ);
	else if (!strcmp(variant, "execlp"))
		r = execlp("hello", "hello", "3", (char *)NULL);
	else if (!strcmp(variant, "execvp"))
		r = execvp("hello", argv);
	else if (!strcmp(variant, "execvpe"))
		r = execvpe("hello", argv, environ);
	else if (!strcmp(variant, "execveat"))
		r = execveat(AT_FDCWD, hello, argv, environ, 0);
	else if (!strcmp(variant, "fexecve"))
		r = fexecve(open(hello, O_RDONLY | O_CLOEXEC), argv, environ);
	say("R %s failed errno=%d", variant, errno);
	return r;
}

/*
 * A daemon's start: close every descriptor it did not open, open its own
 * file, allocate while the probe's writer flushes, write its line. The
 * file must hold that line alone.
 */
static int fd_reuse(void)
{
	for (int fd = 3; fd < 256; fd++)
		close(fd);
	/* In a folder of its own: the test reads every file of the working directory as a trace. */
	mkdir("own", 0755);
	int fd = open("own/own.log", O_RDWR | O_CREAT | O_TRUNC, 0644);
	for (int i = 0; i < 1000; i++)
		free(malloc((size_t)i + 1));
	struct timespec ts = {0, 100000000};
	nanosleep(&ts, NULL);
	if (write(fd, "mine\n", 5) != 5)
		return 1;
	char buf[64] = "";
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	close(fd);
	say("R own-log %zd %s", n, n == 5 && memcmp(buf, "mine\n", 5) == 0 ? "intact" : "changed");
	return 0;
}

int main(int argc, char **argv)
{
	/* C11 7.5: zero at program startup, whatever ran before main. */
	int start_errno = errno;
	const char *mode = argc > 1 ? argv[1] : "return";
	char *keep = got("malloc", malloc(1111), 1111);
	char *tmp = got("malloc", malloc(2222), 2222);
	memset(keep, 1, 1111);
	gone("free", tmp, 2222);
	free(tmp);
	say("R mode %s", mode);

	if (!strcmp(mode, "return"))
		return 7;
	if (!strcmp(mode, "exit"))
		exit(3);
	if (!strcmp(mode, "_exit"))
		_exit(4);
	if (!strcmp(mode, "_Exit"))
		_Exit(6);
	if (!strcmp(mode, "exit-thread")) {
		pthread_t t;
		if (pthread_create(&t, NULL, exit_from_thread, NULL))
			return 90;
		pthread_join(t, NULL);
		return 91;
	}
	if (!strcmp(mode, "segv")) {
		volatile int *bad = (volatile int *)(uintptr_t)opaque(16);
		*bad = 1;
		return 92;
	}
	if (!strcmp(mode, "abort"))
		abort();
	if (!strcmp(mode, "term"))
		raise(SIGTERM);
	if (!strcmp(mode, "usr1"))
		raise(SIGUSR1);
	if (!strcmp(mode, "term-dfl")) {
		/* Asking for the default keeps the probe's stand-in for it. */
		struct sigaction act;
		memset(&act, 0, sizeof(act));
		act.sa_handler = SIG_DFL;
		sigaction(SIGTERM, &act, NULL);
		raise(SIGTERM);
	}
	if (!strcmp(mode, "term-restored")) {
		/* Ignored for a while, then back to the default, as shells do around a child. */
		signal(SIGTERM, SIG_IGN);
		signal(SIGTERM, SIG_DFL);
		raise(SIGTERM);
	}
	if (!strcmp(mode, "term-handler")) {
		struct sigaction act;
		memset(&act, 0, sizeof(act));
		act.sa_handler = on_term;
		sigemptyset(&act.sa_mask);
		sigaction(SIGTERM, &act, NULL);
		raise(SIGTERM);
		return 93;
	}
	if (!strcmp(mode, "term-signal")) {
		signal(SIGTERM, on_term);
		raise(SIGTERM);
		return 94;
	}
	if (!strcmp(mode, "sigquery"))
		return query();
	if (!strcmp(mode, "errno")) {
		say("R errno-at-start %d", start_errno);
		return 0;
	}
	if (!strcmp(mode, "fd-reuse"))
		return fd_reuse();
	if (!strcmp(mode, "wait")) {
		/* Killed by the test; SIGALRM if the test is gone. */
		alarm(60);
		say("R ready");
		for (;;)
			pause();
	}
	if (!strncmp(mode, "exec:", 5)) {
		run_exec(mode + 5, argc > 2 ? argv[2] : "hello");
		return 95;
	}
	/* A trace of tens of MB (records not reported), then return or exec. */
	if (!strcmp(mode, "churn") || !strcmp(mode, "churn-exec")) {
		for (int i = 0; i < 60000; i++)
			free(opaque_ptr(malloc((size_t)(i % 1000) + 1)));
		say("R churned");
		if (!strcmp(mode, "churn"))
			return 0;
		run_exec("execv", argc > 2 ? argv[2] : "hello");
		return 95;
	}
	if (!strcmp(mode, "exec-fail")) {
		char *args[] = {"nothing", NULL};
		errno = 0;
		int r = execv("/nonexistent/cgprobe-test/nothing", args);
		say("R exec-fail r=%d errno=%d", r, errno);
		/* The same trace goes on. */
		char *after = got("malloc", malloc(4444), 4444);
		gone("free", after, 4444);
		free(after);
		return 0;
	}
	say("R unknown mode");
	return 2;
}
