/* SPDX-License-Identifier: MIT */
/*
 * Call stacks and modules (docs/stacks.md): both parsers, the document's
 * tables and views, the compact encoder's hot calls read back, and the
 * strict trace/6 options.
 */
#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

#include "buf.h"
#include "compact_enc.h"
#include "parse.h"
#include "parse_fast.h"
#include "parse_ref.h"
#include "test-main.h"
#include "test-util.h"

#define MEM_HEAD                                                                                   \
	"{\"kind\":\"memory\",\"timestamp_ns\":%d,\"tensor_id\":\"0x%x\",\"span_id\":\"s1\","      \
	"\"op_name\":\"malloc\",\"device\":\"cpu\",\"bytes\":8,\"action\":\"%s\",\"shape\":[8],"   \
	"\"dtype\":\"u8\",\"category\":\"other\""

#define SPAN_LINE                                                                                  \
	"{\"kind\":\"span_start\",\"id\":\"s1\",\"name\":\"main\",\"start_ns\":0,"                 \
	"\"span_kind\":\"function\",\"measured\":false}\n"

#define FRAMES_1 ",\"cgprobe_stack\":1,\"cgprobe_stack_frames\":[\"0x4011a6\",\"0x7f00000010\"]"
#define MODS_2                                                                                     \
	",\"cgprobe_modules\":[{\"path\":\"/usr/bin/prog\",\"base\":\"0x400000\",\"start\":"       \
	"\"0x400000\",\"end\":\"0x405000\",\"build_id\":\"4f1a\"},{\"path\":\"/lib/libc.so.6\","   \
	"\"base\":\"0x7f00000000\",\"start\":\"0x7f00000000\",\"end\":\"0x7f00100000\"}]"

/* A small trace with stacks: 1 defined on line 3, 2 on line 5, modules on 3 and 6. */
static const char trace[] = META_LINE SPAN_LINE
    "{\"kind\":\"memory\",\"timestamp_ns\":10,\"tensor_id\":\"0x10\",\"span_id\":\"s1\","
    "\"op_name\":\"malloc\",\"device\":\"cpu\",\"bytes\":8,\"action\":\"alloc\",\"shape\":[8],"
    "\"dtype\":\"u8\",\"category\":\"other\"" FRAMES_1 MODS_2 "}\n"
    "{\"kind\":\"memory\",\"timestamp_ns\":20,\"tensor_id\":\"0x20\",\"span_id\":\"s1\","
    "\"op_name\":\"malloc\",\"device\":\"cpu\",\"bytes\":8,\"action\":\"alloc\",\"shape\":[8],"
    "\"dtype\":\"u8\",\"category\":\"other\",\"cgprobe_stack\":1}\n"
    "{\"kind\":\"memory\",\"timestamp_ns\":30,\"tensor_id\":\"0x30\",\"span_id\":\"s1\","
    "\"op_name\":\"malloc\",\"device\":\"cpu\",\"bytes\":8,\"action\":\"alloc\",\"shape\":[8],"
    "\"dtype\":\"u8\",\"category\":\"other\",\"cgprobe_stack\":2,"
    "\"cgprobe_stack_frames\":[\"0x0\",\"0xffffffffffffffff\",\"0x4011c0\"]}\n"
    "{\"kind\":\"memory\",\"timestamp_ns\":40,\"tensor_id\":\"0x20\",\"span_id\":\"s1\","
    "\"op_name\":\"free\",\"device\":\"cpu\",\"bytes\":8,\"action\":\"free\",\"shape\":[8],"
    "\"dtype\":\"u8\",\"category\":\"other\",\"cgprobe_modules\":[{\"path\":\"/opt/plug.so\","
    "\"base\":\"0x1000\",\"start\":\"0x2000\",\"end\":\"0x3000\",\"build_id\":null}]}\n";

/* ---- parsing ---- */

/* A line both parsers read; the fast one must read it (want_fast) or decline it. */
static void both_parse(const char *line, bool want_fast)
{
	struct cg_parse pf, pr;
	struct cg_rec a, b;
	cg_parse_init(&pf);
	cg_parse_init(&pr);
	int f = cg_parse_fast(&pf, line, strlen(line), &a);
	ck_assert_int_eq(cg_parse_ref(&pr, line, strlen(line), &b), 0);
	ck_assert_int_eq(f, want_fast ? 0 : CG_PARSE_DECLINED);
	if (f == 0)
		ck_assert_msg(cg_rec_equal(&a, &b), "the parsers disagree on %s", line);
	cg_parse_fini(&pf);
	cg_parse_fini(&pr);
}

START_TEST(parsers_agree)
{
	char line[1024];
	snprintf(line, sizeof(line), MEM_HEAD ",\"cgprobe_stack\":18446744073709551615}", 1, 16,
	         "alloc");
	both_parse(line, true);
	snprintf(line, sizeof(line), MEM_HEAD FRAMES_1 "}", 1, 16, "alloc");
	both_parse(line, true);
	snprintf(line, sizeof(line), MEM_HEAD FRAMES_1 MODS_2 "}", 1, 16, "alloc");
	both_parse(line, false);
	/* The reference parser's view of the frames and modules. */
	struct cg_parse p;
	struct cg_rec r;
	cg_parse_init(&p);
	ck_assert_int_eq(cg_parse_ref(&p, line, strlen(line), &r), 0);
	const struct cg_rec_memory *m = &r.u.memory;
	ck_assert_uint_eq(m->stack, 1);
	ck_assert_uint_eq(m->n_stack_frames, 2);
	ck_assert_uint_eq(m->stack_frames[0], 0x4011a6);
	ck_assert_uint_eq(m->stack_frames[1], 0x7f00000010);
	ck_assert_uint_eq(m->n_modules, 2);
	ck_assert(cg_sv_eq(m->modules[0].path, CG_SV_LIT("/usr/bin/prog")));
	ck_assert_uint_eq(m->modules[0].end, 0x405000);
	ck_assert(cg_sv_eq(m->modules[0].build_id, CG_SV_LIT("4f1a")));
	ck_assert_ptr_null(m->modules[1].build_id.p);
	cg_parse_fini(&p);
}
END_TEST

/* One memory line after meta and span: its error, named by line 3. */
static void bad_line(const char *tail, const char *action, const char *want)
{
	static char text[24576], line[20480];
	snprintf(line, sizeof(line), MEM_HEAD "%s}\n", 1, 16, action, tail);
	snprintf(text, sizeof(text), "%s%s%s", META_LINE, SPAN_LINE, line);
	char expected[512];
	snprintf(expected, sizeof(expected), "t.jsonl:3: %s", want);
	ck_read_fails(text, expected);
}

START_TEST(bad_values_name_the_line)
{
	bad_line(",\"cgprobe_stack\":0", "alloc", "cgprobe_stack: must be 1 or more, not 0");
	bad_line(",\"cgprobe_stack\":\"1\"", "alloc",
	         "memory record: field `cgprobe_stack` must be an integer from 1 to "
	         "18446744073709551615");
	bad_line(",\"cgprobe_stack\":1,\"cgprobe_stack_frames\":[\"0x01\"]", "alloc",
	         "cgprobe_stack_frames: frame 0 is \"0x01\", not \"0x\" and lowercase hex");
	bad_line(",\"cgprobe_stack\":1,\"cgprobe_stack_frames\":[\"0x1\",7]", "alloc",
	         "cgprobe_stack_frames: frame 1 is a number, not \"0x\" and lowercase hex");
	bad_line(",\"cgprobe_stack\":1,\"cgprobe_stack_frames\":[]", "alloc",
	         "cgprobe_stack_frames: must not be empty");
	bad_line(",\"cgprobe_stack_frames\":[\"0x1\"]", "alloc",
	         "cgprobe_stack_frames without cgprobe_stack");
	bad_line(",\"cgprobe_stack\":3", "alloc", "stack 3 not defined");
	bad_line(",\"cgprobe_stack\":3,\"cgprobe_stack_frames\":[\"0x1\"]", "free",
	         "cgprobe_stack on a free (a free belongs to its allocation's stack)");
	char many[16384] = ",\"cgprobe_stack\":1,\"cgprobe_stack_frames\":[\"0x1\"";
	for (int i = 0; i < 1024; i++)
		strcat(many, ",\"0x2\"");
	strcat(many, "]");
	bad_line(many, "alloc", "cgprobe_stack_frames: holds more than 1024 entries");
	bad_line(",\"cgprobe_modules\":[]", "alloc", "cgprobe_modules: must not be empty");
	bad_line(",\"cgprobe_modules\":[{\"base\":\"0x1\",\"start\":\"0x1\",\"end\":\"0x1\"}]",
	         "alloc", "cgprobe_modules: module 0: `path` must be a string");
	bad_line(",\"cgprobe_modules\":[{\"path\":\"/x\",\"base\":\"0x1\",\"end\":\"0x1\"}]",
	         "free",
	         "cgprobe_modules: module 0: `start` is missing, not \"0x\" and lowercase hex");
	bad_line(",\"cgprobe_modules\":[{\"path\":\"/x\",\"base\":\"0x1\",\"start\":\"0x9\","
	         "\"end\":\"0x1\"}]",
	         "alloc", "cgprobe_modules: module 0: `start` is past `end`");
	bad_line(",\"cgprobe_modules\":[{\"path\":\"/x\",\"base\":\"0x1\",\"start\":\"0x1\","
	         "\"end\":\"0x1\",\"build_id\":\"AB\"}]",
	         "alloc",
	         "cgprobe_modules: module 0: `build_id` must be 2 to 128 lowercase hex digits, an "
	         "even number");

	/* A second definition of an id, on a later line. */
	char text[4096];
	snprintf(text, sizeof(text), "%s%s" MEM_HEAD FRAMES_1 "}\n" MEM_HEAD FRAMES_1 "}\n",
	         META_LINE, SPAN_LINE, 1, 16, "alloc", 2, 32, "alloc");
	ck_read_fails(text, "t.jsonl:4: stack 1 defined twice");
}
END_TEST

/* ---- the document ---- */

static void check_tables(const struct cgtrace_doc *doc)
{
	ck_assert_uint_eq(cgtrace_doc_stack_count(doc), 2);
	const struct cgtrace_stack *s1 = cgtrace_doc_stack(doc, 1), *s2 = cgtrace_doc_stack(doc, 2);
	ck_assert_ptr_nonnull(s1);
	ck_assert_ptr_nonnull(s2);
	ck_assert_ptr_null(cgtrace_doc_stack(doc, 3));
	ck_assert_ptr_null(cgtrace_doc_stack(doc, 0));
	ck_assert_ptr_eq(cgtrace_doc_stack_at(doc, 0), s1);
	ck_assert_ptr_eq(cgtrace_doc_stack_at(doc, 1), s2);
	ck_assert_ptr_null(cgtrace_doc_stack_at(doc, 2));
	ck_assert_uint_eq(s1->n_frames, 2);
	ck_assert_uint_eq(s1->frames[0], 0x4011a6);
	ck_assert_uint_eq(s1->frames[1], 0x7f00000010);
	ck_assert_uint_eq(s1->defined_ns, 10);
	ck_assert_uint_eq(s2->n_frames, 3);
	ck_assert_uint_eq(s2->frames[0], 0);
	ck_assert_uint_eq(s2->frames[1], UINT64_MAX);
	ck_assert_uint_eq(s2->defined_ns, 30);

	ck_assert_uint_eq(cgtrace_doc_module_count(doc), 3);
	const struct cgtrace_module *m0 = cgtrace_doc_module(doc, 0);
	const struct cgtrace_module *m1 = cgtrace_doc_module(doc, 1);
	const struct cgtrace_module *m2 = cgtrace_doc_module(doc, 2);
	ck_assert_str_eq(m0->path, "/usr/bin/prog");
	ck_assert_uint_eq(m0->base, 0x400000);
	ck_assert_uint_eq(m0->start, 0x400000);
	ck_assert_uint_eq(m0->end, 0x405000);
	ck_assert_str_eq(m0->build_id, "4f1a");
	ck_assert_uint_eq(m0->recorded_ns, 10);
	ck_assert_str_eq(m1->path, "/lib/libc.so.6");
	ck_assert_ptr_null(m1->build_id);
	ck_assert_str_eq(m2->path, "/opt/plug.so");
	ck_assert_ptr_null(m2->build_id); /* null is absent */
	ck_assert_uint_eq(m2->recorded_ns, 40);
	ck_assert_ptr_null(cgtrace_doc_module(doc, 3));
}

/* The stack of each of doc's memory records, in order. */
static void stack_ids_are(const struct cgtrace_doc *doc, const uint64_t *want, size_t n)
{
	ck_assert_uint_eq(cgtrace_doc_count(doc, CGTRACE_KIND_MEMORY), n);
	for (size_t i = 0; i < n; i++) {
		struct cgtrace_memory m;
		cgtrace_doc_memory(doc, i, &m);
		ck_assert_uint_eq(m.stack_id, want[i]);
	}
}

START_TEST(doc_tables_full_and_streamed)
{
	char err[512];
	struct cgtrace_doc *doc = test_read(trace, err, sizeof(err), NULL);
	ck_assert_msg(doc, "%s", err);
	check_tables(doc);
	static const uint64_t want[4] = {1, 1, 2, 0};
	stack_ids_are(doc, want, 4);
	cgtrace_doc_free(doc);

	ck_assert_int_eq(cgtrace_doc_read_mem_flags("t.jsonl", trace, strlen(trace), NULL,
	                                            CGTRACE_READ_STREAM_MEMORY, &doc, err,
	                                            sizeof(err)),
	                 0);
	ck_assert(cgtrace_doc_streamed(doc));
	check_tables(doc);
	cgtrace_doc_free(doc);

	/* The streaming reader's views carry the id. */
	struct cgtrace_reader *r;
	struct cgtrace_record rec;
	ck_assert_int_eq(cgtrace_reader_open_mem(&r, "t.jsonl", trace, strlen(trace), NULL), 0);
	size_t k = 0;
	while (cgtrace_reader_next(r, &rec) == 1)
		if (rec.kind == CGTRACE_KIND_MEMORY)
			ck_assert_uint_eq(rec.u.memory->stack_id, want[k++]);
	ck_assert_uint_eq(k, 4);
	cgtrace_reader_close(r);
}
END_TEST

START_TEST(reader_checks_stack_rules)
{
	char text[4096];
	snprintf(text, sizeof(text), "%s%s" MEM_HEAD ",\"cgprobe_stack\":9}\n", META_LINE,
	         SPAN_LINE, 1, 16, "alloc");
	struct cgtrace_reader *r;
	struct cgtrace_record rec;
	ck_assert_int_eq(cgtrace_reader_open_mem(&r, "t.jsonl", text, strlen(text), NULL), 0);
	int ret;
	while ((ret = cgtrace_reader_next(r, &rec)) == 1)
		;
	ck_assert_int_eq(ret, -EBADMSG);
	ck_assert_str_eq(cgtrace_reader_message(r), "t.jsonl:3: stack 9 not defined");
	cgtrace_reader_close(r);
}
END_TEST

/* ---- export, JSONL and compact ---- */

/* What fn writes to a file, as a NUL-terminated string the caller frees. */
static char *captured(int (*fn)(void *arg, int fd), void *arg, int *ret)
{
	int fd = memfd_create("out", 0);
	ck_assert_int_ge(fd, 0);
	*ret = fn(arg, fd);
	off_t n = lseek(fd, 0, SEEK_END);
	char *s = calloc(1, (size_t)n + 1);
	ck_assert_int_eq(pread(fd, s, (size_t)n, 0), n);
	close(fd);
	return s;
}

struct export_arg {
	const char *data;
	size_t len;
	unsigned flags;
	bool canonical;
};

static int export_to(void *p, int fd)
{
	const struct export_arg *a = p;
	if (a->canonical) {
		struct cgtrace_doc *doc;
		char err[512];
		int r = cgtrace_doc_read_mem("t", a->data, a->len, NULL, &doc, err, sizeof(err));
		if (r < 0)
			return r;
		r = cgtrace_doc_export_jsonl_flags(doc, fd, a->flags);
		cgtrace_doc_free(doc);
		return r;
	}
	struct cgtrace_reader *r;
	int ret = cgtrace_reader_open_mem(&r, "t", a->data, a->len, NULL);
	if (ret == 0)
		ret = cgtrace_reader_export_jsonl_flags(r, fd, a->flags);
	cgtrace_reader_close(r);
	return ret;
}

static int export_compact_to(void *p, int fd)
{
	const struct export_arg *a = p;
	struct cgtrace_reader *r;
	int ret = cgtrace_reader_open_mem(&r, "t", a->data, a->len, NULL);
	if (ret == 0)
		ret = cgtrace_reader_export_compact(r, fd, 1);
	cgtrace_reader_close(r);
	return ret;
}

START_TEST(exports_write_the_fields_back)
{
	int ret;
	/* The trace as the formatter writes it (meta gains its optional field). */
	struct export_arg a = {trace, strlen(trace), 0, false};
	char *stream = captured(export_to, &a, &ret);
	ck_assert_int_eq(ret, 0);
	a.canonical = true;
	char *canon = captured(export_to, &a, &ret);
	ck_assert_int_eq(ret, 0);
	/* One span, memory in file order: the two orders agree here. */
	ck_assert_str_eq(canon, stream);
	ck_assert_ptr_nonnull(strstr(stream, FRAMES_1 MODS_2 "}\n"));
	ck_assert_ptr_nonnull(strstr(stream, "\"build_id\":\"4f1a\"}"));
	ck_assert_ptr_null(strstr(stream, "null"));

	/* Through the compact encoding and back, byte for byte. */
	a = (struct export_arg){stream, strlen(stream), 0, false};
	char *compact_text = NULL;
	int fd = memfd_create("c", 0);
	ck_assert_int_eq(export_compact_to(&a, fd), 0);
	off_t n = lseek(fd, 0, SEEK_END);
	compact_text = malloc((size_t)n);
	ck_assert_int_eq(pread(fd, compact_text, (size_t)n, 0), n);
	close(fd);
	a = (struct export_arg){compact_text, (size_t)n, 0, false};
	char *back = captured(export_to, &a, &ret);
	ck_assert_int_eq(ret, 0);
	ck_assert_str_eq(back, stream);
	free(back);
	free(compact_text);
	free(canon);
	free(stream);
}
END_TEST

START_TEST(strict_export_and_extensions)
{
	int ret;
	struct export_arg a = {trace, strlen(trace), CGTRACE_EXPORT_STRICT, false};
	char *s = captured(export_to, &a, &ret);
	ck_assert_int_eq(ret, 0);
	ck_assert_ptr_null(strstr(s, "cgprobe_"));
	a.canonical = true;
	char *c = captured(export_to, &a, &ret);
	ck_assert_int_eq(ret, 0);
	ck_assert_str_eq(c, s);

	/* The strict trace has no extension left; the original has three, where they start. */
	struct cgtrace_doc *doc;
	char err[512];
	ck_assert_int_eq(cgtrace_doc_read_mem_flags("t", s, strlen(s), NULL,
	                                            CGTRACE_READ_EXTENSIONS, &doc, err,
	                                            sizeof(err)),
	                 0);
	ck_assert_uint_eq(cgtrace_doc_extension_count(doc), 0);
	cgtrace_doc_free(doc);
	ck_assert_int_eq(
	    cgtrace_doc_read_mem_flags("t", trace, strlen(trace), NULL,
	                               CGTRACE_READ_EXTENSIONS | CGTRACE_READ_STREAM_MEMORY, &doc,
	                               err, sizeof(err)),
	    0);
	ck_assert_uint_eq(cgtrace_doc_extension_count(doc), 3);
	static const struct {
		const char *field;
		uint64_t first, records;
	} want[3] = {
	    {"cgprobe_stack", 3, 3}, {"cgprobe_stack_frames", 3, 2}, {"cgprobe_modules", 3, 2}};
	for (size_t i = 0; i < 3; i++) {
		struct cgtrace_extension e;
		cgtrace_doc_extension(doc, i, &e);
		ck_assert_int_eq(e.kind, CGTRACE_KIND_MEMORY);
		ck_assert_str_eq(e.kind_name, "memory");
		ck_assert_str_eq(e.field, want[i].field);
		ck_assert_uint_eq(e.first, want[i].first);
		ck_assert(!e.first_is_record);
		ck_assert_uint_eq(e.records, want[i].records);
	}
	cgtrace_doc_free(doc);
	/* Without the flag nothing is counted. */
	doc = test_read(trace, err, sizeof(err), NULL);
	ck_assert_uint_eq(cgtrace_doc_extension_count(doc), 0);
	cgtrace_doc_free(doc);
	free(c);
	free(s);
}
END_TEST

/* ---- the compact encoder's hot calls ---- */

static int collect(void *user, const void *p, size_t n)
{
	cg_buf_put(user, p, n);
	return 0;
}

/* A compact trace the probe's way: meta as TEXT, then tables and packed records. */
struct probe_trace {
	struct cg_buf out; /* what the encoder wrote */
	struct cg_cenc *e;
	uint32_t cls; /* s1, malloc, cpu, other */
};

static void probe_enc(struct probe_trace *t)
{
	*t = (struct probe_trace){0};
	struct cg_cenc_opts o = {.zstd_level = 0, .write = collect, .user = &t->out};
	ck_assert_int_eq(cg_cenc_new(&t->e, &o), 0);
	ck_assert_int_eq(cg_cenc_text(t->e, META_LINE, strlen(META_LINE)), 0);
	ck_assert_int_eq(cg_cenc_text(t->e, SPAN_LINE, strlen(SPAN_LINE)), 0);
	uint32_t s = cg_cenc_string(t->e, "s1", 2), op = cg_cenc_string(t->e, "malloc", 6);
	uint32_t dev = cg_cenc_string(t->e, "cpu", 3);
	t->cls = cg_cenc_class(t->e, s, op, dev, CGTRACE_CAT_OTHER, 0);
}

START_TEST(hot_calls_read_back)
{
	struct probe_trace t;
	probe_enc(&t);
	static const uint64_t f1[2] = {0x4011a6, 0x7f00000010}, f2[3] = {0, UINT64_MAX, 0x4011c0};
	static const struct cg_modv mods[2] = {
	    {CG_SV_LIT("/usr/bin/prog"), 0x400000, 0x400000, 0x405000, CG_SV_LIT("4f1a")},
	    {CG_SV_LIT("/lib/libc.so.6"), 0x7f00000000, 0x7f00000000, 0x7f00100000, CG_SV_NONE},
	};
	/* What a caller must not pass: nothing is written. */
	ck_assert(!cg_cenc_stack(t.e, 0, f1, 2));
	ck_assert(!cg_cenc_stack(t.e, 1, f1, 0));
	ck_assert(!cg_cenc_stack(t.e, 1, f1, CG_STACK_FRAMES_MAX + 1));
	struct cg_modv bad = mods[0];
	bad.build_id = CG_SV_LIT("4F1A");
	ck_assert(!cg_cenc_module(t.e, &bad));
	bad = mods[0];
	bad.start = bad.end + 1;
	ck_assert(!cg_cenc_module(t.e, &bad));

	ck_assert(cg_cenc_module(t.e, &mods[0]));
	ck_assert(cg_cenc_module(t.e, &mods[1]));
	ck_assert(cg_cenc_stack(t.e, 1, f1, 2));
	ck_assert_uint_ne(cg_cenc_alloc_stack(t.e, t.cls, 10, 0x10, 8, 1), UINT64_MAX);
	ck_assert_uint_ne(cg_cenc_alloc_stack(t.e, t.cls, 20, 0x20, 8, 1), UINT64_MAX);
	/* Stack 2's first record is late: it ends the block instead of riding as TEXT. */
	ck_assert(cg_cenc_stack(t.e, 2, f2, 3));
	size_t blocks_before = t.out.len;
	ck_assert_uint_ne(cg_cenc_alloc_stack(t.e, t.cls, 15, 0x30, 8, 2), UINT64_MAX);
	ck_assert_uint_gt(t.out.len, blocks_before);
	/* A late one with nothing pending rides as TEXT, with its id. */
	ck_assert_uint_eq(cg_cenc_alloc_stack(t.e, t.cls, 5, 0x40, 8, 2), UINT64_MAX);
	ck_assert_int_eq(cg_cenc_close(t.e), 0);

	char err[512];
	struct cgtrace_doc *doc;
	ck_assert_int_eq(
	    cgtrace_doc_read_mem("t.cgt", t.out.p, t.out.len, NULL, &doc, err, sizeof(err)), 0);
	ck_assert_uint_eq(cgtrace_doc_stack_count(doc), 2);
	const struct cgtrace_stack *s2 = cgtrace_doc_stack(doc, 2);
	ck_assert_uint_eq(s2->n_frames, 3);
	ck_assert_uint_eq(s2->frames[1], UINT64_MAX);
	ck_assert_uint_eq(s2->frames[2], 0x4011c0);
	ck_assert_uint_eq(s2->defined_ns, 15);
	ck_assert_uint_eq(cgtrace_doc_stack(doc, 1)->frames[1], 0x7f00000010);
	ck_assert_uint_eq(cgtrace_doc_module_count(doc), 2);
	ck_assert_str_eq(cgtrace_doc_module(doc, 0)->build_id, "4f1a");
	ck_assert_ptr_null(cgtrace_doc_module(doc, 1)->build_id);
	ck_assert_uint_eq(cgtrace_doc_module(doc, 1)->end, 0x7f00100000);
	stack_ids_are(doc, (const uint64_t[]){1, 1, 2, 2}, 4);
	cgtrace_doc_free(doc);

	/* Streamed, most records come as their gist only: the same tables. */
	ck_assert_int_eq(cgtrace_doc_read_mem_flags("t.cgt", t.out.p, t.out.len, NULL,
	                                            CGTRACE_READ_STREAM_MEMORY, &doc, err,
	                                            sizeof(err)),
	                 0);
	ck_assert_uint_eq(cgtrace_doc_stack_count(doc), 2);
	ck_assert_uint_eq(cgtrace_doc_stack(doc, 2)->frames[2], 0x4011c0);
	ck_assert_uint_eq(cgtrace_doc_module_count(doc), 2);
	cgtrace_doc_free(doc);
	cg_buf_fini(&t.out);
}
END_TEST

START_TEST(gist_records_checked)
{
	/* The third alloc of a class is a gist in a streamed read: its stack is still checked. */
	struct probe_trace t;
	probe_enc(&t);
	static const uint64_t f1[1] = {0x4011a6};
	ck_assert(cg_cenc_stack(t.e, 1, f1, 1));
	cg_cenc_alloc_stack(t.e, t.cls, 10, 0x10, 8, 1);
	cg_cenc_alloc_stack(t.e, t.cls, 20, 0x20, 8, 1);
	cg_cenc_alloc_stack(t.e, t.cls, 30, 0x30, 8, 5);
	ck_assert_int_eq(cg_cenc_close(t.e), 0);
	char err[512];
	struct cgtrace_doc *doc;
	for (unsigned flags = 0; flags <= CGTRACE_READ_STREAM_MEMORY; flags++) {
		ck_assert_int_eq(cgtrace_doc_read_mem_flags("t.cgt", t.out.p, t.out.len, NULL,
		                                            flags, &doc, err, sizeof(err)),
		                 -EBADMSG);
		ck_assert_str_eq(err, "t.cgt: record 5: stack 5 not defined");
	}
	cg_buf_fini(&t.out);
}
END_TEST

START_TEST(hot_alloc_bytes)
{
	/* Stored blocks, so the items are the bytes themselves: a packed alloc's extension area. */
	struct probe_trace t;
	probe_enc(&t);
	ck_assert_int_eq(cg_cenc_flush(t.e), 0);
	size_t at = t.out.len;
	ck_assert_uint_eq(cg_cenc_alloc_stack(t.e, t.cls, 1, 0x10, 8, 300), 0);
	ck_assert_int_eq(cg_cenc_flush(t.e), 0);
	/* 0xa0 | class 0, ts 1, delta +0x10 (zigzag 0x20, ref 0x41), 8 bytes, ext: 3 bytes, key 1,
	 * 300. */
	static const uint8_t want[] = {0xa0, 1, 0x41, 8, 3, 1, 0xac, 0x02};
	ck_assert_uint_eq(t.out.len - at, 16 + sizeof(want));
	ck_assert(memcmp((const char *)t.out.p + at + 16, want, sizeof(want)) == 0);
	ck_assert_int_eq(cg_cenc_close(t.e), 0);
	cg_buf_fini(&t.out);
}
END_TEST

TEST_SUITE(stacks_suite, "stacks")
{
	test_case(s, "stacks:parse", 30, parsers_agree, bad_values_name_the_line);
	test_case(s, "stacks:doc", 30, doc_tables_full_and_streamed, reader_checks_stack_rules);
	test_case(s, "stacks:export", 30, exports_write_the_fields_back,
	          strict_export_and_extensions);
	test_case(s, "stacks:compact", 30, hot_calls_read_back, gist_records_checked,
	          hot_alloc_bytes);
}

TEST_MAIN(stacks_suite);
