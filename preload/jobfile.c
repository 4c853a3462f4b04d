/* SPDX-License-Identifier: MIT */
#include "jobfile.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "jsonl_format.h"
#include "launch_env.h"
#include "process.h"

static char manifest[PATH_MAX];
/* {"removed":NAME}, made with the trace's line: removal may come in a signal handler. */
static char removed[CG_JSON_STR_MAX(NAME_MAX) + 32];
static size_t removed_len;

static void append(const char *line, size_t n)
{
	if (!manifest[0] || n == 0)
		return;
	int fd = open(manifest, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
	if (fd < 0)
		return;
	(void)!write(fd, line, n);
	close(fd);
}

static void put_num(struct cg_buf *b, const char *key, unsigned long long v)
{
	char num[64];
	int n = snprintf(num, sizeof(num), ",\"%s\":%llu", key, v);
	cg_buf_put(b, num, (size_t)n);
}

static void put_str(struct cg_buf *b, const char *key, const char *s)
{
	cg_buf_putc(b, ',');
	cg_json_put_str(b, key, strlen(key));
	cg_buf_putc(b, ':');
	cg_json_put_str(b, s, strlen(s));
}

/* The removal's line, kept for later; none when the name is longer than a file's name can be. */
static void make_removed(const char *name)
{
	struct cg_buf b = {0};
	removed_len = 0;
	cg_buf_lit(&b, "{\"removed\":");
	cg_json_put_str(&b, name, strlen(name));
	cg_buf_lit(&b, "}\n");
	if (!b.err && b.len <= sizeof(removed)) {
		memcpy(removed, b.p, b.len);
		removed_len = b.len;
	}
	cg_buf_fini(&b);
}

void cg_job_trace_made(const char *path, pid_t forked_from, uint64_t start_realtime_ns)
{
	const char *slash = strrchr(path, '/');
	const char *name = slash ? slash + 1 : path;
	size_t dir = (size_t)(name - path);
	char host[256];
	uint64_t rank;
	manifest[0] = '\0';
	removed_len = 0;
	if (dir + sizeof(CG_JOB_MANIFEST) > sizeof(manifest))
		return;
	memcpy(manifest, path, dir);
	memcpy(manifest + dir, CG_JOB_MANIFEST, sizeof(CG_JOB_MANIFEST));
	if (gethostname(host, sizeof(host)) < 0)
		host[0] = '\0';
	host[sizeof(host) - 1] = '\0';

	struct cg_buf b = {0};
	cg_buf_lit(&b, "{\"trace\":");
	cg_json_put_str(&b, name, strlen(name));
	put_num(&b, "pid", (unsigned long long)getpid());
	put_num(&b, "ppid", (unsigned long long)getppid());
	put_str(&b, "host", host);
	if (forked_from)
		put_num(&b, "forked_from", (unsigned long long)forked_from);
	if (cg_launch_rank(&rank))
		put_num(&b, "rank", (unsigned long long)rank);
	put_num(&b, "start_realtime_ns", (unsigned long long)start_realtime_ns);
	put_str(&b, "executable", cg_process.exe_path);
	put_str(&b, "cmdline", cg_process.cmdline);
	cg_buf_lit(&b, "}\n");
	if (!b.err)
		append(b.p, b.len);
	cg_buf_fini(&b);
	make_removed(name);
}

void cg_job_trace_removed(void)
{
	append(removed, removed_len);
	removed_len = 0;
}
