/* SPDX-License-Identifier: MIT */
#include "sysline.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

void cg_sysline(const char *path, char *buf, size_t len)
{
	buf[0] = '\0';
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	/* One read: these files hand out their line whole. */
	ssize_t n = read(fd, buf, len - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
}
