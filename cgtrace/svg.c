/* SPDX-License-Identifier: MIT */
/* The SVG writer: escaping, compact numbers, path data written as it comes. */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "svg.h"

/* U+FFFD, which stands for whatever XML cannot hold. */
static const char replacement[] = "\xef\xbf\xbd";

/*
 * The length of the well-formed UTF-8 sequence at p that XML 1.0 allows
 * (no C0 control but tab, newline and carriage return; no U+FFFE, U+FFFF),
 * or 0.
 */
static size_t xml_char_len(const unsigned char *p)
{
	unsigned char c = p[0];
	if (c < 0x80)
		return c >= 0x20 || c == '\t' || c == '\n' || c == '\r' ? 1 : 0;
	size_t n;
	unsigned char lo = 0x80, hi = 0xbf;
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		if (c == 0xe0)
			lo = 0xa0;
		else if (c == 0xed)
			hi = 0x9f; /* surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f;
	} else {
		return 0;
	}
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	if (c == 0xef && p[1] == 0xbf && (p[2] == 0xbe || p[2] == 0xbf))
		return 0;
	return n;
}

void svg_escape(FILE *f, const char *s, bool attr)
{
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		size_t n = xml_char_len(p);
		if (n == 0) {
			fputs(replacement, f);
			p++;
			continue;
		}
		switch (*p) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs(attr ? "&quot;" : "\"", f);
			break;
		case '\n':
		case '\t':
		case '\r':
			/* An attribute value's whitespace is normalized away unless written as a
			 * reference. */
			if (attr)
				fprintf(f, "&#%d;", *p);
			else
				fputc(*p, f);
			break;
		default:
			fwrite(p, 1, n, f);
		}
		p += n;
	}
}

const char *svg_num_prec(char buf[32], double v, int decimals)
{
	if (!isfinite(v) || fabs(v) > 1e15)
		v = 0;
	snprintf(buf, 32, "%.*f", decimals, v);
	char *dot = strchr(buf, '.');
	if (dot) {
		char *end = buf + strlen(buf);
		while (end > dot + 1 && end[-1] == '0')
			end--;
		if (end == dot + 1)
			end = dot;
		*end = '\0';
	}
	if (strcmp(buf, "-0") == 0)
		strcpy(buf, "0");
	return buf;
}

const char *svg_num(char buf[32], double v)
{
	return svg_num_prec(buf, v, 1);
}

void svg_begin(struct svg *s, FILE *f)
{
	memset(s, 0, sizeof(*s));
	s->f = f;
	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", f);
}

/* Ends an open start tag before content. */
static void end_tag(struct svg *s)
{
	if (s->in_tag)
		fputc('>', s->f);
	s->in_tag = false;
}

void svg_open(struct svg *s, const char *name)
{
	end_tag(s);
	fprintf(s->f, "<%s", name);
	s->in_tag = true;
}

void svg_close(struct svg *s, const char *name)
{
	if (s->in_tag)
		fputs("/>\n", s->f);
	else
		fprintf(s->f, "</%s>\n", name);
	s->in_tag = false;
}

void svg_attr(struct svg *s, const char *name, const char *value)
{
	fprintf(s->f, " %s=\"", name);
	svg_escape(s->f, value ? value : "", true);
	fputc('"', s->f);
}

void svg_attr_num(struct svg *s, const char *name, double v)
{
	char b[32];
	fprintf(s->f, " %s=\"%s\"", name, svg_num(b, v));
}

void svg_attr_u64(struct svg *s, const char *name, uint64_t v)
{
	fprintf(s->f, " %s=\"%" PRIu64 "\"", name, v);
}

void svg_text(struct svg *s, const char *text)
{
	end_tag(s);
	svg_escape(s->f, text, false);
}

void svg_d_begin(struct svg *s, const char *name)
{
	fprintf(s->f, " %s=\"", name);
}

static void d_cmd(struct svg *s, char cmd, double a, const double *b)
{
	char x[32], y[32];
	fputc(cmd, s->f);
	fputs(svg_num(x, a), s->f);
	if (b) {
		fputc(' ', s->f);
		fputs(svg_num(y, *b), s->f);
	}
}

void svg_d_move(struct svg *s, double x, double y)
{
	d_cmd(s, 'M', x, &y);
}

void svg_d_line(struct svg *s, double x, double y)
{
	d_cmd(s, 'L', x, &y);
}

void svg_d_h(struct svg *s, double x)
{
	d_cmd(s, 'H', x, NULL);
}

void svg_d_v(struct svg *s, double y)
{
	d_cmd(s, 'V', y, NULL);
}

void svg_d_close(struct svg *s)
{
	fputc('Z', s->f);
}

void svg_d_end(struct svg *s)
{
	fputc('"', s->f);
}
