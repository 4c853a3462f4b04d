/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target for the reader. For any input it checks four properties:
 * the reader never crashes; each line the fast parser accepts, the strict
 * reference parser accepts with the same record; a trace that reads
 * exports to JSONL that reads back to the same summary and counts; and the
 * streaming reader accepts exactly the traces the document reader accepts,
 * with the same records per kind or the same error line; a streamed
 * document (CGTRACE_READ_STREAM_MEMORY) gives the same verdict and the same
 * memory report.
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cgtrace.h"
#include "fuzz-common.h"
#include "parse_fast.h"
#include "parse_ref.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);


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

static void check_round_trip(const struct cgtrace_doc *doc)
{
	struct cgtrace_summary s1;
	if (cgtrace_doc_summary(doc, &s1) < 0)
		return;
	int fd = memfd_create("export", MFD_CLOEXEC);
	assert(fd >= 0);
	int r = cgtrace_doc_export_jsonl(doc, fd);
	assert(r == 0);
	struct cgtrace_doc *back = fuzz_read_back(fd, doc, &s1, "export");
	assert(cgtrace_doc_device_info_conflicts(back) == 0);
	cgtrace_doc_free(back);
}

/* The document reader's verdict (ret, err) and counts, against the stream's. */
static void check_stream(const uint8_t *data, size_t size, int doc_ret, const char *doc_err,
			 const struct cgtrace_doc *doc)
{
	struct cgtrace_read_options opts = {.warn = fuzz_quiet};
	struct cgtrace_reader *r;
	int ret = cgtrace_reader_open_mem(&r, "fuzz", data, size, &opts);
	assert(ret == 0);
	size_t seen[CGTRACE_KIND_COUNT] = {0};
	struct cgtrace_record rec;
	/* Identities ride on records or come as older-form records: counted by device. */
	static char devs[256][64];
	size_t n_devs = 0;
	bool many = false;
	while ((ret = cgtrace_reader_next(r, &rec)) == 1) {
		struct cgtrace_device_info id;
		const struct cgtrace_device_info *x = NULL;
		seen[rec.kind]++;
		if (rec.kind == CGTRACE_KIND_DEVICE_INFO)
			x = rec.u.device_info;
		else if (cgtrace_reader_device_identity(r, &id))
			x = &id;
		size_t k = 0;
		while (x && k < n_devs && strncmp(devs[k], x->device, sizeof(devs[0])) != 0)
			k++;
		if (x && k == n_devs) {
			if (n_devs == 256 || strlen(x->device) >= sizeof(devs[0]))
				many = true;
			else
				snprintf(devs[n_devs++], sizeof(devs[0]), "%s", x->device);
		}
	}
	seen[CGTRACE_KIND_DEVICE_INFO] = n_devs;
	if (ret != doc_ret || strcmp(cgtrace_reader_message(r), doc_err) != 0) {
		fprintf(stderr, "stream and document readers disagree: %d '%s' vs %d '%s'\n", ret,
			cgtrace_reader_message(r), doc_ret, doc_err);
		abort();
	}
	for (int k = CGTRACE_KIND_SPAN_START; doc && k < CGTRACE_KIND_COUNT; k++)
		if (k != CGTRACE_KIND_SPAN_END && !(many && k == CGTRACE_KIND_DEVICE_INFO))
			assert(seen[k] == cgtrace_doc_count(doc, (enum cgtrace_kind)k));
	cgtrace_reader_close(r);
}

/* A streamed read: the same error, or the same summary and memory report as the full one. */
static void check_streamed(const uint8_t *data, size_t size, int doc_ret, const char *doc_err,
			   const struct cgtrace_doc *doc)
{
	struct cgtrace_read_options opts = {.warn = fuzz_quiet};
	struct cgtrace_doc *st = NULL;
	char err[512];
	int ret = cgtrace_doc_read_mem_flags("fuzz", data, size, &opts, CGTRACE_READ_STREAM_MEMORY,
					     &st, err, sizeof(err));
	if (ret != doc_ret || (ret < 0 && strcmp(err, doc_err) != 0)) {
		fprintf(stderr, "streamed and full reads disagree: %d '%s' vs %d '%s'\n", ret, err,
			doc_ret, doc_err);
		abort();
	}
	if (ret < 0)
		return;
	struct cgtrace_summary s1, s2;
	struct cgtrace_memory_report *a, *b;
	if (cgtrace_doc_summary(doc, &s1) == 0 && cgtrace_doc_summary(st, &s2) == 0)
		assert(memcmp(&s1, &s2, sizeof(s1)) == 0);
	if (cgtrace_memory_analyze(doc, &a) == 0 && cgtrace_memory_analyze(st, &b) == 0) {
		assert(a->alloc_count == b->alloc_count && a->free_count == b->free_count);
		assert(a->peak_bytes == b->peak_bytes && a->peak_timestamp_ns == b->peak_timestamp_ns);
		assert(strcmp(a->peak_device, b->peak_device) == 0);
		assert(memcmp(a->peak_by_category, b->peak_by_category,
			      sizeof(a->peak_by_category)) == 0);
		assert(a->autograd_retained_bytes == b->autograd_retained_bytes);
		assert(a->realloc_live_count == b->realloc_live_count);
		assert(a->unknown_free_count == b->unknown_free_count);
		assert(a->n_devices == b->n_devices && a->n_breakdown == b->n_breakdown);
		for (size_t i = 0; i < a->n_devices; i++)
			assert(a->by_device[i].capacity_bytes == b->by_device[i].capacity_bytes &&
			       a->by_device[i].peak_bytes == b->by_device[i].peak_bytes &&
			       a->by_device[i].final_bytes == b->by_device[i].final_bytes);
		for (size_t i = 0; i < a->n_breakdown; i++)
			assert(strcmp(a->peak_breakdown[i].tensor_id, b->peak_breakdown[i].tensor_id) ==
				       0 &&
			       a->peak_breakdown[i].bytes == b->peak_breakdown[i].bytes &&
			       a->peak_breakdown[i].ndim == b->peak_breakdown[i].ndim);
		cgtrace_memory_report_free(a);
		cgtrace_memory_report_free(b);
	}
	cgtrace_doc_free(st);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cgtrace_doc *doc = NULL;
	char err[512];
	struct cgtrace_read_options opts = {.warn = fuzz_quiet};
	check_lines((const char *)data, size);
	int ret = cgtrace_doc_read_mem("fuzz", data, size, &opts, &doc, err, sizeof(err));
	check_stream(data, size, ret, err, doc);
	check_streamed(data, size, ret, err, doc);
	if (ret == 0) {
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
