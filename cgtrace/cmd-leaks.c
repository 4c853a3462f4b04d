/* SPDX-License-Identifier: MIT */
/* cgtrace leaks: allocations never freed, grouped by call stack, largest first. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

struct leaks_args {
	enum cli_site site;
	const char *device;
	size_t top;
	bool json, exact;
};

static int run(int argc, char **argv);

const struct cli_cmd cli_leaks = {
    .name = "leaks",
    .args = "[-n N] [--device D] [--json] [--site python|native] [--bytes] TRACE",
    .help = "Lists the allocations still live at the end of the trace (never freed),\n"
            "grouped by call stack, most bytes first, each stack from its allocation\n"
            "site outwards.\n\n",
    .label_width = 12,
    .opts = (const struct cli_opt[]){
        {.short_name = 'n', .kind = CLI_OPT_COUNT, .offset = offsetof(struct leaks_args, top),
         .arg = "N", .help = "stacks shown (default 20, 0 = all)"},
        {.name = "device", .kind = CLI_OPT_STR, .offset = offsetof(struct leaks_args, device),
         .arg = "D", .help = "only device D (cpu, cuda:0, ...)"},
        {.name = "json", .offset = offsetof(struct leaks_args, json),
         .help = "{\"leaked_count\", \"leaked_bytes\", \"stacks\": [{device,\n"
                 "stack_id, leaked_count, leaked_bytes, frames}]}"},
        CLI_OPT_SITE(struct leaks_args, site),
		CLI_OPT_BYTES(struct leaks_args, exact),
        {0},
    },
    .run = run,
};

static uint64_t sat(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

/* "1 allocation", "2 allocations". */
static const char *counted(char buf[48], uint64_t n, const char *noun)
{
	char c[32];
	snprintf(buf, 48, "%s %s%s", cli_count(c, n), noun, n == 1 ? "" : "s");
	return buf;
}

static int print_json(struct cli_sites *s, const struct cli_site_row *rows, size_t n,
                      size_t shown)
{
	struct cli_buf b = {0};
	struct cli_jw w;
	uint64_t count = 0, bytes = 0;
	for (size_t i = 0; i < n; i++) {
		count = sat(count, rows[i].sum.leaked_count);
		bytes = sat(bytes, rows[i].sum.leaked_bytes);
	}
	cli_jw_init(&w, &b);
	cli_jw_begin_object(&w);
	cli_jw_key_u64(&w, "leaked_count", count);
	cli_jw_key_u64(&w, "leaked_bytes", bytes);
	cli_jw_key(&w, "stacks");
	cli_jw_begin_array(&w);
	for (size_t i = 0; i < shown; i++) {
		cli_jw_begin_object(&w);
		cli_jw_key_str(&w, "device", rows[i].device);
		cli_jw_key_u64(&w, "stack_id", rows[i].sum.stack_id);
		cli_jw_key_u64(&w, "leaked_count", rows[i].sum.leaked_count);
		cli_jw_key_u64(&w, "leaked_bytes", rows[i].sum.leaked_bytes);
		cli_jw_key(&w, "frames");
		cli_json_frames(&w, cli_sites_stack(s, rows[i].stack_id), false);
		cli_jw_end_object(&w);
	}
	cli_jw_end_array(&w);
	cli_jw_end_object(&w);
	return cli_jw_print(&w);
}

static void print_human(struct cli_sites *s, const struct cli_site_row *rows, size_t n,
                        size_t shown, bool exact)
{
	char a[48], b[48], c[48];
	uint64_t count = 0, bytes = 0;
	for (size_t i = 0; i < n; i++) {
		count = sat(count, rows[i].sum.leaked_count);
		bytes = sat(bytes, rows[i].sum.leaked_bytes);
	}
	if (!n) {
		printf("No leaks: every allocation was freed.\n");
		return;
	}
	printf("%s never freed, %s, from %s:\n", counted(a, count, "allocation"),
	       cli_bytes(b, bytes, exact), counted(c, n, "stack"));
	for (size_t i = 0; i < shown; i++) {
		const struct cli_site_row *r = &rows[i];
		printf("\n%s in %s on %s", cli_bytes(a, r->sum.leaked_bytes, exact),
		       counted(b, r->sum.leaked_count, "allocation"), r->device);
		if (r->sum.stack_id)
			printf(" (stack %llu)", (unsigned long long)r->sum.stack_id);
		printf(":\n");
		cli_print_row_frames(s, r, false, "    ");
	}
	if (shown < n)
		printf("\n... and %s more stacks (-n 0 lists all)\n", cli_count(a, n - shown));
}

static int run(int argc, char **argv)
{
	struct leaks_args a = {.top = 20};
	int status;
	const char *path = cli_parse_trace(&cli_leaks, argc, argv, &a, &status);
	if (!path)
		return status;
	cli_site_mode = a.site;
	struct cli_sites s;
	struct cli_site_row *rows;
	size_t n;
	if (cli_sites_open_rows(&s, path, a.device, true, CLI_BY_LEAKED, &rows, &n) != CLI_OK)
		return CLI_FAIL;
	size_t shown = a.top && a.top < n ? a.top : n;
	if (a.json)
		status = print_json(&s, rows, n, shown);
	else
		print_human(&s, rows, n, shown, a.exact);
	free(rows);
	cli_sites_close(&s);
	if (!a.json && (fflush(stdout) || ferror(stdout)))
		return CLI_FAIL;
	return status;
}
