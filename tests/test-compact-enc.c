/* SPDX-License-Identifier: MIT */
/*
 * The compact encoder against encodings computed by hand from
 * docs/compact-format.md: the header, each item, the stored block and its
 * CRC; each reason a record rides as TEXT; blocks split at block_raw; and
 * the hot path calling no allocator once the encoder is made.
 */
#include <stdbool.h>
#include <stdint.h>
#include <zstd.h>

#include "buf.h"
#include "compact_enc.h"
#include "crc32.h"
#include "jsonl_format.h"
#include "test-util.h"
#include "test-main.h"

#if defined(__has_feature)
#define __has_feature_asan __has_feature(address_sanitizer)
#else
#define __has_feature_asan 0
#endif

/*
 * Allocations counted while `counting` (the hot path must make none): by
 * wrapping malloc, calloc and realloc; under AddressSanitizer, whose
 * allocator cannot be wrapped this way, by the allocation hook it calls
 * after each allocation instead.
 */
static bool counting;
static unsigned long allocs;

#if defined(__SANITIZE_ADDRESS__) || __has_feature_asan
int __sanitizer_install_malloc_and_free_hooks(void (*on_alloc)(const volatile void *, size_t),
					      void (*on_free)(const volatile void *));

static void count_alloc(const volatile void *p, size_t n)
{
	(void)p;
	(void)n;
	allocs += counting;
}

static void count_free(const volatile void *p)
{
	(void)p;
}

static void count_allocs(void)
{
	static bool installed;
	if (!installed)
		ck_assert_int_gt(__sanitizer_install_malloc_and_free_hooks(count_alloc, count_free), 0);
	installed = true;
}
#else
static void count_allocs(void)
{
}

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t m);
extern void *__libc_realloc(void *p, size_t n);
void *malloc(size_t n);
void *calloc(size_t n, size_t m);
void *realloc(void *p, size_t n);

void *malloc(size_t n)
{
	allocs += counting;
	return __libc_malloc(n);
}

void *calloc(size_t n, size_t m)
{
	allocs += counting;
	return __libc_calloc(n, m);
}

void *realloc(void *p, size_t n)
{
	allocs += counting;
	return __libc_realloc(p, n);
}
#endif

/* ---- the output, collected ---- */

struct out {
	struct cg_buf b;
	int writes;
};

static int collect(void *user, const void *p, size_t n)
{
	struct out *o = user;
	cg_buf_put(&o->b, p, n);
	o->writes++;
	return 0;
}

/* What the test's encoder wrote, freed after each test (a checked fixture). */
static struct out written;

static void out_free(void)
{
	cg_buf_fini(&written.b);
}

static struct cg_cenc *enc(struct out *o, int level, size_t block_raw, bool live)
{
	memset(o, 0, sizeof(*o));
	struct cg_cenc *e;
	struct cg_cenc_opts opts = {.zstd_level = level,
				    .block_raw = block_raw,
				    .write = collect,
				    .user = o,
				    .track_live = live};
	ck_assert_int_eq(cg_cenc_new(&e, &opts), 0);
	return e;
}

static uint32_t le32(const uint8_t *p)
{
	return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The raw bytes of the block being built, compared with want. */
#define EXPECT_PENDING(o, e, ...)                                                                  \
	do {                                                                                       \
		static const uint8_t want_[] = {__VA_ARGS__};                                      \
		expect_pending((o), (e), want_, sizeof(want_));                                    \
	} while (0)

/* Flushes a level-0 encoder and checks the last block holds exactly want. */
static void expect_pending(struct out *o, struct cg_cenc *e, const uint8_t *want, size_t n)
{
	size_t before = o->b.len;
	ck_assert_uint_eq(cg_cenc_pending(e), n);
	ck_assert_int_eq(cg_cenc_flush(e), 0);
	ck_assert_uint_eq(o->b.len - before, CG_COMPACT_BLOCK_HEADER_LEN + n);
	const uint8_t *h = (const uint8_t *)o->b.p + before;
	const uint8_t *p = h + CG_COMPACT_BLOCK_HEADER_LEN;
	ck_assert_uint_eq(h[0], 'R');
	ck_assert_uint_eq(h[1] | h[2] | h[3], 0);
	ck_assert_uint_eq(le32(h + 4), n);
	ck_assert_uint_eq(le32(h + 8), n);
	ck_assert_uint_eq(le32(h + 12), cg_crc32(0, p, n));
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(p[i] == want[i], "byte %zu: %02x, want %02x", i, p[i], want[i]);
}

/*
 * The stored stack block at h (docs/stacks.md): ids first to last, then
 * exactly the items want; returns the block after it.
 */
static const uint8_t *expect_stack_block(const uint8_t *h, uint64_t first, uint64_t last,
					 const uint8_t *want, size_t n)
{
	const uint8_t *p = h + CG_COMPACT_BLOCK_HEADER_LEN;
	ck_assert_uint_eq(h[0], 's');
	ck_assert_uint_eq(h[1] | h[2] | h[3], 0);
	ck_assert_uint_eq(le32(h + 4), 16 + n);
	ck_assert_uint_eq(le32(h + 8), n);
	ck_assert_uint_eq(le32(h + 12), cg_crc32(0, p, 16 + n));
	ck_assert_uint_eq(le32(p) | (uint64_t)le32(p + 4) << 32, first);
	ck_assert_uint_eq(le32(p + 8) | (uint64_t)le32(p + 12) << 32, last);
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(p[16 + i] == want[i], "byte %zu: %02x, want %02x", i, p[16 + i], want[i]);
	return p + 16 + n;
}

START_TEST(enc_header_and_stored_block)
{
	struct cg_cenc *e = enc(&written, 0, 0, false);
	static const uint8_t header[16] = {0x89, 0x43, 0x47, 0x54, 0x52, 0x41, 0x43, 0x45,
					   1,    0,    0,    0,    0,    0,    0,    0};
	ck_assert_uint_eq(written.b.len, 16);
	ck_assert(memcmp(written.b.p, header, 16) == 0);
	/* Nothing pending: a flush writes no empty block. */
	ck_assert_int_eq(cg_cenc_flush(e), 0);
	ck_assert_uint_eq(written.b.len, 16);
	ck_assert_uint_eq(cg_cenc_string(e, "cpu", 3), 0);
	ck_assert_uint_eq(cg_cenc_string(e, "cpu", 3), 0); /* defined once */
	ck_assert_int_eq(cg_cenc_flush(e), 0);
	/* The CRC Python's zlib.crc32(b"\x01\x03cpu") gives. */
	static const uint8_t block[] = {'R', 0,    0,    0,    5,    0, 0, 0,   5,   0,  0,
					0,   0x7f, 0xf8, 0x36, 0xac, 1, 3, 'c', 'p', 'u'};
	ck_assert_uint_eq(written.b.len, 16 + sizeof(block));
	ck_assert(memcmp(written.b.p + 16, block, sizeof(block)) == 0);
	ck_assert_int_eq(cg_cenc_close(e), 0);
}
END_TEST

START_TEST(enc_items)
{
	struct cg_cenc *e = enc(&written, 0, 0, false);
	ck_assert_uint_eq(cg_cenc_string(e, "s1", 2), 0);
	ck_assert_uint_eq(cg_cenc_string(e, "malloc", 6), 1);
	ck_assert_uint_eq(cg_cenc_string(e, "cpu", 3), 2);
	ck_assert_uint_eq(cg_cenc_string(e, "step", 4), 3);
	ck_assert_uint_eq(cg_cenc_class(e, 0, 1, 2, CGTRACE_CAT_OTHER, 0), 0);
	ck_assert_uint_eq(cg_cenc_class(e, 0, UINT32_MAX, 2, CGTRACE_CAT_ACTIVATION,
					CG_CLASS_MANAGED | CG_CLASS_VMM),
			  1);
	ck_assert_uint_eq(cg_cenc_class(e, 0, 1, 2, CGTRACE_CAT_OTHER, 0), 0);
	EXPECT_PENDING(&written, e, 1, 2, 's', '1', 1, 6, 'm', 'a', 'l', 'l', 'o', 'c', 1, 3, 'c', 'p',
		       'u', 1, 4, 's', 't', 'e', 'p', 5, 0, 2, 2, 4, 0, 5, 0, 0, 2, 1, 3);

	/*
	 * Addresses, by history ref or by delta (odd ref), of allocs and frees
	 * alike; the history holds both. First an alloc: ts 1000, history
	 * empty, so delta +0x1000 (zigzag 0x2000, ref 0x4001), 64 bytes.
	 */
	ck_assert_uint_eq(cg_cenc_alloc(e, 0, 1000, 0x1000, 64), 0);
	ck_assert_uint_eq(cg_cenc_alloc(e, 0, 1010, 0x2000, 32), 1);
	/* A free by its alloc's ordinal: one back (ref 2) beats the delta -0x1000. */
	cg_cenc_free(e, 0, 1020, 0x1000, 0);
	/* No ordinal: the address table finds its alloc, one back again. */
	cg_cenc_free(e, 0, 1030, 0x2000, UINT64_MAX);
	/* malloc's reuse: the free of 0x1000 is one back. */
	ck_assert_uint_eq(cg_cenc_alloc(e, 0, 1040, 0x1000, 64), 4);
	/* New addresses by delta: +3 (ref 0x0d), -2 (ref 7), +3. */
	ck_assert_uint_eq(cg_cenc_alloc(e, 0, 1050, 0x1003, 16), 5);
	ck_assert_uint_eq(cg_cenc_alloc(e, 0, 1060, 0x1001, 16), 6);
	ck_assert_uint_eq(cg_cenc_alloc(e, 0, 1070, 0x1004, 16), 7);
	/* The delta -1 (ref 3) beats the history's ref 4 (two back). */
	cg_cenc_free(e, 0, 1080, 0x1003, 5);
	EXPECT_PENDING(&written, e, 0x80, 0xe8, 0x07, 0x81, 0x80, 0x01, 0x40, /* alloc, delta */
		       0x80, 0x0a, 0x81, 0x80, 0x01, 0x20,              /* alloc, delta */
		       0xc0, 0x0a, 0x02,                                /* free, ordinal */
		       0xc0, 0x0a, 0x02,                                /* free, table */
		       0x80, 0x0a, 0x02, 0x40,                          /* alloc, table */
		       0x80, 0x0a, 0x0d, 0x10,                          /* alloc, delta */
		       0x80, 0x0a, 0x07, 0x10,                          /* alloc, delta */
		       0x80, 0x0a, 0x0d, 0x10,                          /* alloc, delta */
		       0xc0, 0x0a, 0x03);                               /* free, delta */

	/* A new block: its state starts over (ts and address from 0, empty history). */
	ck_assert_uint_eq(cg_cenc_alloc(e, 1, 5, 0x10, 7), 9);
	/* Ordinal 0 is an earlier block's: the table finds the alloc, 0 back. */
	cg_cenc_free(e, 1, 6, 0x10, 0);
	cg_cenc_span_start(e, 16, 2, 1, 3, CGTRACE_SPAN_MODULE, CGTRACE_STEP_FORWARD, true);
	cg_cenc_span_end(e, 2, 500);
	uint64_t reserved = 300, oom = 5;
	cg_cenc_device_memory(e, 26, 2, 100, 200, &reserved, NULL);
	cg_cenc_device_memory(e, 26, 2, 100, 200, NULL, &oom);
	EXPECT_PENDING(&written, e, 0x81, 0x05, 0x41, 0x07,                        /* alloc, class 1 */
		       0xc1, 0x01, 0x00,                                     /* free, 0 back */
		       0x10, 0x0a, 0x02, 0x02, 0x03, 0x02, 0x01, 0x01,       /* span_start */
		       0x11, 0x02, 0xf4, 0x03,                               /* span_end */
		       0x12, 0x0a, 0x02, 0x64, 0xc8, 0x01, 0x01, 0xac, 0x02, /* reserved */
		       0x12, 0x00, 0x02, 0x64, 0xc8, 0x01, 0x02, 0x05);      /* oom */

	/* A class id past 30 follows the opcode; a thread is named once per block. */
	uint32_t big = 0;
	for (uint32_t i = 0; i < 30; i++) {
		char name[8];
		snprintf(name, sizeof(name), "x%u", i);
		uint32_t id = cg_cenc_string(e, name, strlen(name));
		big = cg_cenc_class(e, id, 1, 2, CGTRACE_CAT_OTHER, 0);
	}
	ck_assert_uint_eq(big, 31);
	ck_assert_int_eq(cg_cenc_flush(e), 0);
	cg_cenc_thread(e, 4242);
	ck_assert_uint_eq(cg_cenc_alloc(e, big, 1, 0, 1), 11);
	ck_assert_uint_eq(cg_cenc_alloc(e, big, 1, 0, 1), 12);
	EXPECT_PENDING(&written, e, 0x02, 0x92, 0x21,     /* THREAD 4242 */
		       0x9f, 31, 0x01, 0x01, 0x01,  /* alloc, class 31, delta 0 */
		       0x9f, 31, 0x00, 0x00, 0x01); /* the same thread: no THREAD; 0 back */

	/* A new block names its threads anew; one it named before is a byte, its number. */
	cg_cenc_thread(e, 7);
	ck_assert_uint_eq(cg_cenc_alloc(e, big, 1, 0, 1), 13);
	cg_cenc_thread(e, 4242);
	ck_assert_uint_eq(cg_cenc_alloc(e, big, 1, 0, 1), 14);
	cg_cenc_thread(e, 7);
	ck_assert_uint_eq(cg_cenc_alloc(e, big, 1, 0, 1), 15);
	cg_cenc_thread(e, 4242);
	ck_assert_uint_eq(cg_cenc_alloc(e, big, 1, 0, 1), 16);
	EXPECT_PENDING(&written, e, 0x02, 0x07,       /* THREAD 7: number 0 */
		       0x9f, 31, 0x01, 0x01, 0x01,  /* the block's first: deltas */
		       0x02, 0x92, 0x21,            /* THREAD 4242: number 1 */
		       0x9f, 31, 0x00, 0x00, 0x01,
		       0x20,                        /* THREAD_AGAIN 0: 7 */
		       0x9f, 31, 0x00, 0x00, 0x01,
		       0x21,                        /* THREAD_AGAIN 1: 4242 */
		       0x9f, 31, 0x00, 0x00, 0x01);
	ck_assert_int_eq(cg_cenc_close(e), 0);
}
END_TEST

/* ---- cg_cenc_rec: what is packed, what rides as TEXT ---- */

static uint64_t shape1[1];

static struct cg_rec mem(uint64_t ts, const char *id, const char *action, uint64_t bytes)
{
	struct cg_rec r = {.kind = CGTRACE_KIND_MEMORY};
	shape1[0] = bytes;
	r.u.memory = (struct cg_rec_memory){
	    .timestamp_ns = ts,
	    .tensor_id = cg_sv_c(id),
	    .span_id = CG_SV_LIT("s1"),
	    .op_name = CG_SV_LIT("malloc"),
	    .device = CG_SV_LIT("cpu"),
	    .bytes = bytes,
	    .action = strcmp(action, "free") == 0 ? CGTRACE_FREE : CGTRACE_ALLOC,
	    .shape = shape1,
	    .ndim = 1,
	    .dtype = CG_SV_LIT("u8"),
	    .category = CGTRACE_CAT_OTHER,
	};
	return r;
}

/* True when the output's last bytes are the record's TEXT item. */
static bool ends_in_text(struct out *o, struct cg_cenc *e, const struct cg_rec *r)
{
	ck_assert_int_eq(cg_cenc_flush(e), 0);
	struct cg_buf line = {0};
	cg_jsonl_format(&line, r);
	size_t n = line.len - 1;
	ck_assert(n < 0x4000);
	uint8_t head[3] = {0x03, (uint8_t)(n | 0x80), (uint8_t)(n >> 7)};
	size_t hn = n < 0x80 ? 2 : 3;
	if (n < 0x80)
		head[1] = (uint8_t)n;
	bool yes = o->b.len >= hn + n && memcmp(o->b.p + o->b.len - n, line.p, n) == 0 &&
		   memcmp(o->b.p + o->b.len - n - hn, head, hn) == 0;
	cg_buf_fini(&line);
	return yes;
}

/* cg_cenc_rec takes r (0); true when r went in as TEXT, false when it was packed. */
static bool rec_is_text(struct cg_cenc *e, const struct cg_rec *r)
{
	ck_assert_int_eq(cg_cenc_rec(e, r), 0);
	return ends_in_text(&written, e, r);
}

START_TEST(enc_rec_packs_and_falls_back)
{
	struct cg_cenc *e = enc(&written, 0, 0, true);
	struct cg_rec r = mem(100, "0x1000", "alloc", 64);
	ck_assert(!rec_is_text(e, &r));
	/* A free of the live entry, its bytes the alloc's: packed. */
	r = mem(110, "0x1000", "free", 64);
	ck_assert(!rec_is_text(e, &r));
	/* c0 6e 81 80 01: ts 110, delta +0x1000 (the alloc's block is over) */
	ck_assert(memcmp(written.b.p + written.b.len - 5, "\xc0\x6e\x81\x80\x01", 5) == 0);

	struct {
		const char *why;
		struct cg_rec r;
	} text[40];
	size_t n = 0;
#define TEXT_CASE(why_, ...)                                                                       \
	do {                                                                                       \
		text[n].why = why_;                                                                \
		text[n].r = mem(1000, "0x2000", "free", 8);                                        \
		struct cg_rec_memory *m = &text[n].r.u.memory;                                     \
		(void)m;                                                                           \
		__VA_ARGS__;                                                                       \
		n++;                                                                               \
	} while (0)
	static const uint64_t shape2[2] = {2, 4};
	static const uint64_t shape_other[1] = {9};
	TEXT_CASE("tensor_id not 0x", m->tensor_id = CG_SV_LIT("t2000"));
	TEXT_CASE("tensor_id leading zero", m->tensor_id = CG_SV_LIT("0x02000"));
	TEXT_CASE("tensor_id uppercase", m->tensor_id = CG_SV_LIT("0xAB"));
	TEXT_CASE("tensor_id too long", m->tensor_id = CG_SV_LIT("0x10000000000000000"));
	TEXT_CASE("tensor_id empty hex", m->tensor_id = CG_SV_LIT("0x"));
	TEXT_CASE("shape of 2 dims", m->shape = shape2; m->ndim = 2);
	TEXT_CASE("shape not bytes", m->shape = shape_other);
	TEXT_CASE("no shape", m->ndim = 0);
	TEXT_CASE("dtype f32", m->dtype = CG_SV_LIT("f32"));
	TEXT_CASE("managed free", m->managed = true);
	TEXT_CASE("device uuid", m->cgprobe_device_uuid = CG_SV_LIT("GPU-1"));
	TEXT_CASE("device name", m->cgprobe_device_name = CG_SV_LIT("H200"));
	TEXT_CASE("device total", m->has_device_total = true; m->cgprobe_device_total_bytes = 1);
	TEXT_CASE("out of order", m->action = CGTRACE_ALLOC; m->timestamp_ns = 10);
	/* (The hot call ends the block for a late free instead: enc_hot_text.) */
	TEXT_CASE("out of order free", m->timestamp_ns = 10);
	TEXT_CASE("free of nothing live", m->tensor_id = CG_SV_LIT("0x9999"));
	for (size_t i = 0; i < n; i++) {
		/*
		 * Each case a free after its alloc at ts 500 (packed were it not
		 * for the case), so "out of order" is behind it.
		 */
		struct cg_rec a = mem(500, "0x2000", "alloc", 8);
		ck_assert_int_eq(cg_cenc_rec(e, &a), 0);
		ck_assert_int_eq(cg_cenc_rec(e, &text[i].r), 0);
		ck_assert_msg(ends_in_text(&written, e, &text[i].r), "%s: not TEXT", text[i].why);
	}

	/* A free whose bytes are not the live entry's. */
	r = mem(2000, "0x5000", "alloc", 16);
	ck_assert_int_eq(cg_cenc_rec(e, &r), 0);
	r = mem(2001, "0x5000", "free", 17);
	ck_assert(rec_is_text(e, &r));
	/* A TEXT alloc sets the live entry: its free is packed. */
	r = mem(3000, "0x6000", "alloc", 16);
	r.u.memory.dtype = CG_SV_LIT("f32");
	ck_assert(rec_is_text(e, &r));
	r = mem(3001, "0x6000", "free", 16);
	ck_assert(!rec_is_text(e, &r));
	/* A TEXT free removes it: a second free is TEXT. */
	r = mem(3002, "0x7000", "alloc", 16);
	ck_assert_int_eq(cg_cenc_rec(e, &r), 0);
	r = mem(3003, "0x7000", "free", 16);
	r.u.memory.dtype = CG_SV_LIT("f32");
	ck_assert(rec_is_text(e, &r));
	r = mem(3004, "0x7000", "free", 16);
	ck_assert(rec_is_text(e, &r));

	/* Other kinds, and span ids the packed form cannot spell. */
	struct cg_rec s = {.kind = CGTRACE_KIND_SPAN_START};
	s.u.span_start = (struct cg_rec_span_start){.id = CG_SV_LIT("s7"),
						    .parent_id = CG_SV_LIT("s0"),
						    .name = CG_SV_LIT("fwd"),
						    .start_ns = 4000,
						    .span_kind = CGTRACE_SPAN_OP,
						    .step = CGTRACE_STEP_BACKWARD};
	ck_assert(!rec_is_text(e, &s));
	s.u.span_start.id = CG_SV_LIT("s07");
	ck_assert(rec_is_text(e, &s));
	s.u.span_start.id = CG_SV_LIT("x7");
	ck_assert(rec_is_text(e, &s));
	s.u.span_start.id = CG_SV_LIT("s7");
	s.u.span_start.parent_id = CG_SV_LIT("s");
	ck_assert(rec_is_text(e, &s));
	s.u.span_start.parent_id = CG_SV_NONE;
	s.u.span_start.start_ns = 1;
	cg_cenc_alloc(e, 0, 4000, 0, 1);
	ck_assert(rec_is_text(e, &s));
	struct cg_rec end = {.kind = CGTRACE_KIND_SPAN_END};
	end.u.span_end = (struct cg_rec_span_end){.id = CG_SV_LIT("s18446744073709551616")};
	ck_assert(rec_is_text(e, &end));
	end.u.span_end.id = CG_SV_LIT("s18446744073709551615");
	ck_assert(!rec_is_text(e, &end));
	struct cg_rec dm = {.kind = CGTRACE_KIND_DEVICE_MEMORY};
	dm.u.device_memory = (struct cg_rec_device_memory){
	    .timestamp_ns = 9000, .device = CG_SV_LIT("cuda:0"), .used_bytes = 1, .free_bytes = 2};
	ck_assert(!rec_is_text(e, &dm));
	dm.u.device_memory.cgprobe_device_uuid = CG_SV_LIT("GPU-1");
	ck_assert(rec_is_text(e, &dm));
	struct cg_rec edge = {.kind = CGTRACE_KIND_EDGE};
	edge.u.edge = (struct cg_rec_edge){CG_SV_LIT("s1"), CG_SV_LIT("s2"), 5};
	ck_assert(rec_is_text(e, &edge));
	ck_assert_int_eq(cg_cenc_close(e), 0);
}
END_TEST

/*
 * TREE items (docs/stacks.md): id, parent, n, then the frames innermost
 * first as zigzag deltas, the first from 0, right before the packed alloc
 * that names id; and what no TREE item can say.
 */
START_TEST(enc_tree_items)
{
	struct cg_cenc *e = enc(&written, 0, 0, false);
	ck_assert_uint_eq(cg_cenc_string(e, "s1", 2), 0);
	ck_assert_uint_eq(cg_cenc_string(e, "malloc", 6), 1);
	ck_assert_uint_eq(cg_cenc_string(e, "cpu", 3), 2);
	ck_assert_uint_eq(cg_cenc_class(e, 0, 1, 2, CGTRACE_CAT_OTHER, 0), 0);
	ck_assert_int_eq(cg_cenc_flush(e), 0);
	/* Stacks 1 to 3 on none: 0x4011a6 (zigzag 0x80234c), -0x10 (0x1f), +0x200 (0x400). */
	static const uint64_t f3[3] = {0x4011a6, 0x401196, 0x401396};
	ck_assert(cg_cenc_tree(e, 3, 0, f3, 3));
	ck_assert_uint_eq(cg_cenc_alloc_stack(e, 0, 10, 0x10, 8, 3), 0);
	/* Stack 4, one frame on stack 2; then an alloc naming stack 3 again, no item. */
	static const uint64_t f1[1] = {0x4011f0};
	ck_assert(cg_cenc_tree(e, 4, 2, f1, 1));
	ck_assert_uint_eq(cg_cenc_alloc_stack(e, 0, 11, 0x20, 8, 4), 1);
	ck_assert_uint_eq(cg_cenc_alloc_stack(e, 0, 12, 0x30, 8, 3), 2);
	/* A parent above the new ids (another writer's numbering) is a parent all the same. */
	ck_assert(cg_cenc_tree(e, 300, 1000, f1, 1));
	/* The TREE items go out in a stack block of their own, before the records that take them. */
	size_t before = written.b.len;
	static const uint8_t items[] = {
	    0x08, 0x03, 0x00, 0x03, 0xcc, 0xc6, 0x80, 0x04, 0x1f, 0x80, 0x08, /* TREE 3 on 0 */
	    0x08, 0x04, 0x02, 0x01, 0xe0, 0xc7, 0x80, 0x04,                   /* TREE 4 on 2 */
	    0x08, 0xac, 0x02, 0xe8, 0x07, 0x01, 0xe0, 0xc7, 0x80, 0x04};      /* TREE 300 */
	ck_assert_uint_eq(cg_cenc_pending(e), 21);
	ck_assert_int_eq(cg_cenc_flush(e), 0);
	const uint8_t *next = expect_stack_block((const uint8_t *)written.b.p + before, 1, 300,
						 items, sizeof(items));
	static const uint8_t recs[] = {0xa0, 0x0a, 0x41, 0x08, 0x02, 0x01, 0x03,  /* stack 3 */
				       0xa0, 0x01, 0x41, 0x08, 0x02, 0x01, 0x04,  /* stack 4 */
				       0xa0, 0x01, 0x41, 0x08, 0x02, 0x01, 0x03}; /* stack 3 */
	ck_assert_uint_eq(next[0], 'R');
	ck_assert_uint_eq(le32(next + 4), sizeof(recs));
	ck_assert(memcmp(next + CG_COMPACT_BLOCK_HEADER_LEN, recs, sizeof(recs)) == 0);
	ck_assert_uint_eq((size_t)(next + CG_COMPACT_BLOCK_HEADER_LEN + sizeof(recs) -
				   (const uint8_t *)written.b.p),
			  written.b.len);

	/* Nothing written for what no TREE item can define. */
	ck_assert(!cg_cenc_tree(e, 0, 0, f1, 1));
	ck_assert(!cg_cenc_tree(e, 5, 0, f1, 0));
	ck_assert(!cg_cenc_tree(e, 2, 0, f3, 3));  /* its stacks would start at 0 */
	ck_assert(!cg_cenc_tree(e, 7, 5, f3, 3));  /* a parent among its own stacks */
	ck_assert(!cg_cenc_tree(e, 7, 7, f3, 3));
	ck_assert(cg_cenc_tree(e, 7, 4, f3, 3));   /* just below them */
	static uint64_t many[CG_STACK_FRAMES_MAX + 1];
	ck_assert(!cg_cenc_tree(e, 2000, 0, many, CG_STACK_FRAMES_MAX + 1));
	ck_assert(cg_cenc_tree(e, 2000, 0, many, CG_STACK_FRAMES_MAX));
	ck_assert_int_eq(cg_cenc_close(e), 0);
}
END_TEST

/* An export's tree definition is a TREE item again; one it cannot hold rides as TEXT. */
START_TEST(enc_rec_tree_definitions)
{
	static const uint64_t frames[2] = {0x4011a6, 0x7f0000001000};
	struct cg_cenc *e = enc(&written, 0, 0, true);
	struct cg_rec r = mem(100, "0x1000", "alloc", 64);
	struct cg_rec_memory *m = &r.u.memory;
	m->stack = 5;
	m->stack_frames = frames;
	m->n_stack_frames = 2;
	m->has_stack_parent = true;
	m->cgprobe_stack_parent = 3;
	size_t before = written.b.len;
	ck_assert(!rec_is_text(e, &r));
	/* The stack block, ids 4 and 5: TREE 5 on 3; then STRING s1, malloc, cpu, the CLASS, the alloc. */
	static const uint8_t tree[] = {0x08, 0x05, 0x03, 0x02, 0xcc, 0xc6, 0x80, 0x04,
				       0xb4, 0xf9, 0xff, 0xfb, 0xff, 0xbf, 0x3f};
	expect_stack_block((const uint8_t *)written.b.p + before, 4, 5, tree, sizeof(tree));
	const uint8_t *p = (const uint8_t *)written.b.p + written.b.len;
	static const uint8_t tail[] = {0xa0, 0x64, 0x81, 0x80, 0x01, 0x40, 0x02, 0x01, 0x05};
	ck_assert(memcmp(p - sizeof(tail), tail, sizeof(tail)) == 0);
	/* Its own stacks 4 and 5 cannot be its parent; nor can the stacks start below 1. */
	r = mem(200, "0x2000", "alloc", 64);
	m->stack = 5;
	m->stack_frames = frames;
	m->n_stack_frames = 2;
	m->has_stack_parent = true;
	m->cgprobe_stack_parent = 4;
	ck_assert(rec_is_text(e, &r));
	m->stack = 1;
	m->cgprobe_stack_parent = 0;
	ck_assert(rec_is_text(e, &r));
	/* A parent without frames is no definition the packed form can carry. */
	m->stack = 9;
	m->stack_frames = NULL;
	m->n_stack_frames = 0;
	ck_assert(rec_is_text(e, &r));
	ck_assert_int_eq(cg_cenc_close(e), 0);
}
END_TEST

/* Without a live table of its own, cg_cenc_rec packs no free. */
START_TEST(enc_rec_free_needs_live)
{
	struct cg_cenc *e = enc(&written, 0, 0, false);
	struct cg_rec r = mem(100, "0x1000", "alloc", 64);
	ck_assert_int_eq(cg_cenc_rec(e, &r), 0);
	r = mem(110, "0x1000", "free", 64);
	ck_assert(rec_is_text(e, &r));
	ck_assert_int_eq(cg_cenc_close(e), 0);
}
END_TEST

/* The hot calls' own TEXT: an alloc behind the block's last timestamp. */
START_TEST(enc_hot_text)
{
	struct cg_cenc *e = enc(&written, 0, 0, false);
	uint32_t s = cg_cenc_string(e, "s1", 2), op = cg_cenc_string(e, "malloc", 6);
	uint32_t dev = cg_cenc_string(e, "cpu", 3);
	uint32_t c = cg_cenc_class(e, s, op, dev, CGTRACE_CAT_OTHER, 0);
	cg_cenc_alloc(e, c, 100, 0x10, 1);
	ck_assert_uint_eq(cg_cenc_alloc(e, c, 99, 0x2000, 8), UINT64_MAX);
	struct cg_rec r = mem(99, "0x2000", "alloc", 8);
	ck_assert(ends_in_text(&written, e, &r));
	/* A late free ends the block instead: in the next one it packs. */
	cg_cenc_alloc(e, c, 100, 0x10, 1);
	size_t blocks = written.writes;
	cg_cenc_free(e, c, 50, 0x10, UINT64_MAX);
	ck_assert_int_eq(written.writes, blocks + 1);
	ck_assert_uint_eq(cg_cenc_pending(e), 3); /* c0 32 41: ts 50, delta +0x10 */
	ck_assert_int_eq(cg_cenc_close(e), 0);
}
END_TEST

/* ---- blocks ---- */

struct blk {
	uint8_t type;
	uint32_t payload, raw;
	const uint8_t *p;
};

/* The blocks after the header; returns their count. */
static size_t blocks_of(const struct out *o, struct blk *b, size_t max)
{
	size_t n = 0, at = CG_COMPACT_HEADER_LEN;
	while (at < o->b.len) {
		const uint8_t *h = (const uint8_t *)o->b.p + at;
		ck_assert(n < max);
		b[n] = (struct blk){h[0], le32(h + 4), le32(h + 8), h + 16};
		ck_assert_uint_eq(le32(h + 12), cg_crc32(0, b[n].p, b[n].payload));
		at += CG_COMPACT_BLOCK_HEADER_LEN + b[n].payload;
		n++;
	}
	ck_assert_uint_eq(at, o->b.len);
	return n;
}

static void feed(struct cg_cenc *e, int n)
{
	uint32_t s = cg_cenc_string(e, "s1", 2), op = cg_cenc_string(e, "malloc", 6);
	uint32_t dev = cg_cenc_string(e, "cpu", 3);
	uint32_t c = cg_cenc_class(e, s, op, dev, CGTRACE_CAT_OTHER, 0);
	for (int i = 0; i < n; i++) {
		uint64_t ord =
		    cg_cenc_alloc(e, c, 1000 + 10 * (uint64_t)i, 0x10000 + 64 * (i % 50), 64);
		if (i % 3 == 0)
			cg_cenc_free(e, c, 1005 + 10 * (uint64_t)i, 0x10000 + 64 * (i % 50), ord);
	}
}

START_TEST(enc_blocks_split)
{
	struct cg_cenc *e = enc(&written, 0, 256, false);
	feed(e, 200);
	ck_assert_int_eq(cg_cenc_close(e), 0);
	struct blk b[512];
	size_t n = blocks_of(&written, b, 512);
	ck_assert_uint_ge(n, 5);
	for (size_t i = 0; i < n; i++) {
		ck_assert_uint_eq(b[i].type, 'R');
		ck_assert_uint_le(b[i].raw, 256);
		/* Each block after the first starts with a record at its full timestamp. */
		if (i > 0) {
			ck_assert_uint_eq(b[i].p[0] & 0x80, 0x80);
			ck_assert_uint_gt((b[i].p[1] & 0x7f) | (b[i].p[2] << 7), 1000);
		}
		if (i + 1 < n)
			ck_assert_uint_gt(b[i].raw, 256 - 96);
	}
}
END_TEST

/* zstd blocks decompress to the stored encoding of the same calls. */
START_TEST(enc_zstd_blocks)
{
	struct out plain, z;
	struct cg_cenc *e = enc(&plain, 0, 4096, false);
	feed(e, 3000);
	ck_assert_int_eq(cg_cenc_close(e), 0);
	e = enc(&z, 3, 4096, false);
	feed(e, 3000);
	struct cg_cenc_stats st;
	cg_cenc_stats(e, &st);
	ck_assert_int_eq(cg_cenc_close(e), 0);
	static struct blk a[4096], b[4096];
	size_t na = blocks_of(&plain, a, 4096), nb = blocks_of(&z, b, 4096);
	ck_assert_uint_eq(na, nb);
	ck_assert_uint_lt(z.b.len, plain.b.len / 3);
	static uint8_t raw[8192];
	for (size_t i = 0; i < na; i++) {
		ck_assert_uint_eq(b[i].type, 'Z');
		ck_assert_uint_eq(b[i].raw, a[i].raw);
		size_t r = ZSTD_decompress(raw, sizeof(raw), b[i].p, b[i].payload);
		ck_assert_uint_eq(r, a[i].raw);
		ck_assert(memcmp(raw, a[i].p, r) == 0);
	}
	/* The stats' fields add up to the raw bytes. */
	uint64_t sum = 0;
#define ADD(f) sum += st.f;
	CG_CENC_FIELDS(ADD)
	ck_assert_uint_eq(sum, st.raw_bytes);
	ck_assert_uint_eq(st.records, 4000);
	cg_buf_fini(&plain.b);
	cg_buf_fini(&z.b);
}
END_TEST

static int discard(void *user, const void *p, size_t n)
{
	return 0;
}

/* Once made, the encoder calls no allocator: blocks, zstd and the hot TEXT included. */
START_TEST(enc_no_alloc)
{
	struct cg_cenc *e;
	struct cg_cenc_opts opts = {.zstd_level = 1, .block_raw = 1024, .write = discard};
	ck_assert_int_eq(cg_cenc_new(&e, &opts), 0);
	count_allocs();
	allocs = 0;
	counting = true;
	uint32_t dev = cg_cenc_string(e, "cpu", 3), op = cg_cenc_string(e, "malloc", 6);
	struct cg_cenc_stats half;
	for (int i = 0; i < 3000; i++) {
		if (i == 1500)
			cg_cenc_stats(e, &half);
		char span[16];
		snprintf(span, sizeof(span), "s%d", i % 1500);
		uint32_t s = cg_cenc_string(e, span, strlen(span));
		uint32_t c = cg_cenc_class(e, s, op, dev, (uint8_t)(i % 5), 0);
		cg_cenc_thread(e, (uint64_t)(i % 7));
		uint64_t ord = cg_cenc_alloc(e, c, 100 + (uint64_t)i, 0x1000 * (uint64_t)i, 64);
		cg_cenc_alloc(e, c, 50, 0x99, 8); /* late: TEXT */
		cg_cenc_free(e, c, 101 + (uint64_t)i, 0x1000 * (uint64_t)i, ord);
		cg_cenc_span_start(e, 102 + (uint64_t)i, (uint64_t)i, 1, s, 0, 0, true);
		cg_cenc_span_end(e, (uint64_t)i, 3);
		cg_cenc_device_memory(e, 103 + (uint64_t)i, dev, 1, 2, NULL, NULL);
		cg_cenc_text(e, "{\"kind\":\"edge\"}", 15);
	}
	cg_cenc_flush(e);
	counting = false;
	ck_assert_uint_eq(allocs, 0);
	/* The count does see an allocation. */
	struct cg_buf b = {0};
	counting = true;
	cg_buf_reserve(&b, 10);
	counting = false;
	ck_assert_uint_eq(allocs, 1);
	cg_buf_fini(&b);
	struct cg_cenc_stats st;
	cg_cenc_stats(e, &st);
	ck_assert_uint_gt(st.blocks, 100);
	/* The second half names the first half's strings and classes: found, not defined again. */
	ck_assert_uint_eq(st.tables, half.tables);
	ck_assert_uint_eq(cg_cenc_string(e, "s1234", 5), 1236);
	ck_assert_int_eq(cg_cenc_close(e), 0);
}
END_TEST

TEST_SUITE(suite, "compact-enc")
{
	TCase *cases[] = {
		test_case(s, "enc:items", 60, enc_header_and_stored_block, enc_items, enc_hot_text),
		test_case(s, "enc:rec", 60, enc_rec_packs_and_falls_back, enc_rec_free_needs_live),
		test_case(s, "enc:tree", 60, enc_tree_items, enc_rec_tree_definitions),
		test_case(s, "enc:blocks", 60, enc_blocks_split, enc_zstd_blocks, enc_no_alloc),
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		tcase_add_checked_fixture(cases[i], NULL, out_free);
}

TEST_MAIN(suite);
