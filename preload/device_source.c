/* SPDX-License-Identifier: MIT */
#include "device_source.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>

/* Read by hooks and the writer thread; registered from a constructor. */
static const struct cg_device_source *_Atomic source;

int cg_probe_register_device_source(const struct cg_device_source *src)
{
	const struct cg_device_source *none = NULL;
	return atomic_compare_exchange_strong(&source, &none, src) ? 0 : -EBUSY;
}

const char *cg_device_op_name(uint8_t op)
{
	const struct cg_device_source *s = atomic_load_explicit(&source, memory_order_acquire);
	return s && op < s->op_count ? s->op_names[op] : "device";
}

size_t cg_device_name(char out[32], uint8_t device)
{
	const struct cg_device_source *s = atomic_load_explicit(&source, memory_order_acquire);
	const char *fixed = device == CG_PROBE_HOST ? "cpu" : !s ? "unknown" : NULL;
	if (fixed) {
		memcpy(out, fixed, strlen(fixed) + 1);
		return strlen(fixed);
	}
	size_t n = s->device_name(out, 32, device);
	return n < 32 ? n : 31;
}

const struct cg_device_source *cg_device_source(void)
{
	return atomic_load_explicit(&source, memory_order_acquire);
}
