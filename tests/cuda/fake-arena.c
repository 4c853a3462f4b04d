/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include "fake-arena.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

static size_t page_size(void)
{
	static size_t pg;
	if (!pg) {
		long v = sysconf(_SC_PAGESIZE);
		pg = v > 0 ? (size_t)v : 4096;
	}
	return pg;
}

static uintptr_t round_up(uintptr_t v, uintptr_t a)
{
	return (v + a - 1) & ~(a - 1);
}

static uintptr_t round_down(uintptr_t v, uintptr_t a)
{
	return v & ~(a - 1);
}

/* Called with the lock held. */
static int arena_setup(struct fake_arena *a)
{
	if (a->base)
		return 0;
	if (a->failed)
		return -ENOMEM;
	int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
	void *p = MAP_FAILED;
	if (a->low32) {
		p = mmap(NULL, a->size, PROT_NONE, flags | MAP_32BIT, -1, 0);
	} else if (a->hint) {
		p = mmap((void *)a->hint, a->size, PROT_NONE, flags | MAP_FIXED_NOREPLACE, -1, 0);
		/* An old kernel takes the flag as a plain hint: keep what it gives. */
	}
	if (p == MAP_FAILED)
		p = mmap(NULL, a->size, PROT_NONE, flags, -1, 0);
	if (p == MAP_FAILED) {
		a->failed = true;
		return -ENOMEM;
	}
	__atomic_store_n(&a->base, (uintptr_t)p, __ATOMIC_RELEASE);
	return 0;
}

static int blocks_reserve(struct fake_arena *a)
{
	if (a->n < a->cap)
		return 0;
	size_t cap = a->cap ? a->cap * 2 : 1024;
	void *p = mmap(NULL, cap * sizeof(*a->blocks), PROT_READ | PROT_WRITE,
	               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -ENOMEM;
	if (a->blocks) {
		memcpy(p, a->blocks, a->n * sizeof(*a->blocks));
		munmap(a->blocks, a->cap * sizeof(*a->blocks));
	}
	a->blocks = p;
	a->cap = cap;
	return 0;
}

/* Index of the first block whose addr is >= addr. */
static size_t lower_bound(const struct fake_arena *a, uintptr_t addr)
{
	size_t lo = 0, hi = a->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (a->blocks[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int insert_block(struct fake_arena *a, size_t at, uintptr_t addr, size_t len, size_t bytes,
                        int tag)
{
	if (!a->reserve_only) {
		size_t pg = page_size();
		uintptr_t lo = round_down(addr, pg), hi = round_up(addr + len, pg);
		if (mprotect((void *)lo, hi - lo, PROT_READ | PROT_WRITE))
			return -ENOMEM;
	}
	memmove(&a->blocks[at + 1], &a->blocks[at], (a->n - at) * sizeof(*a->blocks));
	a->blocks[at] = (struct fake_block){.addr = addr, .len = len, .bytes = bytes, .tag = tag};
	a->n++;
	return 0;
}

int fake_arena_alloc(struct fake_arena *a, size_t bytes, size_t align, int tag, uintptr_t *out)
{
	if (!bytes || bytes > a->size)
		return -ENOMEM;
	if (align < 256)
		align = 256;
	size_t len = round_up(bytes, 256);
	int rc = -ENOMEM;
	pthread_mutex_lock(&a->lock);
	if (arena_setup(a) || blocks_reserve(a))
		goto out;
	uintptr_t end = a->base + a->size;
	for (size_t i = 0; i <= a->n; i++) {
		uintptr_t gap_lo = i ? a->blocks[i - 1].addr + a->blocks[i - 1].len : a->base;
		uintptr_t gap_hi = i < a->n ? a->blocks[i].addr : end;
		uintptr_t at = round_up(gap_lo, align);
		if (at < gap_hi && gap_hi - at >= len) {
			rc = insert_block(a, i, at, len, bytes, tag);
			if (!rc)
				*out = at;
			break;
		}
	}
out:
	pthread_mutex_unlock(&a->lock);
	return rc;
}

int fake_arena_alloc_at(struct fake_arena *a, uintptr_t addr, size_t bytes, int tag)
{
	size_t len = round_up(bytes, 256);
	int rc = -ENOMEM;
	pthread_mutex_lock(&a->lock);
	if (arena_setup(a) || blocks_reserve(a))
		goto out;
	if (!bytes || addr % 256 || addr < a->base || addr - a->base > a->size ||
	    a->base + a->size - addr < len)
		goto out;
	size_t i = lower_bound(a, addr);
	if (i > 0 && a->blocks[i - 1].addr + a->blocks[i - 1].len > addr)
		goto out;
	if (i < a->n && a->blocks[i].addr < addr + len)
		goto out;
	rc = insert_block(a, i, addr, len, bytes, tag);
out:
	pthread_mutex_unlock(&a->lock);
	return rc;
}

int fake_arena_free(struct fake_arena *a, uintptr_t addr, struct fake_block *gone)
{
	int rc = -ENOENT;
	pthread_mutex_lock(&a->lock);
	size_t i = lower_bound(a, addr);
	if (!a->base || i == a->n || a->blocks[i].addr != addr)
		goto out;
	struct fake_block b = a->blocks[i];
	if (!a->reserve_only) {
		/* Give back the pages no neighbour shares. */
		size_t pg = page_size();
		uintptr_t lo = round_down(b.addr, pg), hi = round_up(b.addr + b.len, pg);
		if (i > 0 && a->blocks[i - 1].addr + a->blocks[i - 1].len > lo)
			lo = round_up(b.addr, pg);
		if (i + 1 < a->n && a->blocks[i + 1].addr < hi)
			hi = round_down(b.addr + b.len, pg);
		if (lo < hi)
			mmap((void *)lo, hi - lo, PROT_NONE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
	}
	memmove(&a->blocks[i], &a->blocks[i + 1], (a->n - i - 1) * sizeof(*a->blocks));
	a->n--;
	if (gone)
		*gone = b;
	rc = 0;
out:
	pthread_mutex_unlock(&a->lock);
	return rc;
}

int fake_arena_find(struct fake_arena *a, uintptr_t addr, struct fake_block *out)
{
	int rc = -ENOENT;
	pthread_mutex_lock(&a->lock);
	size_t i = lower_bound(a, addr);
	if (a->base && i < a->n && a->blocks[i].addr == addr) {
		*out = a->blocks[i];
		rc = 0;
	}
	pthread_mutex_unlock(&a->lock);
	return rc;
}

int fake_arena_find_inside(struct fake_arena *a, uintptr_t addr, struct fake_block *out)
{
	int rc = -ENOENT;
	pthread_mutex_lock(&a->lock);
	size_t i = lower_bound(a, addr + 1);
	if (a->base && i > 0 && addr - a->blocks[i - 1].addr < a->blocks[i - 1].len) {
		*out = a->blocks[i - 1];
		rc = 0;
	}
	pthread_mutex_unlock(&a->lock);
	return rc;
}

bool fake_arena_contains(const struct fake_arena *a, uintptr_t addr)
{
	uintptr_t base = __atomic_load_n(&a->base, __ATOMIC_ACQUIRE);
	return base && addr >= base && addr - base < a->size;
}

uint64_t fake_oom_limit(void)
{
	const char *s = getenv("FAKE_CUDA_OOM_BYTES");
	if (!s || !*s)
		return UINT64_MAX;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno || *end)
		return UINT64_MAX;
	return v;
}

bool fake_charge(size_t *used, size_t capacity, size_t len)
{
	size_t now = __atomic_load_n(used, __ATOMIC_RELAXED);
	do {
		if (len > capacity || now > capacity - len)
			return false;
	} while (!__atomic_compare_exchange_n(used, &now, now + len, true, __ATOMIC_RELAXED,
	                                      __ATOMIC_RELAXED));
	return true;
}

void fake_uncharge(size_t *used, size_t len)
{
	__atomic_fetch_sub(used, len, __ATOMIC_RELAXED);
}

bool fake_log_enabled(void)
{
	const char *s = getenv("FAKE_CUDA_LOG");
	return s && !strcmp(s, "1");
}

void fake_log(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	for (size_t at = 0; at < (size_t)n;) {
		ssize_t w = write(STDERR_FILENO, line + at, (size_t)n - at);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		at += (size_t)w;
	}
}
