/* SPDX-License-Identifier: MIT */
#include "rundir.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "child.h"

void rundir_make(char dir[RUNDIR_MAX], char cwd[RUNDIR_MAX + 16], char out[RUNDIR_MAX + 16],
		 const char *prefix)
{
	const char *base = getenv("TMPDIR");
	snprintf(dir, RUNDIR_MAX, "%s/%s-XXXXXX", base && *base ? base : "/tmp", prefix);
	ck_assert_msg(mkdtemp(dir) != NULL, "mkdtemp: %s", strerror(errno));
	snprintf(cwd, RUNDIR_MAX + 16, "%s/cwd", dir);
	snprintf(out, RUNDIR_MAX + 16, "%s/out", dir);
	ck_assert_int_eq(mkdir(cwd, 0755), 0);
}

size_t rundir_probe_env(char **owned, const char *probe, const char *out_dir)
{
	size_t n = 0;
	owned[n++] = child_ubsan_options();
	if (probe)
		owned[n++] = strf("LD_PRELOAD=%s", probe);
	owned[n++] = strf("CGPROBE_OUTPUT=%s/trace.%%p.jsonl", out_dir);
	owned[n] = NULL;
	return n;
}

pid_t rundir_spawn(const char *dir, const char *cwd, const char *path, const char *const *args,
		   char **env)
{
	char out_path[PATH_MAX], err_path[PATH_MAX];
	const char *argv[32];
	size_t argc = 0;

	snprintf(out_path, sizeof(out_path), "%s/stdout", dir);
	snprintf(err_path, sizeof(err_path), "%s/stderr", dir);
	argv[argc++] = path;
	for (const char *const *a = args; a && *a && argc < 31; a++)
		argv[argc++] = *a;
	argv[argc] = NULL;
	return child_spawn(path, argv, env, cwd, out_path, err_path);
}

void rundir_read_output(const char *dir, char **out_text, char **err_text)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/stdout", dir);
	free(*out_text);
	*out_text = read_file(path, NULL);
	snprintf(path, sizeof(path), "%s/stderr", dir);
	free(*err_text);
	*err_text = read_file(path, NULL);
	ck_assert_ptr_nonnull(*out_text);
	ck_assert_ptr_nonnull(*err_text);
}

static int compare_paths(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

size_t rundir_files(const char *dir, char **paths, size_t max)
{
	size_t n = 0;
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	for (struct dirent *e; (e = readdir(d));) {
		char path[PATH_MAX];
		struct stat st;
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (lstat(path, &st) < 0 || !S_ISREG(st.st_mode))
			continue;
		ck_assert_uint_lt(n, max);
		paths[n] = strdup(path);
		ck_assert_ptr_nonnull(paths[n]);
		n++;
	}
	closedir(d);
	qsort(paths, n, sizeof(paths[0]), compare_paths);
	return n;
}
