/* SPDX-License-Identifier: MIT */
/*
 * The probe's table of live allocations (preload/live.c), on its own:
 * every address pattern a program produces must come back with what was
 * recorded for it, however the keys crowd the table's blocks.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "live.h"
#include "test-main.h"
#include "xorshift.h"

#define VMM_KEY (1ull << 63)

static uint64_t rng_state = XORSHIFT_SEED;

static struct cg_live value_for(uint64_t i)
{
	return (struct cg_live){.size = (i * 2654435761u) & ((1ull << 52) - 1),
				.category = (uint8_t)(i % 5),
				.device = (uint8_t)(i % 7 == 0 ? 255 : i % 3)};
}

/* Inserts keys[0..n), removes them in shuffled order, checking each value. */
static void round_trip(uint64_t *keys, size_t n)
{
	cg_live_clear();
	for (size_t i = 0; i < n; i++) {
		struct cg_live v = value_for(i);
		ck_assert(cg_live_insert(keys[i], &v));
	}
	size_t *order = malloc(n * sizeof(*order));
	ck_assert_ptr_nonnull(order);
	for (size_t i = 0; i < n; i++)
		order[i] = i;
	for (size_t i = n - 1; i > 0; i--) {
		size_t j = xorshift64(&rng_state) % (i + 1), t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	for (size_t k = 0; k < n; k++) {
		size_t i = order[k];
		struct cg_live want = value_for(i), got;
		ck_assert_msg(cg_live_remove(keys[i], &got), "key %#llx lost",
			      (unsigned long long)keys[i]);
		ck_assert_uint_eq(got.size, want.size);
		ck_assert_uint_eq(got.category, want.category);
		ck_assert_uint_eq(got.device, want.device);
		/* Gone once removed; the entries it shifted are found in later rounds. */
		ck_assert(!cg_live_remove(keys[i], &got));
	}
	free(order);
}

/* n keys: base + i * stride. */
static void strided(uint64_t base, uint64_t stride, size_t n)
{
	uint64_t *keys = malloc(n * sizeof(*keys));
	ck_assert_ptr_nonnull(keys);
	for (size_t i = 0; i < n; i++)
		keys[i] = base + i * stride;
	round_trip(keys, n);
	free(keys);
}

START_TEST(small_blocks_side_by_side)
{
	strided(0x555555560010ull, 16, 100000);
	strided(0x555555560010ull, 48, 100000);
}
END_TEST

/* Same offset in every page: page-aligned blocks, large mmap()ed ones at +16. */
START_TEST(same_offset_in_many_pages)
{
	strided(0x7f0000000000ull, 4096, 100000);
	strided(0x7f0000000010ull, 135168, 100000);
	strided(0x7f0000000000ull, 1ull << 20, 50000);
}
END_TEST

START_TEST(random_addresses)
{
	size_t n = 200000;
	uint64_t *keys = malloc(n * sizeof(*keys));
	ck_assert_ptr_nonnull(keys);
	for (size_t i = 0; i < n; i++) {
		/* Distinct: a random high part above a unique low part. */
		keys[i] = ((xorshift64(&rng_state) & 0x7fffff) << 24 | i << 4) + 0x10000000000ull;
	}
	round_trip(keys, n);
	free(keys);
}
END_TEST

/* cuMemCreate handles share the table with addresses, marked by the top bit. */
START_TEST(vmm_handles_beside_addresses)
{
	uint64_t keys[2000];
	for (size_t i = 0; i < 1000; i++) {
		keys[2 * i] = (i + 1) | VMM_KEY;
		keys[2 * i + 1] = i + 1;
	}
	round_trip(keys, 2000);
}
END_TEST

START_TEST(reinsert_and_unknown)
{
	struct cg_live got;
	cg_live_clear();
	ck_assert(!cg_live_remove(0x1000, &got));
	ck_assert(cg_live_insert(0x1000, &(struct cg_live){10, 1, 0, 0}));
	/* A free never seen: the second insert replaces the first. */
	ck_assert(cg_live_insert(0x1000, &(struct cg_live){20, 2, 3, 77}));
	ck_assert(cg_live_remove(0x1000, &got));
	ck_assert_uint_eq(got.size, 20);
	ck_assert_uint_eq(got.device, 3);
	ck_assert_uint_eq(got.ord, 77);
	ck_assert(!cg_live_remove(0x1000, &got));
	ck_assert(cg_live_insert(0x2000, &(struct cg_live){5, 4, 255, 0}));
	cg_live_clear();
	ck_assert(!cg_live_remove(0x2000, &got));
}
END_TEST

/* A fork child keeps the host's blocks only, whatever the probe chains look like. */
START_TEST(keep_host_drops_devices)
{
	struct cg_live got;
	uint64_t seed = 11;
	cg_live_clear();
	for (uint64_t i = 1; i <= 20000; i++) {
		uint64_t key = (xorshift64(&seed) & 0xffffffffff0ull) | 16;
		cg_live_insert(key, &(struct cg_live){i, 0, i % 3 ? 255 : (uint8_t)(i % 5), 0});
	}
	uint64_t before = cg_live_t.count;
	cg_live_keep_host();
	ck_assert_uint_gt(cg_live_t.count, 0);
	ck_assert_uint_lt(cg_live_t.count, before);
	uint64_t host = 0;
	for (uint64_t i = 0; i <= cg_live_t.mask; i++) {
		if (!cg_live_t.slots[i].addr)
			continue;
		ck_assert_uint_eq((uint8_t)(cg_live_t.slots[i].size >> CG_LIVE_DEV_SHIFT), 255);
		host++;
	}
	ck_assert_uint_eq(host, cg_live_t.count);
	/* Every host block is still found by lookup: the probe chains were kept whole. */
	seed = 11;
	for (uint64_t i = 1; i <= 20000; i++) {
		uint64_t key = (xorshift64(&seed) & 0xffffffffff0ull) | 16;
		bool found = cg_live_remove(key, &got);
		if (i % 3)
			ck_assert_msg(found, "host block %llu lost", (unsigned long long)i);
	}
	ck_assert_uint_eq(cg_live_t.count, 0);
}
END_TEST

TEST_SUITE(live_suite, "live")
{
	test_case(s, "live:table", 60, small_blocks_side_by_side, same_offset_in_many_pages,
	          random_addresses, vmm_handles_beside_addresses, reinsert_and_unknown,
	          keep_host_drops_devices);
}

TEST_MAIN(live_suite);
