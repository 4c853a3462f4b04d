/* SPDX-License-Identifier: MIT */
#include "fuzz-common.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void fuzz_quiet(void *user, const char *line)
{
	(void)user;
	(void)line;
}

struct cgtrace_doc *fuzz_read_back(int fd, const struct cgtrace_doc *doc,
				   const struct cgtrace_summary *s1, const char *what)
{
	off_t len = lseek(fd, 0, SEEK_CUR);
	char *buf = malloc((size_t)len + 1);
	assert(buf && pread(fd, buf, (size_t)len, 0) == len);
	close(fd);
	struct cgtrace_doc *back = NULL;
	char err[512];
	struct cgtrace_read_options opts = {.warn = fuzz_quiet};
	int r = cgtrace_doc_read_mem("export", buf, (size_t)len, &opts, &back, err, sizeof(err));
	if (r != 0) {
		fprintf(stderr, "%s does not read back: %s\n", what, err);
		abort();
	}
	struct cgtrace_summary s2;
	assert(cgtrace_doc_summary(back, &s2) == 0);
	assert(memcmp(s1, &s2, sizeof(s2)) == 0);
	for (int k = 0; k < CGTRACE_KIND_COUNT; k++)
		assert(cgtrace_doc_count(doc, (enum cgtrace_kind)k) ==
		       cgtrace_doc_count(back, (enum cgtrace_kind)k));
	free(buf);
	return back;
}
