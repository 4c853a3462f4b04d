/* SPDX-License-Identifier: MIT */
/*
 * Stack blocks (docs/stacks.md, "Stack blocks"): the encoder puts STACK
 * and TREE items in blocks of their own, ahead of the records that take
 * them, never more pending than a reader holds; a full read gets every
 * stack back, a read with CGTRACE_READ_SKIP_STACKS gets the same memory
 * figures without decompressing them (a stack block of garbage reads),
 * and a plain light read still checks them.
 */
#include <errno.h>
#include <inttypes.h>

#include "compact_enc.h"
#include "crc32.h"
#include "test-main.h"
#include "test-util.h"

struct out {
	uint8_t *p;
	size_t n, cap;
	unsigned stack_blocks, record_blocks;
};

static int collect(void *user, const void *p, size_t n)
{
	struct out *o = user;
	if (o->n + n > o->cap) {
		o->cap = (o->n + n) * 2;
		o->p = realloc(o->p, o->cap);
		ck_assert_ptr_nonnull(o->p);
	}
	memcpy(o->p + o->n, p, n);
	/* One call a block; the file header's first. */
	if (o->n) {
		const uint8_t t = ((const uint8_t *)p)[0];
		o->stack_blocks += t == 'S' || t == 's';
		o->record_blocks += t == 'Z' || t == 'R';
	}
	o->n += n;
	return 0;
}

/* The frame stack id's node adds; stack id hangs from parent_of(id). */
static uint64_t frame_of(uint64_t id)
{
	return 0x400000 + id * 16;
}

static uint64_t parent_of(uint64_t id)
{
	/* Chains of 1 to 8 frames, each stack a frame on the one before. */
	return id % 8 == 1 ? 0 : id - 1;
}

/* n stacks, each defined by an alloc (and freed), then each named again once. */
static void write_trace(struct out *o, int level, size_t block_raw, uint64_t n)
{
	memset(o, 0, sizeof(*o));
	struct cg_cenc *e;
	const struct cg_cenc_opts opts = {
	    .zstd_level = level, .block_raw = block_raw, .write = collect, .user = o};
	ck_assert_int_eq(cg_cenc_new(&e, &opts), 0);
	ck_assert_int_eq(cg_cenc_text(e, META_LINE, strlen(META_LINE) - 1), 0);
	uint32_t s = cg_cenc_string(e, "s1", 2), op = cg_cenc_string(e, "malloc", 6);
	uint32_t dev = cg_cenc_string(e, "cpu", 3);
	uint32_t c = cg_cenc_class(e, s, op, dev, CGTRACE_CAT_OTHER, 0);
	uint64_t ts = 1;
	for (uint64_t id = 1; id <= n; id++) {
		const uint64_t f = frame_of(id);
		ck_assert(cg_cenc_tree(e, id, parent_of(id), &f, 1));
		uint64_t ord = cg_cenc_alloc_stack(e, c, ts++, 0x10000 + id * 64, 32, id);
		cg_cenc_free(e, c, ts++, 0x10000 + id * 64, ord);
	}
	for (uint64_t id = 1; id <= n; id++)
		cg_cenc_alloc_stack(e, c, ts++, 0x10000 + id * 64, 48, id);
	ck_assert_int_eq(cg_cenc_close(e), 0);
}

static int read_as(const struct out *o, unsigned flags, struct cgtrace_doc **doc, char *err,
		   size_t errlen)
{
	return cgtrace_doc_read_mem_flags("t.cgt", o->p, o->n, NULL, flags, doc, err, errlen);
}

static struct cgtrace_doc *read_ok(const struct out *o, unsigned flags)
{
	char err[512];
	struct cgtrace_doc *doc = NULL;
	int r = read_as(o, flags, &doc, err, sizeof(err));
	ck_assert_msg(r == 0, "%s", err);
	return doc;
}

static void peak_is(const struct cgtrace_doc *doc, uint64_t peak, uint64_t allocs)
{
	struct cgtrace_summary s;
	ck_assert_int_eq(cgtrace_doc_summary(doc, &s), 0);
	ck_assert_uint_eq(s.peak_bytes, peak);
	ck_assert_uint_eq(s.alloc_count, allocs);
}

/*
 * 200 000 new stacks in one record block (block_raw 4 MiB): the encoder
 * ends it before a reader would hold more than 65 536 items pending, and
 * every stack reads back whole; skipped, the memory figures are the same.
 */
START_TEST(many_stacks_read_back)
{
	enum { N = 200000 };
	static const int levels[2] = {0, 1};
	struct out o;
	write_trace(&o, levels[_i], 0, N);
	ck_assert_uint_ge(o.stack_blocks, 2);
	/* 65 536 pending at most: four record blocks at least for 200 000 definitions. */
	ck_assert_uint_ge(o.record_blocks, 4);
	struct cgtrace_doc *doc = read_ok(&o, CGTRACE_READ_STREAM_MEMORY);
	ck_assert_uint_eq(cgtrace_doc_stack_count(doc), N);
	for (uint64_t id = 1; id <= N; id += 7919) {
		uint64_t got[8], want[8];
		size_t k = 0;
		for (uint64_t q = id; q; q = parent_of(q))
			want[k++] = frame_of(q);
		ck_assert_uint_eq(cgtrace_doc_stack_frames(doc, id, got, 8, NULL), k);
		ck_assert_int_eq(memcmp(got, want, k * sizeof(*got)), 0);
	}
	peak_is(doc, (uint64_t)N * 48, 2 * N);
	cgtrace_doc_free(doc);
	doc = read_ok(&o, CGTRACE_READ_STREAM_MEMORY | CGTRACE_READ_SKIP_STACKS);
	peak_is(doc, (uint64_t)N * 48, 2 * N);
	ck_assert_ptr_null(cgtrace_doc_stack(doc, 5));
	cgtrace_doc_free(doc);
	doc = read_ok(&o, CGTRACE_READ_NO_STACKS);
	peak_is(doc, (uint64_t)N * 48, 2 * N);
	cgtrace_doc_free(doc);
	free(o.p);
}
END_TEST

/* The offset of the first stack block after the file header, 0: none. */
static size_t first_stack_block(const struct out *o)
{
	for (size_t at = CG_COMPACT_HEADER_LEN; at + CG_COMPACT_BLOCK_HEADER_LEN <= o->n;) {
		const uint8_t *h = o->p + at;
		if (h[0] == 'S' || h[0] == 's')
			return at;
		at += CG_COMPACT_BLOCK_HEADER_LEN +
		      (h[4] | (size_t)h[5] << 8 | (size_t)h[6] << 16 | (size_t)h[7] << 24);
	}
	return 0;
}

/*
 * A stack block whose zstd frame is garbage, its checksum right: a read
 * that skips stack blocks never decompresses it; one that checks them,
 * light or full, names the block.
 */
START_TEST(skipped_unread)
{
	struct out o;
	write_trace(&o, 1, 0, 2000);
	size_t at = first_stack_block(&o);
	ck_assert_uint_gt(at, 0);
	uint8_t *h = o.p + at;
	ck_assert_uint_eq(h[0], 'S');
	uint32_t plen = h[4] | (uint32_t)h[5] << 8 | (uint32_t)h[6] << 16 | (uint32_t)h[7] << 24;
	uint8_t *payload = h + CG_COMPACT_BLOCK_HEADER_LEN;
	memset(payload + 16, 0x5a, 8); /* the zstd frame's magic and header */
	uint32_t crc = cg_crc32(0, payload, plen);
	for (int i = 0; i < 4; i++)
		h[12 + i] = (uint8_t)(crc >> (8 * i));
	struct cgtrace_doc *doc =
	    read_ok(&o, CGTRACE_READ_STREAM_MEMORY | CGTRACE_READ_SKIP_STACKS);
	peak_is(doc, 2000 * 48, 4000);
	cgtrace_doc_free(doc);
	char err[512], want[128];
	snprintf(want, sizeof(want), "t.cgt: record 1: block at byte %zu: not a zstd frame", at);
	const unsigned checked[2] = {CGTRACE_READ_STREAM_MEMORY | CGTRACE_READ_NO_STACKS,
				     CGTRACE_READ_STREAM_MEMORY};
	for (int i = 0; i < 2; i++) {
		doc = NULL;
		ck_assert_int_eq(read_as(&o, checked[i], &doc, err, sizeof(err)), -EBADMSG);
		ck_assert_str_eq(err, want);
	}
	free(o.p);
}
END_TEST

TEST_SUITE(stack_blocks_suite, "stack_blocks")
{
	TCase *tc = tcase_create("blocks:many");
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, many_stacks_read_back, 0, 2);
	suite_add_tcase(s, tc);
	test_case(s, "blocks:skipped", 30, skipped_unread);
}

TEST_MAIN(stack_blocks_suite);
