/* SPDX-License-Identifier: MIT */
/*
 * A streaming SVG writer: elements opened and closed in order, every text
 * and attribute value escaped so that any string a trace holds gives
 * well-formed XML, numbers written as short as the picture needs.
 */
#ifndef CGTRACE_SVG_H
#define CGTRACE_SVG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct svg {
	FILE *f;
	bool in_tag; /* a start tag is open: attributes may follow */
};

/* The XML declaration; the caller opens the root "svg" element next. */
void svg_begin(struct svg *s, FILE *f);

/* "<name": attributes follow, then children, text or svg_close. */
void svg_open(struct svg *s, const char *name);
/* "</name>", or "/>" when the element got no children nor text. */
void svg_close(struct svg *s, const char *name);

void svg_attr(struct svg *s, const char *name, const char *value);
void svg_attr_num(struct svg *s, const char *name, double v);
void svg_attr_u64(struct svg *s, const char *name, uint64_t v);
/* Text content, escaped. */
void svg_text(struct svg *s, const char *text);

/*
 * Path data written straight out, point by point, so a long path costs no
 * buffer: svg_d_begin, then commands, then svg_d_end.
 */
void svg_d_begin(struct svg *s, const char *name);
void svg_d_move(struct svg *s, double x, double y);
void svg_d_line(struct svg *s, double x, double y);
void svg_d_h(struct svg *s, double x); /* absolute horizontal line to x */
void svg_d_v(struct svg *s, double y); /* absolute vertical line to y */
void svg_d_close(struct svg *s);
void svg_d_end(struct svg *s);

/*
 * v with at most one decimal (the picture's coordinates: a tenth of a pixel),
 * trailing zeros and a lone "-0" dropped; non-finite values are 0.
 */
const char *svg_num(char buf[32], double v);
/* The same with up to decimals digits after the point. */
const char *svg_num_prec(char buf[32], double v, int decimals);

/* Writes s escaped for text (attr false) or a double-quoted attribute value. */
void svg_escape(FILE *f, const char *s, bool attr);

#endif
