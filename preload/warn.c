/* SPDX-License-Identifier: MIT */
#include "warn.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

bool cg_warn_quiet;

void cg_warn(const char *first, ...)
{
	char line[1024];
	size_t at = 0;
	va_list ap;
	int saved = errno;
	if (cg_warn_quiet)
		return;
	memcpy(line, "cgprobe: ", 9);
	at = 9;
	va_start(ap, first);
	for (const char *s = first; s; s = va_arg(ap, const char *)) {
		size_t n = strlen(s);
		if (n > sizeof(line) - 1 - at)
			n = sizeof(line) - 1 - at;
		memcpy(line + at, s, n);
		at += n;
	}
	va_end(ap);
	line[at++] = '\n';
	(void)!write(STDERR_FILENO, line, at);
	errno = saved;
}
