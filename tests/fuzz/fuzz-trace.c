/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target for the reader. For any input it checks three properties:
 * the reader never crashes; each line the fast parser accepts, the strict
 * reference parser accepts with the same record; and a trace that reads
 * exports to JSONL that reads back to the same summary and counts.
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cgtrace.h"
#include "parse_fast.h"
#include "parse_ref.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void quiet(void *user, const char *line)
{
	(void)user;
	(void)line;
}

static void check_lines(const char *s, size_t n)
{
	struct cg_parse fast, ref;
	struct cg_rec a, b;
	cg_parse_init(&fast);
	cg_parse_init(&ref);
	for (size_t at = 0; at < n;) {
		const char *nl = memchr(s + at, '\n', n - at);
		size_t len = nl ? (size_t)(nl - (s + at)) : n - at;
		if (cg_parse_fast(&fast, s + at, len, &a) == 0) {
			int r = cg_parse_ref(&ref, s + at, len, &b);
			if (r != 0 || !cg_rec_equal(&a, &b)) {
				fprintf(stderr, "fast and reference parsers disagree on: %.*s\n(%s)\n",
					(int)len, s + at, r ? ref.err : "different records");
				abort();
			}
		}
		at += len + 1;
	}
	cg_parse_fini(&fast);
	cg_parse_fini(&ref);
}

/*
 * Identities leave as fields of a record naming the device, so export keeps
 * those of devices a memory or device_memory record names. Fuzz inputs are
 * small: the loop over identities per record is no concern here.
 */
static size_t named_identities(const struct cgtrace_doc *doc)
{
	size_t n = 0;
	for (size_t i = 0; i < cgtrace_doc_count(doc, CGTRACE_KIND_DEVICE_INFO); i++) {
		struct cgtrace_device_info di;
		cgtrace_doc_device_info(doc, i, &di);
		bool named = false;
		for (size_t k = 0; !named && k < cgtrace_doc_count(doc, CGTRACE_KIND_MEMORY); k++) {
			struct cgtrace_memory m;
			cgtrace_doc_memory(doc, k, &m);
			named = !strcmp(m.device, di.device);
		}
		for (size_t k = 0; !named && k < cgtrace_doc_count(doc, CGTRACE_KIND_DEVICE_MEMORY);
		     k++) {
			struct cgtrace_device_memory m;
			cgtrace_doc_device_memory(doc, k, &m);
			named = !strcmp(m.device, di.device);
		}
		n += named;
	}
	return n;
}

static void check_round_trip(const struct cgtrace_doc *doc)
{
	struct cgtrace_summary s1, s2;
	if (cgtrace_doc_summary(doc, &s1) < 0)
		return;
	int fd = memfd_create("export", MFD_CLOEXEC);
	assert(fd >= 0);
	int r = cgtrace_doc_export_jsonl(doc, fd);
	assert(r == 0);
	off_t len = lseek(fd, 0, SEEK_CUR);
	char *buf = malloc((size_t)len + 1);
	assert(buf && pread(fd, buf, (size_t)len, 0) == len);
	close(fd);
	struct cgtrace_doc *back = NULL;
	char err[512];
	struct cgtrace_read_options opts = {.warn = quiet};
	r = cgtrace_doc_read_mem("export", buf, (size_t)len, &opts, &back, err, sizeof(err));
	if (r != 0) {
		fprintf(stderr, "export does not read back: %s\n", err);
		abort();
	}
	assert(cgtrace_doc_summary(back, &s2) == 0);
	assert(memcmp(&s1, &s2, sizeof(s1)) == 0);
	for (int k = 0; k < CGTRACE_KIND_COUNT; k++)
		assert(k == CGTRACE_KIND_DEVICE_INFO ||
		       cgtrace_doc_count(doc, (enum cgtrace_kind)k) ==
			       cgtrace_doc_count(back, (enum cgtrace_kind)k));
	assert(cgtrace_doc_count(back, CGTRACE_KIND_DEVICE_INFO) == named_identities(doc));
	assert(cgtrace_doc_device_info_conflicts(back) == 0);
	cgtrace_doc_free(back);
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cgtrace_doc *doc = NULL;
	char err[512];
	struct cgtrace_read_options opts = {.warn = quiet};
	check_lines((const char *)data, size);
	if (cgtrace_doc_read_mem("fuzz", data, size, &opts, &doc, err, sizeof(err)) == 0) {
		struct cgtrace_memory_report *rep;
		if (cgtrace_memory_analyze(doc, &rep) == 0)
			cgtrace_memory_report_free(rep);
		check_round_trip(doc);
		cgtrace_doc_free(doc);
	} else {
		/* Errors are one line naming the input. */
		assert(strncmp(err, "fuzz", 4) == 0 && !strchr(err, '\n'));
	}
	return 0;
}
