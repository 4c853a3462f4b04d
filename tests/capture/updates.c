/* SPDX-License-Identifier: MIT */
/*
 * Capture window and forked children, through the header's _opt forms.
 *   updates K: K updates; update i allocates 10000*i bytes and frees them,
 *     and leaves a block of 2000+i bytes live; a 100000-byte block is live
 *     throughout; never-reached when K < CGPROBE_CAPTURE_STEP.
 *   fork: the parent's blocks of 30000 and 40000 bytes are inherited; the
 *     child frees the first, allocates 5000 of its own, frees the second.
 *   fork-exec: the child execs /bin/true at once.
 *   fork-exit: the child exits at once.
 * Blocks' sizes are distinct so the test can find each record.
 */
#include <cgprobe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void updates(int k)
{
	void *base = malloc(100000);
	for (int i = 1; i <= k; i++) {
		cgprobe_update_begin_opt();
		uint64_t s = cgprobe_span_begin_opt("forward", CGPROBE_STEP_FORWARD);
		void *a = malloc(10000 * (size_t)i);
		memset(a, 1, 16);
		cgprobe_span_end_opt(s);
		free(a);
		void *keep = malloc(2000 + (size_t)i);
		(void)keep;
		cgprobe_update_end_opt();
	}
	free(base);
}

static int forks(const char *how)
{
	char *p1 = malloc(30000), *p2 = malloc(40000);
	p1[0] = p2[0] = 1;
	pid_t pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		if (!strcmp(how, "fork-exec")) {
			execl("/bin/true", "true", (char *)NULL);
			_exit(127);
		}
		if (!strcmp(how, "fork-exit"))
			exit(0);
		free(p1);
		char *q = malloc(5000);
		q[0] = 1;
		free(q);
		free(p2);
		exit(0);
	}
	int st;
	waitpid(pid, &st, 0);
	free(p1);
	free(p2);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "updates")) {
		updates(atoi(argv[2]));
		return 0;
	}
	if (argc == 2 && !strncmp(argv[1], "fork", 4))
		return forks(argv[1]);
	fprintf(stderr, "usage: capture-updates updates K | fork | fork-exec | fork-exit\n");
	return 2;
}
