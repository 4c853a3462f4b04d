/* SPDX-License-Identifier: MIT */
/* The memory analysis: ordering, accounting, peaks, breakdown, capacity, timeline. */
#include <errno.h>

#include "test-util.h"
#include "test-main.h"

#define MEMR(ts, id, dev, bytes, action, cat, span)                                          \
	"{\"kind\":\"memory\",\"timestamp_ns\":" #ts ",\"tensor_id\":\"" id                     \
	"\",\"span_id\":\"" span "\",\"op_name\":\"op_" id "\",\"device\":\"" dev              \
	"\",\"bytes\":" #bytes ",\"action\":\"" action "\",\"dtype\":\"u8\",\"category\":\"" cat \
	"\"}\n"
#define A(ts, id, dev, bytes) MEMR(ts, id, dev, bytes, "alloc", "activation", "s1")
#define F(ts, id, dev, bytes) MEMR(ts, id, dev, bytes, "free", "activation", "s1")

/* What analyze() made last; the fixture's teardown frees it. */
static struct cgtrace_doc *doc;
static struct cgtrace_memory_report *report;

static void release(void)
{
	cgtrace_memory_report_free(report);
	cgtrace_doc_free(doc);
	report = NULL;
	doc = NULL;
}

/* The memory report of a trace's text, kept with its doc until the next call or the teardown. */
static struct cgtrace_memory_report *analyze(const char *text)
{
	release();
	doc = ck_read_ok(text);
	ck_assert_int_eq(cgtrace_memory_analyze(doc, &report), 0);
	return report;
}

START_TEST(no_memory_records)
{
	struct cgtrace_memory_report *r = analyze(META_LINE);
	ck_assert_str_eq(r->peak_device, "");
	ck_assert_uint_eq(r->peak_bytes, 0);
	ck_assert_uint_eq(r->alloc_count + r->free_count, 0);
	ck_assert_uint_eq(r->n_devices, 0);
	ck_assert_uint_eq(r->n_breakdown, 0);
}
END_TEST

START_TEST(peak_is_per_device_and_first_strictly_exceeded)
{
	struct cgtrace_memory_report *r = analyze(
		META_LINE A(1, "a", "cpu", 100) A(2, "b", "cuda:0", 150)
		F(3, "a", "cpu", 100) A(4, "c", "cpu", 150)
		A(5, "d", "cuda:0", 10) F(6, "d", "cuda:0", 10)
		A(7, "e", "cuda:0", 10));
	/* cpu 100 then cuda:0 150; cpu reaching 150 later does not move the peak. */
	ck_assert_uint_eq(r->peak_bytes, 160);
	ck_assert_str_eq(r->peak_device, "cuda:0");
	ck_assert_uint_eq(r->peak_timestamp_ns, 5);
	ck_assert_uint_eq(r->n_devices, 2);
	const struct cgtrace_device_peak *cpu = &r->by_device[0], *gpu = &r->by_device[1];
	ck_assert_str_eq(cpu->device, "cpu");
	ck_assert_uint_eq(cpu->peak_bytes, 150);
	ck_assert_uint_eq(cpu->peak_timestamp_ns, 4);
	ck_assert_uint_eq(cpu->alloc_count, 2);
	ck_assert_uint_eq(cpu->free_count, 1);
	ck_assert_str_eq(gpu->device, "cuda:0");
	ck_assert_uint_eq(gpu->peak_bytes, 160);
	/* Breakdown: live allocations of all devices at the peak, largest first. */
	ck_assert_uint_eq(r->n_breakdown, 3);
	ck_assert_str_eq(r->peak_breakdown[0].tensor_id, "b");
	ck_assert_str_eq(r->peak_breakdown[1].tensor_id, "c");
	ck_assert_str_eq(r->peak_breakdown[2].tensor_id, "d");
	ck_assert_str_eq(r->peak_breakdown[2].op_name, "op_d");
	ck_assert_uint_eq(r->total_alloc_bytes, 100 + 150 + 150 + 10 + 10);
}
END_TEST

START_TEST(order_is_time_then_alloc_then_tensor_id)
{
	/* File order is scrambled; at ts 5 the alloc of "x" sorts before the free of "a". */
	struct cgtrace_memory_report *r = analyze(
		META_LINE F(5, "a", "cpu", 100) A(5, "x", "cpu", 50)
		A(1, "a", "cpu", 100) A(5, "b", "cpu", 1));
	ck_assert_uint_eq(r->peak_bytes, 151);
	ck_assert_uint_eq(r->peak_timestamp_ns, 5);
	ck_assert_uint_eq(r->by_device[0].final_bytes, 51);
	/* Breakdown ties on bytes are broken by tensor_id. */
	ck_assert_uint_eq(r->n_breakdown, 3);
	ck_assert_str_eq(r->peak_breakdown[0].tensor_id, "a");
}
END_TEST

static int collect(void *user, const struct cgtrace_timeline_point *p)
{
	char *out = user;
	size_t at = strlen(out);
	snprintf(out + at, 4096 - at, "%llu %s %llu %s%llu\n", (unsigned long long)p->timestamp_ns,
		 p->device, (unsigned long long)p->live_bytes, p->has_free ? "" : "-",
		 p->has_free ? (unsigned long long)p->free_bytes : 0ull);
	return 0;
}

START_TEST(timeline_uses_capacity_from_whole_trace)
{
	/* The checkpoint comes last in the file: free bytes use it all the same. */
	struct cgtrace_memory_report *r = analyze(
		META_LINE A(2, "b", "cuda:0", 300) A(1, "a", "cpu", 10) F(3, "b", "cuda:0", 300)
		"{\"kind\":\"device_memory\",\"timestamp_ns\":9,\"device\":\"cuda:0\",\"used_bytes\":"
		"400,\"free_bytes\":600}\n"
		"{\"kind\":\"device_memory\",\"timestamp_ns\":9,\"device\":\"cuda:0\",\"used_bytes\":"
		"100,\"free_bytes\":500}\n");
	char out[4096] = "";
	ck_assert_int_eq(cgtrace_memory_timeline(doc, collect, out), 0);
	ck_assert_str_eq(out, "1 cpu 10 -0\n2 cuda:0 300 700\n3 cuda:0 0 1000\n");
	ck_assert_uint_eq(r->by_device[1].capacity_bytes, 1000);
	ck_assert_uint_eq(r->by_device[0].capacity_bytes, 0);
}
END_TEST

START_TEST(frees_use_remembered_bytes_and_category)
{
	struct cgtrace_memory_report *r = analyze(
		META_LINE MEMR(1, "p", "cpu", 100, "alloc", "parameter", "s1")
		/* The free claims 7 bytes of category other: remembered 100 parameter wins. */
		MEMR(2, "p", "cpu", 7, "free", "other", "s1")
		/* Unknown id: its own bytes and category, saturating at zero. */
		MEMR(3, "ghost", "cpu", 5, "free", "other", "s1")
		MEMR(4, "q", "cpu", 40, "alloc", "optimizer", "s1"));
	ck_assert_uint_eq(r->peak_bytes, 100);
	ck_assert_uint_eq(r->peak_by_category[CGTRACE_CAT_PARAMETER], 100);
	ck_assert_uint_eq(r->by_device[0].final_bytes, 40);
	ck_assert_uint_eq(r->unknown_free_count, 1);
}
END_TEST

START_TEST(alloc_of_live_id_counts_again_and_replaces)
{
	struct cgtrace_memory_report *r = analyze(
		META_LINE A(1, "a", "cpu", 100) A(2, "a", "cpu", 30)
		F(3, "a", "cpu", 999));
	ck_assert_uint_eq(r->peak_bytes, 130);
	/* The free subtracts the replacing entry's 30, leaving the first 100 behind. */
	ck_assert_uint_eq(r->by_device[0].final_bytes, 100);
	ck_assert_uint_eq(r->realloc_live_count, 1);
	ck_assert_uint_eq(r->n_breakdown, 1);
	ck_assert_uint_eq(r->peak_breakdown[0].bytes, 30);
}
END_TEST

START_TEST(autograd_retained_bytes)
{
	struct cgtrace_memory_report *r = analyze(
		META_LINE
		"{\"kind\":\"span_start\",\"id\":\"s1\",\"name\":\"r\",\"start_ns\":0,\"span_kind\":\"function\"}\n"
		"{\"kind\":\"span_start\",\"id\":\"s2\",\"parent_id\":\"s1\",\"name\":\"fwd\",\"start_ns\":0,\"span_kind\":\"function\",\"step\":\"forward\"}\n"
		"{\"kind\":\"span_start\",\"id\":\"s3\",\"parent_id\":\"s1\",\"name\":\"bwd\",\"start_ns\":0,\"span_kind\":\"function\",\"step\":\"backward\"}\n"
		MEMR(1, "x", "cpu", 64, "alloc", "activation", "s2")
		MEMR(2, "y", "cpu", 32, "alloc", "activation", "s2")
		MEMR(3, "g", "cpu", 8, "alloc", "gradient", "s3")
		MEMR(4, "x", "cpu", 64, "free", "activation", "s3"));
	ck_assert_uint_eq(r->autograd_retained_bytes, 96);
	ck_assert_uint_eq(r->peak_bytes, 104);
	ck_assert_uint_eq(r->peak_by_category[CGTRACE_CAT_ACTIVATION], 96);
	ck_assert_uint_eq(r->peak_by_category[CGTRACE_CAT_GRADIENT], 8);
}
END_TEST

START_TEST(device_with_only_checkpoints_is_listed)
{
	struct cgtrace_memory_report *r = analyze(
		META_LINE A(1, "a", "cpu", 1)
		"{\"kind\":\"device_memory\",\"timestamp_ns\":2,\"device\":\"cuda:1\",\"used_bytes\":"
		"18446744073709551615,\"free_bytes\":1}\n");
	ck_assert_uint_eq(r->n_devices, 2);
	ck_assert_str_eq(r->by_device[1].device, "cuda:1");
	ck_assert_uint_eq(r->by_device[1].capacity_bytes, UINT64_MAX);
	ck_assert_uint_eq(r->by_device[1].peak_bytes, 0);
}
END_TEST

START_TEST(live_bytes_saturate)
{
	struct cgtrace_memory_report *r = analyze(
		META_LINE A(1, "a", "cpu", 18446744073709551615)
		A(2, "b", "cpu", 5));
	ck_assert_uint_eq(r->peak_bytes, UINT64_MAX);
	ck_assert_uint_eq(r->total_alloc_bytes, UINT64_MAX);
}
END_TEST

START_TEST(many_out_of_order_records)
{
	/* 200k records written by "two threads" whose buffers interleave in blocks. */
	size_t n = 200000, cap = n * 200 + 1024, at = 0;
	char *text = malloc(cap);
	at += (size_t)snprintf(text, cap, "%s", META_LINE);
	for (size_t blk = 0; blk < n / 1000; blk++) {
		size_t base = (blk % 2) ? (blk - 1) * 1000 : (blk + 1) * 1000;
		for (size_t i = 0; i < 1000; i++) {
			size_t k = base + i;
			at += (size_t)snprintf(text + at, cap - at,
					       "{\"kind\":\"memory\",\"timestamp_ns\":%zu,\"tensor_id\":"
					       "\"t%zu\",\"span_id\":\"s1\",\"device\":\"cpu\",\"bytes\":"
					       "1,\"action\":\"%s\",\"dtype\":\"u8\"}\n",
					       k, k / 2, k % 2 ? "free" : "alloc");
		}
	}
	struct cgtrace_memory_report *r = analyze(text);
	/* In time order every alloc is freed right after: the peak is one byte. */
	ck_assert_uint_eq(r->peak_bytes, 1);
	ck_assert_uint_eq(r->by_device[0].final_bytes, 0);
	ck_assert_uint_eq(r->unknown_free_count, 0);
	free(text);
}
END_TEST

/* 100 distinct op names: every one is a group (the tool once stopped at 64). */
START_TEST(peak_by_op_has_every_group)
{
	char *text = malloc(100 * 256 + sizeof(META_LINE));
	size_t at = (size_t)sprintf(text, "%s", META_LINE);
	for (int i = 0; i < 100; i++)
		at += (size_t)sprintf(text + at,
				      "{\"kind\":\"memory\",\"timestamp_ns\":%d,\"tensor_id\":\"t%d\","
				      "\"span_id\":\"s1\",\"op_name\":\"op%03d\",\"device\":\"cpu\","
				      "\"bytes\":%d,\"action\":\"alloc\",\"dtype\":\"u8\"}\n",
				      i, i, i % 100, 1000 + i % 7);
	struct cgtrace_memory_report *r = analyze(text);
	struct cgtrace_op_group *g;
	size_t n;
	ck_assert_int_eq(cgtrace_memory_peak_by_op(r, &g, &n), 0);
	ck_assert_uint_eq(n, 100);
	uint64_t total = 0;
	for (size_t i = 0; i < n; i++) {
		ck_assert_uint_eq(g[i].count, 1);
		total += g[i].bytes;
		if (i)
			ck_assert(g[i - 1].bytes > g[i].bytes ||
				  (g[i - 1].bytes == g[i].bytes &&
				   strcmp(g[i - 1].op_name, g[i].op_name) < 0));
	}
	ck_assert_uint_eq(total, r->peak_bytes);
	cgtrace_op_groups_free(g);
	free(text);
}
END_TEST

#define MEM_NO_OP(ts, id, bytes)                                                             \
	"{\"kind\":\"memory\",\"timestamp_ns\":" #ts ",\"tensor_id\":\"" id                     \
	"\",\"span_id\":\"s1\",\"device\":\"cpu\",\"bytes\":" #bytes                            \
	",\"action\":\"alloc\",\"dtype\":\"u8\"}\n"

START_TEST(peak_by_op_sums_and_orders)
{
	struct cgtrace_memory_report *r = analyze(
		META_LINE A(1, "a", "cpu", 10) MEM_NO_OP(2, "x", 30)
		MEM_NO_OP(3, "y", 5) A(4, "b", "cpu", 35));
	struct cgtrace_op_group *g;
	size_t n;
	ck_assert_int_eq(cgtrace_memory_peak_by_op(r, &g, &n), 0);
	/* Equal bytes (35): the records without an op_name come first. */
	ck_assert_uint_eq(n, 3);
	ck_assert_ptr_null(g[0].op_name);
	ck_assert_uint_eq(g[0].count, 2);
	ck_assert_uint_eq(g[0].bytes, 35);
	ck_assert_str_eq(g[1].op_name, "op_b");
	ck_assert_uint_eq(g[1].bytes, 35);
	ck_assert_str_eq(g[2].op_name, "op_a");
	ck_assert_uint_eq(g[2].count, 1);
	cgtrace_op_groups_free(g);

	r = analyze(META_LINE);
	ck_assert_int_eq(cgtrace_memory_peak_by_op(r, &g, &n), 0);
	ck_assert_uint_eq(n, 0);
	ck_assert_ptr_null(g);
}
END_TEST

START_TEST(summary_report_matches_summary)
{
	struct cgtrace_doc *d = ck_read_ok(META_LINE A(1, "a", "cpu", 100) A(2, "b", "cuda:0", 150)
					   F(3, "a", "cpu", 100));
	struct cgtrace_summary a, b;
	struct cgtrace_memory_report *r;
	ck_assert_int_eq(cgtrace_doc_summary(d, &a), 0);
	ck_assert_int_eq(cgtrace_doc_summary_report(d, &b, &r), 0);
	ck_assert_mem_eq(&a, &b, sizeof(a));
	ck_assert_uint_eq(r->peak_bytes, 150);
	ck_assert_uint_eq(r->n_devices, 2);
	ck_assert_uint_eq(r->n_breakdown, 0);
	cgtrace_memory_report_free(r);
	cgtrace_doc_free(d);
}
END_TEST

START_TEST(min_bytes_tag)
{
	static const char *const tags[] = {"", "\"cgprobe_min_bytes\":\"4096\"",
					   "\"cgprobe_min_bytes\":\"4k\""};
	static const int want[] = {-ENOENT, 0, -EINVAL};
	for (int i = 0; i < 3; i++) {
		char text[1024];
		snprintf(text, sizeof(text),
			 "{\"kind\":\"meta\",\"schema\":\"candle-graph/trace/6\",\"run_id\":\"r\","
			 "\"correlation_id\":\"c\",\"entrypoint\":\"e\",\"phase\":\"train\","
			 "\"timestamp\":\"t\",\"capture_step\":1,\"warmup_steps\":0,"
			 "\"device\":\"cpu\",\"timing_mode\":\"host\",\"tags\":{%s}}\n",
			 tags[i]);
		struct cgtrace_doc *d = ck_read_ok(text);
		uint64_t v = 7;
		ck_assert_int_eq(cgtrace_doc_min_bytes(d, &v), want[i]);
		ck_assert_uint_eq(v, i == 1 ? 4096 : 7);
		cgtrace_doc_free(d);
	}
}
END_TEST

START_TEST(json_string_escapes_as_the_writer)
{
	char out[CGTRACE_JSON_STRING_MAX(8)];
	size_t n = cgtrace_json_string(out, "a\"\\\n\x01\xff", 6);
	ck_assert_uint_eq(n, 18);
	ck_assert_mem_eq(out, "\"a\\\"\\\\\\n\\u0001\xef\xbf\xbd\"", n);
	ck_assert_uint_eq(cgtrace_json_string(out, NULL, 0), 2);
	ck_assert_mem_eq(out, "\"\"", 2);
}
END_TEST

/* A test case whose teardown frees what analyze() kept. */
static TCase *analysis_tcase(Suite *s, const char *name, double timeout_s)
{
	TCase *tc = test_tcase(s, name, timeout_s);
	tcase_add_checked_fixture(tc, NULL, release);
	return tc;
}

TEST_SUITE(suite, "memory-analysis")
{
	TCase *tc = analysis_tcase(s, "memory:accounting", 4);
	test_add(tc, no_memory_records, peak_is_per_device_and_first_strictly_exceeded,
	         order_is_time_then_alloc_then_tensor_id, frees_use_remembered_bytes_and_category,
	         alloc_of_live_id_counts_again_and_replaces, autograd_retained_bytes,
	         live_bytes_saturate);
	tc = analysis_tcase(s, "memory:devices", 4);
	test_add(tc, timeline_uses_capacity_from_whole_trace,
	         device_with_only_checkpoints_is_listed);
	tc = analysis_tcase(s, "memory:by-op", 4);
	test_add(tc, peak_by_op_has_every_group, peak_by_op_sums_and_orders);
	test_case(s, "api:helpers", 4, summary_report_matches_summary, min_bytes_tag,
	          json_string_escapes_as_the_writer);
	tc = analysis_tcase(s, "memory:scale", 60);
	test_add(tc, many_out_of_order_records);
}

TEST_MAIN(suite);
