/* SPDX-License-Identifier: MIT */
/* build_summary: counts, measured time, roots and span depth on any parent graph. */
#include <time.h>

#include "test-util.h"
#include "test-main.h"

#define SPAN(id, parent, measured)                                                           \
	"{\"kind\":\"span_start\",\"id\":\"" id "\"" parent ",\"name\":\"n\",\"start_ns\":0,"   \
	"\"span_kind\":\"function\",\"measured\":" measured "}\n"
#define P(id) ",\"parent_id\":\"" id "\""

static struct cgtrace_summary summarize(const char *text)
{
	struct cgtrace_doc *d = ck_read_ok(text);
	struct cgtrace_summary s;
	ck_assert_int_eq(cgtrace_doc_summary(d, &s), 0);
	cgtrace_doc_free(d);
	return s;
}

START_TEST(reference_document_summary)
{
	struct cgtrace_summary s = summarize(
		META_LINE SPAN("span-root", "", "true") SPAN("span-op", P("span-root"), "false")
		"{\"kind\":\"op\",\"span_id\":\"span-op\",\"op_name\":\"matmul\",\"inputs\":[\"t0\",\"t1\"],\"output\":\"t2\",\"shape\":[32,32],\"dtype\":\"f32\",\"device\":\"cpu\",\"duration_ns\":1200,\"timestamp_ns\":1200}\n"
		"{\"kind\":\"memory\",\"timestamp_ns\":1200,\"tensor_id\":\"t2\",\"span_id\":\"span-op\",\"op_name\":\"matmul\",\"device\":\"cpu\",\"bytes\":4096,\"action\":\"alloc\",\"shape\":[32,32],\"dtype\":\"f32\",\"category\":\"activation\"}\n"
		"{\"kind\":\"edge\",\"from_span\":\"span-root\",\"to_span\":\"span-op\",\"duration_ns\":1200}\n"
		"{\"kind\":\"gradient\",\"event_id\":\"grad-1\",\"root\":\"vb\",\"key\":\"encoder.weight\",\"state\":\"present\",\"norm\":0.42}\n"
		"{\"kind\":\"span_end\",\"id\":\"span-op\",\"duration_ns\":1200}\n"
		"{\"kind\":\"span_end\",\"id\":\"span-root\",\"duration_ns\":2000}\n");
	ck_assert_uint_eq(s.op_count, 1);
	ck_assert_uint_eq(s.total_ns, 2000);
	ck_assert_uint_eq(s.span_count, 2);
	ck_assert_uint_eq(s.root_span_count, 1);
	ck_assert_uint_eq(s.max_depth, 1);
	ck_assert_uint_eq(s.alloc_count, 1);
	ck_assert_uint_eq(s.free_count, 0);
	ck_assert_uint_eq(s.peak_bytes, 32 * 32 * 4);
}
END_TEST

START_TEST(dangling_parent_counts_once)
{
	struct cgtrace_summary s = summarize(META_LINE SPAN("a", P("ghost"), "false")
						     SPAN("b", P("a"), "false"));
	ck_assert_uint_eq(s.root_span_count, 0);
	ck_assert_uint_eq(s.max_depth, 2);
}
END_TEST

START_TEST(cycles_stop_the_walk)
{
	/* a -> b -> c -> a, plus a tail d -> a and a self loop e -> e. */
	struct cgtrace_summary s = summarize(META_LINE SPAN("a", P("b"), "false")
						     SPAN("b", P("c"), "false")
						     SPAN("c", P("a"), "false")
						     SPAN("d", P("a"), "false")
						     SPAN("e", P("e"), "false"));
	/* From d: a, b, c = 3 distinct ancestors; from a: b, c, a = 3. */
	ck_assert_uint_eq(s.max_depth, 3);
	ck_assert_uint_eq(s.root_span_count, 0);
	s = summarize(META_LINE SPAN("e", P("e"), "false"));
	ck_assert_uint_eq(s.max_depth, 1);
}
END_TEST

START_TEST(measured_time_sums_closed_measured_spans)
{
	struct cgtrace_summary s =
		summarize(META_LINE SPAN("a", "", "true") SPAN("b", "", "true") SPAN("c", "", "false")
			  "{\"kind\":\"span_end\",\"id\":\"a\",\"duration_ns\":18446744073709551615}\n"
			  "{\"kind\":\"span_end\",\"id\":\"b\",\"duration_ns\":5}\n"
			  "{\"kind\":\"span_end\",\"id\":\"c\",\"duration_ns\":7}\n");
	ck_assert_uint_eq(s.total_ns, UINT64_MAX); /* saturating */
	ck_assert_uint_eq(s.root_span_count, 3);
	ck_assert_uint_eq(s.max_depth, 0);
}
END_TEST

/* Builds a chain or a ring of n spans named s0..s(n-1). */
static char *chain(size_t n, bool ring)
{
	size_t cap = n * 140 + 1024, at = 0;
	char *text = malloc(cap);
	at += (size_t)snprintf(text, cap, "%s", META_LINE);
	for (size_t i = 0; i < n; i++) {
		char parent[48] = "";
		if (i > 0 || ring)
			snprintf(parent, sizeof(parent), ",\"parent_id\":\"s%zu\"", i ? i - 1 : n - 1);
		at += (size_t)snprintf(text + at, cap - at,
				       "{\"kind\":\"span_start\",\"id\":\"s%zu\"%s,\"name\":\"n\","
				       "\"start_ns\":%zu,\"span_kind\":\"op\"}\n",
				       i, parent, i);
	}
	return text;
}

START_TEST(deep_chain_is_linear)
{
	char *text = chain(100000, false);
	clock_t t0 = clock();
	struct cgtrace_summary s = summarize(text);
	double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
	ck_assert_uint_eq(s.max_depth, 99999);
	ck_assert_uint_eq(s.span_count, 100000);
	/* Quadratic would be 5e9 steps; this is a sanity bound, not a benchmark. */
	ck_assert_msg(secs < 20, "100k-deep chain took %.1f s", secs);
	free(text);
	text = chain(100000, true);
	s = summarize(text);
	ck_assert_uint_eq(s.max_depth, 100000);
	ck_assert_uint_eq(s.root_span_count, 0);
	free(text);
}
END_TEST

TEST_SUITE(suite, "summary")
{
	test_case(s, "summary:spans", 4, reference_document_summary, dangling_parent_counts_once,
	          cycles_stop_the_walk, measured_time_sums_closed_measured_spans);
	test_case(s, "summary:scale", 120, deep_chain_is_linear);
}

TEST_MAIN(suite);
