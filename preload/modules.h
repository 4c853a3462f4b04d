/* SPDX-License-Identifier: MIT */
/*
 * The modules loaded in the process (docs/stacks.md): path, load bias,
 * PT_LOAD range and GNU build id (read from the PT_NOTE in memory, no file
 * opened), enumerated with dl_iterate_phdr on the calling thread, never in
 * a hook, never on the writer. The list travels to the writer as a
 * CG_EV_MODULES event: mapped memory the writer unmaps.
 */
#ifndef CG_MODULES_H
#define CG_MODULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Sends the modules loaded now (all of them: the writer writes each one
 * once) unless, with force false, none was loaded since the last call.
 * Outside hooks, with no probe lock held, on a thread of the program.
 */
void cg_modules_announce(bool force);

/*
 * Around a dlclose (outside hooks): the modules' code ranges before, kept
 * in mapped memory; after (closed: the dlclose succeeded), those gone go to
 * stack.c (cg_stack_unloaded), and the memory goes back. NULL when the
 * list could not be taken: then nothing is known to be gone.
 */
struct cg_modules_ranges;
struct cg_modules_ranges *cg_modules_before_close(void);
void cg_modules_after_close(struct cg_modules_ranges *before, bool closed);

/*
 * dlopen (and dlmopen, namespace false) from caller: whether the loader
 * must see the caller's return address, which it does only from a tail
 * call: file contains '$', the caller is in another namespace, or the
 * search for a bare name would read the RUNPATH or RPATH of the caller
 * (or of a library that loaded it). Outside hooks.
 */
bool cg_modules_caller_matters(const char *file, const void *caller, bool namespace);

#endif
