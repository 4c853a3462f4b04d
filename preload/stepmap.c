/* SPDX-License-Identifier: MIT */
#include "stepmap.h"

#include <fnmatch.h>
#include <string.h>

#include "cgtrace.h"

#define MAX_RULES 64
#define MAX_GLOB 128

struct rule {
	uint8_t step;
	char glob[MAX_GLOB];
};

/* Set once, from the options, before any range is seen. */
static struct rule rules[MAX_RULES];
static unsigned n_rules;

static const char *const step_names[] = {"none", "forward", "backward", "optimizer"};

static int step_of(const char *s, size_t n)
{
	for (int i = 0; i < 4; i++)
		if (strlen(step_names[i]) == n && !memcmp(step_names[i], s, n))
			return i;
	return -1;
}

bool cg_stepmap_set(const char *spec, bool use)
{
	static struct rule tmp[MAX_RULES];
	unsigned n = 0;
	for (const char *p = spec; *p;) {
		const char *end = strchr(p, ':'), *eq = strchr(p, '=');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (!eq || eq >= p + len)
			return false;
		int step = step_of(p, (size_t)(eq - p));
		if (step < 0)
			return false;
		for (const char *g = eq + 1; g < p + len;) {
			const char *comma = memchr(g, ',', (size_t)(p + len - g));
			size_t k = comma ? (size_t)(comma - g) : (size_t)(p + len - g);
			if (k == 0 || k >= MAX_GLOB || n == MAX_RULES)
				return false;
			tmp[n].step = (uint8_t)step;
			memcpy(tmp[n].glob, g, k);
			tmp[n].glob[k] = '\0';
			n++;
			g += k + (comma != NULL);
		}
		p += len + (end != NULL);
	}
	if (use) {
		memcpy(rules, tmp, n * sizeof(tmp[0]));
		n_rules = n;
	}
	return true;
}

uint8_t cg_stepmap_step(const char *name)
{
	for (unsigned i = 0; i < n_rules; i++)
		if (fnmatch(rules[i].glob, name, 0) == 0)
			return rules[i].step;
	return CGTRACE_STEP_NONE;
}
