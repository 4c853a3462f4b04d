/* SPDX-License-Identifier: MIT */
/*
 * The recording session: what the format asks of a producer (spans,
 * categories, defaults, tags) plus the file
 * handling (O_EXCL, directories, /dev/full, FIFOs) and sticky errors.
 * Written lines are read back with cJSON.
 */
#include <check.h>
#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgtrace.h"
#include "test-main.h"

/* ------------------------------------------------------------------ */
/* Helpers                                                             */
/* ------------------------------------------------------------------ */

static char tmpdir[256];

static void make_tmpdir(void)
{
	const char *base = getenv("TMPDIR");
	snprintf(tmpdir, sizeof(tmpdir), "%s/cgprobe-session-XXXXXX", base ? base : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	return remove(path);
}

static void remove_tmpdir(void)
{
	ck_assert_int_eq(nftw(tmpdir, remove_entry, 16, FTW_DEPTH | FTW_PHYS), 0);
}

static char *tmp_path(const char *name)
{
	static char path[512];
	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	return path;
}

struct lines {
	cJSON *v[4096];
	char *text[4096];
	size_t n;
	bool ends_with_newline;
};

static void parse_lines(struct lines *l, char *data, size_t len)
{
	l->n = 0;
	l->ends_with_newline = len && data[len - 1] == '\n';
	char *p = data, *end = data + len;
	while (p < end) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		ck_assert_uint_lt(l->n, 4096);
		l->text[l->n] = strndup(p, n);
		l->v[l->n] = cJSON_ParseWithLength(p, n);
		ck_assert_msg(l->v[l->n] != NULL, "line %zu is not JSON: %.*s", l->n + 1, (int)n, p);
		l->n++;
		p += n + 1;
	}
}

static char *read_all_fd(int fd, size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);
	for (;;) {
		if (n == cap)
			buf = realloc(buf, cap *= 2);
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		ck_assert_int_ge(r, 0);
		if (r == 0)
			break;
		n += (size_t)r;
	}
	*len = n;
	return buf;
}

static void read_lines(struct lines *l, const char *path)
{
	int fd = open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	size_t len;
	char *data = read_all_fd(fd, &len);
	close(fd);
	parse_lines(l, data, len);
	free(data);
}

static void free_lines(struct lines *l)
{
	for (size_t i = 0; i < l->n; i++) {
		cJSON_Delete(l->v[i]);
		free(l->text[i]);
	}
	l->n = 0;
}

static const char *str(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static bool has(const cJSON *o, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(o, key) != NULL;
}

/* Integers here stay below 2^53, so cJSON's double holds them exactly. */
static double num(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	ck_assert_msg(cJSON_IsNumber(v), "%s is not a number", key);
	return v->valuedouble;
}

static bool flag(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	ck_assert_msg(cJSON_IsBool(v), "%s is not a bool", key);
	return cJSON_IsTrue(v);
}

static const char *kind(const cJSON *o)
{
	return str(o, "kind");
}

/* Index of the n-th (0-based) line of a kind, or -1. */
static int find_kind(const struct lines *l, const char *k, int nth)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(kind(l->v[i]), k) == 0 && nth-- == 0)
			return (int)i;
	return -1;
}

static int count_kind(const struct lines *l, const char *k)
{
	int n = 0;
	for (size_t i = 0; i < l->n; i++)
		n += strcmp(kind(l->v[i]), k) == 0;
	return n;
}

static const cJSON *span_end_of(const struct lines *l, const char *id)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(kind(l->v[i]), "span_end") == 0 && strcmp(str(l->v[i], "id"), id) == 0)
			return l->v[i];
	return NULL;
}

static struct cgtrace_run training(const char *entrypoint, uint64_t capture_step,
				   const char *device)
{
	return (struct cgtrace_run){
		.entrypoint = entrypoint,
		.phase = CGTRACE_PHASE_TRAIN,
		.capture_step = capture_step,
		.device = device,
		.timing_mode = CGTRACE_TIMING_HOST,
	};
}

static void sleep_us(long us)
{
	struct timespec ts = {0, us * 1000};
	nanosleep(&ts, NULL);
}

/* The trace the test's session writes (open_trace): a file in its directory. */
static char trace_path[512];

static struct cgtrace_session *open_trace(const char *name, const struct cgtrace_run *run)
{
	snprintf(trace_path, sizeof(trace_path), "%s/%s", tmpdir, name);
	struct cgtrace_session *s;
	ck_assert_int_eq(cgtrace_session_open(&s, trace_path, run), 0);
	return s;
}

/* A session of training(entrypoint, capture_step, device) writing the test's trace name. */
static struct cgtrace_session *open_training(const char *name, const char *entrypoint,
					     uint64_t capture_step, const char *device)
{
	struct cgtrace_run run = training(entrypoint, capture_step, device);
	return open_trace(name, &run);
}

/* The session finished (0), its trace read back into l. */
static void finish_and_read(struct cgtrace_session *s, struct lines *l)
{
	ck_assert_int_eq(cgtrace_session_finish(s), 0);
	read_lines(l, trace_path);
}

/* A span begun (0), its id. */
static uint64_t begin(struct cgtrace_session *s, const char *name, enum cgtrace_span_kind kind,
		      enum cgtrace_step step, bool measured)
{
	uint64_t id;
	ck_assert_int_eq(cgtrace_session_begin_span(s, name, kind, step, measured, &id), 0);
	return id;
}

/* ------------------------------------------------------------------ */
/* What the format asks of a producer                                  */
/* ------------------------------------------------------------------ */

START_TEST(nested_spans_emit_parent_hierarchy_and_durations)
{
	struct cgtrace_session *s = open_training("nested.jsonl", "model::forward", 1, "cpu");
	ck_assert_uint_eq(cgtrace_session_current_span(s), 1);

	uint64_t outer = begin(s, "Model::forward", CGTRACE_SPAN_FUNCTION, CGTRACE_STEP_NONE, true);
	sleep_us(50);
	uint64_t inner = begin(s, "matmul", CGTRACE_SPAN_OP, CGTRACE_STEP_NONE, false);
	ck_assert_uint_eq(outer, 2);
	ck_assert_uint_eq(inner, 3);
	ck_assert_uint_eq(cgtrace_session_current_span(s), 3);
	sleep_us(50);
	ck_assert_int_eq(cgtrace_session_end_span(s, inner), 0);
	ck_assert_int_eq(cgtrace_session_end_span(s, outer), 0);
	ck_assert_uint_eq(cgtrace_session_current_span(s), 1);

	const char *inputs[] = {"a", "b"};
	const uint64_t shape[] = {8, 8};
	struct cgtrace_op_record op = {
		.op_name = "matmul",
		.inputs = inputs,
		.n_inputs = 2,
		.output = "c",
		.shape = shape,
		.ndim = 2,
		.dtype = "f32",
		.device = "cpu",
		.duration_ns = 1200,
	};
	ck_assert_int_eq(cgtrace_session_record_op(s, inner, &op), 0);

	struct lines l;
	finish_and_read(s, &l);
	ck_assert(l.ends_with_newline);
	ck_assert_str_eq(kind(l.v[0]), "meta");
	ck_assert_str_eq(str(l.v[0], "entrypoint"), "model::forward");

	ck_assert_int_eq(count_kind(&l, "span_start"), 3);
	const cJSON *s1 = l.v[find_kind(&l, "span_start", 0)];
	const cJSON *s2 = l.v[find_kind(&l, "span_start", 1)];
	const cJSON *s3 = l.v[find_kind(&l, "span_start", 2)];
	ck_assert_str_eq(str(s1, "id"), "s1");
	ck_assert_str_eq(str(s1, "name"), "model::forward");
	ck_assert(!has(s1, "parent_id"));
	ck_assert_double_eq(num(s1, "start_ns"), 0);
	ck_assert_str_eq(str(s1, "span_kind"), "function");
	ck_assert(!flag(s1, "measured"));
	ck_assert_str_eq(str(s2, "id"), "s2");
	ck_assert_str_eq(str(s2, "name"), "Model::forward");
	ck_assert_str_eq(str(s2, "parent_id"), "s1");
	ck_assert(flag(s2, "measured"));
	ck_assert_str_eq(str(s3, "id"), "s3");
	ck_assert_str_eq(str(s3, "name"), "matmul");
	ck_assert_str_eq(str(s3, "parent_id"), "s2");
	ck_assert_str_eq(str(s3, "span_kind"), "op");
	ck_assert(!has(s3, "step"));
	ck_assert_double_ge(num(s3, "start_ns"), num(s2, "start_ns") + 50000);

	/* Ends come innermost first; the root's comes last, at finish. */
	ck_assert_int_eq(count_kind(&l, "span_end"), 3);
	const cJSON *e3 = l.v[find_kind(&l, "span_end", 0)];
	const cJSON *e2 = l.v[find_kind(&l, "span_end", 1)];
	const cJSON *e1 = l.v[l.n - 1];
	ck_assert_str_eq(str(e3, "id"), "s3");
	ck_assert_str_eq(str(e2, "id"), "s2");
	ck_assert_str_eq(kind(e1), "span_end");
	ck_assert_str_eq(str(e1, "id"), "s1");
	ck_assert_double_ge(num(e3, "duration_ns"), 50000);
	ck_assert_double_ge(num(e2, "duration_ns"), num(e3, "duration_ns") + 50000);
	ck_assert_double_ge(num(e1, "duration_ns"), num(e2, "duration_ns"));

	ck_assert_int_eq(count_kind(&l, "op"), 1);
	const cJSON *o = l.v[find_kind(&l, "op", 0)];
	ck_assert_str_eq(str(o, "span_id"), "s3");
	ck_assert_double_eq(num(o, "storage_bytes"), 8 * 8 * 4);
	ck_assert_double_gt(num(o, "timestamp_ns"), 0);
	ck_assert_ptr_nonnull(strstr(l.text[find_kind(&l, "op", 0)],
				     "\"inputs\":[\"a\",\"b\"],\"output\":\"c\",\"shape\":[8,8],"
				     "\"dtype\":\"f32\",\"device\":\"cpu\",\"duration_ns\":1200,"));
	/* Op metadata must not fabricate tensor lifetimes. */
	ck_assert_int_eq(count_kind(&l, "memory"), 0);
	free_lines(&l);
}
END_TEST

START_TEST(record_gradient_round_trips)
{
	struct cgtrace_session *s = open_training("gradient.jsonl", "train::loss", 1, "cpu");
	double norm = 0.42, nan = NAN;
	ck_assert_int_eq(cgtrace_session_record_gradient(s, "vb", "encoder.weight",
							 CGTRACE_GRAD_PRESENT, &norm),
			 0);
	ck_assert_int_eq(cgtrace_session_record_gradient(s, "vb", "decoder.bias",
							 CGTRACE_GRAD_NON_FINITE, &nan),
			 0);
	ck_assert_int_eq(cgtrace_session_record_gradient(s, "vb", "head", CGTRACE_GRAD_MISSING,
							 NULL),
			 0);
	ck_assert_int_eq(cgtrace_session_record_gradient(s, "vb", "x", (enum cgtrace_grad_state)9,
							 NULL),
			 -EINVAL);

	struct lines l;
	finish_and_read(s, &l);
	ck_assert_int_eq(count_kind(&l, "gradient"), 3);
	int g = find_kind(&l, "gradient", 0);
	ck_assert_str_eq(l.text[g], "{\"kind\":\"gradient\",\"event_id\":\"gradient-1\","
				    "\"root\":\"vb\",\"key\":\"encoder.weight\","
				    "\"state\":\"present\",\"norm\":0.42}");
	g = find_kind(&l, "gradient", 1);
	ck_assert_str_eq(l.text[g], "{\"kind\":\"gradient\",\"event_id\":\"gradient-2\","
				    "\"root\":\"vb\",\"key\":\"decoder.bias\","
				    "\"state\":\"non_finite\"}");
	g = find_kind(&l, "gradient", 2);
	ck_assert_str_eq(str(l.v[g], "event_id"), "gradient-3");
	ck_assert_str_eq(str(l.v[g], "state"), "missing");
	free_lines(&l);
}
END_TEST

START_TEST(capture_step_zero_rejected)
{
	const char *path = tmp_path("zero.jsonl");
	struct cgtrace_run run = training("train::loss", 0, "cpu");
	struct cgtrace_session *s = (struct cgtrace_session *)1;
	ck_assert_int_eq(cgtrace_session_open(&s, path, &run), -EINVAL);
	ck_assert_ptr_null(s);
	struct stat st;
	ck_assert_int_eq(stat(path, &st), -1); /* nothing created */
	ck_assert_int_eq(cgtrace_session_open_fd(&s, 1, &run), -EINVAL);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Meta                                                                */
/* ------------------------------------------------------------------ */

static void utc_now(char out[32])
{
	time_t t = time(NULL);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(out, 32, "%Y-%m-%dT%H:%M:%S", &tm);
}

START_TEST(meta_defaults)
{
	char before[32], after[32];
	utc_now(before);
	struct cgtrace_session *s = open_training("meta.jsonl", "demo::train::loss", 3, "cuda:0");
	utc_now(after);

	struct lines l;
	finish_and_read(s, &l);
	ck_assert_uint_eq(l.n, 3);
	const cJSON *m = l.v[0];
	ck_assert_str_eq(str(m, "schema"), "candle-graph/trace/6");
	char want_prefix[64];
	snprintf(want_prefix, sizeof(want_prefix), "run-%d-", (int)getpid());
	ck_assert_int_eq(strncmp(str(m, "run_id"), want_prefix, strlen(want_prefix)), 0);
	ck_assert_uint_ge(strlen(str(m, "run_id")), strlen(want_prefix) + 19);
	ck_assert_str_eq(str(m, "correlation_id"), "demo::train::loss/update-3");
	ck_assert_str_eq(str(m, "phase"), "train");
	ck_assert_double_eq(num(m, "capture_step"), 3);
	ck_assert_double_eq(num(m, "warmup_steps"), 2);
	ck_assert_str_eq(str(m, "device"), "cuda:0");
	ck_assert(!flag(m, "measured_region_device_synchronized"));
	ck_assert_str_eq(str(m, "timing_mode"), "host");
	ck_assert(!has(m, "candle_version"));
	ck_assert_ptr_nonnull(strstr(l.text[0], "\"tags\":{}"));

	/* `2026-08-04T18:00:00.123Z`, between the clock readings around open. */
	const char *ts = str(m, "timestamp");
	ck_assert_uint_eq(strlen(ts), 24);
	ck_assert(ts[19] == '.' && ts[23] == 'Z');
	for (int i = 20; i < 23; i++)
		ck_assert(ts[i] >= '0' && ts[i] <= '9');
	ck_assert_int_ge(strncmp(ts, before, 19), 0);
	ck_assert_int_le(strncmp(ts, after, 19), 0);

	/* The exact key order of a meta line. */
	const char *order[] = {"kind",	      "schema",	      "run_id",
			       "correlation_id", "entrypoint",	      "phase",
			       "timestamp",      "capture_step",	      "warmup_steps",
			       "device",	      "measured_region_device_synchronized",
			       "timing_mode",    "tags"};
	const cJSON *c = m->child;
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++, c = c->next)
		ck_assert_str_eq(c->string, order[i]);
	ck_assert_ptr_null(c);
	free_lines(&l);
}
END_TEST

START_TEST(meta_explicit_fields_and_tags)
{
	const struct cgtrace_tag tags[] = {
		{"seed", "1"}, {"host", "a"}, {"seed", "2"}, {"Z", "z"}, {"host", "b"}, {"seed", "3"},
	};
	struct cgtrace_run run = training("infer::step", 5, "cpu");
	run.phase = CGTRACE_PHASE_INFER;
	run.correlation_id = "corr-42";
	run.warmup_steps_set = true;
	run.warmup_steps = 0;
	run.measured_region_device_synchronized = true;
	run.timing_mode = CGTRACE_TIMING_DEVICE_SYNCHRONIZED;
	run.tags = tags;
	run.n_tags = 6;
	run.candle_version = "0.8.0";
	struct cgtrace_session *s = open_trace("meta2.jsonl", &run);

	struct lines l;
	finish_and_read(s, &l);
	const cJSON *m = l.v[0];
	ck_assert_str_eq(str(m, "correlation_id"), "corr-42");
	ck_assert_str_eq(str(m, "phase"), "infer");
	ck_assert_double_eq(num(m, "warmup_steps"), 0);
	ck_assert(flag(m, "measured_region_device_synchronized"));
	ck_assert_str_eq(str(m, "timing_mode"), "device_synchronized");
	ck_assert_str_eq(str(m, "candle_version"), "0.8.0");
	/* Sorted by key; a repeated key keeps its last value. */
	ck_assert_ptr_nonnull(
		strstr(l.text[0], "\"tags\":{\"Z\":\"z\",\"host\":\"b\",\"seed\":\"3\"},"
				  "\"candle_version\":\"0.8.0\"}"));
	free_lines(&l);
}
END_TEST

START_TEST(bad_run_rejected)
{
	struct cgtrace_session *s;
	struct cgtrace_run run = training(NULL, 1, "cpu");
	ck_assert_int_eq(cgtrace_session_open_fd(&s, 1, &run), -EINVAL);
	run = training("x", 1, NULL);
	ck_assert_int_eq(cgtrace_session_open_fd(&s, 1, &run), -EINVAL);
	run = training("x", 1, "cpu");
	run.phase = (enum cgtrace_phase)7;
	ck_assert_int_eq(cgtrace_session_open_fd(&s, 1, &run), -EINVAL);
	run = training("x", 1, "cpu");
	run.n_tags = 1;
	ck_assert_int_eq(cgtrace_session_open_fd(&s, 1, &run), -EINVAL);
	const struct cgtrace_tag bad[] = {{"k", NULL}};
	run.tags = bad;
	ck_assert_int_eq(cgtrace_session_open_fd(&s, 1, &run), -EINVAL);
	ck_assert_int_eq(cgtrace_session_open_fd(&s, -1, &run), -EBADF);
	ck_assert_int_eq(cgtrace_session_open(&s, NULL, &run), -EINVAL);
	ck_assert_int_eq(cgtrace_session_open(&s, "x", NULL), -EINVAL);
	ck_assert_int_eq(cgtrace_session_finish(NULL), -EINVAL);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Spans                                                               */
/* ------------------------------------------------------------------ */

START_TEST(finish_with_open_span_is_busy)
{
	struct cgtrace_session *s = open_training("busy.jsonl", "train::loss", 1, "cpu");
	begin(s, "forward", CGTRACE_SPAN_MODULE, CGTRACE_STEP_FORWARD, false);
	ck_assert_int_eq(cgtrace_session_finish(s), -EBUSY);

	struct lines l;
	read_lines(&l, trace_path);
	ck_assert(l.ends_with_newline);
	const cJSON *last = l.v[l.n - 1];
	ck_assert_str_eq(kind(last), "span_end");
	ck_assert_str_eq(str(last, "id"), "s1");
	ck_assert_ptr_null(span_end_of(&l, "s2")); /* stays unclosed */
	ck_assert_str_eq(str(l.v[find_kind(&l, "span_start", 1)], "step"), "forward");
	free_lines(&l);
}
END_TEST

START_TEST(end_span_must_be_innermost)
{
	struct cgtrace_session *s = open_training("order.jsonl", "train::loss", 1, "cpu");
	ck_assert_int_eq(cgtrace_session_end_span(s, 1), -EINVAL); /* the root is finish's */
	uint64_t a = begin(s, "a", CGTRACE_SPAN_FUNCTION, CGTRACE_STEP_NONE, false);
	uint64_t b = begin(s, "b", CGTRACE_SPAN_FUNCTION, CGTRACE_STEP_NONE, false);
	ck_assert_int_eq(cgtrace_session_end_span(s, a), -EINVAL);
	ck_assert_int_eq(cgtrace_session_end_span(s, 99), -EINVAL);
	ck_assert_uint_eq(cgtrace_session_current_span(s), b);
	/* Not sticky: the session carries on. */
	ck_assert_int_eq(cgtrace_session_flush(s), 0);
	ck_assert_int_eq(cgtrace_session_end_span(s, b), 0);
	ck_assert_int_eq(cgtrace_session_end_span(s, b), -EINVAL); /* already ended */
	ck_assert_int_eq(cgtrace_session_end_span(s, a), 0);
	ck_assert_int_eq(cgtrace_session_begin_span(s, NULL, CGTRACE_SPAN_FUNCTION,
						     CGTRACE_STEP_NONE, false, NULL),
			 -EINVAL);
	ck_assert_int_eq(cgtrace_session_begin_span(s, "x", (enum cgtrace_span_kind)3,
						     CGTRACE_STEP_NONE, false, NULL),
			 -EINVAL);
	ck_assert_int_eq(cgtrace_session_begin_span(s, "x", CGTRACE_SPAN_OP,
						     (enum cgtrace_step)4, false, NULL),
			 -EINVAL);

	struct lines l;
	finish_and_read(s, &l);
	/* meta, s1, a, b, end b, end a, end s1: the failed calls wrote nothing. */
	ck_assert_uint_eq(l.n, 7);
	ck_assert_str_eq(str(l.v[4], "id"), "s3");
	ck_assert_str_eq(str(l.v[5], "id"), "s2");
	ck_assert_str_eq(str(l.v[6], "id"), "s1");
	free_lines(&l);
}
END_TEST

START_TEST(deep_nesting)
{
	struct cgtrace_session *s = open_training("deep.jsonl", "deep", 1, "cpu");
	uint64_t ids[100];
	for (int i = 0; i < 100; i++)
		ids[i] = begin(s, "n", CGTRACE_SPAN_MODULE, CGTRACE_STEP_NONE, false);
	for (int i = 99; i >= 0; i--)
		ck_assert_int_eq(cgtrace_session_end_span(s, ids[i]), 0);
	struct lines l;
	finish_and_read(s, &l);
	ck_assert_uint_eq(l.n, 1 + 2 * 101);
	ck_assert_str_eq(str(l.v[101], "id"), "s101");
	ck_assert_str_eq(str(l.v[101], "parent_id"), "s100");
	free_lines(&l);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Records and categories                                              */
/* ------------------------------------------------------------------ */

static void alloc(struct cgtrace_session *s, const char *tensor, enum cgtrace_category cat)
{
	/* Four f32 on the cpu. */
	const uint64_t shape[] = {4};
	struct cgtrace_memory_record m = {.tensor_id = tensor, .device = "cpu", .bytes = 16,
					  .shape = shape, .ndim = 1, .dtype = "f32", .category = cat};
	ck_assert_int_eq(cgtrace_session_record_alloc(s, cgtrace_session_current_span(s), &m),
			 0);
}

static void tensor(struct cgtrace_session *s, const char *id, bool requires_grad)
{
	struct cgtrace_tensor_record t = {
		.tensor_id = id,
		.dtype = "f16",
		.device = "cpu",
		.requires_grad = requires_grad,
		.category = CGTRACE_CAT_AUTO,
	};
	ck_assert_int_eq(cgtrace_session_record_tensor(s, cgtrace_session_current_span(s), &t),
			 0);
}

static const char *category_of(const struct lines *l, const char *k, const char *id)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(kind(l->v[i]), k) == 0 && strcmp(str(l->v[i], "tensor_id"), id) == 0)
			return str(l->v[i], "category");
	return NULL;
}

START_TEST(auto_categories_follow_steps)
{
	struct cgtrace_session *s = open_training("cat.jsonl", "train", 1, "cpu");
	alloc(s, "none", CGTRACE_CAT_AUTO);
	tensor(s, "w", true);
	tensor(s, "x", false);
	uint64_t fwd = begin(s, "fwd", CGTRACE_SPAN_FUNCTION, CGTRACE_STEP_FORWARD, false);
	alloc(s, "fwd", CGTRACE_CAT_AUTO);
	tensor(s, "fwd-w", true);
	ck_assert_int_eq(cgtrace_session_end_span(s, fwd), 0);
	uint64_t bwd = begin(s, "bwd", CGTRACE_SPAN_FUNCTION, CGTRACE_STEP_BACKWARD, false);
	/* A span without a step inherits the innermost step around it. */
	uint64_t inner = begin(s, "mm", CGTRACE_SPAN_OP, CGTRACE_STEP_NONE, false);
	alloc(s, "bwd", CGTRACE_CAT_AUTO);
	alloc(s, "explicit", CGTRACE_CAT_OTHER);
	ck_assert_int_eq(cgtrace_session_end_span(s, inner), 0);
	ck_assert_int_eq(cgtrace_session_end_span(s, bwd), 0);
	uint64_t opt = begin(s, "opt", CGTRACE_SPAN_FUNCTION, CGTRACE_STEP_OPTIMIZER, false);
	alloc(s, "opt", CGTRACE_CAT_AUTO);
	ck_assert_int_eq(cgtrace_session_end_span(s, opt), 0);

	struct cgtrace_memory_record bad = {.tensor_id = "t", .device = "cpu", .dtype = "f32",
					    .category = (enum cgtrace_category)17};
	ck_assert_int_eq(cgtrace_session_record_alloc(s, 1, &bad), -EINVAL);

	struct lines l;
	finish_and_read(s, &l);
	ck_assert_str_eq(category_of(&l, "memory", "none"), "activation");
	ck_assert_str_eq(category_of(&l, "tensor", "w"), "parameter");
	ck_assert_str_eq(category_of(&l, "tensor", "x"), "activation");
	ck_assert_str_eq(category_of(&l, "memory", "fwd"), "activation");
	ck_assert_str_eq(category_of(&l, "tensor", "fwd-w"), "activation");
	ck_assert_str_eq(category_of(&l, "memory", "bwd"), "gradient");
	ck_assert_str_eq(category_of(&l, "memory", "explicit"), "other");
	ck_assert_str_eq(category_of(&l, "memory", "opt"), "optimizer");
	int m = find_kind(&l, "memory", 3);
	ck_assert_str_eq(str(l.v[m], "span_id"), "s4");
	/* A tensor's storage is derived from shape x dtype: a scalar f16 is 2 bytes. */
	ck_assert_double_eq(num(l.v[find_kind(&l, "tensor", 0)], "storage_bytes"), 2);
	free_lines(&l);
}
END_TEST

START_TEST(memory_and_device_records)
{
	struct cgtrace_session *s = open_training("mem.jsonl", "train", 1, "cuda:0");
	const uint64_t shape[] = {32, 32};
	struct cgtrace_memory_record m = {
		.tensor_id = "t2",
		.op_name = "matmul",
		.device = "cpu",
		.bytes = 4096,
		.shape = shape,
		.ndim = 2,
		.dtype = "f32",
		.category = CGTRACE_CAT_ACTIVATION,
		.has_timestamp = true,
		.timestamp_ns = 1200,
	};
	ck_assert_int_eq(cgtrace_session_record_alloc(s, 1, &m), 0);
	m.op_name = NULL;
	m.has_timestamp = false;
	ck_assert_int_eq(cgtrace_session_record_free(s, 1, &m), 0);
	ck_assert_int_eq(cgtrace_session_record_alloc(s, 0, &m), -EINVAL);
	ck_assert_int_eq(cgtrace_session_record_alloc(s, 2, &m), -EINVAL); /* never opened */
	uint64_t reserved = 8192, ts = 77;
	ck_assert_int_eq(cgtrace_session_record_device_memory(s, "cuda:0", 100, 900, &reserved,
							      &ts),
			 0);
	ck_assert_int_eq(cgtrace_session_record_device_memory(s, "cuda:0", 1, 2, NULL, NULL), 0);
	ck_assert_int_eq(cgtrace_session_record_device_memory(s, NULL, 1, 2, NULL, NULL),
			 -EINVAL);

	struct cgtrace_op_record op = {.op_name = "add", .dtype = "weird", .device = "cpu",
				       .timestamp_ns = 5, .has_storage_bytes = true,
				       .storage_bytes = 123, .input_storage_bytes = 9};
	ck_assert_int_eq(cgtrace_session_record_op(s, 1, &op), 0);
	op.has_storage_bytes = false;
	ck_assert_int_eq(cgtrace_session_record_op(s, 1, &op), 0); /* unknown dtype: 0 */
	op.n_inputs = 1;
	ck_assert_int_eq(cgtrace_session_record_op(s, 1, &op), -EINVAL); /* inputs NULL */

	struct lines l;
	finish_and_read(s, &l);
	ck_assert_str_eq(l.text[find_kind(&l, "memory", 0)],
			 "{\"kind\":\"memory\",\"timestamp_ns\":1200,\"tensor_id\":\"t2\","
			 "\"span_id\":\"s1\",\"op_name\":\"matmul\",\"device\":\"cpu\","
			 "\"bytes\":4096,\"action\":\"alloc\",\"shape\":[32,32],\"dtype\":\"f32\","
			 "\"category\":\"activation\"}");
	const cJSON *f = l.v[find_kind(&l, "memory", 1)];
	ck_assert_str_eq(str(f, "action"), "free");
	ck_assert(!has(f, "op_name"));
	ck_assert_double_gt(num(f, "timestamp_ns"), 0);
	ck_assert_str_eq(l.text[find_kind(&l, "device_memory", 0)],
			 "{\"kind\":\"device_memory\",\"timestamp_ns\":77,\"device\":\"cuda:0\","
			 "\"used_bytes\":100,\"free_bytes\":900,\"reserved_bytes\":8192}");
	ck_assert(!has(l.v[find_kind(&l, "device_memory", 1)], "reserved_bytes"));
	ck_assert_str_eq(l.text[find_kind(&l, "op", 0)],
			 "{\"kind\":\"op\",\"span_id\":\"s1\",\"op_name\":\"add\",\"inputs\":[],"
			 "\"shape\":[],\"dtype\":\"weird\",\"device\":\"cpu\",\"duration_ns\":0,"
			 "\"timestamp_ns\":5,\"storage_bytes\":123,\"input_storage_bytes\":9}");
	ck_assert_double_eq(num(l.v[find_kind(&l, "op", 1)], "storage_bytes"), 0);
	free_lines(&l);
}
END_TEST

/* Enough lines to pass the sink's commit threshold several times. */
START_TEST(many_records)
{
	struct cgtrace_session *s = open_training("many.jsonl", "train", 1, "cpu");
	for (int i = 0; i < 4000; i++)
		alloc(s, "t", CGTRACE_CAT_AUTO);
	ck_assert_int_eq(cgtrace_session_finish(s), 0);
	int fd = open(trace_path, O_RDONLY);
	size_t len;
	char *data = read_all_fd(fd, &len);
	close(fd);
	size_t lines = 0;
	for (size_t i = 0; i < len; i++)
		lines += data[i] == '\n';
	ck_assert_uint_eq(lines, 4003);
	ck_assert_uint_gt(len, 3 * 65536);
	free(data);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Files                                                               */
/* ------------------------------------------------------------------ */

START_TEST(existing_regular_file_refused)
{
	const char *path = tmp_path("exists.jsonl");
	int fd = open(path, O_WRONLY | O_CREAT, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "keep\n", 5), 5);
	close(fd);
	struct cgtrace_run run = training("train", 1, "cpu");
	struct cgtrace_session *s;
	ck_assert_int_eq(cgtrace_session_open(&s, path, &run), -EEXIST);
	ck_assert_ptr_null(s);
	struct stat st;
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_size, 5); /* untouched */
	/* A directory is no character device either. */
	ck_assert_int_eq(cgtrace_session_open(&s, tmpdir, &run), -EEXIST);
}
END_TEST

START_TEST(missing_directories_created)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/a/b//c/trace.jsonl", tmpdir);
	struct cgtrace_run run = training("train", 1, "cpu");
	struct cgtrace_session *s;
	ck_assert_int_eq(cgtrace_session_open(&s, path, &run), 0);
	ck_assert_int_eq(cgtrace_session_finish(s), 0);
	struct stat st;
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert(S_ISREG(st.st_mode));
	ck_assert_int_gt(st.st_size, 0);

	/* A file where a directory should be. */
	snprintf(path, sizeof(path), "%s/a/b/c/trace.jsonl/x.jsonl", tmpdir);
	ck_assert_int_eq(cgtrace_session_open(&s, path, &run), -ENOTDIR);
}
END_TEST

START_TEST(dev_full_reports_enospc)
{
	struct cgtrace_run run = training("train", 1, "cpu");
	struct cgtrace_session *s;
	ck_assert_int_eq(cgtrace_session_open(&s, "/dev/full", &run), 0);
	ck_assert_int_eq(cgtrace_session_flush(s), -ENOSPC);
	/* Sticky: later calls report the first error. */
	ck_assert_int_eq(cgtrace_session_flush(s), -ENOSPC);
	struct cgtrace_memory_record m = {.tensor_id = "t", .device = "cpu", .dtype = "f32"};
	ck_assert_int_eq(cgtrace_session_record_alloc(s, 1, &m), -ENOSPC);
	/* A span still opens (0: it must be ended); its end reports the error. */
	uint64_t span = begin(s, "late", CGTRACE_SPAN_OP, CGTRACE_STEP_NONE, false);
	ck_assert_uint_eq(cgtrace_session_current_span(s), span);
	ck_assert_int_eq(cgtrace_session_end_span(s, span), -ENOSPC);
	ck_assert_uint_eq(cgtrace_session_current_span(s), 1);
	ck_assert_int_eq(cgtrace_session_finish(s), -ENOSPC);

	/* Without an explicit flush the error still surfaces at finish. */
	ck_assert_int_eq(cgtrace_session_open(&s, "/dev/full", &run), 0);
	begin(s, "x", CGTRACE_SPAN_FUNCTION, CGTRACE_STEP_NONE, false);
	ck_assert_int_eq(cgtrace_session_finish(s), -ENOSPC); /* before -EBUSY */
}
END_TEST

START_TEST(fifo_opened_as_is)
{
	const char *path = tmp_path("pipe");
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	pid_t child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		/* The reader: the trace must arrive whole, meta first, root end last. */
		int fd = open(path, O_RDONLY);
		if (fd < 0)
			_exit(2);
		size_t len = 0, cap = 1 << 20;
		char *buf = malloc(cap);
		ssize_t r;
		while ((r = read(fd, buf + len, cap - len)) > 0)
			len += (size_t)r;
		buf[len] = '\0';
		bool ok = strncmp(buf, "{\"kind\":\"meta\"", 14) == 0 && len > 2 &&
			  buf[len - 1] == '\n' &&
			  strstr(buf, "{\"kind\":\"span_end\",\"id\":\"s1\",\"duration_ns\":") &&
			  strstr(buf, "\"tensor_id\":\"through-fifo\"");
		_exit(ok ? 0 : 1);
	}
	struct cgtrace_run run = training("train", 1, "cpu");
	struct cgtrace_session *s;
	ck_assert_int_eq(cgtrace_session_open(&s, path, &run), 0);
	alloc(s, "through-fifo", CGTRACE_CAT_AUTO);
	ck_assert_int_eq(cgtrace_session_finish(s), 0);
	int status;
	ck_assert_int_eq(waitpid(child, &status, 0), child);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
}
END_TEST

START_TEST(open_fd_on_pipe)
{
	int p[2];
	ck_assert_int_eq(pipe(p), 0);
	struct cgtrace_run run = training("pipe::entry", 2, "cpu");
	struct cgtrace_session *s;
	ck_assert_int_eq(cgtrace_session_open_fd(&s, p[1], &run), 0);
	ck_assert_int_eq(cgtrace_session_flush(s), 0);
	ck_assert_int_eq(cgtrace_session_finish(s), 0); /* closes p[1] */
	size_t len;
	char *data = read_all_fd(p[0], &len);
	close(p[0]);
	struct lines l;
	parse_lines(&l, data, len);
	ck_assert_uint_eq(l.n, 3);
	ck_assert_str_eq(str(l.v[0], "correlation_id"), "pipe::entry/update-2");
	ck_assert_str_eq(str(l.v[1], "name"), "pipe::entry");
	ck_assert_str_eq(str(l.v[2], "id"), "s1");
	free_lines(&l);
	free(data);
}
END_TEST

TEST_SUITE(session_suite, "session")
{
	TCase *cases[] = {
		test_case(s, "session:spans", 60, nested_spans_emit_parent_hierarchy_and_durations,
		          finish_with_open_span_is_busy, end_span_must_be_innermost, deep_nesting),
		test_case(s, "session:meta", 60, capture_step_zero_rejected, meta_defaults,
		          meta_explicit_fields_and_tags, bad_run_rejected),
		test_case(s, "session:records", 60, record_gradient_round_trips,
		          auto_categories_follow_steps, memory_and_device_records, many_records),
		test_case(s, "session:files", 60, existing_regular_file_refused,
		          missing_directories_created, dev_full_reports_enospc, fifo_opened_as_is,
		          open_fd_on_pipe),
	};
	/* Each test has a directory of its own, removed after it. */
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		tcase_add_checked_fixture(cases[i], make_tmpdir, remove_tmpdir);
}

TEST_MAIN(session_suite);
