/* SPDX-License-Identifier: MIT */
/*
 * The rules of cgtrace check (check-rules.h). A rule is a line of words:
 * the limit's name, its device where the kind needs one, its value, then
 * qualifiers key=value. What each kind takes is this file's table.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check-rules.h"
#include "cgtrace.h"
#include "cli-size.h"

enum value_kind { VALUE_SIZE, VALUE_COUNT, VALUE_PCT };

/* The qualifiers a kind takes, as bits. */
enum { Q_DEVICE = 1, Q_CATEGORY = 2, Q_PHASE = 4, Q_RANK = 8 };

static const struct {
	const char *name;
	enum value_kind value;
	bool device_word; /* the device is the word after the name */
	unsigned quals;
} kinds[] = {
    [CLI_LIMIT_PEAK] = {"max-peak", VALUE_SIZE, true, Q_CATEGORY | Q_PHASE | Q_RANK},
    [CLI_LIMIT_LEAKED] = {"max-leaked", VALUE_SIZE, false, Q_DEVICE | Q_RANK},
    [CLI_LIMIT_ALLOCS] = {"max-allocs", VALUE_COUNT, false, Q_DEVICE | Q_RANK},
    [CLI_LIMIT_GROWTH] = {"max-growth-per-update", VALUE_SIZE, false, Q_DEVICE | Q_RANK},
    [CLI_LIMIT_INCREASE] = {"max-increase", VALUE_PCT, false, Q_DEVICE | Q_RANK},
};

_Static_assert(sizeof(kinds) / sizeof(kinds[0]) == CLI_LIMIT_KINDS, "one row per kind");

const char *cli_limit_name(enum cli_limit_kind k)
{
	return kinds[k].name;
}

#define MAX_WORDS 8

/* The line's words, split at blanks, in place; -1 past MAX_WORDS. */
static int words(char *s, char **w)
{
	int n = 0;
	for (char *tok = strtok(s, " \t\r\n"); tok; tok = strtok(NULL, " \t\r\n")) {
		if (n == MAX_WORDS)
			return -1;
		w[n++] = tok;
	}
	return n;
}

static bool fail(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static bool fail(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return false;
}

static bool value_of(struct cli_limit *l, enum value_kind v, const char *s, char *err, size_t len)
{
	char *end;
	switch (v) {
	case VALUE_SIZE:
		if (!cli_size_parse(s, &l->value))
			return fail(err, len, "'%s' is not a size (a number and one of %s)", s,
			            CLI_SIZE_UNITS);
		return true;
	case VALUE_COUNT:
		if (*s < '0' || *s > '9' || (errno = 0, l->value = strtoull(s, &end, 10), *end) ||
		    errno)
			return fail(err, len, "'%s' is not a count", s);
		return true;
	case VALUE_PCT:
		l->pct = strtod(s, &end);
		if (*s < '0' || *s > '9' || (*end && strcmp(end, "%") != 0))
			return fail(err, len, "'%s' is not a percentage (a number, %s)", s,
			            "as 5 or 12.5%");
		return true;
	}
	return false;
}

static int category_of(const char *s)
{
	for (int k = 0; k < CGTRACE_CAT_COUNT; k++)
		if (strcmp(s, cgtrace_category_name((enum cgtrace_category)k)) == 0)
			return k;
	return -1;
}

static bool qualifier(struct cli_limit *l, unsigned quals, const char *w, char *err, size_t len)
{
	const char *eq = strchr(w, '=');
	size_t k = eq ? (size_t)(eq - w) : 0;
	const char *v = eq ? eq + 1 : "";
	if (!eq || !*v)
		return fail(err, len, "'%s': expected KEY=VALUE", w);
	if (k == 6 && !strncmp(w, "device", k) && (quals & Q_DEVICE) &&
	    strlen(v) < sizeof(l->device)) {
		strcpy(l->device, v);
	} else if (k == 8 && !strncmp(w, "category", k) && (quals & Q_CATEGORY)) {
		if ((l->category = category_of(v)) < 0)
			return fail(err, len, "'%s' is no category (%s)", v,
			            "parameter, activation, gradient, optimizer, other");
	} else if (k == 5 && !strncmp(w, "phase", k) && (quals & Q_PHASE) &&
	           strlen(v) < sizeof(l->phase)) {
		strcpy(l->phase, v);
	} else if (k == 4 && !strncmp(w, "rank", k) && (quals & Q_RANK)) {
		char *end;
		errno = 0;
		l->rank = (int64_t)strtoll(v, &end, 10);
		if (*v < '0' || *v > '9' || *end || errno)
			return fail(err, len, "'%s' is not a rank", v);
	} else {
		return fail(err, len, "'%s' does not go with %s", w, kinds[l->kind].name);
	}
	return true;
}

static bool append(struct cli_limits *ls, const struct cli_limit *l, char *err, size_t len)
{
	if (ls->n == ls->cap) {
		size_t cap = ls->cap ? ls->cap * 2 : 16;
		struct cli_limit *v = realloc(ls->v, cap * sizeof(*v));
		if (!v)
			return fail(err, len, "out of memory");
		ls->v = v;
		ls->cap = cap;
	}
	ls->v[ls->n++] = *l;
	return true;
}

bool cli_limit_parse(struct cli_limits *ls, const char *line, const char *origin, char *err,
                     size_t len)
{
	char copy[512], *w[MAX_WORDS];
	if (strlen(line) >= sizeof(copy))
		return fail(err, len, "a rule of more than %zu bytes", sizeof(copy) - 1);
	strcpy(copy, line);
	int n = words(copy, w);
	if (n < 0)
		return fail(err, len, "more than %d words", MAX_WORDS);
	if (n == 0)
		return fail(err, len, "an empty rule");
	struct cli_limit l = {.category = -1, .rank = -1};
	int k = 0;
	while (k < CLI_LIMIT_KINDS && strcmp(w[0], kinds[k].name) != 0)
		k++;
	if (k == CLI_LIMIT_KINDS)
		return fail(err, len, "'%s' is no limit (max-peak, max-leaked, max-allocs, %s)",
		            w[0], "max-growth-per-update, max-increase");
	l.kind = (enum cli_limit_kind)k;
	int at = 1;
	if (kinds[k].device_word) {
		if (at >= n || strchr(w[at], '='))
			return fail(err, len, "%s needs a DEVICE (cpu, cuda:0, gpu:UUID)",
			            kinds[k].name);
		if (strlen(w[at]) >= sizeof(l.device))
			return fail(err, len, "'%s': a device name too long", w[at]);
		strcpy(l.device, w[at++]);
	}
	if (at >= n)
		return fail(err, len, "%s needs a value", kinds[k].name);
	if (!value_of(&l, kinds[k].value, w[at++], err, len))
		return false;
	for (; at < n; at++)
		if (!qualifier(&l, kinds[k].quals, w[at], err, len))
			return false;
	if (!strncmp(l.device, "gpu:", 4) && l.rank >= 0)
		return fail(err, len, "rank= does not go with %s, the sum of every process on it",
		            l.device);
	/* The text: the words as given, one blank apart. */
	size_t t = 0;
	strcpy(copy, line);
	n = words(copy, w);
	for (int i = 0; i < n && t < sizeof(l.text); i++)
		t += (size_t)snprintf(l.text + t, sizeof(l.text) - t, "%s%s", i ? " " : "", w[i]);
	snprintf(l.origin, sizeof(l.origin), "%s", origin);
	return append(ls, &l, err, len);
}

bool cli_limits_read(struct cli_limits *ls, const char *path, char *err, size_t len)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(err, len, "%s: %s", path, strerror(errno));
		return false;
	}
	char line[1024], origin[192], why[400];
	unsigned no = 0;
	bool ok = true;
	while (ok && fgets(line, sizeof(line), f)) {
		no++;
		snprintf(origin, sizeof(origin), "%s:%u", path, no);
		if (!strchr(line, '\n') && !feof(f)) {
			snprintf(err, len, "%s: a line longer than %zu bytes", origin,
			         sizeof(line) - 2);
			ok = false;
			break;
		}
		char *hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		if (strspn(line, " \t\r\n") == strlen(line))
			continue;
		if (!cli_limit_parse(ls, line, origin, why, sizeof(why))) {
			snprintf(err, len, "%s: %s", origin, why);
			ok = false;
		}
	}
	if (ok && ferror(f)) {
		snprintf(err, len, "%s: %s", path, strerror(EIO));
		ok = false;
	}
	fclose(f);
	return ok;
}

void cli_limits_free(struct cli_limits *ls)
{
	free(ls->v);
	*ls = (struct cli_limits){0};
}
