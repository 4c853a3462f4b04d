/* SPDX-License-Identifier: MIT */
#include "marks.h"

#include <errno.h>

#include "params.h"
#include "span_blob.h"
#include "spans.h"
#include "state.h"

int cg_marks_add(const void *const *ptrs, const uint64_t *bytes, size_t n)
{
	if (!ptrs || !bytes || n == 0)
		return -EINVAL;
	if (n > CG_MARKS_MAX)
		return -E2BIG;
	for (size_t i = 0; i < n; i++) {
		uint64_t a = (uint64_t)(uintptr_t)ptrs[i];
		if (bytes[i] == 0 || a + bytes[i] < a)
			return -EINVAL;
	}
	int ret = 0;
	for (size_t i = 0; i < n; i++)
		if (cg_params_mark((uint64_t)(uintptr_t)ptrs[i], bytes[i]) < 0)
			ret = -ENOSPC;
	if (!cg_recording() || cg_outside_window)
		return ret;
	int r = 0;
	for (size_t i = 0; i < n; i += CG_MARKS_PER_SPAN) {
		size_t k = n - i < CG_MARKS_PER_SPAN ? n - i : CG_MARKS_PER_SPAN;
		struct cg_span_info info = {.ptrs = ptrs + i, .bytes = bytes + i, .n_ranges = k};
		if (cg_span_instant("parameters", &info) < 0)
			r = -ENOMEM;
	}
	return ret ? ret : r;
}
