/* SPDX-License-Identifier: MIT */
#include "meta_end.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fmt_num.h"

/*
 * In the order of struct cg_enc_end; and the tag of spaces they take
 * their room from, enough for three numbers of 20 digits.
 */
static const char *const end_keys[] = {"cgprobe_peak_rss_bytes", "cgprobe_probe_bytes",
                                       "cgprobe_stack_table_bytes"};
#define END_ROOM "cgprobe_end_room"
static const char end_room[] = "                                                            ";
_Static_assert(sizeof(end_room) - 1 == 60, "room for three u64");

void cg_meta_end_tags(void (*add)(void *ctx, const char *key, const char *value), void *ctx)
{
	for (size_t i = 0; i < sizeof(end_keys) / sizeof(end_keys[0]); i++)
		add(ctx, end_keys[i], "");
	add(ctx, END_ROOM, end_room);
}

/*
 * The value of tag key in a head: after `"key":"`, which only a key can
 * be (a quote inside a JSON string is escaped), up to the next quote. The
 * probe's end values hold digits and spaces only.
 */
static bool end_value(const char *p, size_t n, const char *key, size_t *at, size_t *len)
{
	char pat[64];
	int k = snprintf(pat, sizeof(pat), "\"%s\":\"", key);
	if (k <= 0 || (size_t)k >= sizeof(pat))
		return false;
	const char *v = memmem(p, n, pat, (size_t)k);
	if (!v)
		return false;
	v += k;
	size_t m = 0;
	while (v + m < p + n && ((v[m] >= '0' && v[m] <= '9') || v[m] == ' '))
		m++;
	if (v + m >= p + n || v[m] != '"')
		return false;
	*at = (size_t)(v - p);
	*len = m;
	return true;
}

struct end_edit {
	size_t at, len; /* the value's place in the head */
	char text[60];  /* what goes there */
	size_t n;
};

bool cg_meta_end_patch(char *p, size_t n, const struct cg_enc_end *v)
{
	static char out[CG_HEAD_MAX];
	const uint64_t vals[] = {v->peak_rss, v->probe, v->stacks};
	struct end_edit e[4];
	/* What an earlier end wrote (before an exec that failed) gives its room back. */
	long room = 0;
	_Static_assert(sizeof(vals) / sizeof(vals[0]) == sizeof(end_keys) / sizeof(end_keys[0]),
	               "a figure a tag");
	if (n > sizeof(out))
		return false;
	for (size_t i = 0; i < 3; i++) {
		if (!end_value(p, n, end_keys[i], &e[i].at, &e[i].len))
			return false;
		e[i].n = cg_fmt_u64(e[i].text, vals[i]);
		room += (long)e[i].len - (long)e[i].n;
	}
	if (!end_value(p, n, END_ROOM, &e[3].at, &e[3].len))
		return false;
	room += (long)e[3].len;
	if (room < 0 || room > (long)sizeof(e[3].text))
		return false;
	e[3].n = (size_t)room;
	memset(e[3].text, ' ', e[3].n);
	/* The four values, in the order they come in the head (tags are sorted). */
	for (size_t i = 1; i < 4; i++)
		for (size_t j = i; j > 0 && e[j].at < e[j - 1].at; j--) {
			struct end_edit x = e[j];
			e[j] = e[j - 1];
			e[j - 1] = x;
		}
	size_t r = 0, w = 0;
	for (size_t i = 0; i < 4; i++) {
		memcpy(out + w, p + r, e[i].at - r);
		w += e[i].at - r;
		memcpy(out + w, e[i].text, e[i].n);
		w += e[i].n;
		r = e[i].at + e[i].len;
	}
	memcpy(out + w, p + r, n - r);
	w += n - r;
	if (w != n)
		return false;
	memcpy(p, out, n);
	return true;
}
