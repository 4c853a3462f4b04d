/* SPDX-License-Identifier: MIT */
/*
 * The streaming reader: it yields every record of a trace in file order
 * with the values the document reader holds, fails and warns with the
 * document reader's lines, and its export in file order gives back what
 * the recording session wrote, byte for byte.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test-util.h"
#include "test-main.h"

static const char *golden_dir;

static char *golden(const char *name)
{
	static char path[4096];
	snprintf(path, sizeof(path), "%s/%s", golden_dir, name);
	return path;
}

static const char *const good_traces[] = {"train.jsonl", "plain.jsonl", "minbytes.jsonl",
					  "oom.jsonl",   "badtag.jsonl", "open.jsonl",
					  "nomem.jsonl", "truncated.jsonl", "devid.jsonl", "devkind.jsonl"};
static const char *const all_traces[] = {"train.jsonl",  "plain.jsonl",  "minbytes.jsonl",
					 "oom.jsonl",    "badtag.jsonl", "open.jsonl",
					 "nomem.jsonl",  "truncated.jsonl", "bad.jsonl",
					 "empty.jsonl"};

static void quiet(void *user, const char *line)
{
	(void)user;
	(void)line;
}

static void same_shape(const uint64_t *a, size_t na, const uint64_t *b, size_t nb)
{
	ck_assert_uint_eq(na, nb);
	for (size_t i = 0; i < na; i++)
		ck_assert_uint_eq(a[i], b[i]);
}

static size_t find_span(const struct cgtrace_doc *d, const char *id, struct cgtrace_span *out)
{
	size_t n = cgtrace_doc_count(d, CGTRACE_KIND_SPAN_START);
	for (size_t i = 0; i < n; i++) {
		cgtrace_doc_span(d, i, out);
		if (strcmp(out->id, id) == 0)
			return i;
	}
	ck_abort_msg("span %s not in the document", id);
	return n;
}

static void same_meta(const struct cgtrace_meta *a, const struct cgtrace_meta *b)
{
	ck_assert_str_eq(a->schema, b->schema);
	ck_assert_str_eq(a->run_id, b->run_id);
	ck_assert_str_eq(a->correlation_id, b->correlation_id);
	ck_assert_str_eq(a->entrypoint, b->entrypoint);
	ck_assert_str_eq(a->timestamp, b->timestamp);
	ck_assert_str_eq(a->device, b->device);
	ck_assert_pstr_eq(a->candle_version, b->candle_version);
	ck_assert_int_eq(a->phase, b->phase);
	ck_assert_int_eq(a->timing_mode, b->timing_mode);
	ck_assert_int_eq(a->measured_region_device_synchronized,
			 b->measured_region_device_synchronized);
	ck_assert_uint_eq(a->capture_step, b->capture_step);
	ck_assert_uint_eq(a->warmup_steps, b->warmup_steps);
	ck_assert_uint_eq(a->n_tags, b->n_tags);
	for (size_t i = 0; i < a->n_tags; i++) {
		ck_assert_str_eq(a->tags[i].key, b->tags[i].key);
		ck_assert_str_eq(a->tags[i].value, b->tags[i].value);
	}
}

/* One record of the stream against the document's record of that kind and position. */
static void same_record(const struct cgtrace_doc *d, const struct cgtrace_record *r, size_t i)
{
	struct cgtrace_meta m;
	struct cgtrace_span sp;
	struct cgtrace_op op;
	struct cgtrace_tensor t;
	struct cgtrace_memory mem;
	struct cgtrace_device_memory dm;
	struct cgtrace_gradient g;
	struct cgtrace_edge e;
	struct cgtrace_device_info di;

	switch (r->kind) {
	case CGTRACE_KIND_META:
		cgtrace_doc_meta(d, &m);
		same_meta(r->u.meta, &m);
		break;
	case CGTRACE_KIND_SPAN_START:
		find_span(d, r->u.span_start->id, &sp);
		ck_assert_pstr_eq(r->u.span_start->parent_id, sp.parent_id);
		ck_assert_str_eq(r->u.span_start->name, sp.name);
		ck_assert_int_eq(r->u.span_start->kind, sp.kind);
		ck_assert_int_eq(r->u.span_start->step, sp.step);
		ck_assert_int_eq(r->u.span_start->measured, sp.measured);
		ck_assert_uint_eq(r->u.span_start->start_ns, sp.start_ns);
		ck_assert(!r->u.span_start->closed);
		break;
	case CGTRACE_KIND_SPAN_END:
		find_span(d, r->u.span_end->id, &sp);
		ck_assert(sp.closed);
		ck_assert_uint_eq(r->u.span_end->duration_ns, sp.duration_ns);
		break;
	case CGTRACE_KIND_OP:
		cgtrace_doc_op(d, i, &op);
		ck_assert_str_eq(r->u.op->span_id, op.span_id);
		ck_assert_str_eq(r->u.op->op_name, op.op_name);
		ck_assert_uint_eq(r->u.op->n_inputs, op.n_inputs);
		for (size_t k = 0; k < op.n_inputs; k++)
			ck_assert_str_eq(r->u.op->inputs[k], op.inputs[k]);
		ck_assert_pstr_eq(r->u.op->output, op.output);
		same_shape(r->u.op->shape, r->u.op->ndim, op.shape, op.ndim);
		ck_assert_str_eq(r->u.op->dtype, op.dtype);
		ck_assert_str_eq(r->u.op->device, op.device);
		ck_assert_uint_eq(r->u.op->duration_ns, op.duration_ns);
		ck_assert_uint_eq(r->u.op->timestamp_ns, op.timestamp_ns);
		ck_assert_uint_eq(r->u.op->storage_bytes, op.storage_bytes);
		ck_assert_uint_eq(r->u.op->input_storage_bytes, op.input_storage_bytes);
		break;
	case CGTRACE_KIND_TENSOR:
		cgtrace_doc_tensor(d, i, &t);
		ck_assert_str_eq(r->u.tensor->span_id, t.span_id);
		ck_assert_str_eq(r->u.tensor->tensor_id, t.tensor_id);
		same_shape(r->u.tensor->shape, r->u.tensor->ndim, t.shape, t.ndim);
		ck_assert_str_eq(r->u.tensor->dtype, t.dtype);
		ck_assert_str_eq(r->u.tensor->device, t.device);
		ck_assert_int_eq(r->u.tensor->requires_grad, t.requires_grad);
		ck_assert_uint_eq(r->u.tensor->storage_bytes, t.storage_bytes);
		ck_assert_int_eq(r->u.tensor->category, t.category);
		break;
	case CGTRACE_KIND_MEMORY:
		cgtrace_doc_memory(d, i, &mem);
		ck_assert_uint_eq(r->u.memory->timestamp_ns, mem.timestamp_ns);
		ck_assert_str_eq(r->u.memory->tensor_id, mem.tensor_id);
		ck_assert_str_eq(r->u.memory->span_id, mem.span_id);
		ck_assert_pstr_eq(r->u.memory->op_name, mem.op_name);
		ck_assert_str_eq(r->u.memory->device, mem.device);
		ck_assert_uint_eq(r->u.memory->bytes, mem.bytes);
		ck_assert_int_eq(r->u.memory->action, mem.action);
		same_shape(r->u.memory->shape, r->u.memory->ndim, mem.shape, mem.ndim);
		ck_assert_str_eq(r->u.memory->dtype, mem.dtype);
		ck_assert_int_eq(r->u.memory->category, mem.category);
		ck_assert_int_eq(r->u.memory->managed, mem.managed);
		break;
	case CGTRACE_KIND_DEVICE_MEMORY:
		cgtrace_doc_device_memory(d, i, &dm);
		ck_assert_uint_eq(r->u.device_memory->timestamp_ns, dm.timestamp_ns);
		ck_assert_str_eq(r->u.device_memory->device, dm.device);
		ck_assert_uint_eq(r->u.device_memory->used_bytes, dm.used_bytes);
		ck_assert_uint_eq(r->u.device_memory->free_bytes, dm.free_bytes);
		ck_assert_int_eq(r->u.device_memory->has_reserved, dm.has_reserved);
		ck_assert_uint_eq(r->u.device_memory->reserved_bytes, dm.reserved_bytes);
		ck_assert_int_eq(r->u.device_memory->has_oom_request, dm.has_oom_request);
		ck_assert_uint_eq(r->u.device_memory->oom_request_bytes, dm.oom_request_bytes);
		break;
	case CGTRACE_KIND_GRADIENT:
		cgtrace_doc_gradient(d, i, &g);
		ck_assert_str_eq(r->u.gradient->event_id, g.event_id);
		ck_assert_str_eq(r->u.gradient->root, g.root);
		ck_assert_str_eq(r->u.gradient->key, g.key);
		ck_assert_int_eq(r->u.gradient->state, g.state);
		ck_assert_int_eq(r->u.gradient->has_norm, g.has_norm);
		if (g.has_norm)
			ck_assert_double_eq(r->u.gradient->norm, g.norm);
		break;
	case CGTRACE_KIND_EDGE:
		cgtrace_doc_edge(d, i, &e);
		ck_assert_str_eq(r->u.edge->from_span, e.from_span);
		ck_assert_str_eq(r->u.edge->to_span, e.to_span);
		ck_assert_uint_eq(r->u.edge->duration_ns, e.duration_ns);
		break;
	case CGTRACE_KIND_DEVICE_INFO:
		/* Held to the document by device, in golden_records_in_order. */
		(void)di;
		break;
	default:
		ck_abort_msg("record of kind %d", (int)r->kind);
	}
}

/*
 * The identities the stream gives, older-form records and cgprobe_device_*
 * fields alike: the first for each device is the document's (first wins),
 * so their devices are the document's identity table.
 */
struct idents {
	char dev[16][64];
	size_t n;
};

static void same_identity(const struct cgtrace_doc *d, struct idents *seen,
			  const struct cgtrace_device_info *x)
{
	for (size_t k = 0; k < seen->n; k++)
		if (strcmp(seen->dev[k], x->device) == 0)
			return;
	ck_assert_uint_lt(seen->n, 16);
	snprintf(seen->dev[seen->n++], sizeof(seen->dev[0]), "%s", x->device);
	for (size_t i = 0; i < cgtrace_doc_count(d, CGTRACE_KIND_DEVICE_INFO); i++) {
		struct cgtrace_device_info di;
		cgtrace_doc_device_info(d, i, &di);
		if (strcmp(di.device, x->device) != 0)
			continue;
		ck_assert_str_eq(x->uuid, di.uuid);
		ck_assert_pstr_eq(x->name, di.name);
		ck_assert_int_eq(x->has_total, di.has_total);
		ck_assert_uint_eq(x->total_bytes, di.total_bytes);
		return;
	}
	ck_abort_msg("identity of %s not in the document", x->device);
}

/* The kind of each non-blank line, as its `"kind":"..."` spells it. */
static enum cgtrace_kind line_kind(const char *line)
{
	const char *k = strstr(line, "\"kind\":\"");
	ck_assert_ptr_nonnull(k);
	k += 8;
	for (int i = 0; i < CGTRACE_KIND_COUNT; i++) {
		const char *n = cgtrace_kind_name((enum cgtrace_kind)i);
		size_t len = strlen(n);
		if (strncmp(k, n, len) == 0 && k[len] == '"')
			return (enum cgtrace_kind)i;
	}
	ck_abort_msg("no kind in %s", line);
	return CGTRACE_KIND_COUNT;
}

START_TEST(golden_records_in_order)
{
	for (size_t t = 0; t < sizeof(good_traces) / sizeof(good_traces[0]); t++) {
		const char *path = golden(good_traces[t]);
		struct cgtrace_read_options opts = {.warn = quiet};
		struct cgtrace_doc *d = NULL;
		char err[1024];
		ck_assert_msg(cgtrace_doc_read(path, &opts, &d, err, sizeof(err)) == 0, "%s", err);
		FILE *f = fopen(path, "r");
		ck_assert_ptr_nonnull(f);
		struct cgtrace_reader *r;
		ck_assert_int_eq(cgtrace_reader_open(&r, path, &opts), 0);
		size_t seen[CGTRACE_KIND_COUNT] = {0};
		struct idents idents = {.n = 0};
		char line[1 << 14];
		uint64_t line_no = 0;
		struct cgtrace_record rec;
		int ret;
		while ((ret = cgtrace_reader_next(r, &rec)) == 1) {
			/* The record is the next non-blank line of the file. */
			do {
				ck_assert_ptr_nonnull(fgets(line, sizeof(line), f));
				line_no++;
			} while (line[strspn(line, " \t\r")] == '\n');
			ck_assert_uint_eq(rec.line, line_no);
			ck_assert_int_eq(rec.kind, line_kind(line));
			same_record(d, &rec, seen[rec.kind]);
			seen[rec.kind]++;
			struct cgtrace_device_info id;
			if (rec.kind == CGTRACE_KIND_DEVICE_INFO)
				same_identity(d, &idents, rec.u.device_info);
			else if (cgtrace_reader_device_identity(r, &id))
				same_identity(d, &idents, &id);
		}
		ck_assert_uint_eq(idents.n, cgtrace_doc_count(d, CGTRACE_KIND_DEVICE_INFO));
		seen[CGTRACE_KIND_DEVICE_INFO] = idents.n;
		ck_assert_msg(ret == 0, "%s: %s", path, cgtrace_reader_message(r));
		ck_assert_int_eq(cgtrace_reader_truncated(r), cgtrace_doc_truncated(d));
		for (int k = CGTRACE_KIND_OP; k < CGTRACE_KIND_COUNT; k++)
			ck_assert_uint_eq(seen[k], cgtrace_doc_count(d, (enum cgtrace_kind)k));
		ck_assert_uint_eq(seen[CGTRACE_KIND_SPAN_START],
				  cgtrace_doc_count(d, CGTRACE_KIND_SPAN_START));
		ck_assert_uint_eq(seen[CGTRACE_KIND_META], 1);
		/* The end is sticky. */
		ck_assert_int_eq(cgtrace_reader_next(r, &rec), 0);
		cgtrace_reader_close(r);
		fclose(f);
		cgtrace_doc_free(d);
	}
}
END_TEST

START_TEST(golden_first_records)
{
	struct cgtrace_reader *r;
	struct cgtrace_record rec;
	ck_assert_int_eq(cgtrace_reader_open(&r, golden("train.jsonl"), NULL), 0);
	ck_assert_int_eq(cgtrace_reader_next(r, &rec), 1);
	ck_assert_int_eq(rec.kind, CGTRACE_KIND_META);
	ck_assert_str_eq(rec.u.meta->schema, CGTRACE_SCHEMA);
	ck_assert_int_eq(cgtrace_reader_next(r, &rec), 1);
	ck_assert_int_eq(rec.kind, CGTRACE_KIND_SPAN_START);
	ck_assert_str_eq(rec.u.span_start->id, "s1");
	ck_assert_ptr_null(rec.u.span_start->parent_id);
	cgtrace_reader_close(r);
}
END_TEST

/* Whatever the document reader says of a trace (error, warning or nothing), the stream says. */
static void same_verdict(const char *name, const char *text, size_t len)
{
	struct cgtrace_doc *d = NULL;
	char err[1024];
	int dret = cgtrace_doc_read_mem(name, text, len, NULL, &d, err, sizeof(err));
	struct cgtrace_reader *r;
	ck_assert_int_eq(cgtrace_reader_open_mem(&r, name, text, len, NULL), 0);
	struct cgtrace_record rec;
	int ret;
	while ((ret = cgtrace_reader_next(r, &rec)) == 1)
		;
	ck_assert_int_eq(ret, dret);
	ck_assert_str_eq(cgtrace_reader_message(r), err);
	cgtrace_reader_close(r);
	cgtrace_doc_free(d);
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	ck_assert_ptr_nonnull(f);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	rewind(f);
	char *buf = malloc((size_t)n + 1);
	ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

START_TEST(golden_verdicts_match_document)
{
	for (size_t t = 0; t < sizeof(all_traces) / sizeof(all_traces[0]); t++) {
		size_t len;
		char *text = slurp(golden(all_traces[t]), &len);
		same_verdict(all_traces[t], text, len);
		free(text);
	}
}
END_TEST

#define SPAN(id, parent) \
	"{\"kind\":\"span_start\",\"id\":\"" id "\"" parent ",\"name\":\"n\",\"start_ns\":0," \
	"\"span_kind\":\"function\"}\n"
#define END(id) "{\"kind\":\"span_end\",\"id\":\"" id "\",\"duration_ns\":1}\n"
#define OP_LINE                                                                              \
	"{\"kind\":\"op\",\"span_id\":\"s1\",\"op_name\":\"add\",\"shape\":[2],\"dtype\":\"f32\"," \
	"\"device\":\"cpu\",\"duration_ns\":3}\n"

START_TEST(rules_across_records)
{
	static const char *const texts[] = {
		META_LINE SPAN("s1", "") SPAN("s1", ""),
		META_LINE SPAN("s1", "") END("s2"),
		META_LINE SPAN("s1", "") END("s1") END("s1"),
		META_LINE META_LINE,
		OP_LINE META_LINE,
		OP_LINE,
		"",
		META_LINE "{\"kind\":\"op\",\"span_id\":1}\n",
		META_LINE "{\"kind\":\"op\"",
		META_LINE "{\"kind\":\"nope\"}\n",
		META_LINE "{\"kind\":\"op\", \"a\":01}\n",
		META_LINE SPAN("s1", "") "\n  \n" OP_LINE END("s1"),
	};
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
		same_verdict("t.jsonl", texts[i], strlen(texts[i]));
}
END_TEST

START_TEST(truncated_warns_through_callback)
{
	static const char text[] = META_LINE SPAN("s1", "") "{\"kind\":\"span_end\",\"id\":\"s";
	struct warn_log w = {0};
	struct cgtrace_read_options opts = {.warn = test_warn, .user = &w};
	struct cgtrace_reader *r;
	ck_assert_int_eq(cgtrace_reader_open_mem(&r, "t.jsonl", text, strlen(text), &opts), 0);
	struct cgtrace_record rec;
	ck_assert_int_eq(cgtrace_reader_next(r, &rec), 1);
	ck_assert_int_eq(cgtrace_reader_next(r, &rec), 1);
	ck_assert_int_eq(cgtrace_reader_next(r, &rec), 0);
	ck_assert(cgtrace_reader_truncated(r));
	ck_assert_int_eq(w.count, 1);
	ck_assert_str_eq(w.text, "t.jsonl:3: trace truncated, incomplete last record ignored\n");
	ck_assert_str_eq(cgtrace_reader_message(r), "");
	cgtrace_reader_close(r);
}
END_TEST

START_TEST(open_missing_file)
{
	struct cgtrace_reader *r = (void *)1;
	ck_assert_int_eq(cgtrace_reader_open(&r, "/nonexistent/t.jsonl", NULL), -ENOENT);
	ck_assert_ptr_null(r);
}
END_TEST

static char *read_fd(int fd, size_t *len)
{
	off_t n = lseek(fd, 0, SEEK_END);
	char *buf = malloc((size_t)n + 1);
	ck_assert_int_eq(pread(fd, buf, (size_t)n, 0), n);
	*len = (size_t)n;
	return buf;
}

static int export_stream(const char *path)
{
	struct cgtrace_reader *r;
	ck_assert_int_eq(cgtrace_reader_open(&r, path, NULL), 0);
	int fd = memfd_create("export", MFD_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	int ret = cgtrace_reader_export_jsonl(r, fd);
	ck_assert_msg(ret == 0, "%s", cgtrace_reader_message(r));
	cgtrace_reader_close(r);
	return fd;
}

START_TEST(session_trace_exports_byte_identical)
{
	char dir[] = "/tmp/cgtrace-stream-XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	char path[64];
	snprintf(path, sizeof(path), "%s/t.jsonl", dir);
	struct cgtrace_tag tags[] = {{"pid", "1"}, {"host", "h\"1"}};
	struct cgtrace_run run = {.entrypoint = "demo::train", .phase = CGTRACE_PHASE_TRAIN,
				  .capture_step = 2, .device = "cuda:0",
				  .timing_mode = CGTRACE_TIMING_HOST, .tags = tags, .n_tags = 2};
	struct cgtrace_session *s;
	ck_assert_int_eq(cgtrace_session_open(&s, path, &run), 0);
	uint64_t span;
	ck_assert_int_eq(cgtrace_session_begin_span(s, "forward", CGTRACE_SPAN_MODULE,
						    CGTRACE_STEP_FORWARD, true, &span), 0);
	const uint64_t shape[] = {2, 3};
	const char *inputs[] = {"t1", "t\u00e92"};
	struct cgtrace_op_record op = {.op_name = "matmul", .inputs = inputs, .n_inputs = 2,
				       .output = "t3", .shape = shape, .ndim = 2, .dtype = "f32",
				       .device = "cuda:0", .duration_ns = 5};
	ck_assert_int_eq(cgtrace_session_record_op(s, span, &op), 0);
	struct cgtrace_tensor_record t = {.tensor_id = "t3", .shape = shape, .ndim = 2,
					  .dtype = "f16", .device = "cuda:0",
					  .category = CGTRACE_CAT_AUTO};
	ck_assert_int_eq(cgtrace_session_record_tensor(s, span, &t), 0);
	for (uint64_t i = 0; i < 1000; i++) {
		struct cgtrace_memory_record m = {.tensor_id = "0x10", .op_name = "malloc",
						  .device = "cpu", .bytes = 64 + i, .dtype = "u8",
						  .category = CGTRACE_CAT_AUTO};
		ck_assert_int_eq(cgtrace_session_record_alloc(s, span, &m), 0);
		ck_assert_int_eq(cgtrace_session_record_free(s, span, &m), 0);
	}
	const uint64_t reserved = 7;
	ck_assert_int_eq(cgtrace_session_record_device_memory(s, "cuda:0", 10, 20, &reserved,
							      NULL), 0);
	const double norm = 0.5;
	ck_assert_int_eq(cgtrace_session_record_gradient(s, "loss", "w", CGTRACE_GRAD_PRESENT,
							 &norm), 0);
	ck_assert_int_eq(cgtrace_session_end_span(s, span), 0);
	ck_assert_int_eq(cgtrace_session_finish(s), 0);

	size_t want_len, got_len;
	char *want = slurp(path, &want_len);
	int fd = export_stream(path);
	char *got = read_fd(fd, &got_len);
	close(fd);
	ck_assert_uint_eq(got_len, want_len);
	ck_assert(memcmp(got, want, want_len) == 0);
	free(got);
	free(want);
	unlink(path);
	rmdir(dir);
}
END_TEST

/* Any valid trace comes out in the format's field order, and that output is a fixed point. */
START_TEST(export_is_canonical_fixed_point)
{
	static const char text[] =
		"{\"schema\":\"candle-graph/trace/6\",\"kind\":\"meta\",\"run_id\":\"r\","
		"\"correlation_id\":\"c\",\"entrypoint\":\"e\",\"phase\":\"infer\","
		"\"timestamp\":\"t\",\"capture_step\":1,\"warmup_steps\":0,\"device\":\"cpu\","
		"\"timing_mode\":\"host\",\"tags\":{\"b\":\"2\",\"a\":\"1\"},\"extra\":[1]}\n"
		"  {\"id\":\"s1\",\"kind\":\"span_start\",\"name\":\"n\",\"start_ns\":0,"
		"\"span_kind\":\"op\",\"parent_id\":null}\n";
	static const char want[] =
		"{\"kind\":\"meta\",\"schema\":\"candle-graph/trace/6\",\"run_id\":\"r\","
		"\"correlation_id\":\"c\",\"entrypoint\":\"e\",\"phase\":\"infer\","
		"\"timestamp\":\"t\",\"capture_step\":1,\"warmup_steps\":0,\"device\":\"cpu\","
		"\"measured_region_device_synchronized\":false,\"timing_mode\":\"host\","
		"\"tags\":{\"a\":\"1\",\"b\":\"2\"}}\n"
		"{\"kind\":\"span_start\",\"id\":\"s1\",\"name\":\"n\",\"start_ns\":0,"
		"\"span_kind\":\"op\",\"measured\":false}\n";
	struct cgtrace_reader *r;
	ck_assert_int_eq(cgtrace_reader_open_mem(&r, "t", text, strlen(text), NULL), 0);
	int fd = memfd_create("export", MFD_CLOEXEC);
	ck_assert_int_eq(cgtrace_reader_export_jsonl(r, fd), 0);
	cgtrace_reader_close(r);
	size_t len;
	char *got = read_fd(fd, &len);
	close(fd);
	got[len] = '\0';
	ck_assert_str_eq(got, want);
	free(got);
}
END_TEST

START_TEST(export_reports_read_error)
{
	static const char text[] = META_LINE SPAN("s1", "") END("s9");
	struct cgtrace_reader *r;
	ck_assert_int_eq(cgtrace_reader_open_mem(&r, "t.jsonl", text, strlen(text), NULL), 0);
	int fd = memfd_create("export", MFD_CLOEXEC);
	ck_assert_int_eq(cgtrace_reader_export_jsonl(r, fd), -EBADMSG);
	ck_assert_str_eq(cgtrace_reader_message(r), "t.jsonl:3: span_end for unknown span `s9`");
	cgtrace_reader_close(r);
	close(fd);
}
END_TEST

static int stream_setup(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	golden_dir = getenv("STREAM_TEST_GOLDEN");
	if (!golden_dir) {
		fprintf(stderr, "STREAM_TEST_GOLDEN is not set\n");
		return 1;
	}
	return TEST_GO_ON;
}

TEST_SUITE(stream_suite, "stream-read")
{
	test_case(s, "stream:records", 60, golden_records_in_order, golden_first_records);
	test_case(s, "stream:rules", 60, golden_verdicts_match_document, rules_across_records,
	          truncated_warns_through_callback, open_missing_file);
	test_case(s, "stream:export", 60, session_trace_exports_byte_identical,
	          export_is_canonical_fixed_point, export_reports_read_error);
}

TEST_MAIN_SETUP(stream_setup, stream_suite);
