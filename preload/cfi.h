/* SPDX-License-Identifier: MIT */
/*
 * The call-frame rule at one code address, read from its module's
 * .eh_frame (found by _dl_find_object: no loader lock, no allocation,
 * async-signal-safe), in the form the fast unwinder (unwind.h) steps a
 * frame with on x86-64: the CFA from rsp or rbp, the return address at
 * CFA - 8, and the caller's rbp either unchanged or saved at a known
 * place from the CFA. Anything else the rule may say (a CFA computed by
 * an expression, a realigned stack through another register, a signal
 * frame) is CG_CFI_OTHER: such frames are libunwind's to walk.
 */
#ifndef CG_CFI_H
#define CG_CFI_H

#include <stdint.h>

enum cg_cfi_kind {
	CG_CFI_STEP = 1,  /* a frame the rule below steps */
	CG_CFI_OUTERMOST, /* the return address is undefined: the stack's last frame */
	CG_CFI_OTHER,     /* no FDE, or a rule the fast unwinder does not take */
};

struct cg_cfi_rule {
	int32_t cfa_off; /* the CFA: (cfa_bp ? rbp : rsp) + cfa_off */
	int16_t bp_off;  /* the caller's rbp is saved at CFA + bp_off; 0: rbp is unchanged */
	uint8_t cfa_bp;
	uint8_t kind; /* enum cg_cfi_kind */
};

/* The rule at pc (exact: a return address's caller looks up ra - 1). Always fills r. */
void cg_cfi_rule(uintptr_t pc, struct cg_cfi_rule *r);

/* Whether this build and machine read rules at all (x86-64 and _dl_find_object). */
#if defined(__x86_64__) && defined(CG_HAVE_DL_FIND_OBJECT)
#define CG_CFI_FAST 1
#else
#define CG_CFI_FAST 0
#endif

#endif
