/* SPDX-License-Identifier: MIT */
/*
 * Small pieces both program-running suites (test-preload, test-cuda) need
 * to start a child with a chosen environment.
 */
#ifndef CG_TEST_CHILD_H
#define CG_TEST_CHILD_H

#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static char *strf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline char *strf(const char *fmt, ...)
{
	char *s = NULL;
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(&s, fmt, ap);
	va_end(ap);
	ck_assert_int_ge(n, 0);
	return s;
}

static inline const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

static inline void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/* Sets "KEY=VALUE" in a NULL-terminated environment, or removes KEY when the entry has no '='. */
static inline void env_put(char **env, size_t *n, char *entry)
{
	const char *eq = strchr(entry, '=');
	size_t klen = eq ? (size_t)(eq - entry) : strlen(entry);
	for (size_t i = 0; i < *n; i++) {
		if (!strncmp(env[i], entry, klen) && env[i][klen] == '=') {
			if (eq) {
				env[i] = entry;
			} else {
				env[i] = env[--*n];
				env[*n] = NULL;
			}
			return;
		}
	}
	if (eq) {
		env[(*n)++] = entry;
		env[*n] = NULL;
	}
}

/*
 * The children's deaths by signal are what the suites look at, so a
 * sanitizer runtime in them must leave those signals alone.
 */
static inline char *child_ubsan_options(void)
{
	const char *ubsan = getenv("UBSAN_OPTIONS");
	return strf("UBSAN_OPTIONS=%s%shandle_segv=0:handle_sigbus=0:handle_sigfpe=0:"
		    "handle_sigill=0:handle_abort=0",
		    ubsan ? ubsan : "", ubsan && *ubsan ? ":" : "");
}

#endif
