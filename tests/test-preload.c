/* SPDX-License-Identifier: MIT */
/*
 * libcgprobe.so on unmodified programs (tests/preload/): each test runs a
 * program under LD_PRELOAD in a fresh directory, reads every trace it left
 * with the core reader and holds the records against what the program
 * printed (the line protocol of tests/preload/prog.h); exit status, results
 * and stderr are held against a run of the same program without the probe.
 *
 * tests/meson.build passes PRELOAD_TEST_PROBE (the probe), PRELOAD_TEST_BIN
 * (the directory of the programs) and PRELOAD_TEST_MODULE (the library
 * dlopen.c loads).
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgtrace.h"
#include "child.h"
#include "pline.h"
#include "rundir.h"
#include "test-main.h"
#include "trace-doc.h"

extern char **environ;

#define MAX_TRACES 64
#define RUN_TIMEOUT_MS 60000

static const char *probe_path, *bin_dir, *module_path;
/*
 * PRELOAD_TEST_FORMAT=compact: the traces the tests do not name (trace.%p
 * in the run's directory) are compact, read back through the same reader;
 * otherwise they are JSONL.
 */
static bool compact_mode;

/* The suffix of the traces the tests do not name. */
static const char *default_suffix(void)
{
	return compact_mode ? "cgt" : "jsonl";
}

/*
 * The tags every trace has: meta.c's own, the settings', the figures it
 * ends with and their room, the zstd level of a compact one.
 */
static size_t probe_tag_count(void)
{
	/*
	 * cgprobe_steps; cgprobe_capture, cgprobe_capture_step, cgprobe_update_range; cgprobe_python;
	 * cgprobe_clock; cgprobe_clock_realtime_ns, cgprobe_clock_monotonic_ns,
	 * cgprobe_clock_error_ns, cgprobe_boot_id.
	 */
	return compact_mode ? 25 : 24;
}

/* ------------------------------------------------------------------ */
/* Small helpers                                                       */
/* ------------------------------------------------------------------ */

static void write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	ck_assert_msg(fd >= 0, "%s: %s", path, strerror(errno));
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static size_t count_lines(const char *text)
{
	size_t n = 0;
	for (const char *p = text; *p; p++)
		n += *p == '\n';
	return n;
}

/* ------------------------------------------------------------------ */
/* Running a program                                                   */
/* ------------------------------------------------------------------ */

struct trace {
	char path[PATH_MAX];
	struct cgtrace_doc *doc;
	struct cgtrace_meta meta;
	long pid;
	char warnings[2048];
	int n_warnings;
	bool compact; /* the file is in the compact encoding */
	char **calloc_keys; /* "ID BYTES" of every calloc record, made on first use */
	size_t n_calloc_keys;
	bool calloc_keys_made;
};

struct run {
	char dir[RUNDIR_MAX];      /* fresh for each run, removed by run_free */
	char cwd[RUNDIR_MAX + 16]; /* the program's working directory */
	char out[RUNDIR_MAX + 16]; /* where CGPROBE_OUTPUT points by default; created by the probe */
	bool probe;
	pid_t pid;
	int status;
	char *out_text; /* stdout */
	char *err_text; /* stderr */
	struct trace traces[MAX_TRACES];
	size_t n_traces;
};

static struct run *run_new(bool probe)
{
	struct run *r = calloc(1, sizeof(*r));
	ck_assert_ptr_nonnull(r);
	rundir_make(r->dir, r->cwd, r->out, "cgprobe-preload");
	r->probe = probe;
	r->pid = -1;
	return r;
}

static void run_free(struct run *r)
{
	for (size_t i = 0; i < r->n_traces; i++) {
		cgtrace_doc_free(r->traces[i].doc);
		for (size_t k = 0; k < r->traces[i].n_calloc_keys; k++)
			free(r->traces[i].calloc_keys[k]);
		free(r->traces[i].calloc_keys);
	}
	free(r->out_text);
	free(r->err_text);
	remove_tree(r->dir);
	free(r);
}

/* A run without the probe and its run with it, both done with. */
static void run_free_both(struct run *ref, struct run *r)
{
	run_free(ref);
	run_free(r);
}

/*
 * The child's environment: the test's own without probe settings, the probe
 * preloaded when asked, traces into r->out, then the test's extra entries.
 * The programs' deaths by signal are the subject here, so a sanitizer
 * runtime must leave those signals alone.
 */
static char **make_env(const struct run *r, const char *const *extra, char **owned, size_t *n_owned)
{
	static const char *const drop[] = {CHILD_ENV_DROP_PROBE, "PRELOAD_TEST_", NULL};
	size_t first = *n_owned;
	*n_owned += rundir_probe_env(owned + first, r->probe ? probe_path : NULL, r->out);
	if (compact_mode) {
		free(owned[*n_owned - 1]); /* CGPROBE_OUTPUT, rundir's last */
		owned[*n_owned - 1] = strf("CGPROBE_OUTPUT=%s/trace.%%p.cgt", r->out);
		owned[*n_owned] = NULL;
	}
	return child_env(drop, owned + first, extra);
}

/* Starts bin_dir/prog with args (NULL-terminated) in r->cwd; stdout and stderr go to files. */
static void run_start(struct run *r, const char *const *extra_env, const char *prog,
		      const char *const *args)
{
	char path[PATH_MAX];
	char *owned[8];
	size_t n_owned = 0;

	snprintf(path, sizeof(path), "%s/%s", bin_dir, prog);
	char **env = make_env(r, extra_env, owned, &n_owned);
	r->pid = rundir_spawn(r->dir, r->cwd, path, args, env);
	child_env_free(env, owned, n_owned);
}

static void load_trace(struct run *r, const char *path);

static int compare_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every regular file in dir is a trace of this run (in name order). */
static void load_traces(struct run *r, const char *dir)
{
	char *names[MAX_TRACES * 2];
	size_t n = rundir_files(dir, names, MAX_TRACES * 2);
	for (size_t i = 0; i < n; i++) {
		load_trace(r, names[i]);
		free(names[i]);
	}
}

static void run_read_output(struct run *r)
{
	rundir_read_output(r->dir, &r->out_text, &r->err_text);
}

/* Waits for the program (killing it after RUN_TIMEOUT_MS), then reads its output and traces. */
static void run_wait(struct run *r)
{
	r->status = child_wait(r->pid, RUN_TIMEOUT_MS, r->dir);
	run_read_output(r);
	load_traces(r, r->out);
	load_traces(r, r->cwd);
}

static struct run *run_prog(bool probe, const char *const *env, const char *prog,
			    const char *const *args)
{
	struct run *r = run_new(probe);
	run_start(r, env, prog, args);
	run_wait(r);
	return r;
}

/* Waits until the program printed `text` (a whole line's end), up to 20 s. */
static void run_wait_for_output(struct run *r, const char *text)
{
	for (int i = 0; i < 20000; i++) {
		run_read_output(r);
		if (strstr(r->out_text, text))
			return;
		sleep_ms(1);
	}
	ck_abort_msg("program never printed '%s'", text);
}

static void assert_exited(const struct run *r, int code)
{
	char *s = status_text(r->status);
	ck_assert_msg(WIFEXITED(r->status) && WEXITSTATUS(r->status) == code,
		      "%s with probe=%d: %s, expected exit %d; stderr: %s", r->dir, r->probe, s,
		      code, r->err_text);
	free(s);
}

static void assert_killed(const struct run *r, int sig)
{
	char *s = status_text(r->status);
	ck_assert_msg(WIFSIGNALED(r->status) && WTERMSIG(r->status) == sig,
		      "probe=%d: %s, expected death by signal %d; stderr: %s", r->probe, s, sig,
		      r->err_text);
	free(s);
}

static void assert_same_status(const struct run *ref, const struct run *r)
{
	char *a = status_text(ref->status), *b = status_text(r->status);
	ck_assert_msg(ref->status == r->status, "without the probe: %s, with it: %s; stderr: %s",
		      a, b, r->err_text);
	free(a);
	free(b);
}

/* ------------------------------------------------------------------ */
/* The program's lines (tests/preload/prog.h)                          */
/* ------------------------------------------------------------------ */

struct strs {
	char **v;
	size_t n, cap;
};

static void strs_push(struct strs *s, char *owned)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 64;
		s->v = realloc(s->v, s->cap * sizeof(*s->v));
		ck_assert_ptr_nonnull(s->v);
	}
	s->v[s->n++] = owned;
}

static void strs_sort(struct strs *s)
{
	if (s->n)
		qsort(s->v, s->n, sizeof(*s->v), compare_names);
}

static void strs_free(struct strs *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	*s = (struct strs){0};
}

static char *strs_join(const struct strs *s)
{
	size_t len = 1;
	for (size_t i = 0; i < s->n; i++)
		len += strlen(s->v[i]) + 1;
	char *out = calloc(1, len), *p = out;
	ck_assert_ptr_nonnull(out);
	for (size_t i = 0; i < s->n; i++)
		p += sprintf(p, "%s\n", s->v[i]);
	return out;
}

/* "PROG TEXT" of every R line, sorted: processes may print in any order. */
static void results(const struct run *r, struct strs *out)
{
	struct pline l;
	for (const char *c = r->out_text; next_pline(&c, &l);)
		if (l.kind == 'R')
			strs_push(out, strf("%s %s", l.prog, l.rest));
	strs_sort(out);
}

static void assert_same_results(const struct run *ref, const struct run *r)
{
	struct strs a = {0}, b = {0};
	results(ref, &a);
	results(r, &b);
	char *ja = strs_join(&a), *jb = strs_join(&b);
	ck_assert_msg(a.n > 0, "no results from the program: %s", ref->out_text);
	ck_assert_msg(!strcmp(ja, jb), "results differ.\nwithout the probe:\n%s\nwith it:\n%s", ja,
		      jb);
	free(ja);
	free(jb);
	strs_free(&a);
	strs_free(&b);
}

/* A run without the probe and one with it alike: the same exit status and results. */
static void assert_alike(const struct run *ref, const struct run *r)
{
	assert_same_status(ref, r);
	assert_same_results(ref, r);
}

/*
 * prog run without the probe (with ref_env) and with it (with env), alike.
 * The run with the probe; the other in *ref.
 */
static struct run *run_alike(struct run **ref, const char *const *ref_env, const char *const *env,
			     const char *prog, const char *const *args)
{
	*ref = run_prog(false, ref_env, prog, args);
	struct run *r = run_prog(true, env, prog, args);
	assert_alike(*ref, r);
	return r;
}

/* A run that exited with code, wrote nothing on stderr and left n traces (n < 0: any number). */
static void assert_quiet_exit(const struct run *r, int code, int n)
{
	assert_exited(r, code);
	ck_assert_str_eq(r->err_text, "");
	if (n >= 0)
		ck_assert_uint_eq(r->n_traces, (size_t)n);
}

static size_t count_results(const struct run *r, const char *prog, const char *text)
{
	struct pline l;
	size_t n = 0;
	for (const char *c = r->out_text; next_pline(&c, &l);)
		n += l.kind == 'R' && !strcmp(l.prog, prog) && !strcmp(l.rest, text);
	return n;
}

static void assert_result(const struct run *r, const char *prog, const char *text)
{
	ck_assert_msg(count_results(r, prog, text) == 1, "no single result '%s %s' in:\n%s", prog,
		      text, r->out_text);
}

static void assert_result_prefix(const struct run *r, const char *prog, const char *prefix)
{
	struct pline l;
	size_t n = 0;
	for (const char *c = r->out_text; next_pline(&c, &l);)
		n += l.kind == 'R' && !strcmp(l.prog, prog) &&
		     !strncmp(l.rest, prefix, strlen(prefix));
	ck_assert_msg(n == 1, "no single result '%s %s...' in:\n%s", prog, prefix, r->out_text);
}

/* The value of the first "S key VALUE" line of a process, summed over all when pid is 0. */
static uint64_t stat_sum(const struct run *r, long pid, const char *key, uint64_t *max)
{
	struct pline l;
	uint64_t sum = 0;
	size_t klen = strlen(key);
	if (max)
		*max = 0;
	for (const char *c = r->out_text; next_pline(&c, &l);) {
		if (l.kind != 'S' || (pid && l.pid != pid) || strncmp(l.rest, key, klen) ||
		    l.rest[klen] != ' ')
			continue;
		uint64_t v = strtoull(l.rest + klen + 1, NULL, 10);
		sum += v;
		if (max && v > *max)
			*max = v;
	}
	return sum;
}

/* Process ids that printed lines as prog, in order of first appearance. */
static size_t pids_of(const struct run *r, const char *prog, long *pids, size_t cap)
{
	struct pline l;
	size_t n = 0;
	for (const char *c = r->out_text; next_pline(&c, &l);) {
		if (strcmp(l.prog, prog))
			continue;
		size_t i;
		for (i = 0; i < n && pids[i] != l.pid; i++)
			;
		if (i == n && n < cap)
			pids[n++] = l.pid;
	}
	return n;
}

/* ------------------------------------------------------------------ */
/* What the trace must hold: the probe's contract applied to the lines  */
/* ------------------------------------------------------------------ */

struct expect {
	bool alloc;
	char op[64];
	char id[64];
	uint64_t bytes;
	char span[64];
	char category[64];
};

struct model {
	struct expect *v;
	size_t n, cap;
};

struct live {
	char id[64];
	uint64_t bytes;
	char category[64];
	char free_span[64]; /* from a C line before the free */
	char free_category[64];
};

static struct expect *model_push(struct model *m, bool alloc, const char *op, const char *id,
				 uint64_t bytes)
{
	if (m->n == m->cap) {
		m->cap = m->cap ? m->cap * 2 : 64;
		m->v = realloc(m->v, m->cap * sizeof(*m->v));
		ck_assert_ptr_nonnull(m->v);
	}
	struct expect *e = &m->v[m->n++];
	*e = (struct expect){.alloc = alloc, .bytes = bytes};
	snprintf(e->op, sizeof(e->op), "%s", op);
	snprintf(e->id, sizeof(e->id), "%s", id);
	strcpy(e->span, "s1");
	strcpy(e->category, "other");
	return e;
}

static void model_free(struct model *m)
{
	free(m->v);
	*m = (struct model){0};
}

/*
 * The records the probe owes for the A and F lines of one process image
 * (pid, prog): an alloc for each block of at least min_bytes, a free with
 * the block's size for each end of a recorded block, nothing else. C lines
 * set span and category (default s1 and other; a free keeps its block's).
 */
static void model_build(struct model *m, const struct run *r, long pid, const char *prog,
			uint64_t min_bytes)
{
	struct live *live = NULL;
	size_t n_live = 0, cap_live = 0;
	struct pline l;
	*m = (struct model){0};
	for (const char *c = r->out_text; next_pline(&c, &l);) {
		char op[64], id[64], action[16], span[64], category[64];
		unsigned long long bytes, span_no;
		if (l.pid != pid || strcmp(l.prog, prog))
			continue;
		if (l.kind == 'A') {
			ck_assert_int_eq(sscanf(l.rest, "%63s %63s %llu", op, id, &bytes), 3);
			if (bytes < min_bytes)
				continue;
			struct expect *e = model_push(m, true, op, id, bytes);
			for (size_t i = 0; i < n_live; i++)
				ck_assert_msg(strcmp(live[i].id, id), "%s allocated twice", id);
			if (n_live == cap_live) {
				cap_live = cap_live ? cap_live * 2 : 64;
				live = realloc(live, cap_live * sizeof(*live));
				ck_assert_ptr_nonnull(live);
			}
			live[n_live] = (struct live){.bytes = bytes};
			snprintf(live[n_live].id, sizeof(live[n_live].id), "%s", id);
			snprintf(live[n_live].category, sizeof(live[n_live].category), "%s",
				 e->category);
			n_live++;
		} else if (l.kind == 'F') {
			ck_assert_int_eq(sscanf(l.rest, "%63s %63s %llu", op, id, &bytes), 3);
			size_t i;
			for (i = 0; i < n_live && strcmp(live[i].id, id); i++)
				;
			if (i == n_live)
				continue; /* never recorded: the probe must stay silent */
			ck_assert_msg(live[i].bytes == bytes,
				      "program freed %s as %llu bytes, got %llu", id, bytes,
				      (unsigned long long)live[i].bytes);
			struct expect *e = model_push(m, false, op, id, bytes);
			snprintf(e->category, sizeof(e->category), "%s", live[i].category);
			if (live[i].free_span[0]) {
				snprintf(e->span, sizeof(e->span), "%s", live[i].free_span);
				snprintf(e->category, sizeof(e->category), "%s",
					 live[i].free_category);
			}
			live[i] = live[--n_live];
		} else if (l.kind == 'C') {
			ck_assert_int_eq(sscanf(l.rest, "%63s %15s %llu %40s", id, action, &span_no,
						category),
					 4);
			snprintf(span, sizeof(span), "s%llu", span_no);
			size_t i;
			for (i = 0; i < n_live && strcmp(live[i].id, id); i++)
				;
			if (i == n_live)
				continue;
			if (!strcmp(action, "alloc")) {
				/* Follows its A line: the newest alloc of that id. */
				for (size_t k = m->n; k-- > 0;) {
					if (m->v[k].alloc && !strcmp(m->v[k].id, id)) {
						snprintf(m->v[k].span, sizeof(m->v[k].span), "%s",
							 span);
						snprintf(m->v[k].category,
							 sizeof(m->v[k].category), "%s", category);
						break;
					}
				}
				snprintf(live[i].category, sizeof(live[i].category), "%s",
					 category);
			} else {
				snprintf(live[i].free_span, sizeof(live[i].free_span), "%s", span);
				snprintf(live[i].free_category, sizeof(live[i].free_category), "%s",
					 category);
			}
		}
	}
	free(live);
}

static char *expect_key(const struct expect *e)
{
	return strf("%s %s %s %llu %s %s", e->alloc ? "alloc" : "free", e->op, e->id,
		    (unsigned long long)e->bytes, e->span, e->category);
}

static char *record_key(const struct cgtrace_memory *m)
{
	return strf("%s %s %s %llu %s %s", cgtrace_action_name(m->action),
		    m->op_name ? m->op_name : "(none)", m->tensor_id,
		    (unsigned long long)m->bytes, m->span_id,
		    cgtrace_category_name(m->category));
}

enum match {
	IN_ORDER, /* the records, in file order, are exactly the expected ones */
	SAME_SET, /* the same records in any order (several threads) */
	SUBSET,   /* every expected record is there; others may be too */
};

typedef bool (*record_filter)(struct trace *t, const struct cgtrace_memory *m);

struct keyed {
	char *key;
	size_t record;
};

static int compare_keyed(const void *a, const void *b)
{
	return strcmp(((const struct keyed *)a)->key, ((const struct keyed *)b)->key);
}

/*
 * Holds the trace's memory records against the model. In order, records
 * `ignore` accepts are left out; as a set, records beyond the expected ones
 * are accepted when `ignore` accepts them (so it cannot hide a record the
 * program made).
 */
static void assert_records(struct trace *t, const struct model *m, enum match how,
			   record_filter ignore)
{
	size_t n_want = m->n, n_have = 0;
	struct keyed *want = calloc(n_want + 1, sizeof(*want));
	struct keyed *have = calloc(trace_n_memory(t->doc) + 1, sizeof(*have));
	ck_assert(want && have);
	for (size_t i = 0; i < n_want; i++)
		want[i] = (struct keyed){expect_key(&m->v[i]), i};
	for (size_t i = 0; i < trace_n_memory(t->doc); i++) {
		struct cgtrace_memory rec = trace_memory(t->doc, i);
		if (how != IN_ORDER || !ignore || !ignore(t, &rec))
			have[n_have++] = (struct keyed){record_key(&rec), i};
	}
	if (how == IN_ORDER) {
		for (size_t i = 0; i < n_want && i < n_have; i++)
			assert_each(!strcmp(want[i].key, have[i].key),
				      "%s: memory record %zu is '%s', expected '%s'", t->path,
				      have[i].record, have[i].key, want[i].key);
		ck_assert_msg(n_want == n_have, "%s: %zu memory records, expected %zu (%s)",
			      t->path, n_have, n_want,
			      n_have > n_want ? have[n_want].key : want[n_have].key);
	} else {
		qsort(want, n_want, sizeof(*want), compare_keyed);
		qsort(have, n_have, sizeof(*have), compare_keyed);
		size_t i = 0, j = 0, missing = 0, extra = 0;
		const char *first_missing = NULL, *first_extra = NULL;
		while (i < n_want || j < n_have) {
			int c = i == n_want   ? 1
				: j == n_have ? -1
					      : strcmp(want[i].key, have[j].key);
			if (c == 0) {
				i++;
				j++;
			} else if (c < 0) {
				if (!missing++)
					first_missing = want[i].key;
				i++;
			} else {
				struct cgtrace_memory rec = trace_memory(t->doc, have[j].record);
				if (how != SUBSET && !(ignore && ignore(t, &rec)) && !extra++)
					first_extra = have[j].key;
				j++;
			}
		}
		ck_assert_msg(missing == 0, "%s: %zu expected records missing, e.g. '%s'", t->path,
			      missing, first_missing);
		ck_assert_msg(extra == 0, "%s: %zu records the program did not make, e.g. '%s'",
			      t->path, extra, first_extra);
	}
	for (size_t i = 0; i < n_want; i++)
		free(want[i].key);
	for (size_t i = 0; i < n_have; i++)
		free(have[i].key);
	free(want);
	free(have);
}

static void assert_program_records_except(const struct run *r, struct trace *t,
					  const char *prog, enum match how, record_filter ignore)
{
	struct model m;
	model_build(&m, r, t->pid, prog, 0);
	ck_assert_msg(m.n > 0, "%s: the program reported no allocation", prog);
	assert_records(t, &m, how, ignore);
	model_free(&m);
}

static void assert_program_records(const struct run *r, struct trace *t, const char *prog,
				   enum match how)
{
	assert_program_records_except(r, t, prog, how, NULL);
}

static size_t count_records(const struct trace *t, enum cgtrace_action action, const char *op)
{
	size_t n = 0;
	for (size_t i = 0; i < trace_n_memory(t->doc); i++) {
		struct cgtrace_memory m = trace_memory(t->doc, i);
		n += m.action == action && m.op_name && !strcmp(m.op_name, op);
	}
	return n;
}

/* ------------------------------------------------------------------ */
/* Traces                                                              */
/* ------------------------------------------------------------------ */

static void collect_warning(void *user, const char *line)
{
	struct trace *t = user;
	size_t at = strlen(t->warnings);
	snprintf(t->warnings + at, sizeof(t->warnings) - at, "%s\n", line);
	t->n_warnings++;
}

static const char *tag(const struct trace *t, const char *key)
{
	for (size_t i = 0; i < t->meta.n_tags; i++)
		if (!strcmp(t->meta.tags[i].key, key))
			return t->meta.tags[i].value;
	return NULL;
}

static bool known_op(const char *op, enum cgtrace_action action)
{
	static const char *const allocs[] = {"malloc",         "calloc",        "realloc",
					     "reallocarray",   "posix_memalign", "aligned_alloc",
					     "memalign",       "valloc",        "pvalloc"};
	static const char *const frees[] = {"free", "realloc", "reallocarray"};
	const char *const *names = action == CGTRACE_ALLOC ? allocs : frees;
	size_t n = action == CGTRACE_ALLOC ? 9 : 3;
	for (size_t i = 0; op && i < n; i++)
		if (!strcmp(op, names[i]))
			return true;
	return false;
}

#define COMPACT_MAGIC ("\x89" "CGTRACE")

static bool is_compact_file(const char *path)
{
	char head[8] = "";
	FILE *f = fopen(path, "rb");
	ck_assert_ptr_nonnull(f);
	size_t n = fread(head, 1, sizeof(head), f);
	fclose(f);
	return n == sizeof(head) && !memcmp(head, COMPACT_MAGIC, 8);
}

/*
 * The figures a trace ends with (docs/probe.md, "The probe's own
 * memory"): decimals once it ended, empty where its end never came (a
 * SIGKILL); the room they were written into holds spaces only.
 */
static bool end_figure(const struct trace *t, const char *key, uint64_t *v)
{
	const char *s = tag(t, key);
	ck_assert_msg(s, "%s: no tag %s", t->path, key);
	if (!*s)
		return false;
	ck_assert_msg(strspn(s, "0123456789") == strlen(s), "%s: %s is '%s'", t->path, key, s);
	*v = strtoull(s, NULL, 10);
	return true;
}

static void check_end_figures(const struct trace *t)
{
	uint64_t peak = 0, probe = 0, stacks = 0;
	const char *room = tag(t, "cgprobe_end_room");
	ck_assert_msg(room && strspn(room, " ") == strlen(room), "%s: cgprobe_end_room '%s'",
		      t->path, room ? room : "(none)");
	bool ended = end_figure(t, "cgprobe_peak_rss_bytes", &peak);
	ck_assert(end_figure(t, "cgprobe_probe_bytes", &probe) == ended);
	ck_assert(end_figure(t, "cgprobe_stack_table_bytes", &stacks) == ended);
	if (!ended)
		return;
	/* The probe is part of the process, its stack tables part of the probe. */
	ck_assert_uint_gt(probe, 0);
	ck_assert_msg(peak >= probe, "%s: peak RSS %llu below the probe's %llu bytes", t->path,
		      (unsigned long long)peak, (unsigned long long)probe);
	ck_assert_uint_le(stacks, probe);
}

/* What every trace the probe writes must hold, whatever the program did. */
static void check_trace(const struct trace *t)
{
	static const char *const probe_tags[] = {
		"pid",      "ppid",            "executable",        "cmdline",
		"hostname", "cgprobe_version", "cgprobe_min_bytes", "cgprobe_device_snapshots",
		"cgprobe_format", "cgprobe_clock_realtime_ns", "cgprobe_clock_monotonic_ns",
		"cgprobe_clock_error_ns"};
	struct cgtrace_span root, span;
	ck_assert_msg(t->n_warnings == 0, "%s: reader warnings:\n%s", t->path, t->warnings);
	ck_assert_msg(!cgtrace_doc_truncated(t->doc), "%s: truncated", t->path);
	ck_assert_uint_eq(cgtrace_doc_count(t->doc, CGTRACE_KIND_META), 1);
	ck_assert_str_eq(t->meta.schema, CGTRACE_SCHEMA);
	ck_assert_int_eq(t->meta.timing_mode, CGTRACE_TIMING_HOST);
	ck_assert_uint_eq(t->meta.warmup_steps, t->meta.capture_step - 1);
	for (size_t i = 0; i < sizeof(probe_tags) / sizeof(probe_tags[0]); i++)
		ck_assert_msg(tag(t, probe_tags[i]), "%s: no tag %s", t->path, probe_tags[i]);
	ck_assert_str_eq(tag(t, "cgprobe_version"), CGTRACE_VERSION);
	/* The encoding the tag names is the file's; only a compact one says its zstd level. */
	const char *format = tag(t, "cgprobe_format");
	ck_assert_str_eq(format, t->compact ? "compact" : "jsonl");
	if (!strcmp(format, "compact"))
		ck_assert_str_eq(tag(t, "cgprobe_zstd_level"), "1");
	else
		ck_assert_ptr_null(tag(t, "cgprobe_zstd_level"));
	check_end_figures(t);

	/* The root span: s1, named after the entrypoint, closed. */
	ck_assert_msg(trace_find_span(t->doc, "s1", &root), "%s: no root span s1", t->path);
	ck_assert_ptr_null(root.parent_id);
	ck_assert_str_eq(root.name, t->meta.entrypoint);
	ck_assert_uint_eq(root.start_ns, 0);
	ck_assert_msg(root.closed, "%s: root span s1 not closed", t->path);

	for (size_t i = 0; i < trace_n_memory(t->doc); i++) {
		struct cgtrace_memory m = trace_memory(t->doc, i);
		assert_each(known_op(m.op_name, m.action), "%s: record %zu: op_name %s for %s",
			   t->path, i, m.op_name ? m.op_name : "(none)",
			   cgtrace_action_name(m.action));
		assert_each(trace_is_address(m.tensor_id), "%s: tensor_id '%s'", t->path,
			   m.tensor_id);
		assert_each(!strcmp(m.device, "cpu") && !strcmp(m.dtype, "u8") && m.ndim == 1 &&
				   m.shape[0] == m.bytes && !m.managed,
			   "%s: record %zu: device %s, dtype %s, shape [%llu] (ndim %u) for %llu "
			   "bytes, managed %d; expected cpu, u8, [bytes], unmanaged",
			   t->path, i, m.device, m.dtype, (unsigned long long)m.shape[0],
			   (unsigned)m.ndim, (unsigned long long)m.bytes, (int)m.managed);
		assert_each(trace_find_span(t->doc, m.span_id, &span),
			   "%s: record %zu in unknown span %s", t->path, i, m.span_id);
	}
}

/* The root span ends after everything in the trace. */
static void assert_root_last(const struct trace *t)
{
	struct cgtrace_span root, s;
	ck_assert(trace_find_span(t->doc, "s1", &root));
	for (size_t i = 0; i < trace_n_memory(t->doc); i++) {
		struct cgtrace_memory m = trace_memory(t->doc, i);
		assert_each(m.timestamp_ns <= root.duration_ns,
			      "%s: record %zu at %llu ns after the root span's end (%llu ns)",
			      t->path, i, (unsigned long long)m.timestamp_ns,
			      (unsigned long long)root.duration_ns);
	}
	size_t n = cgtrace_doc_count(t->doc, CGTRACE_KIND_SPAN_START);
	for (size_t i = 0; i < n; i++) {
		cgtrace_doc_span(t->doc, i, &s);
		ck_assert_uint_le(s.start_ns + (s.closed ? s.duration_ns : 0), root.duration_ns);
	}
}

/* One thread wrote the trace: its timestamps strictly increase in file order. */
static void assert_ts_increasing(const struct trace *t)
{
	for (size_t i = 1; i < trace_n_memory(t->doc); i++) {
		struct cgtrace_memory a = trace_memory(t->doc, i - 1), b = trace_memory(t->doc, i);
		assert_each(a.timestamp_ns < b.timestamp_ns,
			      "%s: record %zu at %llu ns, record %zu at %llu ns", t->path, i - 1,
			      (unsigned long long)a.timestamp_ns, i,
			      (unsigned long long)b.timestamp_ns);
	}
}

static void load_trace_from(struct trace *t, const char *path, const void *data, size_t len)
{
	struct cgtrace_read_options opts = {.warn = collect_warning, .user = t};
	char err[1024] = "";
	int rc;
	snprintf(t->path, sizeof(t->path), "%s", path);
	t->compact = data ? len >= 8 && !memcmp(data, COMPACT_MAGIC, 8) : is_compact_file(path);
	if (data)
		rc = cgtrace_doc_read_mem(path, data, len, &opts, &t->doc, err, sizeof(err));
	else
		rc = cgtrace_doc_read(path, &opts, &t->doc, err, sizeof(err));
	ck_assert_msg(rc == 0, "%s: cannot read the trace: %s", path, err);
	cgtrace_doc_meta(t->doc, &t->meta);
	const char *pid = tag(t, "pid");
	t->pid = pid ? strtol(pid, NULL, 10) : -1;
	check_trace(t);
}

static void load_trace(struct run *r, const char *path)
{
	ck_assert_uint_lt(r->n_traces, MAX_TRACES);
	struct trace *t = &r->traces[r->n_traces++];
	size_t len = strlen(path);
	load_trace_from(t, path, NULL, 0);
	/* The meta record comes first, in the file itself (a compact one: after its header). */
	if ((len < 4 || strcmp(path + len - 4, ".zst")) && !t->compact) {
		char *text = read_file(path, NULL);
		ck_assert_ptr_nonnull(text);
		ck_assert_msg(!strncmp(text, "{\"kind\":\"meta\",", 15), "%s starts with %.40s",
			      path, text);
		free(text);
	}
}

/* The single trace of a process image; entry NULL or pid 0 match any. */
static struct trace *trace_for(struct run *r, const char *entry, long pid)
{
	struct trace *found = NULL;
	size_t n = 0;
	for (size_t i = 0; i < r->n_traces; i++) {
		struct trace *t = &r->traces[i];
		if ((!entry || !strcmp(t->meta.entrypoint, entry)) && (!pid || t->pid == pid)) {
			found = t;
			n++;
		}
	}
	ck_assert_msg(n == 1, "%zu traces of %s pid %ld among %zu", n, entry ? entry : "any",
		      pid, r->n_traces);
	return found;
}

/* Live bytes at the end of the trace, through the reader's analysis. */
static struct cgtrace_memory_report *analyze(const struct trace *t)
{
	struct cgtrace_memory_report *rep = NULL;
	ck_assert_int_eq(cgtrace_memory_analyze(t->doc, &rep), 0);
	ck_assert_uint_eq(rep->unknown_free_count, 0);
	ck_assert_uint_eq(rep->realloc_live_count, 0);
	return rep;
}

/*
 * A forked child's trace opens with the blocks it inherited, marked
 * pre-existing; its frees of them are kept. Those are not the program's own.
 */
static bool preexisting(struct trace *t, const struct cgtrace_memory *m)
{
	if (m->preexisting)
		return true;
	if (m->action != CGTRACE_FREE)
		return false;
	for (size_t i = 0; i < trace_n_memory(t->doc); i++) {
		struct cgtrace_memory a = trace_memory(t->doc, i);
		if (a.action == CGTRACE_ALLOC && !strcmp(a.tensor_id, m->tensor_id))
			return a.preexisting && a.timestamp_ns <= m->timestamp_ns &&
			       !strcmp(a.device, m->device) && a.bytes == m->bytes;
	}
	return false;
}

static uint64_t preexisting_bytes(const struct trace *t, size_t *n)
{
	uint64_t v = 0;
	*n = 0;
	for (size_t i = 0; i < trace_n_memory(t->doc); i++) {
		struct cgtrace_memory m = trace_memory(t->doc, i);
		assert_each(!m.preexisting || m.action == CGTRACE_ALLOC, "%s: record %zu: a pre-existing free",
			   t->path, i);
		if (m.preexisting) {
			v += m.bytes;
			++*n;
		}
	}
	return v;
}

static uint64_t final_bytes(const struct trace *t)
{
	struct cgtrace_memory_report *rep = analyze(t);
	uint64_t v = 0;
	for (size_t i = 0; i < rep->n_devices; i++)
		v += rep->by_device[i].final_bytes;
	cgtrace_memory_report_free(rep);
	return v;
}

/*
 * glibc's own bookkeeping for threads: pthread_create callocs a block for
 * the new thread's TLS and frees it when the thread's stack is reused.
 * Programs that start threads and never call calloc themselves ignore
 * these records: calloc allocs and frees of those same blocks.
 */
static bool libc_thread_block(struct trace *t, const struct cgtrace_memory *m)
{
	char key[96];
	if (m->op_name && !strcmp(m->op_name, "calloc"))
		return true;
	if (m->action != CGTRACE_FREE || !m->op_name || strcmp(m->op_name, "free"))
		return false;
	if (!t->calloc_keys_made) {
		t->calloc_keys_made = true;
		for (size_t i = 0; i < trace_n_memory(t->doc); i++) {
			struct cgtrace_memory c = trace_memory(t->doc, i);
			if (c.action != CGTRACE_ALLOC || strcmp(c.op_name, "calloc"))
				continue;
			t->calloc_keys = realloc(t->calloc_keys,
						 (t->n_calloc_keys + 1) * sizeof(*t->calloc_keys));
			ck_assert_ptr_nonnull(t->calloc_keys);
			t->calloc_keys[t->n_calloc_keys++] =
				strf("%s %llu", c.tensor_id, (unsigned long long)c.bytes);
		}
	}
	snprintf(key, sizeof(key), "%s %llu", m->tensor_id, (unsigned long long)m->bytes);
	for (size_t i = 0; i < t->n_calloc_keys; i++)
		if (!strcmp(t->calloc_keys[i], key))
			return true;
	return false;
}

/* Live bytes at the end among the records a filter accepts. */
static uint64_t filtered_bytes(struct trace *t, record_filter which, size_t *allocs,
			       size_t *frees)
{
	uint64_t in = 0, out = 0;
	size_t na = 0, nf = 0;
	for (size_t i = 0; i < trace_n_memory(t->doc); i++) {
		struct cgtrace_memory m = trace_memory(t->doc, i);
		if (!which(t, &m))
			continue;
		if (m.action == CGTRACE_ALLOC) {
			in += m.bytes;
			na++;
		} else {
			out += m.bytes;
			nf++;
		}
	}
	if (allocs)
		*allocs = na;
	if (frees)
		*frees = nf;
	return in - out;
}

/* The probe's output files for a run: plain or zstd-compressed. */
static const char *const output_suffix[] = {".jsonl", ".jsonl.zst"};

static const char *output_env(const struct run *r, int zst)
{
	static char env[RUNDIR_MAX + 64];
	snprintf(env, sizeof(env), "CGPROBE_OUTPUT=%s/trace.%%p%s", r->out, output_suffix[zst]);
	return env;
}

/*
 * prog run with the probe, its traces JSONL (zstd-compressed with zst)
 * whatever the suite's format; extra: one more environment entry, or NULL.
 */
static struct run *run_output(int zst, const char *extra, const char *prog,
			      const char *const *args)
{
	struct run *r = run_new(true);
	const char *env[] = {output_env(r, zst), extra, NULL};
	run_start(r, env, prog, args);
	run_wait(r);
	return r;
}

static void assert_zstd_file(const char *path)
{
	size_t len = 0;
	char *data = read_file(path, &len);
	ck_assert_ptr_nonnull(data);
	ck_assert_msg(len >= 4 && !memcmp(data, "\x28\xb5\x2f\xfd", 4), "%s is not zstd", path);
	free(data);
}

static char *path_in(const char *dir, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static char *path_in(const char *dir, const char *fmt, ...)
{
	char name[PATH_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	return strf("%s/%s", dir, name);
}

/* Exactly one line on stderr: a probe warning that mentions `about`. */
/* A FIFO in a run's trace folder (made here) that the test reads, opened without blocking. */
struct fifo {
	char *path;
	char *env; /* CGPROBE_OUTPUT=path */
	int fd;
};

static struct run *run_new_fifo(struct fifo *f)
{
	struct run *r = run_new(true);
	ck_assert_int_eq(mkdir(r->out, 0755), 0);
	f->path = path_in(r->out, "pipe");
	ck_assert_int_eq(mkfifo(f->path, 0644), 0);
	f->fd = open(f->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	ck_assert_int_ge(f->fd, 0);
	f->env = strf("CGPROBE_OUTPUT=%s", f->path);
	return r;
}

/* All the FIFO held, into data; closed then, and still a FIFO. */
static size_t fifo_drain(struct fifo *f, char *data, size_t cap)
{
	size_t len = 0;
	for (ssize_t n; (n = read(f->fd, data + len, cap - len)) > 0;)
		len += (size_t)n;
	close(f->fd);
	struct stat st;
	ck_assert_int_eq(lstat(f->path, &st), 0);
	ck_assert(S_ISFIFO(st.st_mode));
	return len;
}

static void fifo_free(struct fifo *f)
{
	free(f->path);
	free(f->env);
}

static void assert_one_warning(const struct run *r, const char *about)
{
	ck_assert_msg(count_lines(r->err_text) == 1 && !strncmp(r->err_text, "cgprobe: ", 9),
		      "expected one cgprobe warning line, stderr was:\n%s", r->err_text);
	ck_assert_msg(strstr(r->err_text, about), "warning does not mention '%s': %s", about,
		      r->err_text);
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && !strcmp(s + n - k, suffix);
}

/* The words sh makes of cmdline, each followed by a NUL; their count in *words. */
static char *sh_words(const char *cmdline, size_t *words)
{
	static const char *const drop[] = {CHILD_ENV_DROP_PROBE, NULL};
	const char *argv[] = {"/bin/sh", "-c", "eval \"set -- $1\" && printf '%s\\0' \"$@\"", "sh",
			      cmdline, NULL};
	struct run *r = run_new(false);
	char *out = path_in(r->dir, "words"), *err = path_in(r->dir, "err");
	char **env = child_env(drop, NULL, NULL);
	int status = 0;
	pid_t pid = child_spawn(argv[0], argv, env, r->cwd, out, err);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "sh could not read '%s'",
		      cmdline);
	size_t len = 0;
	char *text = read_file(out, &len);
	ck_assert_ptr_nonnull(text);
	*words = 0;
	for (size_t i = 0; i < len; i++)
		*words += text[i] == '\0';
	free(env);
	free(out);
	free(err);
	run_free(r);
	return text;
}

/* cmdline, read by sh, gives back exactly argv (NULL-terminated). */
static void assert_cmdline_is(const char *cmdline, const char *const *argv)
{
	size_t words = 0, n = 0;
	ck_assert_ptr_nonnull(cmdline);
	char *got = sh_words(cmdline, &words);
	const char *w = got;
	for (const char *const *a = argv; *a; a++, n++) {
		ck_assert_msg(n < words, "'%s' has %zu words, argv more", cmdline, words);
		ck_assert_msg(!strcmp(w, *a), "word %zu of '%s' is '%s', argv has '%s'", n,
			      cmdline, w, *a);
		w += strlen(w) + 1;
	}
	ck_assert_msg(n == words, "'%s' has %zu words, argv %zu", cmdline, words, n);
	free(got);
}

static void reraise(int sig)
{
	sigset_t set;
	signal(sig, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
}

/* ------------------------------------------------------------------ */
/* Allocation API                                                      */
/* ------------------------------------------------------------------ */

START_TEST(test_alloc_api_records_every_call)
{
	struct run *ref, *r = run_alike(&ref, NULL, NULL, "alloc-api", NULL);
	assert_quiet_exit(ref, 0, 0);
	assert_quiet_exit(r, 0, 1);

	struct trace *t = trace_for(r, "alloc-api", r->pid);
	assert_root_last(t);
	assert_program_records(r, t, "alloc-api", IN_ORDER);
	assert_ts_increasing(t);

	/* What alloc-api.c does, counted by hand. */
	static const struct {
		enum cgtrace_action action;
		const char *op;
		size_t n;
	} counted[] = {
		{CGTRACE_ALLOC, "malloc", 5},      {CGTRACE_ALLOC, "calloc", 1},
		{CGTRACE_ALLOC, "realloc", 3},     {CGTRACE_ALLOC, "reallocarray", 2},
		{CGTRACE_ALLOC, "posix_memalign", 1}, {CGTRACE_ALLOC, "aligned_alloc", 1},
		{CGTRACE_ALLOC, "memalign", 1},    {CGTRACE_ALLOC, "valloc", 1},
		{CGTRACE_ALLOC, "pvalloc", 1},     {CGTRACE_FREE, "free", 11},
		{CGTRACE_FREE, "realloc", 3},      {CGTRACE_FREE, "reallocarray", 1},
	};
	for (size_t i = 0; i < sizeof(counted) / sizeof(counted[0]); i++) {
		size_t n = count_records(t, counted[i].action, counted[i].op);
		ck_assert_msg(n == counted[i].n, "%zu %s records of %s, expected %zu", n,
			      counted[i].action == CGTRACE_ALLOC ? "alloc" : "free", counted[i].op,
			      counted[i].n);
	}
	ck_assert_uint_eq(trace_n_memory(t->doc), 31);

	struct cgtrace_summary sum;
	ck_assert_int_eq(cgtrace_doc_summary(t->doc, &sum), 0);
	ck_assert_uint_eq(sum.alloc_count, 16);
	ck_assert_uint_eq(sum.free_count, 15);
	ck_assert_uint_eq(final_bytes(t), 4242);

	/* The error paths really failed, the same way with and without the probe. */
	static const char *const failed[] = {
		"malloc errno=4321",
		"malloc-huge null errno=12",
		"calloc-overflow null errno=12",
		"realloc-huge null errno=12",
		"realloc-huge kept=1",
		"reallocarray-overflow null errno=12",
		"reallocarray-null-overflow null errno=12",
		"posix_memalign-align3 r=22 untouched=1 errno=0",
		"posix_memalign-align24 r=22 untouched=1 errno=0",
		"free-null errno=1234",
		"realloc-zero null errno=0",
	};
	for (size_t i = 0; i < sizeof(failed) / sizeof(failed[0]); i++)
		assert_result(r, "alloc-api", failed[i]);
	assert_result_prefix(r, "alloc-api", "posix_memalign-huge r=12 untouched=1 ");
	run_free_both(ref, r);
}
END_TEST

/* The failed calls left no trace: no record of the huge sizes. */
START_TEST(test_alloc_api_failures_record_nothing)
{
	struct run *r = run_prog(true, NULL, "alloc-api", NULL);
	assert_exited(r, 0);
	struct trace *t = trace_for(r, "alloc-api", r->pid);
	for (size_t i = 0; i < trace_n_memory(t->doc); i++) {
		struct cgtrace_memory m = trace_memory(t->doc, i);
		assert_each(m.bytes <= 5000, "%s: record %zu: %llu bytes, a failed call's size",
			   t->path, i, (unsigned long long)m.bytes);
	}
	/* The block a failed realloc kept is freed once, at its own size. */
	struct model m;
	model_build(&m, r, r->pid, "alloc-api", 0);
	size_t frees_of_64 = 0;
	for (size_t i = 0; i < m.n; i++)
		frees_of_64 += !m.v[i].alloc && m.v[i].bytes == 64 && !strcmp(m.v[i].op, "free");
	ck_assert_uint_eq(frees_of_64, 2);
	model_free(&m);
	run_free(r);
}
END_TEST

START_TEST(test_min_bytes_filters_allocations_and_their_frees)
{
	const char *env[] = {"CGPROBE_MIN_BYTES=64", NULL};
	struct run *r = run_prog(true, env, "alloc-api", NULL);
	assert_quiet_exit(r, 0, -1);
	struct trace *t = trace_for(r, "alloc-api", r->pid);
	struct model m;
	model_build(&m, r, r->pid, "alloc-api", 64);
	assert_records(t, &m, IN_ORDER, NULL);
	model_free(&m);
	struct cgtrace_summary sum;
	ck_assert_int_eq(cgtrace_doc_summary(t->doc, &sum), 0);
	ck_assert_uint_eq(sum.alloc_count, 10);
	ck_assert_uint_eq(sum.free_count, 9);
	for (size_t i = 0; i < trace_n_memory(t->doc); i++)
		assert_each(trace_memory(t->doc, i).bytes >= 64, "%s: record %zu under CGPROBE_MIN_BYTES=64",
			   t->path, i);
	ck_assert_uint_eq(final_bytes(t), 4242);
	run_free(r);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Threads                                                             */
/* ------------------------------------------------------------------ */

/* The clock of the kernel's time, as sysfs names it; "" when unknown. */
static void kernel_clocksource(char *buf, size_t len)
{
	FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
	buf[0] = '\0';
	if (f && fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = '\0';
	if (f)
		fclose(f);
}

/*
 * By default the stamps are the TSC's where the kernel's clock is the
 * TSC: always under clocksource tsc, under kvm-clock when the host
 * promises stable TSCs, never under any other clock.
 */
START_TEST(test_clock_source_default)
{
	char source[64];
	kernel_clocksource(source, sizeof(source));
	struct run *r = run_prog(true, NULL, "hello", NULL);
	assert_quiet_exit(r, 0, 1);
	const char *clock = tag(trace_for(r, "hello", r->pid), "cgprobe_clock");
	ck_assert_ptr_nonnull(clock);
#if defined(__x86_64__)
	if (!strcmp(source, "tsc"))
		ck_assert_str_eq(clock, "tsc");
	else if (strcmp(source, "kvm-clock"))
		ck_assert_str_eq(clock, "monotonic");
	else
		ck_assert_msg(!strcmp(clock, "tsc") || !strcmp(clock, "monotonic"), "clock %s", clock);
#else
	ck_assert_str_eq(clock, "monotonic");
#endif
	run_free(r);
}
END_TEST

/* CGPROBE_CLOCK=monotonic: clock_gettime whatever the machine, without a word. */
START_TEST(test_clock_source_monotonic)
{
	const char *env[] = {"CGPROBE_CLOCK=monotonic", NULL};
	struct run *r = run_prog(true, env, "hello", NULL);
	assert_quiet_exit(r, 0, 1);
	struct trace *t = trace_for(r, "hello", r->pid);
	ck_assert_str_eq(tag(t, "cgprobe_clock"), "monotonic");
	assert_program_records(r, t, "hello", IN_ORDER);
	run_free(r);
}
END_TEST

/*
 * Both clocks the stamps may come from: the default (the TSC where the
 * kernel's clock is the TSC), and clock_gettime. Threads hand addresses
 * to each other through malloc, and the trace holds each free before the
 * allocation that reuses its address only if the stamps order them.
 */
static const char *const clock_envs[][2] = {{NULL, NULL}, {"CGPROBE_CLOCK=monotonic", NULL}};
static const char *const clock_tags[] = {NULL, "monotonic"};

START_TEST(test_threads_all_records_matched)
{
	const char *args[] = {"8", "2000", NULL};
	struct run *ref, *r = run_alike(&ref, NULL, clock_envs[_i], "threads", args);
	assert_exited(ref, 0);
	ck_assert_str_eq(r->err_text, "");
	struct trace *t = trace_for(r, "threads", r->pid);
	if (clock_tags[_i])
		ck_assert_str_eq(tag(t, "cgprobe_clock"), clock_tags[_i]);
	assert_root_last(t);

	struct model m;
	model_build(&m, r, r->pid, "threads", 0);
	size_t allocs = 0;
	for (size_t i = 0; i < m.n; i++)
		allocs += m.v[i].alloc;
	ck_assert_uint_ge(allocs, 8 * 2000);
	ck_assert_uint_eq(m.n, 2 * allocs);
	assert_records(t, &m, SAME_SET, libc_thread_block);
	model_free(&m);

	/* Every block the program allocated was freed; only libc's thread blocks may stay. */
	size_t libc_allocs, libc_frees;
	uint64_t libc_live = filtered_bytes(t, libc_thread_block, &libc_allocs, &libc_frees);
	ck_assert_uint_le(libc_allocs, 8);
	struct cgtrace_memory_report *rep = analyze(t);
	ck_assert_uint_eq(rep->alloc_count, allocs + libc_allocs);
	ck_assert_uint_eq(rep->free_count, allocs + libc_frees);
	ck_assert_uint_eq(rep->n_devices, 1);
	ck_assert_uint_eq(rep->by_device[0].final_bytes, libc_live);

	/* Peak: at least one thread's own peak, at most all of them at once. */
	uint64_t max_one = 0, all = stat_sum(r, r->pid, "max_live", &max_one);
	ck_assert_uint_gt(max_one, 0);
	ck_assert_msg(rep->peak_bytes >= max_one && rep->peak_bytes <= all + libc_live,
		      "peak %llu outside [%llu, %llu]", (unsigned long long)rep->peak_bytes,
		      (unsigned long long)max_one, (unsigned long long)(all + libc_live));
	cgtrace_memory_report_free(rep);
	run_free_both(ref, r);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Annotation spans                                                    */
/* ------------------------------------------------------------------ */

static uint64_t span_number(const struct run *r, const char *name)
{
	struct pline l;
	char key[64];
	snprintf(key, sizeof(key), "span %s ", name);
	for (const char *c = r->out_text; next_pline(&c, &l);)
		if (l.kind == 'S' && !strncmp(l.rest, key, strlen(key)))
			return strtoull(l.rest + strlen(key), NULL, 10);
	ck_abort_msg("no span %s", name);
	return 0;
}

static void assert_span(const struct trace *t, uint64_t id, const char *name, const char *parent,
			enum cgtrace_step step, bool closed)
{
	char sid[24];
	struct cgtrace_span s;
	snprintf(sid, sizeof(sid), "s%llu", (unsigned long long)id);
	ck_assert_msg(trace_find_span(t->doc, sid, &s), "no span %s", sid);
	ck_assert_str_eq(s.name, name);
	ck_assert_str_eq(s.parent_id, parent);
	ck_assert_int_eq(s.step, step);
	ck_assert_int_eq(s.kind, CGTRACE_SPAN_FUNCTION);
	ck_assert_int_eq(s.closed, closed);
	ck_assert_uint_gt(s.start_ns, 0);
	if (closed)
		ck_assert_uint_gt(s.duration_ns, 0);
}

START_TEST(test_spans_give_categories)
{
	/* The program counts its records in the trace's text. */
	struct run *r = run_output(0, NULL, "spans", NULL);
	assert_exited(r, 0);
	/* Two ends of spans not innermost, one warning. */
	ck_assert_str_eq(r->err_text, "cgprobe: a span ended that is not its thread's innermost "
				      "open span; such ends are ignored (warned once)\n");
	struct trace *t = trace_for(r, "spans", r->pid);
	assert_root_last(t);
	/* Spans and categories as the C lines say (two threads: any order). */
	assert_program_records_except(r, t, "spans", SAME_SET, libc_thread_block);

	uint64_t f = span_number(r, "forward"), in = span_number(r, "inner");
	uint64_t w = span_number(r, "worker"), b = span_number(r, "backward");
	uint64_t o = span_number(r, "optimizer"), left = span_number(r, "left-open");
	char fid[24];
	snprintf(fid, sizeof(fid), "s%llu", (unsigned long long)f);
	ck_assert_uint_eq(f, 2);
	assert_span(t, f, "forward", "s1", CGTRACE_STEP_FORWARD, true);
	assert_span(t, in, "inner", fid, CGTRACE_STEP_NONE, true);
	assert_span(t, w, "worker", "s1", CGTRACE_STEP_OPTIMIZER, true);
	assert_span(t, b, "backward", "s1", CGTRACE_STEP_BACKWARD, true);
	assert_span(t, o, "optimizer", "s1", CGTRACE_STEP_OPTIMIZER, true);
	assert_span(t, left, "left-open", "s1", CGTRACE_STEP_NONE, false);
	ck_assert_uint_eq(cgtrace_doc_count(t->doc, CGTRACE_KIND_SPAN_START), 7);
	ck_assert_uint_eq(cgtrace_doc_count(t->doc, CGTRACE_KIND_SPAN_END), 6);

	assert_result(r, "spans", "end-wrong-id -22");
	assert_result(r, "spans", "end-none-open -22");
	assert_result(r, "spans", "bad-step 0");
	assert_result(r, "spans", "flush 0");
	assert_result(r, "spans", "flushed 3");

	struct cgtrace_memory_report *rep = analyze(t);
	ck_assert_uint_eq(rep->alloc_count - count_records(t, CGTRACE_ALLOC, "calloc"), 10);
	ck_assert_uint_eq(rep->free_count, 10);
	cgtrace_memory_report_free(rep);
	run_free(r);
}
END_TEST

START_TEST(test_spans_program_runs_without_probe)
{
	struct run *r = run_prog(false, NULL, "spans", NULL);
	assert_quiet_exit(r, 0, 0);
	assert_result(r, "spans", "no probe");
	run_free(r);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Meta record                                                         */
/* ------------------------------------------------------------------ */

static char *real_exe(const char *prog)
{
	char path[PATH_MAX], real[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", bin_dir, prog);
	ck_assert_ptr_nonnull(realpath(path, real));
	return strdup(real);
}

START_TEST(test_meta_defaults)
{
	const char *args[] = {"0", "two words", NULL};
	char host[256], *exe = real_exe("hello"), *cmdline;
	struct run *r = run_prog(true, NULL, "hello", args);
	assert_quiet_exit(r, 0, -1);
	struct trace *t = trace_for(r, "hello", r->pid);
	assert_root_last(t);
	assert_program_records(r, t, "hello", IN_ORDER);

	ck_assert_str_eq(t->meta.entrypoint, "hello");
	ck_assert_int_eq(t->meta.phase, CGTRACE_PHASE_TRAIN);
	ck_assert_uint_eq(t->meta.capture_step, 1);
	ck_assert_uint_eq(t->meta.warmup_steps, 0);
	ck_assert_str_eq(t->meta.correlation_id, "hello/update-1");
	ck_assert_str_eq(t->meta.device, "cpu");
	ck_assert_ptr_null(t->meta.candle_version);
	ck_assert_uint_gt(strlen(t->meta.run_id), 0);
	ck_assert_uint_gt(strlen(t->meta.timestamp), 0);
	ck_assert_int_eq(t->meta.timestamp[strlen(t->meta.timestamp) - 1], 'Z');

	/* Exactly the probe's own tags. */
	ck_assert_uint_eq(t->meta.n_tags, probe_tag_count());
	ck_assert_int_eq(strtol(tag(t, "pid"), NULL, 10), r->pid);
	ck_assert_int_eq(strtol(tag(t, "ppid"), NULL, 10), getpid());
	ck_assert_str_eq(tag(t, "executable"), exe);
	cmdline = strf("%s/hello", bin_dir);
	const char *argv[] = {cmdline, "0", "two words", NULL};
	assert_cmdline_is(tag(t, "cmdline"), argv);
	ck_assert_msg(ends_with(tag(t, "cmdline"), " 0 'two words'"), "cmdline %s",
		      tag(t, "cmdline"));
	ck_assert_str_eq(tag(t, "cgprobe_min_bytes"), "0");
	ck_assert_str_eq(tag(t, "cgprobe_device_snapshots"), "off");
	/* A C program: no interpreter, so no Python frames whatever the mode asked. */
	ck_assert_str_eq(tag(t, "cgprobe_python"), "off");
	ck_assert_ptr_nonnull(strstr(tag(t, "cgprobe_steps"), "forward=*forward*"));
	ck_assert_int_eq(gethostname(host, sizeof(host)), 0);
	ck_assert_str_eq(tag(t, "hostname"), host);
	ck_assert_ptr_null(tag(t, "forked_from"));
	free(exe);
	free(cmdline);
	run_free(r);
}
END_TEST

/*
 * The figures at the end: the process's peak, the probe's own bytes and
 * its stack tables', 0 without stacks; in a JSONL trace and a compact
 * one alike (the head rewritten in place); empty in a trace whose
 * process was killed with SIGKILL, which never ends it.
 */
START_TEST(test_meta_end_figures)
{
	const char *args[] = {"0", NULL};
	for (int stacks = 0; stacks < 2; stacks++) {
		for (int compact = 0; compact < 2; compact++) {
			struct run *r = run_new(true);
			static char out[RUNDIR_MAX + 64];
			snprintf(out, sizeof(out), "CGPROBE_OUTPUT=%s/trace.%%p.%s", r->out,
				 compact ? "cgt" : "jsonl");
			const char *env[] = {out, stacks ? NULL : "CGPROBE_STACK_DEPTH=0", NULL};
			run_start(r, env, "hello", args);
			run_wait(r);
			assert_quiet_exit(r, 0, -1);
			struct trace *t = trace_for(r, "hello", r->pid);
			uint64_t peak, probe, st;
			ck_assert(end_figure(t, "cgprobe_peak_rss_bytes", &peak));
			ck_assert(end_figure(t, "cgprobe_probe_bytes", &probe));
			ck_assert(end_figure(t, "cgprobe_stack_table_bytes", &st));
			/* A process is more than a page; the probe's rings and tables are mapped. */
			ck_assert_uint_gt(peak, 1u << 20);
			if (stacks)
				ck_assert_uint_gt(st, 0);
			else
				ck_assert_uint_eq(st, 0);
			run_free(r);
		}
	}

	struct run *r = run_new(true);
	const char *wait_args[] = {"wait", NULL};
	const char *env[] = {output_env(r, 0), NULL};
	run_start(r, env, "exits", wait_args);
	run_wait_for_output(r, "R ready\n");
	sleep_ms(50);
	ck_assert_int_eq(kill(r->pid, SIGKILL), 0);
	child_wait(r->pid, RUN_TIMEOUT_MS, r->dir);
	char *path = path_in(r->out, "trace.%ld.jsonl", (long)r->pid);
	char *text = read_file(path, NULL);
	ck_assert_ptr_nonnull(text);
	char *nl = strchr(text, '\n');
	ck_assert_ptr_nonnull(nl);
	*nl = '\0';
	ck_assert_ptr_nonnull(strstr(text, "\"cgprobe_peak_rss_bytes\":\"\""));
	ck_assert_ptr_nonnull(strstr(text, "\"cgprobe_probe_bytes\":\"\""));
	free(text);
	free(path);
	run_free(r);
}
END_TEST

START_TEST(test_meta_from_environment)
{
	const char *env[] = {"CGPROBE_ENTRYPOINT=train.step",
			     "CGPROBE_PHASE=infer",
			     "CGPROBE_CAPTURE_STEP=5",
			     "CGPROBE_DEVICE=cuda:1",
			     "RANK=3",
			     "LOCAL_RANK=1",
			     "WORLD_SIZE=8",
			     "SLURM_PROCID=3",
			     "OMPI_COMM_WORLD_RANK=3",
			     "CGPROBE_TAGS=team=ml,pid=1,exp=a=b,k=1,k=2,hostname=x,=bad,noeq,"
			     "cgprobe_min_bytes=9,cgprobe_device_snapshots=alloc",
			     NULL};
	struct run *r = run_prog(true, env, "hello", NULL);
	assert_quiet_exit(r, 0, -1);
	struct trace *t = trace_for(r, "train.step", r->pid);
	assert_program_records(r, t, "hello", IN_ORDER);
	ck_assert_int_eq(t->meta.phase, CGTRACE_PHASE_INFER);
	ck_assert_uint_eq(t->meta.capture_step, 5);
	ck_assert_uint_eq(t->meta.warmup_steps, 4);
	ck_assert_str_eq(t->meta.correlation_id, "train.step/update-5");
	ck_assert_str_eq(t->meta.device, "cuda:1");
	struct cgtrace_span root;
	ck_assert(trace_find_span(t->doc, "s1", &root));
	ck_assert_str_eq(root.name, "train.step");

	ck_assert_str_eq(tag(t, "RANK"), "3");
	ck_assert_str_eq(tag(t, "LOCAL_RANK"), "1");
	ck_assert_str_eq(tag(t, "WORLD_SIZE"), "8");
	ck_assert_str_eq(tag(t, "SLURM_PROCID"), "3");
	ck_assert_str_eq(tag(t, "OMPI_COMM_WORLD_RANK"), "3");
	ck_assert_str_eq(tag(t, "team"), "ml");
	ck_assert_str_eq(tag(t, "exp"), "a=b");
	ck_assert_str_eq(tag(t, "k"), "2");
	/* The probe's keys cannot be overridden. */
	ck_assert_int_eq(strtol(tag(t, "pid"), NULL, 10), r->pid);
	ck_assert_str_ne(tag(t, "hostname"), "x");
	ck_assert_ptr_null(tag(t, "noeq"));
	ck_assert_str_eq(tag(t, "cgprobe_min_bytes"), "0");
	ck_assert_str_eq(tag(t, "cgprobe_device_snapshots"), "off");
	ck_assert_uint_eq(t->meta.n_tags, probe_tag_count() + 5 + 3);
	run_free(r);
}
END_TEST

START_TEST(test_meta_correlation_id)
{
	const char *env[] = {"CGPROBE_CORRELATION_ID=job-42/update-7", "CGPROBE_CAPTURE_STEP=7",
			     NULL};
	struct run *r = run_prog(true, env, "hello", NULL);
	assert_exited(r, 0);
	struct trace *t = trace_for(r, "hello", r->pid);
	ck_assert_str_eq(t->meta.correlation_id, "job-42/update-7");
	ck_assert_uint_eq(t->meta.warmup_steps, 6);
	run_free(r);
}
END_TEST

/* Settings that change what is recorded, as tags: the value in effect, in plain form. */
static const struct {
	const char *min_bytes, *snapshots; /* environment entries, or NULL */
	const char *min_tag, *snapshots_tag;
	bool warns;
} setting_cases[] = {
	{"CGPROBE_MIN_BYTES=4096", "CGPROBE_DEVICE_SNAPSHOTS=alloc", "4096", "alloc", false},
	{"CGPROBE_MIN_BYTES=004096", "CGPROBE_DEVICE_SNAPSHOTS=off", "4096", "off", false},
	{"CGPROBE_MIN_BYTES=-1", NULL, "0", "off", true},
	{"CGPROBE_MIN_BYTES=", "CGPROBE_DEVICE_SNAPSHOTS=", "0", "off", false},
};

START_TEST(test_meta_records_settings)
{
	const char *env[] = {setting_cases[_i].min_bytes, setting_cases[_i].snapshots, NULL};
	struct run *r = run_prog(true, env, "hello", NULL);
	assert_exited(r, 0);
	if (setting_cases[_i].warns)
		assert_one_warning(r, "CGPROBE_MIN_BYTES");
	else
		ck_assert_str_eq(r->err_text, "");
	struct trace *t = trace_for(r, "hello", r->pid);
	/* hello's one block (4321 bytes) is above every threshold here. */
	assert_program_records(r, t, "hello", IN_ORDER);
	ck_assert_str_eq(tag(t, "cgprobe_min_bytes"), setting_cases[_i].min_tag);
	ck_assert_str_eq(tag(t, "cgprobe_device_snapshots"), setting_cases[_i].snapshots_tag);
	run_free(r);
}
END_TEST

/* Arguments sh must be given quoted, each its own word, and some it need not. */
static const char *const awkward_args[] = {
	"a b",  "it's", "",       "$HOME",  "*",      "line\nbreak",        "'",
	"x''y", "tab\there", "~", "a;b|c&", "\"q\"", "plain-1.0_@%+=:,./", "caf\xc3\xa9",
	NULL,
};

START_TEST(test_meta_cmdline_quoted_for_sh)
{
	char *path = strf("%s/hello", bin_dir);
	const char *argv[32] = {path, "0"};
	size_t n = 2;
	for (const char *const *a = awkward_args; *a; a++)
		argv[n++] = *a;
	argv[n] = NULL;
	struct run *r = run_prog(true, NULL, "hello", argv + 1);
	assert_exited(r, 0);
	struct trace *t = trace_for(r, "hello", r->pid);
	const char *cmdline = tag(t, "cmdline");
	assert_cmdline_is(cmdline, argv);
	/* Safe arguments stay bare, the empty one is '', a quote is '\''. */
	ck_assert_msg(strstr(cmdline, " 0 'a b' 'it'\\''s' '' '$HOME' '*' 'line\nbreak' ''\\''' "),
		      "cmdline %s", cmdline);
	ck_assert_msg(ends_with(cmdline, " plain-1.0_@%+=:,./ 'caf\xc3\xa9'"), "cmdline %s",
		      cmdline);
	free(path);
	run_free(r);
}
END_TEST

/* Past 4096 bytes: the whole arguments that fit, then " ...". */
START_TEST(test_meta_cmdline_cut_at_argument)
{
	char *path = strf("%s/hello", bin_dir);
	char *args[29];
	const char *argv[32] = {path, "0"};
	for (size_t i = 0; i < 29; i++) {
		args[i] = strf("%03zu-it's-%0190d", i, 0);
		argv[i + 2] = args[i];
	}
	argv[31] = NULL;
	struct run *r = run_prog(true, NULL, "hello", argv + 1);
	assert_exited(r, 0);
	struct trace *t = trace_for(r, "hello", r->pid);
	const char *cmdline = tag(t, "cmdline");
	size_t len = strlen(cmdline);
	ck_assert_uint_le(len, 4096);
	/* Each argument takes 205 bytes quoted: no more room is left than one more needs. */
	ck_assert_uint_gt(len, 4096 - 206 - 4);
	ck_assert_msg(ends_with(cmdline, "' ..."), "cmdline ends %s", cmdline + len - 20);
	char *kept = strndup(cmdline, len - 4);
	size_t words = 0;
	free(sh_words(kept, &words));
	ck_assert_uint_gt(words, 2);
	ck_assert_uint_lt(words, 31);
	argv[words] = NULL;
	assert_cmdline_is(kept, argv);
	free(kept);
	for (size_t i = 0; i < 29; i++)
		free(args[i]);
	free(path);
	run_free(r);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Trace files                                                         */
/* ------------------------------------------------------------------ */

/* The default name says the encoding: .cgt compact, .jsonl with CGPROBE_FORMAT=jsonl. */
START_TEST(test_default_output_name)
{
	const char *env[] = {"CGPROBE_OUTPUT", compact_mode ? NULL : "CGPROBE_FORMAT=jsonl", NULL};
	struct run *r = run_prog(true, env, "hello", NULL);
	assert_quiet_exit(r, 0, 1);
	char *want = strf("cgprobe.hello.%d.%s", (int)r->pid, compact_mode ? "cgt" : "jsonl");
	ck_assert_str_eq(base_name(r->traces[0].path), want);
	assert_program_records(r, &r->traces[0], "hello", IN_ORDER);
	free(want);
	run_free(r);
}
END_TEST

START_TEST(test_output_template)
{
	char host[256];
	struct run *r = run_new(true);
	char *env0 = strf("CGPROBE_OUTPUT=%s/%%e-%%h-%%n-%%%%-%%p.jsonl", r->out);
	const char *env[] = {env0, NULL};
	run_start(r, env, "hello", NULL);
	run_wait(r);
	assert_quiet_exit(r, 0, -1);
	ck_assert_int_eq(gethostname(host, sizeof(host)), 0);
	char *want = path_in(r->out, "hello-%s-0-%%-%d.jsonl", host, (int)r->pid);
	ck_assert_uint_eq(r->n_traces, 1);
	ck_assert_str_eq(r->traces[0].path, want);
	free(want);
	free(env0);
	run_free(r);
}
END_TEST

/* A relative template is under the working directory; missing directories are made. */
START_TEST(test_output_relative_with_new_directories)
{
	const char *env[] = {"CGPROBE_OUTPUT=deep/er/t.jsonl", NULL};
	struct run *r = run_prog(true, env, "hello", NULL);
	assert_quiet_exit(r, 0, -1);
	ck_assert_uint_eq(r->n_traces, 0); /* not directly in cwd */
	char *path = path_in(r->cwd, "deep/er/t.jsonl");
	load_trace(r, path);
	assert_program_records(r, &r->traces[0], "hello", IN_ORDER);
	free(path);
	run_free(r);
}
END_TEST

/* An existing file is never overwritten: `.1`, `.2` go before the extension. */
START_TEST(test_output_never_overwrites)
{
	struct run *r = run_new(true);
	int zst = _i;
	/* Not r->out: the runs would read the files there as their traces. */
	char *files = path_in(r->dir, "files");
	ck_assert_int_eq(mkdir(files, 0755), 0);
	char *taken0 = path_in(files, "t%s", output_suffix[zst]);
	char *taken1 = path_in(files, "t.1%s", output_suffix[zst]);
	write_file(taken0, "keep 0\n");
	write_file(taken1, "keep 1\n");
	char *env0 = strf("CGPROBE_OUTPUT=%s", taken0);
	const char *env[] = {env0, NULL};
	run_start(r, env, "hello", NULL);
	run_wait(r);
	/* The second run of the same template takes the next free name. */
	struct run *again = run_new(true);
	run_start(again, env, "hello", NULL);
	run_wait(again);
	assert_exited(r, 0);
	assert_exited(again, 0);
	ck_assert_str_eq(r->err_text, "");

	char *t0 = read_file(taken0, NULL), *t1 = read_file(taken1, NULL);
	ck_assert_str_eq(t0, "keep 0\n");
	ck_assert_str_eq(t1, "keep 1\n");
	char *p2 = path_in(files, "t.2%s", output_suffix[zst]);
	char *p3 = path_in(files, "t.3%s", output_suffix[zst]);
	struct run *read = run_new(false);
	load_trace(read, p2);
	load_trace(read, p3);
	ck_assert_int_eq(read->traces[0].pid, r->pid);
	ck_assert_int_eq(read->traces[1].pid, again->pid);
	assert_program_records(r, &read->traces[0], "hello", IN_ORDER);
	if (zst) {
		assert_zstd_file(p2);
		assert_zstd_file(p3);
	}
	free(t0);
	free(t1);
	free(p2);
	free(p3);
	free(taken0);
	free(taken1);
	free(files);
	free(env0);
	run_free(read);
	run_free(again);
	run_free(r);
}
END_TEST

START_TEST(test_output_zstd)
{
	struct run *r = run_output(1, NULL, "alloc-api", NULL);
	assert_quiet_exit(r, 0, 1);
	char *want = path_in(r->out, "trace.%d.jsonl.zst", (int)r->pid);
	ck_assert_str_eq(r->traces[0].path, want);
	assert_zstd_file(want);
	assert_program_records(r, &r->traces[0], "alloc-api", IN_ORDER);
	free(want);
	run_free(r);
}
END_TEST

/* An existing FIFO is written as it is: a reader on the other end gets the trace. */
START_TEST(test_output_fifo)
{
	struct fifo f;
	struct run *r = run_new_fifo(&f);
	const char *env[] = {f.env, NULL};
	run_start(r, env, "hello", NULL);
	run_wait(r);
	assert_quiet_exit(r, 0, 0);

	char data[65536];
	size_t len = fifo_drain(&f, data, sizeof(data));
	struct trace *t = &r->traces[r->n_traces++];
	load_trace_from(t, f.path, data, len);
	ck_assert_int_eq(t->pid, r->pid);
	assert_program_records(r, t, "hello", IN_ORDER);
	fifo_free(&f);
	run_free(r);
}
END_TEST

START_TEST(test_output_dev_null)
{
	const char *env[] = {"CGPROBE_OUTPUT=/dev/null", NULL};
	struct run *ref, *r = run_alike(&ref, NULL, env, "hello", NULL);
	assert_quiet_exit(r, 0, 0);
	run_free_both(ref, r);
}
END_TEST

START_TEST(test_manifest_lists_every_trace)
{
	struct run *r = run_new(true);
	char *manifest = path_in(r->dir, "manifest");
	char *env0 = strf("CGPROBE_MANIFEST=%s", manifest);
	char *hello = strf("%s/hello", bin_dir);
	const char *env[] = {env0, NULL};
	const char *args[] = {"fork-exec", hello, NULL};
	run_start(r, env, "forks", args);
	run_wait(r);
	assert_exited(r, 0);
	ck_assert_uint_eq(r->n_traces, 3);
	char *text = read_file(manifest, NULL);
	ck_assert_ptr_nonnull(text);
	ck_assert_uint_eq(count_lines(text), 3);
	for (size_t i = 0; i < r->n_traces; i++) {
		char *line = strf("%s\n", r->traces[i].path);
		char *at = strstr(text, line);
		ck_assert_msg(at && (at == text || at[-1] == '\n'), "%s not in manifest:\n%s",
			      r->traces[i].path, text);
		free(line);
	}
	free(text);
	free(hello);
	free(env0);
	free(manifest);
	run_free(r);
}
END_TEST

/* CGPROBE_ONLY: comma-separated globs on the executable's name. */
START_TEST(test_only_selects_programs)
{
	char *hello = strf("%s/hello", bin_dir);
	const char *spawn[] = {"spawn", hello, NULL};
	const char *only_hello[] = {"CGPROBE_ONLY=nomatch,h?ll*", NULL};
	const char *only_none[] = {"CGPROBE_ONLY=nomatch,forks?,*zzz", NULL};
	struct run *ref, *r = run_alike(&ref, NULL, only_hello, "forks", spawn);
	struct run *none = run_prog(true, only_none, "forks", spawn);
	assert_exited(ref, 0);
	assert_same_status(ref, none);
	assert_same_results(ref, none);
	assert_quiet_exit(r, 0, 1);
	assert_quiet_exit(none, 0, 0);
	struct trace *t = trace_for(r, "hello", 0);
	assert_program_records(r, t, "hello", IN_ORDER);
	free(hello);
	run_free_both(ref, r);
	run_free(none);
}
END_TEST

/* CGPROBE_FOLLOW=0: only the first process, whatever it starts. */
START_TEST(test_follow_off_traces_first_process_only)
{
	static const char *const cases[][2] = {
		{"forks", "fork"}, {"forks", "fork-exec"}, {"forks", "vfork-exec"},
		{"forks", "spawn"}, {"exits", "exec:execv"},
	};
	const char *prog = cases[_i][0];
	char *hello = strf("%s/hello", bin_dir);
	const char *args[] = {cases[_i][1], hello, NULL};
	const char *env[] = {"CGPROBE_FOLLOW=0", NULL};
	struct run *ref, *r = run_alike(&ref, NULL, env, prog, args);
	ck_assert_str_eq(r->err_text, "");
	ck_assert_msg(r->n_traces == 1, "%zu traces", r->n_traces);
	struct trace *t = trace_for(r, prog, r->pid);
	assert_program_records(r, t, prog, IN_ORDER);
	free(hello);
	run_free_both(ref, r);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Exit paths                                                          */
/* ------------------------------------------------------------------ */

struct exit_case {
	const char *mode;
	int code;
	uint64_t live; /* bytes still allocated at the end */
	bool threads;
};

static const struct exit_case exit_cases[] = {
	{"return", 7, 1111, false},      {"exit", 3, 1111, false},
	{"exit-thread", 5, 4444, true},  {"_exit", 4, 1111, false},
	{"_Exit", 6, 1111, false},       {"term-handler", 9, 1111, false},
	{"term-signal", 9, 1111, false}, {"sigquery", 0, 1111, false},
};

#define N_EXIT_CASES (int)(sizeof(exit_cases) / sizeof(exit_cases[0]))

/* Each case with a plain and a zstd trace. */
START_TEST(test_exit_paths_leave_complete_trace)
{
	const struct exit_case *c = &exit_cases[_i / 2];
	int zst = _i % 2;
	const char *args[] = {c->mode, NULL};
	struct run *ref = run_prog(false, NULL, "exits", args);
	struct run *r = run_output(zst, NULL, "exits", args);
	assert_alike(ref, r);
	assert_quiet_exit(ref, c->code, -1);
	assert_quiet_exit(r, c->code, 1);
	struct trace *t = trace_for(r, "exits", r->pid);
	if (zst)
		assert_zstd_file(t->path);
	assert_root_last(t);
	if (c->threads) {
		assert_program_records_except(r, t, "exits", SAME_SET, libc_thread_block);
		ck_assert_uint_eq(final_bytes(t),
				  c->live + filtered_bytes(t, libc_thread_block, NULL, NULL));
	} else {
		assert_program_records(r, t, "exits", IN_ORDER);
		assert_ts_increasing(t);
		ck_assert_uint_eq(final_bytes(t), c->live);
	}
	if (!strncmp(c->mode, "term-", 5))
		ck_assert_ptr_nonnull(strstr(r->out_text, "handler ran\n"));
	run_free_both(ref, r);
}
END_TEST

/* A failed exec goes on in the same process, and so does its trace. */
START_TEST(test_exec_failure_continues_trace)
{
	const char *args[] = {"exec-fail", NULL};
	struct run *ref, *r = run_alike(&ref, NULL, NULL, "exits", args);
	assert_exited(ref, 0);
	assert_result(r, "exits", "exec-fail r=-1 errno=2");
	assert_quiet_exit(r, 0, 1);
	struct trace *t = trace_for(r, "exits", r->pid);
	assert_program_records(r, t, "exits", IN_ORDER);
	ck_assert_uint_eq(final_bytes(t), 1111);
	run_free_both(ref, r);
}
END_TEST

/*
 * A large trace reserves disk space ahead of its writes; what was not used
 * must be given back when it ends, and before an exec, after which the
 * probe never closes the file itself.
 */
START_TEST(test_large_trace_gives_back_reserved_space)
{
	char *hello = strf("%s/hello", bin_dir);
	const char *args[] = {_i ? "churn-exec" : "churn", hello, NULL};
	/* JSONL: the churn is too small for the sizes below in the compact encoding. */
	struct run *r = run_output(0, NULL, "exits", args);
	assert_exited(r, _i ? 3 : 0);
	assert_result(r, "exits", "churned");
	struct trace *t = trace_for(r, "exits", r->pid);
	struct stat st;
	ck_assert_int_eq(stat(t->path, &st), 0);
	/* Well past the point where reserving starts (8 MiB). */
	ck_assert_int_gt(st.st_size, 16 << 20);
	/* Allocated: the size in whole blocks, not megabytes more. */
	ck_assert_msg((uint64_t)st.st_blocks * 512 <= (uint64_t)st.st_size + (64 << 10),
		      "%s: %lld bytes long, %lld allocated", t->path, (long long)st.st_size,
		      (long long)st.st_blocks * 512);
	assert_root_last(t);
	free(hello);
	run_free(r);
}
END_TEST

/*
 * Death by a signal: the same signal with and without the probe, and a
 * complete trace. The test re-raises the signal the program died of, so
 * Check holds it against the expected one too.
 */
static int death(const char *mode, int sig, int zst)
{
	const char *args[] = {mode, NULL};
	bool external = !strcmp(mode, "wait");
	struct run *runs[2];
	for (int probe = 0; probe < 2; probe++) {
		struct run *r = runs[probe] = run_new(probe);
		const char *env[] = {output_env(r, zst), NULL};
		run_start(r, env, "exits", args);
		if (external) {
			run_wait_for_output(r, "R ready\n");
			/* Let the writer thread run a round first: no help from a fresh start. */
			sleep_ms(50);
			ck_assert_int_eq(kill(r->pid, sig), 0);
		}
		run_wait(r);
	}
	struct run *ref = runs[0], *r = runs[1];
	assert_killed(ref, sig);
	assert_alike(ref, r);
	ck_assert_str_eq(r->err_text, ref->err_text);
	ck_assert_uint_eq(r->n_traces, 1);
	struct trace *t = trace_for(r, "exits", r->pid);
	if (zst)
		assert_zstd_file(t->path);
	assert_root_last(t);
	assert_program_records(r, t, "exits", IN_ORDER);
	ck_assert_uint_eq(final_bytes(t), 1111);
	int got = WIFSIGNALED(r->status) ? WTERMSIG(r->status) : 0;
	run_free_both(ref, r);
	return got;
}

#define DEATH_TEST(name, mode, sig)                                                            \
	START_TEST(name)                                                                       \
	{                                                                                      \
		reraise(death(mode, sig, _i));                                                 \
	}                                                                                      \
	END_TEST

DEATH_TEST(test_death_segv, "segv", SIGSEGV)
DEATH_TEST(test_death_abort, "abort", SIGABRT)
DEATH_TEST(test_death_term, "term", SIGTERM)
DEATH_TEST(test_death_term_after_sig_dfl, "term-dfl", SIGTERM)
DEATH_TEST(test_death_term_after_ignore_and_restore, "term-restored", SIGTERM)
DEATH_TEST(test_death_usr1, "usr1", SIGUSR1)
DEATH_TEST(test_death_killed_term, "wait", SIGTERM)
DEATH_TEST(test_death_killed_int, "wait", SIGINT)
DEATH_TEST(test_death_killed_hup, "wait", SIGHUP)

/* What the program sees of its own state is what it would see without the probe. */
static const struct {
	const char *mode; /* of exits.c */
	const char *env;  /* for both runs, or NULL */
	const char *results[4];
} state_cases[] = {
	/* Signal dispositions. */
	{"sigquery", NULL, {"segv default", "term default", "int-old default", "int ignore"}},
	/* The probe's start before main leaves errno as a program finds it: zero. */
	{"errno", NULL, {"errno-at-start 0"}},
	/* A program that closes descriptors it did not open never gets the trace's into its files. */
	{"fd-reuse", "CGPROBE_FLUSH_MS=10", {"own-log 5 intact"}},
};

START_TEST(test_program_state_unchanged)
{
	const char *args[] = {state_cases[_i].mode, NULL};
	const char *env[] = {state_cases[_i].env, NULL};
	struct run *ref, *r = run_alike(&ref, env, env, "exits", args);
	assert_exited(r, 0);
	for (size_t i = 0; i < 4 && state_cases[_i].results[i]; i++)
		assert_result(r, "exits", state_cases[_i].results[i]);
	run_free_both(ref, r);
}
END_TEST

/* ------------------------------------------------------------------ */
/* exec                                                                */
/* ------------------------------------------------------------------ */

static const char *const exec_variants[] = {"execv",  "execve",  "execl",
					    "execle", "execlp",  "execvp",
					    "execvpe", "execveat", "fexecve"};

#define N_EXEC_VARIANTS (int)(sizeof(exec_variants) / sizeof(exec_variants[0]))

/* The old trace is closed, the new program gets its own (`.1`: same pid). */
START_TEST(test_exec_starts_new_trace)
{
	const char *variant = exec_variants[_i / 2];
	int zst = _i % 2;
	char *mode = strf("exec:%s", variant), *hello = strf("%s/hello", bin_dir);
	char *path_env = strf("PATH=%s:/usr/bin:/bin", bin_dir);
	const char *args[] = {mode, hello, NULL};
	const char *ref_env[] = {path_env, NULL};
	struct run *ref = run_prog(false, ref_env, "exits", args);
	struct run *r = run_output(zst, path_env, "exits", args);
	assert_exited(ref, 3);
	assert_alike(ref, r);
	assert_result(r, "hello", "hello argc=2 sum=208");
	assert_quiet_exit(r, 3, 2);

	struct trace *old = trace_for(r, "exits", r->pid);
	struct trace *new = trace_for(r, "hello", r->pid);
	char *old_name = strf("trace.%d%s", (int)r->pid, output_suffix[zst]);
	char *new_name = strf("trace.%d.1%s", (int)r->pid, output_suffix[zst]);
	ck_assert_str_eq(base_name(old->path), old_name);
	ck_assert_str_eq(base_name(new->path), new_name);
	assert_root_last(old);
	assert_root_last(new);
	/* Exactness of the old trace: test_exec_adds_no_records_of_its_own. */
	assert_program_records(r, old, "exits", SUBSET);
	assert_program_records(r, new, "hello", IN_ORDER);
	ck_assert_uint_eq(final_bytes(new), 0);
	ck_assert_str_eq(tag(new, "cmdline"), "hello 3");
	ck_assert_ptr_null(tag(new, "forked_from"));
	free(old_name);
	free(new_name);
	free(mode);
	free(hello);
	free(path_env);
	run_free_both(ref, r);
}
END_TEST

/* The exec wrappers allocate nothing the trace would show as the program's. */
START_TEST(test_exec_adds_no_records_of_its_own)
{
	char *mode = strf("exec:%s", exec_variants[_i]), *hello = strf("%s/hello", bin_dir);
	char *path_env = strf("PATH=%s:/usr/bin:/bin", bin_dir);
	const char *args[] = {mode, hello, NULL};
	const char *env[] = {path_env, NULL};
	struct run *r = run_prog(true, env, "exits", args);
	assert_exited(r, 3);
	struct trace *old = trace_for(r, "exits", r->pid);
	assert_program_records(r, old, "exits", IN_ORDER);
	ck_assert_uint_eq(final_bytes(old), 1111);
	free(mode);
	free(hello);
	free(path_env);
	run_free(r);
}
END_TEST

/* ------------------------------------------------------------------ */
/* New processes                                                       */
/* ------------------------------------------------------------------ */

/*
 * The manifest read in order, as the wrapper reads it: a path lists a
 * trace, "-" and a path removes the one listed before it (the program an
 * exec starts may then list the same name again). What is left must be
 * exactly the run's trace files; `removed` lines start with "-".
 */
static void assert_manifest(const struct run *r, const char *text, size_t removed)
{
	struct strs live = {0};
	size_t minus = 0;
	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		ck_assert_msg(nl != NULL, "manifest ends inside a line:\n%s", text);
		char *line = strndup(p, (size_t)(nl - p));
		bool drop = line[0] == '-';
		const char *path = line + drop;
		size_t i = 0;
		p = nl + 1;
		ck_assert_msg(path[0] == '/', "manifest line '%s' is no absolute path", line);
		while (i < live.n && strcmp(live.v[i], path))
			i++;
		if (drop) {
			ck_assert_msg(i < live.n, "manifest removes %s, never listed:\n%s", path,
				      text);
			free(live.v[i]);
			live.v[i] = live.v[--live.n];
			minus++;
			free(line);
		} else {
			ck_assert_msg(i == live.n, "manifest lists %s twice:\n%s", path, text);
			strs_push(&live, line);
		}
	}
	ck_assert_msg(minus == removed, "%zu removals in the manifest, expected %zu:\n%s", minus,
		      removed, text);
	ck_assert_msg(live.n == r->n_traces, "manifest leaves %zu traces, %zu files:\n%s", live.n,
		      r->n_traces, text);
	for (size_t t = 0; t < r->n_traces; t++) {
		size_t i = 0;
		while (i < live.n && strcmp(live.v[i], r->traces[t].path))
			i++;
		ck_assert_msg(i < live.n, "%s not in the manifest:\n%s", r->traces[t].path, text);
	}
	strs_free(&live);
}

/* forks MODE HELLO, the manifest in the run's folder (no trace folder); its text in *manifest. */
static struct run *run_forks(bool probe, const char *mode, char **manifest)
{
	struct run *r = run_new(probe);
	char *list = path_in(r->dir, "manifest");
	char *env0 = strf("CGPROBE_MANIFEST=%s", list);
	char *hello = strf("%s/hello", bin_dir);
	const char *env[] = {env0, NULL};
	const char *args[] = {mode, hello, NULL};
	run_start(r, env, "forks", args);
	run_wait(r);
	char *text = read_file(list, NULL);
	if (manifest)
		*manifest = text ? text : strdup("");
	else
		free(text);
	free(hello);
	free(env0);
	free(list);
	return r;
}

/* Same status and results as without the probe; the manifest has `removed` removals. */
static void assert_forks_matches_reference(const char *mode, size_t removed, struct run **out)
{
	char *manifest;
	struct run *ref = run_forks(false, mode, NULL);
	struct run *r = run_forks(true, mode, &manifest);
	assert_exited(ref, 0);
	assert_alike(ref, r);
	ck_assert_str_eq(r->err_text, "");
	assert_manifest(r, manifest, removed);
	free(manifest);
	run_free(ref);
	*out = r;
}

START_TEST(test_fork_child_writes_own_trace)
{
	struct run *r;
	long pids[4];
	assert_forks_matches_reference("fork", 0, &r);
	assert_result(r, "forks", "child exited 12");
	ck_assert_uint_eq(pids_of(r, "forks", pids, 4), 2);
	ck_assert_int_eq(pids[0], r->pid);
	ck_assert_uint_eq(r->n_traces, 2);

	struct trace *parent = trace_for(r, "forks", r->pid);
	struct trace *child = trace_for(r, "forks", pids[1]);
	assert_program_records(r, parent, "forks", IN_ORDER);
	assert_program_records_except(r, child, "forks", IN_ORDER, preexisting);
	assert_root_last(parent);
	assert_root_last(child);
	ck_assert_ptr_null(tag(parent, "forked_from"));
	ck_assert_int_eq(strtol(tag(child, "forked_from"), NULL, 10), r->pid);
	ck_assert_int_eq(strtol(tag(child, "ppid"), NULL, 10), r->pid);
	ck_assert_str_eq(tag(child, "cmdline"), tag(parent, "cmdline"));
	/* The child's trace opens with what it inherited, the parent's block among it. */
	size_t n_pre;
	uint64_t pre = preexisting_bytes(child, &n_pre);
	ck_assert_uint_ge(n_pre, 1);
	ck_assert_uint_ge(pre, 1000);
	/* The child's free of the parent's block is kept: its peak and final bytes are right. */
	ck_assert_uint_eq(trace_n_memory(child->doc), 2 + n_pre + 1);
	ck_assert_uint_eq(count_records(child, CGTRACE_FREE, "free"), 2);
	ck_assert_uint_eq(final_bytes(child), pre - 1000);
	ck_assert_uint_eq(final_bytes(parent), 0);
	run_free(r);
}
END_TEST

/* A fork child that execs hello: three traces, the child's whole to its end. */
static void assert_fork_then_exec(const char *mode, size_t extra_bytes)
{
	struct run *r;
	long pids[4];
	assert_forks_matches_reference(mode, 0, &r);
	assert_result(r, "forks", "child exited 4");
	ck_assert_uint_eq(pids_of(r, "forks", pids, 4), 2);
	ck_assert_uint_eq(r->n_traces, 3);
	struct trace *parent = trace_for(r, "forks", r->pid);
	struct trace *child = trace_for(r, "forks", pids[1]);
	struct trace *hello = trace_for(r, "hello", pids[1]);
	assert_program_records(r, parent, "forks", IN_ORDER);
	assert_program_records_except(r, child, "forks", IN_ORDER, preexisting);
	assert_program_records(r, hello, "hello", IN_ORDER);
	assert_root_last(child);
	assert_root_last(hello);
	ck_assert_int_eq(strtol(tag(child, "forked_from"), NULL, 10), r->pid);
	ck_assert_ptr_null(tag(hello, "forked_from"));
	ck_assert_int_eq(strtol(tag(hello, "ppid"), NULL, 10), r->pid);
	size_t n_pre;
	ck_assert_uint_eq(final_bytes(child), 2500 + extra_bytes + preexisting_bytes(child, &n_pre));
	run_free(r);
}

START_TEST(test_fork_then_exec)
{
	assert_fork_then_exec("fork-exec", 0);
}
END_TEST

/*
 * A launcher's child closes every descriptor it did not open before exec,
 * the trace's among them: the trace goes on in the same file, to its end,
 * without a warning (the 700 bytes made after the close are recorded).
 */
START_TEST(test_fork_closing_descriptors_then_exec)
{
	assert_fork_then_exec("fork-close-exec", 700);
}
END_TEST

/*
 * The forks program started hello in a child by MODE: two traces, each of
 * its program, hello's a child's of forks but no fork child. Returns the
 * run and hello's trace for the caller's own checks; free the run.
 */
static struct run *started_hello(const char *mode, int empty, struct trace **hello_out)
{
	struct run *r;
	long pids[4];
	assert_forks_matches_reference(mode, empty, &r);
	assert_result(r, "forks", "child exited 4");
	ck_assert_uint_eq(pids_of(r, "forks", pids, 4), 1);
	ck_assert_uint_eq(pids_of(r, "hello", pids, 4), 1);
	ck_assert_uint_eq(r->n_traces, 2);
	struct trace *parent = trace_for(r, "forks", r->pid);
	struct trace *hello = trace_for(r, "hello", pids[0]);
	ck_assert_int_ne(pids[0], r->pid);
	assert_program_records(r, parent, "forks", IN_ORDER);
	assert_program_records(r, hello, "hello", IN_ORDER);
	assert_root_last(parent);
	assert_root_last(hello);
	ck_assert_int_eq(strtol(tag(hello, "ppid"), NULL, 10), r->pid);
	ck_assert_ptr_null(tag(hello, "forked_from"));
	*hello_out = hello;
	return r;
}

static void assert_started_hello(const char *mode)
{
	struct trace *hello;
	run_free(started_hello(mode, 0, &hello));
}

START_TEST(test_posix_spawn_child_traced)
{
	assert_started_hello("spawn");
}
END_TEST

START_TEST(test_vfork_exec_child_traced)
{
	assert_started_hello("vfork-exec");
}
END_TEST

START_TEST(test_vfork_execve_child_traced)
{
	assert_started_hello("vfork-execve");
}
END_TEST

/*
 * A fork child that allocated nothing before exec (timeout(1), shells)
 * leaves no trace of its own: the program it became has the only one, under
 * the same name (same pid), and the manifest says the first was removed.
 */
START_TEST(test_fork_exec_without_allocation_leaves_no_trace)
{
	struct trace *hello;
	struct run *r = started_hello("fork-exec-empty", 1, &hello);
	long pid = strtol(tag(hello, "pid"), NULL, 10);
	char *name = strf("trace.%ld.%s", pid, default_suffix());
	ck_assert_str_eq(base_name(hello->path), name);
	free(name);
	run_free(r);
}
END_TEST

/*
 * The same child whose exec fails goes on under a new session, as a fork
 * child (forked_from): the removed file's name again, what it does after
 * the failed exec recorded, its root span closed at its exit.
 */
START_TEST(test_fork_exec_failure_without_allocation_starts_new_trace)
{
	struct run *r;
	long pids[4];
	assert_forks_matches_reference("fork-exec-fail", 1, &r);
	assert_result(r, "forks", "child exited 5");
	assert_result(r, "forks", "exec r=-1 errno=2");
	ck_assert_uint_eq(pids_of(r, "forks", pids, 4), 2);
	ck_assert_uint_eq(r->n_traces, 2);
	struct trace *parent = trace_for(r, "forks", r->pid);
	struct trace *child = trace_for(r, "forks", pids[1]);
	char *name = strf("trace.%ld.%s", pids[1], default_suffix());
	ck_assert_str_eq(base_name(child->path), name);
	assert_program_records(r, parent, "forks", IN_ORDER);
	assert_program_records_except(r, child, "forks", IN_ORDER, preexisting);
	assert_root_last(parent);
	assert_root_last(child);
	ck_assert_uint_eq(trace_n_memory(child->doc), 2);
	ck_assert_uint_eq(final_bytes(child), 0);
	ck_assert_int_eq(strtol(tag(child, "forked_from"), NULL, 10), r->pid);
	free(name);
	run_free(r);
}
END_TEST

/*
 * What runs in a vfork or posix_spawn child (a failed exec, _exit) runs on
 * the parent's memory and thread: the parent's session and trace go on
 * whole, its allocations after the child included, and the child has none.
 */
static void assert_only_parent_traced(const char *mode, const char *result)
{
	struct run *r;
	assert_forks_matches_reference(mode, 0, &r);
	assert_result(r, "forks", result);
	ck_assert_uint_eq(r->n_traces, 1);
	struct trace *parent = trace_for(r, "forks", r->pid);
	assert_program_records(r, parent, "forks", IN_ORDER);
	assert_root_last(parent);
	assert_ts_increasing(parent);
	ck_assert_uint_eq(trace_n_memory(parent->doc), 4);
	ck_assert_uint_eq(final_bytes(parent), 0);
	run_free(r);
}

START_TEST(test_vfork_exec_failure_leaves_parent_whole)
{
	assert_only_parent_traced("vfork-exec-fail", "child exited 126");
}
END_TEST

START_TEST(test_posix_spawn_failure_leaves_parent_whole)
{
	assert_only_parent_traced("spawn-fail", "spawn r=2");
}
END_TEST

/* Only a file the probe created is removed: a FIFO named by CGPROBE_OUTPUT stays. */
START_TEST(test_fork_exec_without_allocation_keeps_fifo)
{
	struct fifo f;
	struct run *r = run_new_fifo(&f);
	char *hello = strf("%s/hello", bin_dir);
	const char *env[] = {f.env, NULL};
	const char *args[] = {"fork-exec-empty", hello, NULL};
	run_start(r, env, "forks", args);
	run_wait(r);
	assert_quiet_exit(r, 0, -1);
	char data[65536];
	size_t len = fifo_drain(&f, data, sizeof(data));
	/* Three heads went in: the parent, the child before exec and hello. */
	size_t heads = 0;
	static const char head[] = "{\"kind\":\"meta\"";
	for (const char *p = data; (p = memmem(p, (size_t)(data + len - p), head, sizeof(head) - 1));
	     p++)
		heads++;
	ck_assert_uint_eq(heads, 3);
	free(hello);
	fifo_free(&f);
	run_free(r);
}
END_TEST

/* forks.c's busy thread allocates 5000 to 5099 bytes, and nothing else does. */
static bool busy_block(struct trace *t, const struct cgtrace_memory *m)
{
	return m->bytes >= 5000 && m->bytes < 5100 && !libc_thread_block(t, m);
}

static bool busy_or_libc_block(struct trace *t, const struct cgtrace_memory *m)
{
	return busy_block(t, m) || libc_thread_block(t, m);
}

/* Forks while another thread is inside malloc: no deadlock, no stray records. */
START_TEST(test_fork_while_other_thread_allocates)
{
	struct run *r;
	long pids[32];
	assert_forks_matches_reference("busy", 0, &r);
	ck_assert_uint_eq(count_results(r, "forks", "busy-child exited 0"), 20);
	ck_assert_uint_eq(pids_of(r, "forks", pids, 32), 21);
	ck_assert_uint_eq(r->n_traces, 21);

	struct trace *parent = trace_for(r, "forks", r->pid);
	struct model m;
	model_build(&m, r, r->pid, "forks", 0);
	assert_records(parent, &m, IN_ORDER, busy_or_libc_block);
	model_free(&m);
	uint64_t busy = stat_sum(r, r->pid, "busy_allocs", NULL);
	ck_assert_uint_ge(busy, 1000);
	size_t busy_allocs = 0, busy_frees = 0;
	for (size_t i = 0; i < trace_n_memory(parent->doc); i++) {
		struct cgtrace_memory rec = trace_memory(parent->doc, i);
		if (busy_block(parent, &rec)) {
			busy_allocs += rec.action == CGTRACE_ALLOC;
			busy_frees += rec.action == CGTRACE_FREE;
		}
	}
	ck_assert_uint_eq(busy_allocs, busy);
	ck_assert_uint_eq(busy_frees, busy);

	for (size_t i = 1; i < 21; i++) {
		struct trace *child = trace_for(r, "forks", pids[i]);
		assert_program_records_except(r, child, "forks", IN_ORDER, preexisting);
		assert_root_last(child);
		size_t n_pre;
		preexisting_bytes(child, &n_pre);
		ck_assert_uint_eq(trace_n_memory(child->doc), 2 + n_pre);
		ck_assert_int_eq(strtol(tag(child, "forked_from"), NULL, 10), r->pid);
	}
	run_free(r);
}
END_TEST

/* ------------------------------------------------------------------ */
/* dlopen                                                              */
/* ------------------------------------------------------------------ */

static void dlopen_case(const char *mode, struct run **ref_out, struct run **out)
{
	const char *args[] = {mode, module_path, NULL};
	struct run *ref, *r = run_alike(&ref, NULL, NULL, "dlopen", args);
	assert_quiet_exit(ref, 0, 0);
	assert_result(r, "dlopen", "dup library");
	ck_assert_uint_eq(r->n_traces, 1);
	struct trace *t = trace_for(r, "dlopen", r->pid);
	assert_root_last(t);
	/* The loader allocates too; the library's own blocks must all be there. */
	struct model m;
	model_build(&m, r, r->pid, "dlopen", 0);
	ck_assert_uint_eq(m.n, 6);
	assert_records(t, &m, SUBSET, NULL);
	model_free(&m);
	*ref_out = ref;
	*out = r;
}

START_TEST(test_dlopen_library_allocations_recorded)
{
	struct run *ref, *r;
	dlopen_case("plain", &ref, &r);
	ck_assert_str_eq(r->err_text, "");
	run_free_both(ref, r);
}
END_TEST

START_TEST(test_dlopen_deepbind_flag_removed)
{
	struct run *ref, *r;
	dlopen_case("deepbind", &ref, &r);
	assert_result(r, "dlopen", "loaded-again same=1");
	assert_one_warning(r, "RTLD_DEEPBIND");
	run_free_both(ref, r);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Faults: one warning, the program unchanged                          */
/* ------------------------------------------------------------------ */

static void assert_unharmed(const char *const *env, const char *about, bool traced)
{
	const char *args[] = {"5", NULL};
	struct run *ref, *r = run_alike(&ref, NULL, env, "hello", args);
	assert_exited(ref, 5);
	if (about)
		assert_one_warning(r, about);
	else
		ck_assert_str_eq(r->err_text, "");
	ck_assert_uint_eq(r->n_traces, traced ? 1 : 0);
	if (traced) {
		struct trace *t = trace_for(r, "hello", r->pid);
		assert_program_records(r, t, "hello", IN_ORDER);
		ck_assert_int_eq(t->meta.phase, CGTRACE_PHASE_TRAIN);
		ck_assert_uint_eq(t->meta.capture_step, 1);
	}
	run_free_both(ref, r);
}

START_TEST(test_fault_dev_full)
{
	const char *env[] = {"CGPROBE_OUTPUT=/dev/full", NULL};
	assert_unharmed(env, "/dev/full", false);
}
END_TEST

START_TEST(test_fault_quiet_silences_warning)
{
	const char *env[] = {"CGPROBE_OUTPUT=/dev/full", "CGPROBE_QUIET=1", NULL};
	assert_unharmed(env, NULL, false);
}
END_TEST

/* The directory cannot be made: a path through a regular file. */
START_TEST(test_fault_output_under_file)
{
	struct run *scratch = run_new(false);
	char *file = path_in(scratch->dir, "file");
	write_file(file, "x");
	char *env0 = strf("CGPROBE_OUTPUT=%s/sub/t.jsonl", file);
	const char *env[] = {env0, NULL};
	assert_unharmed(env, file, false);
	free(env0);
	free(file);
	run_free(scratch);
}
END_TEST

START_TEST(test_fault_unwritable_directory)
{
	if (geteuid() == 0)
		return; /* root writes anywhere; test_fault_output_under_file covers it */
	struct run *scratch = run_new(false);
	char *dir = path_in(scratch->dir, "ro");
	ck_assert_int_eq(mkdir(dir, 0555), 0);
	char *env0 = strf("CGPROBE_OUTPUT=%s/t.jsonl", dir);
	const char *env[] = {env0, NULL};
	assert_unharmed(env, dir, false);
	free(env0);
	free(dir);
	run_free(scratch);
}
END_TEST

static const char *const bad_values[] = {
	"CGPROBE_FLUSH_MS=abc",  "CGPROBE_FLUSH_MS=0",    "CGPROBE_MIN_BYTES=-1",
	"CGPROBE_MIN_BYTES=0x10", "CGPROBE_PHASE=eval",   "CGPROBE_CAPTURE_STEP=0",
	"CGPROBE_FOLLOW=maybe",  "CGPROBE_QUIET=perhaps",  "CGPROBE_CLOCK=tsc",
	"CGPROBE_UNWIND=fast",
};

/* A bad value: one warning naming it, its default, the program and its trace unharmed. */
START_TEST(test_fault_bad_value)
{
	const char *env[] = {bad_values[_i], NULL};
	assert_unharmed(env, bad_values[_i], true);
}
END_TEST

/* The pipe's reader goes away: recording stops with one warning, the program goes on. */
START_TEST(test_fault_pipe_reader_gone)
{
	struct fifo f;
	struct run *r = run_new_fifo(&f);
	const char *env[] = {f.env, NULL};
	const char *args[] = {"wait", NULL};
	run_start(r, env, "exits", args);
	run_wait_for_output(r, "R ready\n");
	close(f.fd);
	ck_assert_int_eq(kill(r->pid, SIGTERM), 0);
	run_wait(r);
	assert_killed(r, SIGTERM);
	assert_one_warning(r, f.path);
	fifo_free(&f);
	run_free(r);
}
END_TEST

/* ------------------------------------------------------------------ */

/*
 * One test case a behaviour, named `area:behaviour`: `test-preload
 * fork:child-trace` runs that one.
 */
TEST_SUITE(preload_suite, "preload")
{
	TCase *tc;

	test_case(s, "alloc:api", 120, test_alloc_api_records_every_call);
	test_case(s, "alloc:failures", 120, test_alloc_api_failures_record_nothing);
	test_case(s, "alloc:min-bytes", 120, test_min_bytes_filters_allocations_and_their_frees);

	test_loop(s, "threads:records-matched", 120, test_threads_all_records_matched, 2);
	test_case(s, "clock:source", 120, test_clock_source_default, test_clock_source_monotonic);

	test_case(s, "spans:categories", 120, test_spans_give_categories);
	test_case(s, "spans:without-probe", 120, test_spans_program_runs_without_probe);

	test_case(s, "meta:fields", 120, test_meta_defaults, test_meta_from_environment,
	          test_meta_correlation_id);
	test_case(s, "meta:end-figures", 120, test_meta_end_figures);
	test_loop(s, "meta:settings", 120, test_meta_records_settings,
	          sizeof(setting_cases) / sizeof(setting_cases[0]));
	test_case(s, "meta:cmdline", 120, test_meta_cmdline_quoted_for_sh,
	          test_meta_cmdline_cut_at_argument);

	test_case(s, "output:names", 120, test_default_output_name, test_output_template,
	          test_output_relative_with_new_directories);
	test_loop(s, "output:no-overwrite", 120, test_output_never_overwrites, 2);
	test_case(s, "output:zstd", 120, test_output_zstd);
	test_case(s, "output:special-files", 120, test_output_fifo, test_output_dev_null);
	test_case(s, "output:manifest", 120, test_manifest_lists_every_trace);

	test_case(s, "select:only", 120, test_only_selects_programs);
	test_loop(s, "select:follow-off", 120, test_follow_off_traces_first_process_only, 5);

	test_loop(s, "exit:paths", 120, test_exit_paths_leave_complete_trace, 2 * N_EXIT_CASES);
	test_loop(s, "exit:reserved-space", 120, test_large_trace_gives_back_reserved_space, 2);

	test_loop(s, "program:state-unchanged", 120, test_program_state_unchanged,
	          (int)(sizeof(state_cases) / sizeof(state_cases[0])));

	tc = test_tcase(s, "death:signal", 120);
	tcase_add_loop_test_raise_signal(tc, test_death_segv, SIGSEGV, 0, 2);
	tcase_add_loop_test_raise_signal(tc, test_death_abort, SIGABRT, 0, 2);
	tcase_add_loop_test_raise_signal(tc, test_death_term, SIGTERM, 0, 2);
	tcase_add_loop_test_raise_signal(tc, test_death_usr1, SIGUSR1, 0, 2);
	tc = test_tcase(s, "death:handler-restored", 120);
	tcase_add_loop_test_raise_signal(tc, test_death_term_after_sig_dfl, SIGTERM, 0, 2);
	tcase_add_loop_test_raise_signal(tc, test_death_term_after_ignore_and_restore, SIGTERM,
					 0, 2);
	tc = test_tcase(s, "death:killed", 120);
	tcase_add_loop_test_raise_signal(tc, test_death_killed_term, SIGTERM, 0, 2);
	tcase_add_loop_test_raise_signal(tc, test_death_killed_int, SIGINT, 0, 2);
	tcase_add_loop_test_raise_signal(tc, test_death_killed_hup, SIGHUP, 0, 2);

	test_loop(s, "exec:new-trace", 120, test_exec_starts_new_trace, 2 * N_EXEC_VARIANTS);
	test_loop(s, "exec:no-own-records", 120, test_exec_adds_no_records_of_its_own,
	          N_EXEC_VARIANTS);
	test_case(s, "exec:failure", 120, test_exec_failure_continues_trace);

	test_case(s, "fork:child-trace", 120, test_fork_child_writes_own_trace,
	          test_fork_then_exec, test_fork_closing_descriptors_then_exec);
	test_case(s, "fork:exec-without-allocation", 120,
	          test_fork_exec_without_allocation_leaves_no_trace,
	          test_fork_exec_failure_without_allocation_starts_new_trace,
	          test_fork_exec_without_allocation_keeps_fifo);
	test_case(s, "fork:other-thread-allocates", 120, test_fork_while_other_thread_allocates);
	test_case(s, "spawn:child-trace", 120, test_posix_spawn_child_traced,
	          test_vfork_exec_child_traced, test_vfork_execve_child_traced);
	test_case(s, "spawn:failure", 120, test_vfork_exec_failure_leaves_parent_whole,
	          test_posix_spawn_failure_leaves_parent_whole);

	test_case(s, "dlopen:allocations", 120, test_dlopen_library_allocations_recorded);
	test_case(s, "dlopen:deepbind", 120, test_dlopen_deepbind_flag_removed);

	test_case(s, "fault:write-error", 120, test_fault_dev_full,
	          test_fault_quiet_silences_warning);
	test_case(s, "fault:unwritable-output", 120, test_fault_output_under_file,
	          test_fault_unwritable_directory);
	test_loop(s, "fault:bad-value", 120, test_fault_bad_value,
	          (int)(sizeof(bad_values) / sizeof(bad_values[0])));
	test_case(s, "fault:pipe-reader-gone", 120, test_fault_pipe_reader_gone);
}

/*
 * A compact trace of hello, read back: false when the reader takes it for
 * bad JSONL. Before any suite runs, so without Check's helpers.
 */
static bool reader_reads_compact(void)
{
	const char *tmp = getenv("TMPDIR");
	char dir[PATH_MAX], trace[PATH_MAX + 16], prog[PATH_MAX + 16], pre[PATH_MAX + 16],
		out[PATH_MAX + 32];
	snprintf(dir, sizeof(dir), "%s/cgprobe-compact-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		return false;
	snprintf(trace, sizeof(trace), "%s/t.cgt", dir);
	snprintf(prog, sizeof(prog), "%s/hello", bin_dir);
	snprintf(pre, sizeof(pre), "LD_PRELOAD=%s", probe_path);
	snprintf(out, sizeof(out), "CGPROBE_OUTPUT=%s", trace);
	pid_t pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		dup2(null, 1);
		dup2(null, 2);
		char *argv[] = {prog, NULL}, *envp[] = {pre, out, NULL};
		execve(prog, argv, envp);
		_exit(127);
	}
	int status = 0;
	bool ok = pid > 0 && waitpid(pid, &status, 0) == pid;
	struct cgtrace_doc *doc = NULL;
	char err[512];
	ok = ok && cgtrace_doc_read(trace, NULL, &doc, err, sizeof(err)) == 0;
	cgtrace_doc_free(doc);
	unlink(trace);
	rmdir(dir);
	return ok;
}

/* The paths meson passes: without them there is nothing to run (77, skipped). */
static int preload_setup(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	probe_path = getenv("PRELOAD_TEST_PROBE");
	bin_dir = getenv("PRELOAD_TEST_BIN");
	module_path = getenv("PRELOAD_TEST_MODULE");
	if (!probe_path || !bin_dir || !module_path) {
		fprintf(stderr, "set PRELOAD_TEST_PROBE, PRELOAD_TEST_BIN and PRELOAD_TEST_MODULE "
				"(meson test does)\n");
		return 77;
	}
	const char *format = getenv("PRELOAD_TEST_FORMAT");
	compact_mode = format && !strcmp(format, "compact");
	if (compact_mode && !reader_reads_compact()) {
		fprintf(stderr, "the core reader does not read compact traces yet\n");
		return 77;
	}
	return TEST_GO_ON;
}

TEST_MAIN_SETUP(preload_setup, preload_suite);
