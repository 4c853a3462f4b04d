/* SPDX-License-Identifier: MIT */
#include "write_all.h"

#include <errno.h>
#include <unistd.h>

int cg_write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		/* write(2) returns 0 only for n == 0; guard against a spin all the same. */
		if (w == 0)
			return -EIO;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}
