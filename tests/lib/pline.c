/* SPDX-License-Identifier: MIT */
#include "pline.h"

#include <stdio.h>
#include <string.h>

bool next_pline(const char **cursor, struct pline *l)
{
	while (**cursor) {
		const char *s = *cursor;
		const char *nl = strchr(s, '\n');
		size_t len = nl ? (size_t)(nl - s) : strlen(s);
		char buf[1200];
		int at = 0;
		*cursor = nl ? nl + 1 : s + len;
		if (len >= sizeof(buf))
			continue;
		memcpy(buf, s, len);
		buf[len] = '\0';
		if (sscanf(buf, "%ld %63s %c %n", &l->pid, l->prog, &l->kind, &at) < 3 || at == 0)
			continue;
		snprintf(l->rest, sizeof(l->rest), "%s", buf + at);
		return true;
	}
	return false;
}
