/* SPDX-License-Identifier: MIT */
/* cgtrace timeline: live bytes after every memory record, as CSV or a chart. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static int run(int argc, char **argv);

const struct cli_cmd cli_timeline = {
	.name = "timeline",
	.args = "[--device D] [--csv | --rows N] [--bytes] TRACE",
	.help = "Live bytes of a device after every memory record, in analysis order.\n"
		"Without --csv, a chart of the device given by --device, else of the device\n"
		"that reached the highest live bytes.\n\n"
		"  --csv       timestamp_ns,device,live_bytes,free_bytes rows (free_bytes is\n"
		"              empty when the device's capacity is unknown)\n"
		"  --device D  only records of device D (e.g. cpu, cuda:0)\n"
		"  --rows N    chart rows (default 24), one per time slice: the slice's start\n"
		"              and end, the highest live bytes in it, the live bytes at its\n"
		"              end, and a bar of the highest\n"
		"  --bytes     exact byte counts in the chart\n",
	.run = run,
};

struct csv_state {
	const char *device;
	struct cli_buf out;
	int err;
};

static int flush_out(struct cli_buf *b)
{
	int ret = b->err || fwrite(b->p, 1, b->len, stdout) != b->len ? -1 : 0;
	b->len = 0;
	return ret;
}

static int csv_row(void *user, const struct cgtrace_timeline_point *p)
{
	struct csv_state *s = user;
	if (s->device && strcmp(s->device, p->device) != 0)
		return 0;
	cli_json_u64(&s->out, p->timestamp_ns);
	cli_buf_putc(&s->out, ',');
	/* Device names are plain (cpu, cuda:0); quote only what CSV needs quoted. */
	if (strpbrk(p->device, ",\"\n\r")) {
		cli_buf_putc(&s->out, '"');
		for (const char *c = p->device; *c; c++) {
			if (*c == '"')
				cli_buf_putc(&s->out, '"');
			cli_buf_putc(&s->out, *c);
		}
		cli_buf_putc(&s->out, '"');
	} else {
		cli_buf_puts(&s->out, p->device);
	}
	cli_buf_putc(&s->out, ',');
	cli_json_u64(&s->out, p->live_bytes);
	cli_buf_putc(&s->out, ',');
	if (p->has_free)
		cli_json_u64(&s->out, p->free_bytes);
	cli_buf_putc(&s->out, '\n');
	if (s->out.len > (1u << 16) && flush_out(&s->out))
		return -1;
	return 0;
}

struct chart_state {
	const char *device;
	uint64_t best; /* without --device: the device with the highest live bytes */
	uint64_t t0, t1;
	size_t rows;
	uint64_t *max, *end; /* per slice: highest live bytes, live bytes after its last record */
	bool *seen;
	uint64_t top;
	int pass;
};

/* The slice of a timestamp: slices split [t0, t1] evenly, t1 falls in the last. */
static size_t slice_of(const struct chart_state *s, uint64_t ts)
{
	if (s->t1 == s->t0)
		return 0;
	double f = (double)(ts - s->t0) / (double)(s->t1 - s->t0);
	size_t row = (size_t)(f * (double)s->rows);
	return row < s->rows ? row : s->rows - 1;
}

static uint64_t slice_start(const struct chart_state *s, size_t row)
{
	return s->t0 + (uint64_t)((double)(s->t1 - s->t0) * (double)row / (double)s->rows);
}

static int chart_point(void *user, const struct cgtrace_timeline_point *p)
{
	struct chart_state *s = user;
	if (s->pass < 0) {
		if (!s->device || p->live_bytes > s->best) {
			s->device = p->device;
			s->best = p->live_bytes;
		}
		return 0;
	}
	if (strcmp(s->device, p->device) != 0)
		return 0;
	if (s->pass == 0) {
		if (!s->seen[0] || p->timestamp_ns < s->t0)
			s->t0 = p->timestamp_ns;
		if (!s->seen[0] || p->timestamp_ns > s->t1)
			s->t1 = p->timestamp_ns;
		s->seen[0] = true;
		return 0;
	}
	size_t row = slice_of(s, p->timestamp_ns);
	if (!s->seen[row] || p->live_bytes > s->max[row])
		s->max[row] = p->live_bytes;
	s->end[row] = p->live_bytes; /* analysis order is time order */
	s->seen[row] = true;
	if (p->live_bytes > s->top)
		s->top = p->live_bytes;
	return 0;
}

/*
 * One row per slice: its start and end, the highest live bytes in it, the
 * live bytes at its end, and a bar of the highest. What was live when the
 * slice began counts towards its highest (a slice that only frees still
 * held the memory until the free), and a slice without records holds the
 * previous one's end all through.
 */
static void chart_rows(const struct chart_state *s, bool exact)
{
	char t0[32], t1[32], m[32], e[32];
	uint64_t carried = 0;
	printf("%14s  %14s  %14s  %14s  max live bytes on %s, per time slice\n", "slice start",
	       "slice end", "max live", "live at end", s->device);
	for (size_t i = 0; i < s->rows; i++) {
		uint64_t hi = s->seen[i] && s->max[i] > carried ? s->max[i] : carried;
		uint64_t end = s->seen[i] ? s->end[i] : carried;
		uint64_t stop = i + 1 < s->rows ? slice_start(s, i + 1) : s->t1;
		int width = s->top ? (int)((double)hi / (double)s->top * 50.0 + 0.5) : 0;
		printf("%14s  %14s  %14s  %14s  ", cli_ns(t0, slice_start(s, i)), cli_ns(t1, stop),
		       cli_bytes(m, hi, exact), cli_bytes(e, end, exact));
		for (int k = 0; k < width; k++)
			fputs("#", stdout);
		putchar('\n');
		carried = end;
	}
}

static int chart(const struct cgtrace_doc *doc, const char *device, size_t rows, bool exact)
{
	struct chart_state s = {.device = device, .rows = rows};
	s.max = calloc(rows, sizeof(*s.max));
	s.end = calloc(rows, sizeof(*s.end));
	s.seen = calloc(rows, sizeof(*s.seen));
	int ret = !s.max || !s.end || !s.seen ? -1 : 0;
	if (ret == 0 && !device) {
		s.pass = -1;
		ret = cgtrace_memory_timeline(doc, chart_point, &s);
		s.pass = 0;
	}
	if (ret == 0 && s.device)
		ret = cgtrace_memory_timeline(doc, chart_point, &s);
	if (ret == 0 && !s.seen[0]) {
		printf("no memory records%s%s\n", device ? " for device " : "", device ? device : "");
	} else if (ret == 0) {
		/* All records at one instant make one slice, not rows of zero width. */
		if (s.t1 == s.t0)
			s.rows = 1;
		memset(s.seen, 0, rows * sizeof(*s.seen));
		s.pass = 1;
		ret = cgtrace_memory_timeline(doc, chart_point, &s);
		if (ret == 0)
			chart_rows(&s, exact);
	}
	free(s.max);
	free(s.end);
	free(s.seen);
	return ret;
}

static int run(int argc, char **argv)
{
	static const struct option opts[] = {
		{"csv", no_argument, NULL, 'c'},
		{"device", required_argument, NULL, 'd'},
		{"rows", required_argument, NULL, 'r'},
		{"bytes", no_argument, NULL, 'b'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	bool csv = false, exact = false;
	const char *device = NULL;
	size_t rows = 24;
	int c, status = CLI_OK;
	char *end;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			csv = true;
			break;
		case 'd':
			device = optarg;
			break;
		case 'b':
			exact = true;
			break;
		case 'r':
			rows = strtoul(optarg, &end, 10);
			if (*optarg < '0' || *optarg > '9' || *end || rows == 0 || rows > 10000)
				return cli_usage_error(&cli_timeline,
						       "--rows needs a number from 1 to 10000");
			break;
		case 'h':
			cli_print_help(&cli_timeline, stdout);
			return CLI_OK;
		default:
			return cli_usage_error(&cli_timeline, "unknown option");
		}
	}
	const char *path = cli_trace_arg(&cli_timeline, argc, argv, &status);
	if (!path)
		return status;
	struct cgtrace_doc *doc = cli_load(path);
	if (!doc)
		return CLI_FAIL;
	int ret;
	if (csv) {
		struct csv_state s = {.device = device};
		cli_buf_lit(&s.out, "timestamp_ns,device,live_bytes,free_bytes\n");
		ret = cgtrace_memory_timeline(doc, csv_row, &s);
		if (ret == 0)
			ret = flush_out(&s.out);
		cli_buf_fini(&s.out);
	} else {
		ret = chart(doc, device, rows, exact);
	}
	cgtrace_doc_free(doc);
	if (ret != 0 || fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "cgtrace timeline: %s: output failed\n", path);
		return CLI_FAIL;
	}
	return CLI_OK;
}
