/* SPDX-License-Identifier: MIT */
/* The probe's one-pass heap line is byte-equal to the general formatter's. */
#include "buf.h"
#include "jsonl_format.h"
#include "jsonl_heap.h"
#include "test-util.h"
#include "xorshift.h"
#include "test-main.h"

/* Its own seed, so the records it tries are the ones it always tried. */
static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint64_t next(void)
{
	return xorshift64(&rng);
}

/* Values with every digit count, including 0 and the extremes. */
static uint64_t any_u64(void)
{
	uint64_t r = next();
	switch (r % 4) {
	case 0:
		return 0;
	case 1:
		return UINT64_MAX - (r >> 60);
	default:
		return next() >> (next() % 64);
	}
}

static void expect_same(const struct cg_heap_rec *h, const char *op_name)
{
	struct cg_buf a = {0}, b = {0};
	cg_jsonl_format_heap(&a, h);
	char span[24];
	snprintf(span, sizeof(span), "s%llu", (unsigned long long)h->span);
	char id[24];
	snprintf(id, sizeof(id), "%p", (void *)(uintptr_t)h->addr);
	if (h->addr == 0)
		strcpy(id, "0x0");
	struct cg_rec r = {.kind = CGTRACE_KIND_MEMORY};
	r.u.memory = (struct cg_rec_memory){
		.timestamp_ns = h->timestamp_ns,
		.tensor_id = cg_sv_c(id),
		.span_id = cg_sv_c(span),
		.op_name = cg_sv_c(op_name),
		.device = CG_SV_LIT("cpu"),
		.bytes = h->bytes,
		.action = h->action,
		.category = h->category,
		.shape = &h->bytes,
		.ndim = 1,
		.dtype = CG_SV_LIT("u8"),
		.stack = h->stack,
		.stack_frames = h->frames,
		.n_stack_frames = h->n_frames,
		.cgprobe_stack_parent = h->stack_parent,
		.has_stack_parent = h->has_stack_parent,
		.modules = h->modules,
		.n_modules = h->n_modules,
	};
	cg_jsonl_format(&b, &r);
	ck_assert_uint_le(a.len, cg_heap_line_max(h));
	ck_assert_uint_eq(a.len, b.len);
	ck_assert_msg(memcmp(a.p, b.p, a.len) == 0, "heap line %.*s differs from %.*s", (int)a.len,
		      a.p, (int)b.len, b.p);
	cg_buf_fini(&a);
	cg_buf_fini(&b);
}

START_TEST(heap_line_equals_general_formatter)
{
	static const char *const names[] = {"malloc", "free", "posix_memalign", "cudaMallocAsync_ptsz",
					    "op_name_of_24_bytes_long"};
	struct cg_heap_op ops[5];
	for (int i = 0; i < 5; i++)
		ck_assert(cg_heap_op_init(&ops[i], names[i]));
	static const uint64_t frames[3] = {0x4011a6, 0x7f3e1c229d90, UINT64_MAX};
	static const struct cg_modv mods[2] = {
		{CG_SV_LIT("/usr/bin/prog"), 0x400000, 0x400000, 0x405000, CG_SV_LIT("4f1a")},
		{CG_SV_LIT("/lib/libc \"x\".so"), 0, 0x7f00, UINT64_MAX, CG_SV_NONE},
	};
	for (int i = 0; i < 200000; i++) {
		int k = (int)(next() % 5);
		/* Half with a stack id, now and then its frames or modules (the slow path). */
		uint64_t extras = next();
		struct cg_heap_rec h = {
			.stack = extras % 2 ? any_u64() : 0,
			.frames = extras % 16 == 3 ? frames : NULL,
			.n_frames = extras % 16 == 3 ? 1 + (uint32_t)(extras >> 8) % 3 : 0,
			/* Most definitions the probe writes are tree definitions. */
			.has_stack_parent = extras % 16 == 3 && extras % 64 != 3,
			.stack_parent = extras % 16 == 3 ? any_u64() : 0,
			.modules = extras % 32 == 5 ? mods : NULL,
			.n_modules = extras % 32 == 5 ? 1 + (uint32_t)(extras >> 8) % 2 : 0,
			.timestamp_ns = any_u64(),
			.addr = any_u64(),
			.span = any_u64() >> (next() % 64),
			.op = &ops[k],
			.bytes = any_u64(),
			.action = next() % 2 ? CGTRACE_ALLOC : CGTRACE_FREE,
			.category = (enum cgtrace_category)(next() % CGTRACE_CAT_COUNT),
		};
		expect_same(&h, names[k]);
	}
}
END_TEST

START_TEST(heap_line_known_text)
{
	struct cg_buf a = {0};
	struct cg_heap_op op;
	ck_assert(cg_heap_op_init(&op, "calloc"));
	ck_assert(!cg_heap_op_init(&op, "op_name_of_25_bytes_long_"));
	ck_assert(cg_heap_op_init(&op, "calloc"));
	struct cg_heap_rec h = {.timestamp_ns = 1200,
				.addr = 0x7f00deadbeef,
				.span = 3,
				.op = &op,
				.bytes = 64,
				.action = CGTRACE_ALLOC,
				.category = CGTRACE_CAT_ACTIVATION};
	cg_jsonl_format_heap(&a, &h);
	const char *want = "{\"kind\":\"memory\",\"timestamp_ns\":1200,\"tensor_id\":\"0x7f00deadbeef\","
			   "\"span_id\":\"s3\",\"op_name\":\"calloc\",\"device\":\"cpu\",\"bytes\":64,"
			   "\"action\":\"alloc\",\"shape\":[64],\"dtype\":\"u8\",\"category\":"
			   "\"activation\"}\n";
	ck_assert_uint_eq(a.len, strlen(want));
	ck_assert(memcmp(a.p, want, a.len) == 0);
	cg_buf_fini(&a);
}
END_TEST

/* A tree definition: its new frames, then the stack they hang from, 0 for none. */
START_TEST(heap_line_tree_definition)
{
	struct cg_buf a = {0};
	struct cg_heap_op op;
	ck_assert(cg_heap_op_init(&op, "malloc"));
	static const uint64_t frames[2] = {0x55d0c4a011f0, 0x7f3e1c229d90};
	struct cg_heap_rec h = {.timestamp_ns = 1700,
				.addr = 0x5581a340,
				.span = 1,
				.op = &op,
				.bytes = 16,
				.action = CGTRACE_ALLOC,
				.category = CGTRACE_CAT_OTHER,
				.stack = 4,
				.frames = frames,
				.n_frames = 2,
				.has_stack_parent = true,
				.stack_parent = 2};
	cg_jsonl_format_heap(&a, &h);
	const char *want = "{\"kind\":\"memory\",\"timestamp_ns\":1700,\"tensor_id\":\"0x5581a340\","
			   "\"span_id\":\"s1\",\"op_name\":\"malloc\",\"device\":\"cpu\",\"bytes\":16,"
			   "\"action\":\"alloc\",\"shape\":[16],\"dtype\":\"u8\",\"category\":"
			   "\"other\",\"cgprobe_stack\":4,\"cgprobe_stack_frames\":[\"0x55d0c4a011f0\","
			   "\"0x7f3e1c229d90\"],\"cgprobe_stack_parent\":2}\n";
	ck_assert_uint_eq(a.len, strlen(want));
	ck_assert_msg(memcmp(a.p, want, a.len) == 0, "%.*s", (int)a.len, a.p);
	expect_same(&h, "malloc");
	/* On none: the parent 0 is written. */
	a.len = 0;
	h.stack_parent = 0;
	cg_jsonl_format_heap(&a, &h);
	ck_assert_ptr_nonnull(memmem(a.p, a.len, "],\"cgprobe_stack_parent\":0}\n", 28));
	expect_same(&h, "malloc");
	cg_buf_fini(&a);
}
END_TEST

TEST_SUITE(suite, "jsonl-heap")
{
	test_case(s, "heap:line", 60, heap_line_known_text, heap_line_equals_general_formatter,
		  heap_line_tree_definition);
}

TEST_MAIN(suite);
