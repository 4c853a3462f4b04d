/* SPDX-License-Identifier: MIT */
/*
 * cg_jsonl_format golden lines for every kind, string escaping, UTF-8
 * repair (against a byte-at-a-time reference), and cg_rec_equal.
 */
#include <check.h>
#include <cJSON.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonl_format.h"
#include "names.h"
#include "record.h"
#include "test-main.h"
#include "xorshift.h"

/* ------------------------------------------------------------------ */
/* Helpers                                                             */
/* ------------------------------------------------------------------ */

/*
 * Check's ck_assert_* log every passing check through a file, which would
 * dominate the fuzz loops; those only call into Check on failure.
 */
#define EXPECT(cond, ...)                         \
	do {                                      \
		if (!(cond))                      \
			ck_abort_msg(__VA_ARGS__); \
	} while (0)

/* The formatted line as a NUL-terminated string the caller frees. */
static char *format(const struct cg_rec *r)
{
	struct cg_buf b = {0};
	cg_jsonl_format(&b, r);
	ck_assert_int_eq(b.err, 0);
	char *s = malloc(b.len + 1);
	ck_assert_ptr_nonnull(s);
	memcpy(s, b.p, b.len);
	s[b.len] = '\0';
	cg_buf_fini(&b);
	return s;
}

/* The formatted line must equal want followed by '\n' and parse as one JSON object. */
static void check_line(const struct cg_rec *r, const char *want)
{
	char *got = format(r);
	size_t n = strlen(got);
	ck_assert_uint_gt(n, 0);
	ck_assert_msg(got[n - 1] == '\n', "no newline: %s", got);
	got[n - 1] = '\0';
	ck_assert_msg(strcmp(got, want) == 0, "\n got: %s\nwant: %s", got, want);
	ck_assert_ptr_null(memchr(got, '\n', n - 1));
	cJSON *j = cJSON_Parse(got);
	ck_assert_msg(j && cJSON_IsObject(j), "not JSON: %s", got);
	cJSON_Delete(j);
	free(got);
}

static char *quote(const char *s, size_t n)
{
	struct cg_buf b = {0};
	cg_json_put_str(&b, s, n);
	EXPECT(b.err == 0, "put_str failed");
	char *out = malloc(b.len + 1);
	EXPECT(out != NULL, "malloc");
	if (b.len)
		memcpy(out, b.p, b.len);
	out[b.len] = '\0';
	EXPECT(b.len <= CG_JSON_STR_MAX(n), "%zu bytes for %zu", b.len, n);
	cg_buf_fini(&b);
	return out;
}

static void check_quote(const char *in, size_t n, const char *want)
{
	char *got = quote(in, n);
	ck_assert_msg(strcmp(got, want) == 0, "got %s want %s", got, want);
	free(got);
}

#define CHECK_QUOTE(in, want) check_quote((in), sizeof(in) - 1, (want))

static const uint64_t shape32[] = {32, 32};

static struct cg_rec memory_rec(void)
{
	struct cg_rec r = {.kind = CGTRACE_KIND_MEMORY};
	r.u.memory = (struct cg_rec_memory){
		.timestamp_ns = 1200,
		.tensor_id = CG_SV_LIT("t2"),
		.span_id = CG_SV_LIT("s2"),
		.op_name = CG_SV_LIT("matmul"),
		.device = CG_SV_LIT("cpu"),
		.bytes = 4096,
		.action = CGTRACE_ALLOC,
		.category = CGTRACE_CAT_ACTIVATION,
		.shape = shape32,
		.ndim = 2,
		.dtype = CG_SV_LIT("f32"),
	};
	return r;
}

/* ------------------------------------------------------------------ */
/* Golden lines                                                        */
/* ------------------------------------------------------------------ */

START_TEST(meta_lines)
{
	static const struct cg_tagv tags[] = {
		{CG_SV_LIT("zeta"), CG_SV_LIT("1")},
		{CG_SV_LIT("alpha"), CG_SV_LIT("two")},
		{CG_SV_LIT("Beta"), CG_SV_LIT("x\"y")},
		{CG_SV_LIT("alphabet"), CG_SV_LIT("")},
	};
	struct cg_rec r = {.kind = CGTRACE_KIND_META};
	r.u.meta = (struct cg_rec_meta){
		.schema = CG_SV_LIT("candle-graph/trace/6"),
		.run_id = CG_SV_LIT("run-1"),
		.correlation_id = CG_SV_LIT("demo/update-1"),
		.entrypoint = CG_SV_LIT("demo::train::loss"),
		.timestamp = CG_SV_LIT("2026-08-04T18:00:00.123Z"),
		.device = CG_SV_LIT("cpu"),
		.phase = CGTRACE_PHASE_TRAIN,
		.timing_mode = CGTRACE_TIMING_HOST,
		.capture_step = 1,
		.warmup_steps = 0,
	};
	check_line(&r, "{\"kind\":\"meta\",\"schema\":\"candle-graph/trace/6\",\"run_id\":\"run-1\","
		       "\"correlation_id\":\"demo/update-1\",\"entrypoint\":\"demo::train::loss\","
		       "\"phase\":\"train\",\"timestamp\":\"2026-08-04T18:00:00.123Z\","
		       "\"capture_step\":1,\"warmup_steps\":0,\"device\":\"cpu\","
		       "\"measured_region_device_synchronized\":false,\"timing_mode\":\"host\","
		       "\"tags\":{}}");

	r.u.meta.phase = CGTRACE_PHASE_INFER;
	r.u.meta.timing_mode = CGTRACE_TIMING_DEVICE_SYNCHRONIZED;
	r.u.meta.measured_region_device_synchronized = true;
	r.u.meta.capture_step = 18446744073709551615u;
	r.u.meta.warmup_steps = 41;
	r.u.meta.tags = tags;
	r.u.meta.n_tags = 4;
	r.u.meta.candle_version = CG_SV_LIT("0.8.0");
	/* Tags bytewise by key: upper case before lower case, a prefix first. */
	check_line(&r, "{\"kind\":\"meta\",\"schema\":\"candle-graph/trace/6\",\"run_id\":\"run-1\","
		       "\"correlation_id\":\"demo/update-1\",\"entrypoint\":\"demo::train::loss\","
		       "\"phase\":\"infer\",\"timestamp\":\"2026-08-04T18:00:00.123Z\","
		       "\"capture_step\":18446744073709551615,\"warmup_steps\":41,\"device\":\"cpu\","
		       "\"measured_region_device_synchronized\":true,"
		       "\"timing_mode\":\"device_synchronized\","
		       "\"tags\":{\"Beta\":\"x\\\"y\",\"alpha\":\"two\",\"alphabet\":\"\",\"zeta\":\"1\"},"
		       "\"candle_version\":\"0.8.0\"}");
}
END_TEST

/* More tags than the formatter sorts on the stack. */
START_TEST(meta_many_tags)
{
	enum { N = 300 };
	static char keys[N][16];
	static struct cg_tagv tags[N];
	for (int i = 0; i < N; i++) {
		int k = (i * 7919) % N; /* a permutation of 0..N-1 */
		snprintf(keys[i], sizeof(keys[i]), "k%03d", k);
		tags[i].key = cg_sv_c(keys[i]);
		tags[i].value = cg_sv_c(keys[i]);
	}
	struct cg_rec r = {.kind = CGTRACE_KIND_META};
	r.u.meta.schema = CG_SV_LIT("candle-graph/trace/6");
	r.u.meta.tags = tags;
	r.u.meta.n_tags = N;
	char *line = format(&r);
	cJSON *j = cJSON_Parse(line);
	ck_assert_ptr_nonnull(j);
	cJSON *t = cJSON_GetObjectItemCaseSensitive(j, "tags");
	ck_assert_int_eq(cJSON_GetArraySize(t), N);
	int i = 0;
	for (cJSON *c = t->child; c; c = c->next, i++) {
		char want[16];
		snprintf(want, sizeof(want), "k%03d", i);
		ck_assert_str_eq(c->string, want);
		ck_assert_str_eq(c->valuestring, want);
	}
	cJSON_Delete(j);
	free(line);
}
END_TEST

START_TEST(span_lines)
{
	struct cg_rec r = {.kind = CGTRACE_KIND_SPAN_START};
	r.u.span_start = (struct cg_rec_span_start){
		.id = CG_SV_LIT("s1"),
		.name = CG_SV_LIT("demo::train::loss"),
		.span_kind = CGTRACE_SPAN_FUNCTION,
	};
	check_line(&r, "{\"kind\":\"span_start\",\"id\":\"s1\",\"name\":\"demo::train::loss\","
		       "\"start_ns\":0,\"span_kind\":\"function\",\"measured\":false}");

	r.u.span_start = (struct cg_rec_span_start){
		.id = CG_SV_LIT("s2"),
		.parent_id = CG_SV_LIT("s1"),
		.name = CG_SV_LIT("matmul"),
		.start_ns = 10,
		.span_kind = CGTRACE_SPAN_OP,
		.measured = true,
		.step = CGTRACE_STEP_BACKWARD,
	};
	check_line(&r, "{\"kind\":\"span_start\",\"id\":\"s2\",\"parent_id\":\"s1\","
		       "\"name\":\"matmul\",\"start_ns\":10,\"span_kind\":\"op\",\"measured\":true,"
		       "\"step\":\"backward\"}");
	r.u.span_start.span_kind = CGTRACE_SPAN_MODULE;
	r.u.span_start.step = CGTRACE_STEP_FORWARD;
	r.u.span_start.parent_id = CG_SV_LIT(""); /* present but empty is still written */
	check_line(&r, "{\"kind\":\"span_start\",\"id\":\"s2\",\"parent_id\":\"\","
		       "\"name\":\"matmul\",\"start_ns\":10,\"span_kind\":\"module\",\"measured\":true,"
		       "\"step\":\"forward\"}");
	r.u.span_start.step = CGTRACE_STEP_OPTIMIZER;
	r.u.span_start.parent_id = CG_SV_NONE;
	check_line(&r, "{\"kind\":\"span_start\",\"id\":\"s2\",\"name\":\"matmul\",\"start_ns\":10,"
		       "\"span_kind\":\"module\",\"measured\":true,\"step\":\"optimizer\"}");

	struct cg_rec e = {.kind = CGTRACE_KIND_SPAN_END};
	e.u.span_end = (struct cg_rec_span_end){CG_SV_LIT("s2"), 1200};
	check_line(&e, "{\"kind\":\"span_end\",\"id\":\"s2\",\"duration_ns\":1200}");
}
END_TEST

START_TEST(op_lines)
{
	static const struct cg_sv inputs[] = {CG_SV_LIT("t0"), CG_SV_LIT("t1")};
	struct cg_rec r = {.kind = CGTRACE_KIND_OP};
	r.u.op = (struct cg_rec_op){
		.span_id = CG_SV_LIT("span-op"),
		.op_name = CG_SV_LIT("matmul"),
		.inputs = inputs,
		.n_inputs = 2,
		.output = CG_SV_LIT("t2"),
		.shape = shape32,
		.ndim = 2,
		.dtype = CG_SV_LIT("f32"),
		.device = CG_SV_LIT("cpu"),
		.duration_ns = 1200,
		.timestamp_ns = 1300,
		.has_storage_bytes = true,
		.storage_bytes = 4096,
		.input_storage_bytes = 8192,
	};
	check_line(&r, "{\"kind\":\"op\",\"span_id\":\"span-op\",\"op_name\":\"matmul\","
		       "\"inputs\":[\"t0\",\"t1\"],\"output\":\"t2\",\"shape\":[32,32],"
		       "\"dtype\":\"f32\",\"device\":\"cpu\",\"duration_ns\":1200,"
		       "\"timestamp_ns\":1300,\"storage_bytes\":4096,\"input_storage_bytes\":8192}");
	r.u.op.n_inputs = 0;
	r.u.op.inputs = NULL;
	r.u.op.output = CG_SV_NONE;
	r.u.op.shape = NULL;
	r.u.op.ndim = 0;
	r.u.op.has_storage_bytes = false;
	r.u.op.storage_bytes = 77; /* ignored without the flag */
	check_line(&r, "{\"kind\":\"op\",\"span_id\":\"span-op\",\"op_name\":\"matmul\","
		       "\"inputs\":[],\"shape\":[],\"dtype\":\"f32\",\"device\":\"cpu\","
		       "\"duration_ns\":1200,\"timestamp_ns\":1300,\"input_storage_bytes\":8192}");
}
END_TEST

START_TEST(tensor_lines)
{
	static const uint64_t shape[] = {0, 18446744073709551615u, 1};
	struct cg_rec r = {.kind = CGTRACE_KIND_TENSOR};
	r.u.tensor = (struct cg_rec_tensor){
		.span_id = CG_SV_LIT("s3"),
		.tensor_id = CG_SV_LIT("w"),
		.shape = shape,
		.ndim = 3,
		.dtype = CG_SV_LIT("bf16"),
		.device = CG_SV_LIT("cuda:0"),
		.requires_grad = true,
		.has_storage_bytes = true,
		.storage_bytes = 0,
		.category = CGTRACE_CAT_PARAMETER,
	};
	check_line(&r, "{\"kind\":\"tensor\",\"span_id\":\"s3\",\"tensor_id\":\"w\","
		       "\"shape\":[0,18446744073709551615,1],\"dtype\":\"bf16\",\"device\":\"cuda:0\","
		       "\"requires_grad\":true,\"storage_bytes\":0,\"category\":\"parameter\"}");
	r.u.tensor.has_storage_bytes = false;
	r.u.tensor.requires_grad = false;
	r.u.tensor.category = CGTRACE_CAT_OPTIMIZER;
	check_line(&r, "{\"kind\":\"tensor\",\"span_id\":\"s3\",\"tensor_id\":\"w\","
		       "\"shape\":[0,18446744073709551615,1],\"dtype\":\"bf16\",\"device\":\"cuda:0\","
		       "\"requires_grad\":false,\"category\":\"optimizer\"}");
}
END_TEST

START_TEST(memory_lines)
{
	struct cg_rec r = memory_rec();
	/* The example line of the brief, byte for byte. */
	check_line(&r, "{\"kind\":\"memory\",\"timestamp_ns\":1200,\"tensor_id\":\"t2\","
		       "\"span_id\":\"s2\",\"op_name\":\"matmul\",\"device\":\"cpu\",\"bytes\":4096,"
		       "\"action\":\"alloc\",\"shape\":[32,32],\"dtype\":\"f32\","
		       "\"category\":\"activation\"}");
	r.u.memory.op_name = CG_SV_NONE;
	r.u.memory.action = CGTRACE_FREE;
	r.u.memory.category = CGTRACE_CAT_GRADIENT;
	r.u.memory.managed = true;
	r.u.memory.ndim = 0;
	check_line(&r, "{\"kind\":\"memory\",\"timestamp_ns\":1200,\"tensor_id\":\"t2\","
		       "\"span_id\":\"s2\",\"device\":\"cpu\",\"bytes\":4096,\"action\":\"free\","
		       "\"shape\":[],\"dtype\":\"f32\",\"category\":\"gradient\",\"managed\":true}");
	r.u.memory.category = CGTRACE_CAT_OTHER;
	r.u.memory.managed = false;
	check_line(&r, "{\"kind\":\"memory\",\"timestamp_ns\":1200,\"tensor_id\":\"t2\","
		       "\"span_id\":\"s2\",\"device\":\"cpu\",\"bytes\":4096,\"action\":\"free\","
		       "\"shape\":[],\"dtype\":\"f32\",\"category\":\"other\"}");
}
END_TEST

START_TEST(device_memory_lines)
{
	struct cg_rec r = {.kind = CGTRACE_KIND_DEVICE_MEMORY};
	r.u.device_memory = (struct cg_rec_device_memory){
		.timestamp_ns = 5,
		.device = CG_SV_LIT("cuda:1"),
		.used_bytes = 100,
		.free_bytes = 900,
	};
	check_line(&r, "{\"kind\":\"device_memory\",\"timestamp_ns\":5,\"device\":\"cuda:1\","
		       "\"used_bytes\":100,\"free_bytes\":900}");
	r.u.device_memory.has_reserved = true;
	r.u.device_memory.reserved_bytes = 512;
	r.u.device_memory.has_oom_request = true;
	r.u.device_memory.oom_request_bytes = 1u << 30;
	check_line(&r, "{\"kind\":\"device_memory\",\"timestamp_ns\":5,\"device\":\"cuda:1\","
		       "\"used_bytes\":100,\"free_bytes\":900,\"reserved_bytes\":512,"
		       "\"oom_request_bytes\":1073741824}");
	r.u.device_memory.has_reserved = false;
	check_line(&r, "{\"kind\":\"device_memory\",\"timestamp_ns\":5,\"device\":\"cuda:1\","
		       "\"used_bytes\":100,\"free_bytes\":900,\"oom_request_bytes\":1073741824}");
}
END_TEST

START_TEST(gradient_lines)
{
	struct cg_rec r = {.kind = CGTRACE_KIND_GRADIENT};
	r.u.gradient = (struct cg_rec_gradient){
		.event_id = CG_SV_LIT("gradient-1"),
		.root = CG_SV_LIT("vb"),
		.key = CG_SV_LIT("encoder.weight"),
		.state = CGTRACE_GRAD_PRESENT,
		.has_norm = true,
		.norm = 0.42,
	};
	check_line(&r, "{\"kind\":\"gradient\",\"event_id\":\"gradient-1\",\"root\":\"vb\","
		       "\"key\":\"encoder.weight\",\"state\":\"present\",\"norm\":0.42}");
	r.u.gradient.norm = 1.0;
	r.u.gradient.state = CGTRACE_GRAD_ZERO;
	check_line(&r, "{\"kind\":\"gradient\",\"event_id\":\"gradient-1\",\"root\":\"vb\","
		       "\"key\":\"encoder.weight\",\"state\":\"zero\",\"norm\":1.0}");
	r.u.gradient.norm = -1e20;
	check_line(&r, "{\"kind\":\"gradient\",\"event_id\":\"gradient-1\",\"root\":\"vb\","
		       "\"key\":\"encoder.weight\",\"state\":\"zero\",\"norm\":-1e20}");
	/* JSON has no NaN or infinity: the norm is left out. */
	r.u.gradient.state = CGTRACE_GRAD_NON_FINITE;
	r.u.gradient.norm = NAN;
	check_line(&r, "{\"kind\":\"gradient\",\"event_id\":\"gradient-1\",\"root\":\"vb\","
		       "\"key\":\"encoder.weight\",\"state\":\"non_finite\"}");
	r.u.gradient.norm = -INFINITY;
	check_line(&r, "{\"kind\":\"gradient\",\"event_id\":\"gradient-1\",\"root\":\"vb\","
		       "\"key\":\"encoder.weight\",\"state\":\"non_finite\"}");
	r.u.gradient.state = CGTRACE_GRAD_MISSING;
	r.u.gradient.has_norm = false;
	r.u.gradient.norm = 3;
	check_line(&r, "{\"kind\":\"gradient\",\"event_id\":\"gradient-1\",\"root\":\"vb\","
		       "\"key\":\"encoder.weight\",\"state\":\"missing\"}");
}
END_TEST

START_TEST(edge_and_device_lines)
{
	struct cg_rec r = {.kind = CGTRACE_KIND_EDGE};
	r.u.edge = (struct cg_rec_edge){CG_SV_LIT("span-root"), CG_SV_LIT("span-op"), 1200};
	check_line(&r, "{\"kind\":\"edge\",\"from_span\":\"span-root\",\"to_span\":\"span-op\","
		       "\"duration_ns\":1200}");

	struct cg_rec d = {.kind = CGTRACE_KIND_DEVICE_INFO};
	d.u.device_info = (struct cg_rec_device_info){
		.device = CG_SV_LIT("cuda:0"),
		.uuid = CG_SV_LIT("GPU-1234"),
	};
	check_line(&d, "{\"kind\":\"cgprobe_device\",\"device\":\"cuda:0\",\"uuid\":\"GPU-1234\"}");
	d.u.device_info.name = CG_SV_LIT("NVIDIA H200");
	d.u.device_info.has_total = true;
	d.u.device_info.total_bytes = 150754820096u;
	check_line(&d, "{\"kind\":\"cgprobe_device\",\"device\":\"cuda:0\",\"uuid\":\"GPU-1234\","
		       "\"name\":\"NVIDIA H200\",\"total_bytes\":150754820096}");

	/* The identity as fields: after the kind's own, each only when set. */
	struct cg_rec m = {.kind = CGTRACE_KIND_DEVICE_MEMORY};
	m.u.device_memory = (struct cg_rec_device_memory){
		.timestamp_ns = 1,
		.device = CG_SV_LIT("cuda:0"),
		.used_bytes = 2,
		.free_bytes = 3,
		.cgprobe_device_uuid = CG_SV_LIT("GPU-1234"),
	};
	check_line(&m, "{\"kind\":\"device_memory\",\"timestamp_ns\":1,\"device\":\"cuda:0\","
		       "\"used_bytes\":2,\"free_bytes\":3,\"cgprobe_device_uuid\":\"GPU-1234\"}");
	m.u.device_memory.cgprobe_device_name = CG_SV_LIT("NVIDIA H200");
	m.u.device_memory.has_device_total = true;
	m.u.device_memory.cgprobe_device_total_bytes = 150754820096u;
	check_line(&m, "{\"kind\":\"device_memory\",\"timestamp_ns\":1,\"device\":\"cuda:0\","
		       "\"used_bytes\":2,\"free_bytes\":3,\"cgprobe_device_uuid\":\"GPU-1234\","
		       "\"cgprobe_device_name\":\"NVIDIA H200\","
		       "\"cgprobe_device_total_bytes\":150754820096}");
}
END_TEST

/* Lines append to what the buffer already holds, growing it as needed. */
START_TEST(appends_many)
{
	struct cg_buf b = {0};
	struct cg_rec r = memory_rec();
	char *one = format(&r);
	size_t n = strlen(one);
	for (int i = 0; i < 10000; i++)
		cg_jsonl_format(&b, &r);
	ck_assert_int_eq(b.err, 0);
	ck_assert_uint_eq(b.len, 10000 * n);
	for (int i = 0; i < 10000; i++)
		ck_assert(memcmp(b.p + (size_t)i * n, one, n) == 0);
	cg_buf_fini(&b);
	free(one);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Strings                                                             */
/* ------------------------------------------------------------------ */

START_TEST(escapes)
{
	CHECK_QUOTE("", "\"\"");
	check_quote(NULL, 0, "\"\"");
	CHECK_QUOTE("plain text", "\"plain text\"");
	CHECK_QUOTE("a\"b\\c/d", "\"a\\\"b\\\\c/d\"");
	CHECK_QUOTE("\n\r\t\b\f", "\"\\n\\r\\t\\b\\f\"");
	CHECK_QUOTE("\x01\x1f\x0b\x7f", "\"\\u0001\\u001f\\u000b\x7f\"");
	CHECK_QUOTE("nul\0byte", "\"nul\\u0000byte\"");
	/* Long runs go through the 8-byte path; specials at every offset. */
	for (size_t len = 1; len < 40; len++) {
		for (size_t at = 0; at < len; at++) {
			char in[40], want[80];
			memset(in, 'x', len);
			in[at] = '"';
			size_t w = 0;
			want[w++] = '"';
			for (size_t i = 0; i < len; i++) {
				if (i == at)
					want[w++] = '\\';
				want[w++] = in[i];
			}
			want[w++] = '"';
			want[w] = '\0';
			check_quote(in, len, want);
		}
	}
}
END_TEST

START_TEST(utf8_valid_passes)
{
	CHECK_QUOTE("caf\xc3\xa9", "\"caf\xc3\xa9\"");
	CHECK_QUOTE("\xe2\x82\xac 100", "\"\xe2\x82\xac 100\"");
	CHECK_QUOTE("\xf0\x9f\x98\x80", "\"\xf0\x9f\x98\x80\"");
	/* The edges of each range. */
	CHECK_QUOTE("\xc2\x80\xdf\xbf", "\"\xc2\x80\xdf\xbf\"");
	CHECK_QUOTE("\xe0\xa0\x80\xef\xbf\xbf", "\"\xe0\xa0\x80\xef\xbf\xbf\"");
	CHECK_QUOTE("\xed\x9f\xbf\xee\x80\x80", "\"\xed\x9f\xbf\xee\x80\x80\"");
	CHECK_QUOTE("\xf0\x90\x80\x80\xf4\x8f\xbf\xbf", "\"\xf0\x90\x80\x80\xf4\x8f\xbf\xbf\"");
}
END_TEST

#define FFFD "\xef\xbf\xbd"

START_TEST(utf8_invalid_replaced)
{
	CHECK_QUOTE("\xff", "\"" FFFD "\"");
	CHECK_QUOTE("a\x80z", "\"a" FFFD "z\"");
	/* Overlong: C0/C1 are never leads; E0 80, F0 80 are not valid second bytes. */
	CHECK_QUOTE("\xc0\xaf", "\"" FFFD FFFD "\"");
	CHECK_QUOTE("\xe0\x80\xaf", "\"" FFFD FFFD FFFD "\"");
	CHECK_QUOTE("\xf0\x80\x80\xaf", "\"" FFFD FFFD FFFD FFFD "\"");
	/* Surrogates U+D800 and U+DFFF. */
	CHECK_QUOTE("\xed\xa0\x80", "\"" FFFD FFFD FFFD "\"");
	CHECK_QUOTE("\xed\xbf\xbf", "\"" FFFD FFFD FFFD "\"");
	/* Above U+10FFFF and the F5..FF leads. */
	CHECK_QUOTE("\xf4\x90\x80\x80", "\"" FFFD FFFD FFFD FFFD "\"");
	CHECK_QUOTE("\xf5\x80\x80\x80", "\"" FFFD FFFD FFFD FFFD "\"");
	/* Truncated: one U+FFFD for the maximal valid prefix. */
	CHECK_QUOTE("\xe2\x82", "\"" FFFD "\"");
	CHECK_QUOTE("\xe2\x82" "A", "\"" FFFD "A\"");
	CHECK_QUOTE("\xf0\x9f\x98", "\"" FFFD "\"");
	CHECK_QUOTE("\xf0\x9f\x98\"", "\"" FFFD "\\\"\"");
	CHECK_QUOTE("\xc3", "\"" FFFD "\"");
	CHECK_QUOTE("\xc3\xc3\xa9", "\"" FFFD "\xc3\xa9\"");
	/* A long run with one bad byte in the middle. */
	CHECK_QUOTE("/home/user/\xfe/data.bin", "\"/home/user/" FFFD "/data.bin\"");
}
END_TEST

/* Reference: one byte at a time, straight from the rules. */
static size_t ref_seq(const unsigned char *s, size_t n, bool *ok)
{
	unsigned c = s[0];
	size_t len;
	unsigned lo = 0x80, hi = 0xbf;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4;
	else {
		*ok = false;
		return 1;
	}
	if (c == 0xe0)
		lo = 0xa0;
	if (c == 0xed)
		hi = 0x9f;
	if (c == 0xf0)
		lo = 0x90;
	if (c == 0xf4)
		hi = 0x8f;
	for (size_t i = 1; i < len; i++) {
		if (i >= n || s[i] < lo || s[i] > hi) {
			*ok = false;
			return i;
		}
		lo = 0x80;
		hi = 0xbf;
	}
	*ok = true;
	return len;
}

static char *ref_quote(const unsigned char *s, size_t n)
{
	char *out = malloc(6 * n + 3), *w = out;
	*w++ = '"';
	for (size_t i = 0; i < n;) {
		unsigned c = s[i];
		if (c == '"' || c == '\\') {
			*w++ = '\\';
			*w++ = (char)c;
			i++;
		} else if (c < 0x20) {
			const char *named = c == '\n' ? "\\n" : c == '\r' ? "\\r" : c == '\t' ? "\\t"
					  : c == '\b' ? "\\b" : c == '\f' ? "\\f" : NULL;
			if (named) {
				memcpy(w, named, 2);
				w += 2;
			} else {
				w += sprintf(w, "\\u%04x", c);
			}
			i++;
		} else if (c < 0x80) {
			*w++ = (char)c;
			i++;
		} else {
			bool ok;
			size_t len = ref_seq(s + i, n - i, &ok);
			if (ok) {
				memcpy(w, s + i, len);
				w += len;
			} else {
				memcpy(w, FFFD, 3);
				w += 3;
			}
			i += len;
		}
	}
	*w++ = '"';
	*w = '\0';
	return out;
}

/* Strict UTF-8 check of the whole output. */
static bool valid_utf8(const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		if (s[i] < 0x80) {
			i++;
			continue;
		}
		bool ok;
		size_t len = ref_seq(s + i, n - i, &ok);
		if (!ok)
			return false;
		i += len;
	}
	return true;
}

static uint64_t rng_state = 0x2545f4914f6cdd1dull;

static uint64_t rng(void)
{
	return xorshift64(&rng_state);
}

/* Random bytes biased towards the interesting ones. */
static void random_bytes(unsigned char *s, size_t n)
{
	static const unsigned char pool[] = {
		'a', 'b', ' ', '"', '\\', '\n', 0x01, 0x1f, 0x7f, 0x80, 0x8f, 0x90, 0x9f,
		0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xe1, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff,
	};
	for (size_t i = 0; i < n; i++) {
		uint64_t r = rng();
		if (r % 3 == 0)
			s[i] = 'a' + (unsigned char)(r % 26);
		else if (r % 3 == 1)
			s[i] = pool[(r >> 8) % sizeof(pool)];
		else
			s[i] = (unsigned char)(r >> 16);
	}
}

START_TEST(utf8_fuzz_against_reference)
{
	unsigned char in[96];
	for (int iter = 0; iter < 200000; iter++) {
		size_t n = rng() % sizeof(in);
		random_bytes(in, n);
		char *got = quote((const char *)in, n);
		char *want = ref_quote(in, n);
		EXPECT(strcmp(got, want) == 0, "iteration %d differs: %s vs %s", iter, got, want);
		EXPECT(valid_utf8((const unsigned char *)got, strlen(got)), "invalid UTF-8: %s", got);
		free(got);
		free(want);
	}
}
END_TEST

/* Valid input survives a JSON parse unchanged. */
START_TEST(strings_round_trip_through_cjson)
{
	char in[64];
	for (int iter = 0; iter < 20000; iter++) {
		size_t n = rng() % (sizeof(in) - 1);
		for (size_t i = 0; i < n; i++)
			in[i] = (char)(1 + rng() % 127); /* ASCII without NUL */
		in[n] = '\0';
		char *q = quote(in, n);
		cJSON *j = cJSON_Parse(q);
		EXPECT(j && cJSON_IsString(j) && strcmp(j->valuestring, in) == 0, "%s", q);
		cJSON_Delete(j);
		free(q);
	}
}
END_TEST

START_TEST(record_strings_escaped)
{
	struct cg_rec r = memory_rec();
	r.u.memory.tensor_id = CG_SV_LIT("t\"1\n");
	r.u.memory.device = CG_SV_LIT("\xff");
	check_line(&r, "{\"kind\":\"memory\",\"timestamp_ns\":1200,\"tensor_id\":\"t\\\"1\\n\","
		       "\"span_id\":\"s2\",\"op_name\":\"matmul\",\"device\":\"" FFFD "\","
		       "\"bytes\":4096,\"action\":\"alloc\",\"shape\":[32,32],\"dtype\":\"f32\","
		       "\"category\":\"activation\"}");
}
END_TEST

/* ------------------------------------------------------------------ */
/* cg_rec_equal                                                        */
/* ------------------------------------------------------------------ */

START_TEST(rec_equal)
{
	struct cg_rec a = memory_rec(), b = memory_rec();
	uint64_t other_shape[] = {32, 32};
	char tensor_copy[] = "t2";
	b.u.memory.shape = other_shape;
	b.u.memory.tensor_id = cg_sv_c(tensor_copy);
	ck_assert(cg_rec_equal(&a, &b));

	b.u.memory.op_name = CG_SV_NONE;
	ck_assert(!cg_rec_equal(&a, &b));
	b.u.memory.op_name = CG_SV_LIT(""); /* absent != empty */
	ck_assert(!cg_rec_equal(&a, &b));
	b = memory_rec();
	other_shape[1] = 33;
	b.u.memory.shape = other_shape;
	ck_assert(!cg_rec_equal(&a, &b));
	b = memory_rec();
	b.u.memory.managed = true;
	ck_assert(!cg_rec_equal(&a, &b));

	struct cg_rec e = {.kind = CGTRACE_KIND_EDGE};
	ck_assert(!cg_rec_equal(&a, &e));

	struct cg_rec g1 = {.kind = CGTRACE_KIND_GRADIENT}, g2;
	g1.u.gradient = (struct cg_rec_gradient){
		.event_id = CG_SV_LIT("g"), .root = CG_SV_LIT("r"), .key = CG_SV_LIT("k"),
		.has_norm = true, .norm = 0.0};
	g2 = g1;
	ck_assert(cg_rec_equal(&g1, &g2));
	g2.u.gradient.norm = -0.0; /* bitwise */
	ck_assert(!cg_rec_equal(&g1, &g2));
	g1.u.gradient.norm = NAN;
	g2.u.gradient.norm = NAN;
	ck_assert(cg_rec_equal(&g1, &g2));
	g1.u.gradient.has_norm = g2.u.gradient.has_norm = false;
	g2.u.gradient.norm = 5; /* not present: not compared */
	ck_assert(cg_rec_equal(&g1, &g2));

	static const struct cg_tagv t1[] = {{CG_SV_LIT("a"), CG_SV_LIT("1")},
					    {CG_SV_LIT("b"), CG_SV_LIT("2")}};
	static const struct cg_tagv t2[] = {{CG_SV_LIT("b"), CG_SV_LIT("2")},
					    {CG_SV_LIT("a"), CG_SV_LIT("1")}};
	struct cg_rec m1 = {.kind = CGTRACE_KIND_META}, m2;
	m1.u.meta.tags = t1;
	m1.u.meta.n_tags = 2;
	m2 = m1;
	ck_assert(cg_rec_equal(&m1, &m2));
	m2.u.meta.tags = t2; /* tags compare in order */
	ck_assert(!cg_rec_equal(&m1, &m2));

	static const struct cg_sv in1[] = {CG_SV_LIT("x"), CG_SV_LIT("y")};
	static const struct cg_sv in2[] = {CG_SV_LIT("x"), CG_SV_LIT("z")};
	struct cg_rec o1 = {.kind = CGTRACE_KIND_OP}, o2;
	o1.u.op.inputs = in1;
	o1.u.op.n_inputs = 2;
	o2 = o1;
	ck_assert(cg_rec_equal(&o1, &o2));
	o2.u.op.inputs = in2;
	ck_assert(!cg_rec_equal(&o1, &o2));
	o2 = o1;
	o1.u.op.storage_bytes = 1; /* absent: not compared */
	ck_assert(cg_rec_equal(&o1, &o2));
	o1.u.op.has_storage_bytes = o2.u.op.has_storage_bytes = true;
	ck_assert(!cg_rec_equal(&o1, &o2));
}
END_TEST

/* ------------------------------------------------------------------ */
/* Names and dtypes                                                    */
/* ------------------------------------------------------------------ */

START_TEST(enum_names)
{
	ck_assert_str_eq(cgtrace_kind_name(CGTRACE_KIND_META), "meta");
	ck_assert_str_eq(cgtrace_kind_name(CGTRACE_KIND_DEVICE_MEMORY), "device_memory");
	ck_assert_str_eq(cgtrace_kind_name(CGTRACE_KIND_DEVICE_INFO), "cgprobe_device");
	ck_assert_ptr_null(cgtrace_kind_name(CGTRACE_KIND_COUNT));
	ck_assert_ptr_null(cgtrace_kind_name((enum cgtrace_kind)-1));
	ck_assert_str_eq(cgtrace_phase_name(CGTRACE_PHASE_INFER), "infer");
	ck_assert_str_eq(cgtrace_timing_name(CGTRACE_TIMING_DEVICE_SYNCHRONIZED),
			 "device_synchronized");
	ck_assert_str_eq(cgtrace_span_kind_name(CGTRACE_SPAN_MODULE), "module");
	ck_assert_ptr_null(cgtrace_step_name(CGTRACE_STEP_NONE));
	ck_assert_str_eq(cgtrace_step_name(CGTRACE_STEP_OPTIMIZER), "optimizer");
	ck_assert_str_eq(cgtrace_action_name(CGTRACE_FREE), "free");
	ck_assert_str_eq(cgtrace_category_name(CGTRACE_CAT_OTHER), "other");
	ck_assert_ptr_null(cgtrace_category_name(CGTRACE_CAT_AUTO));
	ck_assert_str_eq(cgtrace_grad_state_name(CGTRACE_GRAD_NON_FINITE), "non_finite");
	ck_assert_ptr_null(cgtrace_grad_state_name((enum cgtrace_grad_state)4));

	ck_assert_int_eq(cg_name_lookup(cg_step_names, CG_STEP_COUNT, "forward", 7), 1);
	ck_assert_int_eq(cg_name_lookup(cg_step_names, CG_STEP_COUNT, "for", 3), -1);
	ck_assert_int_eq(cg_name_lookup(cg_step_names, CG_STEP_COUNT, "forwards", 8), -1);
	ck_assert_int_eq(cg_name_lookup(cg_step_names, CG_STEP_COUNT, "", 0), -1);
	ck_assert_int_eq(cg_name_lookup(cg_step_names, CG_STEP_COUNT, "Forward", 7), -1);
	ck_assert_int_eq(cg_name_lookup(cg_category_names, CGTRACE_CAT_COUNT, "other", 5), 4);
	ck_assert_int_eq(cg_name_lookup(cg_kind_names, CGTRACE_KIND_COUNT, "op\0", 3), -1);
	ck_assert_int_eq(cg_name_lookup(cg_kind_names, CGTRACE_KIND_COUNT, "op", 2),
			 CGTRACE_KIND_OP);
}
END_TEST

#define DTYPE(s) cgtrace_dtype_size((s), sizeof(s) - 1)

START_TEST(dtype_sizes)
{
	ck_assert_uint_eq(DTYPE("u8"), 1);
	ck_assert_uint_eq(DTYPE("i8"), 1);
	ck_assert_uint_eq(DTYPE("bool"), 1);
	ck_assert_uint_eq(DTYPE("f8"), 1);
	ck_assert_uint_eq(DTYPE("u16"), 2);
	ck_assert_uint_eq(DTYPE("i16"), 2);
	ck_assert_uint_eq(DTYPE("f16"), 2);
	ck_assert_uint_eq(DTYPE("bf16"), 2);
	ck_assert_uint_eq(DTYPE("u32"), 4);
	ck_assert_uint_eq(DTYPE("i32"), 4);
	ck_assert_uint_eq(DTYPE("f32"), 4);
	ck_assert_uint_eq(DTYPE("u64"), 8);
	ck_assert_uint_eq(DTYPE("i64"), 8);
	ck_assert_uint_eq(DTYPE("f64"), 8);
	/* Case-insensitive, surrounding whitespace ignored. */
	ck_assert_uint_eq(DTYPE(" BF16 "), 2);
	ck_assert_uint_eq(DTYPE("\tF32\n"), 4);
	ck_assert_uint_eq(DTYPE("Bool"), 1);
	/* Unknown. */
	ck_assert_uint_eq(DTYPE(""), 0);
	ck_assert_uint_eq(DTYPE("   "), 0);
	ck_assert_uint_eq(DTYPE("f33"), 0);
	ck_assert_uint_eq(DTYPE("float32"), 0);
	ck_assert_uint_eq(DTYPE("f 32"), 0);
	ck_assert_uint_eq(DTYPE("u8\0"), 0);
	ck_assert_uint_eq(cgtrace_dtype_size(NULL, 3), 0);
	ck_assert_uint_eq(cgtrace_dtype_size("f32", 2), 0); /* "f3" */
}
END_TEST

START_TEST(storage_bytes)
{
	const uint64_t s88[] = {8, 8};
	const uint64_t zero_big[] = {UINT64_MAX, 0, UINT64_MAX};
	const uint64_t big[] = {1ull << 32, 1ull << 32};
	const uint64_t edge[] = {1ull << 62};
	ck_assert_uint_eq(cgtrace_storage_bytes(s88, 2, "f32", 3), 256);
	ck_assert_uint_eq(cgtrace_storage_bytes(NULL, 0, "f64", 3), 8); /* scalar */
	ck_assert_uint_eq(cgtrace_storage_bytes(zero_big, 3, "f32", 3), 0);
	ck_assert_uint_eq(cgtrace_storage_bytes(big, 2, "u8", 2), UINT64_MAX);
	ck_assert_uint_eq(cgtrace_storage_bytes(edge, 1, "f32", 3), UINT64_MAX);
	ck_assert_uint_eq(cgtrace_storage_bytes(edge, 1, "i16", 3), 1ull << 63);
	ck_assert_uint_eq(cgtrace_storage_bytes(s88, 2, "complex64", 9), 0);
	ck_assert_uint_eq(cgtrace_storage_bytes(NULL, 2, "f32", 3), 0);
}
END_TEST

TEST_SUITE(jsonl_suite, "jsonl_format")
{
	test_case(s, "format:records", 120, meta_lines, meta_many_tags, span_lines, op_lines,
	          tensor_lines, memory_lines, device_memory_lines, gradient_lines,
	          edge_and_device_lines, appends_many);
	test_case(s, "format:strings", 120, escapes, utf8_valid_passes, utf8_invalid_replaced,
	          utf8_fuzz_against_reference, strings_round_trip_through_cjson,
	          record_strings_escaped);
	test_case(s, "record:equal", 120, rec_equal);
	test_case(s, "names:enums", 120, enum_names);
	test_case(s, "dtype:sizes", 120, dtype_sizes, storage_bytes);
}

TEST_MAIN(jsonl_suite);
