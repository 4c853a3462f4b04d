/* SPDX-License-Identifier: MIT */
/* Generated traces: their text, and a seeded generator that is the same everywhere. */
#ifndef CG_TEST_GEN_H
#define CG_TEST_GEN_H

#include <check.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* Generated trace text: a growing buffer written by printf. */
struct text {
	char *p;
	size_t len, cap;
};

static inline void put(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline void put(struct text *t, const char *fmt, ...)
{
	va_list ap;
	for (;;) {
		va_start(ap, fmt);
		int n = vsnprintf(t->p + t->len, t->cap - t->len, fmt, ap);
		va_end(ap);
		if ((size_t)n < t->cap - t->len) {
			t->len += (size_t)n;
			return;
		}
		t->cap = t->cap * 2 + (size_t)n + 4096;
		t->p = realloc(t->p, t->cap);
		ck_assert_ptr_nonnull(t->p);
	}
}

/* A seeded generator (rnd_state), the same sequence on every machine. */
static uint64_t rnd_state;
static inline uint64_t rnd(uint64_t n)
{
	rnd_state = rnd_state * 6364136223846793005ull + 1442695040888963407ull;
	return (rnd_state >> 33) % n;
}

#endif
