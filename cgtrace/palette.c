/* SPDX-License-Identifier: MIT */
/* The pictures' colours (palette.h). */
#include "palette.h"

#define ACTIVATION "#f28e2b"
#define GRADIENT "#e15759"
#define OPTIMIZER "#76b7b2"

const struct cli_palette cli_palette = {
	.category =
	    {
		[CGTRACE_CAT_PARAMETER] = "#4e79a7",
		[CGTRACE_CAT_ACTIVATION] = ACTIVATION,
		[CGTRACE_CAT_GRADIENT] = GRADIENT,
		[CGTRACE_CAT_OPTIMIZER] = OPTIMIZER,
		[CGTRACE_CAT_OTHER] = "#9c9c9c",
	    },
	/* A step's tint is the category it makes the most of. */
	.step =
	    {
		[CGTRACE_STEP_FORWARD] = ACTIVATION,
		[CGTRACE_STEP_BACKWARD] = GRADIENT,
		[CGTRACE_STEP_OPTIMIZER] = OPTIMIZER,
	    },
	.band_opacity = "0.2",
#define MARK(name, colour) .name = colour,
	CLI_PALETTE_MARKS(MARK)
#undef MARK
};

/* Colours by index: a string each, null where there is none. */
static void colours(struct cli_jw *w, const char *const *c, size_t n)
{
	cli_jw_begin_array(w);
	for (size_t i = 0; i < n; i++)
		cli_jw_str(w, c[i]);
	cli_jw_end_array(w);
}

void cli_palette_json(struct cli_jw *w)
{
	const struct cli_palette *p = &cli_palette;
	cli_jw_begin_object(w);
	cli_jw_key(w, "category");
	colours(w, p->category, CGTRACE_CAT_COUNT);
	cli_jw_key(w, "step");
	colours(w, p->step, CGTRACE_STEP_OPTIMIZER + 1);
	cli_jw_key(w, "band_opacity");
	cli_jw_raw(w, p->band_opacity);
#define MARK(name, colour) cli_jw_key_str(w, #name, p->name);
	CLI_PALETTE_MARKS(MARK)
#undef MARK
	cli_jw_end_object(w);
}
