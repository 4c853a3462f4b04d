/* SPDX-License-Identifier: MIT */
/* Every rule of the trace format's stream and reconstruction sections. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <zstd.h>

#include "test-util.h"
#include "test-main.h"

#define SPAN_S1 "{\"kind\":\"span_start\",\"id\":\"s1\",\"name\":\"root\",\"start_ns\":0,\"span_kind\":\"function\"}\n"
#define MEM(ts, id, bytes, action)                                                            \
	"{\"kind\":\"memory\",\"timestamp_ns\":" #ts ",\"tensor_id\":\"" id                     \
	"\",\"span_id\":\"s1\",\"device\":\"cpu\",\"bytes\":" #bytes ",\"action\":\"" action    \
	"\",\"dtype\":\"u8\"}\n"

START_TEST(blank_lines_are_skipped_but_counted)
{
	ck_read_fails("\n" META_LINE "\n  \t \r\n{\"kind\":\"oops\"}\n",
		      "t.jsonl:5: unknown record kind \"oops\"");
	struct cgtrace_doc *d = ck_read_ok("\n\n" META_LINE "\n" SPAN_S1 "\n");
	ck_assert_uint_eq(cgtrace_doc_count(d, CGTRACE_KIND_SPAN_START), 1);
	cgtrace_doc_free(d);
}
END_TEST

START_TEST(crlf_line_endings_are_whitespace)
{
	struct cgtrace_doc *d = ck_read_ok("{\"kind\":\"meta\",\"schema\":\"candle-graph/trace/6\","
					   "\"run_id\":\"r\",\"correlation_id\":\"c\",\"entrypoint\":"
					   "\"e\",\"phase\":\"infer\",\"timestamp\":\"t\","
					   "\"capture_step\":3,\"warmup_steps\":2,\"device\":\"cpu\","
					   "\"timing_mode\":\"device_synchronized\",\"tags\":{}}\r\n");
	struct cgtrace_meta m;
	cgtrace_doc_meta(d, &m);
	ck_assert_int_eq(m.phase, CGTRACE_PHASE_INFER);
	ck_assert_int_eq(m.timing_mode, CGTRACE_TIMING_DEVICE_SYNCHRONIZED);
	ck_assert_uint_eq(m.capture_step, 3);
	ck_assert_ptr_null(m.candle_version);
	cgtrace_doc_free(d);
}
END_TEST

START_TEST(unknown_kind_and_missing_kind)
{
	ck_read_fails(META_LINE "{\"kind\":\"spam\"}\n", "t.jsonl:2: unknown record kind \"spam\"");
	ck_read_fails(META_LINE "{\"id\":\"s1\"}\n", "t.jsonl:2: record has no `kind` field");
	ck_read_fails(META_LINE "{\"kind\":7}\n", "t.jsonl:2: field `kind` must be a string");
	ck_read_fails(META_LINE "[1,2]\n", "t.jsonl:2: record must be a JSON object");
}
END_TEST

START_TEST(strict_json)
{
	static const struct {
		const char *line;
		const char *prefix;
	} bad[] = {
		{MEM(01, "a", 1, "alloc"), "t.jsonl:2: invalid JSON at column 34: leading zero"},
		{"{\"kind\":\"memory\",\"timestamp_ns\":1.}\n", "t.jsonl:2: invalid JSON at column"},
		{"{\"kind\":\"gradient\",\"norm\":NaN}\n", "t.jsonl:2: invalid JSON at column"},
		{"{\"kind\":\"gradient\",\"norm\":Infinity}\n", "t.jsonl:2: invalid JSON at column"},
		{"{\"kind\":\"span_end\",\"id\":\"s1\"} x\n", "t.jsonl:2: invalid JSON at column 31"},
		{"{\"kind\":\"span_end\",\"id\":\"s\xff\"}\n", "t.jsonl:2: invalid JSON at column 27"},
		{"{\"kind\":\"span_end\",\"kind\":\"span_end\",\"id\":\"s1\"}\n",
		 "t.jsonl:2: invalid JSON at column"},
		{"{\"kind\":\"span_end\",\"id\":\"s1\",}\n", "t.jsonl:2: invalid JSON at column"},
		{"{'kind':'span_end'}\n", "t.jsonl:2: invalid JSON at column 2"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char text[1024];
		snprintf(text, sizeof(text), "%s%s", META_LINE, bad[i].line);
		ck_read_fails_prefix(text, bad[i].prefix);
	}
}
END_TEST

START_TEST(duplicate_key_via_escape_is_rejected)
{
	ck_read_fails_prefix(META_LINE "{\"kind\":\"span_end\",\"id\":\"s1\",\"\\u0069d\":\"s2\"}\n",
			     "t.jsonl:2: invalid JSON at column 30: duplicate key `id`");
}
END_TEST

START_TEST(u64_is_exact)
{
	struct cgtrace_doc *d = ck_read_ok(META_LINE SPAN_S1 MEM(
		18446744073709551615, "a", 9007199254740993, "alloc"));
	struct cgtrace_memory m;
	cgtrace_doc_memory(d, 0, &m);
	ck_assert_uint_eq(m.timestamp_ns, UINT64_MAX);
	ck_assert_uint_eq(m.bytes, 9007199254740993ull);
	ck_assert_uint_eq(m.ndim, 0);
	ck_assert_int_eq(m.category, CGTRACE_CAT_OTHER);
	ck_assert_ptr_null(m.op_name);
	cgtrace_doc_free(d);

	ck_read_fails(META_LINE MEM(18446744073709551616, "a", 1, "alloc"),
		      "t.jsonl:2: memory record: field `timestamp_ns` is out of range: "
		      "18446744073709551616 (maximum 18446744073709551615)");
	ck_read_fails(META_LINE MEM(1.0, "a", 1, "alloc"),
		      "t.jsonl:2: memory record: field `timestamp_ns` must be an unsigned 64-bit "
		      "integer, got 1.0");
	ck_read_fails(META_LINE MEM(1e3, "a", 1, "alloc"),
		      "t.jsonl:2: memory record: field `timestamp_ns` must be an unsigned 64-bit "
		      "integer, got 1e3");
	ck_read_fails(META_LINE MEM(-0, "a", 1, "alloc"),
		      "t.jsonl:2: memory record: field `timestamp_ns` must be an unsigned 64-bit "
		      "integer, got -0");
	ck_read_fails(META_LINE MEM(1, "a", -1, "alloc"),
		      "t.jsonl:2: memory record: field `bytes` must be an unsigned 64-bit integer, "
		      "got -1");
	ck_read_fails(META_LINE MEM(1, "a", "1", "alloc"),
		      "t.jsonl:2: memory record: field `bytes` must be an unsigned 64-bit integer");
}
END_TEST

START_TEST(null_means_absent_only_for_optional_fields)
{
	struct cgtrace_doc *d = ck_read_ok(
		META_LINE "{\"kind\":\"span_start\",\"id\":\"s1\",\"parent_id\":null,\"name\":\"r\","
			  "\"start_ns\":0,\"span_kind\":\"op\",\"step\":null}\n"
			  "{\"kind\":\"op\",\"span_id\":\"s1\",\"op_name\":\"mm\",\"output\":null,"
			  "\"shape\":[2,3],\"dtype\":\"f32\",\"device\":\"cpu\",\"duration_ns\":5,"
			  "\"storage_bytes\":null}\n");
	struct cgtrace_span s;
	cgtrace_doc_span(d, 0, &s);
	ck_assert_ptr_null(s.parent_id);
	ck_assert_int_eq(s.step, CGTRACE_STEP_NONE);
	ck_assert_int_eq(s.kind, CGTRACE_SPAN_OP);
	struct cgtrace_op op;
	cgtrace_doc_op(d, 0, &op);
	ck_assert_ptr_null(op.output);
	ck_assert_uint_eq(op.storage_bytes, 24);
	ck_assert_uint_eq(op.n_inputs, 0);
	ck_assert_uint_eq(op.timestamp_ns, 0);
	cgtrace_doc_free(d);

	ck_read_fails(META_LINE "{\"kind\":\"span_start\",\"id\":null,\"name\":\"r\","
				"\"start_ns\":0,\"span_kind\":\"op\"}\n",
		      "t.jsonl:2: span_start record: field `id` must be a string, not null");
	ck_read_fails(META_LINE "{\"kind\":\"span_start\",\"id\":\"s1\",\"name\":\"r\","
				"\"start_ns\":0,\"span_kind\":\"op\",\"measured\":null}\n",
		      "t.jsonl:2: span_start record: field `measured` must be a boolean, not null");
	ck_read_fails(META_LINE "{\"kind\":\"span_end\",\"id\":\"s1\",\"duration_ns\":null}\n",
		      "t.jsonl:2: span_end record: field `duration_ns` must be an unsigned 64-bit "
		      "integer, not null");
}
END_TEST

START_TEST(unknown_fields_are_ignored)
{
	struct cgtrace_doc *d = ck_read_ok(
		META_LINE "{\"kind\":\"span_start\",\"extra\":{\"a\":[1,2.5e300,{\"b\":null}]},"
			  "\"id\":\"s1\",\"name\":\"r\",\"start_ns\":7,\"span_kind\":\"module\","
			  "\"measured\":true,\"zzz\":1e400}\n");
	struct cgtrace_span s;
	cgtrace_doc_span(d, 0, &s);
	ck_assert_uint_eq(s.start_ns, 7);
	ck_assert(s.measured);
	ck_assert(!s.closed);
	ck_assert_uint_eq(s.duration_ns, 0);
	cgtrace_doc_free(d);
}
END_TEST

START_TEST(missing_required_and_wrong_types)
{
	ck_read_fails(META_LINE "{\"kind\":\"memory\",\"timestamp_ns\":1,\"tensor_id\":\"a\","
				"\"span_id\":\"s1\",\"device\":\"cpu\",\"action\":\"alloc\","
				"\"dtype\":\"u8\"}\n",
		      "t.jsonl:2: memory record: missing field `bytes`");
	ck_read_fails(META_LINE "{\"kind\":\"gradient\",\"event_id\":\"g1\",\"root\":\"vb\","
				"\"param_key\":\"w\",\"state\":\"present\",\"norm\":1.0}\n",
		      "t.jsonl:2: gradient record: missing field `key`");
	ck_read_fails(META_LINE MEM(1, "a", 1, "grab"),
		      "t.jsonl:2: memory record: field `action` must be one of `alloc`, `free`, "
		      "got \"grab\"");
	ck_read_fails(META_LINE "{\"kind\":\"op\",\"span_id\":\"s1\",\"op_name\":\"mm\","
				"\"shape\":[1,\"2\"],\"dtype\":\"f32\",\"device\":\"cpu\","
				"\"duration_ns\":5}\n",
		      "t.jsonl:2: op record: field `shape` must be an array of unsigned 64-bit "
		      "integers");
	ck_read_fails("{\"kind\":\"meta\",\"schema\":\"candle-graph/trace/6\",\"run_id\":\"r\","
		      "\"correlation_id\":\"c\",\"entrypoint\":\"e\",\"phase\":\"train\","
		      "\"timestamp\":\"t\",\"capture_step\":1,\"warmup_steps\":0,\"device\":\"cpu\","
		      "\"timing_mode\":\"host\",\"tags\":{\"a\":1}}\n",
		      "t.jsonl:1: meta record: tag `a` must be a string");
	ck_read_fails("{\"kind\":\"meta\",\"schema\":\"candle-graph/trace/6\",\"run_id\":\"r\","
		      "\"correlation_id\":\"c\",\"entrypoint\":\"e\",\"phase\":\"train\","
		      "\"timestamp\":\"t\",\"capture_step\":1,\"warmup_steps\":0,\"device\":\"cpu\","
		      "\"timing_mode\":\"host\"}\n",
		      "t.jsonl:1: meta record: missing field `tags`");
}
END_TEST

START_TEST(meta_rules)
{
	ck_read_fails("\n  \n", "t.jsonl: trace stream is missing a meta record with run metadata");
	ck_read_fails(SPAN_S1, "t.jsonl: trace stream is missing a meta record with run metadata");
	ck_read_fails(SPAN_S1 META_LINE,
		      "t.jsonl:2: meta record must be the first non-empty trace record");
	ck_read_fails(META_LINE META_LINE,
		      "t.jsonl:2: duplicate meta record; only one meta record is allowed");
	ck_read_fails("{\"kind\":\"meta\",\"schema\":\"not-candle-graph\",\"run_id\":\"r\","
		      "\"correlation_id\":\"c\",\"entrypoint\":\"e\",\"phase\":\"train\","
		      "\"timestamp\":\"t\",\"capture_step\":1,\"warmup_steps\":0,\"device\":\"cpu\","
		      "\"timing_mode\":\"host\",\"tags\":{}}\n",
		      "t.jsonl:1: unsupported trace schema \"not-candle-graph\"; expected "
		      "\"candle-graph/trace/6\"");
}
END_TEST

START_TEST(meta_tags_sorted)
{
	struct cgtrace_doc *d = ck_read_ok(
		"{\"kind\":\"meta\",\"schema\":\"candle-graph/trace/6\",\"run_id\":\"r\","
		"\"correlation_id\":\"c\",\"entrypoint\":\"e\",\"phase\":\"train\","
		"\"timestamp\":\"t\",\"capture_step\":1,\"warmup_steps\":0,\"device\":\"cpu\","
		"\"measured_region_device_synchronized\":true,"
		"\"timing_mode\":\"host\",\"tags\":{\"z\":\"1\",\"b\":\"\\u00e9\"},"
		"\"candle_version\":\"0.8.0\"}\n");
	struct cgtrace_meta m;
	cgtrace_doc_meta(d, &m);
	ck_assert_uint_eq(m.n_tags, 2);
	ck_assert_str_eq(m.tags[0].key, "b");
	ck_assert_str_eq(m.tags[0].value, "\xc3\xa9");
	ck_assert_str_eq(m.tags[1].key, "z");
	ck_assert(m.measured_region_device_synchronized);
	ck_assert_str_eq(m.candle_version, "0.8.0");
	cgtrace_doc_free(d);
}
END_TEST

START_TEST(span_rules)
{
	ck_read_fails(META_LINE SPAN_S1 SPAN_S1, "t.jsonl:3: duplicate span_start id `s1`");
	ck_read_fails(META_LINE "{\"kind\":\"span_end\",\"id\":\"missing\",\"duration_ns\":0}\n",
		      "t.jsonl:2: span_end for unknown span `missing`");
	ck_read_fails(META_LINE SPAN_S1 "{\"kind\":\"span_end\",\"id\":\"s1\"}\n"
					"{\"kind\":\"span_end\",\"id\":\"s1\"}\n",
		      "t.jsonl:4: duplicate span_end for `s1`");
}
END_TEST

START_TEST(spans_sorted_bytewise)
{
	struct cgtrace_doc *d = ck_read_ok(
		META_LINE SPAN_S1
		"{\"kind\":\"span_start\",\"id\":\"s2\",\"parent_id\":\"s1\",\"name\":\"a\",\"start_ns\":1,\"span_kind\":\"op\",\"step\":\"backward\"}\n"
		"{\"kind\":\"span_start\",\"id\":\"s10\",\"parent_id\":\"s2\",\"name\":\"b\",\"start_ns\":2,\"span_kind\":\"op\"}\n"
		"{\"kind\":\"span_end\",\"id\":\"s10\",\"duration_ns\":42}\n");
	static const char *const order[] = {"s1", "s10", "s2"};
	for (size_t i = 0; i < 3; i++) {
		struct cgtrace_span s;
		cgtrace_doc_span(d, i, &s);
		ck_assert_str_eq(s.id, order[i]);
		ck_assert_int_eq(s.closed, i == 1);
		ck_assert_uint_eq(s.duration_ns, i == 1 ? 42 : 0);
	}
	struct cgtrace_span s2;
	cgtrace_doc_span(d, 2, &s2);
	ck_assert_int_eq(s2.step, CGTRACE_STEP_BACKWARD);
	cgtrace_doc_free(d);
}
END_TEST

START_TEST(storage_bytes_are_derived)
{
	struct cgtrace_doc *d = ck_read_ok(
		META_LINE
		"{\"kind\":\"op\",\"span_id\":\"s1\",\"op_name\":\"a\",\"shape\":[],\"dtype\":\" BF16 \",\"device\":\"cpu\",\"duration_ns\":1}\n"
		"{\"kind\":\"op\",\"span_id\":\"s1\",\"op_name\":\"b\",\"shape\":[4,4],\"dtype\":\"q4k\",\"device\":\"cpu\",\"duration_ns\":1}\n"
		"{\"kind\":\"op\",\"span_id\":\"s1\",\"op_name\":\"c\",\"shape\":[4294967296,4294967296,2],\"dtype\":\"f64\",\"device\":\"cpu\",\"duration_ns\":1}\n"
		"{\"kind\":\"op\",\"span_id\":\"s1\",\"op_name\":\"d\",\"shape\":[3],\"dtype\":\"f32\",\"device\":\"cpu\",\"duration_ns\":1,\"storage_bytes\":5,\"inputs\":[\"x\",\"y\"]}\n"
		"{\"kind\":\"tensor\",\"span_id\":\"s1\",\"tensor_id\":\"t\",\"shape\":[2,2],\"dtype\":\"i64\",\"device\":\"cuda:0\",\"requires_grad\":true,\"category\":\"parameter\"}\n");
	struct cgtrace_op op;
	const uint64_t expect[] = {2, 0, UINT64_MAX, 5};
	for (size_t i = 0; i < 4; i++) {
		cgtrace_doc_op(d, i, &op);
		ck_assert_uint_eq(op.storage_bytes, expect[i]);
	}
	ck_assert_uint_eq(op.n_inputs, 2);
	ck_assert_str_eq(op.inputs[1], "y");
	struct cgtrace_tensor t;
	cgtrace_doc_tensor(d, 0, &t);
	ck_assert_uint_eq(t.storage_bytes, 32);
	ck_assert_str_eq(t.device, "cuda:0");
	ck_assert(t.requires_grad);
	ck_assert_int_eq(t.category, CGTRACE_CAT_PARAMETER);
	cgtrace_doc_free(d);
}
END_TEST

START_TEST(truncated_last_line_is_a_warning)
{
	struct warn_log w = {0};
	char err[512];
	struct cgtrace_doc *d = test_read(META_LINE SPAN_S1 "{\"kind\":\"memory\",\"timest", err,
					  sizeof(err), &w);
	ck_assert_msg(d != NULL, "%s", err);
	ck_assert(cgtrace_doc_truncated(d));
	ck_assert_int_eq(w.count, 1);
	ck_assert_str_eq(w.text, "t.jsonl:3: trace truncated, incomplete last record ignored\n");
	cgtrace_doc_free(d);

	/* Cut inside a multi-byte UTF-8 sequence: still a cut-off line. */
	memset(&w, 0, sizeof(w));
	d = test_read(META_LINE "{\"kind\":\"span_start\",\"id\":\"\xc3", err, sizeof(err), &w);
	ck_assert_msg(d != NULL, "%s", err);
	ck_assert_int_eq(w.count, 1);
	cgtrace_doc_free(d);

	/* A complete last line without a newline is an ordinary record. */
	memset(&w, 0, sizeof(w));
	d = test_read(META_LINE "{\"kind\":\"span_start\",\"id\":\"s1\",\"name\":\"r\",\"start_ns\":0,"
				"\"span_kind\":\"op\"}",
		      err, sizeof(err), &w);
	ck_assert_msg(d != NULL, "%s", err);
	ck_assert(!cgtrace_doc_truncated(d));
	ck_assert_int_eq(w.count, 0);
	ck_assert_uint_eq(cgtrace_doc_count(d, CGTRACE_KIND_SPAN_START), 1);
	cgtrace_doc_free(d);

	/* Well-formed but wrong: an error even on the last line. */
	ck_read_fails(META_LINE "{\"kind\":\"nope\"}", "t.jsonl:2: unknown record kind \"nope\"");
	/* A broken line with a newline after it is an error, not a truncation. */
	ck_read_fails_prefix(META_LINE "{\"kind\":\"memory\",\"timest\n",
			     "t.jsonl:2: invalid JSON at column");
	/* Only a cut-off meta: the warning, then no meta. */
	ck_read_fails("{\"kind\":\"meta\",\"sch",
		      "t.jsonl: trace stream is missing a meta record with run metadata");
}
END_TEST

START_TEST(extension_kinds_and_fields)
{
	struct cgtrace_doc *d = ck_read_ok(
		META_LINE
		"{\"kind\":\"cgprobe_device\",\"device\":\"cuda:0\",\"uuid\":\"GPU-1234\",\"name\":\"H200\",\"total_bytes\":150000000000}\n"
		"{\"kind\":\"memory\",\"timestamp_ns\":1,\"tensor_id\":\"0x10\",\"span_id\":\"s1\",\"op_name\":\"cudaMallocManaged\",\"device\":\"cuda:0\",\"bytes\":8,\"action\":\"alloc\",\"shape\":[8],\"dtype\":\"u8\",\"category\":\"other\",\"managed\":true}\n"
		"{\"kind\":\"device_memory\",\"timestamp_ns\":2,\"device\":\"cuda:0\",\"used_bytes\":10,\"free_bytes\":20,\"reserved_bytes\":4,\"oom_request_bytes\":1000}\n");
	struct cgtrace_device_info di;
	cgtrace_doc_device_info(d, 0, &di);
	ck_assert_str_eq(di.uuid, "GPU-1234");
	ck_assert_str_eq(di.name, "H200");
	ck_assert_uint_eq(di.total_bytes, 150000000000ull);
	struct cgtrace_memory m;
	cgtrace_doc_memory(d, 0, &m);
	ck_assert(m.managed);
	ck_assert_uint_eq(m.ndim, 1);
	ck_assert_uint_eq(m.shape[0], 8);
	struct cgtrace_device_memory dm;
	cgtrace_doc_device_memory(d, 0, &dm);
	ck_assert(dm.has_reserved && dm.has_oom_request);
	ck_assert_uint_eq(dm.oom_request_bytes, 1000);
	cgtrace_doc_free(d);
}
END_TEST

/* The identity as fields of a device's first record: one table entry per device, the first. */
#define DEVMEM(ts, dev, extra)                                                                     \
	"{\"kind\":\"device_memory\",\"timestamp_ns\":" #ts ",\"device\":\"" dev "\","           \
	"\"used_bytes\":1,\"free_bytes\":2" extra "}\n"
#define CUDA_MEM(ts, id, dev, extra)                                                               \
	"{\"kind\":\"memory\",\"timestamp_ns\":" #ts ",\"tensor_id\":\"" id "\",\"span_id\":\"s1\"," \
	"\"device\":\"" dev "\",\"bytes\":8,\"action\":\"alloc\",\"dtype\":\"u8\"" extra "}\n"

START_TEST(device_identity_rides_on_records)
{
	struct cgtrace_doc *d = ck_read_ok(
		META_LINE
		CUDA_MEM(1, "a", "cuda:1", ",\"cgprobe_device_uuid\":\"GPU-b\",\"cgprobe_device_total_bytes\":64")
		DEVMEM(2, "cuda:0", ",\"cgprobe_device_uuid\":\"GPU-a\",\"cgprobe_device_name\":\"H200\","
				    "\"cgprobe_device_total_bytes\":null")
		/* Repeated as it was: nothing new. Name or size without a UUID: no identity. */
		CUDA_MEM(3, "b", "cuda:1", ",\"cgprobe_device_uuid\":\"GPU-b\",\"cgprobe_device_total_bytes\":64")
		CUDA_MEM(4, "c", "cuda:2", ",\"cgprobe_device_name\":\"X\",\"cgprobe_device_total_bytes\":9")
		"{\"kind\":\"cgprobe_device\",\"device\":\"cuda:1\",\"uuid\":\"GPU-b\",\"total_bytes\":64}\n");
	ck_assert_uint_eq(cgtrace_doc_count(d, CGTRACE_KIND_DEVICE_INFO), 2);
	ck_assert_uint_eq(cgtrace_doc_device_info_conflicts(d), 0);
	struct cgtrace_device_info di;
	cgtrace_doc_device_info(d, 0, &di);
	ck_assert_str_eq(di.device, "cuda:1");
	ck_assert_str_eq(di.uuid, "GPU-b");
	ck_assert_ptr_null(di.name);
	ck_assert(di.has_total);
	ck_assert_uint_eq(di.total_bytes, 64);
	cgtrace_doc_device_info(d, 1, &di);
	ck_assert_str_eq(di.device, "cuda:0");
	ck_assert_str_eq(di.name, "H200");
	ck_assert(!di.has_total);
	ck_assert_uint_eq(cgtrace_doc_count(d, CGTRACE_KIND_MEMORY), 3);
	ck_assert_uint_eq(cgtrace_doc_count(d, CGTRACE_KIND_DEVICE_MEMORY), 1);
	cgtrace_doc_free(d);

	/* A second, different identity, in either form: the first is kept, the others counted. */
	d = ck_read_ok(META_LINE
		       "{\"kind\":\"cgprobe_device\",\"device\":\"cuda:0\",\"uuid\":\"GPU-a\"}\n"
		       CUDA_MEM(1, "a", "cuda:0", ",\"cgprobe_device_uuid\":\"GPU-a\",\"cgprobe_device_name\":\"n\"")
		       DEVMEM(2, "cuda:0", ",\"cgprobe_device_uuid\":\"GPU-z\""));
	ck_assert_uint_eq(cgtrace_doc_count(d, CGTRACE_KIND_DEVICE_INFO), 1);
	ck_assert_uint_eq(cgtrace_doc_device_info_conflicts(d), 2);
	cgtrace_doc_device_info(d, 0, &di);
	ck_assert_str_eq(di.uuid, "GPU-a");
	ck_assert_ptr_null(di.name);
	cgtrace_doc_free(d);

	/* The fields have types like any other. */
	ck_read_fails_prefix(META_LINE CUDA_MEM(1, "a", "cuda:0", ",\"cgprobe_device_uuid\":7"),
			     "t.jsonl:2:");
	ck_read_fails_prefix(META_LINE DEVMEM(1, "cuda:0", ",\"cgprobe_device_total_bytes\":-1"),
			     "t.jsonl:2:");
}
END_TEST

START_TEST(zstd_is_read_transparently)
{
	const char *text = META_LINE SPAN_S1 MEM(5, "a", 100, "alloc");
	size_t len = strlen(text), cap = ZSTD_compressBound(len);
	char *z = malloc(cap);
	size_t zn = ZSTD_compress(z, cap, text, len, 3);
	ck_assert(!ZSTD_isError(zn));
	struct cgtrace_doc *d = NULL;
	char err[256];
	ck_assert_int_eq(cgtrace_doc_read_mem("t.jsonl.zst", z, zn, NULL, &d, err, sizeof(err)), 0);
	ck_assert_uint_eq(cgtrace_doc_count(d, CGTRACE_KIND_MEMORY), 1);
	cgtrace_doc_free(d);

	free(z);

	/* A compressed stream cut short keeps every complete block before the cut. */
	struct cg_text {
		char *p;
		size_t n;
	} big = {malloc(1 << 20), 0};
	big.n = (size_t)sprintf(big.p, "%s%s", META_LINE, SPAN_S1);
	for (int i = 0; i < 5000; i++)
		big.n += (size_t)sprintf(big.p + big.n,
					 "{\"kind\":\"memory\",\"timestamp_ns\":%d,\"tensor_id\":"
					 "\"t%d\",\"span_id\":\"s1\",\"device\":\"cpu\",\"bytes\":%d,"
					 "\"action\":\"alloc\",\"dtype\":\"u8\"}\n",
					 i, i * 7919 % 100003, i * 31 % 977);
	cap = ZSTD_compressBound(big.n);
	z = malloc(cap);
	zn = ZSTD_compress(z, cap, big.p, big.n, 1);
	ck_assert(!ZSTD_isError(zn));
	int r = cgtrace_doc_read_mem("t.jsonl.zst", z, zn * 7 / 10, NULL, &d, err, sizeof(err));
	ck_assert_msg(r == 0, "%s", err);
	size_t n = cgtrace_doc_count(d, CGTRACE_KIND_MEMORY);
	ck_assert_msg(n > 0 && n < 5000, "%zu records survived the cut", n);
	cgtrace_doc_free(d);
	free(big.p);
	free(z);
}
END_TEST

/* The verdict on bytes that are no trace: the document reader's and the stream's first record's. */
static void ck_no_trace(const void *data, size_t len, const char *expected)
{
	struct cgtrace_doc *d = NULL;
	struct cgtrace_reader *r;
	struct cgtrace_record rec;
	char err[512];
	int ret = cgtrace_doc_read_mem("t", data, len, NULL, &d, err, sizeof(err));
	ck_assert_int_eq(ret, -EBADMSG);
	ck_assert_str_eq(err, expected);
	ck_assert_int_eq(cgtrace_reader_open_mem(&r, "t", data, len, NULL), 0);
	ck_assert_int_eq(cgtrace_reader_next(r, &rec), -EBADMSG);
	ck_assert_str_eq(cgtrace_reader_message(r), expected);
	cgtrace_reader_close(r);
}

/* Said as what they are, not as a missing meta record or a first line's JSON error. */
START_TEST(input_that_is_no_trace_says_what_it_is)
{
	static const char png[] = "\x89PNG\r\n\x1a\n\0\0\0\rIHDR\xff\xfe";
	ck_no_trace("", 0, "t: empty file");
	ck_no_trace(png, sizeof(png) - 1, "t: not a trace: neither compact nor JSONL");
	ck_no_trace("\n\n  hello\n", 11, "t: not a trace: neither compact nor JSONL");
	ck_no_trace("[1]\n", 4, "t: not a trace: neither compact nor JSONL");
	char z[64];
	size_t zn = ZSTD_compress(z, sizeof(z), "# notes\n", 8, 1);
	ck_assert(!ZSTD_isError(zn));
	ck_no_trace(z, zn, "t: not a trace: neither compact nor JSONL");

	/* Files: a directory, an empty file, by either reader. */
	char dir[] = "/tmp/cgtrace-notrace-XXXXXX", path[64], err[512];
	ck_assert_ptr_nonnull(mkdtemp(dir));
	struct cgtrace_doc *d = NULL;
	struct cgtrace_reader *r;
	struct cgtrace_record rec;
	ck_assert_int_eq(cgtrace_doc_read(dir, NULL, &d, err, sizeof(err)), -EISDIR);
	snprintf(path, sizeof(path), "%s: is a directory", dir);
	ck_assert_str_eq(err, path);
	ck_assert_int_eq(cgtrace_reader_open_err(&r, dir, NULL, err, sizeof(err)), -EISDIR);
	ck_assert_ptr_null(r);
	ck_assert_str_eq(err, path);
	snprintf(path, sizeof(path), "%s/empty.cgt", dir);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(cgtrace_doc_read_flags(path, NULL, CGTRACE_READ_STREAM_MEMORY, &d, err,
						sizeof(err)), -EBADMSG);
	ck_assert(strstr(err, "/empty.cgt: empty file") != NULL);
	ck_assert_int_eq(cgtrace_reader_open_err(&r, path, NULL, err, sizeof(err)), 0);
	ck_assert_int_eq(cgtrace_reader_next(r, &rec), -EBADMSG);
	ck_assert(strstr(cgtrace_reader_message(r), "/empty.cgt: empty file") != NULL);
	cgtrace_reader_close(r);
	unlink(path);
	rmdir(dir);
}
END_TEST

TEST_SUITE(suite, "reader-rules")
{
	test_case(s, "reader:stream", 4, blank_lines_are_skipped_but_counted,
	          crlf_line_endings_are_whitespace, unknown_kind_and_missing_kind, strict_json,
	          duplicate_key_via_escape_is_rejected, u64_is_exact,
	          null_means_absent_only_for_optional_fields, unknown_fields_are_ignored,
	          missing_required_and_wrong_types, truncated_last_line_is_a_warning,
	          zstd_is_read_transparently, input_that_is_no_trace_says_what_it_is);
	test_case(s, "reader:document", 4, meta_rules, meta_tags_sorted, span_rules,
	          spans_sorted_bytewise, storage_bytes_are_derived, extension_kinds_and_fields,
	          device_identity_rides_on_records);
}

TEST_MAIN(suite);
