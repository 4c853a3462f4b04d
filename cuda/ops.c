/* SPDX-License-Identifier: MIT */
#include "ops.h"

#include "event.h"

#define CG_CUDA_OP_NAME(name) #name,
const char *const cg_cuda_op_names[] = {CG_CUDA_OPS(CG_CUDA_OP_NAME)};
#undef CG_CUDA_OP_NAME
const unsigned cg_cuda_op_count = CG_CU_OP_COUNT;
