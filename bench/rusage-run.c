/* SPDX-License-Identifier: MIT */
/*
 * Runs a command and writes what it cost to OUT as one line:
 *   wall_s user_s sys_s maxrss_kib
 * with microsecond CPU times (GNU time prints 10 ms steps, too coarse for
 * CPU per operation at a million operations) and the monotonic clock's wall
 * time. CPU and peak RSS are those wait4 reports: the command's and those of
 * the descendants it waited for (heaptrack's interpreter, for one).
 *
 *   rusage-run OUT COMMAND [ARGS...]
 *
 * Exit status: the command's, 128 + N when signal N killed it, 127 when it
 * could not be run, 2 on a usage error.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double seconds(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: rusage-run OUT COMMAND [ARGS...]\n");
		return 2;
	}
	FILE *out = fopen(argv[1], "w");
	if (!out) {
		fprintf(stderr, "rusage-run: %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	double t0 = now();
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "rusage-run: fork: %s\n", strerror(errno));
		return 127;
	}
	if (pid == 0) {
		execvp(argv[2], argv + 2);
		fprintf(stderr, "rusage-run: %s: %s\n", argv[2], strerror(errno));
		_exit(127);
	}
	int status;
	struct rusage ru;
	while (wait4(pid, &status, 0, &ru) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "rusage-run: wait4: %s\n", strerror(errno));
			return 127;
		}
	}
	double wall = now() - t0;
	fprintf(out, "%.6f %.6f %.6f %ld\n", wall, seconds(ru.ru_utime), seconds(ru.ru_stime),
	        ru.ru_maxrss);
	if (fclose(out) != 0) {
		fprintf(stderr, "rusage-run: %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
