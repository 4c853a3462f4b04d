/* SPDX-License-Identifier: MIT */
/* The Perfetto export's track of training updates (docs/perfetto.md). */
#ifndef CGTRACE_EXPORT_PERFETTO_UPDATES_H
#define CGTRACE_EXPORT_PERFETTO_UPDATES_H

#include "export-perfetto-out.h"

/* Updates written one by one at most; step-select.h's selection beyond. */
#define CLI_PERFETTO_UPDATES 100000

/*
 * The thread "training updates" (tid) of the program's process (pid): a
 * complete event per update of view->steps kept, "update N" from its
 * start to its end, its args the row's figures on each device and its
 * warm-up and open flags. *kept: the updates written; -ENOMEM.
 */
int perfetto_updates(struct perfetto_out *o, const struct cgtrace_view *v, uint64_t pid,
                     uint64_t tid, size_t *kept);

#endif
