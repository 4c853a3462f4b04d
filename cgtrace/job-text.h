/* SPDX-License-Identifier: MIT */
/*
 * What the commands of a job print alike (job-text.c): who a process is,
 * its command on one line, the physical GPUs' sums as summary shows them.
 */
#ifndef CLI_JOB_TEXT_H
#define CLI_JOB_TEXT_H

#include <stddef.h>

#include "cli.h"

/* The columns a command takes on one line (cli_job_command). */
#define CLI_JOB_CMD_COLS 80

/* "rank 1 (pid 4102)", or "pid 4102" for a fork child or an unknown rank. */
const char *cli_job_who(char *buf, size_t len, const struct cgtrace_process *p);
/* A table's process column: "rank 1", or "pid 4102" for a fork child or an unknown rank. */
const char *cli_job_name(char *buf, size_t len, const struct cgtrace_process *p);
/* "1 process", "12 processes". */
const char *cli_job_processes(char buf[48], size_t n);
/*
 * The command on one line, cut to CLI_JOB_CMD_COLS columns (buf holds
 * CLI_JOB_CMD_COLS + 64 bytes): a control character as its C escape, a
 * fork child's "(fork) " first.
 */
const char *cli_job_command(char *buf, size_t len, const struct cgtrace_process *p);
/*
 * The device a line or a panel of one process shows: its device of highest
 * peak (the first of equals), a rank's GPU, a data loader's host; NULL when
 * none held memory.
 */
const char *cli_job_device_shown(const struct cgtrace_job_process *p);
/* The physical devices: each one's peak, its processes, their shares then. */
void cli_job_print_gpus(const struct cgtrace_job *j, bool exact);
/* The same as the value of the key being written: [{uuid, host, ..., shares}]. */
void cli_job_json_gpus(struct cli_jw *w, const struct cgtrace_job *j);
/* A GPU's shares at its peak as the member "shares": [{process, device, bytes}]. */
void cli_job_json_shares(struct cli_jw *w, const struct cgtrace_job_gpu *x);
/* The process's rank and pid as members: null when unknown. */
void cli_job_json_ids(struct cli_jw *w, const struct cgtrace_process *p);

#endif
