/* SPDX-License-Identifier: MIT */
/* What the views of a job call a process and a device, and their order (job-names.c). */
#ifndef CLI_JOB_NAMES_H
#define CLI_JOB_NAMES_H

#include <stddef.h>

#include "cli.h"
#include "job-text.h"

/* Room enough for cli_job_command's text and cli_job_label's. */
#define CLI_JOB_NAME_LEN (CLI_JOB_CMD_COLS + 128)

/* cli_job_who, or the trace's file name where the pid is unknown (another producer's trace). */
const char *cli_job_who_of(char *buf, size_t len, const struct cgtrace_job_process *p);
/* Who and the command: "rank 0 (pid 4101) python3 train.py", the name of its track and lane. */
const char *cli_job_label(char *buf, size_t len, const struct cgtrace_job_process *p);

/*
 * The order the views show a job's processes in: by rank, those without
 * one after, then in tree order (each parent before its children). *order
 * gets the indices of all n_processes, malloc'ed; -ENOMEM.
 */
int cli_job_order(const struct cgtrace_job *job, size_t **order);
/*
 * A physical device: *key its UUID, or "HOST DEVICE" without one (what its
 * counter is named by); *name "UUID (HOST DEVICE, MODEL)", or "HOST DEVICE
 * (no UUID recorded, MODEL)" (its track, its lane).
 */
void cli_job_gpu_names(const struct cgtrace_job_gpu *g, char *key, size_t key_len, char *name,
                       size_t name_len);

#endif
