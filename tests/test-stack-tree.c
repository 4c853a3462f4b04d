/* SPDX-License-Identifier: MIT */
/*
 * Stacks as a tree (docs/stacks.md, "Tree definitions"): definitions that
 * share frames, a stack named that only another's definition made,
 * recursion, the depth limit, a million stacks, full, streamed and light
 * reads agreeing, the export writing definitions back, and hostile input.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <unistd.h>

#include "test-main.h"
#include "test-util.h"

#define SPAN_LINE                                                                                  \
	"{\"kind\":\"span_start\",\"id\":\"s1\",\"name\":\"main\",\"start_ns\":0,"                 \
	"\"span_kind\":\"function\",\"measured\":false}\n"

/* A growing JSONL trace. */
struct tbuf {
	char *p;
	size_t len, cap;
	int ts;
};

static void put(struct tbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct tbuf *b, const char *fmt, ...)
{
	va_list ap;
	for (;;) {
		va_start(ap, fmt);
		int n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
		ck_assert_int_ge(n, 0);
		if ((size_t)n < b->cap - b->len) {
			b->len += (size_t)n;
			return;
		}
		b->cap = b->cap * 2 + (size_t)n + 4096;
		b->p = realloc(b->p, b->cap);
		ck_assert_ptr_nonnull(b->p);
	}
}

static void start(struct tbuf *b)
{
	*b = (struct tbuf){0};
	put(b, "%s%s", META_LINE, SPAN_LINE);
}

/* An alloc naming stack id, with the definition given in def (empty: none). */
static void alloc(struct tbuf *b, uint64_t id, const char *def)
{
	b->ts += 10;
	put(b,
	    "{\"kind\":\"memory\",\"timestamp_ns\":%d,\"tensor_id\":\"0x%x\",\"span_id\":\"s1\","
	    "\"op_name\":\"malloc\",\"device\":\"cpu\",\"bytes\":8,\"action\":\"alloc\","
	    "\"shape\":[8],\"dtype\":\"u8\",\"category\":\"other\",\"cgprobe_stack\":%" PRIu64
	    "%s}\n",
	    b->ts, b->ts, id, def);
}

/* A tree definition: n frames (innermost first) on parent. */
static void tree(struct tbuf *b, uint64_t id, uint64_t parent, const uint64_t *frames, size_t n)
{
	struct tbuf d = {0};
	put(&d, ",\"cgprobe_stack_frames\":[");
	for (size_t i = 0; i < n; i++)
		put(&d, "%s\"0x%" PRIx64 "\"", i ? "," : "", frames[i]);
	put(&d, "],\"cgprobe_stack_parent\":%" PRIu64, parent);
	alloc(b, id, d.p);
	free(d.p);
}

static struct cgtrace_doc *read_as(const struct tbuf *b, unsigned flags)
{
	char err[512];
	struct cgtrace_doc *doc = NULL;
	int r = cgtrace_doc_read_mem_flags("t.jsonl", b->p, b->len, NULL, flags, &doc, err,
					   sizeof(err));
	ck_assert_msg(r == 0, "%s", err);
	return doc;
}

#define CGTRACE_STACK_TEST_MAX 1024

static void frames_are(const struct cgtrace_doc *doc, uint64_t id, const uint64_t *want,
		       size_t n)
{
	uint64_t got[CGTRACE_STACK_TEST_MAX];
	ck_assert_uint_le(n, CGTRACE_STACK_TEST_MAX);
	ck_assert_uint_eq(cgtrace_doc_stack_frames(doc, id, got, n, NULL), n);
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(got[i] == want[i], "stack %" PRIu64 " frame %zu: 0x%" PRIx64
			      " not 0x%" PRIx64, id, i, got[i], want[i]);
	/* The compatible view agrees. */
	const struct cgtrace_stack *st = cgtrace_doc_stack(doc, id);
	ck_assert_ptr_nonnull(st);
	ck_assert_uint_eq(st->id, id);
	ck_assert_uint_eq(st->n_frames, n);
	ck_assert_int_eq(memcmp(st->frames, want, n * sizeof(*want)), 0);
}

/*
 * main -> run -> work -> malloc, then main -> run -> other -> malloc:
 * stacks 1 (0x10, main's call), 2 (0x20 on 1), 3 (0x30 on 2) from the
 * first definition; the second hangs 0x40 on stack 2, and a third record
 * names stack 2 itself, which no record defined on its own.
 */
static void shared_trace(struct tbuf *b)
{
	start(b);
	tree(b, 3, 0, (const uint64_t[]){0x30, 0x20, 0x10}, 3);
	tree(b, 4, 2, (const uint64_t[]){0x40}, 1);
	alloc(b, 2, "");
	alloc(b, 3, "");
}

START_TEST(definitions_share_frames)
{
	struct tbuf b;
	shared_trace(&b);
	static const unsigned modes[] = {0, CGTRACE_READ_STREAM_MEMORY};
	for (size_t k = 0; k < 2; k++) {
		struct cgtrace_doc *doc = read_as(&b, modes[k]);
		ck_assert_uint_eq(cgtrace_doc_stack_count(doc), 4);
		frames_are(doc, 1, (const uint64_t[]){0x10}, 1);
		frames_are(doc, 2, (const uint64_t[]){0x20, 0x10}, 2);
		frames_are(doc, 3, (const uint64_t[]){0x30, 0x20, 0x10}, 3);
		frames_are(doc, 4, (const uint64_t[]){0x40, 0x20, 0x10}, 3);
		ck_assert_uint_eq(cgtrace_doc_stack_frames(doc, 5, NULL, 0, NULL), 0);
		/* In definition order, outermost first. */
		ck_assert_uint_eq(cgtrace_doc_stack_at(doc, 0)->id, 1);
		ck_assert_uint_eq(cgtrace_doc_stack_at(doc, 3)->id, 4);
		ck_assert_ptr_null(cgtrace_doc_stack_at(doc, 4));
		cgtrace_doc_free(doc);
	}
	free(b.p);
}
END_TEST

/*
 * Writers number stacks in definition order, and the index leans on it;
 * one that does not (ids going back, gaps, ids past 2^24) is found all
 * the same, before and after the first definition out of order.
 */
START_TEST(ids_out_of_order)
{
	struct tbuf b;
	start(&b);
	tree(&b, 3, 0, (const uint64_t[]){0x30, 0x20, 0x10}, 3);
	tree(&b, 200, 2, (const uint64_t[]){0x50, 0x40}, 2);     /* 199, 200: a gap */
	alloc(&b, 199, "");
	tree(&b, 102, 199, (const uint64_t[]){0x70, 0x60}, 2);   /* 101, 102: back */
	tree(&b, 1ull << 30, 3, (const uint64_t[]){0x80}, 1);    /* past the array */
	alloc(&b, 1, ",\"cgprobe_stack_frames\":[\"0x10\"]");  /* 1 again: refused below */
	static const unsigned modes[] = {0, CGTRACE_READ_STREAM_MEMORY};
	struct cgtrace_doc *doc = NULL;
	/* Without the last record: every id found. */
	struct tbuf head = b;
	head.len = (size_t)(strrchr(b.p, '{') - b.p);
	for (size_t k = 0; k < 2; k++) {
		doc = read_as(&head, modes[k]);
		ck_assert_uint_eq(cgtrace_doc_stack_count(doc), 8);
		frames_are(doc, 2, (const uint64_t[]){0x20, 0x10}, 2);
		frames_are(doc, 199, (const uint64_t[]){0x40, 0x20, 0x10}, 3);
		frames_are(doc, 200, (const uint64_t[]){0x50, 0x40, 0x20, 0x10}, 4);
		frames_are(doc, 101, (const uint64_t[]){0x60, 0x40, 0x20, 0x10}, 4);
		frames_are(doc, 102, (const uint64_t[]){0x70, 0x60, 0x40, 0x20, 0x10}, 5);
		frames_are(doc, 1ull << 30, (const uint64_t[]){0x80, 0x30, 0x20, 0x10}, 4);
		static const uint64_t none[] = {4, 100, 103, 198, 201, (1ull << 30) - 1};
		for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++)
			ck_assert_uint_eq(cgtrace_doc_stack_frames(doc, none[i], NULL, 0, NULL), 0);
		cgtrace_doc_free(doc);
	}
	/* In order with gaps (the coarse index alone): what lies between is not defined. */
	struct tbuf o;
	start(&o);
	tree(&o, 3, 0, (const uint64_t[]){0x30, 0x20, 0x10}, 3);
	tree(&o, 200, 2, (const uint64_t[]){0x50, 0x40}, 2);
	tree(&o, 5000, 199, (const uint64_t[]){0x90}, 1);
	for (size_t k = 0; k < 2; k++) {
		doc = read_as(&o, modes[k]);
		frames_are(doc, 3, (const uint64_t[]){0x30, 0x20, 0x10}, 3);
		frames_are(doc, 199, (const uint64_t[]){0x40, 0x20, 0x10}, 3);
		frames_are(doc, 5000, (const uint64_t[]){0x90, 0x40, 0x20, 0x10}, 4);
		static const uint64_t gaps[] = {4, 63, 64, 198, 201, 4999, 5001, 1u << 20};
		for (size_t i = 0; i < sizeof(gaps) / sizeof(gaps[0]); i++)
			ck_assert_uint_eq(cgtrace_doc_stack_frames(doc, gaps[i], NULL, 0, NULL), 0);
		cgtrace_doc_free(doc);
	}
	free(o.p);
	/* Stack 1 was defined by the first definition: once out of order, still known. */
	char err[512];
	const unsigned light = CGTRACE_READ_STREAM_MEMORY | CGTRACE_READ_NO_STACKS;
	static const unsigned all[] = {0, CGTRACE_READ_STREAM_MEMORY, light};
	for (size_t k = 0; k < 3; k++) {
		ck_assert_int_eq(cgtrace_doc_read_mem_flags("t.jsonl", b.p, b.len, NULL, all[k],
							     &doc, err, sizeof(err)),
				 -EBADMSG);
		ck_assert_msg(strstr(err, "stack 1 defined twice") != NULL, "%s", err);
	}
	/*
	 * A light read keeps depths by definition while ids come 1, 2, 3, ...
	 * and by id after the first gap: both give the same depths to the rules.
	 */
	doc = read_as(&head, light);
	ck_assert_uint_eq(cgtrace_doc_stack_count(doc), 8);
	cgtrace_doc_free(doc);
	uint64_t deep[1024];
	for (size_t i = 0; i < 1024; i++)
		deep[i] = 0x1000 + 16 * i;
	for (int gap = 0; gap < 2; gap++) {
		struct tbuf g;
		start(&g);
		tree(&g, 3, 0, (const uint64_t[]){0x30, 0x20, 0x10}, 3);
		uint64_t top = gap ? 1010 : 1003; /* 2 + 1000 frames at its last id */
		tree(&g, top, 2, deep, 1000);
		tree(&g, top + 22, top, deep, 22); /* 1024: the limit */
		doc = read_as(&g, light);
		cgtrace_doc_free(doc);
		tree(&g, top + 23, top + 22, deep, 1); /* 1025 */
		ck_assert_int_eq(cgtrace_doc_read_mem_flags("t.jsonl", g.p, g.len, NULL, light,
							     &doc, err, sizeof(err)),
				 -EBADMSG);
		ck_assert_msg(strstr(err, "has more than 1024 frames") != NULL, "%s", err);
		free(g.p);
	}
	free(b.p);
}
END_TEST

/* The per-stack figures of a full and a streamed read are the same. */
START_TEST(full_and_streamed_agree)
{
	struct tbuf b;
	shared_trace(&b);
	struct cgtrace_doc *full = read_as(&b, 0), *str = read_as(&b, CGTRACE_READ_STREAM_MEMORY);
	struct cgtrace_stack_stat *a, *c;
	size_t na, nc;
	ck_assert_int_eq(cgtrace_stack_stats(full, &a, &na), 0);
	ck_assert_int_eq(cgtrace_stack_stats(str, &c, &nc), 0);
	ck_assert_uint_eq(na, 3);
	ck_assert_uint_eq(na, nc);
	for (size_t i = 0; i < na; i++) {
		ck_assert_uint_eq(a[i].stack_id, c[i].stack_id);
		ck_assert_uint_eq(a[i].count, c[i].count);
		ck_assert_uint_eq(a[i].total_bytes, c[i].total_bytes);
	}
	/* Stack 2 was named by one record, 3 by two. */
	ck_assert_uint_eq(a[0].stack_id, 2);
	ck_assert_uint_eq(a[0].count, 1);
	ck_assert_uint_eq(a[1].stack_id, 3);
	ck_assert_uint_eq(a[1].count, 2);
	cgtrace_stack_stats_free(a);
	cgtrace_stack_stats_free(c);
	cgtrace_doc_free(full);
	cgtrace_doc_free(str);
	free(b.p);
}
END_TEST

/* A light read checks the rules and keeps nothing to resolve. */
START_TEST(light_read_keeps_no_frames)
{
	struct tbuf b;
	shared_trace(&b);
	struct cgtrace_doc *doc =
	    read_as(&b, CGTRACE_READ_STREAM_MEMORY | CGTRACE_READ_NO_STACKS);
	ck_assert_uint_eq(cgtrace_doc_stack_count(doc), 4);
	ck_assert_ptr_null(cgtrace_doc_stack(doc, 3));
	ck_assert_uint_eq(cgtrace_doc_stack_frames(doc, 3, NULL, 0, NULL), 0);
	struct cgtrace_stack_stat *st;
	size_t n;
	ck_assert_int_eq(cgtrace_stack_stats(doc, &st, &n), -ENODATA);
	cgtrace_doc_free(doc);
	/* The depth limit is still checked without frames: 1000 on 30 is 1030. */
	free(b.p);
	start(&b);
	uint64_t f[1000];
	for (size_t i = 0; i < 1000; i++)
		f[i] = 0x1000 + i;
	tree(&b, 30, 0, f, 30);
	tree(&b, 1030, 30, f, 1000);
	char err[512];
	ck_assert_int_eq(cgtrace_doc_read_mem_flags("t.jsonl", b.p, b.len, NULL,
						    CGTRACE_READ_NO_STACKS, &doc, err,
						    sizeof(err)),
			 -EBADMSG);
	ck_assert_str_eq(err, "t.jsonl:4: stack 1030 has more than 1024 frames");
	free(b.p);
}
END_TEST

/* f(n) calls f(n - 1): the same return address at every depth, each a stack of its own. */
START_TEST(recursion)
{
	struct tbuf b;
	start(&b);
	uint64_t f[200];
	f[199] = 0x500; /* main's call */
	for (size_t i = 0; i < 199; i++)
		f[i] = 0x600;
	tree(&b, 100, 0, f + 100, 100);
	tree(&b, 199, 100, f + 1, 99);
	tree(&b, 200, 199, f, 1);
	struct cgtrace_doc *doc = read_as(&b, CGTRACE_READ_STREAM_MEMORY);
	frames_are(doc, 200, f, 200);
	frames_are(doc, 150, f + 50, 150);
	frames_are(doc, 1, f + 199, 1);
	cgtrace_doc_free(doc);
	free(b.p);
}
END_TEST

/* 1024 frames in all is the limit, whichever definitions make them. */
START_TEST(depth_at_the_limit)
{
	struct tbuf b;
	uint64_t f[1024];
	for (size_t i = 0; i < 1024; i++)
		f[i] = 0x7f0000000000 + 16 * i;
	start(&b);
	tree(&b, 1000, 0, f + 24, 1000);
	tree(&b, 1024, 1000, f, 24);
	struct cgtrace_doc *doc = read_as(&b, 0);
	frames_are(doc, 1024, f, 1024);
	cgtrace_doc_free(doc);
	/* A light read keeps depths past a byte's too (in its map), and finds the same limit. */
	const unsigned light = CGTRACE_READ_STREAM_MEMORY | CGTRACE_READ_NO_STACKS;
	doc = read_as(&b, light);
	cgtrace_doc_free(doc);
	tree(&b, 1025, 1024, f, 1);
	ck_read_fails(b.p, "t.jsonl:5: stack 1025 has more than 1024 frames");
	char err[512];
	ck_assert_int_eq(cgtrace_doc_read_mem_flags("t.jsonl", b.p, b.len, NULL, light, &doc, err,
						     sizeof(err)),
			 -EBADMSG);
	ck_assert_msg(strstr(err, "stack 1025 has more than 1024 frames") != NULL, "%s", err);
	/* 300 frames on stack 900 (900 deep, past a byte) pass the limit. */
	struct tbuf c;
	start(&c);
	tree(&c, 1000, 0, f + 24, 1000);
	tree(&c, 1300, 900, f, 300);
	ck_assert_int_eq(cgtrace_doc_read_mem_flags("t.jsonl", c.p, c.len, NULL, light, &doc, err,
						     sizeof(err)),
			 -EBADMSG);
	ck_assert_msg(strstr(err, "stack 1300 has more than 1024 frames") != NULL, "%s", err);
	free(c.p);
	free(b.p);
}
END_TEST

/*
 * A million stacks, the most the probe defines in a trace, each a frame
 * on one defined before (or on none): every stack's frames read back.
 */
START_TEST(a_million_stacks)
{
	enum { N = 1000000 };
	struct tbuf b;
	start(&b);
	uint32_t *parent = calloc(N + 1, sizeof(*parent));
	ck_assert_ptr_nonnull(parent);
	uint64_t x = 88172645463325252ull;
	for (uint64_t id = 1; id <= N; id++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		/* Mostly near the last ones, as a program's stacks are; a few roots. */
		uint64_t p = id < 2 || x % 97 == 0 ? 0 : id - 1 - (x >> 8) % (id - 1 < 64 ? id - 1 : 64);
		for (uint64_t q = p, d = 1; q; q = parent[q], d++)
			if (d >= 30) {
				p = 0;
				break;
			}
		parent[id] = (uint32_t)p;
		tree(&b, id, p, (const uint64_t[]){0x400000 + id * 8}, 1);
	}
	struct cgtrace_doc *doc = read_as(&b, CGTRACE_READ_STREAM_MEMORY);
	ck_assert_uint_eq(cgtrace_doc_stack_count(doc), N);
	uint64_t got[64], want[64];
	for (uint64_t id = 1; id <= N; id += 997) {
		size_t n = 0;
		for (uint64_t q = id; q; q = parent[q])
			want[n++] = 0x400000 + q * 8;
		ck_assert_uint_eq(cgtrace_doc_stack_frames(doc, id, got, 64, NULL), n);
		ck_assert_int_eq(memcmp(got, want, n * sizeof(*got)), 0);
	}
	cgtrace_doc_free(doc);
	free(parent);
	free(b.p);
}
END_TEST

/* A trace read and exported comes out as it went in: the definitions as they were. */
START_TEST(export_writes_definitions_back)
{
	struct tbuf b;
	shared_trace(&b);
	/* A flat definition in the same trace. */
	alloc(&b, 9, ",\"cgprobe_stack_frames\":[\"0x90\",\"0x10\"]");
	struct cgtrace_doc *doc = read_as(&b, 0);
	char path[] = "/tmp/stack-tree-XXXXXX";
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	unlink(path);
	ck_assert_int_eq(cgtrace_doc_export_jsonl(doc, fd), 0);
	off_t len = lseek(fd, 0, SEEK_END);
	char *out = calloc(1, (size_t)len + 1);
	ck_assert_int_eq(pread(fd, out, (size_t)len, 0), len);
	close(fd);
	/* The memory records, the only ones that carry stacks, byte for byte. */
	const char *mem = strstr(out, "{\"kind\":\"memory\"");
	ck_assert_ptr_nonnull(mem);
	ck_assert_str_eq(mem, strstr(b.p, "{\"kind\":\"memory\""));
	frames_are(doc, 9, (const uint64_t[]){0x90, 0x10}, 2);
	free(out);
	cgtrace_doc_free(doc);
	free(b.p);
}
END_TEST

/* Each broken rule: one line naming the record, whichever read. */
static void fails(const struct tbuf *b, const char *want)
{
	static const unsigned modes[] = {0, CGTRACE_READ_STREAM_MEMORY,
					 CGTRACE_READ_STREAM_MEMORY | CGTRACE_READ_NO_STACKS};
	for (size_t k = 0; k < 3; k++) {
		char err[512];
		struct cgtrace_doc *doc = NULL;
		ck_assert_int_eq(cgtrace_doc_read_mem_flags("t.jsonl", b->p, b->len, NULL,
							    modes[k], &doc, err, sizeof(err)),
				 -EBADMSG);
		ck_assert_str_eq(err, want);
		ck_assert_ptr_null(doc);
	}
}

/*
 * Each hostile trace as definitions: id, parent (NOFLAT: a flat one; NODEF:
 * the id alone, no frames; PARENT_ONLY: a parent without frames) and how
 * many of the frames 0x30, 0x20, 0x10 it brings.
 */
enum { NOFLAT = -1, NODEF = -2, PARENT_ONLY = -3 };
struct def {
	uint64_t id;
	int parent, n;
};
static const struct {
	struct def defs[3];
	const char *error;
} hostile[] = {
    /* A parent never defined, the record's own stack or one of its own, one defined later. */
    {{{5, 9, 1}}, "t.jsonl:3: stack 9 not defined"},
    {{{5, 4, 2}}, "t.jsonl:3: stack 4 not defined"},
    {{{5, 5, 1}}, "t.jsonl:3: stack 5 not defined"},
    {{{5, 6, 1}, {6, 0, 1}}, "t.jsonl:3: stack 6 not defined"},
    {{{2, 0, 3}}, "t.jsonl:3: stack 2 with 3 new frames: its stacks would start below 1"},
    /* One of the ids defined before, by a flat definition or a tree one. */
    {{{2, NOFLAT, 1}, {3, 0, 3}}, "t.jsonl:4: stack 2 defined twice"},
    {{{3, 0, 3}, {3, 1, 1}}, "t.jsonl:4: stack 3 defined twice"},
    {{{1, PARENT_ONLY, 0}}, "t.jsonl:3: cgprobe_stack_parent without cgprobe_stack_frames"},
    /* A stack nobody defined is still one. */
    {{{3, 0, 3}, {4, NODEF, 0}}, "t.jsonl:4: stack 4 not defined"},
};

START_TEST(hostile_definitions)
{
	static const uint64_t f[3] = {0x30, 0x20, 0x10};
	const struct def *d = hostile[_i].defs;
	struct tbuf b;
	start(&b);
	for (size_t k = 0; k < 3 && d[k].id; k++) {
		if (d[k].parent >= 0)
			tree(&b, d[k].id, (uint64_t)d[k].parent, f, (size_t)d[k].n);
		else if (d[k].parent == NOFLAT)
			alloc(&b, d[k].id, ",\"cgprobe_stack_frames\":[\"0x1\"]");
		else if (d[k].parent == PARENT_ONLY)
			alloc(&b, d[k].id, ",\"cgprobe_stack_parent\":0");
		else
			alloc(&b, d[k].id, "");
	}
	fails(&b, hostile[_i].error);
	free(b.p);
}
END_TEST

TEST_SUITE(stack_tree_suite, "stack_tree")
{
	test_case(s, "tree:share", 10, definitions_share_frames);
	test_case(s, "tree:order", 10, ids_out_of_order);
	test_case(s, "tree:agree", 10, full_and_streamed_agree);
	test_case(s, "tree:light", 10, light_read_keeps_no_frames);
	test_case(s, "tree:recursion", 10, recursion);
	test_case(s, "tree:limit", 10, depth_at_the_limit);
	test_case(s, "tree:million", 120, a_million_stacks);
	test_case(s, "tree:export", 10, export_writes_definitions_back);
	TCase *tc = tcase_create("tree:hostile");
	tcase_add_loop_test(tc, hostile_definitions, 0,
			    (int)(sizeof(hostile) / sizeof(hostile[0])));
	suite_add_tcase(s, tc);
}

TEST_MAIN(stack_tree_suite);
