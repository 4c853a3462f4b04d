/* SPDX-License-Identifier: MIT */
#include "resident.h"

#include <sys/mman.h>
#include <unistd.h>

size_t cg_resident(const void *p, size_t len)
{
	if (!p || !len)
		return 0;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = (uintptr_t)p & ~(page - 1),
	          hi = ((uintptr_t)p + len + page - 1) & ~(page - 1);
	/* A page a byte, a few thousand pages a call: no allocation, a small stack. */
	unsigned char vec[4096];
	size_t resident = 0;
	for (uintptr_t at = lo; at < hi;) {
		size_t pages = (hi - at) / page;
		if (pages > sizeof(vec))
			pages = sizeof(vec);
		if (mincore((void *)at, pages * page, vec) < 0)
			return resident;
		for (size_t i = 0; i < pages; i++)
			resident += vec[i] & 1;
		at += pages * page;
	}
	return resident * page;
}
