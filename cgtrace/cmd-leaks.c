/* SPDX-License-Identifier: MIT */
/* cgtrace leaks: allocations never freed, grouped by call stack, largest first. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static int run(int argc, char **argv);

const struct cli_cmd cli_leaks = {
    .name = "leaks",
    .args = "[-n N] [--device D] [--json] [--bytes] TRACE",
    .help = "Lists the allocations still live at the end of the trace (never freed),\n"
            "grouped by call stack, most bytes first, each stack from its allocation\n"
            "site outwards.\n\n"
            "  -n N        stacks shown (default 20, 0 = all)\n"
            "  --device D  only device D (cpu, cuda:0, ...)\n"
            "  --json      {\"leaked_count\", \"leaked_bytes\", \"stacks\": [{device,\n"
            "              stack_id, leaked_count, leaked_bytes, frames}]}\n"
            "  --bytes     exact byte counts instead of KiB/MiB/GiB\n",
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

static int print_json(const struct cli_site_row *rows, size_t n, size_t shown)
{
	struct cli_buf b = {0};
	uint64_t count = 0, bytes = 0;
	for (size_t i = 0; i < n; i++) {
		count = sat(count, rows[i].sum.leaked_count);
		bytes = sat(bytes, rows[i].sum.leaked_bytes);
	}
	bool first = true;
	cli_buf_putc(&b, '{');
	cli_json_key(&b, &first, "leaked_count");
	cli_json_u64(&b, count);
	cli_json_key(&b, &first, "leaked_bytes");
	cli_json_u64(&b, bytes);
	cli_json_key(&b, &first, "stacks");
	cli_buf_putc(&b, '[');
	for (size_t i = 0; i < shown; i++) {
		bool f2 = true;
		cli_buf_puts(&b, i ? ",{" : "{");
		cli_json_key(&b, &f2, "device");
		cli_json_str(&b, rows[i].device);
		cli_json_key(&b, &f2, "stack_id");
		cli_json_u64(&b, rows[i].sum.stack_id);
		cli_json_key(&b, &f2, "leaked_count");
		cli_json_u64(&b, rows[i].sum.leaked_count);
		cli_json_key(&b, &f2, "leaked_bytes");
		cli_json_u64(&b, rows[i].sum.leaked_bytes);
		cli_json_key(&b, &f2, "frames");
		cli_json_frames(&b, rows[i].stack, false);
		cli_buf_putc(&b, '}');
	}
	cli_buf_lit(&b, "]}");
	return cli_json_print(&b);
}

static void print_human(const struct cli_site_row *rows, size_t n, size_t shown, bool exact)
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
		cli_print_frames(r->stack, false, "    ");
	}
	if (shown < n)
		printf("\n... and %s more stacks (-n 0 lists all)\n", cli_count(a, n - shown));
}

static int run(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"device", required_argument, NULL, 'd'},
	    {"json", no_argument, NULL, 'j'},
	    {"bytes", no_argument, NULL, 'b'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	const char *device = NULL;
	bool json = false, exact = false;
	size_t top = 20;
	int c, status = CLI_OK;
	while ((c = getopt_long(argc, argv, "hn:", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			device = optarg;
			break;
		case 'n':
			if (!cli_count_arg(optarg, &top))
				return cli_usage_error(&cli_leaks, "-n needs a number, got '%s'",
				                       optarg);
			break;
		case 'j':
			json = true;
			break;
		case 'b':
			exact = true;
			break;
		case 'h':
			cli_print_help(&cli_leaks, stdout);
			return CLI_OK;
		default:
			return cli_usage_error(&cli_leaks, "unknown option");
		}
	}
	const char *path = cli_trace_arg(&cli_leaks, argc, argv, &status);
	if (!path)
		return status;
	struct cli_sites s;
	struct cli_site_row *rows;
	size_t n;
	if (cli_sites_open_rows(&s, path, device, true, CLI_BY_LEAKED, &rows, &n) != CLI_OK)
		return CLI_FAIL;
	size_t shown = top && top < n ? top : n;
	if (json)
		status = print_json(rows, n, shown);
	else
		print_human(rows, n, shown, exact);
	free(rows);
	cli_sites_close(&s);
	if (!json && (fflush(stdout) || ferror(stdout)))
		return CLI_FAIL;
	return status;
}
