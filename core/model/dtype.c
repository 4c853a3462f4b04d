/* SPDX-License-Identifier: MIT */
/* Element sizes of dtype names and the storage size derived from a shape. */
#include <stdbool.h>
#include <string.h>

#include "cgtrace.h"
#include "export.h"

/*
 * The format's rules trim white space around a dtype name; the ASCII white
 * space set is what a trace can reasonably contain there.
 */
static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

struct dtype_size {
	char name[5];
	uint8_t size;
};

static const struct dtype_size dtype_sizes[] = {
	{"u8", 1},  {"i8", 1},  {"bool", 1}, {"f8", 1},  {"u16", 2},
	{"i16", 2}, {"f16", 2}, {"bf16", 2}, {"u32", 4}, {"i32", 4},
	{"f32", 4}, {"u64", 8}, {"i64", 8},  {"f64", 8},
};

CG_EXPORT uint64_t cgtrace_dtype_size(const char *dtype, size_t len)
{
	if (!dtype)
		return 0;
	while (len && is_space(dtype[0])) {
		dtype++;
		len--;
	}
	while (len && is_space(dtype[len - 1]))
		len--;
	/* Every known name is at most four bytes long. */
	if (len == 0 || len > 4)
		return 0;

	char lower[5] = {0};
	for (size_t i = 0; i < len; i++) {
		char c = dtype[i];
		/* An embedded NUL would otherwise match the table's padding. */
		if (c == '\0')
			return 0;
		lower[i] = (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
	}
	for (size_t i = 0; i < sizeof(dtype_sizes) / sizeof(dtype_sizes[0]); i++)
		if (memcmp(dtype_sizes[i].name, lower, sizeof(lower)) == 0)
			return dtype_sizes[i].size;
	return 0;
}

static uint64_t mul_sat(uint64_t a, uint64_t b)
{
	uint64_t r;
	return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

CG_EXPORT uint64_t cgtrace_storage_bytes(const uint64_t *shape, size_t ndim, const char *dtype,
					 size_t dtype_len)
{
	uint64_t size = cgtrace_dtype_size(dtype, dtype_len);
	if (size == 0 || (ndim && !shape))
		return 0;
	/*
	 * An empty shape is a scalar (one element). A zero dimension empties
	 * the tensor whatever the other dimensions are, as the format's saturating
	 * product gives (saturated * 0 == 0).
	 */
	uint64_t elems = 1;
	for (size_t i = 0; i < ndim; i++)
		if (shape[i] == 0)
			return 0;
	for (size_t i = 0; i < ndim; i++)
		elems = mul_sat(elems, shape[i]);
	return mul_sat(elems, size);
}
