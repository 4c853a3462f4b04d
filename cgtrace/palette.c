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

static void colours(struct cli_buf *b, const char *const *c, size_t n)
{
	cli_buf_putc(b, '[');
	for (size_t i = 0; i < n; i++) {
		if (i)
			cli_buf_putc(b, ',');
		if (c[i])
			cli_json_str(b, c[i]);
		else
			cli_buf_lit(b, "null");
	}
	cli_buf_putc(b, ']');
}

void cli_palette_json(struct cli_buf *b)
{
	const struct cli_palette *p = &cli_palette;
	bool first = true;
	cli_buf_putc(b, '{');
	cli_json_key(b, &first, "category");
	colours(b, p->category, CGTRACE_CAT_COUNT);
	cli_json_key(b, &first, "step");
	colours(b, p->step, CGTRACE_STEP_OPTIMIZER + 1);
	cli_json_key(b, &first, "band_opacity");
	cli_buf_puts(b, p->band_opacity);
#define MARK(name, colour)                                                                         \
	cli_json_key(b, &first, #name);                                                            \
	cli_json_str(b, p->name);
	CLI_PALETTE_MARKS(MARK)
#undef MARK
	cli_buf_putc(b, '}');
}
