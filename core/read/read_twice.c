/* SPDX-License-Identifier: MIT */
/* A source read twice (read_twice.h): a file seeks back, a stream is spooled as it is read. */
#include "read_twice.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "write_all.h"

/* An unlinked file for what a stream without a second pass (stdin, a pipe) gave. */
static int spool_open(void)
{
	const char *dir = getenv("TMPDIR");
	if (!dir || !*dir)
		dir = "/tmp";
	int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0)
		return fd;
	char path[4096];
	snprintf(path, sizeof(path), "%s/cgtrace-spool-XXXXXX", dir);
	fd = mkostemp(path, O_CLOEXEC);
	if (fd >= 0)
		unlink(path);
	return fd;
}

static int send_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

static void *tee_main(void *arg)
{
	struct cg_twice *t = arg;
	static _Thread_local char buf[1 << 16];
	bool reader = true;
	for (;;) {
		ssize_t n = read(t->fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n < 0 && !t->err)
				t->err = -errno;
			break;
		}
		if (!t->err)
			t->err = cg_write_all(t->spool, buf, (size_t)n);
		if (reader && send_all(t->sock[1], buf, (size_t)n) < 0) {
			reader = false;
			if (!atomic_load(&t->keep))
				break;
		}
	}
	close(t->sock[1]);
	t->sock[1] = -1;
	return NULL;
}

/* The spool and its thread; false when either cannot be had (the source is then read once). */
static bool tee_start(struct cg_twice *t)
{
	t->spool = spool_open();
	if (t->spool < 0)
		return false;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, t->sock) < 0) {
		close(t->spool);
		t->spool = -1;
		return false;
	}
	/* The thread must not take signals meant for the application. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	t->running = pthread_create(&t->thread, NULL, tee_main, t) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!t->running) {
		close(t->sock[0]);
		close(t->sock[1]);
		close(t->spool);
		t->spool = t->sock[0] = t->sock[1] = -1;
	}
	return t->running;
}

void cg_twice_open(struct cg_twice *t, int fd)
{
	struct stat st;
	memset(t, 0, sizeof(*t));
	t->fd = fd;
	t->spool = t->sock[0] = t->sock[1] = -1;
	t->start = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? lseek(fd, 0, SEEK_CUR) : -1;
	if (t->start < 0)
		tee_start(t);
}

bool cg_twice_ok(const struct cg_twice *t)
{
	return t->start >= 0 || t->spool >= 0;
}

int cg_twice_fd(const struct cg_twice *t)
{
	return t->spool >= 0 ? t->sock[0] : t->fd;
}

/* The reader is done with the socket: the thread copies the rest (keep) or stops. */
static void tee_finish(struct cg_twice *t, bool keep)
{
	if (!t->running)
		return;
	atomic_store(&t->keep, keep);
	if (t->sock[0] >= 0)
		close(t->sock[0]);
	t->sock[0] = -1;
	/* A pipe with no end in sight is not waited for when the rest is not wanted. */
	if (!keep)
		pthread_cancel(t->thread);
	pthread_join(t->thread, NULL);
	t->running = false;
	if (t->sock[1] >= 0)
		close(t->sock[1]);
	t->sock[1] = -1;
}

int cg_twice_rewind(struct cg_twice *t)
{
	int r = 0;
	if (t->spool >= 0) {
		tee_finish(t, true);
		r = t->err;
		if (r == 0 && lseek(t->spool, 0, SEEK_SET) < 0)
			r = -errno;
	} else if (lseek(t->fd, t->start, SEEK_SET) < 0) {
		r = -errno;
	}
	if (r < 0)
		return r;
	return t->spool >= 0 ? t->spool : t->fd;
}

void cg_twice_close(struct cg_twice *t)
{
	tee_finish(t, false);
	if (t->spool >= 0)
		close(t->spool);
}

