/* SPDX-License-Identifier: MIT */
#include "resident.h"

#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "num_scan.h"

size_t cg_resident(const void *p, size_t len)
{
	if (!p || !len)
		return 0;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = (uintptr_t)p & ~(page - 1), hi = ((uintptr_t)p + len + page - 1) & ~(page - 1);
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

uint64_t cg_peak_rss(void)
{
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	char buf[4096];
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	const char *p = strstr(buf, "\nVmHWM:");
	if (!p)
		return 0;
	p += 7;
	while (*p == ' ' || *p == '\t')
		p++;
	size_t digits = strspn(p, "0123456789");
	uint64_t kb;
	return cg_scan_u64(p, digits, &kb) < 0 ? 0 : kb * 1024;
}
