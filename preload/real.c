/* SPDX-License-Identifier: MIT */
#include "real.h"

#include <dlfcn.h>
#include <signal.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "probe.h"

struct cg_real cg_real;
void *(*cg_probe_dlsym)(void *, const char *);

/*
 * dlsym's own calloc (its error buffer) arrives before malloc is known.
 * 64 KiB is far more than glibc's loader asks for; blocks carry their size
 * in a 16-byte header so realloc can copy them out.
 */
#define POOL_SIZE (64 * 1024)
static _Alignas(64) unsigned char pool[POOL_SIZE];
static atomic_size_t pool_used;

void *cg_boot_alloc(size_t size, size_t align, bool zero)
{
	if (align < 16)
		align = 16;
	if (size > POOL_SIZE || align > 4096)
		return NULL;
	for (;;) {
		size_t used = atomic_load(&pool_used);
		size_t start = (used + 16 + align - 1) & ~(align - 1);
		if (start + size > POOL_SIZE)
			return NULL;
		if (atomic_compare_exchange_weak(&pool_used, &used, start + size)) {
			memcpy(pool + start - sizeof(size_t), &size, sizeof(size));
			if (zero)
				memset(pool + start, 0, size); /* static memory, but be explicit */
			return pool + start;
		}
	}
}

bool cg_boot_owns(const void *p)
{
	return (const unsigned char *)p >= pool && (const unsigned char *)p < pool + POOL_SIZE;
}

size_t cg_boot_size(const void *p)
{
	size_t n;
	memcpy(&n, (const unsigned char *)p - sizeof(size_t), sizeof(n));
	return n;
}

static void *(*real_dlsym)(void *, const char *);

static void *next(const char *name)
{
	return real_dlsym(RTLD_NEXT, name);
}

/* A missing allocator means nothing can run: say so and stop, no malloc needed. */
static void die(const char *name)
{
	static const char msg[] = "cgprobe: cannot find the real ";
	(void)!write(2, msg, sizeof(msg) - 1);
	(void)!write(2, name, strlen(name));
	(void)!write(2, "\n", 1);
	abort();
}

void cg_real_init(void)
{
	static atomic_int state; /* 0 not started, 1 in progress, 2 done */
	int expected = 0;
	if (atomic_load_explicit(&state, memory_order_acquire) == 2)
		return;
	/* Losers (dlsym's own calloc, other threads) are served by the pool meanwhile. */
	if (!atomic_compare_exchange_strong(&state, &expected, 1))
		return;
	struct cg_real r = {0};
	/* glibc 2.34 moved dlsym into libc under a new version; older ones have 2.2.5. */
	real_dlsym = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
	if (!real_dlsym)
		real_dlsym = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
	if (!real_dlsym)
		die("dlsym");
	r.malloc = next("malloc");
	r.calloc = next("calloc");
	r.realloc = next("realloc");
	r.reallocarray = next("reallocarray");
	r.posix_memalign = next("posix_memalign");
	r.aligned_alloc = next("aligned_alloc");
	r.memalign = next("memalign");
	r.valloc = next("valloc");
	r.pvalloc = next("pvalloc");
	r.malloc_usable_size = next("malloc_usable_size");
	r.dlopen = next("dlopen");
	r.dlmopen = next("dlmopen");
	r.dlclose = next("dlclose");
	r._exit = next("_exit");
	r._Exit = next("_Exit");
	r.execve = next("execve");
	r.execveat = next("execveat");
	r.fexecve = next("fexecve");
	r.sigaction = next("sigaction");
	void (*f)(void *) = next("free");
	if (!r.malloc || !f || !r.calloc || !r.realloc)
		die("malloc");
	/* free last: cg_real_ready() turns true only once everything else is set. */
	memcpy(&cg_real, &r, sizeof(r));
	__atomic_store_n(&cg_probe_dlsym, real_dlsym, __ATOMIC_RELEASE);
	__atomic_store_n(&cg_real.free, f, __ATOMIC_RELEASE);
	atomic_store_explicit(&state, 2, memory_order_release);
}
