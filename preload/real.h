/* SPDX-License-Identifier: MIT */
/*
 * The functions the probe wraps, as the next library in the lookup order
 * provides them (glibc, or a malloc the program links itself). Filled once
 * with dlsym(RTLD_NEXT); dlsym itself allocates, so until the table is
 * complete allocations come from a small static pool. The real dlsym
 * (found with dlvsym, since dlsym itself is wrapped) is cg_probe_dlsym
 * (probe.h), published with the table.
 */
#ifndef CG_REAL_H
#define CG_REAL_H

#include <stdbool.h>
#include <stddef.h>
#include <signal.h>
#include <sys/types.h>

struct cg_real {
	void *(*malloc)(size_t);
	void (*free)(void *);
	void *(*calloc)(size_t, size_t);
	void *(*realloc)(void *, size_t);
	void *(*reallocarray)(void *, size_t, size_t);
	int (*posix_memalign)(void **, size_t, size_t);
	void *(*aligned_alloc)(size_t, size_t);
	void *(*memalign)(size_t, size_t);
	void *(*valloc)(size_t);
	void *(*pvalloc)(size_t);
	size_t (*malloc_usable_size)(void *);
	void *(*dlopen)(const char *, int);
	void *(*dlmopen)(long, const char *, int);
	int (*dlclose)(void *);
	void (*_exit)(int) __attribute__((noreturn));
	void (*_Exit)(int) __attribute__((noreturn));
	int (*execve)(const char *, char *const[], char *const[]);
	int (*execveat)(int, const char *, char *const[], char *const[], int);
	int (*fexecve)(int, char *const[], char *const[]);
	int (*sigaction)(int, const struct sigaction *, struct sigaction *);
};

extern struct cg_real cg_real;

/* Fills the table; safe to call from any hook, does the work once. */
void cg_real_init(void);
static inline bool cg_real_ready(void)
{
	return __atomic_load_n(&cg_real.free, __ATOMIC_ACQUIRE) != NULL;
}

/* The bootstrap pool for allocations made while the table is being filled. */
void *cg_boot_alloc(size_t size, size_t align, bool zero);
bool cg_boot_owns(const void *p);
size_t cg_boot_size(const void *p);

#endif
