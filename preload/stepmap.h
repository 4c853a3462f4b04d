/* SPDX-License-Identifier: MIT */
/*
 * CGPROBE_STEPS: which range names are which training step. The syntax is
 * STEP=GLOB[,GLOB...][:STEP=GLOB...], STEP one of forward, backward,
 * optimizer or none, each GLOB a shell pattern (fnmatch) matched against
 * the whole name; rules are tried in the order written and the first that
 * matches decides (none: a range that is no step, though a later rule
 * would match it).
 */
#ifndef CG_STEPMAP_H
#define CG_STEPMAP_H

#include <stdbool.h>
#include <stdint.h>

/*
 * PyTorch's autograd and optimizer ranges (SomethingBackward0,
 * Optimizer.step#SGD.step), Lightning's and Megatron's function names;
 * Megatron's forward-backward encloses both and is no step of its own.
 */
#define CG_STEPS_DEFAULT                                                                           \
	"none=*forward*backward*,*Forward*Backward*:"                                              \
	"backward=*backward*,*Backward*:"                                                          \
	"optimizer=*optimizer*,*Optimizer*,*optim_step*:"                                          \
	"forward=*forward*,*Forward*"

/* Whether spec is a valid mapping; when table is true it becomes the mapping in use. */
bool cg_stepmap_set(const char *spec, bool use);
/* The step (enum cgtrace_step) a range name maps to; none when no rule names it. */
uint8_t cg_stepmap_step(const char *name);

#endif
