/* SPDX-License-Identifier: MIT */
/*
 * Writer -> reader -> export -> reader: the output of the session parses back
 * to the same document, and the export of a document parses back to itself.
 */
#include <fcntl.h>
#include <math.h>
#include <sys/mman.h>
#include <unistd.h>

#include "test-util.h"
#include "test-main.h"

static char dir[] = "/tmp/cgtrace-rt-XXXXXX";

static void make_dir(void)
{
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void remove_dir(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static struct cgtrace_doc *read_path(const char *path)
{
	struct cgtrace_doc *d = NULL;
	char err[512];
	int r = cgtrace_doc_read(path, NULL, &d, err, sizeof(err));
	ck_assert_msg(r == 0, "%s", err);
	return d;
}

/* Held equal, in x and y: a field (compared as HOW: str, int, uint), or a pointer's presence. */
#define SAME(how, f) ck_assert_##how##_eq(x.f, y.f);
#define SAME_PRESENCE(f) ck_assert_int_eq(!x.f, !y.f);

/* For each record of kind in a, x (of type) and y, the one at its index in b: the checks given. */
#define EACH_PAIR(kind, type, get, ...)                                                            \
	for (size_t i = 0; i < cgtrace_doc_count(a, kind); i++) {                                  \
		type x, y;                                                                         \
		get(a, i, &x);                                                                     \
		get(b, i, &y);                                                                     \
		__VA_ARGS__                                                                        \
	}

static void expect_same(const struct cgtrace_doc *a, const struct cgtrace_doc *b)
{
	for (int k = 0; k < CGTRACE_KIND_COUNT; k++)
		ck_assert_uint_eq(cgtrace_doc_count(a, (enum cgtrace_kind)k),
				  cgtrace_doc_count(b, (enum cgtrace_kind)k));
	struct cgtrace_meta ma, mb;
	cgtrace_doc_meta(a, &ma);
	cgtrace_doc_meta(b, &mb);
	ck_assert_str_eq(ma.run_id, mb.run_id);
	ck_assert_str_eq(ma.entrypoint, mb.entrypoint);
	ck_assert_str_eq(ma.correlation_id, mb.correlation_id);
	ck_assert_uint_eq(ma.n_tags, mb.n_tags);
	for (size_t i = 0; i < ma.n_tags; i++) {
		ck_assert_str_eq(ma.tags[i].key, mb.tags[i].key);
		ck_assert_str_eq(ma.tags[i].value, mb.tags[i].value);
	}
	EACH_PAIR(CGTRACE_KIND_SPAN_START, struct cgtrace_span, cgtrace_doc_span,
		  SAME(str, id) SAME(str, name) SAME(int, closed) SAME(uint, duration_ns)
		  SAME(int, step) SAME_PRESENCE(parent_id))
	EACH_PAIR(CGTRACE_KIND_MEMORY, struct cgtrace_memory, cgtrace_doc_memory,
		  SAME(str, tensor_id) SAME(uint, bytes) SAME(uint, timestamp_ns) SAME(int, action)
		  SAME(int, category) SAME(uint, ndim) SAME_PRESENCE(op_name))
	/* Identities by device: the table keeps first appearance, which export may reorder. */
	for (size_t i = 0; i < cgtrace_doc_count(a, CGTRACE_KIND_DEVICE_INFO); i++) {
		struct cgtrace_device_info x, y = {0};
		cgtrace_doc_device_info(a, i, &x);
		for (size_t j = 0; j < cgtrace_doc_count(b, CGTRACE_KIND_DEVICE_INFO); j++) {
			cgtrace_doc_device_info(b, j, &y);
			if (!strcmp(x.device, y.device))
				break;
		}
		SAME(str, device) SAME(str, uuid) SAME_PRESENCE(name)
		if (x.name)
			ck_assert_str_eq(x.name, y.name);
		SAME(int, has_total) SAME(uint, total_bytes)
	}
	EACH_PAIR(CGTRACE_KIND_GRADIENT, struct cgtrace_gradient, cgtrace_doc_gradient,
		  SAME(str, key) SAME(int, has_norm)
		  ck_assert(!x.has_norm || memcmp(&x.norm, &y.norm, sizeof(double)) == 0);)
	struct cgtrace_summary sa, sb;
	ck_assert_int_eq(cgtrace_doc_summary(a, &sa), 0);
	ck_assert_int_eq(cgtrace_doc_summary(b, &sb), 0);
	ck_assert(memcmp(&sa, &sb, sizeof(sa)) == 0);
}

static struct cgtrace_doc *export_and_read(const struct cgtrace_doc *d)
{
	int fd = memfd_create("export", MFD_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(cgtrace_doc_export_jsonl(d, fd), 0);
	off_t len = lseek(fd, 0, SEEK_CUR);
	char *buf = malloc((size_t)len + 1);
	ck_assert(pread(fd, buf, (size_t)len, 0) == len);
	buf[len] = '\0';
	close(fd);
	struct cgtrace_doc *back = ck_read_ok(buf);
	free(buf);
	return back;
}

START_TEST(session_output_reads_back_and_exports_to_itself)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/sub/dir/trace.jsonl", dir);
	struct cgtrace_tag tags[] = {{"zeta", "1"}, {"host", "n\xc3\xa9ud"}, {"bad", "a\xff\xfe"}};
	struct cgtrace_run run = {
		.entrypoint = "model::forward",
		.capture_step = 3,
		.device = "cuda:0",
		.tags = tags,
		.n_tags = 3,
	};
	struct cgtrace_session *s;
	ck_assert_int_eq(cgtrace_session_open(&s, path, &run), 0);
	uint64_t outer, inner;
	ck_assert_int_eq(cgtrace_session_begin_span(s, "Model::forward", CGTRACE_SPAN_FUNCTION,
						    CGTRACE_STEP_FORWARD, true, &outer),
			 0);
	ck_assert_int_eq(cgtrace_session_begin_span(s, "matmul \"q\"\n", CGTRACE_SPAN_OP,
						    CGTRACE_STEP_NONE, false, &inner),
			 0);
	uint64_t shape[] = {8, 8};
	const char *inputs[] = {"a", "b"};
	struct cgtrace_op_record op = {
		.op_name = "matmul", .inputs = inputs, .n_inputs = 2, .output = "c",
		.shape = shape, .ndim = 2, .dtype = "f32", .device = "cuda:0",
		.duration_ns = 1200,
	};
	ck_assert_int_eq(cgtrace_session_record_op(s, inner, &op), 0);
	uint64_t big = UINT64_MAX - 1;
	struct cgtrace_memory_record m = {
		.tensor_id = "t\xe2\x98\x83", .op_name = "matmul", .device = "cuda:0",
		.bytes = big, .shape = shape, .ndim = 2, .dtype = "f32",
		.category = CGTRACE_CAT_AUTO,
	};
	ck_assert_int_eq(cgtrace_session_record_alloc(s, inner, &m), 0);
	m.bytes = 256;
	ck_assert_int_eq(cgtrace_session_record_free(s, inner, &m), 0);
	ck_assert_int_eq(cgtrace_session_end_span(s, inner), 0);
	ck_assert_int_eq(cgtrace_session_end_span(s, outer), 0);
	double norm = 0.1 + 0.2, inf = INFINITY;
	ck_assert_int_eq(cgtrace_session_record_gradient(s, "vb", "encoder.weight",
							 CGTRACE_GRAD_PRESENT, &norm),
			 0);
	ck_assert_int_eq(cgtrace_session_record_gradient(s, "vb", "w2", CGTRACE_GRAD_NON_FINITE,
							 &inf),
			 0);
	uint64_t reserved = 7;
	ck_assert_int_eq(cgtrace_session_record_device_memory(s, "cuda:0", 10, 20, &reserved,
							      NULL),
			 0);
	ck_assert_int_eq(cgtrace_session_finish(s), 0);

	struct cgtrace_doc *d = read_path(path);
	struct cgtrace_meta meta;
	cgtrace_doc_meta(d, &meta);
	ck_assert_str_eq(meta.entrypoint, "model::forward");
	ck_assert_str_eq(meta.correlation_id, "model::forward/update-3");
	ck_assert_uint_eq(meta.warmup_steps, 2);
	ck_assert_str_eq(meta.tags[0].key, "bad");
	ck_assert_str_eq(meta.tags[0].value, "a\xef\xbf\xbd\xef\xbf\xbd");
	ck_assert_uint_eq(cgtrace_doc_count(d, CGTRACE_KIND_SPAN_START), 3);
	ck_assert_uint_eq(cgtrace_doc_count(d, CGTRACE_KIND_SPAN_END), 3);
	struct cgtrace_span sp;
	cgtrace_doc_span(d, 2, &sp);
	ck_assert_str_eq(sp.id, "s3");
	ck_assert_str_eq(sp.parent_id, "s2");
	ck_assert_str_eq(sp.name, "matmul \"q\"\n");
	struct cgtrace_memory mv;
	cgtrace_doc_memory(d, 0, &mv);
	ck_assert_uint_eq(mv.bytes, big);
	ck_assert_str_eq(mv.tensor_id, "t\xe2\x98\x83");
	ck_assert_int_eq(mv.category, CGTRACE_CAT_ACTIVATION); /* from the forward step */
	struct cgtrace_op ov;
	cgtrace_doc_op(d, 0, &ov);
	ck_assert_uint_eq(ov.storage_bytes, 256);
	struct cgtrace_gradient g;
	cgtrace_doc_gradient(d, 0, &g);
	ck_assert(g.has_norm && g.norm == 0.1 + 0.2);
	cgtrace_doc_gradient(d, 1, &g);
	ck_assert(!g.has_norm);

	struct cgtrace_doc *back = export_and_read(d);
	expect_same(d, back);
	cgtrace_doc_free(back);
	cgtrace_doc_free(d);
}
END_TEST

START_TEST(op_records_do_not_fabricate_memory)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/op.jsonl", dir);
	struct cgtrace_run run = {.entrypoint = "train::loss", .capture_step = 1, .device = "cpu"};
	struct cgtrace_session *s;
	ck_assert_int_eq(cgtrace_session_open(&s, path, &run), 0);
	uint64_t shape[] = {4};
	struct cgtrace_op_record op = {.op_name = "relu", .shape = shape, .ndim = 1,
				       .dtype = "f32", .device = "cpu", .duration_ns = 1};
	ck_assert_int_eq(cgtrace_session_record_op(s, 1, &op), 0);
	ck_assert_int_eq(cgtrace_session_finish(s), 0);
	struct cgtrace_doc *d = read_path(path);
	ck_assert_uint_eq(cgtrace_doc_count(d, CGTRACE_KIND_OP), 1);
	ck_assert_uint_eq(cgtrace_doc_count(d, CGTRACE_KIND_MEMORY), 0);
	cgtrace_doc_free(d);
}
END_TEST

START_TEST(corpus_exports_to_itself)
{
	/* Every record kind, escapes, edge integers, unclosed spans. */
	struct cgtrace_doc *d = ck_read_ok(
		META_LINE
		"{\"kind\":\"span_start\",\"id\":\"s10\",\"parent_id\":\"s2\",\"name\":\"\\u2603\\t\",\"start_ns\":1,\"span_kind\":\"module\",\"measured\":true,\"step\":\"optimizer\"}\n"
		"{\"kind\":\"span_start\",\"id\":\"s2\",\"name\":\"x\",\"start_ns\":0,\"span_kind\":\"op\"}\n"
		"{\"kind\":\"span_end\",\"id\":\"s10\",\"duration_ns\":18446744073709551615}\n"
		"{\"kind\":\"tensor\",\"span_id\":\"s2\",\"tensor_id\":\"t\",\"shape\":[0,3],\"dtype\":\"weird\",\"device\":\"cpu\",\"category\":\"gradient\"}\n"
		"{\"kind\":\"memory\",\"timestamp_ns\":3,\"tensor_id\":\"m\",\"span_id\":\"s2\",\"device\":\"cuda:1\",\"bytes\":12,\"action\":\"alloc\",\"shape\":[3,4],\"dtype\":\"u8\",\"managed\":true}\n"
		"{\"kind\":\"device_memory\",\"timestamp_ns\":4,\"device\":\"cuda:1\",\"used_bytes\":1,\"free_bytes\":2,\"oom_request_bytes\":5}\n"
		"{\"kind\":\"device_memory\",\"timestamp_ns\":5,\"device\":\"cuda:2\",\"used_bytes\":1,\"free_bytes\":2,\"cgprobe_device_uuid\":\"GPU-\\u00e9\",\"cgprobe_device_name\":\"n\",\"cgprobe_device_total_bytes\":18446744073709551615}\n"
		"{\"kind\":\"edge\",\"from_span\":\"s2\",\"to_span\":\"s10\",\"duration_ns\":9}\n"
		"{\"kind\":\"gradient\",\"event_id\":\"g\",\"root\":\"r\",\"key\":\"k\",\"state\":\"zero\",\"norm\":5e-324}\n"
		"{\"kind\":\"cgprobe_device\",\"device\":\"cuda:1\",\"uuid\":\"GPU-x\"}\n");
	struct cgtrace_doc *back = export_and_read(d);
	expect_same(d, back);
	struct cgtrace_memory mv;
	cgtrace_doc_memory(back, 0, &mv);
	ck_assert(mv.managed);
	ck_assert_uint_eq(mv.ndim, 2);
	struct cgtrace_device_memory dm;
	cgtrace_doc_device_memory(back, 0, &dm);
	ck_assert(dm.has_oom_request && !dm.has_reserved);
	struct cgtrace_tensor tv;
	cgtrace_doc_tensor(back, 0, &tv);
	ck_assert_uint_eq(tv.storage_bytes, 0);
	cgtrace_doc_free(back);
	cgtrace_doc_free(d);
}
END_TEST

TEST_SUITE(suite, "round-trip")
{
	TCase *tc = test_case(s, "round-trip:session", 4,
	                      session_output_reads_back_and_exports_to_itself,
	                      op_records_do_not_fabricate_memory, corpus_exports_to_itself);
	tcase_add_unchecked_fixture(tc, make_dir, remove_dir);
}

TEST_MAIN(suite);
