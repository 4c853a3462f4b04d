/* SPDX-License-Identifier: MIT */
#include "probe-run.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "child.h"

struct probe_run *probe_run(const char *probe, const char *path, const char *const *args,
			    const char *suffix, const char *const *extra)
{
	struct probe_run *r = calloc(1, sizeof(*r));
	ck_assert_ptr_nonnull(r);
	rundir_make(r->dir, r->cwd, r->out, "probe-run");
	char *owned[16] = {0};
	rundir_probe_env(owned, probe, r->out);
	char *output = strf("CGPROBE_OUTPUT=%s/trace.%%p.%s", r->out, suffix);
	const char *all[16] = {output};
	for (size_t i = 0; extra && extra[i] && i < 14; i++)
		all[i + 1] = extra[i];
	static const char *const drop[] = {CHILD_ENV_DROP_PROBE, NULL};
	char **env = child_env(drop, owned, all);
	r->path = strf("%s", path);
	r->status = child_wait(rundir_spawn(r->dir, r->cwd, path, args, env), 60000, path);
	rundir_read_output(r->dir, &r->stdout_text, &r->stderr_text);
	ck_assert_msg(WIFEXITED(r->status) && WEXITSTATUS(r->status) == 0, "%s: %s; stderr: %s",
		      path, status_text(r->status), r->stderr_text);
	char *files[4];
	size_t k = rundir_files(r->out, files, 4);
	ck_assert_msg(k == 1, "%s left %zu traces", path, k);
	char err[1024];
	int rc = cgtrace_doc_read(files[0], NULL, &r->doc, err, sizeof(err));
	ck_assert_msg(rc == 0, "%s: %s", files[0], err);
	free(files[0]);
	free(env);
	free(output);
	for (size_t i = 0; owned[i]; i++)
		free(owned[i]);
	return r;
}

void probe_run_free(struct probe_run *r)
{
	cgtrace_doc_free(r->doc);
	remove_tree(r->dir);
	free(r->path);
	free(r->stdout_text);
	free(r->stderr_text);
	free(r);
}

const struct cgtrace_module *probe_run_module_of(const struct probe_run *r, uint64_t a)
{
	const struct cgtrace_module *found = NULL;
	for (size_t i = 0; i < cgtrace_doc_module_count(r->doc); i++) {
		const struct cgtrace_module *m = cgtrace_doc_module(r->doc, i);
		if (a >= m->start && a < m->end)
			found = m;
	}
	return found;
}
