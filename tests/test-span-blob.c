/* SPDX-License-Identifier: MIT */
/*
 * What a span start carries (preload/span_blob.c): every combination of a
 * thread's name, a phase and the trailer (an update, ranges) made and read
 * back, for names whose lengths put the trailer at each offset mod 8.
 */
#include <check.h>
#include <stdint.h>
#include <string.h>

#include "real.h"
#include "span_blob.h"
#include "test-main.h"

static const char *const names[] = {"a",     "ab",     "abc",     "abcd",
                                    "abcde", "abcdef", "abcdefg", "abcdefgh"};

START_TEST(test_blob_round_trip)
{
	cg_real_init();
	const void *ptrs[] = {(const void *)0x1000, (const void *)0x3000};
	const uint64_t bytes[] = {0x10, 0x20};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		for (unsigned parts = 0; parts < 8; parts++) {
			const char *thread = parts & 1 ? names[(i + 3) % 8] : NULL;
			struct cg_span_info info = {0};
			if (parts & 2)
				info.phase = names[(i + 5) % 8];
			if (parts & 4)
				info = (struct cg_span_info){.update = 7, .phase = info.phase, .ptrs = ptrs,
							     .bytes = bytes, .n_ranges = 2};
			unsigned flags = CG_SPAN_MEASURED;
			char *blob = cg_span_blob_make(names[i], thread, &info, &flags);
			ck_assert_ptr_nonnull(blob);
			ck_assert_uint_eq(flags, CG_SPAN_MEASURED |
			                             (parts & 1 ? CG_SPAN_NAMED : 0) |
			                             (parts & 2 ? CG_SPAN_PHASE : 0) |
			                             (parts & 4 ? CG_SPAN_EXTRA : 0));
			struct cg_span_view v;
			cg_span_blob_read(blob, flags, &v);
			ck_assert_str_eq(v.name, names[i]);
			if (thread)
				ck_assert_str_eq(v.thread, thread);
			else
				ck_assert_ptr_null(v.thread);
			if (info.phase)
				ck_assert_str_eq(v.phase, info.phase);
			else
				ck_assert_ptr_null(v.phase);
			if (parts & 4) {
				ck_assert_ptr_nonnull(v.extra);
				ck_assert_uint_eq((uintptr_t)v.extra % 8, 0);
				ck_assert_uint_eq(v.extra->update, 7);
				ck_assert_uint_eq(v.extra->n_values, 4);
				const uint64_t want[] = {0x1000, 0x10, 0x3000, 0x20};
				ck_assert(!memcmp(v.extra->values, want, sizeof(want)));
			} else {
				ck_assert_ptr_null(v.extra);
			}
			cg_real.free(blob);
		}
}
END_TEST

/* A process's rank, with its job's size or without: the trailer carries them, nothing else. */
START_TEST(test_blob_rank)
{
	cg_real_init();
	for (int sized = 0; sized < 2; sized++) {
		unsigned flags = 0;
		struct cg_span_info info = {.rank = 3 + 1, .world_size = sized ? 8 : 0};
		char *blob = cg_span_blob_make("process_group", NULL, &info, &flags);
		ck_assert_uint_eq(flags, CG_SPAN_EXTRA);
		struct cg_span_view v;
		cg_span_blob_read(blob, flags, &v);
		ck_assert_str_eq(v.name, "process_group");
		ck_assert_uint_eq(v.extra->rank, 4);
		ck_assert_uint_eq(v.extra->world_size, sized ? 8 : 0);
		ck_assert_uint_eq(v.extra->update, 0);
		ck_assert_uint_eq(v.extra->n_values, 0);
		cg_real.free(blob);
	}
	/* A size without a rank says nothing. */
	unsigned flags = 0;
	char *blob = cg_span_blob_make("x", NULL, &(struct cg_span_info){.world_size = 8}, &flags);
	ck_assert_uint_eq(flags, 0);
	cg_real.free(blob);
}
END_TEST

/* No info, or an update alone: the trailer only when something goes in it. */
START_TEST(test_blob_update_alone)
{
	cg_real_init();
	unsigned flags = 0;
	char *blob = cg_span_blob_make("update", NULL, NULL, &flags);
	ck_assert_uint_eq(flags, 0);
	cg_real.free(blob);
	blob = cg_span_blob_make("update", NULL, &(struct cg_span_info){.update = 3}, &flags);
	ck_assert_uint_eq(flags, CG_SPAN_EXTRA);
	struct cg_span_view v;
	cg_span_blob_read(blob, flags, &v);
	ck_assert_uint_eq(v.extra->update, 3);
	ck_assert_uint_eq(v.extra->n_values, 0);
	cg_real.free(blob);
}
END_TEST

TEST_SUITE(blob_suite, "span-blob")
{
	test_case(s, "blob", 30, test_blob_round_trip, test_blob_update_alone, test_blob_rank);
}

TEST_MAIN(blob_suite);
