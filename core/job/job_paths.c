/* SPDX-License-Identifier: MIT */
/*
 * The traces a job's arguments name (cgtrace_job_paths): files as given,
 * folders as their trace files by name, so that a folder the probe wrote
 * (CGPROBE_OUTPUT=DIR/) reads as its processes and nothing else.
 */
#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cgtrace.h"
#include "export.h"
#include "vec.h"

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n > k && strcmp(s + n - k, suffix) == 0;
}

/* The names the probe gives its traces; a folder's reports (.html) and manifest are not. */
static bool trace_name(const char *name)
{
	static const char *const ext[] = {".cgt", ".jsonl", ".jsonl.zst", ".zst"};
	if (name[0] == '.')
		return false;
	for (size_t i = 0; i < sizeof(ext) / sizeof(*ext); i++)
		if (ends_with(name, ext[i]))
			return true;
	return false;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int push(struct cg_vec *v, char *s)
{
	char **slot = s ? CG_VEC_PUSH(v, char *) : NULL;
	if (!slot) {
		free(s);
		return -ENOMEM;
	}
	*slot = s;
	return 0;
}

static char *joined(const char *dir, const char *name)
{
	size_t n = strlen(dir);
	bool slash = n && dir[n - 1] == '/';
	char *s = malloc(n + strlen(name) + 2);
	if (s)
		sprintf(s, "%s%s%s", dir, slash ? "" : "/", name);
	return s;
}

static int add_folder(struct cg_vec *v, const char *dir, char *err, size_t errlen)
{
	DIR *d = opendir(dir);
	if (!d) {
		int e = errno;
		snprintf(err, errlen, "%s: %s", dir, strerror(e));
		return -e;
	}
	size_t first = v->len;
	struct dirent *de;
	int ret = 0;
	while (ret == 0 && (de = readdir(d))) {
		if (!trace_name(de->d_name))
			continue;
		char *path = joined(dir, de->d_name);
		struct stat st;
		if (path && (stat(path, &st) < 0 || !S_ISREG(st.st_mode))) {
			free(path);
			continue;
		}
		ret = push(v, path);
	}
	closedir(d);
	if (ret == 0 && v->len == first) {
		snprintf(err, errlen, "%s: no traces in this folder (names ending in .cgt, .jsonl or .zst)", dir);
		return -ENODATA;
	}
	qsort((char **)v->p + first, v->len - first, sizeof(char *), by_name);
	return ret;
}

CG_EXPORT int cgtrace_job_paths(const char *const *args, size_t n_args, char ***out, size_t *n,
				char *err, size_t errlen)
{
	struct cg_vec v = {0};
	int ret = 0;
	*out = NULL;
	*n = 0;
	if (errlen)
		err[0] = '\0';
	for (size_t i = 0; ret == 0 && i < n_args; i++) {
		struct stat st;
		if (strcmp(args[i], "-") != 0 && stat(args[i], &st) == 0 && S_ISDIR(st.st_mode))
			ret = add_folder(&v, args[i], err, errlen);
		else
			ret = push(&v, strdup(args[i]));
	}
	/* One allocation: the pointers, a NULL, then the strings. */
	size_t bytes = (v.len + 1) * sizeof(char *);
	for (size_t i = 0; ret == 0 && i < v.len; i++)
		bytes += strlen(((char **)v.p)[i]) + 1;
	char **arr = ret == 0 ? malloc(bytes) : NULL;
	if (ret == 0 && !arr)
		ret = -ENOMEM;
	char *at = arr ? (char *)(arr + v.len + 1) : NULL;
	for (size_t i = 0; i < v.len; i++) {
		char *s = ((char **)v.p)[i];
		if (arr) {
			arr[i] = strcpy(at, s);
			at += strlen(s) + 1;
		}
		free(s);
	}
	if (arr)
		arr[v.len] = NULL;
	if (ret == 0) {
		*out = arr;
		*n = v.len;
	} else if (errlen && !err[0]) {
		snprintf(err, errlen, "%s", strerror(-ret));
	}
	cg_vec_free(&v, sizeof(char *));
	return ret;
}
