/* SPDX-License-Identifier: MIT */
/*
 * Three training updates marked only by NVTX ranges named as PyTorch's
 * profiler names them (ProfilerStep#N, in CGPROBE_UPDATE_RANGE's default):
 * update N allocates 3000 + N bytes; update 1's block stays live, the
 * others are freed inside their update (tests/test-nvtx-updates.sh).
 */
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
	void *kept = NULL;
	for (int n = 1; n <= 3; n++) {
		char name[32];
		snprintf(name, sizeof(name), "ProfilerStep#%d", n);
		nvtxRangePushA(name);
		void *p = malloc(3000 + (size_t)n);
		__asm__ volatile("" : : "r"(p) : "memory");
		if (n == 1)
			kept = p;
		else
			free(p);
		nvtxRangePop();
	}
	free(kept);
	return 0;
}
