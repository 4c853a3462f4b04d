/* SPDX-License-Identifier: MIT */
/*
 * zstd-blocks FILE LEVEL [RUNS]: compresses each block of FILE (records of
 * raw_len:u32 events:u32 then raw_len bytes, as layout-split.py writes
 * them) as one zstd frame at LEVEL, the probe's way (ZSTD_compress2 on a
 * reused context), and prints the raw and compressed bytes per event and
 * the compression's thread CPU per event, the best of RUNS (3).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zstd.h>

static double cpu_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 1 << 20, n = 0, k;
	uint8_t *p = malloc(cap);
	while (p && (k = fread(p + n, 1, cap - n, f)) > 0) {
		n += k;
		if (n == cap) {
			uint8_t *q = realloc(p, cap *= 2);
			if (!q)
				free(p);
			p = q;
		}
	}
	fclose(f);
	*len = n;
	return p;
}

static uint32_t u32_at(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

int main(int argc, char **argv)
{
	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: zstd-blocks FILE LEVEL [RUNS]\n");
		return 2;
	}
	int level = atoi(argv[2]), runs = argc > 3 ? atoi(argv[3]) : 3;
	size_t n;
	uint8_t *buf = slurp(argv[1], &n);
	if (!buf) {
		fprintf(stderr, "zstd-blocks: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	ZSTD_CCtx *cc = ZSTD_createCCtx();
	ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, level);
	size_t cap = ZSTD_compressBound(64u << 20);
	uint8_t *out = malloc(cap);
	if (!cc || !out)
		return 1;
	double best = 1e300;
	uint64_t z = 0, raw = 0, events = 0;
	for (int r = 0; r < (runs > 0 ? runs : 1); r++) {
		z = raw = events = 0;
		double t0 = cpu_s();
		for (size_t p = 0; p + 8 <= n;) {
			uint32_t len = u32_at(buf + p), ev = u32_at(buf + p + 4);
			if (len > n - p - 8) {
				fprintf(stderr, "zstd-blocks: %s: block at %zu runs past the end\n", argv[1], p);
				return 1;
			}
			size_t c = ZSTD_compress2(cc, out, cap, buf + p + 8, len);
			if (ZSTD_isError(c)) {
				fprintf(stderr, "zstd-blocks: %s\n", ZSTD_getErrorName(c));
				return 1;
			}
			z += c;
			raw += len;
			events += ev;
			p += 8 + (size_t)len;
		}
		double t = cpu_s() - t0;
		if (t < best)
			best = t;
	}
	if (!events)
		return 1;
	printf("%.3f %.3f %.2f\n", (double)raw / (double)events, (double)z / (double)events,
	       best * 1e9 / (double)events);
	return 0;
}
