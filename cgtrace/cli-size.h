/* SPDX-License-Identifier: MIT */
/*
 * Sizes as people write them on a command line or in a rules file:
 * "64MiB", "1.5 GiB", "512KB", "4096" (docs/compare.md). KiB, MiB, GiB,
 * TiB are powers of 1024; KB, MB, GB, TB powers of 1000; B or no unit:
 * bytes.
 */
#ifndef CGTRACE_CLI_SIZE_H
#define CGTRACE_CLI_SIZE_H

#include <stdbool.h>
#include <stdint.h>

/* The units' names for messages: "B, KiB, MiB, GiB, TiB, KB, MB, GB, TB". */
#define CLI_SIZE_UNITS "B, KiB, MiB, GiB, TiB (1024) or KB, MB, GB, TB (1000)"

/*
 * s as a size: digits with an optional fraction, optional blanks, an
 * optional unit (its case as above); false for anything else, a negative
 * number or one past UINT64_MAX. The bytes are rounded down.
 */
bool cli_size_parse(const char *s, uint64_t *out);

#endif
