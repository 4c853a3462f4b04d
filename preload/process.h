/* SPDX-License-Identifier: MIT */
/* The process being profiled: its executable and command line, read once. */
#ifndef CG_PROCESS_H
#define CG_PROCESS_H

struct cg_process {
	char exe_path[4096];
	char exe_name[256];
	char argv0_name[256];
	char cmdline[4097]; /* at most 4096 bytes: the arguments quoted for sh, " ..." if cut */
};

extern struct cg_process cg_process;

/* Reads /proc/self/exe and /proc/self/cmdline (no allocation). */
void cg_process_read(void);
/* The process's peak resident set in bytes (VmHWM of /proc/self/status), 0 when unknown. */
unsigned long long cg_peak_rss(void);

#endif
