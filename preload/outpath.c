/* SPDX-License-Identifier: MIT */
#include "outpath.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "launch_env.h"
#include "sink.h"

static size_t put(char *out, size_t at, size_t cap, const char *s)
{
	size_t n = strlen(s);
	if (at + n >= cap)
		n = at < cap ? cap - 1 - at : 0;
	memcpy(out + at, s, n);
	return at + n;
}

static int expand(const char *tmpl, const char *exe, unsigned seq, char *out, size_t cap)
{
	char num[32], host[256];
	uint64_t rank;
	size_t at = 0;
	if (tmpl[0] != '/') {
		if (!getcwd(out, cap - 2))
			return -errno;
		at = strlen(out);
		if (at == 0 || out[at - 1] != '/')
			out[at++] = '/';
	}
	for (const char *p = tmpl; *p && at + 1 < cap; p++) {
		if (*p != '%' || !p[1]) {
			out[at++] = *p;
			continue;
		}
		switch (*++p) {
		case 'p':
			snprintf(num, sizeof(num), "%d", (int)getpid());
			at = put(out, at, cap, num);
			break;
		case 'n':
			snprintf(num, sizeof(num), "%u", seq);
			at = put(out, at, cap, num);
			break;
		case 'e':
			at = put(out, at, cap, exe);
			break;
		case 'r':
			if (cg_launch_rank(&rank))
				snprintf(num, sizeof(num), "%llu", (unsigned long long)rank);
			else
				strcpy(num, "none");
			at = put(out, at, cap, num);
			break;
		case 'h':
			if (gethostname(host, sizeof(host)) < 0)
				strcpy(host, "unknown");
			host[sizeof(host) - 1] = '\0';
			at = put(out, at, cap, host);
			break;
		default:
			out[at++] = '%';
			if (*p != '%' && at + 1 < cap)
				out[at++] = *p;
		}
	}
	out[at] = '\0';
	return at + 1 < cap ? 0 : -ENAMETOOLONG;
}

/* Where `.N` goes: before `.jsonl.zst`, `.jsonl`, `.zst` or the last extension. */
static size_t extension_at(const char *path)
{
	static const char *const known[] = {".jsonl.zst", ".jsonl", ".zst"};
	size_t n = strlen(path);
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		size_t k = strlen(known[i]);
		if (n - (size_t)(base - path) > k && strcmp(path + n - k, known[i]) == 0)
			return n - k;
	}
	const char *dot = strrchr(base, '.');
	return dot && dot != base ? (size_t)(dot - path) : n;
}

int cg_outpath_create(const char *tmpl, const char *exe, unsigned seq, char *path, size_t cap,
		      int *fd)
{
	int r = expand(tmpl, exe, seq, path, cap);
	if (r < 0)
		return r;
	r = cg_sink_create_path(path, fd);
	if (r != -EEXIST)
		return r;
	char base[4096];
	size_t ext = extension_at(path);
	if (strlen(path) >= sizeof(base))
		return -ENAMETOOLONG;
	strcpy(base, path);
	for (unsigned i = 1; i < 10000 && r == -EEXIST; i++) {
		if ((size_t)snprintf(path, cap, "%.*s.%u%s", (int)ext, base, i, base + ext) >= cap)
			return -ENAMETOOLONG;
		r = cg_sink_create_path(path, fd);
	}
	return r;
}
