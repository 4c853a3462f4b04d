/* SPDX-License-Identifier: MIT */
/*
 * A second interposer, preloaded after libcgprobe.so:
 *   LD_PRELOAD="libcgprobe.so rtld-next-lib.so" PROGRAM
 * It wraps malloc through dlsym(RTLD_NEXT, "malloc"), which must mean "the
 * next definition after this library" (glibc's). A probe that wraps dlsym
 * and resolves RTLD_NEXT relative to itself hands back this library's own
 * malloc (endless recursion, caught here) or skips a definition.
 *
 * At exit it writes to stderr:
 *   rtld-next-lib: malloc calls N next OBJECT
 * OBJECT being the file that holds the malloc it called (dladdr), or
 *   rtld-next-lib: FAILED WHY
 * and exits with status 3 when the next malloc is its own.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

static void *(*next_malloc)(size_t);
static unsigned long calls;
static __thread int resolving;

/* While dlsym itself allocates: a few blocks from here, never freed. */
static char boot[16384] __attribute__((aligned(16)));
static size_t boot_used;

static void say(const char *msg)
{
	ssize_t r = write(STDERR_FILENO, msg, strlen(msg));
	(void)r;
}

/*
 * The wrapper has a local name too, wrap_malloc, whose address the dynamic
 * linker cannot redirect: what dlsym must not hand back.
 */
static void *wrap_malloc(size_t n)
{
	if (!next_malloc) {
		if (resolving) {
			size_t at = (boot_used + 15) & ~(size_t)15;
			if (at + n > sizeof(boot))
				return NULL;
			boot_used = at + n;
			return boot + at;
		}
		resolving = 1;
		void *(*fn)(size_t) = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
		resolving = 0;
		if (!fn) {
			say("rtld-next-lib: FAILED dlsym(RTLD_NEXT, \"malloc\") found nothing\n");
			_exit(3);
		}
		if (fn == wrap_malloc) {
			say("rtld-next-lib: FAILED dlsym(RTLD_NEXT, \"malloc\") returned this "
			    "library's "
			    "own malloc\n");
			_exit(3);
		}
		next_malloc = fn;
	}
	__atomic_fetch_add(&calls, 1, __ATOMIC_RELAXED);
	return next_malloc(n);
}

EXPORT void *malloc(size_t n) __attribute__((alias("wrap_malloc")));

__attribute__((destructor)) static void report(void)
{
	char line[512];
	Dl_info info;
	const char *where = "unresolved";
	if (next_malloc && dladdr((void *)next_malloc, &info) && info.dli_fname)
		where = info.dli_fname;
	snprintf(line, sizeof(line), "rtld-next-lib: malloc calls %lu next %s\n",
	         __atomic_load_n(&calls, __ATOMIC_RELAXED), where);
	say(line);
}
