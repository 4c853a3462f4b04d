/* SPDX-License-Identifier: MIT */
/*
 * The compact decoder, over byte streams built here by hand from
 * docs/compact-format.md (a tiny builder, independent of the encoder):
 * packed records come out field by field, TEXT items read as JSONL lines,
 * hostile input gives one line naming the record, a cut file warns and
 * keeps its complete blocks, and the readers tell the encoding by content,
 * from a pipe too.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <unistd.h>
#include <zstd.h>

#include "compact_dec.h"
#include "crc32.h"
#include "test-main.h"
#include "test-util.h"
#include "varint.h"

/* ---- the builder ---- */

struct bytes {
	uint8_t p[1 << 16];
	size_t n;
};

static void put(struct bytes *b, const void *p, size_t n)
{
	ck_assert_uint_le(b->n + n, sizeof(b->p));
	memcpy(b->p + b->n, p, n);
	b->n += n;
}

static void u8(struct bytes *b, uint8_t v)
{
	put(b, &v, 1);
}

static void var(struct bytes *b, uint64_t v)
{
	uint8_t tmp[CG_VARINT_MAX];
	put(b, tmp, (size_t)(cg_varint_put(tmp, v) - tmp));
}

static void le32(struct bytes *b, uint32_t v)
{
	uint8_t t[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
	put(b, t, 4);
}

static void header(struct bytes *f)
{
	f->n = 0;
	put(f, CG_COMPACT_MAGIC, 8);
	le32(f, 1);
	le32(f, 0);
}

/* The items as they are, or (zstd) as one zstd frame; *n: its length. */
static const uint8_t *payload_of(const struct bytes *it, bool zstd, size_t *n)
{
	static uint8_t z[1 << 16];
	*n = it->n;
	if (!zstd)
		return it->p;
	*n = ZSTD_compress(z, sizeof(z), it->p, it->n, 1);
	ck_assert(!ZSTD_isError(*n));
	return z;
}

/* A block of the items in it: stored ('R') or one zstd frame ('Z'). */
static void block(struct bytes *f, const struct bytes *it, char type)
{
	size_t n;
	const uint8_t *payload = payload_of(it, type == 'Z', &n);
	u8(f, (uint8_t)type);
	put(f, "\0\0\0", 3);
	le32(f, (uint32_t)n);
	le32(f, (uint32_t)it->n);
	le32(f, cg_crc32(0, payload, n));
	put(f, payload, n);
}

static void string(struct bytes *b, const char *s)
{
	u8(b, 0x01);
	var(b, strlen(s));
	put(b, s, strlen(s));
}

static void text(struct bytes *b, const char *line)
{
	size_t n = strlen(line);
	if (n && line[n - 1] == '\n')
		n--;
	u8(b, 0x03);
	var(b, n);
	put(b, line, n);
}

static void klass(struct bytes *b, uint64_t span, uint64_t op, uint64_t dev, uint8_t cat,
		  uint8_t flags)
{
	u8(b, 0x05);
	var(b, span);
	var(b, op);
	var(b, dev);
	u8(b, cat);
	u8(b, flags);
}

/* An alloc by delta: odd ref. */
static void alloc(struct bytes *b, unsigned cls, uint64_t dts, int64_t daddr, uint64_t bytes)
{
	u8(b, (uint8_t)(0x80 | cls));
	var(b, dts);
	var(b, cg_zigzag(daddr) * 2 + 1);
	var(b, bytes);
}

/* An alloc by history: back = 0 is the block's most recent memory record, alloc or free. */
static void alloc_hist(struct bytes *b, unsigned cls, uint64_t dts, uint64_t back, uint64_t bytes)
{
	u8(b, (uint8_t)(0x80 | cls));
	var(b, dts);
	var(b, back * 2);
	var(b, bytes);
}

/* A free by history, back as for alloc_hist. */
static void free_hist(struct bytes *b, unsigned cls, uint64_t dts, uint64_t back)
{
	u8(b, (uint8_t)(0xc0 | cls));
	var(b, dts);
	var(b, back * 2);
}

static void free_delta(struct bytes *b, unsigned cls, uint64_t dts, int64_t daddr)
{
	u8(b, (uint8_t)(0xc0 | cls));
	var(b, dts);
	var(b, cg_zigzag(daddr) * 2 + 1);
}

/* Strings 0 "s1", 1 "malloc", 2 "cpu", 3 "cuda:0", 4 "root"; class 0: s1/malloc/cpu/other. */
static void tables(struct bytes *b)
{
	string(b, "s1");
	string(b, "malloc");
	string(b, "cpu");
	string(b, "cuda:0");
	string(b, "root");
	klass(b, 0, 2, 2, CGTRACE_CAT_OTHER, 0);
}

/* A file begun: its header in f; the first block's items so far, the meta and the tables. */
static struct bytes begin_file(struct bytes *f)
{
	struct bytes b = {.n = 0};
	header(f);
	text(&b, META_LINE);
	tables(&b);
	return b;
}

/* A file: header, then a block of meta, the tables and the items given. */
static void file_of(struct bytes *f, const struct bytes *items)
{
	struct bytes b = begin_file(f);
	put(&b, items->p, items->n);
	block(f, &b, 'R');
}

static struct warn_log warned;

static struct cgtrace_doc *read_bytes(const struct bytes *f, char *err, size_t errlen)
{
	struct cgtrace_doc *doc = NULL;
	struct cgtrace_read_options opts = {.warn = test_warn, .user = &warned};
	memset(&warned, 0, sizeof(warned));
	if (cgtrace_doc_read_mem("t.cgt", f->p, f->n, &opts, &doc, err, errlen) < 0)
		return NULL;
	return doc;
}

/* Both readers fail on the file with exactly this line. */
static void fails(const struct bytes *f, const char *expected)
{
	char err[1024];
	struct cgtrace_doc *doc = read_bytes(f, err, sizeof(err));
	ck_assert_msg(doc == NULL, "expected failure: %s", expected);
	ck_assert_str_eq(err, expected);

	struct cgtrace_reader *r;
	ck_assert_int_eq(cgtrace_reader_open_mem(&r, "t.cgt", f->p, f->n, NULL), 0);
	struct cgtrace_record rec;
	int ret;
	while ((ret = cgtrace_reader_next(r, &rec)) == 1)
		;
	ck_assert_int_lt(ret, 0);
	ck_assert_str_eq(cgtrace_reader_message(r), expected);
	cgtrace_reader_close(r);
}

/* The items after the tables make this error line; items are emptied for the next case. */
static void items_fail(struct bytes *items, const char *expected)
{
	struct bytes f;
	file_of(&f, items);
	fails(&f, expected);
	items->n = 0;
}

/* These raw bytes (a string literal) as the items after the tables make this error line. */
#define RAW_ITEMS_FAIL(raw, expected)                                                              \
	do {                                                                                       \
		struct bytes raw_ = {.n = 0};                                                      \
		put(&raw_, (raw), sizeof(raw) - 1);                                                \
		items_fail(&raw_, (expected));                                                     \
	} while (0)

/* ---- decoding ---- */

/* A decoder on f, past its first item: the meta line. */
static struct cg_cdec *open_past_meta(const struct bytes *f)
{
	struct cg_cdec *d;
	struct cg_cdec_out out;
	ck_assert_int_eq(cg_cdec_open_mem(&d, f->p, f->n), 0);
	ck_assert_int_eq(cg_cdec_next(d, &out), CG_CDEC_TEXT);
	return d;
}

static void sv_is(struct cg_sv v, const char *s)
{
	ck_assert_ptr_nonnull(v.p);
	ck_assert_int_eq((int)v.n, (int)strlen(s));
	ck_assert(memcmp(v.p, s, v.n) == 0);
}

/* d at its end, whole, after records records (0: not counted here); closed. */
static void close_at_end(struct cg_cdec *d, uint64_t records)
{
	struct cg_cdec_out out;
	ck_assert_int_eq(cg_cdec_next(d, &out), CG_CDEC_END);
	ck_assert(!cg_cdec_truncated(d));
	if (records)
		ck_assert_uint_eq(cg_cdec_records(d), records);
	cg_cdec_close(d);
}

static const struct cg_rec *next_rec(struct cg_cdec *d)
{
	struct cg_cdec_out out;
	int r = cg_cdec_next(d, &out);
	ck_assert_msg(r == CG_CDEC_REC, "got %d: %s", r, cg_cdec_error(d));
	return out.rec;
}

static const struct cg_rec_memory *next_mem(struct cg_cdec *d)
{
	const struct cg_rec *r = next_rec(d);
	ck_assert_int_eq(r->kind, CGTRACE_KIND_MEMORY);
	return &r->u.memory;
}

static void mem_is(const struct cg_rec_memory *m, uint64_t ts, const char *id, uint64_t bytes,
		   int action)
{
	ck_assert_uint_eq(m->timestamp_ns, ts);
	sv_is(m->tensor_id, id);
	ck_assert_uint_eq(m->bytes, bytes);
	ck_assert_int_eq(m->action, action);
	ck_assert_uint_eq(m->ndim, 1);
	ck_assert_uint_eq(m->shape[0], bytes);
	sv_is(m->dtype, "u8");
}

START_TEST(test_packed_fields)
{
	struct bytes f, b = begin_file(&f);
	/* Class 1: root, no op, cuda:0, managed, vmm:. */
	klass(&b, 4, 0, 3, CGTRACE_CAT_ACTIVATION, 3);
	u8(&b, 0x02);
	var(&b, 4242); /* THREAD */
	alloc(&b, 0, 100, 0x1000, 64);
	alloc(&b, 0, 5, 0x100, 32);
	alloc(&b, 1, 1, -0x1100, 4096);
	free_hist(&b, 0, 2, 1);       /* one back: 0x1100 */
	free_delta(&b, 0, 0, -0x100); /* from 0x1100 */
	free_hist(&b, 1, 0, 2);       /* frees count too: vmm:0x0, on cuda:0 */
	alloc_hist(&b, 0, 1, 2, 16);  /* 0x1100 again, two back (its free) */
	alloc_hist(&b, 0, 0, 0, 16);  /* the same again, 0 back */
	block(&f, &b, 'R');

	struct cg_cdec *d;
	ck_assert_int_eq(cg_cdec_open_mem(&d, f.p, f.n), 0);
	struct cg_cdec_out out;
	ck_assert_int_eq(cg_cdec_next(d, &out), CG_CDEC_TEXT);
	ck_assert_uint_eq(out.len, strlen(META_LINE) - 1);
	ck_assert(memcmp(out.line, META_LINE, out.len) == 0);
	ck_assert_uint_eq(cg_cdec_records(d), 1);

	const struct cg_rec_memory *m = next_mem(d);
	mem_is(m, 100, "0x1000", 64, CGTRACE_ALLOC);
	sv_is(m->span_id, "s1");
	sv_is(m->op_name, "malloc");
	sv_is(m->device, "cpu");
	ck_assert_int_eq(m->category, CGTRACE_CAT_OTHER);
	ck_assert(!m->managed);
	ck_assert_ptr_null(m->cgprobe_device_uuid.p);
	ck_assert_uint_eq(cg_cdec_thread(d), 4242);
	mem_is(next_mem(d), 105, "0x1100", 32, CGTRACE_ALLOC);
	m = next_mem(d);
	mem_is(m, 106, "vmm:0x0", 4096, CGTRACE_ALLOC);
	sv_is(m->span_id, "root");
	ck_assert_ptr_null(m->op_name.p);
	sv_is(m->device, "cuda:0");
	ck_assert_int_eq(m->category, CGTRACE_CAT_ACTIVATION);
	ck_assert(m->managed);
	m = next_mem(d);
	mem_is(m, 108, "0x1100", 32, CGTRACE_FREE);
	ck_assert(!m->managed);
	mem_is(next_mem(d), 108, "0x1000", 64, CGTRACE_FREE);
	m = next_mem(d);
	mem_is(m, 108, "vmm:0x0", 4096, CGTRACE_FREE);
	sv_is(m->device, "cuda:0");
	ck_assert(!m->managed);
	mem_is(next_mem(d), 109, "0x1100", 16, CGTRACE_ALLOC);
	mem_is(next_mem(d), 109, "0x1100", 16, CGTRACE_ALLOC);
	close_at_end(d, 9);
}
END_TEST

/* THREAD_AGAIN names a thread by its THREAD item's number in the block; a number not reached is an error. */
START_TEST(test_thread_again)
{
	struct bytes f, b = begin_file(&f);
	klass(&b, 4, 0, 3, CGTRACE_CAT_ACTIVATION, 3);
	u8(&b, 0x02);
	var(&b, 4242); /* THREAD: number 0 */
	alloc(&b, 0, 100, 0x1000, 64);
	u8(&b, 0x02);
	var(&b, 7); /* THREAD: number 1 */
	alloc(&b, 0, 1, 0x100, 32);
	u8(&b, 0x20); /* THREAD_AGAIN 0 */
	alloc(&b, 0, 1, 0x100, 32);
	u8(&b, 0x21); /* THREAD_AGAIN 1 */
	alloc(&b, 0, 1, 0x100, 32);
	block(&f, &b, 'Z');

	struct cg_cdec *d = open_past_meta(&f);
	const uint64_t want[] = {4242, 7, 4242, 7};
	for (size_t i = 0; i < 4; i++) {
		ck_assert_ptr_nonnull(next_mem(d));
		ck_assert_uint_eq(cg_cdec_thread(d), want[i]);
	}
	close_at_end(d, 0);

	/* A new block's threads are its own: number 0 is not there yet. */
	b.n = 0;
	u8(&b, 0x20);
	alloc(&b, 0, 1, 0x100, 32);
	block(&f, &b, 'R');
	fails(&f, "t.cgt: record 6: THREAD_AGAIN 0: the block's THREAD items named 0");
}
END_TEST

START_TEST(test_spans_and_checkpoints)
{
	struct bytes f, b = begin_file(&f);
	alloc(&b, 0, 50, 0x10, 8);
	u8(&b, 0x10); /* SPAN_START s9 under s1, named root, at 50 + 10 */
	var(&b, 10);
	var(&b, 9);
	var(&b, 2);
	var(&b, 4);
	u8(&b, CGTRACE_SPAN_MODULE);
	u8(&b, CGTRACE_STEP_BACKWARD);
	u8(&b, 1);
	u8(&b, 0x11); /* SPAN_END s9: no timestamp */
	var(&b, 9);
	var(&b, 77);
	u8(&b, 0x10); /* SPAN_START s12, no parent, no step, not measured */
	var(&b, 0);
	var(&b, 12);
	var(&b, 0);
	var(&b, 4);
	u8(&b, CGTRACE_SPAN_FUNCTION);
	u8(&b, 0);
	u8(&b, 0);
	u8(&b, 0x12); /* DEVICE_MEMORY cuda:0, reserved and oom */
	var(&b, 3);
	var(&b, 3);
	var(&b, 1000);
	var(&b, 9000);
	u8(&b, 3);
	var(&b, 2000);
	var(&b, 512);
	u8(&b, 0x12); /* DEVICE_MEMORY, neither */
	var(&b, 1);
	var(&b, 3);
	var(&b, 1);
	var(&b, 2);
	u8(&b, 0);
	block(&f, &b, 'R');

	struct cg_cdec *d = open_past_meta(&f);
	next_mem(d);
	const struct cg_rec *r = next_rec(d);
	ck_assert_int_eq(r->kind, CGTRACE_KIND_SPAN_START);
	const struct cg_rec_span_start *s = &r->u.span_start;
	sv_is(s->id, "s9");
	sv_is(s->parent_id, "s1");
	sv_is(s->name, "root");
	ck_assert_uint_eq(s->start_ns, 60);
	ck_assert_int_eq(s->span_kind, CGTRACE_SPAN_MODULE);
	ck_assert_int_eq(s->step, CGTRACE_STEP_BACKWARD);
	ck_assert(s->measured);
	r = next_rec(d);
	ck_assert_int_eq(r->kind, CGTRACE_KIND_SPAN_END);
	sv_is(r->u.span_end.id, "s9");
	ck_assert_uint_eq(r->u.span_end.duration_ns, 77);
	r = next_rec(d);
	s = &r->u.span_start;
	sv_is(s->id, "s12");
	ck_assert_ptr_null(s->parent_id.p);
	ck_assert_uint_eq(s->start_ns, 60);
	ck_assert_int_eq(s->step, CGTRACE_STEP_NONE);
	ck_assert(!s->measured);
	r = next_rec(d);
	ck_assert_int_eq(r->kind, CGTRACE_KIND_DEVICE_MEMORY);
	const struct cg_rec_device_memory *dm = &r->u.device_memory;
	ck_assert_uint_eq(dm->timestamp_ns, 63);
	sv_is(dm->device, "cuda:0");
	ck_assert_uint_eq(dm->used_bytes, 1000);
	ck_assert_uint_eq(dm->free_bytes, 9000);
	ck_assert(dm->has_reserved && dm->reserved_bytes == 2000);
	ck_assert(dm->has_oom_request && dm->oom_request_bytes == 512);
	r = next_rec(d);
	dm = &r->u.device_memory;
	ck_assert_uint_eq(dm->timestamp_ns, 64);
	ck_assert(!dm->has_reserved && !dm->has_oom_request);
	close_at_end(d, 7);
}
END_TEST

/*
 * Block state resets, tables do not: a zstd block's free finds the stored
 * block's alloc through the live table; its timestamps start from 0 again.
 */
START_TEST(test_blocks)
{
	struct bytes f, b = begin_file(&f);
	alloc(&b, 0, 1000, 0x5000, 48);
	block(&f, &b, 'R');
	b.n = 0;
	free_delta(&b, 0, 7, 0x5000);
	u8(&b, 0x9f); /* class 31 would follow as a varint: class 0 */
	var(&b, 0);
	var(&b, 1);
	var(&b, 0x21); /* delta +8: zigzag 0x10, odd ref */
	var(&b, 16);
	block(&f, &b, 'Z');
	struct cg_cdec *d = open_past_meta(&f);
	mem_is(next_mem(d), 1000, "0x5000", 48, CGTRACE_ALLOC);
	mem_is(next_mem(d), 7, "0x5000", 48, CGTRACE_FREE);
	mem_is(next_mem(d), 8, "0x5008", 16, CGTRACE_ALLOC);
	close_at_end(d, 0);
}
END_TEST

/* TEXT memory records update the live table too; other opcodes and areas are skipped. */
START_TEST(test_text_live_and_skips)
{
	struct bytes f, b = {.n = 0};
	header(&f);
	text(&b, META_LINE);
	text(&b, "{\"kind\":\"memory\",\"timestamp_ns\":5,\"tensor_id\":\"0xabc\","
		 "\"span_id\":\"s1\","
		 "\"device\":\"cpu\",\"bytes\":99,\"action\":\"alloc\",\"shape\":[3,33],"
		 "\"dtype\":\"u8\",\"category\":\"other\"}");
	/* Escapes make the fast parser decline: the reference parser reads it for the table. */
	text(&b, "{\"kind\":\"memory\",\"timestamp_ns\":6,\"tensor_id\":\"0xdef\","
		 "\"span_id\":\"s\\u0031\","
		 "\"device\":\"cp\\u0075\",\"bytes\":7,\"action\":\"alloc\",\"dtype\":\"u8\"}");
	tables(&b);
	u8(&b, 0x47); /* reserved, skippable */
	var(&b, 3);
	put(&b, "xyz", 3);
	u8(&b, 0xe0); /* a free with an extension area of keys this reader does not know */
	var(&b, 1);
	var(&b, cg_zigzag(0xabc) * 2 + 1);
	var(&b, 5);
	var(&b, 3);
	var(&b, 300);
	var(&b, 9); /* key 2 is the pre-existing mark, which a free must not carry */
	var(&b, 1);
	free_delta(&b, 0, 1, 0xdef - 0xabc);
	block(&f, &b, 'R');
	struct cg_cdec *d;
	struct cg_cdec_out out;
	ck_assert_int_eq(cg_cdec_open_mem(&d, f.p, f.n), 0);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(cg_cdec_next(d, &out), CG_CDEC_TEXT);
	mem_is(next_mem(d), 1, "0xabc", 99, CGTRACE_FREE);
	mem_is(next_mem(d), 2, "0xdef", 7, CGTRACE_FREE);
	close_at_end(d, 0);

	/* The readers take both, and the public record's line is its number. */
	char err[512];
	struct cgtrace_doc *doc = read_bytes(&f, err, sizeof(err));
	ck_assert_msg(doc, "%s", err);
	ck_assert_uint_eq(cgtrace_doc_count(doc, CGTRACE_KIND_MEMORY), 4);
	cgtrace_doc_free(doc);
	struct cgtrace_reader *r;
	struct cgtrace_record rec;
	ck_assert_int_eq(cgtrace_reader_open_mem(&r, "t.cgt", f.p, f.n, NULL), 0);
	for (uint64_t i = 1; i <= 5; i++) {
		ck_assert_int_eq(cgtrace_reader_next(r, &rec), 1);
		ck_assert_uint_eq(rec.line, i);
	}
	ck_assert_str_eq(rec.u.memory->tensor_id, "0xdef");
	ck_assert_uint_eq(rec.u.memory->bytes, 7);
	ck_assert_int_eq(cgtrace_reader_next(r, &rec), 0);
	cgtrace_reader_close(r);
}
END_TEST

/* ---- hostile input ---- */

START_TEST(test_bad_items)
{
	struct bytes b = {.n = 0};
	alloc(&b, 0, 1, 0x10, 8);
	b.n--; /* the size's varint cut */
	items_fail(&b, "t.cgt: record 2: MEMORY item cut by the end of its block");

	RAW_ITEMS_FAIL("\x80\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02",
		       "t.cgt: record 2: bad varint in a MEMORY item");
	RAW_ITEMS_FAIL("\x80\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01",
		       "t.cgt: record 2: bad varint in a MEMORY item");

	u8(&b, 0x01);
	var(&b, 1ull << 40);
	items_fail(&b, "t.cgt: record 2: STRING item cut by the end of its block");

	klass(&b, 7, 0, 2, 0, 0);
	items_fail(&b, "t.cgt: record 2: string 7 not defined");
	klass(&b, 0, 0, 2, 5, 0);
	items_fail(&b, "t.cgt: record 2: class 1: category 5 unknown");

	alloc(&b, 3, 1, 1, 1);
	items_fail(&b, "t.cgt: record 2: class 3 not defined");

	alloc(&b, 0, 1, 0x10, 8);
	u8(&b, 0x04);
	items_fail(&b, "t.cgt: record 3: unknown opcode 0x04");

	free_delta(&b, 0, 1, 0x10);
	items_fail(&b, "t.cgt: record 2: free of 0x10 on cpu, which is not live");

	alloc(&b, 0, 1, 0x10, 8);
	free_hist(&b, 0, 1, 1);
	items_fail(&b, "t.cgt: record 3: ref to the address 2 back, the history holds 1");
	alloc_hist(&b, 0, 1, 0, 8);
	items_fail(&b, "t.cgt: record 2: ref to the address 1 back, the history holds 0");

	/* Timestamps do not wrap: prev_ts + ts past 2^64 - 1, for each kind that has one. */
	alloc(&b, 0, UINT64_MAX, 0x10, 8);
	alloc(&b, 0, 1, 0x10, 8);
	items_fail(&b, "t.cgt: record 3: timestamp past 2^64 - 1 (1 after 18446744073709551615)");
	alloc(&b, 0, UINT64_MAX - 1, 0x10, 8);
	put(&b, "\x10\x02\x01\x00\x04\x00\x00\x00", 8); /* SPAN_START at + 2 */
	items_fail(&b, "t.cgt: record 3: timestamp past 2^64 - 1 (2 after 18446744073709551614)");
	alloc(&b, 0, UINT64_MAX, 0x10, 8);
	put(&b, "\x12\x01\x02\x01\x01\x00", 6); /* DEVICE_MEMORY at + 1 */
	items_fail(&b, "t.cgt: record 3: timestamp past 2^64 - 1 (1 after 18446744073709551615)");
	/* Up to 2^64 - 1 itself is a timestamp. */
	alloc(&b, 0, UINT64_MAX - 1, 0x10, 8);
	put(&b, "\x12\x01\x02\x01\x01\x00", 6);
	u8(&b, 0x04);
	items_fail(&b, "t.cgt: record 4: unknown opcode 0x04");

	RAW_ITEMS_FAIL("\x10\x01\x01\x00\x04\x03\x00\x00",
		       "t.cgt: record 2: SPAN_START item: bad kind 3, step 0 or flags 0x00");

	/* A TEXT item is read as a line: the reference parser's message, with its record. */
	text(&b, "{\"kind\":\"nope\"}");
	items_fail(&b, "t.cgt: record 2: unknown record kind \"nope\"");
	text(&b, " ");
	items_fail(&b, "t.cgt: record 2: TEXT item holds no record");
	text(&b, "{\"kind\":\n\"edge\"}");
	items_fail(&b, "t.cgt: record 2: TEXT item holds a newline");

	RAW_ITEMS_FAIL("\x01\x03" "a\0b", "t.cgt: record 2: string 5 holds a NUL byte");
}
END_TEST

/* Ill-formed UTF-8 in a string reads as the JSONL writer writes it: U+FFFD. */
START_TEST(test_string_utf8)
{
	struct bytes f, b = {.n = 0};
	string(&b, "a\xff\xe2\x82" "b\xe2\x82\xac");
	klass(&b, 5, 0, 2, CGTRACE_CAT_OTHER, 0);
	alloc(&b, 1, 1, 0x10, 8);
	file_of(&f, &b);
	struct cg_cdec *d = open_past_meta(&f);
	sv_is(next_mem(d)->span_id, "a\xef\xbf\xbd\xef\xbf\xbd" "b\xe2\x82\xac");
	cg_cdec_close(d);
}
END_TEST

START_TEST(test_bad_blocks)
{
	struct bytes f, b = {.n = 0};
	file_of(&f, &b);
	f.p[16 + 12] ^= 1; /* the CRC */
	char want[256];
	snprintf(want, sizeof(want),
		 "t.cgt: record 1: block at byte 16: CRC-32 %08x, the header says %08x",
		 cg_crc32(0, f.p + 32, f.n - 32), cg_crc32(0, f.p + 32, f.n - 32) ^ 1);
	fails(&f, want);

	file_of(&f, &b);
	f.p[16] = 'Q';
	fails(&f, "t.cgt: record 1: block at byte 16: bad block type 51 00 00 00");

	file_of(&f, &b);
	f.p[16 + 8 + 3] = 0x10; /* raw_len 256 MiB + the real one */
	snprintf(want, sizeof(want),
		 "t.cgt: record 1: block at byte 16: raw_len %zu over the limit of 67108864",
		 (size_t)(0x10000000 + f.n - 32));
	fails(&f, want);

	file_of(&f, &b);
	f.p[8] = 2;
	fails(&f, "t.cgt: record 1: compact encoding version 2 is not supported (only 1)");

	/* A stored payload that is not zstd, called zstd. */
	file_of(&f, &b);
	f.p[16] = 'Z';
	fails(&f, "t.cgt: record 1: block at byte 16: not a zstd frame");

	/* An error in the second block names the records of the first. */
	file_of(&f, &b);
	struct bytes b2 = {.n = 0};
	u8(&b2, 0x09);
	block(&f, &b2, 'Z');
	fails(&f, "t.cgt: record 2: unknown opcode 0x09");
}
END_TEST

START_TEST(test_truncated)
{
	struct bytes f, b = {.n = 0};
	alloc(&b, 0, 1, 0x10, 8);
	file_of(&f, &b);
	size_t whole = f.n;
	b.n = 0;
	alloc(&b, 0, 1, 0x20, 8);
	block(&f, &b, 'Z');
	/* Cut anywhere inside the second block: the first one's two records read. */
	for (size_t cut = whole + 1; cut < f.n; cut += 3) {
		struct bytes g = f;
		g.n = cut;
		char err[512];
		struct cgtrace_doc *doc = read_bytes(&g, err, sizeof(err));
		ck_assert_msg(doc, "%s", err);
		ck_assert_str_eq(warned.text, "t.cgt: trace truncated after 2 records\n");
		ck_assert(cgtrace_doc_truncated(doc));
		uint64_t decoded = 0;
		ck_assert(cgtrace_doc_cut_in_block(doc, &decoded));
		ck_assert_uint_eq(decoded, 2);
		ck_assert_uint_eq(cgtrace_doc_count(doc, CGTRACE_KIND_MEMORY), 1);
		cgtrace_doc_free(doc);
	}
	/* Whole: not cut. */
	{
		char err[512];
		struct cgtrace_doc *doc = read_bytes(&f, err, sizeof(err));
		ck_assert_msg(doc, "%s", err);
		ck_assert(!cgtrace_doc_truncated(doc));
		ck_assert(!cgtrace_doc_cut_in_block(doc, NULL));
		cgtrace_doc_free(doc);
	}
	/* The streaming reader: the same warning in its message, at the end. */
	struct cgtrace_reader *r;
	struct cgtrace_record rec;
	ck_assert_int_eq(cgtrace_reader_open_mem(&r, "t.cgt", f.p, f.n - 1, NULL), 0);
	ck_assert_int_eq(cgtrace_reader_next(r, &rec), 1);
	ck_assert_int_eq(cgtrace_reader_next(r, &rec), 1);
	ck_assert_int_eq(cgtrace_reader_next(r, &rec), 0);
	ck_assert(cgtrace_reader_truncated(r));
	ck_assert_str_eq(cgtrace_reader_message(r), "t.cgt: trace truncated after 2 records");
	cgtrace_reader_close(r);

	/* A cut header: 0 records, then the stream lacks its meta. */
	for (size_t cut = 1; cut < 16; cut += 7) {
		struct bytes g = f;
		g.n = cut;
		char err[512];
		ck_assert_ptr_null(read_bytes(&g, err, sizeof(err)));
		ck_assert_str_eq(warned.text, "t.cgt: trace truncated after 0 records\n");
		ck_assert_str_eq(err,
				 "t.cgt: trace stream is missing a meta record with run metadata");
	}
}
END_TEST

/*
 * Past the document reader's batches (it decodes a batch ahead on a thread
 * of its own): every record applied, in order, and an error far in names
 * its record as the streaming reader does.
 */
START_TEST(test_many_records)
{
	struct bytes f, b = {.n = 0};
	for (int i = 0; i < 3000; i++) {
		alloc(&b, 0, 1, 0x40, 8);
		if (i % 500 == 0)
			text(&b, "{\"kind\":\"edge\",\"from_span\":\"s1\",\"to_span\":\"s1\","
				 "\"duration_ns\":1}");
		free_hist(&b, 0, 1, 0);
	}
	file_of(&f, &b);
	char err[512];
	struct cgtrace_doc *doc = read_bytes(&f, err, sizeof(err));
	ck_assert_msg(doc, "%s", err);
	ck_assert_uint_eq(cgtrace_doc_count(doc, CGTRACE_KIND_MEMORY), 6000);
	ck_assert_uint_eq(cgtrace_doc_count(doc, CGTRACE_KIND_EDGE), 6);
	struct cgtrace_memory m;
	cgtrace_doc_memory(doc, 5999, &m);
	ck_assert_str_eq(m.tensor_id, "0x2ee00");
	ck_assert_uint_eq(m.timestamp_ns, 6000);
	ck_assert_int_eq(m.action, CGTRACE_FREE);
	cgtrace_doc_free(doc);

	free_hist(&b, 0, 1, 0);
	items_fail(&b, "t.cgt: record 6008: free of 0x2ee00 on cpu, which is not live");
}
END_TEST

/* ---- told apart by content ---- */

/* Reads bytes from a pipe as standard input, as `cgtrace CMD -` does. */
static struct cgtrace_doc *read_pipe(const void *p, size_t n, char *err, size_t errlen)
{
	int fds[2];
	ck_assert_int_eq(pipe(fds), 0);
	ck_assert_uint_lt(n, 60000); /* fits the pipe: no writer thread needed */
	ck_assert_int_eq(write(fds[1], p, n), (ssize_t)n);
	close(fds[1]);
	ck_assert_int_eq(dup2(fds[0], STDIN_FILENO), STDIN_FILENO);
	close(fds[0]);
	struct cgtrace_doc *doc = NULL;
	struct cgtrace_read_options opts = {.warn = test_warn, .user = &warned};
	memset(&warned, 0, sizeof(warned));
	if (cgtrace_doc_read("-", &opts, &doc, err, errlen) < 0)
		return NULL;
	return doc;
}

START_TEST(test_stdin_compact)
{
	struct bytes f, b = {.n = 0};
	alloc(&b, 0, 1, 0x10, 8);
	file_of(&f, &b);
	char err[512];
	struct cgtrace_doc *doc = read_pipe(f.p, f.n, err, sizeof(err));
	ck_assert_msg(doc, "%s", err);
	ck_assert_uint_eq(cgtrace_doc_count(doc, CGTRACE_KIND_MEMORY), 1);
	cgtrace_doc_free(doc);
}
END_TEST

START_TEST(test_stdin_jsonl)
{
	char err[512];
	struct cgtrace_doc *doc = read_pipe(META_LINE, strlen(META_LINE), err, sizeof(err));
	ck_assert_msg(doc, "%s", err);
	ck_assert_uint_eq(cgtrace_doc_count(doc, CGTRACE_KIND_META), 1);
	cgtrace_doc_free(doc);
	/* Shorter than the magic, and not it: JSONL's own message. */
	ck_assert_ptr_null(read_pipe("{}", 2, err, sizeof(err)));
	ck_assert_str_eq(err, "<stdin>:1: record has no `kind` field");
}
END_TEST

START_TEST(test_stdin_zstd)
{
	static char z[4096];
	size_t n = ZSTD_compress(z, sizeof(z), META_LINE, strlen(META_LINE), 3);
	ck_assert(!ZSTD_isError(n));
	char err[512];
	struct cgtrace_doc *doc = read_pipe(z, n, err, sizeof(err));
	ck_assert_msg(doc, "%s", err);
	ck_assert_uint_eq(cgtrace_doc_count(doc, CGTRACE_KIND_META), 1);
	cgtrace_doc_free(doc);
}
END_TEST

/* A stack block of ids first to last ('s' stored, 'S' zstd) holding items. */
static void stack_block(struct bytes *f, uint64_t first, uint64_t last, const struct bytes *items,
			char type)
{
	struct bytes b = {.n = 0};
	for (int i = 0; i < 8; i++)
		u8(&b, (uint8_t)(first >> (8 * i)));
	for (int i = 0; i < 8; i++)
		u8(&b, (uint8_t)(last >> (8 * i)));
	size_t n;
	const uint8_t *payload = payload_of(items, type == 'S', &n);
	put(&b, payload, n);
	u8(f, (uint8_t)type);
	put(f, "\0\0\0", 3);
	le32(f, (uint32_t)b.n);
	le32(f, (uint32_t)items->n);
	le32(f, cg_crc32(0, b.p, b.n));
	put(f, b.p, b.n);
}

/* TREE id on parent with n frames 0x10, 0x20, ... */
static void tree_item(struct bytes *b, uint64_t id, uint64_t parent, unsigned n)
{
	u8(b, 0x08);
	var(b, id);
	var(b, parent);
	var(b, n);
	for (unsigned i = 0; i < n; i++)
		var(b, cg_zigzag(0x10));
}

/* An alloc of class 0 naming stack id (extension key 1). */
static void alloc_stack(struct bytes *b, uint64_t dts, int64_t daddr, uint64_t id)
{
	u8(b, 0x80 | 0x20);
	var(b, dts);
	var(b, cg_zigzag(daddr) * 2 + 1);
	var(b, 8);
	struct bytes ext = {.n = 0};
	var(&ext, 1);
	var(&ext, id);
	var(b, ext.n);
	put(b, ext.p, ext.n);
}

/* The meta and tables, a stack block of stacks, then the records. */
static void file_with_stacks(struct bytes *f, uint64_t first, uint64_t last,
			     const struct bytes *stacks, const struct bytes *recs, char type)
{
	struct bytes b = begin_file(f);
	block(f, &b, 'R');
	stack_block(f, first, last, stacks, type);
	block(f, recs, 'R');
}

static int read_flags(const struct bytes *f, unsigned flags, char *err, size_t errlen)
{
	struct cgtrace_doc *doc = NULL;
	int r = cgtrace_doc_read_mem_flags("t.cgt", f->p, f->n, NULL, flags, &doc, err, errlen);
	cgtrace_doc_free(doc);
	return r;
}

/* Stack blocks: read whole or skipped; what breaks their rules, one line each. */
START_TEST(test_stack_blocks)
{
	static const unsigned modes[3] = {0, CGTRACE_READ_NO_STACKS,
					  CGTRACE_READ_STREAM_MEMORY | CGTRACE_READ_SKIP_STACKS};
	char err[512];
	struct bytes f, st = {.n = 0}, recs = {.n = 0};
	/* Stacks 1 to 3 by one TREE item; records name 3 (taking it), then 2. */
	tree_item(&st, 3, 0, 3);
	alloc_stack(&recs, 1, 0x100, 3);
	alloc_stack(&recs, 1, 0x100, 2);
	for (int t = 0; t < 2; t++) {
		file_with_stacks(&f, 1, 3, &st, &recs, t ? 'S' : 's');
		for (int m = 0; m < 3; m++)
			ck_assert_msg(read_flags(&f, modes[m], err, sizeof(err)) == 0, "%s", err);
	}
	struct cg_cdec *d;
	struct cg_cdec_out out;
	ck_assert_int_eq(cg_cdec_open_mem(&d, f.p, f.n), 0);
	cg_cdec_skip_stacks(d, true);
	ck_assert_int_eq(cg_cdec_next(d, &out), CG_CDEC_TEXT);
	ck_assert_int_eq(cg_cdec_next(d, &out), CG_CDEC_STACKS);
	ck_assert_uint_eq(out.stacks_first, 1);
	ck_assert_uint_eq(out.stacks_last, 3);
	ck_assert_uint_eq(next_mem(d)->stack, 3);
	cg_cdec_close(d);

	/* A record naming a stack no block defined: skipped or not, it is not defined. */
	alloc_stack(&recs, 1, 0x100, 9);
	file_with_stacks(&f, 1, 3, &st, &recs, 's');
	for (int m = 0; m < 3; m++) {
		ck_assert_int_eq(read_flags(&f, modes[m], err, sizeof(err)), -EBADMSG);
		ck_assert_str_eq(err, "t.cgt: record 4: stack 9 not defined");
	}

	/* What a stack block may not hold, whole reads say; a read that skips it never looks. */
	recs.n = 0;
	alloc_stack(&recs, 1, 0x100, 3);
	struct bytes bad = {.n = 0};
	string(&bad, "x");
	file_with_stacks(&f, 1, 3, &bad, &recs, 's');
	ck_assert_msg(read_flags(&f, modes[2], err, sizeof(err)) == 0, "%s", err);
	fails(&f, "t.cgt: record 2: item 01 in a stack block (only STACK and TREE)");
	bad.n = 0;
	tree_item(&bad, 5, 0, 2);
	file_with_stacks(&f, 1, 4, &bad, &recs, 's');
	fails(&f, "t.cgt: record 2: TREE item: stack 5 outside its block's ids 1 to 4");
	file_with_stacks(&f, 5, 9, &bad, &recs, 's');
	fails(&f, "t.cgt: record 2: TREE item: stack 5 outside its block's ids 5 to 9");
	size_t at = 16;
	{
		struct bytes b = begin_file(&f);
		block(&f, &b, 'R');
		at = f.n;
	}
	file_with_stacks(&f, 0, 3, &st, &recs, 's');
	char want[160];
	snprintf(want, sizeof(want), "t.cgt: record 2: block at byte %zu: stack block of ids 0 to 3",
		 at);
	fails(&f, want);
	file_with_stacks(&f, 4, 3, &st, &recs, 'S');
	snprintf(want, sizeof(want), "t.cgt: record 2: block at byte %zu: stack block of ids 4 to 3",
		 at);
	fails(&f, want);
	/* A payload too short for the range. */
	file_with_stacks(&f, 1, 3, &st, &recs, 's');
	f.p[at + 4] = 8;
	f.p[at + 8] = 0;
	snprintf(want, sizeof(want),
		 "t.cgt: record 2: block at byte %zu: payload_len 8 does not fit raw_len 0", at);
	fails(&f, want);
}
END_TEST

TEST_SUITE(suite, "compact-dec")
{
	test_case(s, "compact:decode", 10, test_packed_fields, test_spans_and_checkpoints,
	          test_blocks, test_text_live_and_skips, test_thread_again);
	test_case(s, "compact:hostile", 10, test_bad_items, test_bad_blocks, test_truncated,
	          test_many_records, test_string_utf8, test_stack_blocks);
	test_case(s, "compact:detect", 10, test_stdin_compact, test_stdin_jsonl, test_stdin_zstd);
}

TEST_MAIN(suite);
