/* SPDX-License-Identifier: MIT */
/*
 * The limits cgtrace check holds a run to (check-rules.c): each kind
 * described once, in one table that both the command's options and the
 * lines of a rules file are read against (docs/compare.md).
 */
#ifndef CGTRACE_CHECK_RULES_H
#define CGTRACE_CHECK_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum cli_limit_kind {
	CLI_LIMIT_PEAK,     /* max-peak DEVICE SIZE: bytes live at once */
	CLI_LIMIT_LEAKED,   /* max-leaked SIZE: never freed */
	CLI_LIMIT_ALLOCS,   /* max-allocs N: allocations made */
	CLI_LIMIT_GROWTH,   /* max-growth-per-update SIZE: the slope of live bytes at update ends */
	CLI_LIMIT_INCREASE, /* max-increase PCT: a peak's rise over the baseline's */
	CLI_LIMIT_KINDS,
};

struct cli_limit {
	enum cli_limit_kind kind;
	char device[128]; /* a glob (cpu, cuda:*, gpu:GPU-UUID); "": every device */
	int category;     /* -1: every category */
	char phase[64];   /* "": the whole run */
	int64_t rank;     /* -1: every process */
	uint64_t value;   /* bytes or a count */
	double pct;       /* max-increase */
	char text[256];   /* the limit as a line of a rules file says it, for messages */
	char origin[192]; /* "FILE:LINE", or the option it came from */
};

struct cli_limits {
	struct cli_limit *v;
	size_t n, cap;
};

/* The kind's name, "max-peak". */
const char *cli_limit_name(enum cli_limit_kind k);
/*
 * One rule, as a rules file's line holds it ("max-peak cpu 64MiB rank=1",
 * comments gone), appended to ls with its origin; false with the reason
 * in err (no "FILE:LINE: " before it), or "out of memory".
 */
bool cli_limit_parse(struct cli_limits *ls, const char *line, const char *origin, char *err,
                     size_t errlen);
/*
 * Every rule of the file at path appended: true; false with
 * "PATH:LINE: message" (or "PATH: why it cannot be read") in err.
 */
bool cli_limits_read(struct cli_limits *ls, const char *path, char *err, size_t errlen);
void cli_limits_free(struct cli_limits *ls);

#endif
