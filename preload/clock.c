/* SPDX-License-Identifier: MIT */
#include "clock.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

uint64_t cg_clock_origin;
bool cg_clock_tsc;

/* The kernel switches away from the TSC when it finds it unstable; follow its choice. */
static bool kernel_uses_tsc(void)
{
	char buf[32] = "";
	int fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource",
		      O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n >= 3 && memcmp(buf, "tsc", 3) == 0 && (n == 3 || buf[3] == '\n');
}

void cg_clock_start(void)
{
#if defined(__x86_64__)
	static int checked;
	if (!checked) {
		cg_clock_tsc = kernel_uses_tsc();
		checked = 1;
	}
#endif
	cg_clock_origin = cg_clock_raw();
}

/* A (ticks, ns) pair read as close together as possible. */
static void read_pair(uint64_t *t, uint64_t *n)
{
	*t = cg_clock_ticks();
	*n = cg_clock_now();
}

void cg_clock_map_start(struct cg_clock_map *m)
{
	read_pair(&m->t1, &m->n1);
	m->t0 = m->t1;
	m->n0 = m->n1;
	/* Until a second anchor exists, assume about 3 ticks per ns (any positive slope keeps order). */
	m->mult = cg_clock_tsc ? (1ull << 32) / 3 : 1ull << 32;
	m->measured = false;
}

void cg_clock_map_anchor(struct cg_clock_map *m)
{
	uint64_t t, n;
	read_pair(&t, &n);
	if (!cg_clock_tsc) {
		m->t0 = m->t1 = t;
		m->n0 = m->n1 = n;
		return;
	}
	/* Slopes from anchors closer than 1 ms are noisy: keep a measured one then. */
	if (t > m->t1 && (n > m->n1 + 1000000 || (!m->measured && n > m->n1 + 10000))) {
		m->measured = true;
		m->mult = (uint64_t)(((unsigned __int128)(n - m->n1) << 32) / (t - m->t1));
		m->t0 = m->t1;
		m->n0 = m->n1;
		m->t1 = t;
		m->n1 = n;
	}
}
