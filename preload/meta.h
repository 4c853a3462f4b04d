/* SPDX-License-Identifier: MIT */
/* The process description: executable, command line, meta record and tags. */
#ifndef CG_META_H
#define CG_META_H

#include <stdint.h>
#include <sys/types.h>

#include "buf.h"

struct cg_process {
	char exe_path[4096];
	char exe_name[256];
	char argv0_name[256];
	char cmdline[4097]; /* at most 4096 bytes: the arguments quoted for sh, " ..." if cut */
};

extern struct cg_process cg_process;

/* Reads /proc/self/exe and /proc/self/cmdline (no allocation). */
void cg_process_read(void);
/* Where a session's process came from, for its meta tags. */
struct cg_meta_origin {
	pid_t forked_from; /* the parent a fork child came from, 0 for none (tag forked_from) */
	/* A fork child's inherited blocks: "complete", "partial" (tag cgprobe_inherited), or NULL. */
	const char *inherited;
};

/* The meta record and the root span's start, as the first lines of a trace. */
void cg_meta_format(struct cg_buf *b, uint64_t unix_ns, const struct cg_meta_origin *origin);

#endif
