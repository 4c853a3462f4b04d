/* SPDX-License-Identifier: MIT */
#include "stepmap.h"

#include <fnmatch.h>
#include <string.h>

#include "cgtrace.h"

#define MAX_RULES 64
#define MAX_GLOB 128

struct rule {
	uint8_t step;
	char phase[CG_PHASE_MAX + 1]; /* "" for a step's rule */
	char glob[MAX_GLOB];
};

/* Set once, from the options, before any range is seen. */
static struct rule rules[MAX_RULES];
static unsigned n_rules;

static const char *const step_names[] = {"none", "forward", "backward", "optimizer"};

/* ASCII only, whatever the program's locale. */
static bool phase_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '.' || c == '-';
}

int cg_stepmap_name(const char *s, size_t n)
{
	for (int i = 0; i < 4; i++)
		if (strlen(step_names[i]) == n && !memcmp(step_names[i], s, n))
			return i;
	if (n == 0 || n > CG_PHASE_MAX)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (!phase_char(s[i]))
			return -1;
	return CG_STEPMAP_PHASE;
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
		size_t name_len = (size_t)(eq - p);
		int step = cg_stepmap_name(p, name_len);
		if (step < 0)
			return false;
		for (const char *g = eq + 1; g < p + len;) {
			const char *comma = memchr(g, ',', (size_t)(p + len - g));
			size_t k = comma ? (size_t)(comma - g) : (size_t)(p + len - g);
			if (k == 0 || k >= MAX_GLOB || n == MAX_RULES)
				return false;
			bool phase = step == CG_STEPMAP_PHASE;
			tmp[n].step = phase ? CGTRACE_STEP_NONE : (uint8_t)step;
			memcpy(tmp[n].phase, p, phase ? name_len : 0);
			tmp[n].phase[phase ? name_len : 0] = '\0';
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

uint8_t cg_stepmap_find(const char *name, const char **phase)
{
	*phase = NULL;
	for (unsigned i = 0; i < n_rules; i++)
		if (fnmatch(rules[i].glob, name, 0) == 0) {
			if (rules[i].phase[0])
				*phase = rules[i].phase;
			return rules[i].step;
		}
	return CGTRACE_STEP_NONE;
}
