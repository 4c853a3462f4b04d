/* SPDX-License-Identifier: MIT */
#include "process.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "num_scan.h"

struct cg_process cg_process;

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* Characters that never need quoting in POSIX sh (those of Python's shlex.quote). */
static bool shell_safe(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("_@%+=:,./-", c));
}

/* The length of argument a quoted for sh: bare when safe, else in single quotes. */
static size_t quoted_len(const char *a)
{
	size_t n = 0, quotes = 0;
	bool safe = *a != '\0';
	for (; a[n]; n++) {
		safe = safe && shell_safe((unsigned char)a[n]);
		quotes += a[n] == '\'';
	}
	return safe ? n : n + 2 + 3 * quotes; /* each ' becomes '\'' */
}

static char *put_quoted(char *out, const char *a)
{
	size_t n = strlen(a);
	if (quoted_len(a) == n) {
		memcpy(out, a, n);
		return out + n;
	}
	*out++ = '\'';
	for (; *a; a++) {
		if (*a == '\'') {
			memcpy(out, "'\\''", 4);
			out += 4;
		} else {
			*out++ = *a;
		}
	}
	*out++ = '\'';
	return out;
}

#define CMDLINE_CUT " ..."

/*
 * The arguments of raw (n bytes of /proc/self/cmdline), quoted for sh and
 * joined by spaces: `sh -c "$cmdline"` runs the same argv. Arguments are
 * never cut: the first that does not fit whole, or that the read did not
 * get whole (cut), and all after it, become " ...".
 */
static void quote_cmdline(char *out, size_t cap, const char *raw, size_t n, bool cut)
{
	const size_t limit = cap - 1, mark = sizeof(CMDLINE_CUT) - 1;
	char *at = out;
	for (const char *a = raw; a < raw + n;) {
		const char *end = memchr(a, '\0', (size_t)(raw + n - a));
		if (!end) {
			/* No NUL: the read stopped inside this argument. */
			cut = true;
			break;
		}
		bool last = end + 1 == raw + n && !cut;
		size_t need = (at > out) + quoted_len(a);
		/* Room for the mark stays while more may follow. */
		if ((size_t)(at - out) + need + (last ? 0 : mark) > limit) {
			cut = true;
			break;
		}
		if (at > out)
			*at++ = ' ';
		at = put_quoted(at, a);
		a = end + 1;
	}
	if (cut) {
		const char *m = at > out ? CMDLINE_CUT : CMDLINE_CUT + 1;
		memcpy(at, m, strlen(m));
		at += strlen(m);
	}
	*at = '\0';
}

void cg_process_read(void)
{
	/*
	 * Any command line the tag holds whole (4096 bytes joined, 4097 with
	 * its NULs), one byte to see it goes on, one for a terminator.
	 */
	static char raw[sizeof(cg_process.cmdline) + 2];
	struct cg_process *p = &cg_process;
	ssize_t n = readlink("/proc/self/exe", p->exe_path, sizeof(p->exe_path) - 1);
	p->exe_path[n > 0 ? n : 0] = '\0';
	snprintf(p->exe_name, sizeof(p->exe_name), "%.255s", base_name(p->exe_path));
	p->cmdline[0] = '\0';
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	size_t got = 0;
	while (got < sizeof(raw) - 1 && (n = read(fd, raw + got, sizeof(raw) - 1 - got)) > 0)
		got += (size_t)n;
	close(fd);
	if (got == 0)
		return;
	raw[got] = '\0';
	snprintf(p->argv0_name, sizeof(p->argv0_name), "%.255s", base_name(raw));
	/* A full buffer may have more behind it: its last argument counts as cut. */
	quote_cmdline(p->cmdline, sizeof(p->cmdline), raw, got, got == sizeof(raw) - 1);
}

unsigned long long cg_peak_rss(void)
{
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	char buf[4096];
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	const char *p = strstr(buf, "\nVmHWM:");
	if (!p)
		return 0;
	p += 7;
	while (*p == ' ' || *p == '\t')
		p++;
	size_t digits = strspn(p, "0123456789");
	uint64_t kb;
	return cg_scan_u64(p, digits, &kb) < 0 ? 0 : (unsigned long long)kb * 1024;
}
