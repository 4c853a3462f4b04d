/* SPDX-License-Identifier: MIT */
/* What the views of a job call a process and a device, and their order (job-names.c). */
#ifndef CLI_JOB_NAMES_H
#define CLI_JOB_NAMES_H

#include <stddef.h>

#include "cli.h"

/* The columns of a command, "..." included, where it is cut. */
#define CLI_JOB_CMD_COLS 80
/* Room enough for cli_job_command's text and cli_job_label's. */
#define CLI_JOB_NAME_LEN (CLI_JOB_CMD_COLS + 128)

/* "rank 1 (pid 4102)", or "pid 4102"; the trace's file name where the pid is unknown. */
const char *cli_job_who(char *buf, size_t len, const struct cgtrace_job_process *p);
/*
 * The command on one line, cut to CLI_JOB_CMD_COLS columns: a control
 * character (a newline in a quoted script) as its C escape. A fork child
 * says so; its command line is its parent's.
 */
const char *cli_job_command(char *buf, size_t len, const struct cgtrace_job_process *p);
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
