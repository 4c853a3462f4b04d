/* SPDX-License-Identifier: MIT */
/*
 * The writer's stack table (preload/stack_intern.c), on its own: the
 * stacks the hooks send into their slots become a tree, whose node ids
 * are the trace's stack ids, and each stack's first record carries the
 * definition docs/stacks.md gives (its new frames, innermost first, and
 * the stack they hang from); stacks sharing outer frames, the outer part
 * of a stack, recursion, the depth limit, stacks waiting for their first
 * record, a dlclose, a definition that could not be written, and the cap.
 */
#include <check.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "event.h"
#include "options.h"
#include "stack_intern.h"
#include "test-main.h"

/* A ring's words (ring.h: stack_names). */
struct ring_names {
	uint32_t w[CG_STACK_SLOTS + 1];
};

/* Slot of r now names the n frames given, innermost first. */
static void define(struct ring_names *r, uint32_t slot, uint32_t n, ...)
{
	uint64_t f[CG_STACK_DEPTH_MAX];
	va_list ap;
	va_start(ap, n);
	for (uint32_t i = 0; i < n; i++)
		f[i] = va_arg(ap, uint64_t);
	va_end(ap);
	cg_intern_define(r->w, slot, f, n);
}

/* A record through slot of r: its stack id, and no definition. */
static void expect_known(struct ring_names *r, uint32_t slot, uint64_t id)
{
	struct cg_stack_use u = cg_intern_use(r->w, slot);
	ck_assert_uint_eq(u.id, id);
	ck_assert_ptr_null(u.frames);
	ck_assert_uint_eq(u.n_frames, 0);
}

/* A record through slot of r that defines stack id: n new frames (innermost first) on parent. */
static void expect_defined(struct ring_names *r, uint32_t slot, uint64_t id, uint64_t parent,
                           uint32_t n, ...)
{
	struct cg_stack_use u = cg_intern_use(r->w, slot);
	ck_assert_uint_eq(u.id, id);
	ck_assert_uint_eq(u.parent, parent);
	ck_assert_uint_eq(u.n_frames, n);
	ck_assert_ptr_nonnull(u.frames);
	va_list ap;
	va_start(ap, n);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t want = va_arg(ap, uint64_t);
		ck_assert_msg(u.frames[i] == want, "frame %u: %#llx, want %#llx", i,
		              (unsigned long long)u.frames[i], (unsigned long long)want);
	}
	va_end(ap);
}

static struct ring_names *ring(void)
{
	struct ring_names *r = calloc(1, sizeof(*r));
	ck_assert_ptr_nonnull(r);
	return r;
}

START_TEST(tree_shares_outer_frames)
{
	ck_assert_int_eq(cg_intern_reset(), 0);
	struct ring_names *r = ring();
	/* 0x10 is main's frame: stacks 1 (0x10), 2, 3, and 4, the whole. */
	define(r, 1, 4, 0x13ull, 0x12ull, 0x11ull, 0x10ull);
	expect_defined(r, 1, 4, 0, 4, 0x13ull, 0x12ull, 0x11ull, 0x10ull);
	/* The same slot again names it without its frames. */
	expect_known(r, 1, 4);
	/* Sharing three outer frames: one new frame on stack 3. */
	define(r, 2, 4, 0x23ull, 0x12ull, 0x11ull, 0x10ull);
	expect_defined(r, 2, 5, 3, 1, 0x23ull);
	/* Sharing two: stacks 6 and 7 on stack 2. */
	define(r, 3, 4, 0x33ull, 0x32ull, 0x11ull, 0x10ull);
	expect_defined(r, 3, 7, 2, 2, 0x33ull, 0x32ull);
	/* Another outermost frame shares nothing. */
	define(r, 4, 2, 0x13ull, 0x40ull);
	expect_defined(r, 4, 9, 0, 2, 0x13ull, 0x40ull);
	expect_known(r, 2, 5);
	expect_known(r, 1, 4);
	struct cg_intern_stats st;
	cg_intern_stats(&st);
	ck_assert_uint_eq(st.nodes, 9);
	ck_assert_uint_eq(st.sent, 4);
	/* 0x10 0x11 0x12 0x13 0x23 0x32 0x33 0x40 */
	ck_assert_uint_eq(st.addresses, 8);
	ck_assert_uint_gt(st.resident, 0);
	free(r);
}
END_TEST

START_TEST(tree_outer_part_needs_no_definition)
{
	ck_assert_int_eq(cg_intern_reset(), 0);
	struct ring_names *a = ring(), *b = ring();
	define(a, 7, 3, 0x3ull, 0x2ull, 0x1ull);
	expect_defined(a, 7, 3, 0, 3, 0x3ull, 0x2ull, 0x1ull);
	/* The outer part of a stack defined before is defined: only its id. */
	define(a, 8, 2, 0x2ull, 0x1ull);
	expect_known(a, 8, 2);
	define(b, 7, 1, 0x1ull);
	expect_known(b, 7, 1);
	/* The whole stack again, from another thread's slot: the same stack. */
	define(b, 9, 3, 0x3ull, 0x2ull, 0x1ull);
	expect_known(b, 9, 3);
	struct cg_intern_stats st;
	cg_intern_stats(&st);
	ck_assert_uint_eq(st.nodes, 3);
	free(a);
	free(b);
}
END_TEST

START_TEST(tree_recursion)
{
	ck_assert_int_eq(cg_intern_reset(), 0);
	struct ring_names *r = ring();
	uint64_t f[CG_STACK_DEPTH_MAX];
	for (int i = 0; i < 60; i++)
		f[i] = 0x4011a6;
	/* A function calling itself 50 times: 50 nodes of one address. */
	cg_intern_define(r->w, 1, f, 50);
	struct cg_stack_use u = cg_intern_use(r->w, 1);
	ck_assert_uint_eq(u.id, 50);
	ck_assert_uint_eq(u.parent, 0);
	ck_assert_uint_eq(u.n_frames, 50);
	for (int i = 0; i < 50; i++)
		ck_assert_uint_eq(u.frames[i], 0x4011a6);
	/* 30 deep is on the way; 60 deep adds 10. */
	cg_intern_define(r->w, 2, f, 30);
	expect_known(r, 2, 30);
	cg_intern_define(r->w, 3, f, 60);
	u = cg_intern_use(r->w, 3);
	ck_assert_uint_eq(u.id, 60);
	ck_assert_uint_eq(u.parent, 50);
	ck_assert_uint_eq(u.n_frames, 10);
	/* Two functions calling each other: a b a b ... keeps them apart by depth. */
	for (int i = 0; i < 40; i++)
		f[i] = i % 2 ? 0x5000 : 0x6000;
	cg_intern_define(r->w, 4, f, 40);
	u = cg_intern_use(r->w, 4);
	ck_assert_uint_eq(u.id, 100);
	ck_assert_uint_eq(u.n_frames, 40);
	struct cg_intern_stats st;
	cg_intern_stats(&st);
	ck_assert_uint_eq(st.addresses, 3);
	free(r);
}
END_TEST

START_TEST(tree_depth_limit)
{
	ck_assert_int_eq(cg_intern_reset(), 0);
	struct ring_names *r = ring();
	uint64_t f[CG_STACK_DEPTH_MAX + 1];
	for (int i = 0; i <= CG_STACK_DEPTH_MAX; i++)
		f[i] = 0x400000 + 16 * (uint64_t)i;
	cg_intern_define(r->w, 1, f, CG_STACK_DEPTH_MAX);
	struct cg_stack_use u = cg_intern_use(r->w, 1);
	ck_assert_uint_eq(u.id, CG_STACK_DEPTH_MAX);
	ck_assert_uint_eq(u.n_frames, CG_STACK_DEPTH_MAX);
	ck_assert(memcmp(u.frames, f, sizeof(uint64_t) * CG_STACK_DEPTH_MAX) == 0);
	/* Deeper than a hook takes is no stack, and the slot names none any more. */
	cg_intern_define(r->w, 1, f, CG_STACK_DEPTH_MAX + 1);
	expect_known(r, 1, 0);
	cg_intern_define(r->w, 1, f, 0);
	expect_known(r, 1, 0);
	/* One frame less than the limit, from the innermost: a stack of its own. */
	cg_intern_define(r->w, 2, f + 1, CG_STACK_DEPTH_MAX - 1);
	expect_known(r, 2, CG_STACK_DEPTH_MAX - 1);
	free(r);
}
END_TEST

/*
 * A stack waits for its first record, which makes its nodes: stacks sent
 * meanwhile (another thread's, a device call's) may make some of them, and
 * the ids of one definition stay consecutive, its parent defined before.
 */
START_TEST(tree_stacks_wait_for_their_record)
{
	ck_assert_int_eq(cg_intern_reset(), 0);
	struct ring_names *a = ring(), *b = ring();
	define(a, 1, 2, 0xb0ull, 0xa0ull);
	define(b, 1, 3, 0xc0ull, 0xb0ull, 0xa0ull);
	expect_defined(b, 1, 3, 0, 3, 0xc0ull, 0xb0ull, 0xa0ull);
	/* b's record made a's nodes too. */
	expect_known(a, 1, 2);
	/* A slot sent again before its record names the later stack only. */
	define(a, 2, 2, 0xd0ull, 0xa0ull);
	define(a, 2, 2, 0xe0ull, 0xa0ull);
	expect_defined(a, 2, 4, 1, 1, 0xe0ull);
	/* The spare slot, never cached, works as any other. */
	define(a, CG_STACK_SLOTS, 1, 0xa0ull);
	expect_known(a, CG_STACK_SLOTS, 1);
	/* No slot, a slot past the last, a slot never sent: no stack. */
	expect_known(a, 0, 0);
	expect_known(a, CG_STACK_SLOTS + 1, 0);
	define(a, CG_STACK_SLOTS + 1, 1, 0xa0ull);
	expect_known(a, 5, 0);
	free(a);
	free(b);
}
END_TEST

/* After a dlclose the same addresses may be other code: new stacks share no node. */
START_TEST(tree_unload_starts_a_new_tree)
{
	ck_assert_int_eq(cg_intern_reset(), 0);
	struct ring_names *a = ring(), *b = ring();
	define(a, 1, 3, 0x3ull, 0x2ull, 0x1ull);
	expect_defined(a, 1, 3, 0, 3, 0x3ull, 0x2ull, 0x1ull);
	/* Sent before the unload, its record after: the code it names was the old. */
	define(b, 1, 3, 0x4ull, 0x2ull, 0x1ull);
	cg_intern_unload();
	expect_defined(b, 1, 5, 2, 1, 0x4ull);
	/* A slot sent before keeps naming its stack. */
	expect_known(a, 1, 3);
	/* The same frames sent after: a stack of their own, on no parent (id 4 is the new root). */
	define(a, 2, 3, 0x3ull, 0x2ull, 0x1ull);
	expect_defined(a, 2, 8, 0, 3, 0x3ull, 0x2ull, 0x1ull);
	define(a, 3, 2, 0x2ull, 0x1ull);
	expect_known(a, 3, 7);
	/* And again. */
	cg_intern_unload();
	define(a, 3, 2, 0x2ull, 0x1ull);
	expect_defined(a, 3, 11, 0, 2, 0x2ull, 0x1ull);
	free(a);
	free(b);
}
END_TEST

/* A definition that could not be written: its stacks are never named, nor any through them. */
START_TEST(tree_failed_definition)
{
	ck_assert_int_eq(cg_intern_reset(), 0);
	struct ring_names *r = ring();
	define(r, 1, 1, 0x1ull);
	expect_defined(r, 1, 1, 0, 1, 0x1ull);
	define(r, 2, 3, 0x3ull, 0x2ull, 0x1ull);
	expect_defined(r, 2, 3, 1, 2, 0x3ull, 0x2ull);
	cg_intern_failed(3);
	expect_known(r, 2, 0);
	define(r, 3, 2, 0x2ull, 0x1ull);
	expect_known(r, 3, 0);
	define(r, 3, 4, 0x4ull, 0x3ull, 0x2ull, 0x1ull);
	expect_known(r, 3, 0);
	/* Its parent is fine, and so is a stack beside it. */
	define(r, 4, 1, 0x1ull);
	expect_known(r, 4, 1);
	define(r, 4, 2, 0x5ull, 0x1ull);
	expect_defined(r, 4, 4, 1, 1, 0x5ull);
	/* Only the last definition given can have failed. */
	cg_intern_failed(1);
	expect_known(r, 1, 1);
	free(r);
}
END_TEST

/*
 * A million stacks of 32 frames sharing no node (each its own caller at
 * the outermost frame), the most a trace must hold; then as many as the
 * node cap lets in, past which a new stack's records carry none while the
 * stacks defined keep their ids.
 */
START_TEST(tree_a_million_stacks_then_the_cap)
{
	ck_assert_int_eq(cg_intern_reset(), 0);
	struct ring_names *r = ring();
	uint64_t f[32];
	for (int i = 0; i < 31; i++)
		f[i] = 0x7f0000000000 + 64 * (uint64_t)i;
	uint64_t k = 0;
	for (;; k++) {
		f[31] = 0x400000 + 16 * k;
		cg_intern_define(r->w, 1 + (uint32_t)(k % CG_STACK_CACHE_SLOTS), f, 32);
		struct cg_stack_use u =
		    cg_intern_use(r->w, 1 + (uint32_t)(k % CG_STACK_CACHE_SLOTS));
		if (!u.id)
			break;
		if (u.id != 32 * (k + 1) || u.n_frames != 32 || u.parent != 0)
			ck_abort_msg("stack %llu: id %llu, %u frames on %llu",
			             (unsigned long long)k, (unsigned long long)u.id, u.n_frames,
			             (unsigned long long)u.parent);
	}
	ck_assert_uint_ge(k, 1000000);
	/* The one that did not fit would have passed the cap. */
	ck_assert_uint_le(32 * k, CG_INTERN_NODES_MAX);
	ck_assert_uint_gt(32 * (k + 1), CG_INTERN_NODES_MAX);
	/* The first stack and an outer part of the last one are still known. */
	f[31] = 0x400000;
	cg_intern_define(r->w, 2000 % CG_STACK_SLOTS, f, 32);
	expect_known(r, 2000 % CG_STACK_SLOTS, 32);
	f[31] = 0x400000 + 16 * (k - 1);
	cg_intern_define(r->w, 3, f + 16, 16);
	expect_known(r, 3, 32 * k - 16);
	struct cg_intern_stats st;
	cg_intern_stats(&st);
	ck_assert_uint_eq(st.nodes, 32 * k);
	/* The one refused left no address behind. */
	ck_assert_uint_eq(st.addresses, 31 + k);
	free(r);
}
END_TEST

TEST_SUITE(suite, "stack-intern")
{
	test_case(s, "tree:definitions", 60, tree_shares_outer_frames,
	          tree_outer_part_needs_no_definition, tree_recursion, tree_depth_limit);
	test_case(s, "tree:slots", 60, tree_stacks_wait_for_their_record);
	test_case(s, "tree:unload", 60, tree_unload_starts_a_new_tree);
	test_case(s, "tree:failed", 60, tree_failed_definition);
	test_case(s, "tree:cap", 300, tree_a_million_stacks_then_the_cap);
}

TEST_MAIN(suite);
