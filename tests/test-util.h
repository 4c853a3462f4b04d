/* SPDX-License-Identifier: MIT */
/* Helpers shared by the Check suites. */
#ifndef CG_TEST_UTIL_H
#define CG_TEST_UTIL_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgtrace.h"

#define META_LINE                                                                            \
	"{\"kind\":\"meta\",\"schema\":\"candle-graph/trace/6\",\"run_id\":\"run-1\","          \
	"\"correlation_id\":\"demo/update-1\",\"entrypoint\":\"demo::train::loss\","           \
	"\"phase\":\"train\",\"timestamp\":\"2026-08-04T18:00:00Z\",\"capture_step\":1,"        \
	"\"warmup_steps\":0,\"device\":\"cpu\",\"timing_mode\":\"host\",\"tags\":{}}\n"

struct warn_log {
	char text[4096];
	int count;
};

static inline void test_warn(void *user, const char *line)
{
	struct warn_log *w = user;
	size_t at = strlen(w->text);
	snprintf(w->text + at, sizeof(w->text) - at, "%s\n", line);
	w->count++;
}

/* Parses text; returns the document or NULL with the error in err. */
static inline struct cgtrace_doc *test_read(const char *text, char *err, size_t errlen,
					    struct warn_log *w)
{
	struct cgtrace_doc *doc = NULL;
	struct cgtrace_read_options opts = {.warn = test_warn, .user = w};
	static struct warn_log sink;
	if (!w) {
		memset(&sink, 0, sizeof(sink));
		opts.user = &sink;
	}
	err[0] = '\0';
	if (cgtrace_doc_read_mem("t.jsonl", text, strlen(text), &opts, &doc, err, errlen) < 0)
		return NULL;
	return doc;
}

/* Asserts text fails with exactly this error line. */
#define ck_read_fails(text, expected)                                                       \
	do {                                                                                 \
		char err_[1024];                                                              \
		struct cgtrace_doc *d_ = test_read((text), err_, sizeof(err_), NULL);         \
		ck_assert_msg(d_ == NULL, "expected failure: %s", (expected));               \
		ck_assert_str_eq(err_, (expected));                                           \
	} while (0)

/* Asserts text fails with an error line starting with prefix. */
#define ck_read_fails_prefix(text, prefix)                                                  \
	do {                                                                                 \
		char err_[1024];                                                              \
		struct cgtrace_doc *d_ = test_read((text), err_, sizeof(err_), NULL);         \
		ck_assert_msg(d_ == NULL, "expected failure: %s", (prefix));                 \
		ck_assert_msg(strncmp(err_, (prefix), strlen(prefix)) == 0,                   \
			      "error '%s' does not start with '%s'", err_, (prefix));          \
	} while (0)

static inline struct cgtrace_doc *ck_read_ok(const char *text)
{
	char err[1024];
	struct cgtrace_doc *d = test_read(text, err, sizeof(err), NULL);
	ck_assert_msg(d != NULL, "unexpected error: %s", err);
	return d;
}

#endif
