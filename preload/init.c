/* SPDX-License-Identifier: MIT */
/*
 * Start and end of the probe in a process: before main (preloaded
 * libraries' constructors run first) and after the last exit handler.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"
#include "python.h"
#include "process.h"
#include "real.h"
#include "session.h"
#include "signals.h"
#include "stack.h"
#include "state.h"
#include "thread.h"

/*
 * CGPROBE_FOLLOW=0: exec'd children must not load the probe, so it leaves
 * LD_PRELOAD (and nothing else of the environment) as if it had not been
 * there. Entries are separated by spaces or colons.
 */
static void stop_following(void)
{
	Dl_info info;
	const char *pre = getenv("LD_PRELOAD");
	if (!pre || !dladdr((void *)stop_following, &info) || !info.dli_fname)
		return;
	const char *me = strrchr(info.dli_fname, '/');
	me = me ? me + 1 : info.dli_fname;
	size_t n = strlen(pre);
	char *kept = malloc(n + 1);
	if (!kept)
		return;
	size_t at = 0;
	for (const char *p = pre; *p;) {
		size_t len = strcspn(p, " :");
		const char *base = p;
		for (size_t i = 0; i < len; i++)
			if (p[i] == '/')
				base = p + i + 1;
		size_t blen = len - (size_t)(base - p);
		if (len && !(blen == strlen(me) && memcmp(base, me, blen) == 0)) {
			if (at)
				kept[at++] = ' ';
			memcpy(kept + at, p, len);
			at += len;
		}
		p += len;
		p += strspn(p, " :");
	}
	kept[at] = '\0';
	if (at)
		setenv("LD_PRELOAD", kept, 1);
	else
		unsetenv("LD_PRELOAD");
	free(kept);
}

/* 102: a device source (probe.h) registers at 101, ahead of the first session. */
__attribute__((constructor(102))) static void cg_init(void)
{
	/* main must find errno as the loader left it, whatever the probe's set-up met. */
	int saved = errno;
	cg_self.guard++;
	cg_real_init();
	cg_options_load();
	cg_process_read();
	if (!cg_options_selected(cg_process.exe_name, cg_process.argv0_name)) {
		cg_self.guard--;
		errno = saved;
		return;
	}
	if (!cg_opt.follow)
		stop_following();
	pthread_atfork(cg_session_fork_prepare, cg_session_fork_parent, cg_session_fork_child);
	cg_stack_setup();
	cg_python_setup();
	cg_session_start(0);
	/* Without a trace there is nothing to flush: the program's signals stay as they were. */
	if (cg_recording())
		cg_signals_install();
	cg_self.guard--;
	errno = saved;
}

__attribute__((destructor)) static void cg_fini(void)
{
	int saved = errno;
	cg_self.guard++;
	cg_session_end(5000);
	cg_self.guard--;
	errno = saved;
}
