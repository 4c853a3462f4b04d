/* SPDX-License-Identifier: MIT */
/*
 * CGPROBE_STEPS: which range names are which training step or phase. The
 * syntax is NAME=GLOB[,GLOB...][:NAME=GLOB...], NAME one of forward,
 * backward, optimizer or none, or a phase's name, each GLOB a shell
 * pattern (fnmatch) matched against the whole name; rules are tried in the
 * order written and the first that matches decides (none: a range that is
 * no step, though a later rule would match it; a phase: a range that is
 * that phase and no step).
 */
#ifndef CG_STEPMAP_H
#define CG_STEPMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * PyTorch's autograd and optimizer ranges (SomethingBackward0,
 * Optimizer.step#SGD.step), Lightning's and Megatron's function names;
 * Megatron's forward-backward encloses both and is no step of its own.
 * Loading data is a phase: PyTorch's record_function around the
 * DataLoader's iterator (enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__).
 */
#define CG_STEPS_DEFAULT                                                                           \
	"none=*forward*backward*,*Forward*Backward*:"                                              \
	"backward=*backward*,*Backward*:"                                                          \
	"optimizer=*optimizer*,*Optimizer*,*optim_step*:"                                          \
	"forward=*forward*,*Forward*:"                                                             \
	"data=*DataLoader*"

/* A phase's name: 1 to CG_PHASE_MAX bytes of [A-Za-z0-9_.-]. */
#define CG_PHASE_MAX 31
/*
 * What a step's or phase's name (n bytes) stands for: a step (enum
 * cgtrace_step: none, forward, backward, optimizer), CG_STEPMAP_PHASE for
 * another valid phase name, -1 for neither.
 */
#define CG_STEPMAP_PHASE 4
int cg_stepmap_name(const char *s, size_t n);

/* Whether spec is a valid mapping; when table is true it becomes the mapping in use. */
bool cg_stepmap_set(const char *spec, bool use);
/*
 * The step (enum cgtrace_step) a range name maps to, none when no rule
 * names it; *phase gets the phase a rule names (the rule's copy, kept for
 * the process's life), else NULL.
 */
uint8_t cg_stepmap_find(const char *name, const char **phase);

#endif
