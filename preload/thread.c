/* SPDX-License-Identifier: MIT */
#include "thread.h"

__thread struct cg_thread cg_self __attribute__((tls_model("initial-exec")));
