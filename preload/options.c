/* SPDX-License-Identifier: MIT */
#include "options.h"

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "num_scan.h"
#include "stepmap.h"
#include "warn.h"

struct cg_options cg_opt;
const char *const cg_python_modes[3] = {"auto", "on", "off"};
const char *const cg_clock_modes[3] = {"auto", "monotonic", "tsc"};
const char *const cg_unwind_modes[3] = {"auto", "libunwind", "check"};

enum kind {
	OPT_STR,
	OPT_U64,
	OPT_POS_U64,
	OPT_BOOL,
	OPT_PHASE,
	OPT_SNAPSHOTS,
	OPT_FORMAT,
	OPT_DEPTH,
	OPT_CAPTURE,
	OPT_STEPS,
	OPT_PYTHON,
	OPT_CLOCK,
	OPT_UNWIND, /* the last: a kind added after it moves OPT_KINDS too */
};
/* How many kinds: cg_options_load's expect[] has a text for each. */
#define OPT_KINDS (OPT_UNWIND + 1)

/*
 * tag: the meta tag that records the setting in every trace, for settings
 * that change what a trace holds (a reader must know a trace left out
 * small blocks). Settings that choose processes (ONLY, FOLLOW), where and
 * when output goes (OUTPUT, FLUSH_MS, MANIFEST, QUIET, STATS, UNWIND,
 * TEST_JSONL_COPY, TEST_FORK_TIMEOUT) or that are meta fields of their own (ENTRYPOINT,
 * PHASE, CORRELATION_ID, DEVICE) or tags themselves (TAGS) have none;
 * CAPTURE_STEP is a meta field and, with the window's other settings, a tag. FORMAT's tag is the trace's encoding, which its name may
 * decide rather than the variable.
 */
struct option_def {
	const char *name;
	enum kind kind;
	void *value;
	const char *def;
	const char *tag;
};

static const struct option_def table[] = {
	{"CGPROBE_QUIET", OPT_BOOL, &cg_warn_quiet, "0", NULL},
	/* No default here: the default name follows the encoding (cg_options_load). */
	{"CGPROBE_OUTPUT", OPT_STR, &cg_opt.output, NULL, NULL},
	/* The tag records the trace's encoding in effect, which the output's name may decide. */
	{"CGPROBE_FORMAT", OPT_FORMAT, &cg_opt.format, "compact", "cgprobe_format"},
	{"CGPROBE_MIN_BYTES", OPT_U64, &cg_opt.min_bytes, "0", "cgprobe_min_bytes"},
	{"CGPROBE_ONLY", OPT_STR, &cg_opt.only, NULL, NULL},
	{"CGPROBE_FOLLOW", OPT_BOOL, &cg_opt.follow, "1", NULL},
	{"CGPROBE_FLUSH_MS", OPT_POS_U64, &cg_opt.flush_ms, "200", NULL},
	{"CGPROBE_TAGS", OPT_STR, &cg_opt.tags, NULL, NULL},
	{"CGPROBE_ENTRYPOINT", OPT_STR, &cg_opt.entrypoint, NULL, NULL},
	{"CGPROBE_PHASE", OPT_PHASE, &cg_opt.phase, "train", NULL},
	/* The window's settings are tags too: a reader must know the trace is one update. */
	{"CGPROBE_CAPTURE", OPT_CAPTURE, &cg_opt.capture_update, "all", "cgprobe_capture"},
	{"CGPROBE_CAPTURE_STEP", OPT_POS_U64, &cg_opt.capture_step, "1", "cgprobe_capture_step"},
	{"CGPROBE_UPDATE_RANGE", OPT_STR, &cg_opt.update_range, CG_UPDATE_RANGE_DEFAULT,
	 "cgprobe_update_range"},
	{"CGPROBE_CORRELATION_ID", OPT_STR, &cg_opt.correlation_id, NULL, NULL},
	{"CGPROBE_DEVICE", OPT_STR, &cg_opt.device, "cpu", NULL},
	{"CGPROBE_MANIFEST", OPT_STR, &cg_opt.manifest, NULL, NULL},
	{"CGPROBE_DEVICE_SNAPSHOTS", OPT_SNAPSHOTS, &cg_opt.device_snapshots, "off",
	 "cgprobe_device_snapshots"},
	/* The tag is the depth in effect: 0 when the unwinder could not be set up (stack.c). */
	{"CGPROBE_STACK_DEPTH", OPT_DEPTH, &cg_opt.stack_depth, "32", "cgprobe_stack_depth"},
	/* The tag is the mapping of range names to steps in use (stepmap.h). */
	{"CGPROBE_STEPS", OPT_STEPS, &cg_opt.steps, CG_STEPS_DEFAULT, "cgprobe_steps"},
	/* The tag is the mode in effect: off when no interpreter was found (python.c). */
	{"CGPROBE_PYTHON", OPT_PYTHON, &cg_opt.python, "auto", "cgprobe_python"},
	/* The tag is the clock in effect, tsc or monotonic: the stamps' order rests on it. */
	{"CGPROBE_CLOCK", OPT_CLOCK, &cg_opt.clock, "auto", "cgprobe_clock"},
	/* No tag: either way the stacks are the same (CGPROBE_UNWIND=check shows it). */
	{"CGPROBE_UNWIND", OPT_UNWIND, &cg_opt.unwind, "auto", NULL},
	{"CGPROBE_STATS", OPT_BOOL, &cg_opt.stats, "0", NULL},
	{"CGPROBE_TEST_JSONL_COPY", OPT_STR, &cg_opt.test_jsonl_copy, NULL, NULL},
	{"CGPROBE_TEST_FORK_TIMEOUT", OPT_BOOL, &cg_opt.test_fork_timeout, "0", NULL},
};

#define N_OPTIONS (sizeof(table) / sizeof(table[0]))

/* Numbers as text for their tags; the meta record being formatted points at them. */
static char tag_text[N_OPTIONS][24];

/*
 * Plain decimal only: strtoull would take "-1", " 7" and "0x10". Leading
 * zeros are a person's way of writing a number here ("0100"), not the
 * format's error they are in a trace, so they go before the trace's scanner.
 */
static bool parse_u64(const char *s, uint64_t *out)
{
	while (s[0] == '0' && s[1] >= '0' && s[1] <= '9')
		s++;
	return cg_scan_u64(s, strlen(s), out) == 0;
}

static bool parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = {"1", "yes", "true", "on"};
	static const char *const no[] = {"0", "no", "false", "off"};
	for (size_t i = 0; i < 4; i++) {
		if (!strcasecmp(s, yes[i]))
			return *out = true, true;
		if (!strcasecmp(s, no[i]))
			return *out = false, true;
	}
	return false;
}

/* A mode option: s is one of the first n names, and the mode its index. */
static bool set_mode(const struct option_def *o, const char *s, const char *const *names,
		     uint8_t n)
{
	for (uint8_t m = 0; m < n; m++)
		if (!strcmp(s, names[m]))
			return *(uint8_t *)o->value = m, true;
	return false;
}

/* from_env: the value was set, not the default (CGPROBE_FORMAT=compact decides for FIFOs). */
static bool apply(const struct option_def *o, const char *s, bool from_env)
{
	uint64_t v;
	switch (o->kind) {
	case OPT_STR:
		*(const char **)o->value = s && *s ? s : NULL;
		return true;
	case OPT_U64:
		return parse_u64(s, o->value);
	case OPT_POS_U64:
		if (!parse_u64(s, &v) || v == 0)
			return false;
		*(uint64_t *)o->value = v;
		return true;
	case OPT_BOOL:
		return parse_bool(s, o->value);
	case OPT_PHASE:
		if (strcmp(s, "train") && strcmp(s, "infer"))
			return false;
		*(uint8_t *)o->value = strcmp(s, "train") ? 1 : 0;
		return true;
	case OPT_SNAPSHOTS:
		if (strcmp(s, "off") && strcmp(s, "alloc"))
			return false;
		*(bool *)o->value = strcmp(s, "alloc") == 0;
		return true;
	case OPT_DEPTH:
		if (!parse_u64(s, &v) || v > CG_STACK_DEPTH_MAX)
			return false;
		*(uint64_t *)o->value = v;
		return true;
	case OPT_CAPTURE:
		if (strcmp(s, "all") && strcmp(s, "update"))
			return false;
		*(bool *)o->value = strcmp(s, "update") == 0;
		return true;
	case OPT_STEPS:
		if (!cg_stepmap_set(s, true))
			return false;
		*(const char **)o->value = s;
		return true;
	case OPT_PYTHON:
		return set_mode(o, s, cg_python_modes, 3);
	case OPT_CLOCK:
		/* tsc is what auto may settle on, never a request. */
		return set_mode(o, s, cg_clock_modes, 2);
	case OPT_UNWIND:
		return set_mode(o, s, cg_unwind_modes, 3);
	case OPT_FORMAT:
		if (strcmp(s, "compact") && strcmp(s, "jsonl"))
			return false;
		*(uint8_t *)o->value = strcmp(s, "compact") ? CG_FORMAT_JSONL : CG_FORMAT_COMPACT;
		cg_opt.format_explicit = from_env;
		return true;
	}
	return false;
}

/* The value in effect, in the form its variable takes (plain decimal, off/alloc). */
static const char *format_value(const struct option_def *o, char *out, size_t cap)
{
	switch (o->kind) {
	case OPT_STR:
	case OPT_STEPS: {
		const char *s = *(const char *const *)o->value;
		return s ? s : "";
	}
	case OPT_U64:
	case OPT_POS_U64:
	case OPT_DEPTH:
		snprintf(out, cap, "%llu", (unsigned long long)*(const uint64_t *)o->value);
		return out;
	case OPT_BOOL:
		return *(const bool *)o->value ? "1" : "0";
	case OPT_PHASE:
		return *(const uint8_t *)o->value ? "infer" : "train";
	case OPT_SNAPSHOTS:
		return *(const bool *)o->value ? "alloc" : "off";
	case OPT_CAPTURE:
		return *(const bool *)o->value ? "update" : "all";
	case OPT_FORMAT:
		return cg_opt.trace_format == CG_FORMAT_COMPACT ? "compact" : "jsonl";
	case OPT_PYTHON:
		return cg_python_modes[*(const uint8_t *)o->value % 3];
	case OPT_CLOCK:
		return cg_clock_modes[*(const uint8_t *)o->value % 3];
	case OPT_UNWIND:
		return cg_unwind_modes[*(const uint8_t *)o->value % 3];
	}
	return "";
}

/*
 * The default name follows the encoding. CGPROBE_OUTPUT=DIR/ names a
 * job's folder: every process's trace goes there under a name that holds
 * its host and pid, so that the processes of a job on every machine can
 * share one folder (docs/jobs.md).
 */
static void output_template(void)
{
	static char job[4096 + sizeof(CG_JOB_TRACE_NAME ".jsonl")];
	const char *ext = cg_opt.format == CG_FORMAT_JSONL ? ".jsonl" : ".cgt";
	size_t n = cg_opt.output ? strlen(cg_opt.output) : 0;
	cg_opt.job = n > 0 && cg_opt.output[n - 1] == '/';
	if (!cg_opt.output)
		cg_opt.output =
		    cg_opt.format == CG_FORMAT_JSONL ? "cgprobe.%e.%p.jsonl" : "cgprobe.%e.%p.cgt";
	/* A longer folder is no path: creating the trace says so. */
	else if (cg_opt.job && n < 4096) {
		snprintf(job, sizeof(job), "%s%s%s", cg_opt.output, CG_JOB_TRACE_NAME, ext);
		cg_opt.output = job;
	}
}

void cg_options_load(void)
{
	for (size_t i = 0; i < N_OPTIONS; i++) {
		const struct option_def *o = &table[i];
		const char *s = getenv(o->name);
		if (o->def)
			apply(o, o->def, false);
		if (!s || (o->kind != OPT_STR && !*s))
			continue;
		if (!apply(o, s, true)) {
			static const char *const expect[] = {[OPT_STR] = "",
							     [OPT_U64] = "a non-negative integer",
							     [OPT_POS_U64] = "a positive integer",
							     [OPT_BOOL] = "0 or 1",
							     [OPT_PHASE] = "train or infer",
							     [OPT_SNAPSHOTS] = "off or alloc",
							     [OPT_PYTHON] = "auto, on or off",
							     [OPT_CLOCK] = "auto or monotonic",
							     [OPT_UNWIND] = "auto, libunwind or check",
							     [OPT_FORMAT] = "compact or jsonl",
							     [OPT_CAPTURE] = "all or update",
							     [OPT_STEPS] = "STEP=GLOB,...:STEP=GLOB,...",
							     [OPT_DEPTH] = "an integer from 0 to "
									   CG_STACK_DEPTH_MAX_TEXT};
			_Static_assert(sizeof(expect) / sizeof(expect[0]) == OPT_KINDS,
				       "a text for each kind of option");
			cg_warn(o->name, "=", s, " is not ", expect[o->kind], "; using ",
				o->def ? o->def : "none", NULL);
			if (o->def)
				apply(o, o->def, false);
		}
	}
	output_template();
}

void cg_options_each_tag(void (*fn)(void *ctx, const char *key, const char *value), void *ctx)
{
	for (size_t i = 0; i < N_OPTIONS; i++)
		if (table[i].tag)
			fn(ctx, table[i].tag,
			   format_value(&table[i], tag_text[i], sizeof(tag_text[i])));
}

static bool match_list(const char *globs, const char *name)
{
	char pat[256];
	for (const char *p = globs; *p;) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		if (n > 0 && n < sizeof(pat)) {
			memcpy(pat, p, n);
			pat[n] = '\0';
			if (fnmatch(pat, name, 0) == 0)
				return true;
		}
		p += n + (end != NULL);
	}
	return false;
}

bool cg_options_match(const char *globs, const char *name)
{
	return globs && name && match_list(globs, name);
}

bool cg_options_selected(const char *exe_name, const char *argv0_name)
{
	if (!cg_opt.only)
		return true;
	return (exe_name && match_list(cg_opt.only, exe_name)) ||
	       (argv0_name && match_list(cg_opt.only, argv0_name));
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && strcmp(s + n - k, suffix) == 0;
}

enum cg_format cg_options_format(const char *path, bool stream)
{
	if (ends_with(path, ".jsonl") || ends_with(path, ".zst"))
		return CG_FORMAT_JSONL;
	if (stream && !cg_opt.format_explicit)
		return CG_FORMAT_JSONL;
	return (enum cg_format)cg_opt.format;
}
