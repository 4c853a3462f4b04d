/* SPDX-License-Identifier: MIT */
/*
 * libcgprobe.so on CUDA programs, run on the fake runtime and driver of
 * tests/cuda/ (see its README.md). Each test runs a program twice, without
 * and with the probe, each time in a fresh directory with
 * LD_LIBRARY_PATH=FIXTURES/lib; holds the two runs' output and exit status
 * against each other; reads the probe's trace with the core reader and
 * holds its device records, in order, against the lines the program printed
 * (tests/cuda/cuda-prog.h): A/F for the blocks it got and ended, E for
 * allocations that ran out of memory, V for virtual memory steps.
 *
 * tests/cuda/meson.build passes CUDA_TEST_FIXTURES (what tests/cuda/build.sh
 * built) and CUDA_TEST_PROBE (the probe). The programs built by the C
 * compiler are always tested; those built by nvcc when they are there. The
 * test exits 77 (skipped) when there is nothing it can run.
 *
 * `test-cuda entry-point` is itself one of the programs: no fixture asks the
 * runtime for driver entry points (cudaGetDriverEntryPoint[ByVersion]), so
 * this one does, printing the same line protocol (see entry_point_prog).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <check.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
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
#include "test-gen.h"
#include "test-main.h"
#include "trace-doc.h"

extern char **environ;

#define MAX_TRACES 8
#define RUN_TIMEOUT_MS 60000
#define MAX_DEVICES 8

/* What the fakes are: two devices of 16 GiB, blocks counted rounded up to 256 bytes. */
#define FAKE_TOTAL 17179869184ull
#define FAKE_ROUND 256ull
/* Where the fake allocations that ran out of memory happen: every program's first device. */
#define OOM_DEVICE 0

static const char *fixtures, *probe_path;
static char self_exe[PATH_MAX];
/* The name test-cuda's own program prints (`test-cuda entry-point`). */
static const char *const helper_prog = "entry-point";

/* ------------------------------------------------------------------ */
/* Small helpers                                                       */
/* ------------------------------------------------------------------ */

/* At most the last `max` bytes of text, for messages (a program's whole output can be long). */
static const char *clip(const char *text, size_t max)
{
	size_t n = strlen(text);
	return n > max ? text + n - max : text;
}

/* Where two texts' lines first differ, with a few lines of context of each. */
static char *first_difference(const char *a, const char *b)
{
	size_t line = 0, at = 0;
	for (size_t i = 0; a[i] && a[i] == b[i]; i++)
		if (a[i] == '\n') {
			line++;
			at = i + 1;
		}
	/* Back up three lines for context. */
	size_t from = at;
	for (int k = 0; k < 3 && from > 0; k++) {
		from--;
		while (from > 0 && a[from - 1] != '\n')
			from--;
	}
	return strf("line %zu:\n--- without the probe:\n%.900s\n--- with it:\n%.900s", line + 1,
	            a + from, b + from);
}

static bool fixture_present(const char *name)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", fixtures, name);
	return access(path, R_OK | X_OK) == 0;
}

static uint64_t round_up(uint64_t v)
{
	return (v + FAKE_ROUND - 1) / FAKE_ROUND * FAKE_ROUND;
}

/* "cuda:N" -> N; -1 for anything else ("cpu"). */
static int cuda_ordinal(const char *device)
{
	if (strncmp(device, "cuda:", 5) || device[5] < '0' || device[5] > '9')
		return -1;
	char *end;
	long n = strtol(device + 5, &end, 10);
	return *end || n < 0 || n >= MAX_DEVICES ? -1 : (int)n;
}

/* ------------------------------------------------------------------ */
/* Running a program                                                   */
/* ------------------------------------------------------------------ */

struct trace {
	char path[PATH_MAX];
	struct cgtrace_doc *doc;
	struct cgtrace_meta meta;
	char warnings[2048];
	int n_warnings;
};

struct run {
	char dir[RUNDIR_MAX];
	char cwd[RUNDIR_MAX + 16];
	char out[RUNDIR_MAX + 16];
	bool probe;
	pid_t pid;
	int status;
	char *out_text;
	char *err_text;
	struct trace traces[MAX_TRACES];
	size_t n_traces;
};

static void run_free(struct run *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n_traces; i++)
		cgtrace_doc_free(r->traces[i].doc);
	free(r->out_text);
	free(r->err_text);
	remove_tree(r->dir);
	free(r);
}

/*
 * The child's environment: the test's own without probe and fake settings,
 * the fakes first in the library path, the probe preloaded when asked,
 * traces into r->out, then the test's extra entries (which may replace
 * LD_PRELOAD).
 */
static char **make_env(const struct run *r, const char *const *extra, char **owned, size_t *n_owned)
{
	static const char *const drop[] = {CHILD_ENV_DROP_PROBE, "CUDA_TEST_", "FAKE_CUDA_", "FAKE_CUDART_", NULL};
	size_t first = *n_owned;
	const char *ld = getenv("LD_LIBRARY_PATH");
	*n_owned += rundir_probe_env(owned + first, r->probe ? probe_path : NULL, r->out);
	owned[(*n_owned)++] =
	    strf("LD_LIBRARY_PATH=%s/lib%s%s", fixtures, ld && *ld ? ":" : "", ld && *ld ? ld : "");
	owned[*n_owned] = NULL;
	return child_env(drop, owned + first, extra);
}

static void collect_warning(void *user, const char *line)
{
	struct trace *t = user;
	size_t at = strlen(t->warnings);
	snprintf(t->warnings + at, sizeof(t->warnings) - at, "%s\n", line);
	t->n_warnings++;
}

static void load_trace(struct run *r, const char *path)
{
	ck_assert_uint_lt(r->n_traces, MAX_TRACES);
	struct trace *t = &r->traces[r->n_traces++];
	struct cgtrace_read_options opts = {.warn = collect_warning, .user = t};
	char err[1024] = "";
	snprintf(t->path, sizeof(t->path), "%s", path);
	int rc = cgtrace_doc_read(path, &opts, &t->doc, err, sizeof(err));
	ck_assert_msg(rc == 0, "%s: cannot read the trace: %s", path, err);
	cgtrace_doc_meta(t->doc, &t->meta);
}

static void load_traces(struct run *r, const char *dir)
{
	char *paths[MAX_TRACES + 1];
	size_t n = rundir_files(dir, paths, MAX_TRACES + 1);
	for (size_t i = 0; i < n; i++) {
		load_trace(r, paths[i]);
		free(paths[i]);
	}
}

/*
 * Runs PROG (a fixture's name, or an absolute path) with args (NULL-ended)
 * and extra environment entries; waits for it and reads its output and traces.
 */
static struct run *run_prog(bool probe, const char *const *extra_env, const char *prog,
                            const char *const *args)
{
	struct run *r = calloc(1, sizeof(*r));
	ck_assert_ptr_nonnull(r);
	rundir_make(r->dir, r->cwd, r->out, "cgprobe-cuda");
	r->probe = probe;

	char path[PATH_MAX];
	char *owned[8];
	size_t n_owned = 0;
	if (prog[0] == '/')
		snprintf(path, sizeof(path), "%s", prog);
	else
		snprintf(path, sizeof(path), "%s/%s", fixtures, prog);
	char **env = make_env(r, extra_env, owned, &n_owned);
	r->pid = rundir_spawn(r->dir, r->cwd, path, args, env);
	child_env_free(env, owned, n_owned);

	r->status = child_wait(r->pid, RUN_TIMEOUT_MS, path);
	rundir_read_output(r->dir, &r->out_text, &r->err_text);
	load_traces(r, r->out);
	load_traces(r, r->cwd);
	return r;
}

/* ------------------------------------------------------------------ */
/* The programs' lines (tests/cuda/cuda-prog.h)                        */
/* ------------------------------------------------------------------ */

static bool has_line(const struct run *r, char kind, const char *text)
{
	struct pline l;
	for (const char *c = r->out_text; next_pline(&c, &l);)
		if (l.kind == kind && !strcmp(l.rest, text))
			return true;
	return false;
}

/* The word after "WORD " on the program's first KIND line that starts so. */
static void first_word(const struct run *r, char kind, const char *first, char word[64])
{
	struct pline l;
	size_t n = strlen(first);
	for (const char *c = r->out_text; next_pline(&c, &l);)
		if (l.kind == kind && !strncmp(l.rest, first, n) && l.rest[n] == ' ' &&
		    sscanf(l.rest + n, "%63s", word) == 1)
			return;
	ck_abort_msg("no '%c %s ...' line in:\n%s", kind, first, clip(r->out_text, 3000));
}

/* The value of the program's first "S KEY VALUE" line; false when there is none. */
static bool stat_value(const struct run *r, const char *key, uint64_t *v)
{
	struct pline l;
	size_t klen = strlen(key);
	for (const char *c = r->out_text; next_pline(&c, &l);) {
		if (l.kind == 'S' && !strncmp(l.rest, key, klen) && l.rest[klen] == ' ') {
			*v = strtoull(l.rest + klen + 1, NULL, 10);
			return true;
		}
	}
	return false;
}

/*
 * The output with what may differ between runs taken out: S lines, and the
 * addresses of A and F lines (heap blocks, the fake's v1 memory); R, E and
 * V lines stay whole.
 */
static char *normalized_output(const struct run *r)
{
	size_t cap = strlen(r->out_text) + 64, at = 0;
	char *out = calloc(1, cap);
	ck_assert_ptr_nonnull(out);
	struct pline l;
	for (const char *c = r->out_text; next_pline(&c, &l);) {
		char op[64], addr[64];
		int n = 0;
		if (l.kind == 'S')
			continue;
		if ((l.kind == 'A' || l.kind == 'F') &&
		    sscanf(l.rest, "%63s %63s %n", op, addr, &n) >= 2 && n > 0)
			at += (size_t)snprintf(out + at, cap - at, "%s %c %s * %s\n", l.prog,
			                       l.kind, op, l.rest + n);
		else
			at += (size_t)snprintf(out + at, cap - at, "%s %c %s\n", l.prog, l.kind,
			                       l.rest);
		ck_assert_uint_lt(at, cap);
	}
	return out;
}

/*
 * With and without the probe: same exit status, same lines (but S lines and
 * addresses), and the same stderr when asked.
 */
static void assert_same_behaviour(const struct run *ref, const struct run *r, bool same_stderr)
{
	char *a = status_text(ref->status), *b = status_text(r->status);
	ck_assert_msg(ref->status == r->status,
	              "without the probe: %s, with it: %s; stderr with it:\n%s", a, b,
	              clip(r->err_text, 2000));
	free(a);
	free(b);
	char *oa = normalized_output(ref), *ob = normalized_output(r);
	ck_assert_msg(oa[0], "the program printed nothing: %s", clip(ref->err_text, 2000));
	ck_assert_msg(!strcmp(oa, ob), "output differs at %s", first_difference(oa, ob));
	free(oa);
	free(ob);
	if (same_stderr)
		ck_assert_msg(!strcmp(ref->err_text, r->err_text), "stderr differs at %s",
		              first_difference(ref->err_text, r->err_text));
}

/* The program says it ran as documented: exit 0, "R done ok", nothing clobbered. */
static void assert_program_ok(const struct run *r)
{
	char *s = status_text(r->status);
	ck_assert_msg(WIFEXITED(r->status) && WEXITSTATUS(r->status) == 0,
	              "probe=%d: %s; stdout:\n%s\nstderr:\n%s", r->probe, s,
	              clip(r->out_text, 3000), clip(r->err_text, 2000));
	free(s);
	ck_assert_msg(has_line(r, 'R', "done ok"), "probe=%d: no 'R done ok' in:\n%s", r->probe,
	              clip(r->out_text, 3000));
	const char *failed = strstr(r->out_text, " R FAILED");
	ck_assert_msg(!failed, "probe=%d: a check failed: %.300s", r->probe, failed);
	const char *clobbered = strstr(r->out_text, "clobbered");
	ck_assert_msg(!clobbered, "probe=%d: an output was clobbered: ...%.200s", r->probe,
	              clobbered);
}

/* ------------------------------------------------------------------ */
/* Traces                                                              */
/* ------------------------------------------------------------------ */

static bool heap_op(const char *op)
{
	static const char *const names[] = {
	    "malloc",        "calloc",   "realloc", "reallocarray", "posix_memalign",
	    "aligned_alloc", "memalign", "valloc",  "pvalloc",      "free"};
	for (size_t i = 0; op && i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(op, names[i]))
			return true;
	return false;
}

/* A host heap record: device cpu, a malloc-family name. Pinned memory is not one. */
static bool heap_record(const struct cgtrace_memory *m)
{
	return !strcmp(m->device, "cpu") && heap_op(m->op_name);
}

/* What every trace must hold, and the probe's form of each CUDA record. */
static void check_trace(const struct trace *t)
{
	struct cgtrace_span root, span;
	ck_assert_msg(t->n_warnings == 0, "%s: reader warnings:\n%s", t->path, t->warnings);
	ck_assert_msg(!cgtrace_doc_truncated(t->doc), "%s: truncated", t->path);
	ck_assert_uint_eq(cgtrace_doc_count(t->doc, CGTRACE_KIND_META), 1);
	ck_assert_str_eq(t->meta.schema, CGTRACE_SCHEMA);
	ck_assert_msg(trace_find_span(t->doc, "s1", &root), "%s: no root span s1", t->path);
	ck_assert_msg(root.closed, "%s: root span s1 not closed", t->path);
	for (size_t i = 0; i < trace_n_memory(t->doc); i++) {
		struct cgtrace_memory m = trace_memory(t->doc, i);
		ck_assert_msg(m.op_name, "%s: record %zu has no op_name", t->path, i);
		ck_assert_msg(!strcmp(m.device, "cpu") || cuda_ordinal(m.device) >= 0,
		              "%s: record %zu on device '%s'", t->path, i, m.device);
		const char *id = strncmp(m.tensor_id, "vmm:", 4) ? m.tensor_id : m.tensor_id + 4;
		ck_assert_msg(trace_is_address(id), "%s: record %zu: tensor_id '%s'", t->path, i,
		              m.tensor_id);
		/* vmm:HANDLE ids belong to cuMemCreate memory and its end only. */
		if (id != m.tensor_id)
			ck_assert_msg(!strcmp(m.op_name, "cuMemCreate") ||
			                  !strcmp(m.op_name, "cuMemRelease") ||
			                  !strcmp(m.op_name, "cuMemUnmap"),
			              "%s: record %zu: %s by %s", t->path, i, m.tensor_id,
			              m.op_name);
		ck_assert_str_eq(m.dtype, "u8");
		ck_assert_uint_eq(m.ndim, 1);
		ck_assert_uint_eq(m.shape[0], m.bytes);
		ck_assert_str_eq(cgtrace_category_name(m.category), "other");
		ck_assert_msg(trace_find_span(t->doc, m.span_id, &span),
		              "%s: record %zu in unknown span %s", t->path, i, m.span_id);
		ck_assert_str_eq(m.span_id, "s1");
	}
	size_t n = cgtrace_doc_count(t->doc, CGTRACE_KIND_DEVICE_MEMORY);
	for (size_t i = 0; i < n; i++) {
		struct cgtrace_device_memory d;
		cgtrace_doc_device_memory(t->doc, i, &d);
		ck_assert_msg(cuda_ordinal(d.device) >= 0, "%s: device_memory on '%s'", t->path,
		              d.device);
		ck_assert_msg(!d.has_reserved, "%s: device_memory %zu with reserved_bytes", t->path,
		              i);
	}
}

/* The run's single trace, checked. */
static struct trace *the_trace(struct run *r)
{
	ck_assert_msg(r->n_traces == 1, "%zu traces, expected 1 (in %s)", r->n_traces, r->dir);
	check_trace(&r->traces[0]);
	return &r->traces[0];
}

/* ------------------------------------------------------------------ */
/* Device records: what the trace holds and what the program owes       */
/* ------------------------------------------------------------------ */

struct drec {
	char kind; /* 'A' alloc, 'F' free, 'M' device_memory */
	char op[64];
	char id[80];
	char device[16];
	uint64_t bytes;
	bool managed;
	uint64_t used, free_bytes;
	bool has_oom;
	uint64_t oom;
	uint64_t ts;
	size_t index; /* in its kind's table (trace side) */
};

struct seq {
	struct drec *v;
	size_t n, cap;
};

static struct drec *seq_push(struct seq *s, char kind)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 64;
		s->v = realloc(s->v, s->cap * sizeof(*s->v));
		ck_assert_ptr_nonnull(s->v);
	}
	struct drec *d = &s->v[s->n++];
	memset(d, 0, sizeof(*d));
	d->kind = kind;
	return d;
}

static void seq_free(struct seq *s)
{
	free(s->v);
	*s = (struct seq){0};
}

static char *drec_key(const struct drec *d)
{
	if (d->kind == 'M') {
		if (d->has_oom)
			return strf("device_memory %s used=%" PRIu64 " free=%" PRIu64
			            " oom_request=%" PRIu64,
			            d->device, d->used, d->free_bytes, d->oom);
		return strf("device_memory %s used=%" PRIu64 " free=%" PRIu64, d->device, d->used,
		            d->free_bytes);
	}
	return strf("%s %s %s %s %" PRIu64 "%s", d->kind == 'A' ? "alloc" : "free", d->op, d->id,
	            d->device, d->bytes, d->kind == 'A' && d->managed ? " managed" : "");
}

static int compare_ts(const void *a, const void *b)
{
	const struct drec *x = a, *y = b;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->kind != y->kind)
		return (x->kind == 'M') - (y->kind == 'M');
	return x->index < y->index ? -1 : x->index > y->index;
}

/*
 * The trace's CUDA records in time order: memory records but the host
 * heap's, and device_memory records. The probe's device events come from
 * the program's main thread here, whose timestamps strictly increase.
 */
static void trace_seq(struct seq *out, const struct trace *t)
{
	*out = (struct seq){0};
	for (size_t i = 0; i < trace_n_memory(t->doc); i++) {
		struct cgtrace_memory m = trace_memory(t->doc, i);
		if (heap_record(&m))
			continue;
		struct drec *d = seq_push(out, m.action == CGTRACE_ALLOC ? 'A' : 'F');
		snprintf(d->op, sizeof(d->op), "%s", m.op_name);
		snprintf(d->id, sizeof(d->id), "%s", m.tensor_id);
		snprintf(d->device, sizeof(d->device), "%s", m.device);
		d->bytes = m.bytes;
		d->managed = m.managed;
		d->ts = m.timestamp_ns;
		d->index = i;
	}
	size_t n = cgtrace_doc_count(t->doc, CGTRACE_KIND_DEVICE_MEMORY);
	for (size_t i = 0; i < n; i++) {
		struct cgtrace_device_memory m;
		cgtrace_doc_device_memory(t->doc, i, &m);
		struct drec *d = seq_push(out, 'M');
		snprintf(d->device, sizeof(d->device), "%s", m.device);
		d->used = m.used_bytes;
		d->free_bytes = m.free_bytes;
		d->has_oom = m.has_oom_request;
		d->oom = m.oom_request_bytes;
		d->ts = m.timestamp_ns;
		d->index = i;
	}
	if (out->n)
		qsort(out->v, out->n, sizeof(*out->v), compare_ts);
	for (size_t i = 1; i < out->n; i++)
		ck_assert_msg(out->v[i - 1].ts < out->v[i].ts,
		              "%s: two CUDA records at %" PRIu64 " ns: order unknown", t->path,
		              out->v[i].ts);
}

static char *seq_text(const struct seq *s, size_t from, size_t to)
{
	struct text t = {0};
	put(&t, "%s", "");
	for (size_t i = from; i < to && i < s->n; i++) {
		char *k = drec_key(&s->v[i]);
		put(&t, "  %3zu %s\n", i, k);
		free(k);
	}
	return t.p;
}

/* The trace's CUDA records are exactly the expected ones, in order. */
static void assert_seq_equal(const struct seq *want, const struct seq *have, const char *what)
{
	size_t n = want->n < have->n ? want->n : have->n;
	for (size_t i = 0; i <= n; i++) {
		bool differ;
		if (i == n) {
			differ = want->n != have->n;
		} else {
			char *a = drec_key(&want->v[i]), *b = drec_key(&have->v[i]);
			differ = strcmp(a, b) != 0;
			free(a);
			free(b);
		}
		if (!differ)
			continue;
		size_t from = i > 4 ? i - 4 : 0;
		char *a = seq_text(want, from, i + 5), *b = seq_text(have, from, i + 5);
		ck_abort_msg("%s: CUDA record %zu differs (%zu expected, %zu in the trace).\n"
		             "expected:\n%s\nin the trace:\n%s",
		             what, i, want->n, have->n, a, b);
	}
}

/* ------------------------------------------------------------------ */
/* The model: the records the probe owes for the program's lines        */
/* ------------------------------------------------------------------ */

/* Entry points the probe does not wrap: the v1 (32-bit) allocator, returned untouched. */
static bool unrecorded_op(const char *op)
{
	return !strcmp(op, "cuMemAlloc") || !strcmp(op, "cuMemFree");
}

/* The fakes count separately: the runtime's (cuda*) and the driver's (cu*) memory. */
enum lib { LIB_RT, LIB_DRV };

static enum lib lib_of(const char *op)
{
	return !strncmp(op, "cuda", 4) ? LIB_RT : LIB_DRV;
}

struct block {
	char id[64];
	char device[16];
	uint64_t bytes;
	bool recorded;
	enum lib lib;
};

struct handle {
	uint64_t handle, bytes;
	int device;
	int maps;
	bool released, live;
};

struct mapping {
	uint64_t va, handle;
};

struct model_opts {
	/*
	 * Programs that print S free_before/free_after asked cudaMemGetInfo or
	 * cuMemGetInfo_v2 just before the A/E line of (info_op, info_first) and
	 * just after that of (info_op, info_last).
	 */
	const char *info_op;
	uint64_t info_first, info_last;
	bool snapshots; /* CGPROBE_DEVICE_SNAPSHOTS=alloc: a checkpoint after each device change */
};

struct model_state {
	struct block blocks[256];
	size_t n_blocks;
	struct handle handles[16];
	size_t n_handles;
	struct mapping maps[32];
	size_t n_maps;
	uint64_t used[2][MAX_DEVICES]; /* per library, what the fake counts */
	uint64_t total;
};

static void push_meminfo(struct seq *s, int device, uint64_t used, uint64_t total,
                         const uint64_t *oom)
{
	struct drec *d = seq_push(s, 'M');
	snprintf(d->device, sizeof(d->device), "cuda:%d", device);
	d->used = used;
	d->free_bytes = total - used;
	if (oom) {
		d->has_oom = true;
		d->oom = *oom;
	}
}

static void push_snapshot(struct seq *s, const struct model_state *st, const struct model_opts *o,
                          enum lib lib, int device)
{
	if (o->snapshots && device >= 0)
		push_meminfo(s, device, st->used[lib][device], st->total, NULL);
}

static void vmm_free_if_gone(struct seq *s, struct model_state *st, const struct model_opts *o,
                             struct handle *h, const char *op)
{
	if (!h->live || !h->released || h->maps > 0)
		return;
	h->live = false;
	st->used[LIB_DRV][h->device] -= h->bytes;
	struct drec *d = seq_push(s, 'F');
	snprintf(d->op, sizeof(d->op), "%s", op);
	snprintf(d->id, sizeof(d->id), "vmm:0x%" PRIx64, h->handle);
	snprintf(d->device, sizeof(d->device), "cuda:%d", h->device);
	d->bytes = h->bytes;
	push_snapshot(s, st, o, LIB_DRV, h->device);
}

static struct handle *find_handle(struct model_state *st, uint64_t h)
{
	for (size_t i = 0; i < st->n_handles; i++)
		if (st->handles[i].handle == h)
			return &st->handles[i];
	return NULL;
}

static void model_vmm(struct seq *s, struct model_state *st, const struct model_opts *o,
                      const char *rest)
{
	char what[16], dev[16];
	unsigned long long a = 0, b = 0, c = 0;
	ck_assert_int_eq(sscanf(rest, "%15s", what), 1);
	if (!strcmp(what, "create")) {
		ck_assert_int_eq(sscanf(rest, "%*s %llx %llu %15s", &a, &b, dev), 3);
		ck_assert_uint_lt(st->n_handles, sizeof(st->handles) / sizeof(st->handles[0]));
		struct handle *h = &st->handles[st->n_handles++];
		*h = (struct handle){
		    .handle = a, .bytes = b, .device = cuda_ordinal(dev), .live = true};
		ck_assert_int_ge(h->device, 0);
		st->used[LIB_DRV][h->device] += b;
		struct drec *d = seq_push(s, 'A');
		snprintf(d->op, sizeof(d->op), "cuMemCreate");
		snprintf(d->id, sizeof(d->id), "vmm:0x%llx", a);
		snprintf(d->device, sizeof(d->device), "%s", dev);
		d->bytes = b;
		push_snapshot(s, st, o, LIB_DRV, h->device);
	} else if (!strcmp(what, "map")) {
		ck_assert_int_eq(sscanf(rest, "%*s %llx %llu %llx", &a, &b, &c), 3);
		struct handle *h = find_handle(st, c);
		ck_assert_msg(h, "model: V map of unknown handle: %s", rest);
		ck_assert_uint_lt(st->n_maps, sizeof(st->maps) / sizeof(st->maps[0]));
		st->maps[st->n_maps++] = (struct mapping){a, c};
		h->maps++;
	} else if (!strcmp(what, "unmap")) {
		ck_assert_int_eq(sscanf(rest, "%*s %llx %llu", &a, &b), 2);
		for (size_t i = 0; i < st->n_maps;) {
			struct mapping m = st->maps[i];
			if (m.va < a || m.va >= a + b) {
				i++;
				continue;
			}
			st->maps[i] = st->maps[--st->n_maps];
			struct handle *h = find_handle(st, m.handle);
			h->maps--;
			vmm_free_if_gone(s, st, o, h, "cuMemUnmap");
		}
	} else if (!strcmp(what, "release")) {
		ck_assert_int_eq(sscanf(rest, "%*s %llx", &a), 1);
		struct handle *h = find_handle(st, a);
		ck_assert_msg(h, "model: V release of unknown handle: %s", rest);
		h->released = true;
		vmm_free_if_gone(s, st, o, h, "cuMemRelease");
	}
	/* reserve, free-va: address space only, nothing recorded */
}

/* The meminfo marker before or after the A/E line of (op, bytes). */
static void info_marker(struct seq *s, struct model_state *st, const struct model_opts *o,
                        const struct run *r, const char *op, uint64_t bytes, bool after, int *stage)
{
	uint64_t free_bytes;
	if (!o->info_op || strcmp(op, o->info_op))
		return;
	if (*stage == 0 && !after && bytes == o->info_first) {
		if (!stat_value(r, "free_before", &free_bytes))
			return;
		*stage = 1;
	} else if (*stage == 1 && after && bytes == o->info_last) {
		ck_assert(stat_value(r, "free_after", &free_bytes));
		*stage = 2;
	} else {
		return;
	}
	enum lib lib = lib_of(op);
	/* The model's count must be the fake's: else the model is wrong, not the probe. */
	ck_assert_msg(st->total - free_bytes == st->used[lib][OOM_DEVICE],
	              "model: the program saw %" PRIu64 " bytes used, the model counts %" PRIu64,
	              st->total - free_bytes, st->used[lib][OOM_DEVICE]);
	push_meminfo(s, OOM_DEVICE, st->total - free_bytes, st->total, NULL);
}

/*
 * The CUDA records the probe owes, in order, for the lines of prog:
 * - A: an alloc (op, the printed address, WHERE, bytes, managed) unless op
 *   is an entry point the probe does not wrap (v1);
 * - F: a free of the block with the op called, when its alloc was recorded;
 * - E: a device_memory record of the device with oom_request_bytes and what
 *   the fake counts as used then;
 * - V: cuMemCreate's alloc (tensor_id vmm:HANDLE) and one free by the call
 *   (cuMemRelease or cuMemUnmap) after which the handle is released and
 *   mapped nowhere;
 * - S meminfo DEVICE FREE TOTAL (entry-point): a device_memory record;
 * - the meminfo markers of o, and with o->snapshots a checkpoint after each
 *   alloc and free on a CUDA device.
 */
static void model_build(struct seq *out, const struct run *r, const char *prog,
                        const struct model_opts *o)
{
	static struct model_state st;
	memset(&st, 0, sizeof(st));
	*out = (struct seq){0};
	if (!stat_value(r, "total", &st.total))
		st.total = FAKE_TOTAL;
	int stage = 0;
	struct pline l;
	for (const char *c = r->out_text; next_pline(&c, &l);) {
		char op[64], id[64], where[16], extra[512];
		unsigned long long bytes, v2;
		int err;
		if (strcmp(l.prog, prog))
			continue;
		if (l.kind == 'A') {
			extra[0] = '\0';
			ck_assert_msg(sscanf(l.rest, "%63s %63s %llu %15s %511[^\n]", op, id,
			                     &bytes, where, extra) >= 4,
			              "model: bad line A %s", l.rest);
			info_marker(out, &st, o, r, op, bytes, false, &stage);
			int dev = cuda_ordinal(where);
			enum lib lib = lib_of(op);
			ck_assert_uint_lt(st.n_blocks, sizeof(st.blocks) / sizeof(st.blocks[0]));
			struct block *b = &st.blocks[st.n_blocks++];
			*b = (struct block){
			    .bytes = bytes, .recorded = !unrecorded_op(op), .lib = lib};
			snprintf(b->id, sizeof(b->id), "%s", id);
			snprintf(b->device, sizeof(b->device), "%s", where);
			if (dev >= 0)
				st.used[lib][dev] += round_up(bytes);
			if (b->recorded) {
				struct drec *d = seq_push(out, 'A');
				snprintf(d->op, sizeof(d->op), "%s", op);
				snprintf(d->id, sizeof(d->id), "%s", id);
				snprintf(d->device, sizeof(d->device), "%s", where);
				d->bytes = bytes;
				d->managed = !strncmp(extra, "managed", 7);
				push_snapshot(out, &st, o, lib, dev);
			}
			info_marker(out, &st, o, r, op, bytes, true, &stage);
		} else if (l.kind == 'F') {
			ck_assert_msg(
			    sscanf(l.rest, "%63s %63s %llu %15s", op, id, &bytes, where) == 4,
			    "model: bad line F %s", l.rest);
			size_t i;
			for (i = 0; i < st.n_blocks && (strcmp(st.blocks[i].id, id) ||
			                                strcmp(st.blocks[i].device, where));
			     i++)
				;
			ck_assert_msg(i < st.n_blocks, "model: F of a block never got: %s", l.rest);
			struct block b = st.blocks[i];
			st.blocks[i] = st.blocks[--st.n_blocks];
			ck_assert_msg(b.bytes == bytes, "model: %s got as %" PRIu64 " bytes",
			              l.rest, b.bytes);
			int dev = cuda_ordinal(where);
			if (dev >= 0)
				st.used[b.lib][dev] -= round_up(bytes);
			if (b.recorded) {
				struct drec *d = seq_push(out, 'F');
				snprintf(d->op, sizeof(d->op), "%s", op);
				snprintf(d->id, sizeof(d->id), "%s", id);
				snprintf(d->device, sizeof(d->device), "%s", where);
				d->bytes = bytes;
				push_snapshot(out, &st, o, b.lib, dev);
			}
		} else if (l.kind == 'E') {
			ck_assert_msg(sscanf(l.rest, "%63s %llu %d", op, &bytes, &err) == 3,
			              "model: bad line E %s", l.rest);
			info_marker(out, &st, o, r, op, bytes, false, &stage);
			ck_assert_msg(err == 2, "model: E line not out of memory: %s", l.rest);
			uint64_t oom = bytes;
			push_meminfo(out, OOM_DEVICE, st.used[lib_of(op)][OOM_DEVICE], st.total,
			             &oom);
			info_marker(out, &st, o, r, op, bytes, true, &stage);
		} else if (l.kind == 'V') {
			model_vmm(out, &st, o, l.rest);
		} else if (l.kind == 'S' &&
		           sscanf(l.rest, "meminfo %15s %llu %llu", where, &bytes, &v2) == 3) {
			int dev = cuda_ordinal(where);
			ck_assert_int_ge(dev, 0);
			push_meminfo(out, dev, v2 - bytes, v2, NULL);
		}
	}
	ck_assert_msg(!o->info_op || stage != 1, "model: no A/E line after the meminfo marker");
}

/* ------------------------------------------------------------------ */
/* Assertions on one trace                                             */
/* ------------------------------------------------------------------ */

/* The fake driver's identity of device N, or what the program printed of it. */
static void expected_identity(const struct run *r, int n, char uuid[64], char name[64],
                              uint64_t *total)
{
	struct pline l;
	snprintf(uuid, 64, "GPU-fa4ec0da-0000-4000-8000-%012x", n);
	snprintf(name, 64, "Fake CUDA Device %d", n);
	*total = FAKE_TOTAL;
	for (const char *c = r->out_text; next_pline(&c, &l);) {
		int dev, at = 0;
		char u[64];
		unsigned long long t;
		if (l.kind == 'S' &&
		    sscanf(l.rest, "device %d %63s %llu %n", &dev, u, &t, &at) == 3 && dev == n &&
		    at > 0) {
			snprintf(uuid, 64, "%s", u);
			snprintf(name, 64, "%s", l.rest + at);
			*total = t;
		}
	}
}

/*
 * Where the identity sits in the file: as cgprobe_device_* fields on the
 * first memory or device_memory record of its device and on no other record,
 * never as a record of the older cgprobe_device kind, which a strict trace/6
 * reader rejects. on_first[dev] is set for each device so identified.
 */
static void assert_identity_lines(const struct trace *t, bool on_first[MAX_DEVICES])
{
	bool named[MAX_DEVICES] = {false};
	FILE *f = fopen(t->path, "r");
	ck_assert_msg(f != NULL, "%s: %s", t->path, strerror(errno));
	char *line = NULL;
	size_t cap = 0;
	for (int no = 1; getline(&line, &cap, f) > 0; no++) {
		ck_assert_msg(!strstr(line, "\"kind\":\"cgprobe_device\""),
		              "%s:%d: a cgprobe_device record", t->path, no);
		bool has = strstr(line, "\"cgprobe_device_uuid\":") != NULL;
		const char *dev = strstr(line, "\"device\":\"cuda:");
		bool rec = !strncmp(line, "{\"kind\":\"memory\",", 17) ||
		           !strncmp(line, "{\"kind\":\"device_memory\",", 24);
		ck_assert_msg(!has || (rec && dev),
		              "%s:%d: identity fields off a CUDA device's record", t->path, no);
		if (!rec || !dev)
			continue;
		int n = atoi(dev + strlen("\"device\":\"cuda:"));
		ck_assert_msg(n >= 0 && n < MAX_DEVICES, "%s:%d: device %d", t->path, no, n);
		ck_assert_msg(!has || !named[n], "%s:%d: cuda:%d identified past its first record",
		              t->path, no, n);
		on_first[n] = on_first[n] || (has && !named[n]);
		named[n] = true;
	}
	free(line);
	fclose(f);
}

/*
 * Device identities: at most one per device, on its first record, each with
 * the fake's UUID, name and size; with `required`, one for every CUDA device
 * in the model.
 */
static void assert_device_infos(const struct trace *t, const struct run *r, const struct seq *model,
                                bool required)
{
	int seen[MAX_DEVICES] = {0};
	bool on_first[MAX_DEVICES] = {false};
	assert_identity_lines(t, on_first);
	size_t n = cgtrace_doc_count(t->doc, CGTRACE_KIND_DEVICE_INFO);
	for (size_t i = 0; i < n; i++) {
		struct cgtrace_device_info d;
		char uuid[64], name[64];
		uint64_t total;
		cgtrace_doc_device_info(t->doc, i, &d);
		int dev = cuda_ordinal(d.device);
		ck_assert_msg(dev >= 0, "%s: an identity for '%s'", t->path, d.device);
		ck_assert_msg(++seen[dev] == 1, "%s: %s announced twice", t->path, d.device);
		ck_assert_msg(on_first[dev], "%s: %s identified, but not on its first record",
		              t->path, d.device);
		expected_identity(r, dev, uuid, name, &total);
		ck_assert_msg(!strcmp(d.uuid, uuid), "%s: %s has uuid %s, the driver says %s",
		              t->path, d.device, d.uuid, uuid);
		ck_assert_msg(d.name && !strcmp(d.name, name), "%s: %s named '%s', not '%s'",
		              t->path, d.device, d.name ? d.name : "(none)", name);
		ck_assert_msg(d.has_total && d.total_bytes == total,
		              "%s: %s total_bytes %" PRIu64 ", not %" PRIu64, t->path, d.device,
		              d.total_bytes, total);
	}
	for (int dev = 0; dev < MAX_DEVICES; dev++)
		ck_assert_msg(!on_first[dev] || seen[dev] == 1,
		              "%s: cuda:%d's identity fields are not in the reader's table", t->path,
		              dev);
	if (!required)
		return;
	for (size_t i = 0; i < model->n; i++) {
		int dev = cuda_ordinal(model->v[i].device);
		if (dev >= 0)
			ck_assert_msg(seen[dev] == 1, "%s: no identity for %s", t->path,
			              model->v[i].device);
	}
}

/* The reader's analysis: each CUDA device its own peak, counts and capacity. */
static void assert_analysis(const struct trace *t, const struct seq *model)
{
	struct {
		uint64_t live, peak, allocs, frees;
		bool listed, checkpoint;
	} dev[MAX_DEVICES];
	memset(dev, 0, sizeof(dev));
	for (size_t i = 0; i < model->n; i++) {
		const struct drec *d = &model->v[i];
		int n = cuda_ordinal(d->device);
		if (n < 0)
			continue;
		dev[n].listed = true;
		if (d->kind == 'M') {
			dev[n].checkpoint = true;
		} else if (d->kind == 'A') {
			dev[n].allocs++;
			dev[n].live += d->bytes;
			if (dev[n].live > dev[n].peak)
				dev[n].peak = dev[n].live;
		} else {
			dev[n].frees++;
			dev[n].live -= d->bytes;
		}
	}
	struct cgtrace_memory_report *rep = NULL;
	ck_assert_int_eq(cgtrace_memory_analyze(t->doc, &rep), 0);
	ck_assert_uint_eq(rep->unknown_free_count, 0);
	ck_assert_uint_eq(rep->realloc_live_count, 0);
	int checked = 0;
	for (int n = 0; n < MAX_DEVICES; n++) {
		char name[16];
		if (!dev[n].listed)
			continue;
		snprintf(name, sizeof(name), "cuda:%d", n);
		const struct cgtrace_device_peak *p = NULL;
		for (size_t i = 0; i < rep->n_devices; i++)
			if (!strcmp(rep->by_device[i].device, name))
				p = &rep->by_device[i];
		ck_assert_msg(p, "%s: the analysis lists no %s", t->path, name);
		ck_assert_msg(p->peak_bytes == dev[n].peak,
		              "%s: %s peak %" PRIu64 ", the program's %" PRIu64, t->path, name,
		              p->peak_bytes, dev[n].peak);
		ck_assert_uint_eq(p->alloc_count, dev[n].allocs);
		ck_assert_uint_eq(p->free_count, dev[n].frees);
		ck_assert_uint_eq(p->final_bytes, dev[n].live);
		ck_assert_msg(p->capacity_bytes == (dev[n].checkpoint ? FAKE_TOTAL : 0),
		              "%s: %s capacity %" PRIu64 " (checkpoints: %d)", t->path, name,
		              p->capacity_bytes, dev[n].checkpoint);
		checked++;
	}
	ck_assert_msg(checked > 0, "%s: no CUDA device in the program's lines", t->path);
	cgtrace_memory_report_free(rep);
}

/* Runs prog without and with the probe; both runs must go as documented and alike. */
struct pair {
	struct run *ref, *r;
	struct trace *t;
	struct seq model, have;
};

static struct pair pair_run(const char *prog, const char *const *args, const char *const *env,
                            const struct model_opts *o, bool same_stderr)
{
	struct pair p = {0};
	p.ref = run_prog(false, env, prog, args);
	p.r = run_prog(true, env, prog, args);
	assert_program_ok(p.ref);
	assert_program_ok(p.r);
	assert_same_behaviour(p.ref, p.r, same_stderr);
	ck_assert_msg(p.ref->n_traces == 0, "a trace without the probe?");
	p.t = the_trace(p.r);
	model_build(&p.model, p.r, strcmp(prog, self_exe) ? base_name(prog) : helper_prog, o);
	trace_seq(&p.have, p.t);
	return p;
}

static void pair_free(struct pair *p)
{
	run_free(p->ref);
	run_free(p->r);
	seq_free(&p->model);
	seq_free(&p->have);
}

/* ------------------------------------------------------------------ */
/* The programs                                                        */
/* ------------------------------------------------------------------ */

static const char *const rt_gcc[] = {"rt-shared-gcc", "rt-shared-gcc-ptsz"};
static const char *const rt_nvcc[] = {"rt-shared", "rt-shared-ptsz"};
#define N_RT 2

static const struct model_opts rt_opts = {"cudaMalloc", 32u << 20, 32u << 20, false};
static const struct model_opts dlopen_opts = {"cuMemAlloc_v2", 16u << 20, 16u << 20, false};
static const struct model_opts linked_opts = {"cuMemAlloc_v2", 1u << 20, 5000, false};
static const struct model_opts no_opts = {NULL, 0, 0, false};

static const char *const oom_env[] = {"FAKE_CUDA_OOM_BYTES=100000", NULL};
static const char *const snap_env[] = {"CGPROBE_DEVICE_SNAPSHOTS=alloc", NULL};
/* The fake driver's log of cuGetProcAddress on stderr. */
static const char *const log_env[] = {"FAKE_CUDA_LOG=1", NULL};

/* ------------------------------------------------------------------ */
/* The runtime (rt-shared*)                                            */
/* ------------------------------------------------------------------ */

/* Every record: exact op names (_ptsz included), addresses, sizes, devices, managed. */
static void rt_records(const char *prog, const char *const *env)
{
	struct pair p = pair_run(prog, NULL, env, &rt_opts, true);
	assert_seq_equal(&p.model, &p.have, prog);
	/* On the fake runtime the driver is never loaded: no identity to tell, or the right one. */
	assert_device_infos(p.t, p.r, &p.model, false);
	pair_free(&p);
}

/* Every CUDA memory record under a runtime name (cuda*), one for each A and F line. */
static void assert_runtime_names_once(const struct pair *p, const char *prog)
{
	size_t records = 0, lines = 0;
	for (size_t i = 0; i < p->have.n; i++) {
		const struct drec *d = &p->have.v[i];
		if (d->kind == 'M')
			continue;
		ck_assert_msg(!strncmp(d->op, "cuda", 4), "%s: record %zu by %s", prog, i, d->op);
		records++;
	}
	struct pline l;
	for (const char *c = p->r->out_text; next_pline(&c, &l);)
		lines += l.kind == 'A' || l.kind == 'F';
	ck_assert_msg(records == lines, "%s: %zu CUDA memory records for %zu A/F lines", prog,
	              records, lines);
}

/* Recorded once, under the runtime's names: nothing cu*, nothing twice. */
static void rt_runtime_names_only(const char *prog)
{
	struct pair p = pair_run(prog, NULL, NULL, &rt_opts, true);
	assert_runtime_names_once(&p, prog);
	pair_free(&p);
}

/* cudaFree(0), cudaFree(NULL), cudaFreeHost(NULL), cudaMalloc(0): not recorded. */
static void rt_null_calls(const char *prog)
{
	static const char *const args[] = {"null", NULL};
	struct pair p = pair_run(prog, args, NULL, &rt_opts, true);
	ck_assert(has_line(p.r, 'R', "cudaFree(0) 0"));
	ck_assert(has_line(p.r, 'R', "cudaFree(NULL) 0"));
	ck_assert(has_line(p.r, 'R', "cudaMalloc(0) 0 null"));
	ck_assert_msg(p.have.n == 0, "%s null: CUDA records:\n%s", prog,
	              seq_text(&p.have, 0, p.have.n));
	pair_free(&p);
}

/* The exact records, and the reader's analysis of them per device. */
static void analysis_of(const char *prog, const struct model_opts *o)
{
	struct pair p = pair_run(prog, NULL, NULL, o, true);
	assert_seq_equal(&p.model, &p.have, prog);
	assert_analysis(p.t, &p.model);
	pair_free(&p);
}

/* Each runtime test twice: NAME on the C compiler's programs, NAME_nvcc on nvcc's. */
#define RT_TESTS(name, call)                                                                   \
	START_TEST(name)                                                                       \
	{                                                                                      \
		const char *prog = rt_gcc[_i];                                                 \
		call;                                                                          \
	}                                                                                      \
	END_TEST                                                                               \
	START_TEST(name##_nvcc)                                                                \
	{                                                                                      \
		const char *prog = rt_nvcc[_i];                                                \
		call;                                                                          \
	}                                                                                      \
	END_TEST

RT_TESTS(test_rt_records, rt_records(prog, NULL))
RT_TESTS(test_rt_out_of_memory, rt_records(prog, oom_env))
RT_TESTS(test_rt_runtime_names_only, rt_runtime_names_only(prog))
RT_TESTS(test_rt_null_calls_not_recorded, rt_null_calls(prog))
RT_TESTS(test_rt_analysis_per_device, analysis_of(prog, &rt_opts))

/* The nvcc build's kernel launch goes through the fake's launch stubs unharmed. */
START_TEST(test_rt_kernel_nvcc)
{
	static const char *const args[] = {"kernel", NULL};
	struct pair p = pair_run(rt_nvcc[_i], args, NULL, &rt_opts, true);
	ck_assert(has_line(p.r, 'R', "kernel 0 0"));
	assert_seq_equal(&p.model, &p.have, rt_nvcc[_i]);
	ck_assert_uint_eq(p.have.n, 2);
	pair_free(&p);
}
END_TEST

/* The static runtime gives up on the fake driver: the same way, probe or not. */
START_TEST(test_rt_static_unharmed)
{
	struct pair p = pair_run("rt-static", NULL, log_env, &no_opts, true);
	ck_assert_msg(strstr(p.r->err_text,
	                     "fake-cuda: cuGetProcAddress_v2 cuMemAlloc 3020 0 -> cuMemAlloc_v2\n"),
	              "the static runtime's lookups:\n%s", clip(p.r->err_text, 3000));
	ck_assert_msg(p.have.n == 0, "rt-static: CUDA records:\n%s",
	              seq_text(&p.have, 0, p.have.n));
	pair_free(&p);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Two runtime copies in one process (rt-two-copies*)                  */
/* ------------------------------------------------------------------ */

/* libuses12.so linked by the program, or dlopen'ed by it. */
static const char *const two_copies[] = {"rt-two-copies", "rt-two-copies-dlopen"};

/* Which fake runtime a block is from: .13's ranges start at 0x30..., .12's at 0x33.... */
static int runtime_copy(const char *id)
{
	unsigned long long top = strtoull(id, NULL, 16) >> 40;
	return top >= 0x30 && top <= 0x32 ? 13 : top >= 0x33 && top <= 0x35 ? 12 : -1;
}

/*
 * The program links libcudart.so.13, libuses12.so links libcudart.so.12:
 * each call must reach the copy its caller links against, with the probe as
 * without. The program prints which copy each block came from, each copy's
 * version, current device and count, and that neither frees the other's
 * block: all R lines, so a call the probe sent to the wrong copy changes the
 * output. Every block is recorded once, with its copy's address and device.
 */
START_TEST(test_two_runtime_copies)
{
	static const char *const lines[] = {
	    "main runtime 13000 device 0",
	    "main block in libcudart.so.13",
	    "lib runtime 12000 device 1",
	    "lib block in libcudart.so.12",
	    "lib used 8192",
	    "lib async block in libcudart.so.12",
	    "main device 0 used 4096",
	    "main async block in libcudart.so.13",
	    "lib cudaFree(foreign) 1 then 1",
	    "main cudaFree(foreign) 1 then 1",
	};
	const char *prog = two_copies[_i];
	struct pair p = pair_run(prog, NULL, NULL, &no_opts, true);
	ck_assert(has_line(p.r, 'R', _i ? "libuses12.so dlopen'ed" : "libuses12.so linked"));
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		ck_assert_msg(has_line(p.r, 'R', lines[i]), "%s: no 'R %s' in:\n%s", prog,
		              lines[i], clip(p.r->out_text, 3000));
	assert_seq_equal(&p.model, &p.have, prog);
	size_t n[2] = {0, 0}, checkpoints = 0;
	for (size_t i = 0; i < p.have.n; i++) {
		const struct drec *d = &p.have.v[i];
		if (d->kind == 'M') {
			checkpoints++;
			continue;
		}
		int copy = runtime_copy(d->id);
		ck_assert_msg(copy > 0, "%s: record %zu: %s is no runtime's block", prog, i,
		              d->id);
		ck_assert_msg(!strcmp(d->device, copy == 12 ? "cuda:1" : "cuda:0"),
		              "%s: record %zu: libcudart.so.%d's block %s on %s", prog, i, copy,
		              d->id, d->device);
		ck_assert_msg(!strncmp(d->op, "cuda", 4), "%s: record %zu by %s", prog, i, d->op);
		n[copy == 12]++;
	}
	ck_assert_uint_eq(n[0], 4); /* the program's cudaMalloc, cudaMallocAsync and their frees */
	ck_assert_uint_eq(n[1], 4); /* the library's */
	ck_assert_uint_eq(checkpoints, 2); /* one cudaMemGetInfo each */
	pair_free(&p);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Runtime calls that reach the driver (FAKE_CUDART_VIA_DRIVER=1)      */
/* ------------------------------------------------------------------ */

static const char *const via_env[] = {"FAKE_CUDART_VIA_DRIVER=1", "FAKE_CUDA_LOG=1", NULL};
static const char *const via_oom_env[] = {"FAKE_CUDART_VIA_DRIVER=1", "FAKE_CUDA_LOG=1",
                                          "FAKE_CUDA_OOM_BYTES=100000", NULL};
static const char *const via_snap_env[] = {"FAKE_CUDART_VIA_DRIVER=1", "FAKE_CUDA_LOG=1",
                                           "CGPROBE_DEVICE_SNAPSHOTS=alloc", NULL};

/* What the runtime asks cuGetProcAddress_v2 for, what it gets, whether the probe wraps that. */
static const struct {
	const char *ask, *got;
	bool wrapped;
} via_lookups[] = {
    {"cuInit 13000 0", "cuInit", false},
    {"cuDevicePrimaryCtxRetain 13000 0", "cuDevicePrimaryCtxRetain", false},
    {"cuCtxSetCurrent 13000 0", "cuCtxSetCurrent", false},
    {"cuMemAlloc 13000 0", "cuMemAlloc_v2", true},
    {"cuMemFree 13000 0", "cuMemFree_v2", true},
    {"cuMemAllocAsync 13000 0", "cuMemAllocAsync", true},
    {"cuMemAllocAsync 13000 2", "cuMemAllocAsync_ptsz", true},
    {"cuMemFreeAsync 13000 0", "cuMemFreeAsync", true},
    {"cuMemFreeAsync 13000 2", "cuMemFreeAsync_ptsz", true},
    {"cuMemGetInfo 13000 0", "cuMemGetInfo_v2", true},
};

static bool text_has_line(const char *text, const char *line)
{
	size_t n = strlen(line);
	for (const char *s = text; (s = strstr(s, line)); s++)
		if ((s == text || s[-1] == '\n') && (s[n] == '\n' || !s[n]))
			return true;
	return false;
}

/*
 * Both runs' runtime went through the driver: it looked its functions up
 * with cuGetProcAddress_v2 (its log on stderr), and got the probe's wrappers
 * with the probe, so the probe saw the driver calls (else nothing here
 * would show that it records them once); and the memory of its cudaMalloc
 * and cudaMallocAsync is the driver's (from 0x2N0000000000 on device N).
 */
static void assert_via_driver(const struct pair *p)
{
	for (int probe = 0; probe < 2; probe++) {
		const struct run *r = probe ? p->r : p->ref;
		for (size_t i = 0; i < sizeof(via_lookups) / sizeof(via_lookups[0]); i++) {
			bool wrapped = probe && via_lookups[i].wrapped;
			char *line = strf("fake-cudart13: driver %s -> %s in %s",
			                  via_lookups[i].ask, via_lookups[i].got,
			                  wrapped ? base_name(probe_path) : "libcuda.so.1");
			ck_assert_msg(text_has_line(r->err_text, line),
			              "probe=%d: no '%s' on stderr:\n%s", probe, line,
			              clip(r->err_text, 3000));
			free(line);
		}
	}
	size_t n = 0;
	struct pline l;
	for (const char *c = p->r->out_text; next_pline(&c, &l);) {
		char op[64], id[64], where[16];
		unsigned long long bytes;
		if (l.kind != 'A' ||
		    sscanf(l.rest, "%63s %63s %llu %15s", op, id, &bytes, where) != 4 ||
		    (strcmp(op, "cudaMalloc") && strncmp(op, "cudaMallocAsync", 15)))
			continue;
		int dev = cuda_ordinal(where);
		ck_assert_msg(dev >= 0 && strtoull(id, NULL, 16) >> 40 == 0x20ull + (unsigned)dev,
		              "not the driver's memory: A %s", l.rest);
		n++;
	}
	/* Those that fit under FAKE_CUDA_OOM_BYTES=100000: cudaMalloc on each device, async. */
	ck_assert_msg(n >= 3, "%zu runtime allocations through the driver", n);
}

/*
 * cudaMalloc, cudaFree, cudaMallocAsync[_ptsz], cudaFreeAsync[_ptsz] and
 * cudaMemGetInfo reach the driver's cuMemAlloc_v2 & co. through the probe's
 * wrappers: each call is recorded once, under the runtime's name, the
 * out-of-memory failures and memory queries once too (the exact sequence),
 * and there are as many CUDA memory records as A and F lines.
 */
START_TEST(test_rt_via_driver_once)
{
	const char *prog = rt_gcc[_i % N_RT];
	struct pair p = pair_run(prog, NULL, _i < N_RT ? via_env : via_oom_env, &rt_opts, false);
	assert_via_driver(&p);
	assert_seq_equal(&p.model, &p.have, prog);
	assert_runtime_names_once(&p, prog);
	/* The driver is loaded now: each device the runtime used is announced. */
	assert_device_infos(p.t, p.r, &p.model, true);
	pair_free(&p);
}
END_TEST

/*
 * With CGPROBE_DEVICE_SNAPSHOTS=alloc the thread has a driver context now:
 * a checkpoint after each device change, the probe's own cudaMemGetInfo
 * (through cuMemGetInfo_v2) recorded as that checkpoint only. The sections
 * whose memory is all the driver's, so its count is the model's.
 */
START_TEST(test_rt_via_driver_snapshots)
{
	static const char *const args[] = {"null", "sync", "async", "info", "oom", "device1", NULL};
	struct model_opts o = rt_opts;
	o.snapshots = true;
	struct pair p = pair_run(rt_gcc[_i], args, via_snap_env, &o, false);
	assert_via_driver(&p);
	assert_seq_equal(&p.model, &p.have, rt_gcc[_i]);
	pair_free(&p);
}
END_TEST

/* ------------------------------------------------------------------ */
/* The driver (drv-dlopen, drv-linked)                                 */
/* ------------------------------------------------------------------ */

/* cuMemAlloc at 2000 is the v1 (32-bit) entry point: handed back untouched, not recorded. */
START_TEST(test_drv_v1_not_recorded)
{
	struct pair p = pair_run("drv-dlopen", NULL, NULL, &dlopen_opts, true);
	ck_assert(has_line(p.r, 'R', "proc cuMemAlloc 2000 0 0 0"));
	ck_assert(has_line(p.r, 'R', "cuMemAlloc(v1) 0"));
	char v1[64];
	first_word(p.r, 'A', "cuMemAlloc", v1);
	for (size_t i = 0; i < p.have.n; i++) {
		const struct drec *d = &p.have.v[i];
		ck_assert_msg(strcmp(d->op, "cuMemAlloc") && strcmp(d->op, "cuMemFree"),
		              "record %zu by %s", i, d->op);
		ck_assert_msg(d->kind == 'M' || strcmp(d->id, v1), "record %zu of the v1 block %s",
		              i, v1);
	}
	pair_free(&p);
}
END_TEST

/* The names the program asked for are the ones the driver saw, flags and versions as given. */
START_TEST(test_drv_lookups_untouched)
{
	struct pair p = pair_run("drv-dlopen", NULL, log_env, &dlopen_opts, true);
	ck_assert_msg(strstr(p.r->err_text, "cuGetProcAddress_v2 cuMemAllocAsync 11020 2 -> "
	                                    "cuMemAllocAsync_ptsz\n"),
	              "%s", clip(p.r->err_text, 3000));
	ck_assert(has_line(p.r, 'R', "proc cuNoSuchFunction 13000 0 500 1 null"));
	ck_assert(has_line(p.r, 'R', "proc cuMemAllocAsync 11000 0 500 2 null"));
	/* Flag 2 gave the _ptsz variant, recorded under that name. */
	size_t ptsz = 0;
	for (size_t i = 0; i < p.have.n; i++)
		ptsz += !strcmp(p.have.v[i].op, "cuMemAllocAsync_ptsz") ||
		        !strcmp(p.have.v[i].op, "cuMemFreeAsync_ptsz");
	ck_assert_uint_eq(ptsz, 2);
	pair_free(&p);
}
END_TEST

/*
 * cuMemGetInfo_v2: each call with both outputs is a checkpoint (used =
 * total - free); the (NULL, &total) and (&free, NULL) ones and the failed
 * call on a thread without a context record nothing.
 */
START_TEST(test_drv_meminfo)
{
	struct pair p = pair_run(_i ? "drv-linked" : "drv-dlopen", NULL, NULL,
	                         _i ? &linked_opts : &dlopen_opts, true);
	ck_assert(has_line(p.r, 'R', "cuMemGetInfo_v2(NULL,&total) 0 total-same=yes"));
	uint64_t before, after;
	ck_assert(stat_value(p.r, "free_before", &before));
	ck_assert(stat_value(p.r, "free_after", &after));
	size_t n = cgtrace_doc_count(p.t->doc, CGTRACE_KIND_DEVICE_MEMORY), plain = 0;
	uint64_t seen[2] = {0, 0};
	for (size_t i = 0; i < n; i++) {
		struct cgtrace_device_memory d;
		cgtrace_doc_device_memory(p.t->doc, i, &d);
		if (d.has_oom_request)
			continue;
		ck_assert_str_eq(d.device, "cuda:0");
		ck_assert_uint_eq(d.used_bytes + d.free_bytes, FAKE_TOTAL);
		if (plain < 2)
			seen[plain] = d.free_bytes;
		plain++;
	}
	ck_assert_msg(plain == 2, "%zu checkpoints, the program made 2 full calls", plain);
	ck_assert_uint_eq(seen[0], before);
	ck_assert_uint_eq(seen[1], after);
	pair_free(&p);
}
END_TEST

/* One out-of-memory failure: one device_memory record with the request and the state then. */
START_TEST(test_drv_oom_record)
{
	struct pair p = pair_run("drv-dlopen", NULL, NULL, &dlopen_opts, true);
	ck_assert(has_line(p.r, 'E', "cuMemAlloc_v2 1125899906842624 2 untouched"));
	size_t n = cgtrace_doc_count(p.t->doc, CGTRACE_KIND_DEVICE_MEMORY), ooms = 0;
	for (size_t i = 0; i < n; i++) {
		struct cgtrace_device_memory d;
		cgtrace_doc_device_memory(p.t->doc, i, &d);
		if (!d.has_oom_request)
			continue;
		ooms++;
		ck_assert_uint_eq(d.oom_request_bytes, 1125899906842624ull);
		ck_assert_str_eq(d.device, "cuda:0");
		ck_assert_uint_eq(d.used_bytes, 0);
		ck_assert_uint_eq(d.free_bytes, FAKE_TOTAL);
	}
	ck_assert_uint_eq(ooms, 1);
	pair_free(&p);
}
END_TEST

/* One handle mapped twice, released while mapped: one alloc, one free at the last unmap. */
START_TEST(test_drv_vmm_single_alloc_and_free)
{
	struct pair p = pair_run("drv-dlopen", NULL, NULL, &dlopen_opts, true);
	ck_assert(has_line(p.r, 'R', "vmm alias ok"));
	char handle[64];
	first_word(p.r, 'V', "create", handle);
	char *id = strf("vmm:%s", handle);
	size_t allocs = 0, frees = 0, other = 0;
	for (size_t i = 0; i < p.have.n; i++) {
		const struct drec *d = &p.have.v[i];
		if (d->kind == 'M')
			continue;
		if (strcmp(d->id, id)) {
			other += !strncmp(d->id, "vmm:", 4);
			continue;
		}
		if (d->kind == 'A') {
			allocs++;
			ck_assert_str_eq(d->op, "cuMemCreate");
			ck_assert_uint_eq(d->bytes, 2097152);
			ck_assert_str_eq(d->device, "cuda:0");
		} else {
			frees++;
			ck_assert_msg(allocs == 1, "free before alloc");
			/* Released first, then unmapped twice: the second unmap ends it. */
			ck_assert_str_eq(d->op, "cuMemUnmap");
			ck_assert_uint_eq(d->bytes, 2097152);
		}
	}
	ck_assert_uint_eq(allocs, 1);
	ck_assert_uint_eq(frees, 1);
	ck_assert_uint_eq(other, 0);
	free(id);
	pair_free(&p);
}
END_TEST

START_TEST(test_drv_analysis_per_device)
{
	analysis_of("drv-dlopen", &dlopen_opts);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Driver entry points from the runtime (test-cuda entry-point)        */
/* ------------------------------------------------------------------ */

static int helper_failed;

__attribute__((format(printf, 1, 2))) static void say(const char *fmt, ...)
{
	char line[512];
	int at = snprintf(line, sizeof(line), "%d %s ", (int)getpid(), helper_prog);
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line + at, sizeof(line) - (size_t)at - 1, fmt, ap);
	va_end(ap);
	at += n < 0 ? 0 : n;
	if ((size_t)at > sizeof(line) - 2)
		at = (int)sizeof(line) - 2;
	line[at++] = '\n';
	for (const char *p = line; at > 0;) {
		ssize_t w = write(STDOUT_FILENO, p, (size_t)at);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		p += w;
		at -= (int)w;
	}
}

#define HELPER_CHECK(what, rc)                                                                     \
	do {                                                                                       \
		int rc_ = (rc);                                                                    \
		if (rc_) {                                                                         \
			say("R FAILED %s: %d", (what), rc_);                                       \
			helper_failed = 1;                                                         \
		}                                                                                  \
	} while (0)

typedef int (*entry_fn)(const char *, void **, unsigned long long, int *);
typedef int (*entry_version_fn)(const char *, void **, unsigned int, unsigned long long, int *);

/*
 * Asks for symbol through the runtime (version 0: cudaGetDriverEntryPoint,
 * else ...ByVersion); prints what it got: the symbol's name (which must be
 * the same with the probe) and, in an S line, the object that holds it.
 */
static void *entry(void *get, bool by_version, const char *symbol, unsigned version,
                   unsigned long long flags)
{
	void *fn = NULL;
	int status = -1, rc;
	if (by_version)
		rc = ((entry_version_fn)get)(symbol, &fn, version, flags, &status);
	else
		rc = ((entry_fn)get)(symbol, &fn, flags, &status);
	Dl_info info;
	const char *sname = "?", *object = "?";
	if (fn && dladdr(fn, &info)) {
		sname = info.dli_sname ? info.dli_sname : "?";
		object = info.dli_fname ? base_name(info.dli_fname) : "?";
	}
	say("R entry %s %u %llu %d %d %s", symbol, version, flags, rc, status, sname);
	say("S object %s %u %llu %s %s", symbol, version, flags, sname, object);
	if (rc || !fn) {
		say("R FAILED entry %s", symbol);
		helper_failed = 1;
	}
	return fn;
}

static void *must_dlsym(const char *name)
{
	void *p = dlsym(RTLD_DEFAULT, name);
	if (!p) {
		say("R FAILED dlsym %s", name);
		helper_failed = 1;
	}
	return p;
}

typedef unsigned long long cuptr;

/*
 * A program of the suite (`test-cuda entry-point`): loads the runtime, takes
 * driver functions from cudaGetDriverEntryPoint, ...ByVersion and
 * cudaGetDriverEntryPoint_ptsz (the per-thread build's name), calls them,
 * and prints cuda-prog.h's lines; OP in A/F lines is the name of the symbol
 * it was handed. `S meminfo DEVICE FREE TOTAL` follows each full memory query.
 */
static int entry_point_prog(void)
{
	if (!dlopen("libcudart.so.13", RTLD_NOW | RTLD_GLOBAL)) {
		say("R FAILED dlopen libcudart.so.13: %s", dlerror());
		return 1;
	}
	void *get = must_dlsym("cudaGetDriverEntryPoint");
	void *get_v = must_dlsym("cudaGetDriverEntryPointByVersion");
	void *get_ptsz = must_dlsym("cudaGetDriverEntryPoint_ptsz");
	int (*rt_malloc)(void **, size_t) = (int (*)(void **, size_t))must_dlsym("cudaMalloc");
	int (*rt_free)(void *) = (int (*)(void *))must_dlsym("cudaFree");
	int (*rt_info)(size_t *, size_t *) =
	    (int (*)(size_t *, size_t *))must_dlsym("cudaMemGetInfo");
	int (*rt_last)(void) = (int (*)(void))must_dlsym("cudaGetLastError");
	if (helper_failed)
		return 1;

	int (*cu_init)(unsigned) = (int (*)(unsigned))entry(get, false, "cuInit", 0, 0);
	int (*device_get)(int *, int) = (int (*)(int *, int))entry(get, false, "cuDeviceGet", 0, 0);
	int (*retain)(void **, int) =
	    (int (*)(void **, int))entry(get, false, "cuDevicePrimaryCtxRetain", 0, 0);
	int (*release)(int) = (int (*)(int))entry(get, false, "cuDevicePrimaryCtxRelease", 0, 0);
	int (*set_current)(void *) = (int (*)(void *))entry(get, false, "cuCtxSetCurrent", 0, 0);
	int (*alloc)(cuptr *, size_t) =
	    (int (*)(cuptr *, size_t))entry(get, false, "cuMemAlloc", 0, 0);
	int (*dfree)(cuptr) = (int (*)(cuptr))entry(get, false, "cuMemFree", 0, 0);
	int (*info)(size_t *, size_t *) =
	    (int (*)(size_t *, size_t *))entry(get, false, "cuMemGetInfo", 0, 0);
	int (*alloc_v1)(unsigned *, unsigned) =
	    (int (*)(unsigned *, unsigned))entry(get_v, true, "cuMemAlloc", 2000, 0);
	int (*async_ptsz)(cuptr *, size_t, void *) =
	    (int (*)(cuptr *, size_t, void *))entry(get_v, true, "cuMemAllocAsync", 11020, 2);
	int (*async)(cuptr *, size_t, void *) =
	    (int (*)(cuptr *, size_t, void *))entry(get_v, true, "cuMemAllocAsync", 11020, 0);
	int (*free_async)(cuptr, void *) =
	    (int (*)(cuptr, void *))entry(get_v, true, "cuMemFreeAsync", 11020, 0);
	/* The per-thread build's name: default flags mean per-thread. */
	int (*free_async_ptsz)(cuptr, void *) =
	    (int (*)(cuptr, void *))entry(get_ptsz, false, "cuMemFreeAsync", 0, 0);
	if (helper_failed)
		return 1;

	Dl_info di;
	const char *n_alloc = dladdr((void *)alloc, &di) ? di.dli_sname : "?";
	const char *n_free = dladdr((void *)dfree, &di) ? di.dli_sname : "?";
	const char *n_v1 = dladdr((void *)alloc_v1, &di) ? di.dli_sname : "?";
	const char *n_async_ptsz = dladdr((void *)async_ptsz, &di) ? di.dli_sname : "?";
	const char *n_async = dladdr((void *)async, &di) ? di.dli_sname : "?";
	const char *n_free_async = dladdr((void *)free_async, &di) ? di.dli_sname : "?";
	const char *n_free_async_ptsz = dladdr((void *)free_async_ptsz, &di) ? di.dli_sname : "?";

	int dev = -1;
	void *ctx = NULL;
	HELPER_CHECK("cuInit", cu_init(0));
	HELPER_CHECK("cuDeviceGet", device_get(&dev, 0));
	HELPER_CHECK("cuDevicePrimaryCtxRetain", retain(&ctx, dev));
	HELPER_CHECK("cuCtxSetCurrent", set_current(ctx));
	if (helper_failed)
		return 1;

	size_t f = 0, t = 0;
	HELPER_CHECK("cuMemGetInfo", info(&f, &t));
	say("S meminfo cuda:0 %zu %zu", f, t);
	cuptr a = 0x5e17;
	HELPER_CHECK("cuMemAlloc", alloc(&a, 8192));
	say("A %s 0x%llx 8192 cuda:0", n_alloc, a);
	HELPER_CHECK("cuMemGetInfo", info(&f, &t));
	say("S meminfo cuda:0 %zu %zu", f, t);

	/* v1, not recorded; then freed by the _v2 free, which must pass an unknown pointer on. */
	unsigned v1 = 0x5e17;
	HELPER_CHECK("cuMemAlloc(v1)", alloc_v1(&v1, 4096));
	say("A %s 0x%x 4096 cuda:0", n_v1, v1);
	say("F %s 0x%x 4096 cuda:0", n_free, v1);
	say("R free-unrecorded %d", dfree(v1));

	cuptr b = 0x5e17, c = 0x5e17;
	HELPER_CHECK("cuMemAllocAsync_ptsz", async_ptsz(&b, 65536, (void *)2));
	say("A %s 0x%llx 65536 cuda:0", n_async_ptsz, b);
	HELPER_CHECK("cuMemAllocAsync", async(&c, 32768, NULL));
	say("A %s 0x%llx 32768 cuda:0", n_async, c);
	say("F %s 0x%llx 32768 cuda:0", n_free_async, c);
	HELPER_CHECK("cuMemFreeAsync", free_async(c, NULL));
	say("F %s 0x%llx 65536 cuda:0", n_free_async_ptsz, b);
	HELPER_CHECK("cuMemFreeAsync_ptsz", free_async_ptsz(b, (void *)2));

	/* The runtime too, on this thread with a context. */
	void *r = (void *)(uintptr_t)0x5e17;
	HELPER_CHECK("cudaMalloc", rt_malloc(&r, 3000));
	say("A cudaMalloc %p 3000 cuda:0", r);
	HELPER_CHECK("cudaMemGetInfo", rt_info(&f, &t));
	say("S meminfo cuda:0 %zu %zu", f, t);
	say("F cudaFree %p 3000 cuda:0", r);
	HELPER_CHECK("cudaFree", rt_free(r));

	/* Failures pass through: results and outputs as they are, nothing recorded. */
	cuptr z = 0x5e17;
	int rc = alloc(&z, 0);
	say("R %s(0) %d %s", n_alloc, rc, z == 0x5e17 ? "untouched" : "clobbered");
	rc = dfree(0x12345600);
	say("R %s(unknown) %d", n_free, rc);
	rc = rt_free((void *)(uintptr_t)0x12345600);
	int last = rt_last();
	say("R cudaFree(unknown) %d then %d", rc, last);
	size_t total = 0;
	rc = info(NULL, &total);
	say("R cuMemGetInfo(NULL,&total) %d %s", rc, total == t ? "same" : "different");
	rc = info(&f, NULL);
	say("R cuMemGetInfo(&free,NULL) %d", rc);
	z = 0x5e17;
	rc = alloc(&z, (size_t)1 << 50);
	say("E %s %zu %d %s", n_alloc, (size_t)1 << 50, rc,
	    z == 0x5e17 ? "untouched" : "clobbered");

	say("F %s 0x%llx 8192 cuda:0", n_free, a);
	HELPER_CHECK("cuMemFree", dfree(a));
	HELPER_CHECK("cuCtxSetCurrent(NULL)", set_current(NULL));
	HELPER_CHECK("cuDevicePrimaryCtxRelease", release(dev));
	say("R done %s", helper_failed ? "with failures" : "ok");
	return helper_failed;
}

static const char *const helper_args[] = {"entry-point", NULL};

/* ------------------------------------------------------------------ */
/* Programs whose every CUDA record is checked, in order               */
/* ------------------------------------------------------------------ */

static const struct model_opts dlopen_snap_opts = {"cuMemAlloc_v2", 16u << 20, 16u << 20, true};

/*
 * The records the program owes, exactly, in order (assert_seq_equal), after
 * the lines it must have printed; with infos, each device it used
 * identified once. prog NULL: test-cuda's own entry-point program.
 */
static const struct exact_case {
	const char *prog;
	const char *const *env;
	const struct model_opts *opts;
	const char *what;
	bool infos;
	const char *lines[5]; /* "KIND TEXT" */
} exact_cases[] = {
	/* driver:records: through dlsym and cuGetProcAddress by version and flags. */
	{"drv-dlopen", NULL, &dlopen_opts, "drv-dlopen", true, {NULL}},
	{"drv-linked", NULL, &linked_opts, "drv-linked", true, {NULL}},
	{"drv-linked", oom_env, &linked_opts, "drv-linked", true, {NULL}},
	/* driver:out-of-memory */
	{"drv-dlopen", oom_env, &dlopen_opts, "drv-dlopen (FAKE_CUDA_OOM_BYTES)", true,
	 {"E cuMemCreate 2097152 2 untouched"}},
	/* entry-point:records: the _v2, _ptsz and runtime ones. */
	{NULL, NULL, &no_opts, "entry-point", true,
	 {"R entry cuMemAlloc 0 0 0 0 cuMemAlloc_v2", "R entry cuMemAlloc 2000 0 0 0 cuMemAlloc",
	  "R entry cuMemAllocAsync 11020 2 0 0 cuMemAllocAsync_ptsz",
	  "R entry cuMemFreeAsync 0 0 0 0 cuMemFreeAsync_ptsz"}},
	/* snapshot:sequence: all of it, with a checkpoint after each device change. */
	{"drv-dlopen", snap_env, &dlopen_snap_opts, "drv-dlopen (snapshots)", false, {NULL}},
};

/* Where the rows of exact_cases are registered: a case each from EXACT_X on. */
enum { EXACT_DRIVER = 0, EXACT_OOM = 3, EXACT_ENTRY = 4, EXACT_SNAPSHOTS = 5 };
_Static_assert(sizeof(exact_cases) / sizeof(exact_cases[0]) == EXACT_SNAPSHOTS + 1,
               "a row of exact_cases without its test case");

START_TEST(test_exact_records)
{
	const struct exact_case *c = &exact_cases[_i];
	struct pair p = pair_run(c->prog ? c->prog : self_exe, c->prog ? NULL : helper_args, c->env,
	                         c->opts, true);
	for (size_t i = 0; i < sizeof(c->lines) / sizeof(c->lines[0]) && c->lines[i]; i++)
		ck_assert_msg(has_line(p.r, c->lines[i][0], c->lines[i] + 2), "%s: no '%s' in:\n%s",
		              c->what, c->lines[i], clip(p.r->out_text, 3000));
	assert_seq_equal(&p.model, &p.have, c->what);
	if (c->infos)
		assert_device_infos(p.t, p.r, &p.model, true);
	pair_free(&p);
}
END_TEST

/*
 * What the runtime handed out: the probe's wrapper for the names it wraps,
 * the driver's own function for the others (the v1 cuMemAlloc included).
 */
START_TEST(test_entry_point_wrapped_objects)
{
	static const char *const wrapped[] = {
	    "cuMemAlloc_v2",        "cuMemFree_v2",   "cuMemGetInfo_v2",     "cuMemAllocAsync",
	    "cuMemAllocAsync_ptsz", "cuMemFreeAsync", "cuMemFreeAsync_ptsz",
	};
	struct pair p = pair_run(self_exe, helper_args, NULL, &no_opts, true);
	size_t n = 0, n_wrapped = 0;
	for (int probe = 0; probe < 2; probe++) {
		const struct run *r = probe ? p.r : p.ref;
		struct pline l;
		for (const char *c = r->out_text; next_pline(&c, &l);) {
			char symbol[64], sname[64], object[256];
			unsigned version;
			unsigned long long flags;
			if (l.kind != 'S' || sscanf(l.rest, "object %63s %u %llu %63s %255s",
			                            symbol, &version, &flags, sname, object) != 5)
				continue;
			bool is_wrapped = false;
			for (size_t i = 0; i < sizeof(wrapped) / sizeof(wrapped[0]); i++)
				is_wrapped |= !strcmp(sname, wrapped[i]);
			const char *want =
			    probe && is_wrapped ? base_name(probe_path) : "libcuda.so.1";
			ck_assert_msg(!strcmp(object, want),
			              "probe=%d: %s at %u flags %llu is %s in %s, expected in %s",
			              probe, symbol, version, flags, sname, object, want);
			n++;
			n_wrapped += probe && is_wrapped;
		}
	}
	ck_assert_uint_eq(n, 2 * 13);
	ck_assert_uint_eq(n_wrapped, 7);
	pair_free(&p);
}
END_TEST

/* ------------------------------------------------------------------ */
/* CGPROBE_DEVICE_SNAPSHOTS=alloc                                      */
/* ------------------------------------------------------------------ */

enum follow { FOLLOW_DEVICE, FOLLOW_PINNED, FOLLOW_VMM, FOLLOW_RUNTIME };

static bool follow_selects(const struct drec *d, enum follow which)
{
	if (d->kind == 'M')
		return false;
	bool vmm = !strncmp(d->id, "vmm:", 4);
	switch (which) {
	case FOLLOW_DEVICE:
		return cuda_ordinal(d->device) >= 0 && !vmm;
	case FOLLOW_PINNED:
		return !strcmp(d->device, "cpu");
	case FOLLOW_VMM:
		return vmm;
	case FOLLOW_RUNTIME:
		return cuda_ordinal(d->device) >= 0 && !strncmp(d->op, "cuda", 4);
	}
	return false;
}

/* "RECORD -> NEXT" for each selected alloc/free: what comes right after it. */
static char *followers(const struct seq *s, enum follow which, size_t *count)
{
	struct text t = {0};
	put(&t, "%s", "");
	*count = 0;
	for (size_t i = 0; i < s->n; i++) {
		if (!follow_selects(&s->v[i], which))
			continue;
		char *a = drec_key(&s->v[i]);
		char *b = i + 1 < s->n ? drec_key(&s->v[i + 1]) : strf("(end)");
		put(&t, "%s\n  -> %s\n", a, b);
		free(a);
		free(b);
		(*count)++;
	}
	return t.p;
}

static void assert_followers(const struct pair *p, enum follow which, const char *what)
{
	size_t n_want, n_have;
	char *want = followers(&p->model, which, &n_want);
	char *have = followers(&p->have, which, &n_have);
	ck_assert_msg(n_want > 0, "%s: nothing to check", what);
	ck_assert_msg(!strcmp(want, have), "%s.\nexpected:\n%s\nin the trace:\n%s", what, want,
	              have);
	free(want);
	free(have);
}

/*
 * With CGPROBE_DEVICE_SNAPSHOTS=alloc: what comes after the records of a
 * kind. prog NULL: test-cuda's own entry-point program; exact: the whole
 * sequence too.
 */
static const struct follow_case {
	const char *prog;
	const struct model_opts *opts;
	enum follow which;
	const char *what;
	const char *exact;
} follow_cases[] = {
	/* snapshot:device-changes: each alloc and free on a device has its checkpoint after it, */
	{"drv-dlopen", &dlopen_opts, FOLLOW_DEVICE, "checkpoints after device allocations and frees",
	 NULL},
	{"drv-linked", &linked_opts, FOLLOW_DEVICE, "checkpoints after device allocations and frees",
	 "drv-linked (snapshots)"},
	/* pinned host memory (device cpu) is no device change, */
	{"drv-dlopen", &dlopen_opts, FOLLOW_PINNED, "no checkpoint after pinned host memory", NULL},
	/* cuMemCreate's memory and its end are. */
	{"drv-dlopen", &dlopen_opts, FOLLOW_VMM, "checkpoints after cuMemCreate and its free", NULL},
	/* snapshot:runtime-with-context: runtime calls on a thread with a driver context too. */
	{NULL, &no_opts, FOLLOW_RUNTIME, "checkpoints after runtime calls", NULL},
};

/* The row of follow_cases registered as snapshot:runtime-with-context, the last. */
#define FOLLOW_RUNTIME_CASE 4
_Static_assert(sizeof(follow_cases) / sizeof(follow_cases[0]) == FOLLOW_RUNTIME_CASE + 1,
               "a row of follow_cases without its test case");

START_TEST(test_snapshot_followers)
{
	const struct follow_case *c = &follow_cases[_i];
	struct model_opts o = *c->opts;
	o.snapshots = true;
	struct pair p = pair_run(c->prog ? c->prog : self_exe, c->prog ? NULL : helper_args,
	                         snap_env, &o, true);
	assert_followers(&p, c->which, c->what);
	if (c->exact)
		assert_seq_equal(&p.model, &p.have, c->exact);
	pair_free(&p);
}
END_TEST

/* ------------------------------------------------------------------ */
/* A second interposer after the probe (rtld-next-lib.so)               */
/* ------------------------------------------------------------------ */

START_TEST(test_rtld_next_after_probe)
{
	char *lib = strf("%s/rtld-next-lib.so", fixtures);
	char *pre_ref = strf("LD_PRELOAD=%s", lib);
	char *pre = strf("LD_PRELOAD=%s %s", probe_path, lib);
	const char *env_ref[] = {pre_ref, NULL}, *env[] = {pre, NULL};
	static const char *const args[] = {"10", NULL};
	struct run *ref = run_prog(false, env_ref, "rtld-next-prog", args);
	struct run *r = run_prog(true, env, "rtld-next-prog", args);
	assert_program_ok(ref);
	assert_program_ok(r);
	/* The library counts mallocs, the probe's own among them: stderr may differ there. */
	assert_same_behaviour(ref, r, false);
	ck_assert(has_line(r, 'R', "mallocs 10"));
	unsigned long calls = 0;
	char object[PATH_MAX];
	ck_assert_msg(
	    sscanf(r->err_text, "rtld-next-lib: malloc calls %lu next %4095s", &calls, object) == 2,
	    "stderr: %s", clip(r->err_text, 2000));
	ck_assert_msg(!strncmp(base_name(object), "libc.so", 7),
	              "RTLD_NEXT from the second library reached %s, not libc", object);
	ck_assert_uint_ge(calls, 10);
	ck_assert_msg(!strstr(r->err_text, "FAILED"), "%s", clip(r->err_text, 2000));

	/* Every malloc and free the program made, in order, in the trace. */
	struct trace *t = the_trace(r);
	size_t at = 0, matched = 0, lines = 0;
	struct pline l;
	for (const char *c = r->out_text; next_pline(&c, &l);) {
		char op[64], id[64], where[16];
		unsigned long long bytes;
		if ((l.kind != 'A' && l.kind != 'F') ||
		    sscanf(l.rest, "%63s %63s %llu %15s", op, id, &bytes, where) != 4)
			continue;
		lines++;
		for (; at < trace_n_memory(t->doc); at++) {
			struct cgtrace_memory m = trace_memory(t->doc, at);
			if (!strcmp(m.op_name, op) && !strcmp(m.tensor_id, id) &&
			    m.bytes == bytes && !strcmp(m.device, where) &&
			    m.action == (l.kind == 'A' ? CGTRACE_ALLOC : CGTRACE_FREE)) {
				matched++;
				at++;
				break;
			}
		}
	}
	ck_assert_uint_eq(lines, 20);
	ck_assert_msg(matched == lines, "%zu of the program's %zu mallocs and frees recorded",
	              matched, lines);
	run_free(ref);
	run_free(r);
	free(lib);
	free(pre_ref);
	free(pre);
}
END_TEST

/* ------------------------------------------------------------------ */

static bool all_present(const char *const *names)
{
	for (; *names; names++)
		if (!fixture_present(*names))
			return false;
	return true;
}

/*
 * One test case a behaviour, named `area:behaviour` (`test-cuda
 * runtime:records` runs that one); a runtime case holds the programs of
 * both compilers, those that were built.
 */
TEST_SUITE(runtime_suite, "runtime")
{
	static const char *const gcc_rt[] = {"rt-shared-gcc", "rt-shared-gcc-ptsz", NULL};
	static const char *const two_rt[] = {"rt-two-copies", "rt-two-copies-dlopen",
	                                     "lib/libcudart.so.12", "lib/libuses12.so", NULL};
	static const char *const nvcc_rt[] = {"rt-shared", "rt-shared-ptsz", NULL};
	static const char *const nvcc_static[] = {"rt-static", NULL};
	bool gcc = all_present(gcc_rt), nvcc = all_present(nvcc_rt);

	if (!gcc)
		fprintf(stderr, "test-cuda: skipped: the C runtime programs are missing\n");
	if (!nvcc)
		fprintf(stderr, "test-cuda: skipped: rt-shared, rt-shared-ptsz (no nvcc build)\n");
	/* Each runtime case runs the C compiler's programs and nvcc's, whichever were built. */
	const struct {
		const char *name;
		const TTest *c, *cu;
	} rt_cases[] = {
		{"runtime:records", test_rt_records, test_rt_records_nvcc},
		{"runtime:out-of-memory", test_rt_out_of_memory, test_rt_out_of_memory_nvcc},
		{"runtime:names", test_rt_runtime_names_only, test_rt_runtime_names_only_nvcc},
		{"runtime:null-calls", test_rt_null_calls_not_recorded,
		 test_rt_null_calls_not_recorded_nvcc},
		{"runtime:analysis", test_rt_analysis_per_device, test_rt_analysis_per_device_nvcc},
	};
	for (size_t i = 0; (gcc || nvcc) && i < sizeof(rt_cases) / sizeof(rt_cases[0]); i++) {
		TCase *tc = test_tcase(s, rt_cases[i].name, 120);
		if (gcc)
			tcase_add_loop_test(tc, rt_cases[i].c, 0, N_RT);
		if (nvcc)
			tcase_add_loop_test(tc, rt_cases[i].cu, 0, N_RT);
	}
	if (nvcc)
		test_loop(s, "runtime:kernel", 120, test_rt_kernel_nvcc, N_RT);
	if (gcc) {
		test_loop(s, "runtime:via-driver", 120, test_rt_via_driver_once, 2 * N_RT);
		test_loop(s, "runtime:via-driver-snapshots", 120, test_rt_via_driver_snapshots,
		          N_RT);
	}
	if (all_present(two_rt))
		test_loop(s, "runtime:two-copies", 120, test_two_runtime_copies, 2);
	else
		fprintf(stderr, "test-cuda: skipped: rt-two-copies, libcudart.so.12 missing\n");
	if (all_present(nvcc_static))
		test_case(s, "runtime:static", 120, test_rt_static_unharmed);
	else
		fprintf(stderr, "test-cuda: skipped: rt-static (no nvcc build)\n");
}

TEST_SUITE(driver_suite, "driver")
{
	static const char *const gcc_drv[] = {"drv-dlopen", "drv-linked", NULL};

	if (all_present(gcc_drv)) {
		test_rows(s, "driver:records", 120, test_exact_records, EXACT_DRIVER, EXACT_OOM);
		TCase *tc = test_rows(s, "driver:out-of-memory", 120, test_exact_records,
		                      EXACT_OOM, EXACT_ENTRY);
		test_add(tc, test_drv_oom_record);
		test_case(s, "driver:v1-not-recorded", 120, test_drv_v1_not_recorded);
		test_case(s, "driver:lookups", 120, test_drv_lookups_untouched);
		test_loop(s, "driver:meminfo", 120, test_drv_meminfo, 2);
		test_case(s, "driver:vmm", 120, test_drv_vmm_single_alloc_and_free);
		test_case(s, "driver:analysis", 120, test_drv_analysis_per_device);

		test_rows(s, "snapshot:device-changes", 120, test_snapshot_followers, 0,
		          FOLLOW_RUNTIME_CASE);
		test_rows(s, "snapshot:sequence", 120, test_exact_records, EXACT_SNAPSHOTS,
		          EXACT_SNAPSHOTS + 1);
		test_rows(s, "snapshot:runtime-with-context", 120, test_snapshot_followers,
		          FOLLOW_RUNTIME_CASE, FOLLOW_RUNTIME_CASE + 1);
	} else {
		fprintf(stderr, "test-cuda: skipped: the driver programs are missing\n");
	}
	/* The helper program is test-cuda itself: always there. */
	test_rows(s, "entry-point:records", 120, test_exact_records, EXACT_ENTRY, EXACT_SNAPSHOTS);
	test_case(s, "entry-point:wrapped-objects", 120, test_entry_point_wrapped_objects);
}

TEST_SUITE(preload_order_suite, "preload order")
{
	static const char *const rtld[] = {"rtld-next-lib.so", "rtld-next-prog", NULL};
	if (all_present(rtld))
		test_case(s, "preload-order:rtld-next", 120, test_rtld_next_after_probe);
	else
		fprintf(stderr, "test-cuda: skipped: rtld-next-lib.so, rtld-next-prog missing\n");
}

/*
 * `test-cuda entry-point` runs the helper program; otherwise the paths
 * meson passes and the fakes must be there (77, skipped, without them).
 */
static int cuda_setup(int argc, char **argv)
{
	static const char *const fakes[] = {"lib/libcudart.so.13", "lib/libcuda.so.1", NULL};

	if (argc == 2 && !strcmp(argv[1], "entry-point"))
		return entry_point_prog();
	fixtures = getenv("CUDA_TEST_FIXTURES");
	probe_path = getenv("CUDA_TEST_PROBE");
	if (!fixtures || !*fixtures || !probe_path || !*probe_path) {
		fprintf(stderr, "set CUDA_TEST_FIXTURES and CUDA_TEST_PROBE (meson test does)\n");
		return 77;
	}
	if (access(probe_path, R_OK)) {
		fprintf(stderr, "test-cuda: %s: %s\n", probe_path, strerror(errno));
		return EXIT_FAILURE;
	}
	ssize_t n = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);
	if (n <= 0) {
		fprintf(stderr, "test-cuda: /proc/self/exe: %s\n", strerror(errno));
		return EXIT_FAILURE;
	}
	self_exe[n] = '\0';
	for (const char *const *f = fakes; *f; f++) {
		char path[PATH_MAX];
		snprintf(path, sizeof(path), "%s/%s", fixtures, *f);
		if (access(path, R_OK)) {
			fprintf(stderr, "test-cuda: no %s\n", path);
			fprintf(stderr, "test-cuda: nothing to run in %s (run tests/cuda/build.sh)\n",
			        fixtures);
			return 77;
		}
	}
	/* The failures' messages show the records around a difference: room for them. */
	check_set_max_msg_size(1 << 16);
	return TEST_GO_ON;
}

TEST_MAIN_SETUP(cuda_setup, runtime_suite, driver_suite, preload_order_suite);
