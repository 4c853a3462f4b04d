/* SPDX-License-Identifier: MIT */
/*
 * The reading side of the program-line protocol: the lines the programs of
 * the preload and CUDA suites write with say() (prog-say.h).
 */
#ifndef CG_TEST_PLINE_H
#define CG_TEST_PLINE_H

#include <stdbool.h>

/* One line "PID PROG KIND REST". */
struct pline {
	long pid;
	char prog[64];
	char kind;
	char rest[1024];
};

/* Steps *cursor through text, skipping lines of another shape; false at the end. */
bool next_pline(const char **cursor, struct pline *l);

#endif
