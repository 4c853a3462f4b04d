/* SPDX-License-Identifier: MIT */
/*
 * A program killed mid-run: it makes BLOCKS allocations, waits past a few
 * flush periods (CGPROBE_FLUSH_MS) so that the probe has written them, says
 * "R ready" and then waits to be killed with SIGKILL, which no exit path of
 * the probe sees. Its trace must still read, up to its last whole block.
 */
#define PROG "killed"
#include <stdlib.h>
#include <time.h>

#include "prog.h"

#define BLOCKS 1000

int main(void)
{
	static void *keep[BLOCKS];
	for (size_t i = 0; i < BLOCKS; i++)
		keep[i] = malloc(opaque(64 + i));
	for (size_t i = 0; i < BLOCKS; i += 2)
		free(keep[i]);
	const char *ms = getenv("CGPROBE_FLUSH_MS");
	long wait_ms = 4 * (ms ? atol(ms) : 200);
	struct timespec ts = {wait_ms / 1000, (wait_ms % 1000) * 1000000};
	nanosleep(&ts, NULL);
	say("R ready");
	for (;;)
		pause();
}
