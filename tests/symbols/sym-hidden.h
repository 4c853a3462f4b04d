/* SPDX-License-Identifier: MIT */
/* What libsym-hidden.so (sym-hidden.c) tells the symbol-table tests. */
#ifndef CG_TEST_SYM_HIDDEN_H
#define CG_TEST_SYM_HIDDEN_H

/* A point of each function. */
enum sym_point {
	SYM_IN_FIRST,  /* sym_first, exported */
	SYM_IN_STATIC, /* a static function */
	SYM_IN_HIDDEN, /* a visibility-hidden function */
	SYM_IN_LAST,   /* sym_points, exported */
	SYM_POINTS,
};

struct sym_hidden {
	void *point[SYM_POINTS]; /* return addresses, as a recorded stack holds them */
	int line[SYM_POINTS];    /* the line of each point's call */
};

/* Fills h: every function of the library runs once. */
void sym_points(struct sym_hidden *h);

#endif
