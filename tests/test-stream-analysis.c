/* SPDX-License-Identifier: MIT */
/*
 * Streamed documents (CGTRACE_READ_STREAM_MEMORY): the memory analysis made
 * while reading agrees with the full one, field for field, on generated
 * traces and on every test trace; a trace going back in time is read again
 * in full with one warning, from a file, memory or a pipe; the document's
 * heap stays flat while the record count grows.
 */
#include <dirent.h>
#include <stdarg.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#include "doc.h"
#include "memory_stream.h"
#include "stream_sink.h"
#include "stream_window.h"
#include "test-gen.h"
#include "test-util.h"
#include "test-main.h"

#define FALLBACK_NOTE "t.jsonl: memory records out of timestamp order; analysed in memory"

/* ---- generated traces ---- */


struct gen {
	unsigned seed;
	size_t records;
	unsigned ids;       /* distinct tensor ids */
	bool out_of_order;  /* one memory record goes back in time, to 0 */
	bool late_backward; /* the backward span starts after its first memory records */
};

static const char *const devices[] = {"cpu", "cuda:0", "cuda:1"};
static const char *const cats[] = {"parameter", "activation", "gradient", "optimizer", "other"};
static const char *const spans[] = {"s1", "s2", "s3", "ghost"};

/* Ids in canonical hex, hex that is not canonical, and names. */
static void tensor_id(char *buf, size_t len, unsigned k)
{
	switch (k % 4) {
	case 0:
	case 1:
		snprintf(buf, len, "0x%x", k * 0x10u);
		break;
	case 2:
		snprintf(buf, len, "0x0%x", k);
		break;
	default:
		snprintf(buf, len, "t%u", k);
	}
}

static char *generate(const struct gen *g)
{
	struct text t = {0};
	rnd_state = g->seed;
	put(&t, "%s", META_LINE);
	put(&t, "{\"kind\":\"span_start\",\"id\":\"s1\",\"parent_id\":null,\"name\":\"root\","
		"\"start_ns\":0,\"span_kind\":\"function\",\"step\":\"forward\"}\n");
	if (!g->late_backward)
		put(&t,
		    "{\"kind\":\"span_start\",\"id\":\"s2\",\"parent_id\":\"s1\",\"name\":\"b\","
		    "\"start_ns\":0,\"span_kind\":\"function\",\"step\":\"backward\"}\n");
	uint64_t ts = 1;
	size_t back_at = g->out_of_order ? g->records / 2 : SIZE_MAX;
	for (size_t i = 0; i < g->records; i++) {
		if (g->late_backward && i == g->records / 3)
			put(&t, "{\"kind\":\"span_start\",\"id\":\"s2\",\"parent_id\":\"s1\","
				"\"name\":\"b\",\"start_ns\":0,\"span_kind\":\"function\","
				"\"step\":\"backward\"}\n");
		if (rnd(50) == 0) {
			const char *dev = devices[rnd(3)];
			put(&t,
			    "{\"kind\":\"device_memory\",\"timestamp_ns\":%llu,\"device\":\"%s\","
			    "\"used_bytes\":%llu,\"free_bytes\":%llu%s}\n",
			    (unsigned long long)ts, dev, (unsigned long long)rnd(1000),
			    (unsigned long long)rnd(100000),
			    rnd(4) ? "" : ",\"oom_request_bytes\":7");
		}
		/* Equal timestamps often, so groups are sorted before they are applied. */
		if (rnd(3) == 0)
			ts += 1 + rnd(5);
		uint64_t when = i == back_at ? 0 : ts;
		char id[32];
		tensor_id(id, sizeof(id), (unsigned)rnd(g->ids));
		uint64_t bytes = 1 + rnd(4096);
		const char *shape = rnd(3) == 0 ? "[]" : rnd(2) ? "[2,3]" : NULL;
		char shape_buf[32];
		if (!shape) {
			snprintf(shape_buf, sizeof(shape_buf), "[%llu]", (unsigned long long)bytes);
			shape = shape_buf;
		}
		put(&t,
		    "{\"kind\":\"memory\",\"timestamp_ns\":%llu,\"tensor_id\":\"%s\","
		    "\"span_id\":\"%s\",\"op_name\":%s,\"device\":\"%s\",\"bytes\":%llu,"
		    "\"action\":\"%s\",\"shape\":%s,\"dtype\":\"u8\",\"category\":\"%s\"}\n",
		    (unsigned long long)when, id, spans[rnd(4)], rnd(3) ? "\"malloc\"" : "null",
		    devices[rnd(3)], (unsigned long long)bytes, rnd(5) < 3 ? "alloc" : "free",
		    shape, cats[rnd(5)]);
	}
	if (g->late_backward && g->records < 3)
		put(&t,
		    "{\"kind\":\"span_start\",\"id\":\"s2\",\"parent_id\":\"s1\",\"name\":\"b\","
		    "\"start_ns\":0,\"span_kind\":\"function\",\"step\":\"backward\"}\n");
	put(&t, "{\"kind\":\"span_end\",\"id\":\"s1\",\"duration_ns\":%llu}\n",
	    (unsigned long long)ts);
	return t.p;
}

/* ---- comparing a full and a streamed document ---- */

static struct cgtrace_doc *read_text(const char *name, const char *text, size_t len,
				     unsigned flags, struct warn_log *w, char *err, size_t errlen,
				     int *ret)
{
	struct cgtrace_doc *doc = NULL;
	struct cgtrace_read_options opts = {.warn = w ? test_warn : NULL, .user = w};
	*ret = cgtrace_doc_read_mem_flags(name, text, len, &opts, flags, &doc, err, errlen);
	return doc;
}

static void same_str(const char *a, const char *b)
{
	if (!a || !b)
		ck_assert_ptr_eq(a, b);
	else
		ck_assert_str_eq(a, b);
}

static void same_report(const struct cgtrace_memory_report *a,
			const struct cgtrace_memory_report *b)
{
	ck_assert_uint_eq(a->alloc_count, b->alloc_count);
	ck_assert_uint_eq(a->free_count, b->free_count);
	ck_assert_uint_eq(a->total_alloc_bytes, b->total_alloc_bytes);
	ck_assert_uint_eq(a->peak_bytes, b->peak_bytes);
	ck_assert_uint_eq(a->peak_timestamp_ns, b->peak_timestamp_ns);
	ck_assert_str_eq(a->peak_device, b->peak_device);
	for (int c = 0; c < CGTRACE_CAT_COUNT; c++)
		ck_assert_uint_eq(a->peak_by_category[c], b->peak_by_category[c]);
	ck_assert_uint_eq(a->autograd_retained_bytes, b->autograd_retained_bytes);
	ck_assert_uint_eq(a->realloc_live_count, b->realloc_live_count);
	ck_assert_uint_eq(a->unknown_free_count, b->unknown_free_count);
	ck_assert_uint_eq(a->n_devices, b->n_devices);
	for (size_t i = 0; i < a->n_devices; i++) {
		const struct cgtrace_device_peak *x = &a->by_device[i], *y = &b->by_device[i];
		ck_assert_str_eq(x->device, y->device);
		ck_assert_uint_eq(x->capacity_bytes, y->capacity_bytes);
		ck_assert_uint_eq(x->peak_bytes, y->peak_bytes);
		ck_assert_uint_eq(x->peak_timestamp_ns, y->peak_timestamp_ns);
		ck_assert_uint_eq(x->alloc_count, y->alloc_count);
		ck_assert_uint_eq(x->free_count, y->free_count);
		ck_assert_uint_eq(x->final_bytes, y->final_bytes);
	}
	ck_assert_uint_eq(a->n_breakdown, b->n_breakdown);
	for (size_t i = 0; i < a->n_breakdown; i++) {
		const struct cgtrace_live_alloc *x = &a->peak_breakdown[i],
		                                *y = &b->peak_breakdown[i];
		ck_assert_str_eq(x->tensor_id, y->tensor_id);
		same_str(x->span_id, y->span_id);
		same_str(x->op_name, y->op_name);
		same_str(x->dtype, y->dtype);
		ck_assert_str_eq(x->device, y->device);
		ck_assert_uint_eq(x->bytes, y->bytes);
		ck_assert_uint_eq(x->category, y->category);
		ck_assert_uint_eq(x->timestamp_ns, y->timestamp_ns);
		ck_assert_uint_eq(x->ndim, y->ndim);
		for (size_t k = 0; k < x->ndim; k++)
			ck_assert_uint_eq(x->shape[k], y->shape[k]);
	}
}

static void same_summary(const struct cgtrace_summary *a, const struct cgtrace_summary *b)
{
	ck_assert_mem_eq(a, b, sizeof(*a));
}

/* The full and the streamed document of one text agree on every analysis. */
static void agree(const struct cgtrace_doc *full, const struct cgtrace_doc *streamed)
{
	struct cgtrace_memory_report *a, *b;
	ck_assert_int_eq(cgtrace_memory_analyze(full, &a), 0);
	ck_assert_int_eq(cgtrace_memory_analyze(streamed, &b), 0);
	same_report(a, b);
	cgtrace_memory_report_free(a);
	cgtrace_memory_report_free(b);
	struct cgtrace_summary sa, sb;
	ck_assert_int_eq(cgtrace_doc_summary_report(full, &sa, &a), 0);
	ck_assert_int_eq(cgtrace_doc_summary_report(streamed, &sb, &b), 0);
	same_summary(&sa, &sb);
	same_report(a, b);
	cgtrace_memory_report_free(a);
	cgtrace_memory_report_free(b);
	ck_assert_int_eq(cgtrace_doc_summary(streamed, &sb), 0);
	same_summary(&sa, &sb);
	for (int k = 0; k < CGTRACE_KIND_COUNT; k++)
		ck_assert_uint_eq(cgtrace_doc_records(full, (enum cgtrace_kind)k),
				  cgtrace_doc_records(streamed, (enum cgtrace_kind)k));
	/* What the streamed document keeps of the checkpoints: the OOMs, in order. */
	size_t n = 0;
	bool all = !cgtrace_doc_streamed(streamed);
	for (size_t i = 0; i < cgtrace_doc_count(full, CGTRACE_KIND_DEVICE_MEMORY); i++) {
		struct cgtrace_device_memory x, y;
		cgtrace_doc_device_memory(full, i, &x);
		if (!x.has_oom_request && !all)
			continue;
		ck_assert_uint_lt(n, cgtrace_doc_count(streamed, CGTRACE_KIND_DEVICE_MEMORY));
		cgtrace_doc_device_memory(streamed, n++, &y);
		ck_assert_uint_eq(x.timestamp_ns, y.timestamp_ns);
		ck_assert_str_eq(x.device, y.device);
		ck_assert_uint_eq(x.oom_request_bytes, y.oom_request_bytes);
	}
	ck_assert_uint_eq(n, cgtrace_doc_count(streamed, CGTRACE_KIND_DEVICE_MEMORY));
	ck_assert_uint_eq(cgtrace_doc_device_info_conflicts(full),
			  cgtrace_doc_device_info_conflicts(streamed));
}

/* Reads text both ways; returns whether the streamed read fell back. */
static bool check_text(const char *text)
{
	char e1[1024], e2[1024];
	int r1, r2;
	struct warn_log w = {0};
	struct cgtrace_doc *full = read_text("t.jsonl", text, strlen(text), 0, NULL, e1,
					     sizeof(e1), &r1);
	struct cgtrace_doc *st = read_text("t.jsonl", text, strlen(text),
					   CGTRACE_READ_STREAM_MEMORY, &w, e2, sizeof(e2), &r2);
	ck_assert_int_eq(r1, 0);
	ck_assert_int_eq(r2, 0);
	bool fell_back = !cgtrace_doc_streamed(st);
	ck_assert_str_eq(w.text, fell_back ? FALLBACK_NOTE "\n" : "");
	agree(full, st);
	cgtrace_doc_free(full);
	cgtrace_doc_free(st);
	return fell_back;
}

/* text read with flags; the read succeeds. */
static struct cgtrace_doc *read_as(const char *text, unsigned flags)
{
	char err[256];
	int r;
	struct cgtrace_doc *d = read_text("t.jsonl", text, strlen(text), flags, NULL, err,
					  sizeof(err), &r);
	ck_assert_msg(r == 0, "%s", err);
	return d;
}

/* The memory report of text read streamed (*d, the caller's), once both reads agree on it. */
static struct cgtrace_memory_report *agreed_report(const char *text, struct cgtrace_doc **d)
{
	struct cgtrace_memory_report *rep;
	ck_assert(!check_text(text));
	*d = read_as(text, CGTRACE_READ_STREAM_MEMORY);
	ck_assert_int_eq(cgtrace_memory_analyze(*d, &rep), 0);
	return rep;
}

START_TEST(random_interleavings_agree)
{
	for (unsigned seed = 1; seed <= 40; seed++) {
		struct gen g = {.seed = seed, .records = 50 + seed * 37, .ids = 4 + seed % 40,
				.late_backward = seed % 3 == 0};
		char *text = generate(&g);
		ck_assert_msg(!check_text(text), "seed %u fell back", seed);
		free(text);
	}
}
END_TEST

START_TEST(out_of_order_falls_back_with_one_warning)
{
	cg_stream_window = 0; /* records wait only for their timestamp group */
	for (unsigned seed = 1; seed <= 10; seed++) {
		struct gen g = {.seed = seed, .records = 400, .ids = 30, .out_of_order = true};
		char *text = generate(&g);
		ck_assert_msg(check_text(text), "seed %u did not fall back", seed);
		free(text);
	}
}
END_TEST

/* Back in time within the window: the records wait and apply in order, no second read. */
START_TEST(out_of_order_within_the_window_streams)
{
	for (unsigned seed = 1; seed <= 10; seed++) {
		struct gen g = {.seed = seed, .records = 400, .ids = 30, .out_of_order = true};
		char *text = generate(&g);
		ck_assert_msg(!check_text(text), "seed %u fell back", seed);
		free(text);
	}
}
END_TEST

/*
 * Threads' records in blocks, as a writer with a buffer per thread leaves
 * them: each thread in time order, blocks interleaved, clocks overlapping.
 */
static char *interleaved(unsigned threads, unsigned per_block, unsigned blocks, unsigned seed)
{
	struct text t = {0};
	rnd_state = seed;
	put(&t, "%s", META_LINE);
	uint64_t clock[8] = {0}, live[8] = {0};
	for (unsigned b = 0; b < blocks; b++) {
		unsigned th = b % threads;
		for (unsigned k = 0; k < per_block; k++) {
			clock[th] += rnd(3); /* equal timestamps too, within and across threads */
			bool is_free = live[th] && rnd(2);
			uint64_t id = 0x1000u * (th + 1) + (is_free ? live[th] - 1 : live[th]) % 97;
			live[th] = is_free ? live[th] - 1 : live[th] + 1;
			put(&t,
			    "{\"kind\":\"memory\",\"timestamp_ns\":%llu,\"tensor_id\":\"0x%llx\","
			    "\"span_id\":\"s1\",\"op_name\":\"malloc\",\"device\":\"cpu\","
			    "\"bytes\":%u,\"action\":\"%s\",\"shape\":[%u],\"dtype\":\"u8\","
			    "\"category\":\"other\"}\n",
			    (unsigned long long)clock[th], (unsigned long long)id, 16 + th,
			    is_free ? "free" : "alloc", 16 + th);
		}
	}
	return t.p;
}

START_TEST(threads_in_blocks_stream_and_agree)
{
	for (unsigned seed = 1; seed <= 6; seed++) {
		char *text = interleaved(1 + seed % 4, 20 + seed * 30, 40, seed);
		ck_assert_msg(!check_text(text), "seed %u fell back", seed);
		free(text);
	}
	/* Without a window the same trace is read again in full, with the same answers. */
	cg_stream_window = 0;
	char *text = interleaved(2, 100, 10, 9);
	ck_assert(check_text(text));
	free(text);
}
END_TEST

/* Without a callback the note comes first in err, then the full read's own warning. */
START_TEST(fallback_note_and_truncation_in_err)
{
	cg_stream_window = 0; /* records wait only for their timestamp group */
	struct gen g = {.seed = 3, .records = 100, .ids = 10, .out_of_order = true};
	char *text = generate(&g);
	size_t len = strlen(text) - 5; /* the last line cut short */
	char err[1024];
	int r;
	struct cgtrace_doc *d = read_text("t.jsonl", text, len, CGTRACE_READ_STREAM_MEMORY, NULL,
					  err, sizeof(err), &r);
	ck_assert_int_eq(r, 0);
	ck_assert(!cgtrace_doc_streamed(d));
	ck_assert(cgtrace_doc_truncated(d));
	ck_assert_msg(strncmp(err, FALLBACK_NOTE "\nt.jsonl:", sizeof(FALLBACK_NOTE) + 8) == 0,
		      "%s", err);
	ck_assert_ptr_nonnull(strstr(err, "trace truncated, incomplete last record ignored"));
	cgtrace_doc_free(d);
	free(text);
}
END_TEST

START_TEST(equal_timestamps_sorted_before_applied)
{
	/* All at one instant, in file order free before alloc and ids descending. */
	const char *text = META_LINE
	    "{\"kind\":\"memory\",\"timestamp_ns\":5,\"tensor_id\":\"0xb\",\"span_id\":\"s1\","
	    "\"op_name\":null,\"device\":\"cpu\",\"bytes\":7,\"action\":\"free\",\"shape\":[7],"
	    "\"dtype\":\"u8\",\"category\":\"other\"}\n"
	    "{\"kind\":\"memory\",\"timestamp_ns\":5,\"tensor_id\":\"0xb\",\"span_id\":\"s1\","
	    "\"op_name\":null,\"device\":\"cpu\",\"bytes\":7,\"action\":\"alloc\",\"shape\":[7],"
	    "\"dtype\":\"u8\",\"category\":\"other\"}\n"
	    "{\"kind\":\"memory\",\"timestamp_ns\":5,\"tensor_id\":\"0xa\",\"span_id\":\"s1\","
	    "\"op_name\":null,\"device\":\"cpu\",\"bytes\":9,\"action\":\"alloc\",\"shape\":[9],"
	    "\"dtype\":\"u8\",\"category\":\"other\"}\n"
	    "{\"kind\":\"memory\",\"timestamp_ns\":5,\"tensor_id\":\"0xa\",\"span_id\":\"s1\","
	    "\"op_name\":null,\"device\":\"cpu\",\"bytes\":9,\"action\":\"alloc\",\"shape\":[9],"
	    "\"dtype\":\"u8\",\"category\":\"other\"}\n";
	struct cgtrace_doc *d;
	struct cgtrace_memory_report *rep = agreed_report(text, &d);
	/* Allocs first: 0xa twice (one a re-alloc), 0xb, then 0xb's free. */
	ck_assert_uint_eq(rep->realloc_live_count, 1);
	ck_assert_uint_eq(rep->unknown_free_count, 0);
	ck_assert_uint_eq(rep->peak_bytes, 25);
	ck_assert_uint_eq(rep->n_breakdown, 2);
	ck_assert_str_eq(rep->peak_breakdown[0].tensor_id, "0xa");
	ck_assert_uint_eq(rep->peak_breakdown[0].ndim, 1);
	ck_assert_uint_eq(rep->peak_breakdown[0].shape[0], 9);
	ck_assert_uint_eq(rep->by_device[0].final_bytes, 18);
	cgtrace_memory_report_free(rep);
	cgtrace_doc_free(d);
}
END_TEST

#define MEM(ts, id, bytes, action)                                                           \
	"{\"kind\":\"memory\",\"timestamp_ns\":" #ts ",\"tensor_id\":\"" id                  \
	"\",\"span_id\":\"s1\",\"op_name\":null,\"device\":\"cpu\",\"bytes\":" #bytes        \
	",\"action\":\"" action "\",\"shape\":[],\"dtype\":\"u8\",\"category\":\"other\"}\n"

/* Coming back to the peak is no new peak: its time and live set stay the first's. */
START_TEST(peak_tie_keeps_the_first)
{
	const char *text = META_LINE MEM(1, "0x10", 100, "alloc") MEM(2, "0x10", 100, "free")
		MEM(3, "t1", 100, "alloc");
	struct cgtrace_doc *d;
	struct cgtrace_memory_report *rep = agreed_report(text, &d);
	ck_assert_uint_eq(rep->peak_timestamp_ns, 1);
	ck_assert_uint_eq(rep->by_device[0].peak_timestamp_ns, 1);
	ck_assert_uint_eq(rep->n_breakdown, 1);
	ck_assert_str_eq(rep->peak_breakdown[0].tensor_id, "0x10");
	ck_assert_uint_eq(rep->peak_breakdown[0].ndim, 0);
	cgtrace_memory_report_free(rep);
	cgtrace_doc_free(d);
}
END_TEST

START_TEST(streamed_doc_has_no_records_to_replay)
{
	struct gen g = {.seed = 9, .records = 50, .ids = 5};
	char *text = generate(&g);
	struct cgtrace_doc *d = read_as(text, CGTRACE_READ_STREAM_MEMORY);
	ck_assert(cgtrace_doc_streamed(d));
	ck_assert_uint_eq(cgtrace_doc_count(d, CGTRACE_KIND_MEMORY), 0);
	ck_assert_uint_eq(cgtrace_doc_records(d, CGTRACE_KIND_MEMORY), 50);
	ck_assert_int_eq(cgtrace_memory_timeline(d, NULL, NULL), -ENODATA);
	ck_assert_int_eq(cgtrace_doc_export_jsonl(d, -1), -ENODATA);
	cgtrace_doc_free(d);
	free(text);
}
END_TEST

/* ---- files and pipes ---- */

struct points {
	struct text t;
	int n, stop_after;
};

static int collect(void *user, const struct cgtrace_timeline_point *p);
static char *full_timeline(const char *text);

static struct cgtrace_doc *read_path(const char *path, struct warn_log *w)
{
	struct cgtrace_doc *doc = NULL;
	struct cgtrace_read_options opts = {.warn = test_warn, .user = w};
	char err[1024];
	ck_assert_msg(cgtrace_doc_read_flags(path, &opts, CGTRACE_READ_STREAM_MEMORY, &doc, err,
					     sizeof(err)) == 0,
		      "%s", err);
	return doc;
}

static struct cgtrace_doc *read_full(const char *text)
{
	return read_as(text, 0);
}

/* text in a file of its own under /tmp: its path, until the next call. */
static char *temp_trace(const char *text)
{
	static char path[64];
	snprintf(path, sizeof(path), "/tmp/cgtrace-test-XXXXXX");
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

START_TEST(file_is_read_again_from_its_start)
{
	cg_stream_window = 0; /* records wait only for their timestamp group */
	struct gen g = {.seed = 5, .records = 300, .ids = 20, .out_of_order = true};
	char *text = generate(&g), *path = temp_trace(text);
	struct warn_log w = {0};
	struct cgtrace_doc *d = read_path(path, &w), *full = read_full(text);
	unlink(path);
	ck_assert_int_eq(w.count, 1);
	ck_assert_ptr_nonnull(strstr(w.text, ": memory records out of timestamp order; analysed "
					     "in memory\n"));
	ck_assert(!cgtrace_doc_streamed(d));
	agree(full, d);
	cgtrace_doc_free(d);
	cgtrace_doc_free(full);
	free(text);
}
END_TEST

/* Standard input as a pipe: spooled as it is read, the second pass reads the spool. */
static void stdin_pipe_case(bool out_of_order, bool timeline)
{
	cg_stream_window = 0; /* records wait only for their timestamp group */
	struct gen g = {.seed = 6, .records = 20000, .ids = 50, .out_of_order = out_of_order};
	char *text = generate(&g);
	int p[2];
	ck_assert_int_eq(pipe(p), 0);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(p[0]);
		size_t n = strlen(text);
		for (size_t at = 0; at < n;) {
			ssize_t k = write(p[1], text + at, n - at);
			if (k <= 0)
				_exit(1);
			at += (size_t)k;
		}
		_exit(0);
	}
	close(p[1]);
	int saved = dup(0);
	dup2(p[0], 0);
	close(p[0]);
	struct warn_log w = {0};
	struct cgtrace_doc *d = NULL, *full = read_full(text);
	if (timeline) {
		struct points s = {0};
		struct cgtrace_read_options opts = {.warn = test_warn, .user = &w};
		char err[1024], *want = full_timeline(text);
		put(&s.t, "%s", "");
		ck_assert_int_eq(
		    cgtrace_memory_timeline_read("-", &opts, collect, &s, err, sizeof(err)), 0);
		ck_assert_str_eq(s.t.p, want);
		free(s.t.p);
		free(want);
	} else {
		d = read_path("-", &w);
	}
	dup2(saved, 0);
	close(saved);
	int status;
	waitpid(pid, &status, 0);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ck_assert_str_eq(w.text, out_of_order ? "<stdin>: memory records out of timestamp order; "
						"analysed in memory\n"
					      : "");
	if (d) {
		ck_assert(cgtrace_doc_streamed(d) == !out_of_order);
		agree(full, d);
	}
	cgtrace_doc_free(d);
	cgtrace_doc_free(full);
	free(text);
}

START_TEST(stdin_pipe_is_spooled)
{
	stdin_pipe_case(true, false);
	stdin_pipe_case(false, false);
	stdin_pipe_case(true, true);
	stdin_pipe_case(false, true);
}
END_TEST

/* ---- the streamed timeline ---- */

static int collect(void *user, const struct cgtrace_timeline_point *p)
{
	struct points *s = user;
	put(&s->t, "%llu %s %llu %d %llu %zu\n", (unsigned long long)p->timestamp_ns, p->device,
	    (unsigned long long)p->live_bytes, p->has_free, (unsigned long long)p->free_bytes,
	    p->record);
	return ++s->n == s->stop_after ? 7 : 0;
}

/* The full document's timeline of text, as collect() writes it. */
static char *full_timeline(const char *text)
{
	struct cgtrace_doc *d = read_full(text);
	struct points s = {0};
	put(&s.t, "%s", "");
	ck_assert_int_eq(cgtrace_memory_timeline(d, collect, &s), 0);
	cgtrace_doc_free(d);
	return s.t.p;
}

START_TEST(timeline_read_agrees_with_the_full_timeline)
{
	cg_stream_window = 0; /* records wait only for their timestamp group */
	for (unsigned seed = 1; seed <= 6; seed++) {
		struct gen g = {.seed = seed, .records = 300 + seed * 50, .ids = 25,
				.out_of_order = seed % 2 == 0};
		char *text = generate(&g), *want = full_timeline(text), *path = temp_trace(text);
		struct points s = {0};
		struct warn_log w = {0};
		struct cgtrace_read_options opts = {.warn = test_warn, .user = &w};
		char err[1024];
		put(&s.t, "%s", "");
		int r = cgtrace_memory_timeline_read(path, &opts, collect, &s, err, sizeof(err));
		unlink(path);
		ck_assert_msg(r == 0, "%s", err);
		ck_assert_str_eq(s.t.p, want);
		ck_assert_int_eq(w.count, g.out_of_order ? 1 : 0);
		free(s.t.p);
		free(want);
		free(text);
	}
}
END_TEST

START_TEST(timeline_read_stops_where_fn_says)
{
	struct gen g = {.seed = 2, .records = 200, .ids = 25};
	char *text = generate(&g), *path = temp_trace(text);
	struct points s = {.stop_after = 5};
	char err[256];
	put(&s.t, "%s", "");
	ck_assert_int_eq(cgtrace_memory_timeline_read(path, NULL, collect, &s, err, sizeof(err)),
	                 7);
	ck_assert_int_eq(s.n, 5);
	ck_assert_int_eq(cgtrace_memory_timeline_read("/nonexistent/t.jsonl", NULL, collect, &s,
	                                              err, sizeof(err)),
	                 -ENOENT);
	ck_assert_str_eq(err, "/nonexistent/t.jsonl: No such file or directory");
	unlink(path);
	free(s.t.p);
	free(text);
}
END_TEST

/* ---- every test trace ---- */

/* Both reads fail alike or succeed alike, and then agree. */
static void check_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	ck_assert_ptr_nonnull(f);
	struct text t = {0};
	char buf[65536];
	size_t n;
	put(&t, "%s", "");
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0) {
		if (t.cap - t.len < n + 1) {
			t.cap = (t.len + n) * 2 + 1;
			t.p = realloc(t.p, t.cap);
		}
		memcpy(t.p + t.len, buf, n);
		t.len += n;
	}
	fclose(f);
	char e1[1024], e2[2048];
	int r1, r2;
	struct cgtrace_doc *full = read_text(path, t.p, t.len, 0, NULL, e1, sizeof(e1), &r1);
	struct cgtrace_doc *st = read_text(path, t.p, t.len, CGTRACE_READ_STREAM_MEMORY, NULL, e2,
					   sizeof(e2), &r2);
	ck_assert_msg(r1 == r2, "%s: %d vs %d", path, r1, r2);
	/* The error or warning is the same, after the fallback's note when there was one. */
	const char *rest = e2;
	char note[1200];
	snprintf(note, sizeof(note),
	         "%s: memory records out of timestamp order; analysed in memory", path);
	if (r2 == 0 && st && !cgtrace_doc_streamed(st)) {
		ck_assert_msg(strncmp(e2, note, strlen(note)) == 0, "%s: %s", path, e2);
		rest = e2 + strlen(note) + (e2[strlen(note)] == '\n');
	}
	ck_assert_msg(strcmp(e1, rest) == 0, "%s: '%s' vs '%s'", path, e1, rest);
	if (r1 == 0)
		agree(full, st);
	cgtrace_doc_free(full);
	cgtrace_doc_free(st);
	free(t.p);
}

static size_t check_dir(const char *dir)
{
	DIR *d = opendir(dir);
	ck_assert_msg(d != NULL, "%s", dir);
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		check_file(path);
		n++;
	}
	closedir(d);
	return n;
}

START_TEST(test_traces_agree)
{
	const char *dirs = getenv("STREAM_TEST_DIRS");
	if (!dirs)
		return;
	char *copy = strdup(dirs), *save, *dir;
	size_t n = 0;
	for (dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save))
		n += check_dir(dir);
	free(copy);
	ck_assert_uint_gt(n, 10);
}
END_TEST

/* ---- memory bounds ---- */

/* Many records, few live at once: alloc and free cycling over 64 ids. */
static char *steady(size_t records)
{
	struct text t = {0};
	put(&t, "%s", META_LINE);
	for (size_t i = 0; i < records; i++) {
		unsigned id = (unsigned)(i / 2 % 64);
		put(&t,
		    "{\"kind\":\"memory\",\"timestamp_ns\":%zu,\"tensor_id\":\"0x%x\","
		    "\"span_id\":\"s1\",\"op_name\":\"malloc\",\"device\":\"cpu\",\"bytes\":%u,"
		    "\"action\":\"%s\",\"shape\":[%u],\"dtype\":\"u8\",\"category\":\"other\"}\n",
		    i, 0x1000u + id * 16, 64 + id, i % 2 ? "free" : "alloc", 64 + id);
	}
	return t.p;
}

#define VEC_BYTES(v, type) ((v).cap * sizeof(type))

/* Bytes the document's tables hold (big ones are mappings of their own, which malloc does not
 * count). */
static size_t doc_bytes(const struct cgtrace_doc *d)
{
	size_t n = d->pool.data_cap + d->pool.offsets_cap * 4 + (d->pool.mask + 1) * 8;
	n += VEC_BYTES(d->spans, struct cg_span) + VEC_BYTES(d->ops, struct cg_op) +
	     VEC_BYTES(d->tensors, struct cg_tensor) + VEC_BYTES(d->memory, struct cg_mem) +
	     VEC_BYTES(d->classes, struct cg_mem_class) + VEC_BYTES(d->mem_shapes, uint32_t) +
	     VEC_BYTES(d->devmem, struct cg_devmem) + VEC_BYTES(d->devices, uint32_t) +
	     VEC_BYTES(d->shapes, uint64_t) + VEC_BYTES(d->str_lists, uint32_t);
	const struct cg_stream *s = cg_stream_of(d);
	if (s)
		n += s->cap_ent * sizeof(*s->ent) + (s->mask + 1) * sizeof(*s->slots) +
		     VEC_BYTES(s->born, uint32_t) + VEC_BYTES(s->gone, uint32_t) +
		     s->last_id.cap +
		     VEC_BYTES(s->devs, struct cg_stream_dev) + s->class_state.cap +
		     VEC_BYTES(s->candidates, struct cg_stream_candidate);
	return n;
}

/* Heap held by the document read from text: malloc's count and the document's tables. */
static size_t doc_heap(const char *text, unsigned flags)
{
	struct mallinfo2 m = mallinfo2();
	size_t before = m.uordblks;
	char err[256];
	int r;
	struct cgtrace_doc *d = read_text("t.jsonl", text, strlen(text), flags, NULL, err,
					  sizeof(err), &r);
	ck_assert_int_eq(r, 0);
	m = mallinfo2();
	size_t held = (m.uordblks > before ? m.uordblks - before : 0) + doc_bytes(d);
	cgtrace_doc_free(d);
	return held;
}

START_TEST(streamed_heap_stays_flat)
{
	char *small = steady(20000), *big = steady(200000);
	size_t s_small = doc_heap(small, CGTRACE_READ_STREAM_MEMORY);
	size_t s_big = doc_heap(big, CGTRACE_READ_STREAM_MEMORY);
	size_t f_small = doc_heap(small, 0), f_big = doc_heap(big, 0);
	/* The full document grows with the records, so the measure can tell. */
	ck_assert_msg(f_big > f_small + 2000000, "full %zu -> %zu", f_small, f_big);
	ck_assert_msg(s_big <= s_small + 16384, "streamed %zu -> %zu", s_small, s_big);
	free(small);
	free(big);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("stream-analysis");
	TCase *tc = test_tcase(s, "stream:agree", 60);
	test_add(tc, random_interleavings_agree, equal_timestamps_sorted_before_applied,
		 peak_tie_keeps_the_first,
		 streamed_doc_has_no_records_to_replay, test_traces_agree,
		 out_of_order_within_the_window_streams, threads_in_blocks_stream_and_agree);
	tc = test_tcase(s, "stream:fallback", 60);
	test_add(tc, out_of_order_falls_back_with_one_warning, fallback_note_and_truncation_in_err,
		 file_is_read_again_from_its_start, stdin_pipe_is_spooled);
	tc = test_tcase(s, "stream:timeline", 60);
	test_add(tc, timeline_read_agrees_with_the_full_timeline,
	         timeline_read_stops_where_fn_says);
	tc = test_tcase(s, "stream:bounds", 60);
	test_add(tc, streamed_heap_stays_flat);
	return s;
}

TEST_MAIN(suite);
