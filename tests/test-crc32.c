/* SPDX-License-Identifier: MIT */
/* cg_crc32: the fast paths against the bitwise definition, at every length and alignment. */
#include <stdint.h>
#include <stdlib.h>

#include "crc32.h"
#include "test-main.h"

static uint32_t bitwise(uint32_t crc, const uint8_t *p, size_t n)
{
	uint32_t c = ~crc;
	while (n--) {
		c ^= *p++;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
	}
	return ~c;
}

static uint8_t buf[(1u << 16) + 16];

static void fill(void)
{
	uint64_t s = 0x9e3779b97f4a7c15ull;
	for (size_t i = 0; i < sizeof(buf); i++) {
		s ^= s << 13, s ^= s >> 7, s ^= s << 17;
		buf[i] = (uint8_t)(s >> 24);
	}
}

START_TEST(crc_known)
{
	/* zlib.crc32(b"123456789") and of nothing. */
	ck_assert_uint_eq(cg_crc32(0, "123456789", 9), 0xcbf43926u);
	ck_assert_uint_eq(cg_crc32(0, "", 0), 0);
	/* 1000 bytes of 'a' (zlib.crc32(b"a" * 1000)): the folded path. */
	static char a[1000];
	for (size_t i = 0; i < sizeof(a); i++)
		a[i] = 'a';
	ck_assert_uint_eq(cg_crc32(0, a, sizeof(a)), 0x9a38da03u);
}
END_TEST

START_TEST(crc_lengths)
{
	fill();
	for (size_t n = 0; n < 600; n++)
		for (size_t off = 0; off < 4; off++) {
			uint32_t seed = (uint32_t)(n * 2654435761u);
			ck_assert_uint_eq(cg_crc32(seed, buf + off, n),
			                  bitwise(seed, buf + off, n));
		}
}
END_TEST

START_TEST(crc_chained)
{
	fill();
	size_t n = sizeof(buf) - 16;
	uint32_t whole = bitwise(0, buf, n);
	ck_assert_uint_eq(cg_crc32(0, buf, n), whole);
	for (size_t cut = 1; cut < n; cut = cut * 3 + 7)
		ck_assert_uint_eq(cg_crc32(cg_crc32(0, buf, cut), buf + cut, n - cut), whole);
}
END_TEST

TEST_SUITE(crc32_suite, "crc32")
{
	test_case(s, "crc", 4, crc_known, crc_lengths, crc_chained);
}

TEST_MAIN(crc32_suite);
