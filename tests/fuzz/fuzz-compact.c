/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target for the compact decoder. An input that begins with the
 * compact magic is read as a file; any other is taken as items, which the
 * target wraps into a file itself (header, and blocks with their right
 * lengths and CRC-32, split at each "BLK!", stored or zstd by the first
 * byte's low bit), so that mutations reach the items rather than dying at
 * the checksum. For any input: no crash; an error is one line naming the
 * input and the record; the streaming reader agrees with the document
 * reader (verdict, message, counts); and a trace that reads exports in
 * stream order to JSONL that reads back to the same summary and counts.
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zstd.h>

#include "cgtrace.h"
#include "fuzz-common.h"
#include "compact_dec.h"
#include "crc32.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SPLIT "BLK!"


static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* The file the items make: *len bytes, malloc'd. */
static uint8_t *wrap(const uint8_t *data, size_t size, size_t *len)
{
	bool zstd = size && (data[0] & 1);
	const uint8_t *p = size ? data + 1 : data, *end = data + size;
	/* Each block may hold a split's 4 bytes: a header and zstd's per-frame bound each. */
	size_t cap = 16 + (size / 4 + 1) * (16 + 96) + 2 * size;
	uint8_t *out = malloc(cap);
	assert(out);
	memcpy(out, CG_COMPACT_MAGIC, 8);
	put32(out + 8, 1);
	put32(out + 12, 0);
	size_t n = 16;
	for (;;) {
		const uint8_t *s = memmem(p, (size_t)(end - p), SPLIT, 4);
		const uint8_t *e = s ? s : end;
		size_t raw = (size_t)(e - p);
		uint8_t *h = out + n, *payload = h + 16;
		size_t plen = raw;
		if (zstd) {
			plen = ZSTD_compress(payload, cap - n - 16, p, raw, 1);
			assert(!ZSTD_isError(plen));
		} else {
			memcpy(payload, p, raw);
		}
		h[0] = zstd ? 'Z' : 'R';
		h[1] = h[2] = h[3] = 0;
		put32(h + 4, (uint32_t)plen);
		put32(h + 8, (uint32_t)raw);
		put32(h + 12, cg_crc32(0, payload, plen));
		n += 16 + plen;
		if (!s)
			break;
		p = s + 4;
	}
	*len = n;
	return out;
}

static void check_round_trip(const uint8_t *data, size_t size, const struct cgtrace_doc *doc)
{
	struct cgtrace_summary s1;
	if (cgtrace_doc_summary(doc, &s1) < 0)
		return;
	struct cgtrace_read_options opts = {.warn = fuzz_quiet};
	struct cgtrace_reader *r;
	assert(cgtrace_reader_open_mem(&r, "fuzz", data, size, &opts) == 0);
	int fd = memfd_create("export", MFD_CLOEXEC);
	assert(fd >= 0);
	int ret = cgtrace_reader_export_jsonl(r, fd);
	assert(ret == 0);
	cgtrace_reader_close(r);
	cgtrace_doc_free(fuzz_read_back(fd, doc, &s1, "the JSONL export"));
}

static void check_stream(const uint8_t *data, size_t size, int doc_ret, const char *doc_err,
			 const struct cgtrace_doc *doc)
{
	struct cgtrace_read_options opts = {.warn = fuzz_quiet};
	struct cgtrace_reader *r;
	assert(cgtrace_reader_open_mem(&r, "fuzz", data, size, &opts) == 0);
	size_t seen[CGTRACE_KIND_COUNT] = {0};
	struct cgtrace_record rec;
	int ret;
	uint64_t n = 0;
	while ((ret = cgtrace_reader_next(r, &rec)) == 1) {
		seen[rec.kind]++;
		assert(rec.line == ++n);
	}
	if (ret != doc_ret || strcmp(cgtrace_reader_message(r), doc_err) != 0) {
		fprintf(stderr, "stream and document readers disagree: %d '%s' vs %d '%s'\n", ret,
			cgtrace_reader_message(r), doc_ret, doc_err);
		abort();
	}
	for (int k = CGTRACE_KIND_SPAN_START; doc && k < CGTRACE_KIND_DEVICE_INFO; k++)
		if (k != CGTRACE_KIND_SPAN_END)
			assert(seen[k] == cgtrace_doc_count(doc, (enum cgtrace_kind)k));
	cgtrace_reader_close(r);
}

/* A streamed read (memory applied as it is read, packed records by their gist) agrees too. */
static void check_streamed(const uint8_t *data, size_t size, int doc_ret, const char *doc_err)
{
	struct cgtrace_doc *doc = NULL;
	char err[512];
	struct cgtrace_read_options opts = {.warn = fuzz_quiet};
	int ret = cgtrace_doc_read_mem_flags("fuzz", data, size, &opts, CGTRACE_READ_STREAM_MEMORY,
					     &doc, err, sizeof(err));
	if (ret != doc_ret || (ret != 0 && strcmp(err, doc_err) != 0)) {
		fprintf(stderr, "streamed and full reads disagree: %d '%s' vs %d '%s'\n", ret,
			ret ? err : "", doc_ret, doc_ret ? doc_err : "");
		abort();
	}
	cgtrace_doc_free(doc);
}

/*
 * A read that skips stack blocks unread trusts them, so it may take what a
 * whole read refuses, never the other way round; its errors are one line too.
 */
static void check_skipping(const uint8_t *data, size_t size, int doc_ret)
{
	struct cgtrace_doc *doc = NULL;
	char err[512];
	struct cgtrace_read_options opts = {.warn = fuzz_quiet};
	int ret = cgtrace_doc_read_mem_flags("fuzz", data, size, &opts,
					     CGTRACE_READ_STREAM_MEMORY | CGTRACE_READ_SKIP_STACKS,
					     &doc, err, sizeof(err));
	if (doc_ret == 0 && ret != 0) {
		fprintf(stderr, "a read skipping stacks refuses a good trace: '%s'\n", err);
		abort();
	}
	assert(ret == 0 || (strncmp(err, "fuzz", 4) == 0 &&
			    (!strchr(err, '\n') || strstr(err, "unsupported trace schema"))));
	cgtrace_doc_free(doc);
}

static void check_file(const uint8_t *data, size_t size)
{
	struct cgtrace_doc *doc = NULL;
	char err[512];
	struct cgtrace_read_options opts = {.warn = fuzz_quiet};
	int ret = cgtrace_doc_read_mem("fuzz", data, size, &opts, &doc, err, sizeof(err));
	check_stream(data, size, ret, err, doc);
	check_streamed(data, size, ret, err);
	check_skipping(data, size, ret);
	if (ret == 0) {
		check_round_trip(data, size, doc);
		cgtrace_doc_free(doc);
	} else {
		/*
		 * One line naming the input. Known exception, JSONL's as well: the
		 * schema rule quotes the value as it is, a newline in it included.
		 */
		assert(strncmp(err, "fuzz", 4) == 0);
		assert(!strchr(err, '\n') || strstr(err, "unsupported trace schema"));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size >= 8 && memcmp(data, CG_COMPACT_MAGIC, 8) == 0) {
		check_file(data, size);
		return 0;
	}
	size_t len;
	uint8_t *file = wrap(data, size, &len);
	check_file(file, len);
	free(file);
	return 0;
}
