/* SPDX-License-Identifier: MIT */
/*
 * Views (cgtrace_view_read): the grid keeps every device's true peak at
 * its instant, categories sum to the bucket's total, carried buckets hold
 * what was live, the largest allocations keep their lifetimes, checkpoints
 * reduce per bucket with OOMs kept, and a trace read in full (records back
 * in time) gives the same view as the streamed read of the same records.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <unistd.h>

#include "stream_window.h"
#include "peak_series.h"
#include "test-main.h"
#include "test-gen.h"
#include "test-util.h"

static char dir[] = "/tmp/cgtrace-view-XXXXXX";

static const char *write_trace(const char *name, const char *text)
{
	static char path[256];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
	return path;
}

static struct cgtrace_view *view_of(const char *text, size_t buckets, size_t allocs)
{
	const char *path = write_trace("t.jsonl", text);
	struct cgtrace_view_options o = {.buckets = buckets, .max_allocs = allocs};
	struct cgtrace_view *v = NULL;
	char err[1024];
	int r = cgtrace_view_read(path, &o, &v, err, sizeof(err));
	ck_assert_msg(r == 0, "%s", err);
	return v;
}

#define MEM(ts, id, dev, bytes, act, cat)                                                     \
	"{\"kind\":\"memory\",\"timestamp_ns\":" #ts ",\"tensor_id\":\"" id                     \
	"\",\"span_id\":\"s1\",\"device\":\"" dev "\",\"bytes\":" #bytes ",\"action\":\"" act     \
	"\",\"dtype\":\"u8\",\"category\":\"" cat "\"}\n"
#define SPAN1 "{\"kind\":\"span_start\",\"id\":\"s1\",\"name\":\"main\",\"start_ns\":0,\"span_kind\":\"function\"}\n"

/* Two devices: cpu peaks at 350 (t=30), cuda:0 at 1000 (t=50), inside buckets. */
static const char two_dev[] = META_LINE SPAN1
	MEM(10, "a", "cpu", 100, "alloc", "parameter")
	MEM(20, "b", "cpu", 200, "alloc", "activation")
	MEM(30, "c", "cpu", 50, "alloc", "gradient")
	MEM(35, "b", "cpu", 200, "free", "activation")
	MEM(40, "g", "cuda:0", 600, "alloc", "activation")
	MEM(50, "h", "cuda:0", 400, "alloc", "optimizer")
	MEM(55, "g", "cuda:0", 600, "free", "activation")
	MEM(990, "c", "cpu", 50, "free", "gradient")
	"{\"kind\":\"device_memory\",\"timestamp_ns\":45,\"device\":\"cuda:0\",\"used_bytes\":700,\"free_bytes\":300}\n"
	"{\"kind\":\"device_memory\",\"timestamp_ns\":46,\"device\":\"cuda:0\",\"used_bytes\":900,\"free_bytes\":100}\n"
	"{\"kind\":\"device_memory\",\"timestamp_ns\":47,\"device\":\"cuda:0\",\"used_bytes\":800,\"free_bytes\":200,\"oom_request_bytes\":4096}\n";

static const struct cgtrace_view_device *dev_named(const struct cgtrace_view *v, const char *name)
{
	for (size_t i = 0; i < v->n_devices; i++)
		if (strcmp(v->devices[i].device, name) == 0)
			return &v->devices[i];
	ck_abort_msg("no device %s", name);
	return NULL;
}

/* docs/views.md: an allocation live at bucket k's highest instant, as drawn_bytes counts it. */
static bool drawn_at(const struct cgtrace_view_alloc *a, const struct cgtrace_view_bucket *bk,
		     size_t k)
{
	uint64_t t = bk[k].max_ns;
	if (bk[k].max_bytes == (k ? bk[k - 1].end_bytes : 0)) /* carried in: before the records at t */
		return a->alloc_ns < t && (!a->freed || a->free_ns >= t);
	return a->alloc_ns <= t && (!a->freed || a->free_ns > t);
}

/* Where each kept allocation is drawn: the buckets it is live at, summing to drawn_bytes. */
static void check_alloc_live(const struct cgtrace_view *v)
{
	ck_assert(v->n_allocs == 0 || v->alloc_live);
	for (size_t d = 0; d < v->n_devices; d++) {
		const struct cgtrace_view_bucket *bk = v->devices[d].buckets;
		for (size_t k = 0; k < v->n_buckets; k++) {
			uint64_t sum = 0, count = 0;
			for (size_t i = 0; i < v->n_allocs; i++) {
				const struct cgtrace_view_alloc_live *l = &v->alloc_live[i];
				if (v->allocs[i].device != d)
					continue;
				bool in = l->first_bucket <= k && k < l->end_bucket;
				ck_assert_msg(in == drawn_at(&v->allocs[i], bk, k), "alloc %zu bucket %zu",
					      i, k);
				sum += in ? v->allocs[i].bytes : 0;
				count += in;
			}
			/* The view caps what equal timestamps let exceed the maximum. */
			ck_assert(sum == bk[k].drawn_bytes || bk[k].drawn_bytes == bk[k].max_bytes);
			ck_assert(count == bk[k].drawn_count ||
				  bk[k].drawn_count == bk[k].max_live_count);
		}
	}
	for (size_t i = 0; i < v->n_allocs; i++) {
		const struct cgtrace_view_alloc *a = &v->allocs[i];
		uint64_t t = v->devices[a->device].peak_ns;
		ck_assert_uint_le(v->alloc_live[i].first_bucket, v->alloc_live[i].end_bucket);
		ck_assert(v->alloc_live[i].at_peak ==
			  (a->alloc_ns <= t && (!a->freed || a->free_ns > t)));
	}
}

/* The highest bucket maximum of device d over the buckets [a, b] covers, counted out. */
static uint64_t highest_over(const struct cgtrace_view *v, size_t d, uint64_t a, uint64_t b)
{
	const struct cgtrace_view_bucket *bk = v->devices[d].buckets;
	if (b < v->start_ns)
		return 0;
	if (a > v->end_ns)
		return bk[v->n_buckets - 1].end_bytes;
	uint64_t top = 0;
	for (size_t k = cgtrace_view_bucket_of(v, a); k <= cgtrace_view_bucket_of(v, b); k++)
		top = bk[k].max_bytes > top ? bk[k].max_bytes : top;
	return top;
}

static bool is_step(enum cgtrace_step s)
{
	return s != CGTRACE_STEP_NONE;
}

/* The spans as drawn: the document's, ends resolved; step bands covering every step span. */
static void check_spans(const struct cgtrace_view *v)
{
	size_t n = v->doc ? cgtrace_doc_count(v->doc, CGTRACE_KIND_SPAN_START) : 0;
	ck_assert_uint_eq(v->n_all_spans, n);
	uint64_t end = v->end_ns;
	for (size_t i = 0; i < n; i++) {
		struct cgtrace_span s;
		cgtrace_doc_span(v->doc, i, &s);
		uint64_t e = s.start_ns + s.duration_ns < s.start_ns ? UINT64_MAX
								      : s.start_ns + s.duration_ns;
		end = s.closed && e > end ? e : s.start_ns > end ? s.start_ns : end;
	}
	ck_assert_uint_eq(v->trace_end_ns, end);
	for (size_t i = 0; i < n; i++) {
		const struct cgtrace_view_span *x = &v->all_spans[i];
		struct cgtrace_span s;
		cgtrace_doc_span(v->doc, i, &s);
		ck_assert_str_eq(x->id, s.id);
		ck_assert_ptr_eq(cgtrace_view_find_span(v, s.id), x);
		ck_assert_uint_eq(x->start_ns, s.start_ns);
		ck_assert(x->closed == s.closed);
		ck_assert_uint_le(x->start_ns, x->end_ns);
		if (!s.closed)
			ck_assert_uint_eq(x->end_ns, v->trace_end_ns);
		ck_assert(is_step(x->step) == (x->highest != NULL));
		for (size_t d = 0; x->highest && d < v->n_devices; d++)
			ck_assert_uint_eq(x->highest[d], highest_over(v, d, x->start_ns, x->end_ns));
		/* A step span lies within a band of its kind. */
		bool banded = !is_step(x->step);
		for (size_t b = 0; b < v->n_bands && !banded; b++)
			banded = v->bands[b].step == x->step && v->bands[b].start_ns <= x->start_ns &&
				 x->end_ns <= v->bands[b].end_ns;
		ck_assert_msg(banded, "span %s in no band", x->id);
	}
	ck_assert_ptr_null(cgtrace_view_find_span(v, "no such span"));
	for (size_t b = 0; b < v->n_bands; b++) {
		const struct cgtrace_view_band *x = &v->bands[b];
		ck_assert(is_step(x->step));
		ck_assert_uint_le(x->start_ns, x->end_ns);
		/* By kind, then time, apart by more than half a bucket. */
		if (b && v->bands[b - 1].step == x->step)
			ck_assert_uint_gt(x->start_ns, v->bands[b - 1].end_ns + v->bucket_ns / 2);
		if (b)
			ck_assert_int_le(v->bands[b - 1].step, x->step);
		for (size_t d = 0; d < v->n_devices; d++)
			ck_assert_uint_eq(x->highest[d], highest_over(v, d, x->start_ns, x->end_ns));
	}
}

/* The grid's promises on any view: the peak, its instant, categories, carried buckets. */
static void check_grid(const struct cgtrace_view *v)
{
	check_alloc_live(v);
	check_spans(v);
	ck_assert_uint_eq(v->bucket_ns & (v->bucket_ns - 1), 0);
	ck_assert_uint_eq(v->start_ns % v->bucket_ns, 0);
	ck_assert_uint_le(v->start_ns, v->end_ns);
	ck_assert_uint_eq(cgtrace_view_bucket_of(v, v->end_ns), v->n_buckets - 1);
	for (size_t d = 0; d < v->n_devices; d++) {
		const struct cgtrace_view_device *vd = &v->devices[d];
		uint64_t top = 0;
		size_t at = 0;
		for (size_t i = 0; i < v->n_buckets; i++) {
			const struct cgtrace_view_bucket *b = &vd->buckets[i];
			uint64_t sum = 0, esum = 0;
			for (int c = 0; c < CGTRACE_CAT_COUNT; c++) {
				sum += b->max_by_category[c];
				esum += b->end_by_category[c];
			}
			ck_assert_uint_eq(sum, b->max_bytes);
			ck_assert_uint_eq(esum, b->end_bytes);
			ck_assert_uint_ge(b->max_bytes, b->end_bytes);
			ck_assert_uint_le(b->drawn_bytes, b->max_bytes);
			ck_assert_uint_le(b->drawn_count, b->max_live_count);
			if (b->max_bytes == 0)
				ck_assert_uint_eq(b->drawn_count, 0);
			ck_assert_uint_eq(cgtrace_view_bucket_of(v, b->max_ns), i);
			if (i > 0)
				ck_assert_uint_ge(b->max_bytes, vd->buckets[i - 1].end_bytes);
			if (b->records == 0 && i > 0)
				ck_assert_uint_eq(b->max_bytes, vd->buckets[i - 1].end_bytes);
			if (b->max_bytes > top) {
				top = b->max_bytes;
				at = i;
			}
		}
		ck_assert_uint_eq(top, vd->peak_bytes);
		if (top)
			ck_assert_uint_eq(vd->buckets[at].max_ns, vd->peak_ns);
		ck_assert_uint_eq(vd->buckets[v->n_buckets - 1].end_bytes, vd->final_bytes);
	}
}

START_TEST(grid_peaks)
{
	struct cgtrace_view *v = view_of(two_dev, 10, 0);
	ck_assert_uint_eq(v->n_devices, 2);
	/* Buckets of a power of two ns, aligned to it: the fewest that hold 10 to 990 in 10. */
	ck_assert_uint_eq(v->bucket_ns, 128);
	ck_assert_uint_eq(v->start_ns, 0);
	ck_assert_uint_eq(v->end_ns, 990);
	ck_assert_uint_eq(v->n_buckets, 8);
	check_grid(v);
	const struct cgtrace_view_device *cpu = dev_named(v, "cpu");
	ck_assert_uint_eq(cpu->peak_bytes, 350);
	ck_assert_uint_eq(cpu->peak_ns, 30);
	ck_assert_uint_eq(cpu->peak_by_category[CGTRACE_CAT_PARAMETER], 100);
	ck_assert_uint_eq(cpu->peak_by_category[CGTRACE_CAT_ACTIVATION], 200);
	ck_assert_uint_eq(cpu->peak_by_category[CGTRACE_CAT_GRADIENT], 50);
	/* All of cpu's first records fall in bucket 0; it ends at 150 live. */
	ck_assert_uint_eq(cpu->buckets[0].records, 4);
	ck_assert_uint_eq(cpu->buckets[0].end_bytes, 150);
	ck_assert_uint_eq(cpu->buckets[0].max_live_count, 3);
	ck_assert_uint_eq(cpu->buckets[5].max_live_count, 2);
	ck_assert_uint_eq(cpu->buckets[5].max_bytes, 150);
	ck_assert_uint_eq(cpu->buckets[5].records, 0);
	ck_assert_uint_eq(cpu->buckets[7].end_bytes, 100);
	ck_assert_uint_eq(cpu->alloc_bytes, 350);
	const struct cgtrace_view_device *gpu = dev_named(v, "cuda:0");
	ck_assert_uint_eq(gpu->peak_bytes, 1000);
	ck_assert_uint_eq(gpu->peak_ns, 50);
	ck_assert_uint_eq(gpu->capacity_bytes, 1000);
	ck_assert_uint_eq(gpu->final_bytes, 400);
	cgtrace_view_free(v);
}
END_TEST

START_TEST(grid_one_instant)
{
	struct cgtrace_view *v = view_of(META_LINE SPAN1 MEM(7, "a", "cpu", 5, "alloc", "other")
					 MEM(7, "b", "cpu", 6, "alloc", "other"), 0, 0);
	ck_assert_uint_eq(v->n_buckets, 1);
	ck_assert_uint_eq(v->devices[0].buckets[0].max_bytes, 11);
	check_grid(v);
	cgtrace_view_free(v);
}
END_TEST

START_TEST(checkpoints_reduce)
{
	struct cgtrace_view *v = view_of(two_dev, 10, 0);
	const struct cgtrace_view_device *gpu = dev_named(v, "cuda:0");
	/* Three checkpoints in bucket 0: the highest used is kept, the OOM on its own. */
	ck_assert_uint_eq(gpu->n_checkpoints, 1);
	ck_assert_uint_eq(gpu->checkpoints[0].used_bytes, 900);
	ck_assert_uint_eq(gpu->checkpoints[0].timestamp_ns, 46);
	ck_assert_uint_eq(gpu->n_ooms, 1);
	ck_assert_uint_eq(gpu->n_ooms_kept, 1);
	ck_assert(gpu->ooms[0].oom);
	ck_assert_uint_eq(gpu->ooms[0].oom_request_bytes, 4096);
	ck_assert_uint_eq(dev_named(v, "cpu")->n_checkpoints, 0);
	cgtrace_view_free(v);
}
END_TEST

START_TEST(allocs_largest)
{
	struct cgtrace_view *v = view_of(two_dev, 10, 3);
	ck_assert_uint_eq(v->n_allocs, 3);
	ck_assert_uint_eq(v->allocs[0].bytes, 600);
	ck_assert_str_eq(v->allocs[0].tensor_id, "g");
	ck_assert(v->allocs[0].freed);
	ck_assert_uint_eq(v->allocs[0].alloc_ns, 40);
	ck_assert_uint_eq(v->allocs[0].free_ns, 55);
	ck_assert_uint_eq(v->allocs[1].bytes, 400);
	ck_assert(!v->allocs[1].freed);
	ck_assert_uint_eq(v->allocs[2].bytes, 200);
	ck_assert_str_eq(v->allocs[2].span_id, "s1");
	ck_assert_int_eq(v->allocs[2].category, CGTRACE_CAT_ACTIVATION);
	ck_assert_str_eq(v->devices[v->allocs[2].device].device, "cpu");
	/* At cuda:0's peak both of its allocations are kept: all of it is drawn. */
	const struct cgtrace_view_device *gpu = dev_named(v, "cuda:0");
	ck_assert_uint_eq(gpu->buckets[0].drawn_bytes, 1000);
	/* cpu's bucket 0 peaks at t=30 with a (100), b (200, kept), c (50). */
	ck_assert_uint_eq(dev_named(v, "cpu")->buckets[0].drawn_bytes, 200);
	check_grid(v);
	cgtrace_view_free(v);
}
END_TEST

START_TEST(spans_figures)
{
	struct cgtrace_view *v = view_of(two_dev, 10, 0);
	ck_assert_uint_eq(v->n_spans, 1);
	ck_assert_str_eq(v->spans[0].span_id, "s1");
	ck_assert_uint_eq(v->spans[0].alloc_count, 5);
	ck_assert_uint_eq(v->spans[0].alloc_bytes, 1350);
	ck_assert_uint_eq(v->spans[0].free_count, 3);
	ck_assert_uint_eq(v->spans[0].free_bytes, 850);
	cgtrace_view_free(v);
}
END_TEST

#define SPAN(id, start, step)                                                                      \
	"{\"kind\":\"span_start\",\"id\":\"" id "\",\"parent_id\":\"s1\",\"name\":\"" id            \
	"\",\"start_ns\":" #start ",\"span_kind\":\"module\",\"step\":\"" step "\"}\n"
#define END(id, dur) "{\"kind\":\"span_end\",\"id\":\"" id "\",\"duration_ns\":" #dur "}\n"

/*
 * The spans as drawn: a span never closed lasts to the trace's end (here
 * the root's, after the last record); step spans closer than half a
 * bucket (32 ns) make one band, each with its highest live bytes.
 */
START_TEST(pictures_steps)
{
	struct cgtrace_view *v = view_of(META_LINE SPAN1 SPAN("f1", 10, "forward")
					 MEM(15, "a", "cpu", 100, "alloc", "activation")
					 MEM(20, "k", "cpu", 7, "alloc", "other") END("f1", 20)
					 SPAN("f2", 40, "forward") END("f2", 10)
					 SPAN("b1", 100, "backward") SPAN("f3", 500, "forward")
					 END("f3", 50) MEM(600, "a", "cpu", 100, "free", "activation")
					 SPAN("o1", 1500, "optimizer") END("o1", 10) END("s1", 2000),
					 10, 10);
	ck_assert_uint_eq(v->bucket_ns, 64);
	ck_assert_uint_eq(v->end_ns, 600);
	ck_assert_uint_eq(v->trace_end_ns, 2000);
	const struct cgtrace_view_span *b1 = cgtrace_view_find_span(v, "b1");
	ck_assert_ptr_nonnull(b1);
	ck_assert(!b1->closed);
	ck_assert_uint_eq(b1->end_ns, 2000);
	ck_assert_uint_eq(b1->highest[0], 107);
	ck_assert_uint_eq(cgtrace_view_find_span(v, "f1")->end_ns, 30);
	ck_assert_ptr_null(cgtrace_view_find_span(v, "s1")->highest);
	/* After the grid: what was live at its end. */
	ck_assert_uint_eq(cgtrace_view_find_span(v, "o1")->highest[0], 7);
	static const struct {
		enum cgtrace_step step;
		uint64_t start, end, highest;
	} want[] = {
		{CGTRACE_STEP_FORWARD, 10, 50, 107},
		{CGTRACE_STEP_FORWARD, 500, 550, 107},
		{CGTRACE_STEP_BACKWARD, 100, 2000, 107},
		{CGTRACE_STEP_OPTIMIZER, 1500, 1510, 7},
	};
	ck_assert_uint_eq(v->n_bands, 4);
	for (size_t i = 0; i < 4; i++) {
		ck_assert_int_eq(v->bands[i].step, want[i].step);
		ck_assert_uint_eq(v->bands[i].start_ns, want[i].start);
		ck_assert_uint_eq(v->bands[i].end_ns, want[i].end);
		ck_assert_uint_eq(v->bands[i].highest[0], want[i].highest);
	}
	/* a (100 B) is drawn in buckets 0 to 9: its free at 600 follows bucket 9's carried maximum. */
	ck_assert_str_eq(v->allocs[0].tensor_id, "a");
	ck_assert_uint_eq(v->alloc_live[0].first_bucket, 0);
	ck_assert_uint_eq(v->alloc_live[0].end_bucket, 10);
	ck_assert(v->alloc_live[0].at_peak);
	ck_assert_uint_eq(v->alloc_live[1].end_bucket, v->n_buckets);
	check_grid(v);
	cgtrace_view_free(v);
}
END_TEST

/* ---- random traces: streamed and full reads agree ---- */


static const char *const cats[] = {"parameter", "activation", "gradient", "optimizer", "other"};

/* A random trace; backwards: one early record at the end, past the window of a streamed read. */
/* Before record i of n, at 10 ns a record: updates of 250 records, forward then backward, a mark. */
static void training_spans(struct text *t, size_t i, size_t n)
{
	uint64_t ts = 1000 + i * 10, k = i / 250;
#define span "{\"kind\":\"span_start\",\"id\":\"%c%llu\",\"parent_id\":\"s1\"," \
	     "\"name\":\"x\",\"start_ns\":%llu,\"span_kind\":\"function\"%s}\n"
#define done "{\"kind\":\"span_end\",\"id\":\"%c%llu\",\"duration_ns\":%llu}\n"
	char upd[48];
	if (i % 250 == 0 && i) {
		put(t, done, 'b', (unsigned long long)k - 1, 123ull * 10);
		put(t, done, 'u', (unsigned long long)k - 1, 250ull * 10 - 1);
	}
	if (i % 250 == 0 && i + 250 <= n) {
		snprintf(upd, sizeof(upd), ",\"cgprobe_update\":%llu", (unsigned long long)k + 1);
		put(t, span, 'u', (unsigned long long)k, (unsigned long long)ts - 3, upd);
		put(t, span, 'f', (unsigned long long)k, (unsigned long long)ts - 2,
		    ",\"step\":\"forward\"");
	}
	if (i % 250 == 125 && i + 125 <= n) {
		put(t, done, 'f', (unsigned long long)k, 125ull * 10 - 1);
		put(t, span, 'b', (unsigned long long)k, (unsigned long long)ts - 3,
		    ",\"step\":\"backward\"");
	}
	if (i == n / 2) {
		put(t, span, 'p', 0ull, (unsigned long long)ts - 1,
		    ",\"cgprobe_parameters\":[\"0x1000\",\"0x20\"]");
		put(t, done, 'p', 0ull, 0ull);
	}
#undef span
#undef done
}

static char *random_trace(unsigned seed, size_t n, bool backwards)
{
	struct text t = {0};
	rnd_state = seed;
	put(&t, META_LINE SPAN1);
	bool live[64] = {0};
	uint64_t bytes[64];
	for (size_t i = 0; i < n; i++) {
		training_spans(&t, i, n);
		unsigned id = (unsigned)rnd(64);
		const char *dev = id % 3 ? "cpu" : "cuda:1";
		if (!live[id]) {
			bytes[id] = 1 + rnd(1 << 20);
			put(&t, "{\"kind\":\"memory\",\"timestamp_ns\":%zu,\"tensor_id\":\"0x%x\",\"span_id\":\"s1\",\"device\":\"%s\",\"bytes\":%llu,\"action\":\"alloc\",\"dtype\":\"u8\",\"category\":\"%s\"}\n",
			    1000 + i * 10, 0x1000 + id, dev, (unsigned long long)bytes[id], cats[rnd(5)]);
		} else {
			put(&t, "{\"kind\":\"memory\",\"timestamp_ns\":%zu,\"tensor_id\":\"0x%x\",\"span_id\":\"s1\",\"device\":\"%s\",\"bytes\":%llu,\"action\":\"free\",\"dtype\":\"u8\"}\n",
			    1000 + i * 10, 0x1000 + id, dev, (unsigned long long)bytes[id]);
		}
		live[id] = !live[id];
		if (rnd(50) == 0)
			put(&t, "{\"kind\":\"device_memory\",\"timestamp_ns\":%zu,\"device\":\"cuda:1\",\"used_bytes\":%llu,\"free_bytes\":1}\n",
			    1000 + i * 10 + 5, (unsigned long long)rnd(1 << 30));
	}
	if (backwards)
		put(&t, "{\"kind\":\"memory\",\"timestamp_ns\":999,\"tensor_id\":\"early\",\"span_id\":\"s1\",\"device\":\"cpu\",\"bytes\":1,\"action\":\"alloc\",\"dtype\":\"u8\"}\n");
	return t.p;
}

static void same_view(const struct cgtrace_view *a, const struct cgtrace_view *b)
{
	ck_assert_uint_eq(a->n_buckets, b->n_buckets);
	ck_assert_uint_eq(a->bucket_ns, b->bucket_ns);
	ck_assert_uint_eq(a->start_ns, b->start_ns);
	ck_assert_uint_eq(a->n_devices, b->n_devices);
	for (size_t d = 0; d < a->n_devices; d++) {
		const struct cgtrace_view_device *x = &a->devices[d], *y = &b->devices[d];
		ck_assert_str_eq(x->device, y->device);
		for (size_t i = 0; i < a->n_buckets; i++) {
			const struct cgtrace_view_bucket *p = &x->buckets[i], *q = &y->buckets[i];
			ck_assert_msg(memcmp(p, q, sizeof(*p)) == 0,
				      "%s bucket %zu: max %llu/%llu at %llu/%llu, end %llu/%llu, records %llu/%llu, drawn %llu/%llu",
				      x->device, i, (unsigned long long)p->max_bytes,
				      (unsigned long long)q->max_bytes, (unsigned long long)p->max_ns,
				      (unsigned long long)q->max_ns, (unsigned long long)p->end_bytes,
				      (unsigned long long)q->end_bytes, (unsigned long long)p->records,
				      (unsigned long long)q->records, (unsigned long long)p->drawn_bytes,
				      (unsigned long long)q->drawn_bytes);
		}
		ck_assert_uint_eq(x->n_checkpoints, y->n_checkpoints);
		for (size_t i = 0; i < x->n_checkpoints; i++) {
			ck_assert_uint_eq(x->checkpoints[i].timestamp_ns, y->checkpoints[i].timestamp_ns);
			ck_assert_uint_eq(x->checkpoints[i].used_bytes, y->checkpoints[i].used_bytes);
		}
	}
	ck_assert_uint_eq(a->n_allocs, b->n_allocs);
	for (size_t i = 0; i < a->n_allocs; i++) {
		ck_assert_uint_eq(a->allocs[i].bytes, b->allocs[i].bytes);
		ck_assert_uint_eq(a->allocs[i].alloc_ns, b->allocs[i].alloc_ns);
		ck_assert_uint_eq(a->allocs[i].free_ns, b->allocs[i].free_ns);
		ck_assert_str_eq(a->allocs[i].tensor_id, b->allocs[i].tensor_id);
		ck_assert(memcmp(&a->alloc_live[i], &b->alloc_live[i], sizeof(*a->alloc_live)) == 0);
	}
	ck_assert_uint_eq(a->trace_end_ns, b->trace_end_ns);
	const struct cgtrace_steps *x = a->steps, *y = b->steps;
	ck_assert_int_eq(x->from, y->from);
	ck_assert_uint_eq(x->n_rows, y->n_rows);
	ck_assert_uint_eq(x->n_devices, y->n_devices);
	for (size_t r = 0; r < x->n_rows; r++) {
		ck_assert(memcmp(&x->rows[r], &y->rows[r], sizeof(x->rows[r])) == 0);
		for (size_t d = 0; d < x->n_devices; d++)
			ck_assert(memcmp(&x->figures[d][r], &y->figures[d][r],
					 sizeof(x->figures[d][r])) == 0);
	}
	for (size_t i = 0; i < a->n_allocs; i++)
		ck_assert_int_eq(a->allocs[i].category, b->allocs[i].category);
}

START_TEST(random_streamed_equals_full)
{
	for (unsigned seed = 1; seed <= 6; seed++) {
		char *fwd = random_trace(seed, 5000, false);
		struct cgtrace_view *a = view_of(fwd, 97, 20);
		check_grid(a);
		ck_assert_int_eq(a->steps->from, CGTRACE_UPDATES_MARKED);
		ck_assert_uint_eq(a->steps->updates, 20);
		/* The early record moves the grid: compare against the full read of the same text. */
		char *back = random_trace(seed, 5000, true);
		/* No window: the early record makes the read start again in full, and replay. */
		uint32_t window = cg_stream_window;
		cg_stream_window = 0;
		struct cgtrace_view *b = view_of(back, 97, 20);
		cg_stream_window = window;
		ck_assert(!cgtrace_doc_streamed(b->doc));
		ck_assert(cgtrace_doc_streamed(a->doc));
		check_grid(b);
		/* The same records, the early one first: read streamed. */
		size_t n = strlen(back);
		char *last = back + n - 1;
		while (last > back && last[-1] != '\n')
			last--;
		size_t head = strlen(META_LINE SPAN1);
		struct text t = {0};
		put(&t, "%.*s%s%.*s", (int)head, back, last, (int)(last - back - head), back + head);
		struct cgtrace_view *c = view_of(t.p, 97, 20);
		same_view(b, c);
		cgtrace_view_free(a);
		cgtrace_view_free(b);
		cgtrace_view_free(c);
		free(fwd);
		free(back);
		free(t.p);
	}
}
END_TEST

START_TEST(bad_options)
{
	const char *path = write_trace("t.jsonl", two_dev);
	struct cgtrace_view_options o = {.buckets = 100001};
	struct cgtrace_view *v = NULL;
	char err[256];
	ck_assert_int_eq(cgtrace_view_read(path, &o, &v, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_null(v);
	ck_assert_ptr_nonnull(strstr(err, "at most 100000 buckets"));
	ck_assert_int_lt(cgtrace_view_read("/nonexistent/t", NULL, &v, err, sizeof(err)), 0);
	ck_assert_ptr_nonnull(strstr(err, "/nonexistent/t"));
	const char *bad = write_trace("bad.jsonl", META_LINE "{\"kind\":\"memory\"}\n");
	ck_assert_int_eq(cgtrace_view_read(bad, NULL, &v, err, sizeof(err)), -EBADMSG);
	ck_assert_ptr_nonnull(strstr(err, "bad.jsonl:2"));
}
END_TEST

START_TEST(empty_trace)
{
	struct cgtrace_view *v = view_of(META_LINE, 0, 0);
	ck_assert_uint_eq(v->n_devices, 0);
	ck_assert_uint_eq(v->n_allocs, 0);
	ck_assert_uint_eq(v->n_buckets, 1);
	cgtrace_view_free(v);
}
END_TEST

START_TEST(capture_window)
{
	char text[4096];
	snprintf(text, sizeof(text), "%s", META_LINE);
	char *tags = strstr(text, "\"tags\":{}");
	ck_assert_ptr_nonnull(tags);
	snprintf(tags, sizeof(text) - (size_t)(tags - text),
		 "\"tags\":{\"cgprobe_capture\":\"update\"}}\n" SPAN1
		 MEM(5, "a", "cpu", 10, "alloc", "other")
		 "{\"kind\":\"span_end\",\"id\":\"s1\",\"duration_ns\":500}\n");
	struct cgtrace_view *v = view_of(text, 0, 0);
	ck_assert(v->has_capture);
	ck_assert_uint_eq(v->capture_begin_ns, 0);
	ck_assert_uint_eq(v->capture_end_ns, 500);
	cgtrace_view_free(v);
	v = view_of(two_dev, 0, 0);
	ck_assert(!v->has_capture);
	cgtrace_view_free(v);
}
END_TEST

/* The sparkline's series: no cell below what was live in it, the peak in some cell, nothing before. */
START_TEST(series_cells)
{
	enum { EVENTS = 20000, CELLS = 60 };
	static uint64_t t[EVENTS], val[EVENTS];
	for (unsigned seed = 1; seed <= 20; seed++) {
		rnd_state = seed;
		struct cg_peak_series s;
		memset(&s, 0, sizeof(s));
		uint64_t now = 10000 + rnd(1000000), top = 0;
		size_t n = 1 + rnd(EVENTS);
		for (size_t i = 0; i < n; i++) {
			now += rnd(seed % 3 ? 1000 : 100000000);
			t[i] = now;
			val[i] = rnd(1u << 30);
			top = val[i] > top ? val[i] : top;
			cg_series_add(&s, t[i], val[i]);
		}
		uint64_t base = t[0] - rnd(5000), end = t[n - 1] + rnd(5000), cells[CELLS];
		cg_series_cells(&s, base, end, cells, CELLS);
		uint64_t got = 0;
		double span = (double)(end - base) + 1;
		size_t i = 0;
		uint64_t live = 0;
		for (unsigned c = 0; c < CELLS; c++) {
			double c0 = (double)base + span * c / CELLS, c1 = (double)base + span * (c + 1) / CELLS;
			uint64_t want = live;
			while (i < n && (double)t[i] < c1) {
				live = val[i++];
				want = live > want ? live : want;
			}
			if (c1 <= (double)t[0])
				ck_assert_uint_eq(cells[c], 0);
			else
				ck_assert_msg(cells[c] >= want, "seed %u cell %u: %llu < %llu", seed, c,
					      (unsigned long long)cells[c], (unsigned long long)want);
			(void)c0;
			got = cells[c] > got ? cells[c] : got;
		}
		ck_assert_uint_eq(got, top);
		ck_assert_uint_eq(cells[CELLS - 1] >= val[n - 1], 1);
	}
}
END_TEST

/* Every test trace: a view or a clean error, and the grid's promises on each view. */
START_TEST(test_traces)
{
	const char *dirs = getenv("VIEW_TEST_DIRS");
	ck_assert_ptr_nonnull(dirs);
	char *list = strdup(dirs), *save = NULL;
	size_t views = 0;
	for (char *d = strtok_r(list, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		DIR *dir_p = opendir(d);
		ck_assert_msg(dir_p != NULL, "%s", d);
		struct dirent *e;
		while ((e = readdir(dir_p))) {
			if (e->d_name[0] == '.')
				continue;
			char path[4096], err[2048];
			snprintf(path, sizeof(path), "%s/%s", d, e->d_name);
			struct cgtrace_view *v = NULL;
			int r = cgtrace_view_read(path, NULL, &v, err, sizeof(err));
			if (r < 0) {
				ck_assert_ptr_null(v);
				ck_assert_msg(strstr(err, path) != NULL, "%s: %s", path, err);
				continue;
			}
			check_grid(v);
			views++;
			cgtrace_view_free(v);
		}
		closedir(dir_p);
	}
	free(list);
	ck_assert_uint_gt(views, 10);
}
END_TEST

/* A maximum carried into a bucket whose first record frees at its first nanosecond. */
START_TEST(drawn_carried)
{
	struct cgtrace_view *v = view_of(META_LINE SPAN1 MEM(10, "x", "cpu", 500, "alloc", "other")
					 MEM(128, "x", "cpu", 500, "free", "other")
					 MEM(990, "y", "cpu", 10, "alloc", "other"), 10, 10);
	ck_assert_uint_eq(v->bucket_ns, 128);
	const struct cgtrace_view_bucket *b = &v->devices[0].buckets[1];
	ck_assert_uint_eq(b->max_ns, 128);
	ck_assert_uint_eq(b->max_bytes, 500);
	ck_assert_uint_eq(b->drawn_bytes, 500);
	ck_assert_uint_eq(b->drawn_count, 1);
	ck_assert_uint_eq(b->max_live_count, 1);
	ck_assert_uint_eq(v->devices[0].buckets[5].max_live_count, 0);
	ck_assert_uint_eq(v->devices[0].buckets[2].drawn_bytes, 0);
	check_grid(v);
	cgtrace_view_free(v);
}
END_TEST

/* Pre-existing allocs keep their mark through the compact encoding, beside plain ones of one class. */
START_TEST(preexisting_compact)
{
	static const char text[] = META_LINE SPAN1
		"{\"kind\":\"memory\",\"timestamp_ns\":0,\"tensor_id\":\"0x10\",\"span_id\":\"s1\",\"device\":\"cpu\",\"bytes\":64,\"action\":\"alloc\",\"shape\":[64],\"dtype\":\"u8\",\"category\":\"other\",\"cgprobe_preexisting\":true}\n"
		"{\"kind\":\"memory\",\"timestamp_ns\":5,\"tensor_id\":\"0x20\",\"span_id\":\"s1\",\"device\":\"cpu\",\"bytes\":32,\"action\":\"alloc\",\"shape\":[32],\"dtype\":\"u8\",\"category\":\"other\"}\n"
		"{\"kind\":\"memory\",\"timestamp_ns\":6,\"tensor_id\":\"0x30\",\"span_id\":\"s1\",\"device\":\"cpu\",\"bytes\":16,\"action\":\"alloc\",\"shape\":[16],\"dtype\":\"u8\",\"category\":\"other\"}\n";
	const char *jsonl = write_trace("pre.jsonl", text);
	char compact[256];
	snprintf(compact, sizeof(compact), "%s/pre.cgt", dir);
	struct cgtrace_reader *r = NULL;
	ck_assert_int_eq(cgtrace_reader_open(&r, jsonl, NULL), 0);
	FILE *f = fopen(compact, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(cgtrace_reader_export_compact(r, fileno(f), 1), 0);
	fclose(f);
	cgtrace_reader_close(r);
	struct cgtrace_view *v = NULL;
	char err[1024];
	ck_assert_msg(cgtrace_view_read(compact, NULL, &v, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(v->n_allocs, 3);
	for (size_t i = 0; i < 3; i++)
		ck_assert_msg(v->allocs[i].preexisting == (v->allocs[i].bytes == 64), "alloc %zu", i);
	cgtrace_view_free(v);
}
END_TEST

/*
 * CGTRACE_READ_PEAK_LARGEST: 600 allocations live at the peak, of 3 ops
 * and many equal sizes; the bounded report keeps the 256 the whole one
 * lists first, in its order, and counts, sums and groups all of them.
 */
START_TEST(peak_largest_bounded)
{
	static const char *const ops[] = {"aten::empty", "aten::mm", NULL};
	size_t cap = 200 * 600, len = 0;
	char *t = malloc(cap);
	ck_assert_ptr_nonnull(t);
	len += (size_t)snprintf(t + len, cap - len, "%s%s", META_LINE, SPAN1);
	for (int i = 0; i < 600; i++) {
		const char *op = ops[i % 3];
		char opf[64] = "";
		if (op)
			snprintf(opf, sizeof(opf), ",\"op_name\":\"%s\"", op);
		len += (size_t)snprintf(t + len, cap - len,
					"{\"kind\":\"memory\",\"timestamp_ns\":%d,\"tensor_id\":\"0x%x\","
					"\"span_id\":\"s1\",\"device\":\"cpu\",\"bytes\":%d,"
					"\"action\":\"alloc\",\"dtype\":\"u8\"%s}\n",
					10 + i, 0x1000 + 16 * (i * 7919 % 600), 64 * (1 + i % 37), opf);
	}
	const char *path = write_trace("largest.jsonl", t);
	free(t);
	struct cgtrace_view *whole = NULL, *bounded = NULL;
	char err[1024];
	ck_assert_msg(cgtrace_view_read(path, NULL, &whole, err, sizeof(err)) == 0, "%s", err);
	ck_assert_msg(cgtrace_view_read_flags(path, NULL, CGTRACE_READ_PEAK_LARGEST, &bounded, err,
					      sizeof(err)) == 0,
		      "%s", err);
	const struct cgtrace_memory_report *w = whole->report, *b = bounded->report;
	ck_assert_uint_eq(w->n_breakdown, 600);
	ck_assert_uint_eq(w->n_at_peak, 600);
	ck_assert_uint_eq(w->n_rest, 0);
	ck_assert_ptr_null(w->op_groups);
	ck_assert_uint_eq(b->n_breakdown, CGTRACE_PEAK_LARGEST);
	ck_assert_uint_eq(b->n_at_peak, 600);
	ck_assert_uint_eq(b->n_rest, 600 - CGTRACE_PEAK_LARGEST);
	uint64_t rest = 0;
	for (size_t i = 0; i < w->n_breakdown; i++) {
		if (i < b->n_breakdown) {
			ck_assert_str_eq(b->peak_breakdown[i].tensor_id, w->peak_breakdown[i].tensor_id);
			ck_assert_uint_eq(b->peak_breakdown[i].bytes, w->peak_breakdown[i].bytes);
		} else {
			rest += w->peak_breakdown[i].bytes;
		}
	}
	ck_assert_uint_eq(b->rest_bytes, rest);
	struct cgtrace_op_group *gw, *gb;
	size_t nw, nb;
	ck_assert_int_eq(cgtrace_memory_peak_by_op(w, &gw, &nw), 0);
	ck_assert_int_eq(cgtrace_memory_peak_by_op(b, &gb, &nb), 0);
	ck_assert_uint_eq(nw, 3);
	ck_assert_uint_eq(nb, nw);
	for (size_t i = 0; i < nw; i++) {
		ck_assert(gw[i].op_name == gb[i].op_name ||
			  (gw[i].op_name && gb[i].op_name && !strcmp(gw[i].op_name, gb[i].op_name)));
		ck_assert_uint_eq(gw[i].count, gb[i].count);
		ck_assert_uint_eq(gw[i].bytes, gb[i].bytes);
	}
	cgtrace_op_groups_free(gw);
	cgtrace_op_groups_free(gb);
	cgtrace_view_free(whole);
	cgtrace_view_free(bounded);
}
END_TEST

static Suite *view_suite(void)
{
	Suite *s = suite_create("view");
	if (!mkdtemp(dir))
		abort();
	TCase *tc = test_tcase(s, "view", 60);
	test_add(tc, grid_peaks, grid_one_instant, checkpoints_reduce, allocs_largest,
		 spans_figures, random_streamed_equals_full, bad_options, empty_trace,
		 capture_window, series_cells, test_traces, drawn_carried, preexisting_compact,
		 pictures_steps, peak_largest_bounded);
	return s;
}

TEST_MAIN(view_suite);
