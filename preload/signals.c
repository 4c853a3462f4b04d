/* SPDX-License-Identifier: MIT */
#include "signals.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

#include "real.h"
#include "session.h"
#include "thread.h"

static const int fatal[] = {SIGHUP,  SIGINT,  SIGQUIT, SIGILL,  SIGTRAP, SIGABRT,
			    SIGBUS,  SIGFPE,  SIGSEGV, SIGUSR1, SIGUSR2, SIGPIPE,
			    SIGALRM, SIGTERM, SIGXCPU, SIGXFSZ, SIGSYS};

/* Signals where our handler stands in for SIG_DFL. */
static atomic_bool ours[NSIG];
static atomic_bool installed; /* the probe took over SIG_DFL for this process */

static void on_fatal(int sig, siginfo_t *si, void *ctx)
{
	(void)si;
	(void)ctx;
	int saved = errno;
	cg_self.guard++;
	/* Long enough for a big final drain, short enough not to hang a dying process. */
	cg_session_end(3000);
	struct sigaction dfl;
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	cg_real.sigaction(sig, &dfl, NULL);
	atomic_store(&ours[sig], false);
	/* Pending until we return (sig is blocked here), then the default action. */
	raise(sig);
	cg_self.guard--;
	errno = saved;
}

static bool is_fatal(int sig)
{
	for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
		if (fatal[i] == sig)
			return true;
	return false;
}

static int install_ours(int sig)
{
	struct sigaction act;
	memset(&act, 0, sizeof(act));
	act.sa_sigaction = on_fatal;
	act.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
	sigemptyset(&act.sa_mask);
	int r = cg_real.sigaction(sig, &act, NULL);
	if (r == 0)
		atomic_store(&ours[sig], true);
	return r;
}

void cg_signals_install(void)
{
	if (!cg_real.sigaction)
		return;
	atomic_store(&installed, true);
	for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++) {
		int sig = fatal[i];
		struct sigaction old;
		if (cg_real.sigaction(sig, NULL, &old) < 0 || old.sa_handler != SIG_DFL ||
		    (old.sa_flags & SA_SIGINFO))
			continue;
		install_ours(sig);
	}
}

/*
 * Our handler stands for SIG_DFL: the program sees SIG_DFL where it is
 * installed, and asking for SIG_DFL installs it again. That covers the
 * common clean-up-and-re-raise idiom (sort's SIGPIPE handler calls
 * signal(sig, SIG_DFL) and raise(sig)), which would otherwise die unflushed.
 */
int cg_signals_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	if (sig <= 0 || sig >= NSIG || !is_fatal(sig) || !atomic_load(&installed))
		return cg_real.sigaction(sig, act, old);
	struct sigaction shown;
	int r = cg_real.sigaction(sig, NULL, &shown);
	if (r < 0)
		return r;
	if (atomic_load(&ours[sig])) {
		shown.sa_handler = SIG_DFL;
		shown.sa_flags &= ~SA_SIGINFO;
	}
	bool to_default = act && !(act->sa_flags & SA_SIGINFO) && act->sa_handler == SIG_DFL;
	if (to_default) {
		r = install_ours(sig);
	} else if (act) {
		r = cg_real.sigaction(sig, act, NULL);
		if (r == 0)
			atomic_store(&ours[sig], false);
	}
	if (r == 0 && old)
		*old = shown;
	return r;
}
