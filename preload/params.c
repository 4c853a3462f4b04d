/* SPDX-License-Identifier: MIT */
#include "params.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

/* Ranges are merged, so a model's parameters take a few entries, a few thousand at worst. */
#define MAX_RANGES 16384

struct range {
	uint64_t start, end; /* [start, end) */
};

/*
 * Readers copy what they need between two loads of seq and retry when it
 * moved or was odd (a writer inside); they never write shared memory. The
 * table lives in BSS: pages are touched only as ranges arrive.
 */
static struct {
	atomic_uint seq;
	atomic_uint count;
	struct range r[MAX_RANGES];
} t;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* The first index whose range ends after addr. */
static unsigned lower(unsigned n, uint64_t addr)
{
	unsigned lo = 0, hi = n;
	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;
		uint64_t end = __atomic_load_n(&t.r[mid].end, __ATOMIC_RELAXED);
		if (end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int cg_params_mark(uint64_t addr, uint64_t bytes)
{
	if (bytes == 0 || addr + bytes < addr)
		return -EINVAL;
	uint64_t start = addr, end = addr + bytes;
	int ret = 0;
	pthread_mutex_lock(&lock);
	unsigned n = atomic_load_explicit(&t.count, memory_order_relaxed);
	/* Ranges that touch [start, end) are merged into it: from i up to j. */
	unsigned i = 0;
	while (i < n && t.r[i].end < start)
		i++;
	unsigned j = i;
	while (j < n && t.r[j].start <= end) {
		if (t.r[j].start < start)
			start = t.r[j].start;
		if (t.r[j].end > end)
			end = t.r[j].end;
		j++;
	}
	if (j == i && n == MAX_RANGES) {
		ret = -ENOSPC;
	} else {
		atomic_fetch_add_explicit(&t.seq, 1, memory_order_acq_rel);
		atomic_thread_fence(memory_order_release);
		unsigned m = n - (j - i) + 1;
		memmove(&t.r[i + 1], &t.r[j], (n - j) * sizeof(t.r[0]));
		t.r[i] = (struct range){start, end};
		atomic_store_explicit(&t.count, m, memory_order_relaxed);
		atomic_fetch_add_explicit(&t.seq, 1, memory_order_release);
	}
	pthread_mutex_unlock(&lock);
	return ret;
}

bool cg_params_contains(uint64_t addr, uint64_t bytes)
{
	if (atomic_load_explicit(&t.count, memory_order_relaxed) == 0)
		return false;
	for (;;) {
		unsigned s = atomic_load_explicit(&t.seq, memory_order_acquire);
		if (s & 1)
			continue;
		unsigned n = atomic_load_explicit(&t.count, memory_order_relaxed);
		if (n > MAX_RANGES)
			n = MAX_RANGES;
		unsigned i = lower(n, addr);
		bool in = false;
		if (i < n) {
			uint64_t rs = __atomic_load_n(&t.r[i].start, __ATOMIC_RELAXED);
			uint64_t re = __atomic_load_n(&t.r[i].end, __ATOMIC_RELAXED);
			in = (rs <= addr && addr + bytes <= re) || rs == addr;
		}
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(&t.seq, memory_order_relaxed) == s)
			return in;
	}
}

void cg_params_clear(void)
{
	pthread_mutex_lock(&lock);
	atomic_fetch_add(&t.seq, 1);
	atomic_store(&t.count, 0);
	atomic_fetch_add(&t.seq, 1);
	pthread_mutex_unlock(&lock);
}
