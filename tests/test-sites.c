/* SPDX-License-Identifier: MIT */
/*
 * Per-stack figures (cgtrace_stack_stats): counts and bytes, what each
 * device held at its own peak, leaks, temporaries; a streamed document and
 * a full one agree; figures by sparse stack ids; memory records without a
 * stack count under stack 0, those live before the recording began apart.
 */
#include <stdint.h>

#include "stack_figs.h"
#include "test-main.h"
#include "test-util.h"

#define SPAN_S1                                                                                    \
	"{\"kind\":\"span_start\",\"id\":\"s1\",\"name\":\"r\",\"start_ns\":0,\"span_kind\":"      \
	"\"function\"}\n"
#define MEM(ts, id, dev, bytes, action, extra)                                                     \
	"{\"kind\":\"memory\",\"timestamp_ns\":" #ts ",\"tensor_id\":\"" id                        \
	"\",\"span_id\":\"s1\",\"device\":\"" dev "\",\"bytes\":" #bytes ",\"action\":\"" action   \
	"\",\"dtype\":\"u8\"" extra "}\n"
#define STACK(id, frames) ",\"cgprobe_stack\":" #id ",\"cgprobe_stack_frames\":[" frames "]"
#define REF(id) ",\"cgprobe_stack\":" #id

/*
 * cpu peaks at 150 (t20: A 100 of stack 1, B 50 of stack 2); the global
 * peak is cuda:0's 1000 (t40, C of stack 3), when cpu holds only B.
 * C is freed before any other allocation (a temporary), D (stack 3) and
 * E (stack 2) never are; F has no stack and is no temporary: G (stack 1)
 * is freed after F's alloc and before F, and heaptrack forgets the last
 * allocation at every free; H, freed at once, is one.
 */
/* clang-format off */
static const char trace[] = META_LINE SPAN_S1
	MEM(10, "0xa0", "cpu", 100, "alloc", STACK(1, "\"0x1001\""))
	MEM(20, "0xb0", "cpu", 50, "alloc", STACK(2, "\"0x2001\""))
	MEM(30, "0xa0", "cpu", 100, "free", "")
	MEM(40, "0xc0", "cuda:0", 1000, "alloc", STACK(3, "\"0x3001\",\"0x1001\""))
	MEM(50, "0xc0", "cuda:0", 1000, "free", "")
	MEM(60, "0xd0", "cuda:0", 10, "alloc", REF(3))
	MEM(70, "0xe0", "cpu", 20, "alloc", REF(2))
	MEM(75, "0x70", "cpu", 7, "alloc", REF(1))
	MEM(80, "0xf0", "cpu", 5, "alloc", "")
	MEM(85, "0x70", "cpu", 7, "free", "")
	MEM(90, "0xf0", "cpu", 5, "free", "")
	MEM(95, "0xf8", "cpu", 3, "alloc", "")
	MEM(96, "0xf8", "cpu", 3, "free", "");
/* clang-format on */

static struct cgtrace_doc *read_doc(const char *text, unsigned flags)
{
	struct cgtrace_doc *d = NULL;
	char err[1024];
	ck_assert_msg(cgtrace_doc_read_mem_flags("t.jsonl", text, strlen(text), NULL, flags, &d,
	                                         err, sizeof(err)) == 0,
	              "%s", err);
	return d;
}

/* Every figure of one (stack, device) entry. */
static void figures_are(const struct cgtrace_stack_stat *got, const struct cgtrace_stack_stat *want)
{
	ck_assert_str_eq(got->device, want->device);
	ck_assert_uint_eq(got->stack_id, want->stack_id);
	ck_assert_uint_eq(got->count, want->count);
	ck_assert_uint_eq(got->total_bytes, want->total_bytes);
	ck_assert_uint_eq(got->peak_count, want->peak_count);
	ck_assert_uint_eq(got->peak_bytes, want->peak_bytes);
	ck_assert_uint_eq(got->leaked_count, want->leaked_count);
	ck_assert_uint_eq(got->leaked_bytes, want->leaked_bytes);
	ck_assert_uint_eq(got->temporary_count, want->temporary_count);
	ck_assert_int_eq(got->preexisting, want->preexisting);
}

static void check_figures(unsigned flags)
{
	struct cgtrace_doc *d = read_doc(trace, flags);
	ck_assert_int_eq(cgtrace_doc_streamed(d), flags != 0);
	struct cgtrace_stack_stat *s;
	size_t n;
	ck_assert_int_eq(cgtrace_stack_stats(d, &s, &n), 0);
	/*
	 * Sorted by device, then id. Stack 1's peak is at cpu's peak, not the
	 * global one; stack 0's one temporary is H, not F.
	 */
	static const struct cgtrace_stack_stat want[] = {
	    /* stack, device, count, total, at the peak, leaked, temporaries, pre-existing */
	    {0, "cpu", 2, 8, 0, 0, 0, 0, 1, false},
	    {1, "cpu", 2, 107, 1, 100, 0, 0, 0, false},
	    {2, "cpu", 2, 70, 1, 50, 2, 70, 0, false},
	    {3, "cuda:0", 2, 1010, 1, 1000, 1, 10, 1, false},
	};
	ck_assert_uint_eq(n, sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < n; i++)
		figures_are(&s[i], &want[i]);
	cgtrace_stack_stats_free(s);
	/* The global peak's live set carries each allocation's stack. */
	struct cgtrace_memory_report *rep;
	ck_assert_int_eq(cgtrace_memory_analyze(d, &rep), 0);
	ck_assert_uint_eq(rep->n_breakdown, 2);
	ck_assert_uint_eq(rep->peak_breakdown[0].stack_id, 3);
	ck_assert_uint_eq(rep->peak_breakdown[1].stack_id, 2);
	cgtrace_memory_report_free(rep);
	cgtrace_doc_free(d);
}

struct each_seen {
	struct cgtrace_stack_stat got[8];
	size_t n;
	size_t stop_after; /* 0: never */
};

static int each_one(void *user, const struct cgtrace_stack_stat *st)
{
	struct each_seen *e = user;
	ck_assert_uint_lt(e->n, 8);
	e->got[e->n++] = *st;
	return e->stop_after && e->n == e->stop_after ? 42 : 0;
}

/* The walk gives the array's figures, in first-allocation order, and stops when told. */
static void check_each(unsigned flags)
{
	struct cgtrace_doc *d = read_doc(trace, flags);
	struct cgtrace_stack_stat *s;
	size_t n;
	ck_assert_int_eq(cgtrace_stack_stats(d, &s, &n), 0);
	struct each_seen e = {0};
	ck_assert_int_eq(cgtrace_stack_stats_each(d, each_one, &e), 0);
	ck_assert_uint_eq(e.n, n);
	/* Stack 1 allocated first, on cpu; stack 0 (F) after 3 on cuda:0 and 2 on cpu. */
	static const uint64_t order[] = {1, 2, 3, 0};
	for (size_t i = 0; i < e.n; i++) {
		ck_assert_uint_eq(e.got[i].stack_id, order[i]);
		size_t k = 0;
		while (k < n && s[k].stack_id != e.got[i].stack_id)
			k++;
		ck_assert_uint_lt(k, n);
		figures_are(&e.got[i], &s[k]);
	}
	struct each_seen stop = {.stop_after = 2};
	ck_assert_int_eq(cgtrace_stack_stats_each(d, each_one, &stop), 42);
	ck_assert_uint_eq(stop.n, 2);
	cgtrace_stack_stats_free(s);
	cgtrace_doc_free(d);
}

START_TEST(each_streamed)
{
	check_each(CGTRACE_READ_STREAM_MEMORY);
}
END_TEST

START_TEST(each_full)
{
	check_each(0);
}
END_TEST

START_TEST(figures_streamed)
{
	check_figures(CGTRACE_READ_STREAM_MEMORY);
}
END_TEST

START_TEST(figures_full)
{
	check_figures(0);
}
END_TEST

START_TEST(no_memory_no_figures)
{
	struct cgtrace_doc *d = read_doc(META_LINE SPAN_S1, CGTRACE_READ_STREAM_MEMORY);
	struct cgtrace_stack_stat *s = (void *)1;
	size_t n = 9;
	ck_assert_int_eq(cgtrace_stack_stats(d, &s, &n), 0);
	ck_assert_ptr_null(s);
	ck_assert_uint_eq(n, 0);
	cgtrace_doc_free(d);
}
END_TEST

/* A growing trace: every alloc a new peak of both devices, frees behind; the snapshots stay right.
 */
START_TEST(peaks_of_interleaved_devices)
{
	char *text = malloc(1 << 20);
	size_t at = (size_t)snprintf(text, 1 << 20, "%s%s", META_LINE, SPAN_S1);
	for (int i = 0; i < 2000; i++) {
		int dev = i % 2, stack = 1 + (i % 7);
		at += (size_t)snprintf(
		    text + at, (1 << 20) - at,
		    "{\"kind\":\"memory\",\"timestamp_ns\":%d,\"tensor_id\":\"0x%x\",\"span_id\":"
		    "\"s1\",\"device\":\"%s\",\"bytes\":%d,\"action\":\"alloc\",\"dtype\":\"u8\","
		    "\"cgprobe_stack\":%d%s}\n",
		    2 * i, 0x1000 + i, dev ? "cuda:0" : "cpu", 10 + (i % 5), stack,
		    i < 7 ? (i == 0   ? ",\"cgprobe_stack_frames\":[\"0x11\"]"
		             : i == 1 ? ",\"cgprobe_stack_frames\":[\"0x21\"]"
		             : i == 2 ? ",\"cgprobe_stack_frames\":[\"0x31\"]"
		             : i == 3 ? ",\"cgprobe_stack_frames\":[\"0x41\"]"
		             : i == 4 ? ",\"cgprobe_stack_frames\":[\"0x51\"]"
		             : i == 5 ? ",\"cgprobe_stack_frames\":[\"0x61\"]"
		                      : ",\"cgprobe_stack_frames\":[\"0x71\"]")
		          : "");
		/* Free every third allocation of cpu at once: cpu's peak is before the end. */
		if (dev == 0 && i > 1000 && i % 3 == 0)
			at += (size_t)snprintf(
			    text + at, (1 << 20) - at,
			    "{\"kind\":\"memory\",\"timestamp_ns\":%d,\"tensor_id\":\"0x%x\","
			    "\"span_id\":\"s1\",\"device\":\"cpu\",\"bytes\":1,\"action\":\"free\","
			    "\"dtype\":\"u8\"}\n",
			    2 * i + 1, 0x1000 + i - 1000);
	}
	struct cgtrace_doc *ds = read_doc(text, CGTRACE_READ_STREAM_MEMORY),
	                   *df = read_doc(text, 0);
	struct cgtrace_stack_stat *s, *f;
	size_t ns, nf;
	ck_assert_int_eq(cgtrace_stack_stats(ds, &s, &ns), 0);
	ck_assert_int_eq(cgtrace_stack_stats(df, &f, &nf), 0);
	ck_assert_uint_eq(ns, nf);
	ck_assert_uint_eq(ns, 14);
	uint64_t peak_sum[2] = {0, 0};
	for (size_t i = 0; i < ns; i++) {
		figures_are(&s[i], &f[i]);
		peak_sum[strcmp(s[i].device, "cpu") != 0] += s[i].peak_bytes;
	}
	/* Each device's figures at its peak add up to that peak. */
	struct cgtrace_memory_report *rep;
	ck_assert_int_eq(cgtrace_memory_analyze(ds, &rep), 0);
	for (size_t i = 0; i < rep->n_devices; i++)
		ck_assert_uint_eq(peak_sum[strcmp(rep->by_device[i].device, "cpu") != 0],
		                  rep->by_device[i].peak_bytes);
	cgtrace_memory_report_free(rep);
	cgtrace_stack_stats_free(s);
	cgtrace_stack_stats_free(f);
	cgtrace_doc_free(ds);
	cgtrace_doc_free(df);
	free(text);
}
END_TEST

START_TEST(figures_by_sparse_ids)
{
	struct cg_stack_figs f = {0};
	uint32_t a, b, c, d, e;
	ck_assert_int_eq(cg_stack_fig_at(&f, 1, 0, &a), 0);
	ck_assert_int_eq(cg_stack_fig_at(&f, UINT64_MAX, 0, &b), 0);
	ck_assert_int_eq(cg_stack_fig_at(&f, 1ull << 40, 3, &c), 0);
	ck_assert_int_eq(cg_stack_fig_at(&f, UINT64_MAX, 2, &d), 0);
	ck_assert_int_eq(cg_stack_fig_at(&f, 1, 5, &e), 0);
	ck_assert_uint_eq(f.figs.len, 5);
	/* The array did not grow to the sparse ids. */
	ck_assert_uint_lt(f.direct.len, 1u << 20);
	uint32_t again;
	ck_assert_int_eq(cg_stack_fig_at(&f, UINT64_MAX, 0, &again), 0);
	ck_assert_uint_eq(again, b);
	ck_assert_int_eq(cg_stack_fig_at(&f, UINT64_MAX, 2, &again), 0);
	ck_assert_uint_eq(again, d);
	ck_assert_int_eq(cg_stack_fig_at(&f, 1ull << 40, 3, &again), 0);
	ck_assert_uint_eq(again, c);
	ck_assert_int_eq(cg_stack_fig_at(&f, 1, 5, &again), 0);
	ck_assert_uint_eq(again, e);
	ck_assert_int_eq(cg_stack_fig_at(&f, 1, 0, &again), 0);
	ck_assert_uint_eq(again, a);
	ck_assert_uint_eq(f.figs.len, 5);
	/* A stack on four devices: each keeps its one figure. */
	uint32_t on[4];
	static const uint16_t devs[] = {5, 7, 9, 0};
	ck_assert_int_eq(cg_stack_fig_at(&f, 1, 7, &on[1]), 0);
	ck_assert_int_eq(cg_stack_fig_at(&f, 1, 9, &on[2]), 0);
	on[0] = e;
	on[3] = a;
	ck_assert_uint_eq(f.figs.len, 7);
	for (int round = 0; round < 2; round++)
		for (size_t i = 0; i < 4; i++) {
			ck_assert_int_eq(cg_stack_fig_at(&f, 1, devs[i], &again), 0);
			ck_assert_uint_eq(again, on[i]);
			ck_assert_uint_eq(cg_stack_fig_dev(CG_VEC_AT(&f.figs, struct cg_stack_fig, again)),
			                  devs[i]);
		}
	ck_assert_uint_eq(f.figs.len, 7);
	cg_stack_figs_free(&f);
}
END_TEST

/*
 * A tree's ids name every node and allocations hang from a few: an id seen
 * first past the array (in the map) and again once the array has grown
 * over it keeps its one figure per device.
 */
START_TEST(figures_as_the_array_grows)
{
	struct cg_stack_figs f = {0};
	uint32_t far, again, k;
	ck_assert_int_eq(cg_stack_fig_at(&f, 1, 0, &k), 0);
	ck_assert_int_eq(cg_stack_fig_at(&f, 200000, 0, &far), 0);
	ck_assert_uint_le(f.direct.len, 200000);
	/* Dense ids up to past 200000: the array takes them. */
	for (uint64_t id = 2; id < 200100; id++)
		if (id != 200000)
			ck_assert_int_eq(cg_stack_fig_at(&f, id, 0, &k), 0);
	ck_assert_uint_gt(f.direct.len, 200000);
	size_t figs = f.figs.len;
	ck_assert_int_eq(cg_stack_fig_at(&f, 200000, 0, &again), 0);
	ck_assert_uint_eq(again, far);
	ck_assert_uint_eq(f.figs.len, figs);
	cg_stack_figs_free(&f);
}
END_TEST

/*
 * Blocks live before the recording began (a fork child's inherited heap)
 * are a figure of their own beside the allocations made without a stack,
 * in a streamed and a full read, on every device; a stack of pre-existing
 * allocations keeps them apart from its own.
 */
START_TEST(preexisting_apart)
{
	/* clang-format off */
	static const char pre[] = META_LINE SPAN_S1
		MEM(1, "0xa0", "cpu", 100, "alloc", ",\"cgprobe_preexisting\":true")
		MEM(1, "0xb0", "cuda:0", 40, "alloc", ",\"cgprobe_preexisting\":true")
		MEM(1, "0xc0", "cpu", 30, "alloc", ",\"cgprobe_preexisting\":true" STACK(1, "\"0x1001\""))
		MEM(5, "0xd0", "cpu", 7, "alloc", "")
		MEM(6, "0xe0", "cpu", 9, "alloc", REF(1))
		MEM(7, "0xa0", "cpu", 100, "free", "");
	static const struct cgtrace_stack_stat want[] = {
	    {0, "cpu", 1, 7, 1, 7, 1, 7, 0, false},
	    {0, "cpu", 1, 100, 1, 100, 0, 0, 0, true},
	    {1, "cpu", 1, 9, 1, 9, 1, 9, 0, false},
	    {1, "cpu", 1, 30, 1, 30, 1, 30, 0, true},
	    {0, "cuda:0", 1, 40, 1, 40, 1, 40, 0, true},
	};
	/* clang-format on */
	for (int k = 0; k < 2; k++) {
		struct cgtrace_doc *d = read_doc(pre, k ? CGTRACE_READ_STREAM_MEMORY : 0);
		struct cgtrace_stack_stat *s;
		size_t n;
		ck_assert_int_eq(cgtrace_stack_stats(d, &s, &n), 0);
		ck_assert_uint_eq(n, sizeof(want) / sizeof(want[0]));
		for (size_t i = 0; i < n; i++)
			figures_are(&s[i], &want[i]);
		cgtrace_stack_stats_free(s);
		cgtrace_doc_free(d);
	}
}
END_TEST

TEST_SUITE(suite, "sites")
{
	test_case(s, "sites:figures", 10, figures_streamed, figures_full, no_memory_no_figures,
	          peaks_of_interleaved_devices);
	test_case(s, "sites:each", 10, each_streamed, each_full);
	test_case(s, "sites:preexisting", 10, preexisting_apart);
	test_case(s, "sites:table", 10, figures_by_sparse_ids, figures_as_the_array_grows);
}

TEST_MAIN(suite);
