/* SPDX-License-Identifier: MIT */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "binutils.h"

#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "child.h"

/* "FILE:LINE" or "FILE:LINE (discriminator N)" split; "??:0", "??:?", "FILE:?" have no line. */
static void a2l_place(char *text, struct a2l_frame *f)
{
	char *d = strstr(text, " (discriminator ");
	if (d)
		*d = '\0';
	char *colon = strrchr(text, ':');
	f->line = 0;
	if (colon) {
		*colon = '\0';
		f->line = (unsigned)strtoul(colon + 1, NULL, 10);
	}
	snprintf(f->file, sizeof(f->file), "%s", text);
}

size_t a2l(const char *flags, const char *module, uint64_t offset, struct a2l_frame *out)
{
	char *cmd =
	    strf("addr2line -f %s -e '%s' 0x%" PRIx64 " 2>/dev/null", flags, module, offset);
	FILE *p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	size_t n = 0;
	static char fn[8192], place[8192];
	while (n < A2L_MAX_CHAIN && fgets(fn, sizeof(fn), p) && fgets(place, sizeof(place), p)) {
		fn[strcspn(fn, "\n")] = '\0';
		place[strcspn(place, "\n")] = '\0';
		snprintf(out[n].function, sizeof(out[n].function), "%s", fn);
		a2l_place(place, &out[n]);
		n++;
	}
	ck_assert_int_eq(pclose(p), 0);
	free(cmd);
	return n;
}

void objcopy_to(const char *args, const char *in, const char *out)
{
	char *cmd = strf("objcopy %s '%s' '%s'", args, in, out);
	ck_assert_msg(system(cmd) == 0, "%s failed", cmd);
	free(cmd);
}

bool binutil_present(const char *tool)
{
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "%s --version >/dev/null 2>&1", tool);
	return system(cmd) == 0;
}
